//! A fixed position chosen by the first byte, the rest as move text for every parser.
#![no_main]

use std::sync::OnceLock;

use chess_fuzz::check_parsed;
use chess_rules::{Position, SanStrictness};
use libfuzzer_sys::fuzz_target;

/// Varied positions: castling both ways, en passant (legal, pinned, discovered check),
/// promotions with and without capture, heavy disambiguation, check, mate, stalemate.
pub const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "1n2k3/P1P5/8/8/8/8/5p1p/3K2N1 w - - 0 1",
    "1n2k3/P1P5/8/8/8/8/5p1p/3K2N1 b - - 0 1",
    "4k3/8/8/8/1Q3Q2/8/1Q3Q2/R3K2R w KQ - 0 1",
    "7k/8/8/8/8/N1N5/8/N1N1K3 w - - 0 1",
    "R7/8/8/7k/8/8/8/R3K3 w Q - 0 1",
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "4k3/8/8/2Pp4/8/8/8/4K3 w - d6 0 1",
    "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1",
    "2r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1",
    "8/8/8/3k4/8/2B5/1B6/K7 w - - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "4k3/8/8/8/8/8/R6R/4K3 w - - 0 1",
    "4k3/8/8/8/R7/8/8/R3K3 w Q - 0 1",
    "3k4/8/8/8/8/8/8/Q2K3Q w - - 0 1",
    "k7/4P3/8/8/8/8/8/4K3 w - - 0 1",
    "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R b KQkq - 0 3",
    "1k6/8/8/8/4Q2Q/8/8/K3r2Q w - - 0 1",
    "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
];

fn positions() -> &'static [Position] {
    static P: OnceLock<Vec<Position>> = OnceLock::new();
    P.get_or_init(|| {
        FENS.iter()
            .map(|f| Position::from_fen(f).expect(f))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let positions = positions();
    let pos = &positions[first as usize % positions.len()];
    let text = String::from_utf8_lossy(rest);
    let text = text.as_ref();

    let lenient = pos.parse_san(text);
    if let Ok(m) = lenient {
        check_parsed(pos, text, m, "parse_san");
        check_meaning(text, m);
    }
    let strict = pos.parse_san_with(text, SanStrictness::Strict);
    if let Ok(m) = strict {
        check_parsed(pos, text, m, "parse_san strict");
        // Strict acceptance implies lenient acceptance of the same move.
        assert_eq!(
            lenient.as_ref(),
            Ok(&m),
            "strict accepts {text:?} but lenient does not"
        );
        // Strict text is the canonical SAN, up to piece-letter style and annotation symbols.
        let canonical = pos.san(m);
        // Allowed around the canonical SAN (see SanStrictness::Strict): surrounding white
        // space, annotation symbols on either side of the check mark, and an `e.p.` note.
        let trimmed = text.trim();
        let unmarked = trimmed.trim_end_matches(['!', '?', '+', '#']);
        let marks: String = trimmed[unmarked.len()..]
            .chars()
            .filter(|c| matches!(c, '+' | '#'))
            .collect();
        let mut unmarked = unmarked.trim_end();
        for ep in ["e.p.", "ep", "e.p"] {
            if let Some(rest) = unmarked.strip_suffix(ep) {
                unmarked = rest.trim_end();
                break;
            }
        }
        let core = format!("{unmarked}{marks}");
        let english: String = core
            .chars()
            .map(|c| {
                chess_rules::Role::from_figurine(c)
                    .or_else(|| chess_rules::Role::from_chinese(c))
                    .map_or(c, |r| r.upper_char())
            })
            .collect();
        assert_eq!(
            english, canonical,
            "strict accepted {text:?} for {canonical:?}"
        );
    }
    if let Ok(m) = pos.parse_uci(text) {
        check_parsed(pos, text, m, "parse_uci");
        assert_eq!(
            pos.parse_move(text).as_ref(),
            Ok(&m),
            "parse_uci({text:?}) ok but parse_move differs"
        );
        if !m.is_null() {
            // The text names the move's squares (or king-takes-rook for castling).
            assert_eq!(
                &text[0..2],
                m.from().to_string(),
                "parse_uci({text:?}) = {m:?}"
            );
            assert!(
                m.is_castle() || text[2..4] == m.to().to_string(),
                "parse_uci({text:?}) = {m:?}"
            );
        }
    }
    if let Ok(m) = pos.parse_coordinate(text) {
        check_parsed(pos, text, m, "parse_coordinate");
        assert!(!m.is_null());
    }
    if let Ok(m) = pos.parse_move(text) {
        check_parsed(pos, text, m, "parse_move");
    }
});

/// What SAN text says must match the move it was read as: the destination square, the piece
/// letter (none for a pawn), the promotion piece, the castling side.
fn check_meaning(text: &str, m: chess_rules::Move) {
    use chess_rules::{Role, Square};
    if m.is_null() {
        return;
    }
    let english: String = text
        .trim()
        .chars()
        .map(|c| {
            Role::from_figurine(c)
                .or_else(|| Role::from_chinese(c))
                .map_or(c, |r| r.upper_char())
        })
        .collect();
    if let Some(side) = m.castling_side() {
        let long = english.starts_with("O-O-O")
            || english.starts_with("0-0-0")
            || english.starts_with("OOO")
            || english.starts_with("000");
        let long_move = side == chess_rules::CastlingSide::QueenSide;
        // Coordinate/king-move forms (`Ke1g1`, `e1g1`) name the king's destination.
        if english.starts_with(['O', '0']) {
            assert_eq!(long, long_move, "{text:?} read as {m:?}");
            return;
        }
    }
    let to: Square = m.to();
    assert!(
        english.contains(&to.to_string()),
        "{text:?} read as {m:?}: no {to} in the text"
    );
    let first = english.chars().next().unwrap();
    match Role::from_char(first).filter(|_| first.is_ascii_uppercase()) {
        Some(role) => assert_eq!(role, m.role(), "{text:?} read as {m:?}"),
        None => assert_eq!(m.role(), Role::Pawn, "{text:?} read as {m:?}"),
    }
    if let Some(p) = m.promotion() {
        assert!(
            english.contains(p.upper_char()) || english.contains(p.char()),
            "{text:?} read as {m:?}: promotion piece not named"
        );
    }
}
