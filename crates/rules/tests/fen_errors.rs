//! One test per FEN fault: each gets its own typed error and a message that explains it.

use chess_rules::{
    CastlingRights, Color, FenError, Position, PositionError, Rank, STARTPOS_FEN, Setup, Square,
};

fn err(fen: &str) -> FenError {
    Position::from_fen(fen).expect_err(fen)
}

#[test]
fn wrong_field_count() {
    assert_eq!(
        err("8/8/8/8/8/8/8/8 w"),
        FenError::WrongFieldCount { found: 2 }
    );
    assert_eq!(
        err("8/8/8/8/8/8/8/8 w - - 0 1 extra"),
        FenError::WrongFieldCount { found: 7 }
    );
    assert_eq!(err("   "), FenError::Empty);
    assert!(err("8/8/8/8/8/8/8/8 w").to_string().contains("found 2"));
}

#[test]
fn bad_piece_letter() {
    let e = err("rnbqkbnr/pppppppp/8/8/4X3/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    assert_eq!(e, FenError::BadPiece { ch: 'X', rank: '4' });
    assert!(e.to_string().contains("'X'"), "{e}");
    assert_eq!(
        err("rnbqkbnr/pppppppp/8/8/4♘3/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        FenError::BadPiece {
            ch: '♘', rank: '4'
        }
    );
    // 0 and 9 are not run lengths.
    assert_eq!(
        err("8/8/8/8/8/8/8/K0k6 w - - 0 1"),
        FenError::BadPiece { ch: '0', rank: '1' }
    );
}

#[test]
fn rank_not_eight_files() {
    assert_eq!(
        err("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        FenError::BadRankLength {
            rank: '7',
            files: 7,
            text: "ppppppp".into()
        }
    );
    assert_eq!(
        err("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1"),
        FenError::BadRankLength {
            rank: '1',
            files: 9,
            text: "RNBQKBNRR".into()
        }
    );
    assert_eq!(
        err("8/8/8/8/8/8/8/45 w - - 0 1").to_string(),
        "rank 1 describes 9 files, expected 8 (text \"45\")"
    );
    assert_eq!(
        err("8/8/8/8/8/8/8 w - - 0 1"),
        FenError::WrongRankCount { found: 7 }
    );
}

#[test]
fn missing_or_extra_kings() {
    assert_eq!(
        err("8/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::MissingKing(Color::Black).into()
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/8 w - - 0 1"),
        PositionError::MissingKing(Color::White).into()
    );
    let e = err("4k3/8/8/8/8/8/8/K3K3 w - - 0 1");
    assert_eq!(
        e,
        PositionError::TooManyKings {
            color: Color::White,
            count: 2
        }
        .into()
    );
    assert_eq!(e.to_string(), "2 white kings (exactly one is required)");
}

#[test]
fn pawns_on_back_ranks() {
    assert_eq!(
        err("4k2P/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::PawnOnBackRank(Square::H8).into()
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/p3K3 w - - 0 1"),
        PositionError::PawnOnBackRank(Square::A1).into()
    );
}

#[test]
fn side_not_to_move_in_check() {
    // White to move, but the black king on e8 stands in check from the rook on e1's file.
    let e = err("4k3/8/8/8/8/8/8/3KR3 w - - 0 1");
    assert_eq!(e, PositionError::OppositeCheck(Color::Black).into());
    assert_eq!(e.to_string(), "the side not to move (black) is in check");
}

#[test]
fn too_many_checkers() {
    // Three pieces check the white king at once: no legal move produces that.
    assert_eq!(
        err("4r2k/8/8/8/8/3n4/8/r3K3 w - - 0 1"),
        PositionError::ImpossibleCheck {
            color: Color::White,
            count: 3
        }
        .into()
    );
}

#[test]
fn castling_rights_must_match_the_board() {
    let e = err("r3k2r/8/8/8/8/8/8/R3K1R1 w KQkq - 0 1");
    assert_eq!(
        e,
        PositionError::BadCastlingRights {
            right: 'K',
            needs: "a white king on e1 and a white rook on h1".into()
        }
        .into()
    );
    assert!(matches!(
        err("r3k2r/8/8/8/8/8/8/R2K3R w K - 0 1"),
        FenError::Position(PositionError::BadCastlingRights { right: 'K', .. })
    ));
    assert!(matches!(
        err("1r2k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
        FenError::Position(PositionError::BadCastlingRights { right: 'q', .. })
    ));
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w KK - 0 1"),
        FenError::BadCastling("KK".into())
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w HAha - 0 1"),
        FenError::BadCastling("HAha".into())
    );
}

#[test]
fn impossible_en_passant_square() {
    // Wrong rank for the side to move.
    assert!(matches!(
        err("4k3/8/8/8/3pP3/8/8/4K3 w - e3 0 1"),
        FenError::Position(PositionError::BadEnPassant {
            square: Square::E3,
            ..
        })
    ));
    // No pawn that could just have moved two squares.
    let e = err("4k3/8/8/8/8/8/8/4K3 b - e3 0 1");
    assert!(matches!(
        e,
        FenError::Position(PositionError::BadEnPassant {
            square: Square::E3,
            ..
        })
    ));
    assert!(e.to_string().contains("no pawn"), "{e}");
    // The crossed square is occupied.
    assert!(matches!(
        err("4k3/8/8/8/4P3/4N3/8/4K3 b - e3 0 1"),
        FenError::Position(PositionError::BadEnPassant { .. })
    ));
    // Not a square on rank 3 or 6 at all.
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w - e4 0 1"),
        FenError::BadEnPassantSyntax("e4".into())
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w - z9 0 1"),
        FenError::BadEnPassantSyntax("z9".into())
    );
}

#[test]
fn counters_out_of_range() {
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 70000 80"),
        FenError::Position(PositionError::CounterOutOfRange {
            field: "halfmove clock",
            value: 70000,
            ..
        })
    ));
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 0 0"),
        FenError::Position(PositionError::CounterOutOfRange {
            field: "fullmove number",
            value: 0,
            ..
        })
    ));
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 0 99999999999999"),
        FenError::CounterOutOfRange {
            field: "fullmove number",
            ..
        }
    ));
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w - - -1 1"),
        FenError::BadCounter {
            field: "halfmove clock",
            text: "-1".into()
        }
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 0 x"),
        FenError::BadCounter {
            field: "fullmove number",
            text: "x".into()
        }
    );
}

