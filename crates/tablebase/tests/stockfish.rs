//! Stockfish (without tablebases) on random 4-piece positions of a folder of generated tables:
//! it must never find a mate where we say draw, and any mate it finds must be no shorter than
//! our distance to mate, for the same side. Set `CHESS_TB_DIR` to the folder (`chess tb
//! generate --pieces 4 --dir DIR`); `CHESS_TB_STOCKFISH` (default `stockfish` on the PATH or
//! /usr/games/stockfish), `CHESS_TB_SF_POSITIONS` (default 1000) and `CHESS_TB_SF_DEPTH`
//! (default 20) tune it; `CHESS_TB_SF_PIECES` (default 4) picks the tables sampled by their
//! piece count (5 for the 5-piece tables). Skipped with a message when the folder or Stockfish
//! is missing.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use chess_tablebase::{Tablebase, Value};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn stockfish_never_mates_faster_than_our_dtm() {
    let Some(dir) = std::env::var_os("CHESS_TB_DIR").map(PathBuf::from) else {
        eprintln!("skipped: set CHESS_TB_DIR to a folder of generated 4-piece tables");
        return;
    };
    let sf = std::env::var("CHESS_TB_STOCKFISH").unwrap_or_else(|_| {
        if std::path::Path::new("/usr/games/stockfish").exists() {
            "/usr/games/stockfish".into()
        } else {
            "stockfish".into()
        }
    });
    let Ok(mut child) = Command::new(&sf)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("skipped: no Stockfish at {sf} (apt-get install stockfish)");
        return;
    };
    let tb = Tablebase::open_dir(&dir).unwrap();
    let pieces = env_or("CHESS_TB_SF_PIECES", 4) as usize;
    let chosen: Vec<_> = tb
        .tables()
        .into_iter()
        .filter(|t| t.material().piece_count() == pieces)
        .collect();
    assert!(
        !chosen.is_empty(),
        "no {pieces}-piece tables in {}",
        dir.display()
    );
    let count = env_or("CHESS_TB_SF_POSITIONS", 1000);
    let depth = env_or("CHESS_TB_SF_DEPTH", 20);

    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |s: &str| writeln!(stdin, "{s}").unwrap();
    send("uci");
    send("setoption name Threads value 1");
    send("isready");
    for line in lines.by_ref() {
        if line.unwrap() == "readyok" {
            break;
        }
    }

    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut compared, mut sf_mates, mut ours_decisive, mut bad) = (0u64, 0u64, 0u64, Vec::new());
    while compared < count {
        let t = chosen[(next() % chosen.len() as u64) as usize];
        let Some((fen, ours)) = t.position_at(next() % t.entries()) else {
            continue;
        };
        send("ucinewgame");
        send(&format!("position fen {fen}"));
        send(&format!("go depth {depth}"));
        let mut mate: Option<i64> = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if line.starts_with("bestmove") {
                break;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == "score") {
                mate = match words.get(i + 1) {
                    Some(&"mate") => words.get(i + 2).and_then(|m| m.parse().ok()),
                    _ => None,
                };
            }
        }
        compared += 1;
        if !matches!(ours, Value::Draw) {
            ours_decisive += 1;
        }
        let Some(m) = mate else { continue };
        sf_mates += 1;
        // Stockfish counts moves of the side to move: mate m > 0 is 2m - 1 plies, -m is 2m.
        let ok = match ours {
            Value::Win(p) => m > 0 && 2 * m > i64::from(p),
            Value::Loss(p) => m <= 0 && 2 * -m >= i64::from(p),
            Value::Draw => false,
        };
        if !ok {
            bad.push(format!("{fen}: ours {ours:?}, stockfish mate {m}"));
        }
    }
    send("quit");
    let _ = child.wait();
    eprintln!(
        "stockfish depth {depth}, {pieces}-piece tables: {compared} positions, {ours_decisive} decisive for us, {sf_mates} mates found, {} disagreements {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
    assert!(bad.is_empty());
}
