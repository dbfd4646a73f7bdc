//! Fouls under each mode, and touch-move, through the session that owns the arbiter.

use super::*;
use crate::event::{Event, Side};
use crate::session::Session;
use crate::session::tests::{mv, run};
use chess_wire::TimeControl;

fn arbiter_game(mode: ArbiterMode, fen: &str, tc: Option<&str>) -> Session {
    Session::create(&Event::Created {
        start_fen: fen.into(),
        time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
        white: String::new(),
        black: String::new(),
        at_ms: 0,
        illegal_moves: mode,
        takebacks: false,
        request_id: None,
    })
    .unwrap()
}

fn foul(side: Side, attempted: &str, at_ms: u64) -> Event {
    Event::Foul {
        side,
        attempted: attempted.into(),
        reason: "king moved into check".into(),
        at_ms,
        request_id: None,
        cannot_mate: None,
    }
}

fn touch(side: Side, square: &str, adjust: bool) -> Event {
    Event::Touched {
        side,
        square: square.into(),
        adjust,
        at_ms: 10,
        request_id: None,
    }
}

#[test]
fn old_logs_without_a_mode_still_load_and_reject() {
    let json = r#"{"type":"created","start_fen":"","time_control":null,"white":"A","black":"B","at_ms":1}"#;
    let ev: Event = serde_json::from_str(json).unwrap();
    let s = Session::create(&ev).unwrap();
    assert_eq!(s.arbiter.mode(), ArbiterMode::Reject);
    assert_eq!(
        s.check(&foul(Side::White, "e1e2", 2)),
        Err(SessionError::NoArbiter)
    );
    // A reject-mode game writes no mode, so its log reads as before.
    assert!(
        !serde_json::to_string(&ev)
            .unwrap()
            .contains("illegal_moves")
    );
    let fide = Event::Created {
        start_fen: String::new(),
        time_control: None,
        white: String::new(),
        black: String::new(),
        at_ms: 0,
        illegal_moves: ArbiterMode::ThreeStrikes,
        takebacks: false,
        request_id: None,
    };
    let text = serde_json::to_string(&fide).unwrap();
    assert!(
        text.contains(r#""illegal_moves":"three_strikes""#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), fide);
}

#[test]
fn fide_first_foul_gives_two_minutes_second_loses() {
    let mut s = arbiter_game(ArbiterMode::Fide, "", Some("5+0"));
    run(&mut s, mv("e2e4", 1_000)).unwrap();
    // Black's first illegal move: white gets two minutes; the position stays.
    run(&mut s, foul(Side::Black, "e8e7", 3_000)).unwrap();
    assert_eq!(s.arbiter.fouls()[0].penalty, Penalty::TwoMinutes);
    assert_eq!(
        s.arbiter.fouls()[0].penalty_text(),
        "two minutes added to white's clock"
    );
    assert_eq!(
        s.clock.as_ref().unwrap().remaining_ms.white,
        300_000 + 120_000
    );
    assert_eq!(s.ply(), 1);
    assert_eq!(s.turn(), Color::Black);
    // White cannot commit a foul on black's move.
    assert!(matches!(
        s.check(&foul(Side::White, "e1e2", 3_500)),
        Err(SessionError::NotYourTurn { .. })
    ));
    run(&mut s, mv("e7e5", 4_000)).unwrap();
    run(&mut s, mv("g1f3", 5_000)).unwrap();
    run(&mut s, foul(Side::Black, "e8e6", 6_000)).unwrap();
    let lost = Outcome::Decisive {
        winner: Color::White,
        reason: WinReason::IllegalMoves,
    };
    assert_eq!(s.outcome, Some(lost));
    assert_eq!(s.arbiter.fouls()[1].penalty, Penalty::GameOver(lost));
    assert_eq!(s.arbiter.fouls()[1].count, 2);
    assert_eq!(lost.to_string(), "1-0 (white wins by illegal moves)");
}

#[test]
fn second_fide_foul_draws_when_the_opponent_cannot_mate() {
    // White has a bare king: black's second foul draws.
    let mut s = arbiter_game(ArbiterMode::Fide, "4k3/8/8/8/8/8/4p3/K7 b - - 0 1", None);
    run(&mut s, foul(Side::Black, "e8e6", 1)).unwrap();
    assert_eq!(s.arbiter.fouls()[0].penalty, Penalty::Warning);
    run(&mut s, foul(Side::Black, "e2e4", 2)).unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::IllegalMovesInsufficientMaterial
        })
    );
}