#[test]
fn long_clocks_from_other_tools_are_read() {
    let p = Position::from_fen("4k3/8/8/8/8/8/8/4KR2 w - - 320 161").unwrap();
    assert_eq!(p.halfmoves(), 320);
    assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4KR2 w - - 320 161");
}

#[test]
fn counters_saturate_so_every_fen_reads_back() {
    let mut p = Position::from_fen("4k3/8/8/8/8/8/8/4KR2 b - - 65535 65535").unwrap();
    let m = p.parse_san("Kd7").unwrap();
    p.play_unchecked(m);
    assert_eq!((p.halfmoves(), p.fullmoves()), (65_535, 65_535));
    assert!(Position::from_fen(&p.fen()).is_ok());
}

#[test]
fn bad_side_to_move() {
    assert_eq!(
        err("4k3/8/8/8/8/8/8/4K3 W - - 0 1"),
        FenError::BadTurn("W".into())
    );
}

#[test]
fn missing_counters_default() {
    let p = Position::from_fen("4k3/8/8/8/8/8/8/4K3 b - -").unwrap();
    assert_eq!((p.halfmoves(), p.fullmoves()), (0, 1));
    assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
    let p = Position::from_fen("4k3/8/8/8/8/8/8/4K3 b - - 7").unwrap();
    assert_eq!((p.halfmoves(), p.fullmoves()), (7, 1));
}

