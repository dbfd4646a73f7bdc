//! A service binary as a child process: started on 127.0.0.1 with port 0, its addresses
//! learnt from the `LISTENING` line it prints, stopped (SIGTERM, or SIGKILL for crash tests)
//! when done; the temporary directories the tests keep their stores and logs in. Every wait
//! is bounded.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tonic::transport::{Channel, Endpoint};

/// A directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("chess-it-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The directory holding the workspace's built binaries (`target/debug` or
/// `target/release`, whichever built this test).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>
    exe.parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf()
}

pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.exists(),
        "{} is not built: run the workspace tests with `cargo test --workspace` (which builds every binary) or `cargo build --bins` first",
        path.display()
    );
    path
}

/// A running service process. Dropping it kills the process.
#[derive(Debug)]
pub struct Service {
    pub name: String,
    pub child: Option<Child>,
    pub grpc: SocketAddr,
    pub metrics: SocketAddr,
    /// The web app's address, for a gateway started with `--web-listen`.
    pub web: Option<SocketAddr>,
    pub stderr_log: PathBuf,
}

impl Service {
    /// Starts `binary` with `args` and waits (at most 20 s) for its LISTENING line (and its
    /// WEB line when `args` has `--web-listen`).
    pub fn start(binary: &str, args: &[&str], envs: &[(&str, &str)], log_dir: &Path) -> Service {
        Service::launch(binary, Command::new(bin(binary)), args, envs, log_dir)
    }

    /// [`Service::start`] with at most `nofile` open files (`prlimit --nofile`, which execs
    /// the binary, so the process id is the service's).
    pub fn start_with_nofile(
        binary: &str,
        nofile: u64,
        args: &[&str],
        envs: &[(&str, &str)],
        log_dir: &Path,
    ) -> Service {
        let mut cmd = Command::new("prlimit");
        cmd.arg(format!("--nofile={nofile}:{nofile}"))
            .arg("--")
            .arg(bin(binary));
        Service::launch(binary, cmd, args, envs, log_dir)
    }

    fn launch(
        binary: &str,
        mut cmd: Command,
        args: &[&str],
        envs: &[(&str, &str)],
        log_dir: &Path,
    ) -> Service {
        let stderr_log = log_dir.join(format!(
            "{binary}-{}.log",
            Instant::now().elapsed().as_nanos()
        ));
        let stderr = std::fs::File::create(&stderr_log).expect("log file");
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.starts_with("LISTENING ") || line.starts_with("WEB ") {
                    let _ = tx.send(line);
                }
            }
        });
        let wants_web = args.contains(&"--web-listen");
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut listening = None;
        let mut web = None;
        while listening.is_none() || (wants_web && web.is_none()) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.starts_with("WEB ") => web = Some(line),
                Ok(line) => listening = Some(line),
                Err(_) => {
                    let _ = child.kill();
                    let log = std::fs::read_to_string(&stderr_log).unwrap_or_default();
                    panic!("{binary} did not announce its addresses within 20 s; stderr:\n{log}");
                }
            }
        }
        let line = listening.unwrap_or_default();
        let field = |key: &str| -> SocketAddr {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
        };
        let web = web.map(|line| {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix("url=http://"))
                .and_then(|v| v.trim_end_matches('/').parse().ok())
                .unwrap_or_else(|| panic!("no url in {line:?}"))
        });
        Service {
            name: binary.to_owned(),
            grpc: field("grpc="),
            metrics: field("metrics="),
            web,
            child: Some(child),
            stderr_log,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.grpc)
    }

    pub async fn channel(&self) -> Channel {
        Endpoint::from_shared(self.url())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
            .connect()
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.name))
    }

    /// A channel that connects on first use (5 s connect timeout), for clients that must not
    /// wait for the service here.
    pub fn lazy_channel(&self) -> Channel {
        Endpoint::from_shared(self.url())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .connect_lazy()
    }

    /// The process's resident memory (VmRSS) in KiB; 0 when unknown.
    pub fn rss_kib(&self) -> u64 {
        let pid = self.child.as_ref().expect("running").id();
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))?
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }

    /// SIGKILL: no chance to clean up, as in a crash.
    pub fn kill_hard(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM and wait (at most `limit`) for the exit status.
    pub fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }

    /// The Prometheus text from the metrics port.
    pub fn scrape_metrics(&self) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect_timeout(&self.metrics, Duration::from_secs(5))
            .expect("metrics");
        s.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let _ = write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        );
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill_hard();
    }
}
