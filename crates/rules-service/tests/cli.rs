//! The binary's command line: help, and bad configuration as one clear line with exit code 2.

use std::process::Command;

#[test]
fn help_and_bad_configuration() {
    let bin = env!("CARGO_BIN_EXE_chess-rules-service");
    let out = Command::new(bin).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--data-dir"));
    let out = Command::new(bin)
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not-an-address"));
    let out = Command::new(bin).args(["--log", "=[bad"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// SIGTERM while start-up still waits for PostgreSQL (nothing listens on the URL's port) ends
/// the process at once with exit code 0, rather than after the whole start-up wait.
#[test]
fn a_stop_during_the_database_wait_exits_at_once() {
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};
    let bin = env!("CARGO_BIN_EXE_chess-rules-service");
    // A port that was free a moment ago: connections to it are refused, so start-up retries.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(bin)
        .args(["--listen", "127.0.0.1:0", "--store", "postgres"])
        .args([
            "--database-url",
            &format!("postgres://u:p@127.0.0.1:{port}/db"),
        ])
        .args(["--database-start-wait-secs", "120", "--log", "warn"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Waits for the first "not ready; retrying" line: start-up is in its wait.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let waiting = lines
        .by_ref()
        .take(20)
        .any(|l| l.map(|l| l.contains("database not ready")).unwrap_or(false));
    assert!(
        waiting,
        "the service never reported waiting for the database"
    );
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = sent + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running 10 s after SIGTERM during the database wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "exit after SIGTERM: {exit}");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
}
