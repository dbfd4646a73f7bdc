//! Doubled, isolated and passed pawns checked against an independent count: python-chess
//! (PyPI `chess`) counts them by the definitions on 10,000 positions from the real
//! engine games in `docs/matches/*.pgn`, and every count must agree.
//!
//! The interpreter is `$CHESS_PYTHON` or `python3`. Without it, or without python-chess, the
//! test says so and passes, except under `CI=true`, where it fails (`.ci/run` installs
//! python-chess into a virtual environment and sets `CHESS_PYTHON`).

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use chess_rules::Position;

const POSITIONS: usize = 10_000;

fn python() -> Option<String> {
    let python = std::env::var("CHESS_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import chess"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(python)
}

/// Every position of every game (after each move), in file order.
fn positions(dir: &Path) -> Vec<Position> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        for game in chess_pgn::read_games(BufReader::new(File::open(&path).unwrap())) {
            let game = game.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut pos = game.start.clone();
            for m in game.mainline() {
                pos.play_unchecked(m);
                out.push(pos.clone());
            }
        }
    }
    out
}

#[test]
fn pawn_counts_agree_with_python_chess_on_real_games() {
    let Some(python) = python() else {
        let message = "python3 with python-chess (PyPI `chess`) not found: set CHESS_PYTHON or `pip install chess`";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{message}");
        }
        eprintln!("SKIPPED: {message}");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = positions(&root.join("../../docs/matches"));
    assert!(
        all.len() >= POSITIONS,
        "only {} positions in docs/matches",
        all.len()
    );
    // An even spread over all games: every k-th position.
    let step = all.len() / POSITIONS;
    let sample: Vec<&Position> = all.iter().step_by(step).take(POSITIONS).collect();
    assert_eq!(sample.len(), POSITIONS);

    let dir = std::env::temp_dir().join(format!("chess-knowledge-pawns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("counts.tsv");
    let mut f = File::create(&input).unwrap();
    for pos in &sample {
        let r = chess_knowledge::describe(pos);
        let (w, b) = (&r.pawns.white, &r.pawns.black);
        writeln!(
            f,
            "{}\t{} {} {} {} {} {}",
            pos.fen(),
            w.doubled.len(),
            w.isolated.len(),
            w.passed.len(),
            b.doubled.len(),
            b.isolated.len(),
            b.passed.len()
        )
        .unwrap();
    }
    drop(f);
    let out = Command::new(&python)
        .arg(root.join("tests/pawn_counts.py"))
        .arg(&input)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "python-chess disagrees:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("{POSITIONS} positions, {POSITIONS} agree")));
}