#[test]
fn three_strikes_third_foul_loses_and_replays() {
    let mut events = vec![Event::Created {
        start_fen: String::new(),
        time_control: Some(TimeControl::parse("1+0").unwrap()),
        white: String::new(),
        black: String::new(),
        at_ms: 0,
        illegal_moves: ArbiterMode::ThreeStrikes,
        takebacks: false,
        request_id: None,
    }];
    let mut s = Session::create(&events[0]).unwrap();
    for ev in [
        foul(Side::White, "e1e2", 1),
        mv("e2e4", 2),
        mv("e7e5", 3),
        foul(Side::White, "e1e3", 4),
        mv("g1f3", 5),
        foul(Side::Black, "e8e6", 6),
        mv("b8c6", 7),
    ] {
        run(&mut s, ev.clone()).unwrap();
        events.push(ev);
    }
    assert_eq!(s.arbiter.fouls()[1].penalty, Penalty::Strike(2));
    assert_eq!(s.arbiter.fouls()[2].penalty, Penalty::Strike(1));
    assert_eq!(s.outcome, None);
    let third = foul(Side::White, "e1e2", 8);
    run(&mut s, third.clone()).unwrap();
    events.push(third);
    assert_eq!(
        s.outcome,
        Some(Outcome::Decisive {
            winner: Color::Black,
            reason: WinReason::IllegalMoves
        })
    );
    // No clock bonus under three strikes.
    assert_eq!(s.clock.as_ref().unwrap().remaining_ms.black, 60_000 - 3);
    let again = Session::replay(&events).unwrap();
    assert_eq!(again.arbiter.fouls(), s.arbiter.fouls());
    assert_eq!(again.outcome, s.outcome);
}

#[test]
fn touch_move_rules() {
    // Touching the g1 knight: it must move.
    let mut s = arbiter_game(ArbiterMode::Reject, "", None);
    run(&mut s, touch(Side::White, "g1", false)).unwrap();
    let err = s.check_new(&mv("e2e4", 20)).unwrap_err();
    assert_eq!(
        err,
        SessionError::TouchMove(TouchMove::MoveIt {
            role: Some(Role::Knight),
            square: Square::G1
        })
    );
    // The text callers read, unchanged.
    assert_eq!(
        err.to_string(),
        "touch-move (FIDE 4.3.1): you touched your knight on g1, which can move: move it"
    );
    run(&mut s, mv("g1f3", 20)).unwrap();
    // The move clears the touches.
    assert!(s.arbiter.touches().is_empty());
    // Black touches a piece that cannot move (the a8 rook): no obligation.
    run(&mut s, touch(Side::Black, "a8", false)).unwrap();
    run(&mut s, mv("e7e5", 30)).unwrap();
    // J'adoube binds nothing.
    run(&mut s, touch(Side::White, "b1", true)).unwrap();
    assert!(s.arbiter.touches()[0].adjust);
    run(&mut s, mv("d2d4", 40)).unwrap();
    // Black touches white's d4 pawn, which e5 can capture: it must be captured.
    run(&mut s, touch(Side::Black, "d4", false)).unwrap();
    let err = s.check_new(&mv("b8c6", 50)).unwrap_err();
    assert!(
        matches!(&err, SessionError::TouchMove(TouchMove::CaptureIt { .. })),
        "{err}"
    );
    run(&mut s, mv("e5d4", 50)).unwrap();
    // Touching out of turn, or an empty square, is refused.
    assert!(matches!(
        s.check(&touch(Side::Black, "d4", false)),
        Err(SessionError::NotYourTurn { .. })
    ));
    assert!(matches!(
        s.check(&touch(Side::White, "e4", false)),
        Err(SessionError::NothingTouched(Square::E4))
    ));
    // Own piece and opponent's piece: capture it with that piece when possible.
    run(&mut s, touch(Side::White, "f3", false)).unwrap();
    run(&mut s, touch(Side::White, "d4", false)).unwrap();
    let err = s.check_new(&mv("f3g5", 60)).unwrap_err();
    assert!(
        matches!(
            &err,
            SessionError::TouchMove(TouchMove::CaptureWithIt { .. })
        ),
        "{err}"
    );
    assert!(matches!(
        s.check_new(&mv("d1d4", 60)),
        Err(SessionError::TouchMove(_))
    ));
    run(&mut s, mv("f3d4", 60)).unwrap();
}

fn touch_move_error(s: &Session, uci: &str) -> TouchMove {
    match s.check_new(&mv(uci, 20)) {
        Err(SessionError::TouchMove(why)) => why,
        other => panic!("{uci}: expected a touch-move refusal, got {other:?}"),
    }
}

