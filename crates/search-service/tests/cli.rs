//! The binary's command line: help, bad flags, a bad network file, and a clean start and stop.
//! (Also makes `cargo test --workspace` build the binary the stack tests start.)

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_chess-search-service");

#[test]
fn help_lists_the_settings() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--listen",
        "--workers",
        "--queue",
        "--hash-mb",
        "--threads",
        "--eval-file",
        "--max-depth",
    ] {
        assert!(text.contains(flag), "{flag} missing from:\n{text}");
    }
}

#[test]
fn bad_settings_are_refused_with_the_flag_named() {
    let out = Command::new(BIN).args(["--workers", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workers"));
    let out = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--eval-file",
            "/nonexistent/net.nnue",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--eval-file") && err.contains("/nonexistent/net.nnue"),
        "{err}"
    );
}

#[test]
fn starts_announces_and_stops_on_sigterm() {
    let mut child = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--hash-mb",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(Duration::from_secs(20));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let line = line.expect("a LISTENING line");
    assert!(
        line.starts_with("LISTENING service=search grpc=127.0.0.1:"),
        "{line}"
    );
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}
