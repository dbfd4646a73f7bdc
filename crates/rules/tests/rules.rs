//! The FIDE rules that decide games, each with the positions that decide it.

use chess_rules::{
    Color, DrawReason, Game, GameError, Move, Outcome, Position, SanError, Square, WinReason,
};

fn game(fen: &str, moves: &str) -> Game {
    let mut g = Game::from_fen(fen).unwrap();
    for m in moves.split_whitespace() {
        g.play_san(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    g
}

fn has_castle(pos: &Position) -> bool {
    pos.legal_moves().iter().any(|m| m.is_castle())
}

#[test]
fn checkmate_ends_the_game() {
    let g = game(chess_rules::STARTPOS_FEN, "f3 e5 g4 Qh4#");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Decisive {
            winner: Color::Black,
            reason: WinReason::Checkmate
        })
    );
    let mut g = g;
    assert!(matches!(
        g.play_san("a3"),
        Err(GameError::San(_)) | Err(GameError::Over(_))
    ));
    assert_eq!(g.ply(), 4);
}

#[test]
fn stalemate() {
    let g = game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw {
            reason: DrawReason::Stalemate
        })
    );
    let g = game("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "Qf7");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw {
            reason: DrawReason::Stalemate
        })
    );
}

#[test]
fn dead_positions_by_material() {
    for fen in [
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1",     // K v K
        "8/8/4k3/8/8/3K4/8/5B2 w - - 0 1",   // K+B v K
        "8/8/4k3/8/8/3K4/8/5n2 w - - 0 1",   // K+N v K
        "8/8/4k3/3b4/8/3K4/8/5B2 w - - 0 1", // K+B v K+B, both bishops on light squares
        "8/8/4k3/8/8/3K4/4B3/5B2 b - - 0 1", // more bishops, one colour
    ] {
        let g = game(fen, "");
        assert_eq!(
            g.outcome(),
            Some(Outcome::Draw {
                reason: DrawReason::DeadPosition
            }),
            "{fen}"
        );
    }
    for fen in [
        "8/8/4k3/2b5/8/3K4/8/5B2 w - - 0 1", // bishops on opposite colours: mate possible
        "8/8/4k3/8/8/3K4/8/4NN2 w - - 0 1",  // two knights: mate possible with help
        "8/8/4k3/8/8/3K4/8/4NB2 w - - 0 1",
        "8/8/4k3/8/8/3K4/4P3/8 w - - 0 1",
    ] {
        assert_eq!(game(fen, "").outcome(), None, "{fen}");
    }
    // Capturing the last pawn makes the position dead at once.
    let g = game("8/8/4k3/8/4p3/3K4/8/8 w - - 0 1", "Kxe4");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw {
            reason: DrawReason::DeadPosition
        })
    );
}

#[test]
fn threefold_is_claimed_fivefold_is_automatic() {
    let shuffle = "Nf3 Nf6 Ng1 Ng8";
    let mut g = game(chess_rules::STARTPOS_FEN, shuffle);
    assert_eq!(g.repetition_count(), 2);
    assert_eq!(g.claimable_draw(), None);
    // Claim by declaring the move that repeats the position a third time (FIDE 9.2.1.1).
    g.play_san("Nf3").unwrap();
    g.play_san("Nf6").unwrap();
    g.play_san("Ng1").unwrap();
    let ng8 = g.position().parse_san("Ng8").unwrap();
    assert_eq!(
        g.claimable_draw_with_move(ng8),
        Some(DrawReason::ThreefoldRepetition)
    );
    g.play(ng8).unwrap();
    assert_eq!(g.repetition_count(), 3);
    assert_eq!(g.claimable_draw(), Some(DrawReason::ThreefoldRepetition));
    assert_eq!(g.outcome(), None);
    for m in shuffle.split_whitespace().chain(shuffle.split_whitespace()) {
        g.play_san(m).unwrap();
    }
    assert_eq!(g.repetition_count(), 5);
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw {
            reason: DrawReason::FivefoldRepetition
        })
    );
    assert!(matches!(g.play_san("e4"), Err(GameError::Over(_))));
}

#[test]
fn castling_rights_change_the_position_for_repetition() {
    // The king steps out and back: same placement, but castling rights are gone, so the
    // position after the return differs from the start.
    let g = game("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kf1 Kf8 Ke1 Ke8");
    assert_eq!(g.repetition_count(), 1);
    let g = game(
        "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        "Kf1 Kf8 Ke1 Ke8 Kf1 Kf8 Ke1 Ke8",
    );
    assert_eq!(g.repetition_count(), 2);
}

