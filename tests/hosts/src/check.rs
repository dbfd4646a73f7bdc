//! The checker: a history against the final games and the store's events.
//!
//! - Moves: every acknowledged move is in its game at the ply it was sent for; a move whose
//!   every call failed with a definite error is not in the store; no idempotency key made two
//!   events; no ply of a game holds two of this client's moves; every stored move is one this
//!   client sent; moves of unknown outcome are counted (applied or not).
//! - Watchers: each watcher's events, across its reconnections, rebuild a prefix of the final
//!   game: a move event adds exactly the next ply (no gap, no duplicate), a snapshot after a
//!   reconnection never goes back.
//! - Clocks: every game that had to lose on time did, once (one flag event in the store), and
//!   a read through the gateway showed it within a few seconds of its due time unless the
//!   whole service was down then.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::figures::{Figures, Window, figures};
use crate::history::{History, Outcome};

/// How late a flag may be seen through the gateway (its due time is an upper bound already).
const FLAG_SLACK_MS: u64 = 3000;
/// After a whole-service outage, flags due within this long of healing are not timed.
const OUTAGE_GRACE_MS: u64 = 10_000;

#[derive(Debug, Serialize)]
struct Report<'a> {
    scenario: &'a str,
    #[serde(flatten)]
    figures: Figures,
    moves_acked: usize,
    moves_unknown_applied: usize,
    moves_unknown_absent: usize,
    watch_events: usize,
    watch_reconnects: usize,
    flags: usize,
    flag_late_max_ms: u64,
    findings: Vec<String>,
}

/// One stored event of a game.
struct Stored {
    kind: String,
    uci: Option<String>,
    key: Option<String>,
}

fn read_events(path: &Path) -> Result<Store, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows: BTreeMap<(String, i64), Stored> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut parts = line.splitn(3, '\t');
        let (Some(game), Some(seq), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("a store line that does not read: {line:?}"));
        };
        let seq: i64 = seq.parse().map_err(|_| format!("bad seq in {line:?}"))?;
        let body: Value = serde_json::from_str(body).map_err(|e| format!("{e}: {body}"))?;
        let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
        rows.insert(
            (game.to_owned(), seq),
            Stored {
                kind: text("type").unwrap_or_default(),
                uci: text("uci"),
                key: text("request_id"),
            },
        );
    }
    let mut games: HashMap<String, Vec<Stored>> = HashMap::new();
    for ((game, _), stored) in rows {
        games.entry(game).or_default().push(stored);
    }
    Ok(games)
}

/// A move this client asked for, over all the calls that carried its key.
struct Intended {
    game: String,
    ply: u32,
    mv: String,
    acked: bool,
    all_definite: bool,
}

pub fn run(
    history_path: &Path,
    events: Option<&Path>,
    scenario: &str,
    window: Window,
) -> Result<bool, String> {
    let text = std::fs::read_to_string(history_path)
        .map_err(|e| format!("{}: {e}", history_path.display()))?;
    let history: History = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let store = events.map(read_events).transpose()?;
    let report = check(&history, store.as_ref(), scenario, window);
    println!(
        "{}",
        serde_json::to_string(&report).map_err(|e| e.to_string())?
    );
    // A scenario that did not come back (calls still failing at the end) fails too.
    Ok(report.findings.is_empty() && report.figures.recovery_ms.is_some())
}

/// The events of each game in the store, in order.
type Store = HashMap<String, Vec<Stored>>;

