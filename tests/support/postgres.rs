//! A private PostgreSQL server for tests: Debian's PostgreSQL (`apt-get install postgresql`,
//! binaries in /usr/lib/postgresql/<version>/bin, or the directory in `CHESS_PG_BIN`) started
//! as a non-root user on a free loopback port in a temporary directory, with trust
//! authentication for the superuser `chess`, and stopped when dropped.
//!
//! Without PostgreSQL the tests that need it skip with a message; with `CI=true` a missing
//! server is a failure.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::TempDir;

/// A running PostgreSQL server.
#[derive(Debug)]
pub struct Postgres {
    bin: PathBuf,
    /// The cluster (data directory, socket, log) lives here.
    dir: TempDir,
    /// The user the server runs as when the tests run as root.
    run_as: Option<String>,
    pub port: u16,
    running: bool,
    databases: u32,
}

fn find_bin() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("CHESS_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn user_exists(name: &str) -> bool {
    Command::new("id")
        .arg(name)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Postgres {
    /// Starts a server, or returns `None` after saying why the test is skipped.
    pub fn start(test: &str) -> Option<Postgres> {
        let Some(bin) = find_bin() else {
            let why =
                "PostgreSQL is not installed (apt-get install postgresql, or set CHESS_PG_BIN)";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{test}: {why}; CI must run it"
            );
            eprintln!("SKIPPED {test}: {why}");
            return None;
        };
        let dir = TempDir::new("pg");
        let run_as = if is_root() {
            let user = if user_exists("postgres") {
                "postgres"
            } else {
                "nobody"
            };
            let status = Command::new("chown")
                .args(["-R", user])
                .arg(&dir.0)
                .status()
                .expect("chown");
            assert!(status.success(), "chown {} to {user}", dir.0.display());
            Some(user.to_owned())
        } else {
            None
        };
        let mut pg = Postgres {
            bin,
            dir,
            run_as,
            port: free_port(),
            running: false,
            databases: 0,
        };
        let data = pg.data_dir();
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "chess", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.start_server();
        Some(pg)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.0.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        };
        cmd.current_dir(&self.dir.0).stdin(Stdio::null());
        cmd
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        self.command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .args(args)
            .output()
            .expect("run pg_ctl")
    }

    /// Starts the server (again) on its port and waits until it accepts connections.
    pub fn start_server(&mut self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
            self.port,
            self.dir.0.display()
        );
        let log = self.dir.0.join("postgres.log");
        let out = self.pg_ctl(&[
            "-w",
            "-t",
            "60",
            "-l",
            log.to_str().expect("utf-8 path"),
            "-o",
            &options,
            "start",
        ]);
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        self.running = true;
    }

    /// Stops the server: `fast` disconnects clients and shuts down cleanly; otherwise
    /// `immediate` (like a crash).
    pub fn stop_server(&mut self, fast: bool) {
        if self.running {
            let mode = if fast { "fast" } else { "immediate" };
            let out = self.pg_ctl(&["-w", "-t", "60", "-m", mode, "stop"]);
            assert!(
                out.status.success(),
                "pg_ctl stop failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            self.running = false;
        }
    }

    /// A new, empty database; returns its URL.
    pub fn create_database(&mut self) -> String {
        self.databases += 1;
        let name = format!("chess_test_{}", self.databases);
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args([
                "-U",
                "chess",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
            ])
            .arg(format!("CREATE DATABASE {name}"))
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "CREATE DATABASE failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(&name)
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://chess@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs one SQL statement with psql and returns its unaligned output.
    pub fn sql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args([
                "-U",
                "chess",
                "-d",
                database,
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
            ])
            .arg(sql)
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn dir(&self) -> &Path {
        &self.dir.0
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = self.pg_ctl(&["-w", "-t", "30", "-m", "immediate", "stop"]);
        }
    }
}

/// The `127.0.0.1:port` of a `postgres://user@127.0.0.1:port/db` URL.
pub fn database_addr(url: &str) -> SocketAddr {
    let host = url.split('@').nth(1).and_then(|r| r.split('/').next());
    host.and_then(|h| h.parse().ok())
        .unwrap_or_else(|| panic!("no 127.0.0.1:port in {url}"))
}
