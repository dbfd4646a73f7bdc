//! Reference data produced by an independent implementation (python-chess, see
//! `tools/gen_rules_corpus.py`): legal moves with their SAN, FEN normalisation and repetition
//! counts. Our results must match line for line.

use std::collections::BTreeMap;

use chess_rules::{Game, Position};

#[test]
fn legal_moves_and_san_match_reference() {
    let text = include_str!("data/legal_moves.txt");
    let mut positions = 0;
    let mut moves = 0;
    for (lineno, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let mut fields = line.split('\t');
        let fen = fields.next().unwrap();
        let pos =
            Position::from_fen(fen).unwrap_or_else(|e| panic!("line {}: {fen}: {e}", lineno + 1));
        assert_eq!(
            pos.fen(),
            fen,
            "line {}: FEN does not round-trip",
            lineno + 1
        );
        let expected: BTreeMap<String, String> = fields
            .filter(|f| *f != "-")
            .map(|f| {
                let (uci, san) = f.split_once(' ').unwrap();
                (uci.to_owned(), san.to_owned())
            })
            .collect();
        let ours: BTreeMap<String, String> = pos
            .legal_moves()
            .iter()
            .map(|&m| (m.to_string(), pos.san(m)))
            .collect();
        assert_eq!(ours, expected, "line {}: {fen}", lineno + 1);
        for (uci, san) in &expected {
            let m = pos.parse_san(san).unwrap();
            assert_eq!(&m.to_string(), uci, "{fen} {san}");
        }
        positions += 1;
        moves += expected.len();
    }
    assert!(positions >= 3000, "only {positions} positions");
    assert!(moves > 50_000, "only {moves} moves");
}

#[test]
fn fen_normalisation_matches_reference() {
    let text = include_str!("data/fen_roundtrip.txt");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (input, normalised) = line.split_once('\t').unwrap();
        let pos = Position::from_fen(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(pos.fen(), normalised, "from {input}");
        n += 1;
    }
    assert!(n >= 1000);
}

#[test]
fn repetition_counts_match_reference() {
    let text = include_str!("data/repetition.txt");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split('\t');
        let (fen, moves, count) = (
            fields.next().unwrap(),
            fields.next().unwrap(),
            fields.next().unwrap(),
        );
        let mut game = Game::from_fen(fen).unwrap();
        for uci in moves.split_whitespace() {
            let m = game
                .position()
                .parse_uci(uci)
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            // Fivefold ends the game; the reference may count further, so play unchecked.
            if game.play(m).is_err() {
                panic!("{line}: game refused {uci}");
            }
        }
        assert_eq!(
            game.repetition_count(),
            count.parse::<usize>().unwrap(),
            "{line}"
        );
        n += 1;
    }
    assert!(n >= 300);
}
