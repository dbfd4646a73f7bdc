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
    // Each engine move carries what the engine said of it: `{+0.35/12 0.004s, 401 nodes}`.
    let comments: Vec<&str> = games
        .split('{')
        .skip(1)
        .map(|c| c.split('}').next().unwrap())
        .collect();
    assert!(comments.len() > 10, "{games}");
    for c in &comments {
        let (searched, nodes) = c.split_once(", ").expect(c);
        let (score_depth, secs) = searched.split_once(' ').expect(c);
        let (score, depth) = score_depth.split_once('/').expect(c);
        assert!(score.starts_with(['+', '-']), "{c}");
        assert!(depth.parse::<u32>().is_ok_and(|d| d > 0), "{c}");
        assert!(
            secs.strip_suffix('s')
                .is_some_and(|s| s.parse::<f64>().is_ok()),
            "{c}"
        );
        let nodes: u64 = nodes.strip_suffix(" nodes").expect(c).parse().expect(c);
        assert!((1..=1000).contains(&nodes), "{c}");
    }
    time_report_reads(&pgn, comments.len());

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

/// `tools/match_time.py` reads the comments back: every commented move counted once, for
/// the engine that played it, in both engines' rows.
fn time_report_reads(pgn: &str, commented: usize) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/match_time.py");
    let out = match Command::new("python3").arg(script).arg(pgn).output() {
        Ok(out) => out,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "python3: {e}");
            eprintln!("skipped: tools/match_time.py needs python3 ({e})");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("2 games\n"), "{text}");
    // Rows: engine, phase, moves, mean, median, depth, knodes/s; then "a game:" lines.
    let mut moves = 0;
    for line in text.lines().skip(2).filter(|l| !l.contains("a game:")) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        moves += cells[cells.len() - 5].parse::<usize>().expect(line);
    }
    assert_eq!(moves, commented, "{text}");
    assert!(text.contains("(EvalFile=hand)"), "{text}");
    assert_eq!(text.matches("a game:").count(), 2, "{text}");
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
                "--tc",
                "nodes=100",
                "--opponent-tc",
                "1+0.1",
            ],
            "not of the same kind",
        ),
        (
            vec!["--engine", "x", "--opponent", "y", "--opponent-tc", "x+y"],
            "time control \"x+y\"",
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

/// `--opponent-tc`: each engine is sent its own control, whichever colour it has, and a
/// state saved with one opponent control is not resumed with another.
#[test]
fn each_side_searches_under_its_own_control() {
    let Some(uci) = engine() else { return };
    let dir = std::env::temp_dir().join(format!("chess-match-odds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Each engine behind a script that logs what the runner sends it.
    let wrapper = |name: &str| {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        let log = dir.join(format!("{name}.log"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ntee -a '{}' | exec '{}'\n",
                log.display(),
                uci.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (path.display().to_string(), log)
    };
    let (ours, ours_log) = wrapper("ours");
    let (theirs, theirs_log) = wrapper("theirs");
    let pgn = dir.join("g.pgn").display().to_string();
    let state = dir.join("s.json").display().to_string();
    let args = |opponent_tc: &str| {
        let mut a = vec![
            "--engine".to_owned(),
            ours.clone(),
            "--opponent".to_owned(),
            theirs.clone(),
            "--tc".to_owned(),
            "nodes=300".to_owned(),
            "--pairs".to_owned(),
            "1".to_owned(),
            "--pgn".to_owned(),
            pgn.clone(),
            "--state".to_owned(),
            state.clone(),
        ];
        a.extend(["--opponent-tc".to_owned(), opponent_tc.to_owned()]);
        a
    };
    let first = args("nodes=200");
    let (ok, text) = run(&first.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{text}");
    assert!(
        text.contains("nodes=300 (the opponent nodes=200)"),
        "{text}"
    );
    let gos = |log: &PathBuf| -> Vec<String> {
        std::fs::read_to_string(log)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("go"))
            .map(str::to_owned)
            .collect()
    };
    let (a, b) = (gos(&ours_log), gos(&theirs_log));
    assert!(a.len() > 10 && b.len() > 10, "{a:?} {b:?}");
    assert!(a.iter().all(|g| g == "go nodes 300"), "{a:?}");
    assert!(b.iter().all(|g| g == "go nodes 200"), "{b:?}");
    let mut other = args("nodes=250");
    other.push("--resume".to_owned());
    let (ok, text) = run(&other.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!ok && text.contains("the state of another match"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
