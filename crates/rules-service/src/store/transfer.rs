//! Moving games between stores (`chess store export` / `chess store import`): one JSON line
//! per game with its whole event log, `{"game_id": "...", "events": [...]}`. Import replays
//! every log and checks it as CreateGame checks a new game before writing it (a game refused
//! is skipped and reported), writes each game in one transaction, and skips a game the target
//! already holds with the same log, so an interrupted import can simply be run again.

use std::io::{BufRead, Read, Write};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{GameStore, MemoryStore, PostgresOptions, PostgresStore, RedbStore, StoreError};
use crate::GameId;
use crate::event::Event;
use crate::session::{Session, check_player_name};
use chess_proto::quote;
use chess_wire::TimeControl;

/// Games read from the store per page while exporting.
const PAGE: usize = 500;
/// The longest input line accepted (a game of 2048 plies is about 150 KB).
const MAX_LINE: usize = 16 << 20;

#[derive(Serialize, Deserialize)]
struct Record {
    game_id: String,
    events: Vec<Event>,
}

/// Where a store is: `redb:PATH` (or a path: a `.redb` file, or a data directory holding
/// `games.redb`), `postgres://...` / `postgresql://...`, or `memory:` (empty, for tests).
/// A redb file that does not exist is created only when `create` is set.
pub async fn open_url(url: &str, create: bool) -> Result<Arc<dyn GameStore>, String> {
    let url = url.trim();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = PostgresStore::connect(&PostgresOptions::new(url))
            .await
            .map_err(|e| e.to_string())?;
        return Ok(Arc::new(store));
    }
    if url == "memory:" {
        return Ok(Arc::new(MemoryStore::default()));
    }
    let path = url.strip_prefix("redb:").unwrap_or(url);
    let path = path.strip_prefix("//").unwrap_or(path);
    if path.is_empty() {
        return Err(format!(
            "{url:?} is not a store: use redb:PATH, a .redb file or data directory, or postgres://user:password@host:port/database"
        ));
    }
    let mut path = std::path::PathBuf::from(path);
    if path.is_dir() {
        path = super::RedbStore::path_in(&path);
    }
    if !create && !path.exists() {
        return Err(format!("no game store at {}", path.display()));
    }
    let store = RedbStore::open(&path).map_err(|e| {
        format!("{e} (is a rules service using it? redb files are opened by one process at a time)")
    })?;
    Ok(Arc::new(store))
}

/// Writes every game of `store` to `out`; returns the number of games written.
pub fn export(store: &dyn GameStore, out: &mut dyn Write) -> Result<u64, String> {
    let mut after = None;
    let mut written = 0;
    loop {
        let ids = store.list(after, PAGE).map_err(|e| e.to_string())?;
        let Some(last) = ids.last().copied() else {
            return Ok(written);
        };
        for id in ids {
            // A game listed is never removed: `None` would mean a broken store.
            let events = store
                .load(id)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("game {id} is listed but has no events"))?;
            let line = serde_json::to_string(&Record {
                game_id: id.to_string(),
                events,
            })
            .map_err(|e| e.to_string())?;
            writeln!(out, "{line}").map_err(|e| format!("cannot write: {e}"))?;
            written += 1;
        }
        after = Some(last);
    }
}

/// What an import did: games written, games already there, and the lines skipped (with
/// their numbers and why). `stopped` says why it ended early (a store that failed or input
/// that could not be read), after the games counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Games written.
    pub games: u64,
    /// Games the target already held with the same events.
    pub unchanged: u64,
    /// Lines not imported: `line 2: not a game (...)`.
    pub skipped: Vec<String>,
    /// Why the import stopped before the end of its input, if it did.
    pub stopped: Option<String>,
}

impl Imported {
    /// Whether every game of the input is now in the store.
    pub fn complete(&self) -> bool {
        self.skipped.is_empty() && self.stopped.is_none()
    }
}

