//! The behaviour every [`GameStore`] must have, as one suite that the memory and redb stores
//! run as unit tests and the PostgreSQL store runs against a real server (the workspace
//! integration tests). Each check panics with a message naming what broke.

use super::{GameStore, StoreError};
use crate::GameId;
use crate::event::{Event, Side};
use chess_wire::TimeControl;

fn created(tc: Option<&str>) -> Event {
    Event::Created {
        start_fen: String::new(),
        time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
        white: "Ann \"the\" 'first' ü".into(),
        black: "b".into(),
        at_ms: 1,
        illegal_moves: Default::default(),
        takebacks: false,
        request_id: None,
    }
}

fn mv(uci: &str, at_ms: u64) -> Event {
    Event::Move {
        uci: uci.into(),
        offer_draw: false,
        at_ms,
        request_id: None,
        dead: None,
    }
}

/// Runs every check against `store`, which may already hold other games.
pub fn run(store: &dyn GameStore) {
    create_append_load(store);
    whole_logs(store);
    load_from(store);
    every_event_kind_round_trips(store);
    listing_pages_through_every_game(store);
    racing_appends_have_one_winner(store);
    flag_deadlines(store);
}

/// A game stored whole in one call (import): all its events, keys kept; a second time it
/// exists; appends go on after it.
pub fn whole_logs(store: &dyn GameStore) {
    let id = GameId::new();
    let mut keyed = mv("e2e4", 2);
    if let Event::Move { request_id, .. } = &mut keyed {
        *request_id = Some("key-1".into());
    }
    let log = vec![created(Some("5+3")), keyed, mv("e7e5", 3)];
    store.create_with_log(id, &log, Some(300_003)).unwrap();
    assert_eq!(store.load(id).unwrap().as_ref(), Some(&log));
    assert!(
        matches!(
            store.create_with_log(id, &log, None),
            Err(StoreError::Exists(_))
        ),
        "a game stored twice must fail with Exists"
    );
    assert_eq!(
        store.load(id).unwrap().unwrap().len(),
        3,
        "and change nothing"
    );
    store.append(id, 3, &mv("g1f3", 4), None).unwrap();
    assert_eq!(store.load(id).unwrap().unwrap().len(), 4);
}

/// Create, duplicate create, append, stale append, load, unknown games.
pub fn create_append_load(store: &dyn GameStore) {
    let before = store.count().unwrap();
    let id = GameId::new();
    let first = created(None);
    store.create(id, &first).unwrap();
    assert!(
        matches!(store.create(id, &first), Err(StoreError::Exists(_))),
        "a second create of one id must fail with Exists"
    );
    let e4 = mv("e2e4", 2);
    store.append(id, 1, &e4, None).unwrap();
    assert!(
        matches!(
            store.append(id, 1, &e4, None),
            Err(StoreError::Conflict {
                expected: 1,
                actual: 2,
                ..
            })
        ),
        "a second append at one sequence number must fail with Conflict"
    );
    assert!(
        matches!(
            store.append(id, 5, &e4, None),
            Err(StoreError::Conflict { actual: 2, .. })
        ),
        "an append past the end must fail with Conflict"
    );
    assert_eq!(store.load(id).unwrap().unwrap(), vec![first, e4]);
    assert!(store.load(GameId::new()).unwrap().is_none());
    let resign = Event::Resigned {
        side: Side::White,
        at_ms: 3,
        request_id: None,
    };
    assert!(
        matches!(
            store.append(GameId::new(), 1, &resign, None),
            Err(StoreError::NotFound(_))
        ),
        "an append to an unknown game must fail with NotFound"
    );
    assert_eq!(store.count().unwrap(), before + 1);
}

pub fn load_from(store: &dyn GameStore) {
    let id = GameId::new();
    store.create(id, &created(None)).unwrap();
    let moves = [mv("e2e4", 2), mv("e7e5", 3), mv("g1f3", 4)];
    for (i, m) in moves.iter().enumerate() {
        store.append(id, i as u32 + 1, m, None).unwrap();
    }
    assert_eq!(
        store.load_from(id, 2).unwrap().unwrap(),
        moves[1..].to_vec()
    );
    assert_eq!(
        store.load_from(id, 4).unwrap().unwrap(),
        Vec::<Event>::new()
    );
    assert_eq!(
        store.load_from(id, 9).unwrap().unwrap(),
        Vec::<Event>::new()
    );
    assert!(store.load_from(GameId::new(), 0).unwrap().is_none());
}

