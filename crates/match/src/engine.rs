//! A UCI engine in a child process: the handshake, options, and one search at a time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

/// How an engine's search ended.
pub struct Reply {
    /// The move in UCI notation.
    pub best: String,
    pub info: SearchInfo,
}

/// What an engine said of one search, and how long it took by the runner's clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchInfo {
    /// The last score it reported, from its own side: centipawns, or a mate as ±(30000 - plies).
    pub score: Option<i32>,
    /// The depth of the `info` line that gave that score.
    pub depth: Option<u32>,
    /// The last node count it reported.
    pub nodes: Option<u64>,
    pub elapsed: Duration,
}

pub struct Engine {
    pub name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

/// Mate scores are kept apart from centipawns above this.
pub const MATE: i32 = 30_000;

/// The plies to mate of a score that is a mate (either side's), `None` for centipawns.
pub fn mate_plies(score: i32) -> Option<i32> {
    (score.abs() > MATE - 1000).then(|| MATE - score.abs())
}

impl Engine {
    /// Starts `command` (split on whitespace), does the handshake and sets the options.
    pub fn start(command: &str, options: &[(String, String)]) -> Result<Engine, String> {
        let mut words = command.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| "an engine command is empty".to_owned())?;
        let mut child = Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start engine {command:?}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut engine = Engine {
            name: command.to_owned(),
            child,
            stdin,
            lines,
        };
        engine.send("uci")?;
        let mut name = None;
        engine.until(Duration::from_secs(20), |l| {
            if let Some(n) = l.strip_prefix("id name ") {
                name = Some(n.trim().to_owned());
            }
            l.trim() == "uciok"
        })?;
        if let Some(n) = name {
            engine.name = n;
        }
        for (k, v) in options {
            engine.send(&format!("setoption name {k} value {v}"))?;
        }
        // An engine that refuses an option says so before `readyok`; playing on would test
        // an engine other than the one asked for.
        let refused = engine.ready()?;
        if !refused.is_empty() {
            return Err(format!(
                "engine {} refused its options: {}",
                engine.name,
                cut(&refused.join(" | "), 300)
            ));
        }
        Ok(engine)
    }

    pub fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("engine {}: cannot write: {e}", self.name))
    }

    /// Reads lines until `done` says so, or fails after `timeout`.
    fn until(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if done(&line) => return Ok(()),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "engine {} did not answer in {timeout:?}",
                        self.name
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("engine {} exited", self.name));
                }
            }
        }
    }

    /// `isready` until `readyok`; returns the lines in which the engine refused an option.
    fn ready(&mut self) -> Result<Vec<String>, String> {
        self.send("isready")?;
        let mut refused = Vec::new();
        self.until(Duration::from_secs(30), |l| {
            if refuses_option(l) {
                refused.push(l.trim().to_owned());
            }
            l.trim() == "readyok"
        })?;
        Ok(refused)
    }

    pub fn new_game(&mut self) -> Result<(), String> {
        self.send("ucinewgame")?;
        self.ready().map(drop)
    }

    /// Searches `position` (a `position ...` command) with `go` (a `go ...` command), waiting
    /// at most `timeout` for the best move.
    pub fn search(&mut self, position: &str, go: &str, timeout: Duration) -> Result<Reply, String> {
        self.send(position)?;
        let start = Instant::now();
        self.send(go)?;
        let (mut score, mut depth, mut nodes) = (None, None, None);
        let mut best = String::new();
        self.until(timeout, |l| {
            let mut words = l.split_whitespace();
            match words.next() {
                Some("info") => {
                    let words: Vec<&str> = l.split_whitespace().collect();
                    if words.get(1) == Some(&"string") {
                        return false;
                    }
                    let after = |key: &str| {
                        let i = words.iter().position(|&w| w == key)?;
                        words.get(i + 1)?.parse::<u64>().ok()
                    };
                    nodes = after("nodes").or(nodes);
                    if let Some(i) = words.iter().position(|&w| w == "score") {
                        let value = words.get(i + 2).and_then(|v| v.parse::<i32>().ok());
                        let bound = words
                            .get(i + 3)
                            .is_some_and(|w| *w == "lowerbound" || *w == "upperbound");
                        if let (Some(v), false) = (value, bound) {
                            score = match words.get(i + 1) {
                                Some(&"cp") => Some(v),
                                Some(&"mate") if v > 0 => Some(MATE - 2 * v + 1),
                                Some(&"mate") => Some(-MATE - 2 * v),
                                _ => score,
                            };
                            depth = after("depth").and_then(|d| u32::try_from(d).ok());
                        }
                    }
                    false
                }
                Some("bestmove") => {
                    best = words.next().unwrap_or("").to_owned();
                    true
                }
                _ => false,
            }
        })?;
        Ok(Reply {
            best,
            info: SearchInfo {
                score,
                depth,
                nodes,
                elapsed: start.elapsed(),
            },
        })
    }
}

/// A line in which an engine refuses a `setoption`: ours and others say `info string error`,
/// Stockfish `No such option`, others `Unknown option`.
fn refuses_option(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    l.starts_with("info string error")
        || l.contains("no such option")
        || l.contains("unknown option")
}

/// `text`, cut to at most `max` characters with an ellipsis.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::{cut, refuses_option};

    #[test]
    fn refusals_are_recognised() {
        for line in [
            "info string error: unknown option \"tune.x\"",
            "No such option: Foo",
            "Unknown option: Bar",
        ] {
            assert!(refuses_option(line), "{line}");
        }
        for line in [
            "info string simd avx512",
            "readyok",
            "option name Hash type spin",
        ] {
            assert!(!refuses_option(line), "{line}");
        }
        assert_eq!(cut("abcdef", 3), "abc...");
        assert_eq!(cut("abc", 3), "abc");
    }
}
