//! The hand-written corpus in `tests/data`: good games are read and checked move by move;
//! broken games are reported with the right place and reading goes on with the next game.

mod common;

use chess_pgn::{
    ErrorKind, GameError, GameResult, PgnError, PgnGame, ReadError, Reader, SyntaxError, read_games,
};
use chess_rules::{Color, FenError, PositionError, SanError};
use common::{GOOD_FILES, Recorder, Trickle, data};

fn games(name: &str) -> Vec<PgnGame> {
    read_games(&data(name)[..])
        .enumerate()
        .map(|(i, g)| g.unwrap_or_else(|e| panic!("{name} game {}: {e}", i + 1)))
        .collect()
}

fn find<'a>(games: &'a [PgnGame], event: &str) -> &'a PgnGame {
    games
        .iter()
        .find(|g| g.tag("Event") == Some(event))
        .unwrap_or_else(|| panic!("no {event}"))
}

#[test]
fn every_good_file_reads_without_errors() {
    let counts: Vec<usize> = GOOD_FILES.iter().map(|f| games(f).len()).collect();
    assert_eq!(counts, [3, 3, 4, 3, 9, 3]);
}

#[test]
fn comments_of_both_kinds() {
    let games = games("comments.pgn");
    let immortal = &games[0];
    assert_eq!(
        immortal.tag("Annotator"),
        Some("Test \"quoted\" and back\\slash")
    );
    let nodes = &immortal.root.nodes;
    assert_eq!(nodes[0].comments_before, ["The Immortal Game."]);
    // A comment across lines has its line breaks folded into spaces.
    assert_eq!(
        nodes[2].comments_after,
        ["The King's Gambit, spread over two lines."]
    );
    assert_eq!(nodes[7].san, "b5");
    assert_eq!(nodes[7].comments_after, ["a rest-of-line comment"]);
    let last = nodes.last().unwrap();
    assert_eq!(last.san, "Be7#");
    assert_eq!(
        last.comments_after,
        ["Mate with three minor pieces.", "A second comment."]
    );
    // An empty comment is kept.
    let qf6 = nodes.iter().find(|n| n.san == "Qf6+").unwrap();
    assert_eq!(
        (qf6.nags.as_slice(), qf6.comments_after.as_slice()),
        (&[18u8][..], &[String::new()][..])
    );
    assert_eq!(immortal.result, Some(GameResult::WhiteWins));
    assert!(immortal.end_position().is_checkmate());

    let symbols = &games[2];
    let n = &symbols.root.nodes;
    assert_eq!(
        n[0].comments_before,
        ["a comment line before the first move"]
    );
    assert_eq!(n[0].comments_after, ["after d4"]);
    assert_eq!(
        n[1].comments_after,
        ["after d5 { braces inside a rest-of-line comment are plain text }"]
    );
    assert_eq!(n[3].nags, [10]);
    assert_eq!(n[7].comments_after, ["[%clk 0:01:30] [%eval 0.25]"]);
    let nags: Vec<&[u8]> = n.iter().map(|n| n.nags.as_slice()).collect();
    assert_eq!(
        nags,
        [&[][..], &[], &[], &[10], &[16], &[19], &[10], &[], &[]]
    );
    assert_eq!(symbols.result, Some(GameResult::Unknown));
}

#[test]
fn suffix_annotations_become_nags() {
    let games = games("comments.pgn");
    let nags: Vec<(String, Vec<u8>)> = games[0]
        .root
        .nodes
        .iter()
        .filter(|n| !n.nags.is_empty())
        .map(|n| (n.san.clone(), n.nags.clone()))
        .collect();
    let expected = [
        ("g4", vec![1]),
        ("Rg1", vec![3]),
        ("cxb5", vec![2]),
        ("Nd5", vec![1]),
        ("Qxb2", vec![2]),
        ("Bd6", vec![5]),
        ("Bxg1", vec![6]),
        ("Qf6+", vec![18]),
    ];
    let expected: Vec<(String, Vec<u8>)> = expected
        .iter()
        .map(|(s, n)| (s.to_string(), n.clone()))
        .collect();
    assert_eq!(nags, expected);
}