#[test]
fn en_passant_counts_only_when_the_capture_is_legal() {
    // 1. e4 from a position where no black pawn can capture on e3: the position after e4
    // equals the same placement reached later without a double push.
    let fen = "4k3/8/8/8/8/8/4P3/4K1N1 w - - 0 1";
    let g = game(fen, "e4 Kd7 Nf3 Ke8 Ng1 Kd7 Nf3 Ke8 Ng1");
    // After e4: black to move, placement P on e4. Now compare the later black-to-move
    // positions with the knight back on g1 and king on e8: that is the same as after e4.
    assert_eq!(g.repetition_count(), 3);

    // Now a black pawn on d4 could capture e3 en passant right after e2-e4: that first
    // occurrence is a different position.
    let fen = "4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1";
    let g = game(fen, "e4 Kd7 Nf3 Ke8 Ng1 Kd7 Nf3 Ke8 Ng1");
    assert_eq!(g.repetition_count(), 2);

    // The capturing pawn is pinned against its king along the rank: no legal capture, so
    // the en-passant square does not count.
    let fen = "8/8/8/8/k2p3R/8/4P3/4K1N1 w - - 0 1";
    let g = game(fen, "e4 Kb5 Nf3 Ka4 Ng1 Kb5 Nf3 Ka4 Ng1");
    assert_eq!(g.repetition_count(), 3);
}

#[test]
fn en_passant_only_on_the_next_move() {
    let g = game("4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1", "e4");
    assert!(g.position().parse_san("dxe3").is_ok());
    assert!(g.position().parse_san("dxe3 e.p.").unwrap().is_en_passant());
    let g = game("4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1", "e4 Kd7 Nf3");
    assert!(matches!(
        g.position().parse_san("dxe3"),
        Err(SanError::Illegal { .. })
    ));
}

#[test]
fn fifty_and_seventy_five_moves() {
    let g = game("8/8/3k4/8/8/3KR3/8/8 w - - 99 80", "Rf3");
    assert_eq!(g.position().halfmoves(), 100);
    assert_eq!(g.claimable_draw(), Some(DrawReason::FiftyMoves));
    assert_eq!(g.outcome(), None);
    let g = game("8/8/3k4/8/8/3KR3/8/8 w - - 149 80", "Rf3");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw {
            reason: DrawReason::SeventyFiveMoves
        })
    );
    // A capture or pawn move resets the count.
    let g = game("8/8/3k4/8/8/3KR3/4p3/8 w - - 99 80", "Rxe2");
    assert_eq!(g.position().halfmoves(), 0);
    assert_eq!(g.claimable_draw(), None);
    // Checkmate on the move that completes seventy-five moves takes precedence (FIDE 9.6.2).
    let g = game("7k/8/6K1/8/8/8/8/R7 w - - 149 100", "Ra8#");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::Checkmate
        })
    );
}

#[test]
fn castling_conditions() {
    let base = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let pos = Position::from_fen(base).unwrap();
    assert_eq!(
        pos.legal_moves().iter().filter(|m| m.is_castle()).count(),
        2
    );
    // Out of check: no.
    let pos = Position::from_fen("r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1").unwrap();
    assert!(!has_castle(&pos));
    // Through an attacked square (f1): no king-side; queen-side still fine.
    let pos = Position::from_fen("r3k2r/8/8/8/5r2/8/8/R3K2R w KQkq - 0 1").unwrap();
    let castles: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|m| m.is_castle())
        .map(|m| m.to_string())
        .collect();
    assert_eq!(castles, ["e1c1"]);
    // Into check (g1 attacked): no.
    let pos = Position::from_fen("r3k2r/8/8/8/6r1/8/8/R3K2R w KQ - 0 1").unwrap();
    assert!(pos.parse_san("O-O").is_err());
    // b1 attacked does not stop queen-side castling: the king never crosses b1.
    let pos = Position::from_fen("r3k2r/8/8/8/1r6/8/8/R3K2R w KQ - 0 1").unwrap();
    assert!(pos.parse_san("O-O-O").is_ok());
    // A piece between (b1 occupied) stops queen-side castling.
    let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/RN2K2R w KQ - 0 1").unwrap();
    assert!(pos.parse_san("0-0-0").is_err());
    assert!(pos.parse_san("0-0").is_ok());
    // The rook moving away and back loses the right for good.
    let g = game(base, "Rh2 Ke7 Rh1 Ke8");
    assert!(g.position().parse_san("O-O").is_err());
    assert!(g.position().parse_san("O-O-O").is_ok());
    // A rook captured on its square loses the right too.
    let g = game("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "Rxa1+");
    assert!(
        !g.position()
            .castling_rights()
            .has(Color::White, chess_rules::CastlingSide::QueenSide)
    );
}

