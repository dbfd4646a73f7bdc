//! The real `chess-uci` binary driven through its stdin and stdout, as a GUI or match runner
//! would.

mod common;

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use chess_rules::Position;
use common::{SECOND, Uci, best_move};

#[test]
fn handshake_search_and_quit() {
    let mut e = Uci::start();
    e.send("uci");
    let lines = e.until("uciok", 5 * SECOND);
    assert!(lines.iter().any(|l| l.starts_with("id name ")));
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for option in [
        "option name Hash type spin",
        "option name Threads type spin",
        "option name MultiPV type spin",
        "option name Move Overhead type spin",
        "option name UCI_ShowWDL type check",
        "option name Ponder type check",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(option)), "{option}");
    }
    // The network kernels' instruction set, as the CPU allows.
    let simd = lines
        .iter()
        .find_map(|l| l.strip_prefix("info string simd "))
        .expect("info string simd");
    assert!(
        ["sse2", "neon", "scalar", "avx2", "avx512"].contains(&simd.trim()),
        "{simd}"
    );
    e.send("isready");
    e.until("readyok", 5 * SECOND);
    e.send("ucinewgame");
    e.send("position startpos moves e2e4 e7e5");
    e.send("go depth 6");
    let lines = e.until("bestmove", 20 * SECOND);
    let infos: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .collect();
    assert!(infos.len() >= 6, "{lines:#?}");
    let last = infos.last().unwrap();
    for field in [
        " seldepth ",
        " multipv 1 ",
        " score cp ",
        " nodes ",
        " nps ",
        " hashfull ",
        " time ",
        " pv ",
    ] {
        assert!(last.contains(field), "{field} missing in {last}");
    }
    assert!(!last.contains(" wdl "), "wdl only when asked");
    let pos =
        Position::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").unwrap();
    best_move(lines.last().unwrap(), &pos);
    e.quit();
}

#[test]
fn go_infinite_stops_within_100ms() {
    let mut e = Uci::start();
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    // Nothing but info lines before stop.
    while let Some(line) = e.no_line_for(Duration::from_millis(10)) {
        assert!(line.starts_with("info"), "{line}");
    }
    let t = Instant::now();
    e.send("stop");
    let lines = e.until("bestmove", SECOND);
    let elapsed = t.elapsed();
    assert!(elapsed < Duration::from_millis(100), "{elapsed:?}");
    best_move(lines.last().unwrap(), &Position::startpos());
    // The engine answers at once after a stop.
    e.send("isready");
    e.until("readyok", SECOND);
    e.quit();
}

#[test]
fn python_chess_style_game() {
    // A match runner sends the whole game each move, then go with the clocks.
    let mut e = Uci::start();
    e.send("uci");
    e.until("uciok", 5 * SECOND);
    e.send("setoption name Hash value 16");
    e.send("setoption name Move Overhead value 20");
    e.send("ucinewgame");
    e.send("isready");
    e.until("readyok", 5 * SECOND);
    let mut moves: Vec<String> = ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (mut wtime, mut btime) = (3_000u64, 3_000u64);
    for _ in 0..6 {
        let mut pos = Position::startpos();
        for m in &moves {
            let mv = pos.parse_uci(m).unwrap();
            pos.play_unchecked(mv);
        }
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        e.send(&format!("go wtime {wtime} btime {btime} winc 50 binc 50"));
        let t = Instant::now();
        let lines = e.until("bestmove", 5 * SECOND);
        let used = t.elapsed().as_millis() as u64;
        let clock = if pos.turn().is_white() {
            &mut wtime
        } else {
            &mut btime
        };
        assert!(used < *clock / 3, "used {used} ms of {clock}");
        *clock = *clock - used + 50;
        let m = best_move(lines.last().unwrap(), &pos);
        moves.push(m.to_string());
    }
    e.quit();
}

#[test]
fn bad_input_is_answered_not_fatal() {
    let mut e = Uci::start();
    for bad in [
        "position fen not a fen",
        "position startpos moves e2e5",
        "position",
        "go depth x",
        "go sideways",
        "setoption name NoSuchOption value 3",
        "setoption name Hash value lots",
        "setoption name Threads value 0",
        "bench zero",
        "xyzzy",
    ] {
        e.send(bad);
        let lines = e.until("info string", 5 * SECOND);
        assert!(
            lines.last().unwrap().contains("error")
                || lines.last().unwrap().contains("usage")
                || lines.last().unwrap().contains("unknown")
                || lines.last().unwrap().contains("bench"),
            "{bad}: {lines:?}"
        );
    }
    // Invalid UTF-8 and blank lines are survived too.
    e.stdin.write_all(b"\xff\xfe\n\n   \n").unwrap();
    e.send("isready");
    e.until("readyok", 5 * SECOND);
    // The position after an illegal move keeps the moves before it.
    e.send("position startpos moves e2e4 e7e5 e1e3 d2d4");
    e.send("go depth 1");
    let lines = e.until("bestmove", 5 * SECOND);
    let pos =
        Position::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").unwrap();
    best_move(lines.last().unwrap(), &pos);
    e.quit();
}