fn check<'a>(
    history: &History,
    store: Option<&Store>,
    scenario: &'a str,
    window: Window,
) -> Report<'a> {
    let mut findings = Vec::new();

    let finals: HashMap<&str, &crate::history::Final> = history
        .finals
        .iter()
        .map(|f| (f.game.as_str(), f))
        .collect();
    for f in &history.finals {
        if f.moves.is_none() {
            findings.push(format!("game {} could not be read after healing", f.game));
        }
    }

    // Moves, by idempotency key.
    let mut intended: BTreeMap<&str, Intended> = BTreeMap::new();
    for c in history.calls.iter().filter(|c| c.op == "MakeMove") {
        let (Some(key), Some(game), Some(ply), Some(mv)) = (&c.key, &c.game, c.ply, &c.mv) else {
            continue;
        };
        let entry = intended.entry(key).or_insert_with(|| Intended {
            game: game.clone(),
            ply,
            mv: mv.clone(),
            acked: false,
            all_definite: true,
        });
        entry.acked |= c.outcome == Outcome::Ok;
        entry.all_definite &= c.outcome == Outcome::Failed;
    }
    let stored_keys: HashMap<&str, usize> = store
        .iter()
        .flat_map(|s| s.values())
        .flatten()
        .filter(|e| e.kind == "move")
        .filter_map(|e| e.key.as_deref())
        .fold(HashMap::new(), |mut m, k| {
            *m.entry(k).or_default() += 1;
            m
        });
    let (mut acked, mut unknown_applied, mut unknown_absent) = (0, 0, 0);
    let mut plies: HashMap<(&str, u32), Vec<&str>> = HashMap::new();
    for (key, i) in &intended {
        let in_store = stored_keys.get(key).copied().unwrap_or(0);
        if in_store > 1 {
            findings.push(format!("move {key} ({}) stored {in_store} times", i.mv));
        }
        if in_store > 0 {
            plies.entry((&i.game, i.ply)).or_default().push(key);
        }
        let at_ply = finals
            .get(i.game.as_str())
            .and_then(|f| f.moves.as_ref())
            .and_then(|m| m.get(i.ply as usize));
        if i.acked {
            acked += 1;
            if at_ply != Some(&i.mv) {
                findings.push(format!(
                    "acknowledged move {} of game {} at ply {} is not there (found {at_ply:?})",
                    i.mv, i.game, i.ply
                ));
            }
            if store.is_some() && in_store == 0 {
                findings.push(format!("acknowledged move {key} is not in the store"));
            }
        } else if i.all_definite {
            if in_store > 0 {
                findings.push(format!(
                    "move {key} ({}) failed with a definite error but is in the store",
                    i.mv
                ));
            }
        } else if store.is_some() {
            if in_store > 0 {
                unknown_applied += 1;
            } else {
                unknown_absent += 1;
            }
        }
    }
    for ((game, ply), keys) in &plies {
        if keys.len() > 1 {
            findings.push(format!("ply {ply} of game {game} holds moves {keys:?}"));
        }
    }
    if let Some(store) = &store {
        for f in &history.finals {
            let Some(moves) = &f.moves else { continue };
            let Some(events) = store.get(&f.game) else {
                findings.push(format!("game {} is not in the store", f.game));
                continue;
            };
            let stored: Vec<&str> = events
                .iter()
                .filter(|e| e.kind == "move")
                .filter_map(|e| e.uci.as_deref())
                .collect();
            if stored != moves.iter().map(String::as_str).collect::<Vec<_>>() {
                findings.push(format!(
                    "game {}: the store's moves {stored:?} are not the game's {moves:?}",
                    f.game
                ));
            }
            for e in events.iter().filter(|e| e.kind == "move") {
                match &e.key {
                    Some(k) if intended.contains_key(k.as_str()) => {}
                    other => findings.push(format!(
                        "game {}: stored move {:?} with key {other:?} was never sent",
                        f.game, e.uci
                    )),
                }
            }
            let flags = events.iter().filter(|e| e.kind == "flag_fell").count();
            if flags > 1 {
                findings.push(format!("game {}: flag recorded {flags} times", f.game));
            }
        }
    }

    // Reads: a game read after a move of it was acknowledged holds that move (no stale
    // answer from a replica that lost touch with the store).
    let mut acked_at: HashMap<&str, Vec<(u64, u32)>> = HashMap::new();
    for c in history
        .calls
        .iter()
        .filter(|c| c.op == "MakeMove" && c.outcome == Outcome::Ok)
    {
        if let (Some(game), Some(ply)) = (&c.game, c.ply) {
            acked_at.entry(game).or_default().push((c.end_ms, ply + 1));
        }
    }
    let mut stale = 0;
    for c in history
        .calls
        .iter()
        .filter(|c| c.op == "GetGame" && c.outcome == Outcome::Ok)
    {
        let (Some(game), Some(seen)) = (&c.game, c.answer_ply) else {
            continue;
        };
        let due = acked_at
            .get(game.as_str())
            .into_iter()
            .flatten()
            .filter(|(acked, _)| *acked < c.start_ms)
            .map(|(_, ply)| *ply)
            .max();
        if let Some(due) = due
            && seen < due
        {
            stale += 1;
            if stale <= 10 {
                findings.push(format!(
                    "game {game} read at ply {seen} by {} after ply {due} was acknowledged (a stale answer)",
                    c.worker
                ));
            }
        }
    }
    if stale > 10 {
        findings.push(format!("{} more stale reads", stale - 10));
    }

    // Watchers.
    let (mut watch_events, mut reconnects) = (0, 0);
    for w in &history.watches {
        let Some(final_moves) = finals.get(w.game.as_str()).and_then(|f| f.moves.as_ref()) else {
            continue;
        };
        let mut log: Vec<String> = Vec::new();
        let mut fresh = true; // the next event should be a snapshot
        for e in &w.events {
            if e.kind < 0 {
                reconnects += 1;
                fresh = true;
                continue;
            }
            watch_events += 1;
            if e.moves.len() != e.ply as usize {
                findings.push(format!(
                    "watch {}: an event's ply {} with {} moves",
                    w.game,
                    e.ply,
                    e.moves.len()
                ));
            }
            if fresh {
                if e.kind != 1 {
                    findings.push(format!(
                        "watch {}: a stream began with kind {}",
                        w.game, e.kind
                    ));
                }
                if e.moves.len() < log.len() || e.moves[..log.len()] != log[..] {
                    findings.push(format!(
                        "watch {}: a snapshot after reconnecting went back or forked ({} moves seen, {} in the snapshot)",
                        w.game,
                        log.len(),
                        e.moves.len()
                    ));
                }
                fresh = false;
            } else if e.kind == 2 {
                if e.moves.len() != log.len() + 1 {
                    findings.push(format!(
                        "watch {}: a move event for ply {} after ply {} (gap or duplicate)",
                        w.game,
                        e.moves.len(),
                        log.len()
                    ));
                } else if e.moves[..log.len()] != log[..] {
                    findings.push(format!("watch {}: a move event forked the log", w.game));
                }
            } else if e.moves.len() != log.len() && e.kind != 5 {
                findings.push(format!(
                    "watch {}: event kind {} changed the moves",
                    w.game, e.kind
                ));
            }
            log.clone_from(&e.moves);
            if log.len() > final_moves.len() || final_moves[..log.len()] != log[..] {
                findings.push(format!(
                    "watch {}: its log ({} moves) is not a prefix of the final game",
                    w.game,
                    log.len()
                ));
                break;
            }
        }
    }

    // Clocks.
    let mut flag_late_max = 0;
    let watched: HashMap<&str, &crate::history::WatchLog> = history
        .watches
        .iter()
        .map(|w| (w.game.as_str(), w))
        .collect();
    let timed = |due: u64| {
        !(window.outage
            && due + FLAG_SLACK_MS >= window.fault_ms
            && due <= window.heal_ms + OUTAGE_GRACE_MS)
    };
    let mut seen_flags = HashSet::new();
    for flag in &history.flags {
        seen_flags.insert(flag.game.as_str());
        // A flag due after the load ended may fall after the final reads: not checked.
        if flag.due_ms + FLAG_SLACK_MS >= history.load_ended_ms {
            continue;
        }
        match finals.get(flag.game.as_str()) {
            Some(f) if f.moves.is_some() => {
                if !f.over || !(f.rule == 3 || f.rule == 11) {
                    findings.push(format!(
                        "game {} did not lose on time (rule {})",
                        flag.game, f.rule
                    ));
                }
            }
            _ => continue,
        }
        if let Some(store) = &store {
            let n = store
                .get(&flag.game)
                .map_or(0, |e| e.iter().filter(|e| e.kind == "flag_fell").count());
            if n != 1 {
                findings.push(format!("game {}: {n} flag events stored, not 1", flag.game));
            }
        }
        let polled = flag.polled_over_ms.map(|t| t.saturating_sub(flag.due_ms));
        let watched_over = watched
            .get(flag.game.as_str())
            .and_then(|w| w.events.iter().find(|e| e.over))
            .map(|e| e.at_ms.saturating_sub(flag.due_ms));
        let late = match (polled, watched_over) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if timed(flag.due_ms) {
            match late {
                Some(l) if l > FLAG_SLACK_MS => findings.push(format!(
                    "game {}: its flag was seen {l} ms after it was due",
                    flag.game
                )),
                None => findings.push(format!("game {}: its flag was never seen fall", flag.game)),
                _ => {}
            }
        }
        if let Some(l) = late {
            flag_late_max = flag_late_max.max(l);
        }
    }

    Report {
        scenario,
        figures: figures(history, window),
        moves_acked: acked,
        moves_unknown_applied: unknown_applied,
        moves_unknown_absent: unknown_absent,
        watch_events,
        watch_reconnects: reconnects,
        flags: seen_flags.len(),
        flag_late_max_ms: flag_late_max,
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Call, Final, Seen, WatchLog};

    const GAME: &str = "00000000-0000-0000-0000-000000000001";
    const WINDOW: Window = Window {
        fault_ms: 1_000,
        heal_ms: 2_000,
        outage: false,
    };

    fn mv(key: &str, ply: u32, uci: &str, outcome: Outcome, at: u64) -> Call {
        Call {
            worker: "mover-0".into(),
            op: "MakeMove".into(),
            game: Some(GAME.into()),
            key: Some(key.into()),
            ply: Some(ply),
            mv: Some(uci.into()),
            start_ms: at,
            end_ms: at + 5,
            outcome,
            error: None,
            answer_ply: (outcome == Outcome::Ok).then_some(ply + 1),
        }
    }

    fn stored(moves: &[(&str, &str)]) -> Store {
        let mut events = vec![Stored {
            kind: "created".into(),
            uci: None,
            key: None,
        }];
        events.extend(moves.iter().map(|(key, uci)| Stored {
            kind: "move".into(),
            uci: Some((*uci).into()),
            key: Some((*key).into()),
        }));
        HashMap::from([(GAME.to_owned(), events)])
    }

    /// Two moves acknowledged, a third failed for certain; the game and the store agree.
    fn good() -> (History, Store) {
        let history = History {
            started_ms: 0,
            load_ended_ms: 10_000,
            calls: vec![
                mv("k1", 0, "e2e4", Outcome::Ok, 100),
                mv("k2", 1, "e7e5", Outcome::Ok, 200),
                mv("k3", 2, "g1f3", Outcome::Failed, 300),
            ],
            watches: vec![WatchLog {
                game: GAME.into(),
                events: vec![
                    seen(1, &[]),
                    seen(2, &["e2e4"]),
                    seen(-1, &[]),
                    seen(1, &["e2e4", "e7e5"]),
                ],
            }],
            flags: Vec::new(),
            finals: vec![Final {
                game: GAME.into(),
                moves: Some(vec!["e2e4".into(), "e7e5".into()]),
                over: false,
                rule: 0,
            }],
        };
        (history, stored(&[("k1", "e2e4"), ("k2", "e7e5")]))
    }

    fn seen(kind: i32, moves: &[&str]) -> Seen {
        Seen {
            at_ms: 0,
            kind,
            ply: moves.len() as u32,
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
            over: false,
        }
    }

    fn findings(history: &History, store: &Store) -> Vec<String> {
        check(history, Some(store), "test", WINDOW).findings
    }

    #[test]
    fn a_consistent_history_has_no_findings() {
        let (history, store) = good();
        assert_eq!(findings(&history, &store), Vec::<String>::new());
    }

    #[test]
    fn a_lost_acknowledged_move_is_found() {
        let (mut history, _) = good();
        history.finals[0].moves = Some(vec!["e2e4".into()]);
        let found = findings(&history, &stored(&[("k1", "e2e4")]));
        assert!(
            found.iter().any(|f| f.contains("acknowledged move e7e5")),
            "{found:?}"
        );
    }

    #[test]
    fn a_definitely_failed_move_in_the_store_is_found() {
        let (mut history, _) = good();
        history.finals[0].moves = Some(vec!["e2e4".into(), "e7e5".into(), "g1f3".into()]);
        let store = stored(&[("k1", "e2e4"), ("k2", "e7e5"), ("k3", "g1f3")]);
        let found = findings(&history, &store);
        assert!(
            found.iter().any(|f| f.contains("definite error")),
            "{found:?}"
        );
    }

    #[test]
    fn a_key_stored_twice_is_found() {
        let (history, _) = good();
        let store = stored(&[("k1", "e2e4"), ("k2", "e7e5"), ("k2", "e7e5")]);
        let found = findings(&history, &store);
        assert!(
            found.iter().any(|f| f.contains("stored 2 times")),
            "{found:?}"
        );
    }

    #[test]
    fn a_watcher_gap_or_duplicate_is_found() {
        let (mut history, store) = good();
        // A move event for ply 2 straight after the snapshot at ply 0: a gap.
        history.watches[0].events = vec![seen(1, &[]), seen(2, &["e2e4", "e7e5"])];
        let found = findings(&history, &store);
        assert!(
            found.iter().any(|f| f.contains("gap or duplicate")),
            "{found:?}"
        );
        // A snapshot after reconnecting that goes back.
        history.watches[0].events = vec![seen(1, &["e2e4"]), seen(-1, &[]), seen(1, &[])];
        let found = findings(&history, &store);
        assert!(found.iter().any(|f| f.contains("went back")), "{found:?}");
    }

    #[test]
    fn a_stale_read_is_found() {
        let (mut history, store) = good();
        let mut read = mv("r", 0, "", Outcome::Ok, 500);
        read.op = "GetGame".into();
        read.answer_ply = Some(1); // ply 2 was acknowledged at 205 ms
        history.calls.push(read);
        let found = findings(&history, &store);
        assert!(found.iter().any(|f| f.contains("stale")), "{found:?}");
    }

    #[test]
    fn a_flag_that_never_fell_or_fell_twice_is_found() {
        let (mut history, mut store) = good();
        history.flags.push(crate::history::FlagGame {
            game: GAME.into(),
            due_ms: 3_000,
            polled_over_ms: None,
        });
        let found = findings(&history, &store);
        assert!(
            found.iter().any(|f| f.contains("did not lose on time")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|f| f.contains("never seen fall")),
            "{found:?}"
        );
        history.finals[0].over = true;
        history.finals[0].rule = 3;
        history.flags[0].polled_over_ms = Some(3_100);
        for _ in 0..2 {
            store.get_mut(GAME).unwrap().push(Stored {
                kind: "flag_fell".into(),
                uci: None,
                key: None,
            });
        }
        let found = findings(&history, &store);
        assert!(
            found.iter().any(|f| f.contains("flag recorded 2 times")),
            "{found:?}"
        );
    }
}