#[test]
fn a_promoted_rook_never_castles() {
    // The original h1 rook is lost, a pawn promotes to a rook that walks to h1: the king
    // and that rook both stand on their castling squares, yet castling is illegal.
    let g = game(
        "k7/6P1/8/8/8/8/8/4K2R w K - 0 1",
        "Rh3 Kb7 g8=R Kc7 Rg1 Kd7 Rgh1 Kd6",
    );
    let pos = g.position();
    assert_eq!(pos.piece_at(Square::E1).map(|p| p.fen_char()), Some('K'));
    assert_eq!(pos.piece_at(Square::H1).map(|p| p.fen_char()), Some('R'));
    assert!(!has_castle(pos), "{pos:?}");
    assert!(pos.parse_san("O-O").is_err());
    assert_eq!(pos.castling_rights().to_string(), "-");
    // And a FEN cannot claim the right for a rook that is not on its original square.
    assert!(Position::from_fen("4k3/8/8/8/8/8/8/4K1R1 w K - 0 1").is_err());
}

#[test]
fn promotion_only_to_four_pieces_and_never_optional() {
    let pos = Position::from_fen("7k/P7/8/8/8/8/8/K7 w - - 0 1").unwrap();
    let promos: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|m| m.from() == Square::A7)
        .map(|m| m.to_string())
        .collect();
    assert_eq!(promos.len(), 4);
    for p in ["a7a8q", "a7a8r", "a7a8b", "a7a8n"] {
        assert!(promos.contains(&p.to_owned()));
    }
    assert!(pos.parse_uci("a7a8").is_err());
    assert!(pos.parse_uci("a7a8k").is_err());
    assert!(pos.parse_san("a8").is_err());
    assert!(pos.parse_san("a8=K").is_err());
    for text in ["a8=Q", "a8Q", "a8=Q+", "a8(Q)", "a8/Q", "a7a8q"] {
        assert_eq!(pos.parse_san(text).unwrap().to_string(), "a7a8q", "{text}");
    }
}

#[test]
fn flag_fall_needs_mating_material() {
    let pos = Position::from_fen("7k/8/8/8/8/8/8/K6N w - - 0 1").unwrap();
    assert!(!pos.can_possibly_mate(Color::White));
    assert!(!pos.can_possibly_mate(Color::Black));
    let pos = Position::from_fen("7k/7p/8/8/8/8/8/K6N w - - 0 1").unwrap();
    assert!(
        pos.can_possibly_mate(Color::White),
        "the pawn can block its own king"
    );
    let pos = Position::from_fen("7k/6b1/8/8/8/8/8/K5B1 w - - 0 1").unwrap();
    assert!(
        !pos.can_possibly_mate(Color::White),
        "same-coloured bishops cannot mate"
    );
    let pos = Position::from_fen("7k/7b/8/8/8/8/8/K5B1 w - - 0 1").unwrap();
    assert!(
        pos.can_possibly_mate(Color::White),
        "opposite-coloured bishops can"
    );
}

#[test]
fn null_moves() {
    let pos = Position::startpos();
    let after = pos.play(Move::NULL).unwrap();
    assert_eq!(after.turn(), Color::Black);
    assert_eq!(pos.san(Move::NULL), "--");
    assert_eq!(pos.parse_san("Z0").unwrap(), Move::NULL);
    let check = Position::from_fen("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1").unwrap();
    assert!(check.play(Move::NULL).is_err());
    assert!(check.parse_san("--").is_err());
}

#[test]
fn king_steps_are_not_castling_in_san() {
    let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
    assert!(matches!(
        pos.parse_san("Kg1"),
        Err(SanError::Illegal { .. })
    ));
    assert!(pos.parse_san("O-O").unwrap().is_castle());
    // The long king-move forms name the castling move.
    assert!(pos.parse_san("Ke1g1").unwrap().is_castle());
    assert!(pos.parse_move("e1g1").unwrap().is_castle());
}

#[test]
fn uci_shaped_errors_explain_the_uci_reading() {
    let pos = Position::startpos();
    match pos.parse_move("e1g1") {
        Err(SanError::Illegal { reason, .. }) => assert!(reason.contains("g1"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match pos.parse_move("e2e5") {
        Err(SanError::Illegal { reason, .. }) => {
            assert_eq!(reason, "the pawn on e2 cannot move to e5")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn square_colours_agree() {
    use chess_rules::Bitboard;
    for sq in Square::ALL {
        assert_eq!(Bitboard::LIGHT_SQUARES.contains(sq), sq.is_light(), "{sq}");
        assert_eq!(Bitboard::DARK_SQUARES.contains(sq), !sq.is_light(), "{sq}");
    }
    assert!(!Square::A1.is_light() && Square::H1.is_light());
}