#[test]
fn nested_variations_and_null_moves() {
    let games = games("variations.pgn");
    let g = &games[0];
    let e4 = &g.root.nodes[0];
    assert_eq!(e4.variations.len(), 2);
    let d4 = &e4.variations[0];
    assert_eq!(d4.nodes.len(), 3); // d4 d5 c4
    assert_eq!(
        d4.nodes[1].variations[0].nodes[1].variations[0].nodes.len(),
        2
    ); // Nf3 g6
    assert_eq!(e4.variations[1].nodes[0].comments_after, ["English"]);
    // Five levels deep under 2... Nc6.
    let mut line = &g.root.nodes[3].variations[0];
    let mut depth = 1;
    while let Some(v) = line.nodes.iter().find_map(|n| n.variations.first()) {
        line = v;
        depth += 1;
    }
    assert_eq!(depth, 5);
    assert_eq!(line.nodes[0].san, "Bxf3");
    assert_eq!(g.root.node_count(), 41);

    let nulls = &games[1];
    let qh5 = &nulls.root.nodes[2].variations[0];
    assert_eq!(qh5.nodes[1].san, "--");
    assert!(qh5.nodes[1].mv.is_null());
    assert_eq!(qh5.nodes[1].comments_after, ["threatening mate"]);
    assert_eq!(qh5.nodes[2].san, "Qxf7+");
    let bb5 = &nulls.root.nodes[4].variations[0];
    assert_eq!(bb5.nodes[3].san, "Z0");
    assert!(bb5.nodes[3].mv.is_null());
    assert!(nulls.end_position().is_checkmate());
    assert_eq!(nulls.result, Some(GameResult::BlackWins));
}

#[test]
fn comments_around_variations() {
    let games = games("variations.pgn");
    let g = &games[2];
    let e4 = &g.root.nodes[0];
    assert_eq!(e4.comments_before, ["Start"]);
    assert_eq!(e4.comments_after, ["after e4"]);
    assert_eq!(e4.nags, [1]);
    let d4 = &e4.variations[0].nodes[0];
    assert_eq!(d4.comments_after, ["queen pawn", "between variations"]);
    assert_eq!(d4.variations.len(), 2);
    let e5 = &g.root.nodes[1];
    assert_eq!(e5.comments_before, ["before e5"]);
    let c5 = &e5.variations[0];
    assert_eq!(c5.nodes[0].comments_before, ["variation start"]);
    assert_eq!(c5.nodes[1].comments_after, ["end of variation"]);
    let nf6 = &g.root.nodes[3];
    assert_eq!(nf6.comments_before, ["after the variations of Nf3"]);
    let f4 = &g.root.nodes[2].variations[0];
    assert_eq!(
        f4.nodes[1].variations[0].nodes[0].comments_before,
        ["first"]
    );
    assert_eq!(g.result, Some(GameResult::Draw));
}

#[test]
fn set_up_positions_promotions_en_passant_castling() {
    let games = games("setup.pgn");
    let rook = find(&games, "Black to move from a set-up position");
    assert_eq!(rook.start.turn(), Color::Black);
    assert_eq!(rook.start.fullmoves(), 30);
    assert_eq!(rook.root.nodes[0].variations[0].nodes[0].san, "Rd1#");
    assert_eq!(
        rook.end_position().fen(),
        "3r2k1/5ppp/8/8/8/7P/5PPK/8 w - - 3 33"
    );

    let promo = find(&games, "Promotions");
    assert_eq!(
        promo.end_position().fen(),
        "1Q4Q1/1P6/7k/8/8/8/K6p/5qb1 w - - 4 6"
    );
    let sans: Vec<String> = promo.root.nodes[0]
        .variations
        .iter()
        .map(|v| v.nodes[0].san.clone())
        .collect();
    assert_eq!(sans, ["a8=Q", "c8=N", "c8=R+"]);
    assert_eq!(promo.root.nodes[3].variations[0].nodes[1].san, "Qcc7+");

    let ep = find(&games, "En passant and castling");
    let first = ep.root.nodes[0].mv;
    assert!(first.is_en_passant());
    let castles = ep.root.moves().filter(|m| m.is_castle()).count();
    assert_eq!(castles, 2);
    let eps = ep.root.moves().filter(|m| m.is_en_passant()).count();
    assert_eq!(eps, 3);
    assert_eq!(
        ep.end_position().fen(),
        "5rk1/3r1ppp/2p5/8/8/p7/2P1P1PP/2KR3R w - - 0 20"
    );

    let fischer = find(&games, "Checks and mates");
    assert_eq!(fischer.root.nodes.len(), 82);
    let checks = fischer
        .root
        .nodes
        .iter()
        .filter(|n| n.san.ends_with('+'))
        .count();
    assert_eq!(checks, 13);
    assert!(fischer.end_position().is_checkmate());
}

