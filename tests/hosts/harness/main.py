"""The multi-host fault harness (tests/hosts/run.sh): the network, PostgreSQL, and for each
scenario a fresh stack (two rules replicas on one new database, two search replicas, the
gateway), steady load from the client namespace, the fault and its healing, then the
checker. Exit 0 only when the checker finds nothing in any scenario."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import net
import procs
import report
import scenarios

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted(f"signal {signum}")


class Stack:
    """The services of one scenario."""

    def __init__(self, bin_dir, pg, db, logs):
        url = pg.url(db)
        self.pg = pg
        self.rules = {h: procs.rules(bin_dir, h, url, os.path.join(logs, f"{h}.log"))
                      for h in ("rules-a", "rules-b")}
        self.search = {h: procs.search(bin_dir, h, os.path.join(logs, f"{h}.log"))
                       for h in ("search-a", "search-b")}
        self.gateway = procs.gateway(bin_dir, os.path.join(logs, "gateway.log"))

    def services(self):
        return list(self.rules.values()) + list(self.search.values()) + [self.gateway]

    def start(self):
        for s in self.services():
            s.start()

    def stop(self):
        crashed = [s.host for s in self.services() if s.crashed()]
        for s in self.services():
            s.stop()
        return crashed


def run_scenario(args, sc_name, pg, logs_root, timing):
    fault_at, fault_len, after = timing
    logs = os.path.join(logs_root, sc_name)
    os.makedirs(logs, exist_ok=True)
    db = pg.create_database()
    stack = Stack(args.bin, pg, db, logs)
    scenario = {s.name: s for s in scenarios.all_scenarios(net, stack)}[sc_name]
    history = os.path.join(logs, "history.json")
    duration = fault_at + fault_len + after
    started = time.time()
    load = None
    try:
        stack.start()
        hosts = ",".join(net.HOSTS.values())
        load_log = open(os.path.join(logs, "load.log"), "w")
        load = subprocess.Popen(
            net.exec_args("client", [os.path.join(args.bin, "chess-hosts"), "load",
                                     "--gateway", f"{net.check_target(net.address('gateway'))}:{procs.GATEWAY_PORT}",
                                     "--hosts", hosts, "--duration-s", str(duration),
                                     "--search", "--out", history]),
            stdout=load_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        load_log.close()
        time.sleep(fault_at)
        fault_ms = int(time.time() * 1000)
        scenario.inject()
        time.sleep(fault_len)
        heal_ms = int(time.time() * 1000)
        scenario.heal()
        load.wait(timeout=after + 20 + 60)
        if load.returncode != 0:
            raise RuntimeError(f"the load failed ({load.returncode}); see {logs}/load.log")
        events = os.path.join(logs, "events.tsv")
        dump = pg.psql(db, "SELECT game::text, seq, body::text FROM chess_events ORDER BY game, seq")
        with open(events, "w") as f:
            f.write(dump.stdout)
        crashed = stack.stop()
        check = net.sh(net.exec_args("client", [os.path.join(args.bin, "chess-hosts"), "check",
                                                "--history", history, "--events", events,
                                                "--fault-ms", str(fault_ms), "--heal-ms", str(heal_ms),
                                                "--scenario", sc_name]
                                     + (["--outage"] if scenario.outage else [])),
                       check=False, timeout=120)
        lines = [l for l in check.stdout.splitlines() if l.startswith("{")]
        if not lines:
            raise RuntimeError(f"the checker printed nothing: {check.stderr}")
        result = json.loads(lines[-1])
        for host in crashed:
            result["findings"].append(f"{host} exited by itself; see {logs}/{host}.log")
        result["seconds"] = round(time.time() - started, 1)
        with open(os.path.join(logs, "result.json"), "w") as f:
            json.dump(result, f, indent=1)
        return result
    finally:
        if load and load.poll() is None:
            load.kill()
            load.wait(timeout=10)
        stack.stop()
        if pg.proc is None or pg.proc.poll() is not None:
            # A scenario that ended with PostgreSQL down (an error mid-fault): back for the next.
            pg.start()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--short", action="store_true", help="one kill, one partition, one vanished host (about a minute)")
    group.add_argument("--all", action="store_true", help="every scenario (the default)")
    parser.add_argument("--only", action="append", default=[], help="a scenario by name (repeatable)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/faults.md")
    parser.add_argument("--bin", default=os.environ.get("BIN", "target/release"))
    args = parser.parse_args()
    args.bin = os.path.abspath(os.path.join(REPO, args.bin))
    ci = os.environ.get("CI") == "true"

    def skip(why):
        if ci:
            print(f"tests/hosts: {why}; CI must run it", file=sys.stderr)
            sys.exit(1)
        print(f"SKIPPED tests/hosts: {why}")
        sys.exit(0)

    if os.geteuid() != 0:
        skip("needs root (network namespaces)")
    if shutil.which("ip") is None:
        skip("needs iproute2 (ip)")
    if procs.pg_bin() is None:
        skip("needs PostgreSQL (apt-get install postgresql, or CHESS_PG_BIN)")
    for b in ("chess-gateway", "chess-rules-service", "chess-search-service", "chess-hosts"):
        if not os.path.exists(os.path.join(args.bin, b)):
            print(f"tests/hosts: {args.bin}/{b} is missing: build it first "
                  f"(cargo build --release -p chess-gateway -p chess-rules-service "
                  f"-p chess-search-service -p chess-hosts)", file=sys.stderr)
            sys.exit(2)

    if args.only:
        names = args.only
    elif args.short:
        names = scenarios.SHORT
    else:
        names = [s.name for s in scenarios.all_scenarios(net, None)]
    timing = (4, 6, 8) if args.short else (5, 10, 12)
    command = "tests/hosts/run.sh " + ("--short" if args.short else "--all" if not args.only else
                                       " ".join(f"--only {n}" for n in args.only))

    # Explicitly: a shell starting this in the background leaves SIGINT ignored.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    logs_root = os.path.join(REPO, "target", "hosts", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(logs_root, exist_ok=True)
    net.cleanup()
    net.remove_work_dirs()
    work = tempfile.mkdtemp(prefix=net.PREFIX)
    os.chmod(work, 0o755)
    results = []
    started = time.time()
    pg = None
    try:
        net.setup()
        pg = procs.Postgres(work)
        pg.init()
        pg.start()
        for name in names:
            print(f"== {name}", flush=True)
            try:
                result = run_scenario(args, name, pg, logs_root, timing)
            except (RuntimeError, subprocess.SubprocessError) as e:
                result = {"scenario": name, "error": str(e), "findings": [str(e)]}
            results.append(result)
            for f in result["findings"][:20]:
                print(f"   finding: {f}", flush=True)
            print(f"   {json.dumps({k: v for k, v in result.items() if k != 'findings'})}", flush=True)
    except (KeyboardInterrupt, Interrupted) as e:
        print(f"tests/hosts: interrupted ({e}); cleaning up", file=sys.stderr)
        results.append({"scenario": "interrupted", "error": str(e), "findings": ["interrupted"]})
    finally:
        if pg:
            pg.stop()
        net.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    left = net.leftovers()
    if left:
        print(f"tests/hosts: left behind: {left}", file=sys.stderr)
    text = report.table(results, command)
    with open(os.path.join(logs_root, "table.md"), "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"tests/hosts: {len(results)} scenarios in {time.time() - started:.0f} s; logs in {logs_root}")
    if args.write_docs:
        report.write_docs(os.path.join(REPO, "docs", "faults.md"), text)
    bad = [r["scenario"] for r in results if r["findings"]]
    if bad or left:
        print(f"tests/hosts: FAILED: {', '.join(bad)}", file=sys.stderr)
        sys.exit(1)
    print("tests/hosts: the checker found nothing")


if __name__ == "__main__":
    main()
