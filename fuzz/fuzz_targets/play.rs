//! Bytes as move choices: a game from the start position via `chess_rules::Game`.
//!
//! Byte b picks legal move b % n; 0xFF plays a null move when allowed, 0xFE takes back the
//! last move. After each move: incremental Zobrist key == key of the position re-read from
//! its full FEN, the invariants of `check_position_core` (moves against the naive
//! generator), the played move's notations round-trip, repetition counts agree with counting
//! equal EPDs, and outcomes agree with the position.
#![no_main]

use chess_fuzz::{FULL_FEN, check_notation, check_position_core, check_successor};
use chess_rules::{DrawReason, Game, GameError, Outcome, Position, WinReason};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut game = Game::new(Position::startpos());
    // FIDE repetition identity: placement, turn, castling rights, legal en passant.
    let mut epds = vec![game.position().epd()];
    let mut sans: Vec<String> = Vec::new();
    for &b in data {
        let pos = game.position().clone();
        if let Some(outcome) = game.outcome() {
            check_outcome(&game, outcome, &epds);
            let any = pos.legal_moves().iter().next().copied();
            if let Some(m) = any {
                assert!(matches!(game.play(m), Err(GameError::Over(o)) if o == outcome));
            }
            break;
        }
        if b == 0xFE {
            if let Some(m) = game.undo() {
                epds.pop();
                sans.pop();
                let back = game.position();
                assert!(
                    back.is_legal(m),
                    "undone move {m:?} not legal in {}",
                    back.fen()
                );
                assert_eq!(
                    back.play(m).as_ref(),
                    Ok(&pos),
                    "undo did not restore the position"
                );
            }
            continue;
        }
        let m = if b == 0xFF && !pos.is_check() {
            chess_rules::Move::NULL
        } else {
            let list = pos.legal_moves();
            list.as_slice()[b as usize % list.len()]
        };
        check_notation(&pos, m);
        let san = pos.san(m);
        let mut via_san = game.clone();
        assert_eq!(
            via_san.play_san(&san).as_ref(),
            Ok(&m),
            "Game::play_san({san:?}) in {}",
            pos.fen()
        );
        game.play(m)
            .unwrap_or_else(|e| panic!("Game::play({m:?}) in {}: {e}", pos.fen()));
        let next = game.position();
        assert_eq!(via_san.position(), next);
        let full = next.fen_with(FULL_FEN);
        let fresh =
            Position::from_fen(&full).unwrap_or_else(|e| panic!("{full:?} does not parse: {e}"));
        assert_eq!(
            fresh.zobrist(),
            next.zobrist(),
            "incremental zobrist after {san} ({full})"
        );
        assert_eq!(
            &fresh, next,
            "position after {san} differs from its FEN {full}"
        );
        check_successor(&pos, m, next);
        check_position_core(next);
        epds.push(next.epd());
        let reps = epds.iter().filter(|e| **e == epds[epds.len() - 1]).count();
        assert_eq!(
            game.repetition_count(),
            reps,
            "repetition count after {san} ({full})"
        );
        assert_eq!(game.ply(), epds.len() - 1);
        sans.push(san);
    }
    if let Some(outcome) = game.outcome() {
        check_outcome(&game, outcome, &epds);
    }
    assert_eq!(game.san_moves(), sans, "Game::san_moves");
});

fn check_outcome(game: &Game, outcome: Outcome, epds: &[String]) {
    let pos = game.position();
    match outcome {
        Outcome::Decisive {
            winner,
            reason: WinReason::Checkmate,
        } => {
            assert!(pos.is_checkmate());
            assert_eq!(winner, !pos.turn());
        }
        Outcome::Decisive { reason, .. } => panic!("automatic decisive outcome {reason:?}"),
        Outcome::Draw {
            reason: DrawReason::Stalemate,
        } => assert!(pos.is_stalemate()),
        Outcome::Draw {
            reason: DrawReason::DeadPosition,
        } => {
            assert!(pos.has_legal_moves());
            assert!(pos.is_insufficient_material());
        }
        Outcome::Draw {
            reason: DrawReason::FivefoldRepetition,
        } => {
            let last = &epds[epds.len() - 1];
            assert!(epds.iter().filter(|e| *e == last).count() >= 5);
        }
        Outcome::Draw {
            reason: DrawReason::SeventyFiveMoves,
        } => {
            assert!(pos.halfmoves() >= 150);
            assert!(!pos.is_checkmate());
        }
        Outcome::Draw { reason } => panic!("automatic draw by {reason:?}"),
    }
}
