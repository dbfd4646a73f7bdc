//! `chess game` against a real `chess up` stack: creating, playing, showing, following,
//! resigning and drawing games, and how refused calls are reported.

#![cfg(unix)]

mod common;

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use common::{ChildGuard, Stack, TempDir, line_reader, wait_bounded};

/// Creates a game and returns its id (the first line of `chess game new`, alone).
fn new_game(stack: &Stack, args: &[&str]) -> String {
    let mut all = vec!["game", "new"];
    all.extend_from_slice(args);
    let run = stack.chess(&all);
    run.assert_ok();
    let id = run.lines()[0].to_owned();
    assert_eq!(id.len(), 36, "the first line is the id alone: {run:#?}");
    assert_eq!(id.matches('-').count(), 4, "{run:#?}");
    id
}

#[test]
fn game_new_move_show() {
    let dir = TempDir::new("game-play");
    let stack = Stack::start(dir.path(), &[]);

    let run = stack.chess(&[
        "game", "new", "--tc", "5+3", "--white", "Ann", "--black", "Bob",
    ]);
    run.assert_ok()
        .assert_stdout_has("Ann")
        .assert_stdout_has("Bob")
        .assert_stdout_has("5+3")
        .assert_stdout_has("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    let id = run.lines()[0].to_owned();
    assert_eq!(id.len(), 36, "{run:#?}");

    let run = stack.chess(&["game", "move", &id, "e4"]);
    run.assert_ok();
    assert_eq!(run.lines()[0], "1. e4 (e2e4)");
    assert_eq!(
        run.lines()[1],
        "fen: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    run.assert_stdout_has("clock: 5+3");

    // UCI, with the side and ply guards satisfied.
    let run = stack.chess(&[
        "game",
        "move",
        &id,
        "e7e5",
        "--side",
        "black",
        "--expect-ply",
        "1",
    ]);
    run.assert_ok();
    assert_eq!(run.lines()[0], "1... e5 (e7e5)");

    // An illegal move: the code, the message and the field.
    stack
        .chess(&["game", "move", &id, "Ke3"])
        .assert_code(1)
        .assert_stderr_has("error: INVALID_ARGUMENT: ")
        .assert_stderr_has("\n  field move: ")
        .assert_stderr_has("Ke3");
    // Out of turn, and a stale ply.
    stack
        .chess(&["game", "move", &id, "Nc6", "--side", "black"])
        .assert_code(1)
        .assert_stderr_has("error: FAILED_PRECONDITION: ")
        .assert_stderr_has("  field side: ");
    stack
        .chess(&["game", "move", &id, "Nf3", "--expect-ply", "1"])
        .assert_code(1)
        .assert_stderr_has("error: FAILED_PRECONDITION: ")
        .assert_stderr_has("  field expected_ply: ");
    stack.chess(&["game", "move", &id, "Ng1-f3"]).assert_ok();

    let run = stack.chess(&["game", "show", &id]);
    run.assert_ok()
        .assert_stdout_has(&id)
        .assert_stdout_has("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
        .assert_stdout_has("8 | r n b q k b n r |")
        .assert_stdout_has("3 plies")
        .assert_stdout_has("  1. e4 {")
        .assert_stdout_has("  2. Nf3 {")
        .assert_stdout_has("black's clock is running")
        .assert_stdout_has("in progress, black to move");
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("draw offer") && l.ends_with("none")),
        "{run:#?}"
    );

    let run = stack.chess(&["game", "show", &id, "--pgn"]);
    run.assert_ok()
        .assert_stdout_has("[White \"Ann\"]")
        .assert_stdout_has("[TimeControl \"300+3\"]")
        .assert_stdout_has("1. e4 e5 2. Nf3 *");
    assert!(run.stdout.starts_with("[Event "), "{run:#?}");

    // Fool's mate in a second game ends it.
    let id = new_game(&stack, &[]);
    for m in ["f3", "e5", "g4"] {
        stack.chess(&["game", "move", &id, m]).assert_ok();
    }
    let run = stack.chess(&["game", "move", &id, "Qh4#"]);
    run.assert_ok()
        .assert_stdout_has("2... Qh4# (d8h4)")
        .assert_stdout_has("game over: 0-1 (black wins by checkmate)");
    stack
        .chess(&["game", "move", &id, "a3"])
        .assert_code(1)
        .assert_stderr_has("error: FAILED_PRECONDITION: ")
        .assert_stderr_has("the game is over");
}

#[test]
fn game_unknown_or_malformed_ids() {
    let dir = TempDir::new("game-ids");
    let stack = Stack::start(dir.path(), &[]);
    let unknown = "67e55044-10b1-426f-9247-bb680e5fe0c8";
    for args in [
        vec!["game", "show", unknown],
        vec!["game", "move", unknown, "e4"],
        vec!["game", "resign", unknown, "--side", "white"],
        vec!["game", "watch", unknown],
    ] {
        stack
            .chess(&args)
            .assert_code(1)
            .assert_stderr_has(&format!("error: NOT_FOUND: game {unknown} not found"));
    }
    stack
        .chess(&["game", "show", "not-an-id"])
        .assert_code(1)
        .assert_stderr_has("error: INVALID_ARGUMENT: ")
        .assert_stderr_has("  field game_id: ");
    stack
        .chess(&["game", "new", "--tc", "five minutes"])
        .assert_code(1)
        .assert_stderr_has("  field time_control_text: ");
    stack
        .chess(&["game", "new", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1"])
        .assert_code(1)
        .assert_stderr_has("  field start_fen: ");
}

#[test]
fn game_resign_and_draws() {
    let dir = TempDir::new("game-draws");
    let stack = Stack::start(dir.path(), &[]);

    // Resignation.
    let id = new_game(&stack, &[]);
    stack
        .chess(&["game", "resign", &id, "--side", "white"])
        .assert_ok()
        .assert_stdout_has("game over: 0-1 (black wins by resignation)");
    stack
        .chess(&["game", "show", &id])
        .assert_ok()
        .assert_stdout_has("0-1 (black wins by resignation)");

    // An offer, declined; another, accepted.
    let id = new_game(&stack, &[]);
    stack
        .chess(&["game", "move", &id, "e4", "--offer-draw"])
        .assert_ok()
        .assert_stdout_has("1. e4 (e2e4), offering a draw")
        .assert_stdout_has("white offers a draw: black may accept or decline");
    stack
        .chess(&["game", "show", &id])
        .assert_ok()
        .assert_stdout_has("from white: black may accept or decline");
    // Only the side facing the offer answers it.
    stack
        .chess(&["game", "draw", &id, "accept", "--side", "white"])
        .assert_code(1)
        .assert_stderr_has("error: FAILED_PRECONDITION: ");
    stack
        .chess(&["game", "draw", &id, "decline", "--side", "black"])
        .assert_ok()
        .assert_stdout_has("draw offer declined");
    stack
        .chess(&["game", "move", &id, "e5", "--offer-draw"])
        .assert_ok();
    stack
        .chess(&["game", "draw", &id, "accept", "--side", "white"])
        .assert_ok()
        .assert_stdout_has("game over: 1/2-1/2 (draw by agreement)");

    // Threefold repetition: claimable once it is there, or with the move that makes it.
    let id = new_game(&stack, &[]);
    stack
        .chess(&["game", "draw", &id, "claim", "--side", "white"])
        .assert_code(1)
        .assert_stderr_has("error: FAILED_PRECONDITION: ")
        .assert_stderr_has("  field move: no draw to claim");
    for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
        stack.chess(&["game", "move", &id, m]).assert_ok();
    }
    stack
        .chess(&[
            "game", "draw", &id, "claim", "--side", "black", "--move", "Ng8",
        ])
        .assert_ok()
        .assert_stdout_has("4... Ng8 (f6g8)")
        .assert_stdout_has("game over: 1/2-1/2 (draw by threefold repetition)");

    let id = new_game(&stack, &[]);
    for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"] {
        stack.chess(&["game", "move", &id, m]).assert_ok();
    }
    stack
        .chess(&["game", "show", &id])
        .assert_ok()
        .assert_stdout_has("threefold repetition (white may claim)");
    stack
        .chess(&["game", "draw", &id, "claim", "--side", "white"])
        .assert_ok()
        .assert_stdout_has("game over: 1/2-1/2 (draw by threefold repetition)");

    // `--move` belongs to `claim`.
    stack
        .chess(&[
            "game", "draw", &id, "accept", "--side", "white", "--move", "e4",
        ])
        .assert_code(2);
}

#[test]
fn game_watch_streams_until_the_end() {
    let dir = TempDir::new("game-watch");
    let stack = Stack::start(dir.path(), &[]);
    let id = new_game(&stack, &[]);

    let mut watch = ChildGuard(stack.spawn_chess(&["game", "watch", &id]));
    let lines = line_reader(&mut watch.0);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let next_line = |seen: &mut Vec<String>| {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    };
    // Wait for the snapshot before moving, so that the moves arrive as events.
    let first = next_line(&mut seen);
    let Some(first) = first else {
        panic!("no snapshot from chess game watch");
    };
    assert!(
        first.starts_with("snapshot: ply 0, white to move"),
        "{first}"
    );

    stack.chess(&["game", "move", &id, "e4"]).assert_ok();
    stack
        .chess(&["game", "move", &id, "e5", "--offer-draw"])
        .assert_ok();
    stack
        .chess(&["game", "draw", &id, "decline", "--side", "white"])
        .assert_ok();
    stack
        .chess(&["game", "resign", &id, "--side", "black"])
        .assert_ok();

    while next_line(&mut seen).is_some() {}
    let status = wait_bounded(&mut watch.0, Duration::from_secs(15));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "the watch ends by itself when the game does: {seen:#?}"
    );
    assert_eq!(seen.len(), 5, "{seen:#?}");
    assert!(seen[1].starts_with("move: 1. e4 (e2e4), fen "), "{seen:#?}");
    assert!(
        seen[2].starts_with("move: 1... e5 (e7e5), offering a draw, fen "),
        "{seen:#?}"
    );
    assert_eq!(seen[3], "draw declined by white, white to move");
    assert_eq!(seen[4], "game over: 1-0 (white wins by resignation)");

    // Watching a finished game shows it and ends at once.
    let run = stack.chess(&["game", "watch", &id]);
    run.assert_ok();
    assert_eq!(run.lines().len(), 2, "{run:#?}");
    assert_eq!(run.lines()[1], "game over: 1-0 (white wins by resignation)");
}
