//! The `chess` command line, for what the tests do with it: games moved between stores
//! (`chess store export|import`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::bin;

/// `chess store export --store <store>`: the games as JSON lines; panics if it fails.
pub fn store_export(store: &str) -> Vec<u8> {
    let out = Command::new(bin("chess"))
        .args(["store", "export", "--store", store])
        .stdin(Stdio::null())
        .output()
        .expect("run chess store export");
    assert!(
        out.status.success(),
        "export from {store}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `chess store import --store <store>` with `input` on its stdin; how it ended.
pub fn store_import(store: &str, input: &[u8]) -> Output {
    let mut child = Command::new(bin("chess"))
        .args(["store", "import", "--store", store])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chess store import");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `chess store import --store <store> --input <file>`; how it ended.
pub fn store_import_file(store: &str, input: &Path) -> Output {
    Command::new(bin("chess"))
        .args(["store", "import", "--store", store, "--input"])
        .arg(input)
        .output()
        .expect("run chess store import")
}

/// The lines of `bytes`, sorted.
pub fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}