impl std::fmt::Display for Imported {
    /// `2 game(s) written, 1 already there (unchanged), 1 line(s) skipped: line 3: ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} game(s) written, {} already there (unchanged), {} line(s) skipped",
            self.games,
            self.unchanged,
            self.skipped.len()
        )?;
        const SHOWN: usize = 20;
        for line in self.skipped.iter().take(SHOWN) {
            write!(f, "\n  skipped {line}")?;
        }
        if self.skipped.len() > SHOWN {
            write!(f, "\n  ... and {} more", self.skipped.len() - SHOWN)?;
        }
        if let Some(why) = &self.stopped {
            write!(f, "\nstopped early: {why}")?;
        }
        Ok(())
    }
}

/// How far past this machine's clock an imported event may be dated (clocks differ a
/// little between machines; a game dated in the future would never flag).
const FUTURE_SLACK_MS: u64 = 60_000;

/// The checks an imported game passes beyond replaying: those CreateGame makes (names, time
/// control, keys), events in time order, none dated in the future.
fn check_imported(events: &[Event], now_ms: u64) -> Result<(), String> {
    if let Some(Event::Created {
        white,
        black,
        time_control,
        ..
    }) = events.first()
    {
        for (side, name) in [("white", white), ("black", black)] {
            check_player_name(name).map_err(|e| format!("{side}: {e}"))?;
        }
        if let Some(tc) = time_control {
            TimeControl::new(tc.periods.clone()).map_err(|e| format!("time_control: {e}"))?;
        }
    }
    let mut last = 0;
    for (seq, ev) in events.iter().enumerate() {
        let at = ev.at_ms();
        if at < last {
            return Err(format!(
                "event {seq} is dated {at} ms, before the event ahead of it ({last} ms)"
            ));
        }
        if at > now_ms.saturating_add(FUTURE_SLACK_MS) {
            return Err(format!(
                "event {seq} is dated {at} ms since 1970, in the future (now: {now_ms})"
            ));
        }
        if let Some(key) = ev.request_id() {
            chess_proto::request_id_from_text("request_id", key)
                .map_err(|e| format!("event {seq}: {}", e.description))?;
        }
        last = at;
    }
    Ok(())
}

