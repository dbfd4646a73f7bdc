//! Read → write → read gives the same tree, and what the writer writes is export format:
//! the Seven Tag Roster first, lines of at most 79 characters, a blank line after each game.

mod common;

use chess_pgn::{
    GameResult, Line, Node, PgnGame, SEVEN_TAG_ROSTER, Writer, WriterOptions, read_games,
};
use chess_rules::Position;
use common::{GOOD_FILES, GenOptions, Rng, data, random_game, without_san, write};

/// Checks the export-format rules on the text of one game.
fn check_export_format(text: &str, width: usize) {
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, (name, _)) in SEVEN_TAG_ROSTER.iter().enumerate() {
        assert!(
            lines[i].starts_with(&format!("[{name} \"")),
            "line {i} of\n{text}"
        );
    }
    let blank = lines.iter().position(|l| l.is_empty()).unwrap();
    assert!(
        lines[..blank]
            .iter()
            .all(|l| l.starts_with('[') && l.ends_with("\"]")),
        "{text}"
    );
    assert!(
        text.ends_with("\n\n") && !text.ends_with("\n\n\n"),
        "{text:?}"
    );
    let movetext = &lines[blank + 1..lines.len() - 2];
    assert!(!movetext.is_empty(), "{text}");
    for line in movetext {
        // Only a single word that is itself too long may overflow, or a `;` comment.
        let overflow = line.chars().count() > width;
        assert!(
            !overflow || !line.trim_start().contains(' ') || line.contains(';'),
            "line too long ({}):\n{line}\nin\n{text}",
            line.chars().count()
        );
        assert!(
            !line.starts_with('%') && !line.is_empty() && !line.ends_with(' '),
            "{line:?}"
        );
    }
}

/// Reads one written game back and checks it against the original.
fn round_trip(original: &PgnGame) -> String {
    let text = write(original);
    check_export_format(&text, 79);
    let back = PgnGame::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        without_san(&back.root),
        without_san(&original.root),
        "{text}"
    );
    assert_eq!(back.start, original.start);
    let expected_result = original
        .result
        .or_else(|| original.tag("Result").and_then(|r| r.parse().ok()))
        .unwrap_or(GameResult::Unknown);
    assert_eq!(back.result, Some(expected_result));
    for (name, value) in &original.tags {
        assert!(
            back.tags.contains(&(name.clone(), value.clone())),
            "{name} lost in\n{text}"
        );
    }
    // Written text is a fixed point.
    assert_eq!(write(&back), text);
    text
}

#[test]
fn corpus_round_trip() {
    let mut games = 0;
    for name in GOOD_FILES {
        for game in read_games(&data(name)[..]) {
            round_trip(&game.unwrap());
            games += 1;
        }
    }
    assert_eq!(games, 25);
}

#[test]
fn corpus_round_trip_as_one_file() {
    for name in GOOD_FILES {
        let games: Vec<PgnGame> = read_games(&data(name)[..]).map(Result::unwrap).collect();
        let mut w = Writer::new(Vec::new());
        for g in &games {
            w.write_game(g).unwrap();
        }
        let text = w.into_inner();
        let back: Vec<PgnGame> = read_games(&text[..]).map(Result::unwrap).collect();
        assert_eq!(back.len(), games.len(), "{name}");
        for (a, b) in games.iter().zip(&back) {
            assert_eq!(without_san(&a.root), without_san(&b.root), "{name}");
        }
    }
}

#[test]
fn random_games_round_trip_exactly() {
    let mut rng = Rng::new(0x5eed);
    let opts = GenOptions {
        max_plies: 160,
        annotate: true,
        max_depth: 3,
    };
    let games: Vec<PgnGame> = (0..250).map(|_| random_game(&mut rng, opts)).collect();
    let mut all = Vec::new();
    for game in &games {
        let text = round_trip(game);
        // Written SAN is canonical, so even the SAN as read matches the generator's.
        let back = PgnGame::parse(&text).unwrap();
        assert_eq!(back.root, game.root, "{text}");
        all.extend_from_slice(text.as_bytes());
    }
    let back: Vec<PgnGame> = read_games(&all[..]).map(Result::unwrap).collect();
    assert_eq!(back.len(), games.len());
    for (a, b) in games.iter().zip(&back) {
        assert_eq!(a.root, b.root);
    }
}