#[test]
fn king_then_rook_must_castle_on_that_side_when_legal() {
    // FIDE 4.4.1: king, then the h1 rook: O-O, nothing else.
    let fen = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    run(&mut s, touch(Side::White, "h1", false)).unwrap();
    for refused in ["e1f1", "e1d1", "e1c1", "h1g1"] {
        let why = touch_move_error(&s, refused);
        assert_eq!(
            why,
            TouchMove::Castle {
                rook: Square::H1,
                side: CastlingSide::KingSide
            }
        );
        assert!(why.to_string().ends_with("castle kingside"), "{why}");
    }
    run(&mut s, mv("e1g1", 20)).unwrap();
    assert!(
        s.position()
            .fen()
            .starts_with("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b")
    );
}

#[test]
fn king_then_rook_without_a_legal_castling_means_a_king_move_or_any_move() {
    // FIDE 4.4.3: castling kingside is illegal (f1 holds the bishop); the king can move
    // (Kf2... no: f2 is a pawn; Kd2 is free), so another king move is due.
    let fen = "4k3/8/8/8/8/8/3P1P2/R3KB1R w KQ - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    run(&mut s, touch(Side::White, "h1", false)).unwrap();
    let why = touch_move_error(&s, "h1g1");
    assert!(matches!(why, TouchMove::KingMove { .. }), "{why}");
    // Castling with the other rook is a king move too.
    s.check_new(&mv("e1c1", 20)).unwrap();
    s.check_new(&mv("e1e2", 20)).unwrap();
    // The king has no legal move at all: any legal move.
    let fen = "4k3/8/8/8/8/8/3PPP2/3QKB1R w K - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    run(&mut s, touch(Side::White, "h1", false)).unwrap();
    s.check_new(&mv("d2d4", 20)).unwrap();
    s.check_new(&mv("h1g1", 20)).unwrap();
}

#[test]
fn rook_then_king_forbids_castling_on_that_side() {
    // FIDE 4.4.2, a rook that can move: 4.3.1 makes it move; no castling on its side.
    let fen = "4k3/8/8/8/8/8/PPPPPPPP/R3K2R w KQ - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "h1", false)).unwrap();
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    let why = touch_move_error(&s, "e1g1");
    assert_eq!(why, TouchMove::NoCastling { rook: Square::H1 });
    s.check_new(&mv("h1g1", 20)).unwrap();
    // A rook that cannot move (a knight and the pawns box it in): the king, touched
    // next, must move (castling on the rook's side is illegal anyway).
    let fen = "4k3/8/8/8/8/8/PPPPPPPP/RN2K2R w KQ - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "a1", false)).unwrap();
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    s.check_new(&mv("e1f1", 20)).unwrap();
    s.check_new(&mv("e1g1", 20)).unwrap();
    let fen = "4k3/8/8/8/8/8/PPPPPPPP/R3K1NR w KQ - 0 1";
    let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
    run(&mut s, touch(Side::White, "h1", false)).unwrap();
    run(&mut s, touch(Side::White, "e1", false)).unwrap();
    s.check_new(&mv("e1d1", 20)).unwrap();
    // Castling on the other side is a king move, and allowed.
    s.check_new(&mv("e1c1", 20)).unwrap();
}

#[test]
fn a_claims_declared_move_obeys_touch_move() {
    let mut s = arbiter_game(ArbiterMode::Reject, "", None);
    for (i, uci) in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]
        .into_iter()
        .enumerate()
    {
        run(&mut s, mv(uci, i as u64)).unwrap();
    }
    run(&mut s, touch(Side::Black, "b8", false)).unwrap();
    let claim = |uci: &str| Event::DrawClaimed {
        side: Side::Black,
        uci: Some(uci.into()),
        at_ms: 30,
        request_id: None,
    };
    assert!(matches!(
        s.check_new(&claim("f6g8")),
        Err(SessionError::TouchMove(TouchMove::MoveIt {
            role: Some(Role::Knight),
            square: Square::B8
        }))
    ),);
    // Replaying a stored claim does not hold it to touch-move again.
    s.check(&claim("f6g8")).unwrap();
}

#[test]
fn touches_per_move_are_bounded() {
    let mut s = arbiter_game(ArbiterMode::Reject, "", None);
    for _ in 0..MAX_TOUCHES_PER_MOVE {
        run(&mut s, touch(Side::White, "b1", true)).unwrap();
    }
    assert!(matches!(
        s.check_new(&touch(Side::White, "b1", true)),
        Err(SessionError::TooManyTouches { limit: 32 })
    ));
    // The move clears them.
    run(&mut s, mv("e2e4", 30)).unwrap();
    run(&mut s, touch(Side::Black, "b8", true)).unwrap();
}
