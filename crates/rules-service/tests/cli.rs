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
