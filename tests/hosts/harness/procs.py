"""The processes of a run: PostgreSQL (Debian's, as a non-root user, in its own namespace),
the rules replicas on it, the search replicas and the gateway, each inside its host's
namespace; started, waited for, killed, stopped and continued."""

import os
import pwd
import shutil
import signal
import subprocess
import time

import net

PG_PORT = 5432
RULES_PORT = 50052
SEARCH_PORT = 50053
GATEWAY_PORT = 50051


def pg_bin():
    env = os.environ.get("CHESS_PG_BIN")
    if env:
        return env
    root = "/usr/lib/postgresql"
    versions = sorted((int(v), v) for v in os.listdir(root) if v.isdigit()) if os.path.isdir(root) else []
    for _, v in reversed(versions):
        bin_dir = os.path.join(root, v, "bin")
        if os.path.exists(os.path.join(bin_dir, "initdb")):
            return bin_dir
    return None


class Service:
    """One service binary in its host's namespace, its output in a log file."""

    def __init__(self, host, argv, log_path, env=None):
        self.host = host
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.proc = None
        self.killed = False

    def start(self, wait_s=30):
        self.killed = False
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(net.exec_args(self.host, self.argv), stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self.env, start_new_session=True)
        log.close()
        deadline = time.time() + wait_s
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.host} exited with {self.proc.returncode}; see {self.log_path}")
            with open(self.log_path, errors="replace") as f:
                f.seek(offset)
                if any(line.startswith("LISTENING ") for line in f):
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"{self.host} did not listen within {wait_s} s; see {self.log_path}")

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.killed = True

    def crashed(self):
        """Exited by itself (not stopped or killed by the harness)."""
        return self.proc is not None and self.proc.poll() is not None and not self.killed

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        self.killed = True
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class Postgres:
    """A private cluster in the postgres namespace, listening on its address only, trusting
    the harness's subnet; run as the `postgres` user (or `nobody`)."""

    def __init__(self, workdir):
        self.bin = pg_bin()
        self.dir = os.path.join(workdir, "pg")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "postgres.log")
        self.user = "postgres" if _user_exists("postgres") else "nobody"
        self.proc = None
        self.databases = 0

    def _as_user(self, args):
        return ["runuser", "-u", self.user, "--"] + args

    def init(self):
        os.makedirs(self.dir, exist_ok=True)
        shutil.chown(self.dir, user=self.user)
        net.sh(self._as_user([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "chess",
                              "--auth=trust", "-E", "UTF8", "--no-sync"]), timeout=120)
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write(f"host all all {net.SUBNET} trust\n")

    def start(self, wait_s=60):
        log = open(self.log, "a")
        argv = self._as_user([os.path.join(self.bin, "postgres"), "-D", self.data,
                              "-p", str(PG_PORT), "-k", self.dir,
                              "-c", f"listen_addresses={net.address('postgres')}",
                              "-c", "max_connections=200", "-c", "fsync=off"])
        self.proc = subprocess.Popen(net.exec_args("postgres", argv), stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        log.close()
        deadline = time.time() + wait_s
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited; see {self.log}")
            if self.psql("postgres", "SELECT 1", check=False).returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError(f"postgres did not start within {wait_s} s; see {self.log}")

    def psql(self, db, sql, check=True, timeout=60):
        args = self._as_user([os.path.join(self.bin, "psql"), "-h", self.dir, "-p", str(PG_PORT),
                              "-U", "chess", "-d", db, "-v", "ON_ERROR_STOP=1", "-At",
                              "-F", "\t", "-c", sql])
        return net.sh(net.exec_args("postgres", args), check=check, timeout=timeout)

    def create_database(self):
        self.databases += 1
        name = f"hosts_{self.databases}"
        self.psql("postgres", f"CREATE DATABASE {name}")
        return name

    def url(self, db):
        return f"postgres://chess@{net.address('postgres')}:{PG_PORT}/{db}"

    def kill9(self):
        """Every process of the server at once, as a crash of its host would."""
        pids = net.sh(["ip", "netns", "pids", net.ns("postgres")], check=False).stdout.split()
        for pid in pids:
            net.sh(["kill", "-9", pid], check=False)
        if self.proc:
            self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            # Fast shutdown, sent to the postmaster itself (runuser does not pass SIGINT on).
            try:
                with open(os.path.join(self.data, "postmaster.pid")) as f:
                    os.kill(int(f.readline().strip()), signal.SIGINT)
            except (OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill9()


def _user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def url(host, port):
    return f"http://{net.check_target(net.address(host))}:{port}"


def rules(bin_dir, host, database_url, log):
    return Service(host, [os.path.join(bin_dir, "chess-rules-service"),
                          "--listen", f"{net.address(host)}:{RULES_PORT}",
                          "--store", "postgres", "--database-url", database_url,
                          "--database-timeout-ms", "2000"], log)


def search(bin_dir, host, log):
    return Service(host, [os.path.join(bin_dir, "chess-search-service"),
                          "--listen", f"{net.address(host)}:{SEARCH_PORT}",
                          "--workers", "1", "--hash-mb", "16"], log)


def gateway(bin_dir, log):
    return Service("gateway", [os.path.join(bin_dir, "chess-gateway"),
                               "--listen", f"{net.address('gateway')}:{GATEWAY_PORT}",
                               "--rules-addr", f"{url('rules-a', RULES_PORT)},{url('rules-b', RULES_PORT)}",
                               "--search-addr", f"{url('search-a', SEARCH_PORT)},{url('search-b', SEARCH_PORT)}",
                               "--auth", "open", "--allow-open-nonlocal", "--rate-limit", "0"], log)
