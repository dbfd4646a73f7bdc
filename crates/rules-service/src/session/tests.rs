//! The session's fold: clocks, draw offers, claims, replay, and the winnability decisions.

use super::*;
use crate::event::Side;

fn created(tc: Option<&str>) -> Event {
    Event::Created {
        start_fen: String::new(),
        time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
        white: "A".into(),
        black: "B".into(),
        at_ms: 1_000,
        illegal_moves: ArbiterMode::Reject,
        takebacks: false,
        request_id: None,
    }
}

pub(crate) fn mv(uci: &str, at_ms: u64) -> Event {
    Event::Move {
        uci: uci.into(),
        offer_draw: false,
        at_ms,
        request_id: None,
        dead: None,
    }
}

fn offer(uci: &str, at_ms: u64) -> Event {
    Event::Move {
        uci: uci.into(),
        offer_draw: true,
        at_ms,
        request_id: None,
        dead: None,
    }
}

pub(crate) fn run(s: &mut Session, ev: Event) -> Result<(), SessionError> {
    s.check_new(&ev)?;
    s.apply(&ev);
    Ok(())
}

#[test]
fn clocks_count_down_with_increment_and_periods() {
    let mut s = Session::create(&created(Some("2/1+1:1+0"))).unwrap();
    // White's first move starts black's clock and costs white nothing.
    run(&mut s, mv("e2e4", 5_000)).unwrap();
    assert_eq!(s.records[0].time_used_ms, 0);
    assert_eq!(s.clock.as_ref().unwrap().remaining_ms.white, 61_000);
    run(&mut s, mv("e7e5", 15_000)).unwrap();
    assert_eq!(s.records[1].time_used_ms, 10_000);
    assert_eq!(s.remaining(15_000).unwrap().black, 51_000);
    assert_eq!(s.remaining(20_000).unwrap().white, 56_000);
    // White's second move completes period one: the second period's minute is added.
    run(&mut s, mv("g1f3", 25_000)).unwrap();
    assert_eq!(
        s.clock.as_ref().unwrap().remaining_ms.white,
        61_000 - 10_000 + 1_000 + 60_000
    );
    assert_eq!(s.clock.as_ref().unwrap().period.white, 1);
}

#[test]
fn flag_fall_loses_or_draws() {
    let mut s = Session::create(&created(Some("0.1+0"))).unwrap();
    run(&mut s, mv("e2e4", 0)).unwrap();
    assert_eq!(s.flag_deadline_ms(), Some(6_000));
    assert_eq!(s.flag_fallen(5_999), None);
    assert_eq!(s.flag_fallen(6_000), Some(Color::Black));
    // A move after the flag fell is refused.
    assert_eq!(s.check(&mv("e7e5", 7_000)), Err(SessionError::FlagFallen));
    run(
        &mut s,
        Event::FlagFell {
            side: Side::Black,
            at_ms: 7_000,
            cannot_mate: None,
        },
    )
    .unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::Timeout
        })
    );

    // White has only a king: black's flag falling is a draw.
    let ev = Event::Created {
        start_fen: "4k3/8/8/8/8/8/4p3/K7 b - - 0 1".into(),
        time_control: Some(TimeControl::parse("0.1+0").unwrap()),
        white: String::new(),
        black: String::new(),
        at_ms: 0,
        illegal_moves: ArbiterMode::Reject,
        takebacks: false,
        request_id: None,
    };
    let mut s = Session::create(&ev).unwrap();
    run(&mut s, mv("e8d7", 0)).unwrap();
    run(&mut s, mv("a1b1", 1_000)).unwrap();
    run(
        &mut s,
        Event::FlagFell {
            side: Side::Black,
            at_ms: 60_000,
            cannot_mate: None,
        },
    )
    .unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::TimeoutInsufficientMaterial
        })
    );
}