pub fn every_event_kind_round_trips(store: &dyn GameStore) {
    let id = GameId::new();
    let events = vec![
        created(Some("40/90+30:30+30")),
        Event::Move {
            uci: "e2e4".into(),
            offer_draw: true,
            at_ms: 10,
            request_id: None,
            dead: None,
        },
        Event::DrawAnswered {
            side: Side::Black,
            accept: false,
            at_ms: 11,
            request_id: None,
        },
        Event::DrawClaimed {
            side: Side::Black,
            uci: Some("e7e5".into()),
            at_ms: 12,
            request_id: None,
        },
        Event::DrawClaimed {
            side: Side::White,
            uci: None,
            at_ms: 13,
            request_id: None,
        },
        Event::FlagFell {
            side: Side::White,
            at_ms: u64::MAX >> 11,
            cannot_mate: None,
        },
        Event::Resigned {
            side: Side::Black,
            at_ms: 15,
            request_id: None,
        },
        Event::Foul {
            side: Side::White,
            attempted: "e1e2".into(),
            reason: "king moved into check".into(),
            at_ms: 16,
            request_id: None,
            cannot_mate: None,
        },
        // The winnability analysis's decisions travel in the events.
        Event::Move {
            uci: "h2h3".into(),
            offer_draw: false,
            at_ms: 17,
            dead: Some("no pawn can ever move again (locked: h3/h4)".into()),
            request_id: None,
        },
        Event::FlagFell {
            side: Side::Black,
            at_ms: 18,
            cannot_mate: Some("White has only its king".into()),
        },
        Event::Foul {
            side: Side::Black,
            attempted: "e8e7".into(),
            reason: "king moved into check".into(),
            at_ms: 19,
            cannot_mate: Some("White has only its king".into()),
            request_id: None,
        },
        Event::Touched {
            side: Side::Black,
            square: "g8".into(),
            adjust: true,
            at_ms: 17,
            request_id: None,
        },
    ];
    store.create(id, &events[0]).unwrap();
    for (i, e) in events.iter().enumerate().skip(1) {
        store.append(id, i as u32, e, None).unwrap();
    }
    assert_eq!(store.load(id).unwrap().unwrap(), events);
}

pub fn listing_pages_through_every_game(store: &dyn GameStore) {
    let mine: Vec<GameId> = (0..5).map(|_| GameId::new()).collect();
    for id in &mine {
        store.create(*id, &created(None)).unwrap();
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.list(after, 2).unwrap();
        assert!(page.len() <= 2, "a page holds at most `limit` ids");
        let Some(last) = page.last().copied() else {
            break;
        };
        seen.extend(page);
        after = Some(last);
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "ids come in order");
    assert_eq!(seen.len() as u64, store.count().unwrap());
    for id in &mine {
        assert!(seen.contains(id), "{id} is listed");
    }
}

/// Eight writers race for each of 20 sequence numbers: exactly one wins each.
pub fn racing_appends_have_one_winner(store: &dyn GameStore) {
    let id = GameId::new();
    store.create(id, &created(None)).unwrap();
    for seq in 1..=20u32 {
        let results: Vec<Result<(), StoreError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|w| {
                    s.spawn(move || {
                        store.append(
                            id,
                            seq,
                            &Event::Resigned {
                                side: if w % 2 == 0 { Side::White } else { Side::Black },
                                at_ms: u64::from(seq) * 100 + w,
                                request_id: None,
                            },
                            None,
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "seq {seq}: exactly one append wins: {results:?}");
        for r in results.iter().filter(|r| r.is_err()) {
            assert!(
                matches!(r, Err(StoreError::Conflict { .. })),
                "a lost race is a Conflict: {r:?}"
            );
        }
    }
    assert_eq!(store.load(id).unwrap().unwrap().len(), 21);
}

/// Shared stores keep each game's flag deadline: a game is due once its deadline has passed
/// and no longer due once an event says no clock runs.
pub fn flag_deadlines(store: &dyn GameStore) {
    if !store.shared() {
        assert!(store.flags_due(u64::MAX, 10).unwrap().is_empty());
        return;
    }
    let id = GameId::new();
    store.create(id, &created(Some("1+0"))).unwrap();
    store
        .append(id, 1, &mv("e2e4", 1_000), Some(61_000))
        .unwrap();
    let due = |now| store.flags_due(now, 10_000).unwrap().contains(&id);
    assert!(!due(60_999), "not due before the deadline");
    assert!(due(61_000), "due at the deadline");
    store
        .append(
            id,
            2,
            &Event::FlagFell {
                side: Side::Black,
                at_ms: 61_000,
                cannot_mate: None,
            },
            None,
        )
        .unwrap();
    assert!(
        !due(u64::MAX >> 11),
        "not due once the flag fall is recorded"
    );
}
