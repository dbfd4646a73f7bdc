//! `chess opening` and `chess report` run as the binary: output, JSON keys, errors.

use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn chess(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_chess"))
        .args(args)
        .output()
        .expect("run chess");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn opening_prints_eco_name_and_class_on_one_line() {
    let r = chess(&["opening", "e4", "c5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "B20 Sicilian Defense  semi-open\n");
    let r = chess(&["opening", "e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]);
    assert_eq!(r.stdout, "C60 Ruy Lopez  open\n");
    // Move numbers as people write them, in one word or apart, and a result.
    for line in [
        &["1.e4", "e5", "2.Nf3", "Nc6", "3.Bb5"][..],
        &["1.", "e4", "e5", "2.", "Nf3", "Nc6", "3.", "Bb5", "*"],
        &["1.e4 e5 2.Nf3 Nc6 3.Bb5"],
    ] {
        let r = chess(&[&["opening"][..], line].concat());
        assert_eq!(r.stdout, "C60 Ruy Lopez  open\n", "{line:?}: {}", r.stderr);
    }
    let r = chess(&["opening", "d4", "d5", "c4", "dxc4"]);
    assert_eq!(r.stdout, "D20 Queen's Gambit Accepted  closed, gambit\n");
    // Transposition: the English move order reaches a Queen's Gambit Declined.
    let r = chess(&["opening", "c4", "e6", "Nc3", "d5", "d4"]);
    assert_eq!(
        r.stdout,
        "D31 Queen's Gambit Declined: Queen's Knight Variation  closed\n"
    );
}

#[test]
fn opening_names_a_bad_move_and_cuts_it_short_when_long() {
    let r = chess(&["opening", "e4", "e9"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("move 2 \"e9\": "), "{}", r.stderr);
    let long = "Q".repeat(5000);
    let r = chess(&["opening", "e4", &long]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains(&format!("move 2 \"{}...\" (5000 bytes): ", "Q".repeat(48))),
        "{}",
        r.stderr
    );
    assert!(r.stderr.len() < 400, "{}", r.stderr);
}

#[test]
fn opening_of_each_game_in_a_pgn_file() {
    let dir = std::env::temp_dir().join(format!("chess-opening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("games.pgn");
    std::fs::write(
        &path,
        "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n\
         [White \"C\"]\n[Black \"D\"]\n\n1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 *\n",
    )
    .unwrap();
    let r = chess(&["opening", "--pgn", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("C70 Ruy Lopez: Morphy Defense  open"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("E20 Nimzo-Indian Defense  closed"),
        "{lines:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opening_rejects_a_bad_move_naming_it() {
    let r = chess(&["opening", "e4", "Ke7x"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("move 2 \"Ke7x\""), "{}", r.stderr);
    let r = chess(&["opening", "--pgn", "/nonexistent/x.pgn"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
}

#[test]
fn report_text_in_english_and_chinese() {
    let fen = "4k3/p4p1p/8/4P3/2P2P2/2P5/P7/4K3 w - - 0 1";
    let r = chess(&["report", "--fen", fen]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("White doubled pawns: c3 c4"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("White isolated pawns: a2 c3 c4"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("White passed pawns: c3 c4"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Phase: endgame"), "{}", r.stdout);
    assert!(r.stdout.contains("Endgame: pawn endgame"), "{}", r.stdout);
    let r = chess(&["report", "--fen", fen, "--lang", "zh"]);
    assert!(r.stdout.contains("白方叠兵：c3 c4"), "{}", r.stdout);
    assert!(r.stdout.contains("白方孤兵：a2 c3 c4"), "{}", r.stdout);
    assert!(r.stdout.contains("残局类型：兵残局"), "{}", r.stdout);
}

#[test]
fn report_json_after_moves() {
    let r = chess(&["report", "--json", "--moves", "e4", "d5", "exd5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["material"]["balance"], 1);
    // exd5 doubles white's d-pawns.
    assert_eq!(
        v["pawns"]["white"]["doubled"],
        serde_json::json!(["d2", "d5"])
    );
    assert_eq!(v["pawns"]["white"]["passed"], serde_json::json!([]));
    assert_eq!(v["pawns"]["black"]["backward"], serde_json::json!([]));
    assert_eq!(v["pawns"]["black"]["isolated"], serde_json::json!([]));
    assert_eq!(v["phase"], "opening");
    assert_eq!(
        v["fen"],
        "rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2"
    );
    let r = chess(&["report", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("invalid FEN"), "{}", r.stderr);
}