/// Reads games written by [`export`] from `input` into `store`, each game in one
/// transaction (an interrupted import leaves no half-written game, and can be run again).
/// A line that is not a game, or a game the rules or CreateGame's checks refuse, is skipped
/// and reported; a failing store or unreadable input stops the import.
pub fn import(store: &dyn GameStore, input: &mut dyn BufRead) -> Imported {
    let mut done = Imported::default();
    let mut line = String::new();
    let mut number = 0u64;
    let now = crate::event::now_ms();
    loop {
        line.clear();
        let n = match (&mut *input).take(MAX_LINE as u64 + 1).read_line(&mut line) {
            Ok(n) => n,
            Err(e) => {
                done.stopped = Some(format!("line {}: cannot read: {e}", number + 1));
                return done;
            }
        };
        if n == 0 {
            return done;
        }
        number += 1;
        if line.len() > MAX_LINE {
            // The rest of an over-long line cannot be told from the next line.
            done.stopped = Some(format!("line {number}: longer than {MAX_LINE} bytes"));
            return done;
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match import_line(store, text, now) {
            Ok(Written::New) => done.games += 1,
            Ok(Written::Unchanged) => done.unchanged += 1,
            Err(Failure::Skip(why)) => done.skipped.push(format!("line {number}: {why}")),
            Err(Failure::Stop(why)) => {
                done.stopped = Some(format!("line {number}: {why}"));
                return done;
            }
        }
    }
}

enum Written {
    New,
    Unchanged,
}

enum Failure {
    /// This line is not imported; the next may be.
    Skip(String),
    /// The store failed: nothing more can be imported.
    Stop(String),
}

fn import_line(store: &dyn GameStore, text: &str, now: u64) -> Result<Written, Failure> {
    let record: Record = serde_json::from_str(text)
        .map_err(|e| Failure::Skip(format!("not a game ({e}): {}", quote(text))))?;
    let id: GameId = record
        .game_id
        .parse()
        .map_err(|e| Failure::Skip(format!("game_id: {e}")))?;
    let refused = |e: String| Failure::Skip(format!("game {id}: {e}"));
    let session = Session::replay(&record.events).map_err(|e| refused(e.to_string()))?;
    check_imported(&record.events, now).map_err(refused)?;
    match store.create_with_log(id, &record.events, session.flag_deadline_ms()) {
        Ok(()) => Ok(Written::New),
        Err(StoreError::Exists(_)) => {
            let held = store
                .load(id)
                .map_err(|e| Failure::Stop(format!("game {id}: {e}")))?;
            if held.as_ref() == Some(&record.events) {
                Ok(Written::Unchanged)
            } else {
                Err(refused("already in the store with other events".into()))
            }
        }
        Err(e) => Err(Failure::Stop(format!("game {id}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Side;

    fn game(store: &dyn GameStore, moves: &[&str], resign: bool) -> GameId {
        let id = GameId::new();
        store
            .create(
                id,
                &Event::Created {
                    start_fen: String::new(),
                    time_control: None,
                    white: "A".into(),
                    black: "B".into(),
                    at_ms: 1,
                    illegal_moves: Default::default(),
                    takebacks: false,
                    request_id: None,
                },
            )
            .unwrap();
        let mut seq = 1;
        for m in moves {
            let ev = Event::Move {
                uci: (*m).into(),
                offer_draw: false,
                at_ms: 2,
                request_id: None,
                dead: None,
            };
            store.append(id, seq, &ev, None).unwrap();
            seq += 1;
        }
        if resign {
            let ev = Event::Resigned {
                side: Side::White,
                at_ms: 3,
                request_id: None,
            };
            store.append(id, seq, &ev, None).unwrap();
        }
        id
    }

    #[test]
    fn round_trip_and_reimport() {
        let from = MemoryStore::default();
        let a = game(&from, &["e2e4", "e7e5"], false);
        let b = game(&from, &[], true);
        let mut out = Vec::new();
        assert_eq!(export(&from, &mut out).unwrap(), 2);
        let to = MemoryStore::default();
        let done = import(&to, &mut out.as_slice());
        assert_eq!((done.games, done.unchanged), (2, 0));
        assert!(done.complete(), "{done}");
        for id in [a, b] {
            assert_eq!(to.load(id).unwrap(), from.load(id).unwrap());
        }
        // Again: nothing changes.
        let again = import(&to, &mut out.as_slice());
        assert_eq!((again.games, again.unchanged), (0, 2));
        assert!(again.complete());
    }

    /// One exported line with the `Created` event changed by `edit`.
    fn line_with(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let from = MemoryStore::default();
        game(&from, &["e2e4"], false);
        let mut out = Vec::new();
        export(&from, &mut out).unwrap();
        let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        edit(&mut v["events"][0]);
        format!("{v}\n")
    }

    fn skipped_reason(line: &str) -> String {
        let to = MemoryStore::default();
        let done = import(&to, &mut line.as_bytes());
        assert_eq!(to.count().unwrap(), 0, "{done}");
        assert_eq!(done.skipped.len(), 1, "{done}");
        done.skipped[0].clone()
    }

    #[test]
    fn bad_lines_are_skipped_and_reported_with_their_number() {
        let to = MemoryStore::default();
        let good = line_with(|_| {});
        let input = format!("{good}\n{{nonsense\n");
        let done = import(&to, &mut input.as_bytes());
        assert_eq!(done.games, 1, "the game before the bad line is written");
        assert_eq!(done.skipped.len(), 1);
        assert!(done.skipped[0].starts_with("line 3: not a game"), "{done}");
        let text = done.to_string();
        assert!(
            text.starts_with("1 game(s) written, 0 already there (unchanged), 1 line(s) skipped"),
            "{text}"
        );
        // A bad line first: the good one after it is still imported.
        let to = MemoryStore::default();
        let input = format!("{{nonsense\n{good}");
        let done = import(&to, &mut input.as_bytes());
        assert_eq!((done.games, done.skipped.len()), (1, 1), "{done}");
        // A long bad line is quoted cut short, with its length.
        let to = MemoryStore::default();
        let long = format!("{{{}", "x".repeat(10_000));
        let done = import(&to, &mut long.as_bytes());
        assert_eq!(done.skipped.len(), 1, "{done}");
        assert!(done.skipped[0].ends_with("...\" (10001 bytes)"), "{done}");
        assert!(done.skipped[0].len() < 300, "{done}");
        // An illegal move: the log does not replay.
        let from = MemoryStore::default();
        game(&from, &["e2e5"], false);
        let mut out = Vec::new();
        export(&from, &mut out).unwrap();
        let why = skipped_reason(std::str::from_utf8(&out).unwrap());
        assert!(why.contains("line 1: game"), "{why}");
        // Same id, other events.
        let first = MemoryStore::default();
        let id = game(&first, &["e2e4"], false);
        let mut out = Vec::new();
        export(&first, &mut out).unwrap();
        let other = MemoryStore::default();
        other
            .create(
                id,
                &Event::Created {
                    start_fen: String::new(),
                    time_control: None,
                    white: "X".into(),
                    black: "Y".into(),
                    at_ms: 9,
                    illegal_moves: Default::default(),
                    takebacks: false,
                    request_id: None,
                },
            )
            .unwrap();
        let done = import(&other, &mut out.as_slice());
        assert!(
            done.skipped[0].contains("already in the store with other events"),
            "{done}"
        );
    }

    #[test]
    fn an_empty_time_control_is_refused_not_a_panic() {
        let line = line_with(|c| c["time_control"] = serde_json::json!({"periods": []}));
        let why = skipped_reason(&line);
        assert!(why.contains("a time control without periods"), "{why}");
    }

    #[test]
    fn imported_games_pass_create_games_checks() {
        type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
        let cases: [(&str, Edit); 6] = [
            (
                "white: player names",
                Box::new(|c| c["white"] = "Ann\nBob".into()),
            ),
            (
                "black: player names",
                Box::new(|c| c["black"] = "x".repeat(5000).into()),
            ),
            (
                "no base time",
                Box::new(|c| {
                    c["time_control"] = serde_json::json!({"periods": [
                        {"moves": 0, "base_ms": 0, "increment_ms": 1000}]})
                }),
            ),
            (
                "at most 8 periods",
                Box::new(|c| {
                    let p = serde_json::json!({"moves": 40, "base_ms": 60000, "increment_ms": 0});
                    c["time_control"] = serde_json::json!({"periods": vec![p; 9]})
                }),
            ),
            (
                "in the future",
                // The year 3500.
                Box::new(|c| c["at_ms"] = 47_335_000_000_000u64.into()),
            ),
            (
                "idempotency key",
                Box::new(|c| c["request_id"] = "two words".into()),
            ),
        ];
        for (expected, edit) in cases {
            let why = skipped_reason(&line_with(edit));
            assert!(why.contains(expected), "{expected}: {why}");
        }
        // Events out of time order.
        let from = MemoryStore::default();
        game(&from, &["e2e4"], false);
        let mut out = Vec::new();
        export(&from, &mut out).unwrap();
        let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        v["events"][0]["at_ms"] = 5.into();
        let why = skipped_reason(&format!("{v}\n"));
        assert!(why.contains("before the event ahead of it"), "{why}");
    }

    /// A store that takes whole games only: an import that wrote a game event by event
    /// could leave half a game behind when killed.
    struct WholeGamesOnly(MemoryStore);

    impl GameStore for WholeGamesOnly {
        fn create(&self, _: GameId, _: &Event) -> Result<(), StoreError> {
            panic!("an import must store a game in one call")
        }
        fn create_with_log(
            &self,
            id: GameId,
            events: &[Event],
            deadline: Option<u64>,
        ) -> Result<(), StoreError> {
            self.0.create_with_log(id, events, deadline)
        }
        fn append(&self, _: GameId, _: u32, _: &Event, _: Option<u64>) -> Result<(), StoreError> {
            panic!("an import must store a game in one call")
        }
        fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
            self.0.load(id)
        }
        fn count(&self) -> Result<u64, StoreError> {
            self.0.count()
        }
        fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
            self.0.list(after, limit)
        }
    }

    #[test]
    fn each_game_is_stored_in_one_call() {
        let from = MemoryStore::default();
        game(&from, &["e2e4", "e7e5", "g1f3"], true);
        let mut out = Vec::new();
        export(&from, &mut out).unwrap();
        let to = WholeGamesOnly(MemoryStore::default());
        let done = import(&to, &mut out.as_slice());
        assert_eq!(done.games, 1, "{done}");
    }
}