#[test]
fn round_trip_and_en_passant_writing() {
    assert_eq!(
        Position::from_fen(STARTPOS_FEN).unwrap().fen(),
        STARTPOS_FEN
    );
    // The capture on d6 is legal: written.
    let fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2";
    assert_eq!(Position::from_fen(fen).unwrap().fen(), fen);
    // The e5 pawn is pinned against the king along the rank by the rook: not written.
    let pinned = Position::from_fen("4k3/8/8/r2pP1K1/8/8/8/8 w - d6 0 2").unwrap();
    assert_eq!(pinned.fen(), "4k3/8/8/r2pP1K1/8/8/8/8 w - - 0 2");
    assert_eq!(pinned.ep_square(), Some(Square::D6));
    assert_eq!(pinned.legal_ep_square(), None);
}

#[test]
fn setup_api_is_unchecked_until_validated() {
    let mut s = Setup::startpos();
    s.castling = CastlingRights::ALL;
    s.remove(Square::H1);
    assert!(matches!(
        Position::from_setup(&s),
        Err(PositionError::BadCastlingRights { right: 'K', .. })
    ));
    let _ = Rank::First;
}

#[test]
fn impossible_double_checks() {
    // A double check is a discovered check by a line piece plus a check by the piece that
    // moved. Pawns and knights cannot be uncovered, so two of them cannot check at once.
    for (fen, what) in [
        (
            "7k/8/5n2/3p4/4K3/8/8/8 w - - 0 1",
            "a black pawn on d5 and a black knight on f6",
        ),
        (
            "7k/8/3n1n2/8/4K3/8/8/8 w - - 0 1",
            "a black knight on d6 and a black knight on f6",
        ),
        (
            "7k/8/8/3p1p2/4K3/8/8/8 w - - 0 1",
            "a black pawn on d5 and a black pawn on f5",
        ),
    ] {
        let e = err(fen);
        assert!(
            matches!(
                e,
                FenError::Position(PositionError::ImpossibleDoubleCheck {
                    color: Color::White,
                    ..
                })
            ),
            "{fen}: {e:?}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("white is in check from {what} at once")),
            "{text}"
        );
    }
    // Two pieces on one line through the king: the one that moved would have crossed it.
    let e = err("7k/8/8/8/r3K2r/8/8/8 w - - 0 1");
    assert!(
        matches!(
            e,
            FenError::Position(PositionError::ImpossibleDoubleCheck { .. })
        ),
        "{e:?}"
    );
    // Legal double checks stay legal: a knight, bishop or pawn move uncovering a rook.
    for fen in [
        "k3r3/8/8/8/8/3n4/8/4K3 w - - 0 1",
        "k3r3/8/8/8/1b6/8/8/4K3 w - - 0 1",
        "k3r3/8/8/8/8/8/3p4/4K3 w - - 0 1",
        "k7/8/8/8/8/8/5n2/r3K3 w - - 0 1",
    ] {
        Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    }
}

#[test]
fn check_must_fit_the_two_square_push() {
    // Black just played d7-d5 (en-passant square d6): only that pawn, or a line piece it
    // uncovered by leaving d7, can be giving check.
    let e = err("k7/8/5n2/3pP3/6K1/8/8/8 w - d6 0 2");
    assert!(
        matches!(
            e,
            FenError::Position(PositionError::CheckWithoutTwoSquarePush { .. })
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the black knight on f6 gives check, which the two-square pawn move to d5 (en-passant \
         square d6) cannot have produced"
    );
    // The pawn itself, or a bishop behind d7, may.
    Position::from_fen("k7/8/8/3pP3/4K3/8/8/8 w - d6 0 2").unwrap();
    Position::from_fen("k1b5/8/4K3/3pP3/8/8/8/8 w - d6 0 2").unwrap();
    Position::from_fen("k7/8/8/3pP3/8/8/8/7K w - d6 0 2").unwrap();
}

#[test]
fn huge_counters_are_reported_as_given() {
    for (fen, field, text) in [
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 4294967296 1",
            "halfmove clock",
            "4294967296",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 0 99999999999999",
            "fullmove number",
            "99999999999999",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 123456789012345678901234567890 1",
            "halfmove clock",
            "123456789012345678901234567890",
        ),
    ] {
        let e = err(fen);
        let max = 65_535;
        let min = if field == "halfmove clock" { 0 } else { 1 };
        assert_eq!(
            e.to_string(),
            format!("{field} {text} is out of range ({min}..={max})"),
            "{fen}"
        );
    }
}