#[test]
fn options_change_the_output() {
    let mut e = Uci::start();
    e.send("setoption name MultiPV value 2");
    e.send("setoption name UCI_ShowWDL value true");
    e.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
    e.send("go depth 4");
    let lines = e.until("bestmove", 10 * SECOND);
    assert!(
        lines.iter().any(|l| l.contains(" multipv 2 ")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" score mate 1 ") && l.contains(" wdl 1000 0 0 "))
    );
    assert!(lines.last().unwrap().starts_with("bestmove d1d8"));
    e.quit();
}

#[test]
fn ponder_then_ponderhit_and_go_mate() {
    let mut e = Uci::start();
    e.send("setoption name Ponder value true");
    e.send("position startpos moves d2d4");
    e.send("go ponder wtime 1000 btime 1000");
    std::thread::sleep(Duration::from_millis(400));
    while let Some(line) = e.no_line_for(Duration::from_millis(10)) {
        assert!(
            line.starts_with("info"),
            "no bestmove while pondering: {line}"
        );
    }
    e.send("ponderhit");
    let lines = e.until("bestmove", 2 * SECOND);
    let pos =
        Position::from_fen("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1").unwrap();
    best_move(lines.last().unwrap(), &pos);
    e.send("position fen r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1");
    e.send("go mate 3");
    let lines = e.until("bestmove", 10 * SECOND);
    assert!(
        lines.iter().any(|l| l.contains(" score mate 3 ")),
        "{lines:#?}"
    );
    assert!(lines.last().unwrap().starts_with("bestmove f6a6"));
    // No legal move: the engine says so.
    e.send("position fen k7/1Q6/2K5/8/8/8/8/8 b - - 0 1");
    e.send("go depth 3");
    let lines = e.until("bestmove", 5 * SECOND);
    assert_eq!(lines.last().unwrap(), "bestmove (none)");
    e.quit();
}

#[test]
fn bench_on_the_command_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_chess-uci"))
        .args(["bench", "3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    assert!(lines[n - 2].starts_with("Nodes searched: "), "{text}");
    assert!(lines[n - 1].starts_with("Nodes/second: "), "{text}");
    let nodes: u64 = lines[n - 2]["Nodes searched: ".len()..].parse().unwrap();
    assert!(nodes > 1000);
    // The embedded network by default; `hand` names the hand-written evaluation.
    assert!(lines[0].starts_with("Evaluation: network chnn-"), "{text}");
    let hand = Command::new(env!("CARGO_BIN_EXE_chess-uci"))
        .args(["bench", "3", "hand"])
        .output()
        .unwrap();
    assert!(hand.status.success());
    let hand = String::from_utf8(hand.stdout).unwrap();
    assert!(
        hand.starts_with("Evaluation: hand-written evaluation\n"),
        "{hand}"
    );
    assert_ne!(hand.lines().nth_back(1), lines.get(n - 2).copied());
    let bad = Command::new(env!("CARGO_BIN_EXE_chess-uci"))
        .args(["bench", "deep"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// A `go` that cannot be read is reported and still answered (a GUI waits for `bestmove`).
#[test]
fn every_go_ends_in_a_bestmove() {
    let mut e = Uci::start();
    e.send("position startpos moves e2e4");
    let pos =
        Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
    for bad in [
        "go depth 1e9",
        "go searchmoves e2e5 nodes 100",
        "go banana 5",
        "go depth",
        "go nodes -",
    ] {
        e.send(bad);
        let lines = e.until("bestmove", 5 * SECOND);
        assert!(
            lines.iter().any(|l| l.starts_with("info string error: go")),
            "{bad}: {lines:#?}"
        );
        best_move(lines.last().unwrap(), &pos);
    }
    e.quit();
}

/// `go depth 2147483648` is a deep search (it saturates), not one ply.
#[test]
fn huge_depth_saturates() {
    let mut e = Uci::start();
    e.send("position startpos");
    e.send("go depth 2147483648");
    std::thread::sleep(Duration::from_millis(500));
    let mut deepest = 0;
    while let Some(line) = e.no_line_for(Duration::from_millis(10)) {
        assert!(line.starts_with("info"), "no bestmove before stop: {line}");
        if let Some(d) = line.strip_prefix("info depth ") {
            deepest = d.split(' ').next().unwrap().parse().unwrap();
        }
    }
    assert!(deepest >= 2, "reached depth {deepest}");
    e.send("stop");
    let lines = e.until("bestmove", SECOND);
    best_move(lines.last().unwrap(), &Position::startpos());
    e.quit();
}

/// `EvalFile` naming a device is refused at once (it used to be read until memory ran out).
#[test]
fn eval_file_device_is_refused() {
    let mut e = Uci::start();
    e.send("setoption name EvalFile value /dev/zero");
    let lines = e.until("info string", 5 * SECOND);
    let last = lines.last().unwrap();
    assert!(
        last.contains("not a regular file") && last.contains("the evaluation is unchanged"),
        "{last}"
    );
    e.send("isready");
    e.until("readyok", 5 * SECOND);
    e.quit();
}
