//! Shared by the networked tests: a `chess up` child process on free loopback ports, and runs
//! of the `chess` binary against it. Every wait is bounded; a `Stack` kills its child when
//! dropped, whatever happened.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long `chess up` may take to report ready (a debug build on a busy machine).
pub const READY_WAIT: Duration = Duration::from_secs(90);
/// How long a stack may take to exit after SIGTERM.
pub const STOP_WAIT: Duration = Duration::from_secs(15);
/// How long one client command may run.
pub const COMMAND_WAIT: Duration = Duration::from_secs(60);

pub const BIN: &str = env!("CARGO_BIN_EXE_chess");

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        self
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "expected exit code {code}: {self:#?}");
        self
    }

    #[track_caller]
    pub fn assert_stdout_has(&self, text: &str) -> &Self {
        assert!(
            self.stdout.contains(text),
            "stdout lacks {text:?}: {self:#?}"
        );
        self
    }

    #[track_caller]
    pub fn assert_stderr_has(&self, text: &str) -> &Self {
        assert!(
            self.stderr.contains(text),
            "stderr lacks {text:?}: {self:#?}"
        );
        self
    }
}

/// A `chess` command with the client's environment variables cleared, so that the caller's
/// shell cannot point the tests elsewhere.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("CHESS_SERVER")
        .env_remove("CHESS_API_KEY")
        .env_remove("CHESS_LOG")
        .stdin(Stdio::null());
    command
}

/// Runs a command to its end, killing it if it outlives `COMMAND_WAIT`.
pub fn run_command(mut command: Command) -> Run {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the chess binary starts");
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let status = wait_bounded(&mut child, COMMAND_WAIT);
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("command did not finish within {COMMAND_WAIT:?}: {command:?}");
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `chess ARGS` with no server configured.
pub fn chess(args: &[&str]) -> Run {
    run_command(command(args))
}

/// Polls a child for its exit until `limit`.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => return None,
        }
    }
}

/// A fresh directory under the system temp dir, removed by `TempDir`'s drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "chess-cli-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn str(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `chess up`.
#[derive(Debug)]
pub struct Stack {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Stdout up to and including the ready block.
    pub startup: Vec<String>,
    /// The gateway's address, from its `LISTENING service=gateway grpc=ADDR` line.
    pub gateway: String,
    /// The rules service's address, from its `LISTENING service=rules grpc=ADDR` line.
    pub rules: String,
}

/// The `grpc=` address of a `LISTENING service=<service> ...` line.
pub fn listening_addr(line: &str, service: &str) -> Option<String> {
    let rest = line.strip_prefix(&format!("LISTENING service={service} "))?;
    rest.split_whitespace()
        .find_map(|word| word.strip_prefix("grpc="))
        .map(str::to_owned)
}

impl Stack {
    /// `chess up` on free ports with its store in `data_dir`, plus `extra` flags.
    pub fn start(data_dir: &Path, extra: &[&str]) -> Stack {
        Stack::start_with_env(data_dir, extra, &[])
    }

    /// The same with environment variables set for `chess up`.
    pub fn start_with_env(data_dir: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Stack {
        let mut args = vec![
            "up",
            "--listen",
            "127.0.0.1:0",
            "--rules-listen",
            "127.0.0.1:0",
            "--search-listen",
            "127.0.0.1:0",
            "--web-listen",
            "127.0.0.1:0",
            "--search-workers",
            "1",
            "--search-hash-mb",
            "16",
            "--data-dir",
            data_dir.to_str().expect("UTF-8 temp path"),
        ];
        args.extend_from_slice(extra);
        let mut child = command(&args)
            .envs(envs.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chess up starts");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let err_pipe = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err_pipe).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let mut stack = Stack {
            child,
            lines,
            stderr,
            startup: Vec::new(),
            gateway: String::new(),
            rules: String::new(),
        };
        stack.wait_ready();
        stack
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Reads stdout until the ready block has been printed, noting the addresses.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(addr) = listening_addr(&line, "gateway") {
                        self.gateway = addr;
                    }
                    if let Some(addr) = listening_addr(&line, "rules") {
                        self.rules = addr;
                    }
                    let done = line == "Ctrl-C stops the stack.";
                    self.startup.push(line);
                    if done {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "chess up did not get ready within {READY_WAIT:?}\nstdout: {:#?}\nstderr: {}",
                    self.startup,
                    self.stderr_text()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = wait_bounded(&mut self.child, STOP_WAIT);
                    panic!(
                        "chess up exited before it was ready ({status:?})\nstdout: {:#?}\nstderr: {}",
                        self.startup,
                        self.stderr_text()
                    );
                }
            }
        }
        assert!(
            !self.gateway.is_empty() && !self.rules.is_empty(),
            "no LISTENING lines: {:#?}",
            self.startup
        );
    }

    /// `http://ADDR` of the gateway.
    pub fn server(&self) -> String {
        format!("http://{}", self.gateway)
    }

    /// `chess --server <gateway> ARGS`.
    pub fn chess(&self, args: &[&str]) -> Run {
        let server = self.server();
        let mut all = vec!["--server", server.as_str()];
        all.extend_from_slice(args);
        run_command(command(&all))
    }

    /// A `chess --server <gateway> ARGS` child with piped stdout, for long-running commands.
    pub fn spawn_chess(&self, args: &[&str]) -> Child {
        let server = self.server();
        let mut all = vec!["--server", server.as_str()];
        all.extend_from_slice(args);
        command(&all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chess starts")
    }

    /// Sends SIGTERM and waits (bounded) for the exit; returns the status and the rest of
    /// stdout.
    pub fn stop(mut self) -> (ExitStatus, Vec<String>) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let Some(status) = wait_bounded(&mut self.child, STOP_WAIT) else {
            panic!(
                "chess up did not exit within {STOP_WAIT:?} of SIGTERM\nstderr: {}",
                self.stderr_text()
            );
        };
        let mut rest = Vec::new();
        // The reader thread ends at EOF, which follows the exit.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(line);
        }
        (status, rest)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = wait_bounded(&mut self.child, STOP_WAIT);
        }
    }
}

/// Kills a long-running client child when dropped, e.g. when an assertion fails.
#[derive(Debug)]
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = wait_bounded(&mut self.0, STOP_WAIT);
        }
    }
}

/// Reads lines from a child's stdout on a thread, for bounded waits on what it prints.
pub fn line_reader(child: &mut Child) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}
