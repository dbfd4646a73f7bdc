//! The binary's command line without a server: help, refusals, the built-in positions.
//! (Also makes `cargo test --workspace` build the binary the stack tests run.)

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_chess-loadgen");

#[test]
fn help_names_the_subcommands() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["run", "compare", "positions"] {
        assert!(text.contains(word), "{word} missing from:\n{text}");
    }
}

#[test]
fn a_target_off_loopback_is_refused_without_the_flag() {
    let out = Command::new(BIN)
        .args([
            "run",
            "--target",
            "http://192.0.2.1:50051",
            "--requests",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
}

#[test]
fn bad_flags_and_missing_reports_exit_2() {
    let out = Command::new(BIN)
        .args(["run", "--clients", "many"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(BIN)
        .args(["compare", "/nonexistent/a.json", "/nonexistent/b.json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/a.json"));
}

#[test]
fn the_built_in_positions_are_listed() {
    let out = Command::new(BIN).arg("positions").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() >= 50, "{text}");
}
