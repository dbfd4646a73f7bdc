//! `chess store import` killed with SIGKILL part way leaves no half-written game: run again,
//! it completes, and the store holds every game whole. And an import with a bad line says
//! what it wrote and what it skipped.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use chess_integration_tests::cli::{sorted_lines, store_export, store_import_file};
use chess_integration_tests::{TempDir, bin};
use chess_rules::{Game, Position};

/// Games in the file, and most plies in each.
const GAMES: usize = 120;
const PLIES: usize = 200;

/// One exported game: a long game of legal moves chosen by `seed`, as a JSON line.
fn game_line(n: usize) -> String {
    let mut game = Game::new(Position::startpos());
    let mut events = vec![
        r#"{"type":"created","start_fen":"","time_control":null,"white":"A","black":"B","at_ms":1000}"#
            .to_owned(),
    ];
    for ply in 0..PLIES {
        let moves = game.position().legal_moves();
        let m = moves.as_slice()[(n * 31 + ply * 7) % moves.len()];
        game.play(m).unwrap();
        events.push(format!(
            r#"{{"type":"move","uci":"{m}","offer_draw":false,"at_ms":{}}}"#,
            2000 + ply
        ));
        if game.outcome().is_some() {
            break;
        }
    }
    format!(
        r#"{{"game_id":"00000000-0000-4000-8000-{n:012x}","events":[{}]}}"#,
        events.join(",")
    )
}

/// The games as export writes them (the same events, serialised the same way).
fn normalised(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.to_string()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn an_import_killed_part_way_leaves_no_half_game_and_runs_again() {
    let dir = TempDir::new("import-kill");
    let lines: Vec<String> = (0..GAMES).map(game_line).collect();
    let input = dir.0.join("games.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let expected = normalised(&lines);
    for (attempt, after_ms) in [150u64, 400, 900].into_iter().enumerate() {
        let store = format!("redb:{}", dir.0.join(format!("s{attempt}.redb")).display());
        let mut child = Command::new(bin("chess"))
            .args(["store", "import", "--store", &store, "--input"])
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(after_ms));
        let _ = child.kill();
        let _ = child.wait();
        // Whatever it wrote is whole: the run again skips those games as unchanged and
        // writes the rest.
        let out = store_import_file(&store, &input);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "killed after {after_ms} ms, then: {said}"
        );
        let got = normalised(&sorted_lines(&store_export(&store)));
        assert_eq!(got.len(), GAMES, "{said}");
        assert!(
            got == expected,
            "killed after {after_ms} ms: a game differs"
        );
        eprintln!("killed after {after_ms} ms; the run again: {said}");
    }
}

#[test]
fn an_import_with_a_bad_line_says_what_it_wrote_and_skipped() {
    let dir = TempDir::new("import-report");
    let input = dir.0.join("games.jsonl");
    let mut f = std::fs::File::create(&input).unwrap();
    writeln!(f, "{}", game_line(1)).unwrap();
    writeln!(f, "{{\"game_id\": \"x\"}}").unwrap();
    writeln!(f, "{}", game_line(2)).unwrap();
    drop(f);
    let store = format!("redb:{}", dir.0.join("s.redb").display());
    let out = store_import_file(&store, &input);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("2 game(s) written"), "{said}");
    assert!(said.contains("1 line(s) skipped"), "{said}");
    assert!(said.contains("skipped line 2: not a game"), "{said}");
    assert_eq!(sorted_lines(&store_export(&store)).len(), 2);
}
