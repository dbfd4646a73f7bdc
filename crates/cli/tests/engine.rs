//! `chess analyze`, `chess review` and `chess game engine-move` against a real `chess up`
//! stack (rules, search and gateway in one process).

#![cfg(unix)]

mod common;

use common::{Stack, TempDir};

const SCHOLAR: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";

#[test]
fn analyze_review_and_play_against_the_engine() {
    let dir = TempDir::new("engine");
    let stack = Stack::start(dir.path(), &["--memory"]);

    // Unary analysis with three lines: one `depth` line each, then the best move.
    let run = stack.chess(&["analyze", SCHOLAR, "--depth", "4", "--multipv", "3"]);
    run.assert_ok().assert_stdout_has("bestmove Qxf7# #1");
    let lines: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("depth"))
        .collect();
    assert_eq!(lines.len(), 3, "{run:#?}");
    assert!(
        lines[0].contains("multipv 1") && lines[0].contains("Qxf7#"),
        "{run:#?}"
    );
    assert!(lines.iter().all(|l| l.contains("wdl ")), "{run:#?}");

    // Streaming prints every depth as it completes; moves and UCI output.
    let run = stack.chess(&[
        "analyze", "--moves", "e4", "e5", "--depth", "5", "--stream", "--uci",
    ]);
    run.assert_ok().assert_stdout_has("bestmove ");
    let depths: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("depth"))
        .collect();
    assert_eq!(depths.len(), 5, "{run:#?}");
    assert!(depths[4].starts_with("depth  5"), "{run:#?}");

    // Moves without --moves, with move numbers; a FEN and moves after it.
    let run = stack.chess(&["analyze", "1.e4", "e5", "2.Nf3", "--depth", "3", "--uci"]);
    run.assert_ok().assert_stdout_has("bestmove ");
    let run = stack.chess(&[
        "analyze",
        "8/8/8/8/8/8/4P3/4K2k",
        "w",
        "-",
        "-",
        "0",
        "1",
        "e4",
        "--depth",
        "3",
    ]);
    run.assert_ok().assert_stdout_has("bestmove ");

    // Bad input: the server's field error, exit 1.
    stack
        .chess(&["analyze", "8/8/8 w", "--depth", "2"])
        .assert_code(1)
        .assert_stderr_has("INVALID_ARGUMENT")
        .assert_stderr_has("field fen");
    stack
        .chess(&["analyze", "--depth", "200"])
        .assert_code(1)
        .assert_stderr_has("field limits.depth");

    // Review of a short game with a blunder, and the annotated PGN.
    let pgn = dir.path().join("game.pgn");
    std::fs::write(
        &pgn,
        "[White \"Ann\"]\n[Black \"Bob\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n",
    )
    .unwrap();
    let out = dir.path().join("annotated.pgn");
    let run = stack.chess(&[
        "review",
        pgn.to_str().unwrap(),
        "--nodes",
        "20000",
        "--annotated",
        out.to_str().unwrap(),
    ]);
    run.assert_ok()
        .assert_stdout_has("3...Nf6??")
        .assert_stdout_has("White (Ann): accuracy")
        .assert_stdout_has("Black (Bob): accuracy")
        .assert_stdout_has("7 plies");
    // Scores from White's side: Black's blunder leaves White winning (a mate for White is
    // positive), the mating move says "mate", and counts of one are singular.
    let blunder = run
        .lines()
        .into_iter()
        .find(|l| l.starts_with("3...Nf6??"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        blunder.contains(" #1 ") || blunder.contains(" +"),
        "{blunder}"
    );
    assert!(
        !run.stdout.contains("1 mistakes") && !run.stdout.contains("1 blunders"),
        "{run:#?}"
    );
    let annotated = std::fs::read_to_string(&out).unwrap();
    assert!(annotated.contains("Nf6 $4"), "{annotated}");
    stack
        .chess(&["review", dir.path().join("missing.pgn").to_str().unwrap()])
        .assert_code(1)
        .assert_stderr_has("missing.pgn");
    stack
        .chess(&["review", pgn.to_str().unwrap(), "--game", "2"])
        .assert_code(1)
        .assert_stderr_has("field game_index");

    // Play against the engine: White plays e4, the engine answers at level 1200 and moves.
    let run = stack.chess(&["game", "new"]);
    run.assert_ok();
    let id = run.lines()[0].to_owned();
    stack.chess(&["game", "move", &id, "e4"]).assert_ok();
    let run = stack.chess(&[
        "game",
        "engine-move",
        &id,
        "--elo",
        "1200",
        "--seed",
        "3",
        "--play",
    ]);
    run.assert_ok().assert_stdout_has("engine played ");
    let show = stack.chess(&["game", "show", &id]);
    show.assert_ok().assert_stdout_has("1. e4 ");
    let run = stack.chess(&["game", "engine-move", &id]);
    run.assert_ok().assert_stdout_has("engine move: ");
    stack
        .chess(&["game", "engine-move", &id, "--elo", "100"])
        .assert_code(1)
        .assert_stderr_has("strength.elo");
}

/// A Result tag that the final position contradicts (a mate for the other side) is kept by
/// the review, which says so on stderr.
#[test]
fn review_warns_of_a_result_the_final_mate_contradicts() {
    let dir = TempDir::new("review-result");
    let stack = Stack::start(dir.path(), &["--memory"]);
    let pgn = dir.path().join("game.pgn");
    std::fs::write(
        &pgn,
        "[White \"Ann\"]\n[Result \"0-1\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 0-1\n",
    )
    .unwrap();
    stack
        .chess(&["review", pgn.to_str().unwrap(), "--nodes", "2000"])
        .assert_ok()
        .assert_stdout_has("opening: C23 Bishop's Opening  open")
        .assert_stdout_has("7 plies")
        .assert_stderr_has(
            "warning: game 1: its Result tag says 0-1, but the final position is 1-0 (white wins \
             by checkmate); the review keeps the result as written",
        );
    // A result that fits says nothing.
    std::fs::write(&pgn, "1. f3 e5 2. g4 Qh4# 0-1\n").unwrap();
    let run = stack.chess(&["review", pgn.to_str().unwrap(), "--nodes", "2000"]);
    run.assert_ok();
    assert!(!run.stderr.contains("warning"), "{run:#?}");
}
