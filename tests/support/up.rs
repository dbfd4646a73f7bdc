//! `chess up` as a child process: the whole stack on free loopback ports, one worker and
//! 16 MiB of hash for the search service, its stdout read up to the ready block.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{TempDir, bin};

/// Longest `chess up` may take to print its ready block.
const READY_WAIT: Duration = Duration::from_secs(90);
/// The last line of the ready block.
const READY_END: &str = "Ctrl-C stops the stack.";

/// A running `chess up`; killed (and reaped) on drop.
#[derive(Debug)]
pub struct Up {
    child: Child,
    /// Stdout up to the end of the ready block.
    pub startup: Vec<String>,
    /// The gateway's address, from its `LISTENING service=gateway grpc=ADDR` line.
    pub gateway: String,
    /// Holds the stderr log.
    dir: TempDir,
}

impl Up {
    /// `chess up --memory` on free ports plus `extra` flags. `CHESS_GATEWAY_RATE_LIMIT` is
    /// removed from its environment, so the stack is `chess up`'s own.
    pub fn start(extra: &[&str]) -> Up {
        let mut args = vec![
            "up",
            "--memory",
            "--listen",
            "127.0.0.1:0",
            "--rules-listen",
            "127.0.0.1:0",
            "--search-listen",
            "127.0.0.1:0",
            "--search-workers",
            "1",
            "--search-hash-mb",
            "16",
        ];
        args.extend_from_slice(extra);
        let dir = TempDir::new("up");
        let log = dir.0.join("chess-up.log");
        let mut child = Command::new(bin("chess"))
            .args(&args)
            .env_remove("CHESS_GATEWAY_RATE_LIMIT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start chess up");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut up = Up {
            child,
            startup: Vec::new(),
            gateway: String::new(),
            dir,
        };
        let deadline = Instant::now() + READY_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                panic!(
                    "chess up {args:?} was not ready within {READY_WAIT:?}; stdout so far: \
                     {:#?}\nstderr:\n{}",
                    up.startup,
                    up.stderr()
                );
            };
            let done = line == READY_END;
            up.startup.push(line);
            if done {
                break;
            }
        }
        up.gateway = up.field("LISTENING service=gateway ", "grpc=").to_owned();
        up
    }

    /// The value after `key` on the first startup line starting with `prefix`.
    pub fn field(&self, prefix: &str, key: &str) -> &str {
        self.startup
            .iter()
            .filter(|l| l.starts_with(prefix))
            .find_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix(key)))
            .unwrap_or_else(|| panic!("no {prefix}...{key} in {:#?}", self.startup))
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("chess-up.log")).unwrap_or_default()
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
