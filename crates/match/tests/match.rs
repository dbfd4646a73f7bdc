//! `chess-match` end to end: our own engine against itself at a few nodes per move, a
//! checkpoint, a resume, and the refusals.

use std::path::PathBuf;
use std::process::Command;

/// The engine built with the workspace (`cargo test --workspace` builds every binary); a
/// developer who tests this crate alone is told to build it, CI fails without it.
fn engine() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?;
    let uci = dir.join("chess-uci");
    if uci.exists() {
        return Some(uci);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: build the workspace first",
        uci.display()
    );
    eprintln!(
        "skipped: {} is missing (cargo build -p chess-uci)",
        uci.display()
    );
    None
}

fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chess-match"))
        .args(args)
        .output()
        .expect("chess-match runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn plays_pairs_checkpoints_and_resumes() {
    let Some(uci) = engine() else { return };
    let uci = uci.display().to_string();
    let dir = std::env::temp_dir().join(format!("chess-match-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("m.pgn").display().to_string();
    let state = dir.join("m.json").display().to_string();
    let book = dir.join("book.txt");
    std::fs::write(
        &book,
        "# two openings\ne2e4 e7e5\n4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\n",
    )
    .unwrap();
    let book = book.display().to_string();
    let common = [
        "--engine",
        &uci,
        "--opponent",
        &uci,
        "--opponent-option",
        "EvalFile=hand",
        "--tc",
        "nodes=400",
        "--book",
        &book,
        "--pgn",
        &pgn,
        "--state",
        &state,
        "--sprt",
        "0,10",
    ];
    let (ok, text) = run(&[&common[..], &["--pairs", "1"]].concat());
    assert!(ok, "{text}");
    assert!(text.contains("2 games"), "{text}");
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("SPRT [0, 10]: undecided: 2 games"),
        "{last}"
    );
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(
        games.matches("[Event \"chess-match\"]").count(),
        2,
        "{games}"
    );
    assert!(games.contains("(EvalFile=hand)"), "{games}");

    // Resumed with one more pair: the second opening (a FEN), and four games in all.
    let (ok, text) = run(&[&common[..], &["--pairs", "2", "--resume"]].concat());
    assert!(ok, "{text}");
    assert!(text.contains("resuming: 2 games"), "{text}");
    assert!(text.lines().last().unwrap().contains("4 games"), "{text}");
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[Event \"chess-match\"]").count(), 4);
    assert!(
        games.contains("[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]"),
        "{games}"
    );

    // Another match cannot resume this one's state.
    let other: Vec<&str> = common
        .iter()
        .map(|&a| if a == "nodes=400" { "nodes=500" } else { a })
        .collect();
    let (ok, text) = run(&[&other[..], &["--pairs", "2", "--resume"]].concat());
    assert!(!ok && text.contains("the state of another match"), "{text}");

    // Random plies after the book's opening: both games of a pair start alike, and the seed
    // chooses the moves.
    let opening_of = |seed: &str| {
        let (ok, text) = run(&[
            &common[..],
            &["--pairs", "1", "--random-plies", "3", "--seed", seed],
        ]
        .concat());
        assert!(ok, "{text}");
        assert!(text.contains("2 openings + 3 random plies"), "{text}");
        let games = std::fs::read_to_string(&pgn).unwrap();
        let starts: Vec<Vec<String>> = games
            .split("[Event ")
            .skip(1)
            .map(|g| {
                let moves: Vec<String> = g
                    .lines()
                    .skip(1)
                    .filter(|l| !l.starts_with('[') && !l.is_empty())
                    .flat_map(|l| l.split_whitespace().map(str::to_owned))
                    .filter(|t| !t.ends_with('.'))
                    .take(5)
                    .collect();
                moves
            })
            .collect();
        assert_eq!(starts.len(), 2, "{games}");
        assert_eq!(starts[0], starts[1], "{games}");
        assert_eq!(starts[0][..2], ["e4", "e5"], "{games}");
        starts[0].clone()
    };
    let a = opening_of("5");
    assert_eq!(a, opening_of("5"));
    assert_ne!(a, opening_of("6"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_arguments_are_refused_clearly() {
    for (args, want) in [
        (
            vec!["--engine", "x", "--opponent", "y", "--tc", "fast"],
            "time control \"fast\"",
        ),
        (
            vec!["--engine", "x", "--opponent", "y", "--sprt", "5,0"],
            "elo0 must be below elo1",
        ),
        (
            vec![
                "--engine",
                "x",
                "--opponent",
                "y",
                "--engine-option",
                "Hash",
            ],
            "not NAME=VALUE",
        ),
        (
            vec![
                "--engine",
                "/no/such/engine",
                "--opponent",
                "y",
                "--pairs",
                "1",
            ],
            "cannot start engine",
        ),
    ] {
        let (ok, text) = run(&args);
        assert!(!ok && text.contains(want), "{args:?}: {text}");
    }
}

#[test]
fn an_option_the_engine_refuses_stops_the_match() {
    let Some(uci) = engine() else { return };
    let uci = uci.to_str().expect("utf-8 path");
    let dir = std::env::temp_dir().join(format!("chess-match-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("g.pgn");
    let state = dir.join("s.json");
    let (ok, text) = run(&[
        "--engine",
        uci,
        "--opponent",
        uci,
        "--engine-option",
        "tune.no_such_parameter=1",
        "--tc",
        "nodes=200",
        "--pairs",
        "1",
        "--pgn",
        pgn.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert!(
        !ok && text.contains("refused its options") && text.contains("tune.no_such_parameter"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
