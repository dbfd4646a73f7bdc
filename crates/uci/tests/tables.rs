//! `TablePath` through the UCI protocol: the real binary loads tables generated here, answers a
//! table position with the exact mate and reports `tbhits`, and refuses a folder without tables.

mod common;

use std::path::PathBuf;

use chess_rules::Position;
use chess_tablebase::{Tablebase, Value, generate_named};
use common::{SECOND, Uci, best_move};

fn tables_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("uci-tables-{}", std::process::id()));
    generate_named(&["KQvK", "KRvK"], &dir).unwrap();
    dir
}

fn field(line: &str, name: &str) -> i64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("no {name} in {line}"));
    words[i + 1].parse().unwrap()
}

#[test]
fn table_path_gives_exact_mates_and_tbhits() {
    let dir = tables_dir();
    let tb = Tablebase::open_dir(&dir).unwrap();
    let fen = "8/8/8/4k3/8/8/8/R3K3 w - - 0 1";
    let pos = Position::from_fen(fen).unwrap();
    let Value::Win(plies) = tb.probe_dtm(&pos).unwrap() else {
        panic!("KRvK with the rook to move is a win");
    };

    let mut e = Uci::start();
    e.send("uci");
    let lines = e.until("uciok", 5 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l == "option name TablePath type string default <empty>"),
        "{lines:#?}"
    );

    // Without tables: an estimate, no table hits.
    e.send(&format!("position fen {fen}"));
    e.send("go depth 4");
    let lines = e.until("bestmove", 20 * SECOND);
    let last = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
    assert!(last.contains(" score cp "), "{last}");
    assert_eq!(field(last, "tbhits"), 0);

    e.send(&format!("setoption name TablePath value {}", dir.display()));
    let lines = e.until("info string tables", 5 * SECOND);
    assert!(
        lines.last().unwrap().contains("3 endings, up to 3 pieces"),
        "{lines:#?}"
    );
    e.send(&format!("position fen {fen}"));
    e.send("go depth 4");
    let lines = e.until("bestmove", 20 * SECOND);
    let last = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
    let moves = (i64::from(plies) + 1) / 2;
    assert!(last.contains(&format!(" score mate {moves} ")), "{last}");
    assert!(field(last, "tbhits") > 0, "{last}");
    let m = best_move(lines.last().unwrap(), &pos);
    let after = pos.play(m).unwrap();
    assert_eq!(
        tb.probe_dtm(&after).unwrap(),
        Value::Loss(plies - 1),
        "{m} is not a quickest mate"
    );

    // A folder without tables is refused and the tables stay loaded.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    e.send(&format!(
        "setoption name TablePath value {}",
        empty.display()
    ));
    let lines = e.until("info string", 5 * SECOND);
    assert!(
        lines.last().unwrap().contains("error: TablePath"),
        "{lines:#?}"
    );
    assert!(
        lines.last().unwrap().contains("no tables in it"),
        "{lines:#?}"
    );
    e.send("go depth 2");
    let lines = e.until("bestmove", 20 * SECOND);
    assert!(
        lines.iter().any(|l| l.contains(" score mate ")),
        "{lines:#?}"
    );

    e.send("setoption name TablePath value <empty>");
    e.until("info string tables: none", 5 * SECOND);
    e.quit();
    let _ = std::fs::remove_dir_all(&dir);
}