#[test]
fn draw_offer_etiquette() {
    let mut s = Session::create(&created(None)).unwrap();
    // White offers with its move; black declines by answering.
    run(&mut s, offer("e2e4", 1)).unwrap();
    assert_eq!(s.draw_offer, Some(Color::White));
    // White cannot answer its own offer.
    assert_eq!(
        s.check(&Event::DrawAnswered {
            side: Side::White,
            accept: true,
            at_ms: 2,
            request_id: None,
        }),
        Err(SessionError::NoDrawOffer(Color::White))
    );
    run(
        &mut s,
        Event::DrawAnswered {
            side: Side::Black,
            accept: false,
            at_ms: 2,
            request_id: None,
        },
    )
    .unwrap();
    assert_eq!(s.draw_offer, None);
    run(&mut s, mv("e7e5", 3)).unwrap();
    // Refused: white may not offer again...
    assert!(matches!(
        s.check(&offer("g1f3", 4)),
        Err(SessionError::OfferBlocked)
    ));
    run(&mut s, mv("g1f3", 4)).unwrap();
    // ...until black has offered.
    run(&mut s, offer("b8c6", 5)).unwrap();
    assert_eq!(s.draw_offer, Some(Color::Black));
    // White moves on instead of answering: that refuses black's offer.
    run(&mut s, mv("f1c4", 6)).unwrap();
    assert_eq!(s.draw_offer, None);
    assert!(s.offer_blocked.black);
    run(&mut s, mv("g8f6", 7)).unwrap();
    // White may offer again now, and black accepts.
    run(&mut s, offer("d2d3", 8)).unwrap();
    assert!(!s.offer_blocked.black, "white's offer lifts black's block");
    run(
        &mut s,
        Event::DrawAnswered {
            side: Side::Black,
            accept: true,
            at_ms: 9,
            request_id: None,
        },
    )
    .unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::Agreement
        })
    );
}

#[test]
fn claims_resignation_and_replay() {
    let mut events = vec![created(Some("5+3"))];
    let mut s = Session::create(&events[0]).unwrap();
    let mut t = 1_000;
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
        t += 500;
        let ev = mv(uci, t);
        run(&mut s, ev.clone()).unwrap();
        events.push(ev);
    }
    // Black to move; no claim yet.
    let claim = Event::DrawClaimed {
        side: Side::Black,
        uci: None,
        at_ms: t,
        request_id: None,
    };
    assert!(matches!(
        s.check(&claim),
        Err(SessionError::NoClaim { repetitions: 2, .. })
    ));
    // By declaring f6g8 black claims the third occurrence.
    let claim = Event::DrawClaimed {
        side: Side::Black,
        uci: Some("f6g8".into()),
        at_ms: t + 100,
        request_id: None,
    };
    assert!(matches!(
        s.check(&Event::DrawClaimed {
            side: Side::White,
            uci: None,
            at_ms: t,
            request_id: None,
        }),
        Err(SessionError::NotYourTurn { .. })
    ));
    run(&mut s, claim.clone()).unwrap();
    events.push(claim);
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::ThreefoldRepetition
        })
    );
    assert!(matches!(
        s.check(&Event::Resigned {
            side: Side::White,
            at_ms: t,
            request_id: None,
        }),
        Err(SessionError::GameOver(_))
    ));

    let again = Session::replay(&events).unwrap();
    assert_eq!(again.outcome, s.outcome);
    assert_eq!(again.clock, s.clock);
    assert_eq!(again.game.moves(), s.game.moves());
    assert_eq!(again.events, events.len() as u32);
}

#[test]
fn resignation_any_time_and_illegal_moves() {
    let mut s = Session::create(&created(None)).unwrap();
    assert!(matches!(
        s.check(&mv("e2e5", 1)),
        Err(SessionError::IllegalMove(_))
    ));
    run(
        &mut s,
        Event::Resigned {
            side: Side::Black,
            at_ms: 1,
            request_id: None,
        },
    )
    .unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::Resignation
        })
    );
}

fn from_fen(fen: &str, tc: Option<&str>, mode: ArbiterMode) -> Event {
    Event::Created {
        start_fen: fen.into(),
        time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
        white: String::new(),
        black: String::new(),
        at_ms: 0,
        illegal_moves: mode,
        takebacks: false,
        request_id: None,
    }
}

/// A locked pawn wall; White's light-squared bishop is on the black king's side and can
/// check but never mate. One white pawn move (h2-h3) is left before the wall closes.
const ALMOST_LOCKED: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P2/7P/4K3 w - - 0 1";
const LOCKED_BLACK_TO_MOVE: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 b - - 0 1";

#[test]
fn a_move_into_a_dead_position_ends_the_game_and_replays_as_decided() {
    let created = from_fen(ALMOST_LOCKED, None, ArbiterMode::Reject);
    let mut s = Session::create(&created).unwrap();
    // The old rule (material) sees nothing: two bishops' worth of pawns are on the board.
    assert!(s.position().can_possibly_mate(Color::White));
    let ev = s.judge(mv("h2h3", 10));
    let Event::Move {
        dead: Some(reason), ..
    } = &ev
    else {
        panic!("not judged dead: {ev:?}");
    };
    assert!(reason.contains("locked"), "{reason}");
    run(&mut s, ev.clone()).unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::DeadPosition
        })
    );
    assert!(s.outcome_detail.as_deref().unwrap().contains("locked"));
    // Replaying the stored events gives the same result without judging again.
    let again = Session::replay(&[created.clone(), ev]).unwrap();
    assert_eq!(again.outcome, s.outcome);
    assert_eq!(again.outcome_detail, s.outcome_detail);
    // A log written before the analysis (no decision in the event) replays as it was
    // decided then: the game goes on.
    let mut old = Session::replay(&[created, mv("h2h3", 10)]).unwrap();
    assert_eq!(old.outcome, None);
    run(&mut old, mv("a8b8", 20)).unwrap();
}

