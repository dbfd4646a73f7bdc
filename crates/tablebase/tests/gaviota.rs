//! Every 3-piece position (one per symmetry class, both sides to move) against Debian's
//! Gaviota tables through python-chess: `apt-get install gaviotatb`, and python-chess 1.11.2 in
//! `target/pyenv` (`python3 -m venv target/pyenv && target/pyenv/bin/pip install chess==1.11.2`)
//! or the interpreter named by `CHESS_TB_PYTHON`. Skipped with a message when either is
//! missing, failed when `CI=true`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use chess_tablebase::{GenerateOptions, Material, Tablebase, generate_endings};

const SCRIPT: &str = r#"
import sys, chess, chess.gaviota
tb = chess.gaviota.open_tablebase(sys.argv[1])
checked = mismatches = 0
for line in sys.stdin:
    fen, ours = line.rstrip("\n").split("\t")
    theirs = tb.probe_dtm(chess.Board(fen))
    checked += 1
    if theirs != int(ours):
        mismatches += 1
        if mismatches <= 10:
            print(f"mismatch {fen}: ours {ours}, gaviota {theirs}", file=sys.stderr)
print(checked, mismatches)
"#;

fn missing(what: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{what} (required when CI=true)");
    }
    eprintln!("skipped: {what}");
}

#[test]
fn every_three_piece_dtm_matches_gaviota() {
    let gaviota = PathBuf::from(
        std::env::var("CHESS_GAVIOTA_DIR").unwrap_or_else(|_| "/usr/share/gaviotatb/gtb4".into()),
    );
    if !gaviota.join("kqk.gtb.cp4").exists() {
        return missing(&format!(
            "no Gaviota tables in {} (apt-get install gaviotatb)",
            gaviota.display()
        ));
    }
    // CHESS_PYTHON is the python-chess that .ci/run installs for chess-knowledge's checks.
    let python = std::env::var("CHESS_TB_PYTHON")
        .or_else(|_| std::env::var("CHESS_PYTHON"))
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python3")
        });
    let ok = Command::new(&python)
        .args(["-c", "import chess.gaviota"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return missing(&format!("no python-chess at {}", python.display()));
    }

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tb-gaviota-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let three: Vec<Material> = Material::all_up_to(3)
        .into_iter()
        .filter(|m| m.piece_count() == 3)
        .collect();
    generate_endings(&three, &dir, &GenerateOptions::default()).unwrap();
    let tb = Tablebase::open_dir(&dir).unwrap();

    let mut lines = String::new();
    let mut ours = 0u64;
    for m in &three {
        let t = tb.table(*m).unwrap();
        for idx in 0..t.entries() {
            if let Some((fen, value)) = t.position_at(idx) {
                lines.push_str(&format!("{fen}\t{}\n", value.dtm_plies()));
                ours += 1;
            }
        }
    }
    let mut child = Command::new(&python)
        .args(["-c", SCRIPT, gaviota.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(lines.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "python failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let nums: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    eprintln!(
        "gaviota: {} positions compared, {} mismatches",
        nums[0], nums[1]
    );
    assert_eq!(nums[0], ours);
    assert!(ours > 300_000, "{ours}");
    assert_eq!(
        nums[1], 0,
        "DTM differs from Gaviota's (first ones on stderr)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