#[test]
fn narrow_lines_round_trip() {
    let mut rng = Rng::new(11);
    let opts = GenOptions {
        max_plies: 60,
        annotate: true,
        max_depth: 2,
    };
    for _ in 0..40 {
        let game = random_game(&mut rng, opts);
        let mut w = Writer::with_options(Vec::new(), WriterOptions { max_width: 30 });
        w.write_game(&game).unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        check_export_format(&text, 30);
        let back = PgnGame::parse(&text).unwrap();
        assert_eq!(back.root, game.root, "{text}");
    }
}

fn game(movetext: &str) -> PgnGame {
    PgnGame::parse(movetext).unwrap()
}

fn movetext(g: &PgnGame) -> String {
    let text = write(g);
    let start = text.find("\n\n").unwrap() + 2;
    text[start..].trim_end().to_owned()
}

#[test]
fn move_numbers_after_comments_and_variations() {
    let g = game("1. e4 {best by test} e5 2. Nf3 (2. f4) Nc6 3. Bb5 $1 a6 {Morphy} 4. Ba4 *");
    assert_eq!(
        movetext(&g),
        "1. e4 {best by test} 1... e5 2. Nf3 (2. f4) 2... Nc6 3. Bb5 $1 a6 {Morphy}\n4. Ba4 *"
    );
    // Black to move at the start of a variation or a set-up game.
    let g =
        game("[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 40\"]\n\n40... Kd7 (40... Kf7 41. e4) 41. e3 *");
    assert_eq!(movetext(&g), "40... Kd7 (40... Kf7 41. e4) 41. e3 *");
}

#[test]
fn canonical_san_and_nags() {
    let g = game(
        "1. e2e4 e7-e5 2. Ng1f3 Nb8c6 3. Bf1b5 a7a6!? 4. Bxc6 dc6 5. 0-0 f6? 6. d4 ed4 7. Nxd4 c5 $14 8. Nb3 Qxd1 9. Rxd1 *",
    );
    assert_eq!(
        movetext(&g),
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 $5 4. Bxc6 dxc6 5. O-O f6 $2 6. d4 exd4 7. Nxd4\nc5 $14 8. Nb3 Qxd1 9. Rxd1 *"
    );
}

#[test]
fn seven_tag_roster_first_with_defaults() {
    let g =
        game("[ECO \"C20\"]\n[Black \"Bo\"]\n[WhiteElo \"2100\"]\n[Event \"Club\"]\n\n1. e4 1-0");
    let text = write(&g);
    assert_eq!(
        text,
        "[Event \"Club\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n\
         [Black \"Bo\"]\n[Result \"1-0\"]\n[ECO \"C20\"]\n[WhiteElo \"2100\"]\n\n1. e4 1-0\n\n"
    );
    // No movetext result: the Result tag's value ends the movetext.
    let mut g = game("[Result \"0-1\"]\n\n1. e4");
    assert_eq!(g.result, None);
    assert!(write(&g).ends_with("\n\n1. e4 0-1\n\n"));
    g.tags.clear();
    assert!(write(&g).contains("[Result \"*\"]\n\n1. e4 *\n\n"));
}

#[test]
fn set_up_positions_get_their_tags() {
    let start = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
    let mut g = PgnGame::new(start.clone());
    let mv = start.parse_san("e4").unwrap();
    g.root.nodes.push(Node::new(mv, "e4"));
    let text = write(&g);
    assert!(text.contains(
        "[Result \"*\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 *"
    ));
    assert_eq!(PgnGame::parse(&text).unwrap().start, start);
}

#[test]
fn tag_values_are_escaped() {
    let mut g = PgnGame::new(Position::startpos());
    g.set_tag("Event", "The \"Big\" one \\ 2024");
    let text = write(&g);
    assert!(text.starts_with("[Event \"The \\\"Big\\\" one \\\\ 2024\"]\n"));
    assert_eq!(
        PgnGame::parse(&text).unwrap().tag("Event"),
        Some("The \"Big\" one \\ 2024")
    );
}