#[test]
fn a_flag_falls_against_a_side_that_cannot_mate_by_any_series_of_moves() {
    let mut s = Session::create(&from_fen(
        LOCKED_BLACK_TO_MOVE,
        Some("0.1+0"),
        ArbiterMode::Reject,
    ))
    .unwrap();
    run(&mut s, mv("a8b8", 0)).unwrap();
    run(&mut s, mv("e1d2", 1_000)).unwrap();
    // Material says White could mate; the analysis proves it cannot.
    assert!(s.position().can_possibly_mate(Color::White));
    let flag = Event::FlagFell {
        side: Side::Black,
        at_ms: 60_000,
        cannot_mate: None,
    };
    assert!(s.judges_at_length(&flag));
    let judged = s.judge(flag);
    run(&mut s, judged).unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::TimeoutInsufficientMaterial
        })
    );
    assert!(s.outcome_detail.as_deref().unwrap().contains("never mate"));

    // Where the opponent can mate (with help), the flag still loses.
    let mut s = Session::create(&from_fen(
        "7k/8/5K2/8/8/8/P7/6N1 b - - 0 1",
        Some("0.1+0"),
        ArbiterMode::Reject,
    ))
    .unwrap();
    run(&mut s, mv("h8h7", 0)).unwrap();
    run(&mut s, mv("g1f3", 1_000)).unwrap();
    let judged = s.judge(Event::FlagFell {
        side: Side::Black,
        at_ms: 60_000,
        cannot_mate: None,
    });
    run(&mut s, judged).unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::Timeout
        })
    );
}

#[test]
fn a_losing_foul_draws_when_the_opponent_cannot_mate() {
    let mut s = Session::create(&from_fen(LOCKED_BLACK_TO_MOVE, None, ArbiterMode::Fide)).unwrap();
    let foul = |at_ms| Event::Foul {
        side: Side::Black,
        attempted: "a8a6".into(),
        reason: "no black piece can move there".into(),
        at_ms,
        cannot_mate: None,
        request_id: None,
    };
    let first = s.judge(foul(1));
    assert!(matches!(
        first,
        Event::Foul {
            cannot_mate: None,
            ..
        }
    ));
    run(&mut s, first).unwrap();
    assert_eq!(s.outcome, None);
    let second = s.judge(foul(2));
    run(&mut s, second).unwrap();
    assert_eq!(
        s.outcome,
        Some(Outcome::Draw {
            reason: DrawReason::IllegalMovesInsufficientMaterial
        })
    );
}

fn casual(tc: Option<&str>) -> Event {
    let mut ev = created(tc);
    if let Event::Created { takebacks, .. } = &mut ev {
        *takebacks = true;
    }
    ev
}

fn take_back(side: Side, plies: u32, at_ms: u64) -> Event {
    Event::TakenBack {
        side,
        plies,
        at_ms,
        request_id: None,
    }
}

#[test]
fn takebacks_only_in_casual_games() {
    let mut s = Session::create(&created(None)).unwrap();
    run(&mut s, mv("e2e4", 2_000)).unwrap();
    assert_eq!(
        run(&mut s, take_back(Side::White, 1, 3_000)),
        Err(SessionError::NoTakebacks)
    );
    assert_eq!(s.ply(), 1);
    assert_eq!(s.takeback_plies(Color::White), Some(1));
}

#[test]
fn a_takeback_removes_the_sides_move_and_the_reply() {
    let mut s = Session::create(&casual(None)).unwrap();
    // Nothing to take back before a side has moved.
    assert_eq!(s.takeback_plies(Color::White), None);
    assert_eq!(
        run(&mut s, take_back(Side::White, 2, 1_500)),
        Err(SessionError::NothingToTakeBack(Color::White))
    );
    run(&mut s, mv("e2e4", 2_000)).unwrap();
    assert_eq!(s.takeback_plies(Color::Black), None);
    run(&mut s, mv("e7e5", 3_000)).unwrap();
    run(&mut s, mv("g1f3", 4_000)).unwrap();
    // Black to move takes back its e5 and white's reply Nf3.
    assert_eq!(s.takeback_plies(Color::Black), Some(2));
    // A stored takeback of the wrong size is refused.
    assert!(matches!(
        s.check(&take_back(Side::Black, 1, 5_000)),
        Err(SessionError::Corrupt(_))
    ));
    run(&mut s, take_back(Side::Black, 2, 5_000)).unwrap();
    assert_eq!(s.ply(), 1);
    assert_eq!(s.turn(), Color::Black);
    assert_eq!(s.records.len(), 1);
    assert_eq!(
        s.taken_back,
        vec![TakeBack {
            side: Color::Black,
            plies: 2,
            ply: 1
        }]
    );
    // White, whose Nf3 is gone, has e4 to take back: its own move only (black has not
    // answered it since).
    assert_eq!(s.takeback_plies(Color::White), Some(1));
    run(&mut s, take_back(Side::White, 1, 6_000)).unwrap();
    assert_eq!(s.ply(), 0);
    assert_eq!(s.position(), &Position::startpos());
    // The game goes on from there, and the same position counts once for repetitions.
    run(&mut s, mv("d2d4", 7_000)).unwrap();
    assert_eq!(s.game.repetition_count(), 1);
    assert_eq!(s.game.san_moves(), vec!["d4"]);
}