#[test]
fn long_games() {
    let games = games("long.pgn");
    assert_eq!(games[0].root.nodes.len(), 47);
    assert!(games[0].end_position().is_checkmate());
    assert_eq!(games[1].root.nodes.len(), 300);
    assert_eq!(games[1].end_position().fullmoves(), 151);
    let one_line = &games[2];
    assert_eq!(one_line.root.nodes.len(), 240);
    assert_eq!(one_line.root.nodes[238].comments_after, ["move 120"]);
}

#[test]
fn lenient_input() {
    let games = games("misc.pgn");
    let first = &games[0];
    assert_eq!(first.tag("Event"), Some("A \"quoted\" \\ event"));
    assert_eq!(first.tag("Site"), Some("The \"Big\" Hall"));
    assert_eq!(
        (first.tag("White"), first.tag("Black")),
        (Some("Anna"), Some("Ben"))
    );
    let sans: Vec<&str> = first.root.nodes.iter().map(|n| n.san.as_str()).collect();
    assert_eq!(&sans[8..12], ["0-0", "Be7", "Rf1-e1", "b5"]);
    assert_eq!(&sans[20..22], ["♘bd2", "♗b7"]);
    assert!(first.root.nodes[8].mv.is_castle());
    assert_eq!(sans.len(), 47);

    let pawns = &games[1];
    assert!(pawns.root.nodes[4].mv.is_en_passant());
    assert_eq!(pawns.root.nodes[4].san, "exd6");
    assert_eq!(pawns.root.nodes[8].san, "de5");

    assert!(games[2].end_position().is_checkmate());
    // Games without tags, and a draw written with the ½ character.
    assert!(games[3].tags.is_empty());
    assert_eq!(games[4].result, Some(GameResult::Draw));
    // A game without moves, and one that is only a comment.
    assert_eq!(games[5].root, chess_pgn::Line::default());
    assert_eq!(games[6].root.comments, ["Just a comment"]);
    // Games that end without a result.
    assert_eq!((games[7].root.nodes.len(), games[7].result), (2, None));
    assert_eq!((games[8].root.nodes.len(), games[8].result), (3, None));
}

#[test]
fn bom_and_crlf() {
    let games = games("crlf_bom.pgn");
    assert_eq!(games[0].tag("Event"), Some("CRLF"));
    assert_eq!(
        games[0].root.nodes[0].comments_after,
        ["a comment across lines"]
    );
    assert_eq!(games[0].root.nodes[1].comments_after, ["rest of line"]);
    assert!(games[1].tags.is_empty());
    assert_eq!(games[2].tag("Event"), Some("After a tagless game"));
    // Columns start after the byte-order mark and do not count the carriage returns.
    let bytes = data("crlf_bom.pgn");
    let mut reader = Reader::new(&bytes[..]);
    let events = reader.read_game(&mut Recorder::default()).unwrap().unwrap();
    assert_eq!(events[0], "game 1 1:1");
    assert!(events.contains(&"san e4 9:4".to_owned()));
    assert!(events.contains(&"san e5 10:15".to_owned()));
    assert!(events.contains(&"comment \"a comment\\r\\nacross lines\"".to_owned()));
}

