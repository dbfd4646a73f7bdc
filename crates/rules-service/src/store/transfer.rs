//! Moving games between stores (`chess store export` / `chess store import`): one JSON line
//! per game with its whole event log, `{"game_id": "...", "events": [...]}`. Import replays
//! every log before writing it (a log the rules refuse is not imported) and skips a game the
//! target already holds with the same log, so an interrupted import can simply be run again.

use std::io::{BufRead, Read, Write};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{GameStore, MemoryStore, PostgresOptions, PostgresStore, RedbStore, StoreError};
use crate::GameId;
use crate::session::{Event, Session};

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
        path = path.join("games.redb");
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

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Games written.
    pub games: u64,
    /// Games the target already held with the same events.
    pub unchanged: u64,
}

fn cut(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        format!("{}...", text.chars().take(MAX).collect::<String>())
    }
}

/// Reads games written by [`export`] from `input` into `store`. Stops at the first bad line
/// with its number; the games before it are imported.
pub fn import(store: &dyn GameStore, input: &mut dyn BufRead) -> Result<Imported, String> {
    let mut done = Imported::default();
    let mut line = String::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = (&mut *input)
            .take(MAX_LINE as u64 + 1)
            .read_line(&mut line)
            .map_err(|e| format!("line {}: cannot read: {e}", number + 1))?;
        if n == 0 {
            return Ok(done);
        }
        number += 1;
        if line.len() > MAX_LINE {
            return Err(format!("line {number}: longer than {MAX_LINE} bytes"));
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(text)
            .map_err(|e| format!("line {number}: not a game ({e}): {}", cut(text)))?;
        let id: GameId = record
            .game_id
            .parse()
            .map_err(|e| format!("line {number}: game_id: {e}"))?;
        let session = Session::replay(&record.events)
            .map_err(|e| format!("line {number}: game {id}: {e}"))?;
        match store.create(id, &record.events[0]) {
            Ok(()) => {}
            Err(StoreError::Exists(_)) => {
                let held = store.load(id).map_err(|e| e.to_string())?;
                if held.as_ref() == Some(&record.events) {
                    done.unchanged += 1;
                    continue;
                }
                return Err(format!(
                    "line {number}: game {id} is already in the store with other events"
                ));
            }
            Err(e) => return Err(format!("line {number}: game {id}: {e}")),
        }
        let last = record.events.len() - 1;
        for (seq, ev) in record.events.iter().enumerate().skip(1) {
            let deadline = if seq == last {
                session.flag_deadline_ms()
            } else {
                None
            };
            store
                .append(id, seq as u32, ev, deadline)
                .map_err(|e| format!("line {number}: game {id}: {e}"))?;
        }
        done.games += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Side;

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
                },
            )
            .unwrap();
        let mut seq = 1;
        for m in moves {
            let ev = Event::Move {
                uci: (*m).into(),
                offer_draw: false,
                at_ms: 2,
                dead: None,
            };
            store.append(id, seq, &ev, None).unwrap();
            seq += 1;
        }
        if resign {
            let ev = Event::Resigned {
                side: Side::White,
                at_ms: 3,
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
        let done = import(&to, &mut out.as_slice()).unwrap();
        assert_eq!(
            done,
            Imported {
                games: 2,
                unchanged: 0
            }
        );
        for id in [a, b] {
            assert_eq!(to.load(id).unwrap(), from.load(id).unwrap());
        }
        // Again: nothing changes.
        let again = import(&to, &mut out.as_slice()).unwrap();
        assert_eq!(
            again,
            Imported {
                games: 0,
                unchanged: 2
            }
        );
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let to = MemoryStore::default();
        let e = import(&to, &mut "\n{nonsense\n".as_bytes()).unwrap_err();
        assert!(e.starts_with("line 2: not a game"), "{e}");
        // An illegal move: the log does not replay.
        let from = MemoryStore::default();
        game(&from, &["e2e5"], false);
        let mut out = Vec::new();
        export(&from, &mut out).unwrap();
        let e = import(&to, &mut out.as_slice()).unwrap_err();
        assert!(e.contains("line 1: game"), "{e}");
        assert_eq!(to.count().unwrap(), 0);
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
                },
            )
            .unwrap();
        let e = import(&other, &mut out.as_slice()).unwrap_err();
        assert!(e.contains("already in the store with other events"), "{e}");
    }
}