#[test]
fn a_takeback_keeps_the_clocks_as_they_show() {
    let mut s = Session::create(&casual(Some("5+0"))).unwrap();
    run(&mut s, mv("e2e4", 1_000)).unwrap();
    run(&mut s, mv("e7e5", 11_000)).unwrap();
    run(&mut s, mv("g1f3", 14_000)).unwrap();
    // Black, to move since 14 s, takes back at 20 s: black is charged its 6 s, then the
    // clock runs for black again (black is to move after the takeback too).
    run(&mut s, take_back(Side::Black, 2, 20_000)).unwrap();
    let clock = s.clock.clone().unwrap();
    assert_eq!(clock.remaining_ms.black, 300_000 - 10_000 - 6_000);
    assert_eq!(clock.remaining_ms.white, 300_000 - 3_000);
    assert_eq!(clock.running_since_ms, Some(20_000));
    assert_eq!(s.remaining(25_000).unwrap().black, 300_000 - 16_000 - 5_000);
    // Back to the start position: the clocks stop, as before the first move.
    run(&mut s, take_back(Side::White, 1, 26_000)).unwrap();
    assert_eq!(s.ply(), 0);
    assert_eq!(s.clock.as_ref().unwrap().running_since_ms, None);
    assert_eq!(s.remaining(60_000).unwrap().black, 300_000 - 16_000 - 6_000);
}

#[test]
fn a_takeback_ends_a_pending_draw_offer_and_not_a_finished_game() {
    let mut s = Session::create(&casual(None)).unwrap();
    run(&mut s, offer("e2e4", 1_000)).unwrap();
    assert_eq!(s.draw_offer, Some(Color::White));
    run(&mut s, take_back(Side::White, 1, 2_000)).unwrap();
    assert_eq!(s.draw_offer, None);
    for (i, m) in ["f2f3", "e7e5", "g2g4", "d8h4"].iter().enumerate() {
        run(&mut s, mv(m, 3_000 + i as u64)).unwrap();
    }
    assert!(s.outcome.is_some());
    assert!(matches!(
        run(&mut s, take_back(Side::White, 2, 9_000)),
        Err(SessionError::GameOver(_))
    ));
}

#[test]
fn takebacks_replay_and_older_logs_read_without_them() {
    let events = vec![
        casual(Some("3+2")),
        mv("e2e4", 2_000),
        mv("c7c5", 3_000),
        take_back(Side::Black, 1, 4_000),
        mv("e7e5", 5_000),
        take_back(Side::White, 2, 6_000),
        mv("d2d4", 7_000),
    ];
    let mut live = Session::create(&events[0]).unwrap();
    for ev in &events[1..] {
        run(&mut live, ev.clone()).unwrap();
    }
    let text: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    assert!(text[0].contains(r#""takebacks":true"#), "{}", text[0]);
    assert!(text[3].contains(r#""type":"taken_back""#), "{}", text[3]);
    let read: Vec<Event> = text
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    assert_eq!(read, events);
    let replayed = Session::replay(&read).unwrap();
    assert_eq!(replayed.game.san_moves(), vec!["d4"]);
    assert_eq!(replayed.taken_back, live.taken_back);
    assert_eq!(replayed.clock, live.clock);
    // A log written before takebacks has no `takebacks` field: not a casual game.
    let old =
        r#"{"type":"created","start_fen":"","time_control":null,"white":"","black":"","at_ms":1}"#;
    let ev: Event = serde_json::from_str(old).unwrap();
    assert!(!Session::create(&ev).unwrap().takebacks);
    // And a casual game's `created` without takebacks is written as before.
    assert!(
        !serde_json::to_string(&created(None))
            .unwrap()
            .contains("takebacks")
    );
}
