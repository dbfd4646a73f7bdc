//! Checks a folder of tables made with `chess tb generate` (too slow to generate here): set
//! `CHESS_TB_DIR` to it, and optionally `CHESS_TB_ONLY=KPvKP,KRvKP` to check only those.
//! Skipped with a message when it is not set.

use std::path::PathBuf;

use chess_rules::Position;
use chess_tablebase::{Tablebase, check_consistency};

fn dir() -> Option<PathBuf> {
    match std::env::var_os("CHESS_TB_DIR") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            eprintln!("skipped: set CHESS_TB_DIR to a folder of generated tables");
            None
        }
    }
}

#[test]
fn every_table_in_the_folder_agrees_with_its_moves() {
    let Some(dir) = dir() else { return };
    let tb = Tablebase::open_dir(&dir).unwrap();
    assert!(!tb.tables().is_empty(), "no tables in {}", dir.display());
    let (mut positions, mut mismatches) = (0, 0);
    let only: Vec<String> = std::env::var("CHESS_TB_ONLY")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    for table in tb.tables() {
        if !only.is_empty() && !only.contains(&table.material().to_string()) {
            continue;
        }
        let report = check_consistency(&tb, table.material(), 2).unwrap();
        eprintln!(
            "{}: {} positions, {} mismatches {:?}",
            table.material(),
            report.positions,
            report.mismatches,
            report.examples
        );
        positions += report.positions;
        mismatches += report.mismatches;
    }
    eprintln!("total: {positions} positions, {mismatches} mismatches");
    assert_eq!(mismatches, 0);
}

#[test]
fn en_passant_at_the_root_is_weighed() {
    let Some(dir) = dir() else { return };
    let tb = Tablebase::open_dir(&dir).unwrap();
    if tb.table("KPvKP".parse().unwrap()).is_none() {
        eprintln!("skipped: no KPvKP table in {}", dir.display());
        return;
    }
    // White just played d2-d4; black's e4 pawn may take en passant.
    let with_ep = Position::from_fen("8/8/8/8/3Pp3/8/8/K6k b - d3 0 1").unwrap();
    let without = Position::from_fen("8/8/8/8/3Pp3/8/8/K6k b - - 0 1").unwrap();
    let a = tb.probe_dtm(&with_ep).unwrap();
    let b = tb.probe_dtm(&without).unwrap();
    let take = tb
        .best_moves(&with_ep)
        .unwrap()
        .into_iter()
        .find(|m| m.mv.is_en_passant())
        .expect("the capture is listed")
        .value;
    let best = if take.is_better_than(b) { take } else { b };
    assert_eq!(a, best);
    assert!(
        tb.best_moves(&without)
            .unwrap()
            .iter()
            .all(|m| !m.mv.is_en_passant())
    );
}