#[test]
fn awkward_comments() {
    let mut g = game("1. e4 e5 *");
    let long = "x".repeat(100);
    g.root.nodes[0].comments_after = vec![
        "has } a brace".into(),
        "%not an escape".into(),
        long.clone(),
        String::new(),
    ];
    g.root.nodes[1].comments_after = vec!["a % b".repeat(30)];
    let text = write(&g);
    assert!(text.contains("; has } a brace\n"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with('%')), "{text}");
    assert!(text.contains(&format!("\n{{{long}}}\n")), "{text}");
    let back = PgnGame::parse(&text).unwrap();
    assert_eq!(back.root, g.root, "{text}");
    // Comments in an empty variation and in a game without moves.
    let mut g = game("{only a comment} *");
    assert_eq!(movetext(&g), "{only a comment} *");
    g.root.comments.push("two".into());
    assert_eq!(PgnGame::parse(&write(&g)).unwrap().root, g.root);
    let g = game("1. e4 ({nothing}) ( ) e5 *");
    assert_eq!(g.root.nodes[0].variations.len(), 2);
    assert_eq!(movetext(&g), "1. e4 ({nothing}) () 1... e5 *");
}

#[test]
fn games_that_cannot_be_written() {
    let mut illegal = game("1. e4 e5 *");
    illegal.root.nodes.swap(0, 1);
    assert!(illegal.to_pgn().is_none());
    let mut bad_tag = game("*");
    bad_tag.tags.push(("Bad Name".into(), "x".into()));
    assert!(bad_tag.to_pgn().is_none());
    let mut bad_value = game("*");
    bad_value.tags.push(("Note".into(), "two\nlines".into()));
    let mut w = Writer::new(Vec::new());
    let err = w.write_game(&bad_value).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        w.into_inner().is_empty(),
        "nothing is written for a game that fails"
    );
    // A variation whose first move is illegal where it starts.
    let mut g = game("1. e4 e5 *");
    let e5 = g.root.nodes[1].clone();
    g.root.nodes[0].variations.push(Line {
        nodes: vec![e5],
        comments: vec![],
    });
    assert!(g.to_pgn().is_none());
}

#[test]
fn to_pgn_matches_the_writer() {
    let g = game("1. d4 d5 2. c4 e6 *");
    assert_eq!(g.to_pgn().unwrap(), write(&g));
    assert_eq!(
        PgnGame::parse("").unwrap(),
        PgnGame::new(Position::startpos())
    );
}

/// The writer refuses, writing nothing, a game whose text would not read back as the game.
fn assert_refused(g: &PgnGame, why: &str) {
    let mut w = Writer::new(Vec::new());
    let e = w.write_game(g).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains(why), "{e}");
    assert!(w.into_inner().is_empty());
}

#[test]
fn set_up_tags_must_describe_the_start() {
    // A FEN tag naming another position than the start: its moves would not read back.
    let mut g = game("1. Nf3 *");
    g.set_tag("FEN", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
    assert_refused(&g, "is not the game's start position");
    g.set_tag("FEN", "not a fen");
    assert_refused(&g, "FEN tag \"not a fen\" is not a legal position");
    // SetUp "0" (standard start) on a set-up position, and SetUp neither 0 nor 1.
    let start = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
    let mut g = PgnGame::new(start.clone());
    g.root
        .nodes
        .push(Node::new(start.parse_san("e4").unwrap(), "e4"));
    g.set_tag("SetUp", "0");
    assert_refused(&g, "SetUp tag \"0\" does not fit");
    g.set_tag("SetUp", "yes");
    assert_refused(&g, "SetUp tag \"yes\"");
    // The start position in other words reads back.
    g.tags.clear();
    g.set_tag("FEN", "  4k3/8/8/8/8/8/4P3/4K3 w - -  ");
    let back = PgnGame::parse(&write(&g)).unwrap();
    assert_eq!((back.start, back.root), (start, g.root.clone()));
    // SetUp "1" on a game from the standard start gets the start's FEN tag.
    let mut g = game("1. e4 *");
    g.set_tag("SetUp", "1");
    let text = write(&g);
    assert!(
        text.contains(
            "[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\"]"
        ),
        "{text}"
    );
    assert_eq!(PgnGame::parse(&text).unwrap().root, g.root);
}

#[test]
fn tags_too_long_to_read_are_refused() {
    let mut g = game("1. e4 *");
    g.set_tag("Annotator", "x".repeat(1 << 20));
    assert_refused(&g, "tag Annotator is 1048576 bytes long");
    // Just short enough reads back.
    g.set_tag("Annotator", "\"".repeat((1 << 19) - 20));
    let back = PgnGame::parse(&write(&g)).unwrap();
    assert_eq!(back.tag("Annotator"), g.tag("Annotator"));
}