/// What reading one game of `broken.pgn` should give.
#[derive(Debug)]
enum Expect {
    Good(&'static str),
    Syntax(ErrorKind, u64, u64),
    Move(&'static str, &'static str, u64, u64, fn(&SanError) -> bool),
    Other(fn(&GameError) -> bool),
}

#[test]
fn broken_games_are_reported_and_skipped() {
    use Expect::*;
    let illegal: fn(&SanError) -> bool = |e| matches!(e, SanError::Illegal { .. });
    let ambiguous: fn(&SanError) -> bool = |e| matches!(e, SanError::Ambiguous { .. });
    let unparseable: fn(&SanError) -> bool = |e| matches!(e, SanError::Unparseable { .. });
    let expected = [
        Good("Good 1"),
        Move("5.", "Bc4", 9, 47, illegal),
        Good("Good 2"),
        Move("4.", "Nd4", 19, 37, ambiguous),
        Good("Good 3"),
        Syntax(ErrorKind::BadToken("&&".into()), 27, 17),
        Good("Good 4"),
        Syntax(ErrorKind::UnterminatedComment, 35, 7),
        Good("Good 5"),
        Syntax(ErrorKind::UnclosedVariation, 43, 10),
        Good("Good 6"),
        Syntax(ErrorKind::UnmatchedParen, 51, 9),
        Good("Good 7"),
        Syntax(ErrorKind::UnterminatedTag, 57, 1),
        Good("Good 8"),
        Move("1...", "Xe5", 68, 7, unparseable),
        Syntax(ErrorKind::BadNag("$999".into()), 72, 7),
        Other(|e| {
            matches!(e, GameError::NullMoveInMainline { san, at, .. }
                if san == "--" && (at.line, at.column) == (76, 7))
        }),
        Other(|e| {
            matches!(
                e,
                GameError::Fen {
                    source: FenError::Position(PositionError::MissingKing(_)),
                    ..
                }
            )
        }),
        Other(
            |e| matches!(e, GameError::VariationWithoutMove { at, .. } if (at.line, at.column) == (86, 1)),
        ),
        Good("Good 9"),
        Syntax(ErrorKind::UnterminatedComment, 94, 7),
    ];
    let results: Vec<Result<PgnGame, PgnError>> = read_games(&data("broken.pgn")[..]).collect();
    assert_eq!(results.len(), expected.len(), "{results:#?}");
    for (i, (got, want)) in results.iter().zip(&expected).enumerate() {
        let game = i as u64 + 1;
        match (got, want) {
            (Ok(g), Good(event)) => assert_eq!(g.tag("Event"), Some(*event), "game {game}"),
            (Err(PgnError::Read(ReadError::Syntax(e))), Syntax(kind, line, column)) => {
                let SyntaxError {
                    kind: k,
                    at,
                    game: n,
                } = e;
                assert_eq!(
                    (k, at.line, at.column, *n),
                    (kind, *line, *column, game),
                    "{e}"
                );
            }
            (
                Err(PgnError::Game(GameError::Move {
                    game: n,
                    number,
                    san,
                    at,
                    source,
                })),
                Move(num, text, line, column, reason),
            ) => {
                assert_eq!(*n, game);
                assert_eq!((number.to_string().as_str(), san.as_str()), (*num, *text));
                assert_eq!((at.line, at.column), (*line, *column));
                assert!(reason(source), "{source}");
            }
            (Err(PgnError::Game(e)), Other(check)) => {
                assert_eq!(e.game(), game);
                assert!(check(e), "{e}");
            }
            _ => panic!("game {game}: expected {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn error_messages_name_game_move_and_reason() {
    let messages: Vec<String> = read_games(&data("broken.pgn")[..])
        .filter_map(Result::err)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        messages[0],
        "game 2, move 5. Bc4 (line 9, column 47): illegal move \"Bc4\": no white bishop can move to c4"
    );
    assert_eq!(
        messages[1],
        "game 4, move 4. Nd4 (line 19, column 37): ambiguous move \"Nd4\": could be Nfd4, Nbd4"
    );
    assert_eq!(
        messages[2],
        "game 6, line 27, column 17: unexpected token \"&&\""
    );
    assert_eq!(
        messages[7],
        "game 16, move 1... Xe5 (line 68, column 7): cannot read \"Xe5\" as a move: unknown piece letter"
    );
    assert_eq!(
        messages[9],
        "game 18, move 1... -- (line 76, column 7): a null move is allowed only in variations"
    );
}

#[test]
fn trickled_input_reads_the_same() {
    let mut files: Vec<&str> = GOOD_FILES.to_vec();
    files.push("broken.pgn");
    for name in files {
        let whole: Vec<String> = Reader::new(&data(name)[..])
            .games(&mut Recorder::default())
            .map(|g| format!("{g:?}"))
            .collect();
        let trickled: Vec<String> = Reader::new(Trickle::new(data(name)))
            .games(&mut Recorder::default())
            .map(|g| format!("{g:?}"))
            .collect();
        assert_eq!(whole, trickled, "{name}");
    }
}

#[test]
fn the_whole_corpus_in_one_stream() {
    let mut all = Vec::new();
    for name in GOOD_FILES {
        let mut bytes = data(name);
        // Only the first file may start with a byte-order mark.
        if bytes.starts_with(b"\xef\xbb\xbf") {
            bytes.drain(..3);
        }
        all.extend_from_slice(&bytes);
        all.extend_from_slice(b"\n\n");
    }
    let total: usize = GOOD_FILES.iter().map(|f| games(f).len()).sum();
    let read: Vec<PgnGame> = read_games(&all[..]).map(Result::unwrap).collect();
    assert_eq!(read.len(), total);
}
