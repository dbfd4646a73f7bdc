//! Durable storage of game event logs behind the [`GameStore`] trait. The default is an
//! embedded single-file ACID store (redb): an append returns only after the transaction is
//! committed to disk, so an acknowledged move survives a crash.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::GameId;
use crate::session::Event;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("storage failure: {0}")]
    Backend(String),
    #[error("game {0} already exists")]
    Exists(GameId),
    #[error("game {0} not found")]
    NotFound(GameId),
    /// Another writer appended first: the caller's view of the log is stale.
    #[error("event {expected} of game {id} was already written (the log has {actual})")]
    Conflict {
        id: GameId,
        expected: u32,
        actual: u32,
    },
    #[error("corrupt stored event: {0}")]
    Corrupt(String),
}

/// Append-only event logs, one per game. Implementations are blocking; the service calls
/// them from a blocking thread.
pub trait GameStore: Send + Sync + 'static {
    /// Stores a new game's first event.
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError>;
    /// Appends event number `seq` (0-based); fails with `Conflict` unless the log holds
    /// exactly `seq` events. Returns once the event is durable.
    fn append(&self, id: GameId, seq: u32, event: &Event) -> Result<(), StoreError>;
    /// The whole log, or `None` for an unknown game.
    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError>;
    /// Number of games stored.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the store tests count games so far")
    )]
    fn count(&self) -> Result<u64, StoreError>;
}

const EVENTS: TableDefinition<'_, (u128, u32), &str> = TableDefinition::new("events");
const GAMES: TableDefinition<'_, u128, u32> = TableDefinition::new("games");

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// The embedded store: one redb file.
pub struct RedbStore {
    db: Database,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").finish_non_exhaustive()
    }
}

impl RedbStore {
    /// Opens or creates the store file (its directory must exist).
    pub fn open(path: &Path) -> Result<RedbStore, StoreError> {
        let db = Database::create(path)
            .map_err(|e| StoreError::Backend(format!("{}: {e}", path.display())))?;
        let txn = db.begin_write().map_err(backend)?;
        {
            txn.open_table(EVENTS).map_err(backend)?;
            txn.open_table(GAMES).map_err(backend)?;
        }
        txn.commit().map_err(backend)?;
        Ok(RedbStore { db })
    }

    fn write(&self, id: GameId, seq: u32, event: &Event, new: bool) -> Result<(), StoreError> {
        let json = serde_json::to_string(event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let mut games = txn.open_table(GAMES).map_err(backend)?;
            let actual = games.get(id.as_u128()).map_err(backend)?.map(|v| v.value());
            match (new, actual) {
                (true, Some(_)) => return Err(StoreError::Exists(id)),
                (false, None) => return Err(StoreError::NotFound(id)),
                (false, Some(n)) if n != seq => {
                    return Err(StoreError::Conflict {
                        id,
                        expected: seq,
                        actual: n,
                    });
                }
                _ => {}
            }
            let mut events = txn.open_table(EVENTS).map_err(backend)?;
            events
                .insert((id.as_u128(), seq), json.as_str())
                .map_err(backend)?;
            games.insert(id.as_u128(), seq + 1).map_err(backend)?;
        }
        // redb's default durability is immediate: commit returns after fsync.
        txn.commit().map_err(backend)
    }
}

impl GameStore for RedbStore {
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
        self.write(id, 0, first, true)
    }

    fn append(&self, id: GameId, seq: u32, event: &Event) -> Result<(), StoreError> {
        self.write(id, seq, event, false)
    }

    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let games = txn.open_table(GAMES).map_err(backend)?;
        let Some(n) = games.get(id.as_u128()).map_err(backend)?.map(|v| v.value()) else {
            return Ok(None);
        };
        let events = txn.open_table(EVENTS).map_err(backend)?;
        let mut out = Vec::with_capacity(n as usize);
        for row in events
            .range((id.as_u128(), 0)..(id.as_u128(), n))
            .map_err(backend)?
        {
            let (_, v) = row.map_err(backend)?;
            let ev: Event =
                serde_json::from_str(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            out.push(ev);
        }
        if out.len() != n as usize {
            return Err(StoreError::Corrupt(format!(
                "game {id}: {} of {n} events present",
                out.len()
            )));
        }
        Ok(Some(out))
    }

    fn count(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let games = txn.open_table(GAMES).map_err(backend)?;
        games.len().map_err(backend)
    }
}

/// A store in memory, for tests and `--store memory`: nothing survives a restart.
#[derive(Debug, Default)]
pub struct MemoryStore {
    games: Mutex<HashMap<GameId, Vec<Event>>>,
}

impl GameStore for MemoryStore {
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
        let mut games = self.games.lock().map_err(backend)?;
        if games.contains_key(&id) {
            return Err(StoreError::Exists(id));
        }
        games.insert(id, vec![first.clone()]);
        Ok(())
    }

    fn append(&self, id: GameId, seq: u32, event: &Event) -> Result<(), StoreError> {
        let mut games = self.games.lock().map_err(backend)?;
        let log = games.get_mut(&id).ok_or(StoreError::NotFound(id))?;
        if log.len() != seq as usize {
            return Err(StoreError::Conflict {
                id,
                expected: seq,
                actual: log.len() as u32,
            });
        }
        log.push(event.clone());
        Ok(())
    }

    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
        Ok(self.games.lock().map_err(backend)?.get(&id).cloned())
    }

    fn count(&self) -> Result<u64, StoreError> {
        Ok(self.games.lock().map_err(backend)?.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(store: &dyn GameStore) {
        let id = GameId::new();
        let created = Event::Created {
            start_fen: String::new(),
            time_control: None,
            white: "w".into(),
            black: "b".into(),
            at_ms: 1,
        };
        store.create(id, &created).unwrap();
        assert!(matches!(
            store.create(id, &created),
            Err(StoreError::Exists(_))
        ));
        let mv = Event::Move {
            uci: "e2e4".into(),
            offer_draw: false,
            at_ms: 2,
        };
        store.append(id, 1, &mv).unwrap();
        assert!(matches!(
            store.append(id, 1, &mv),
            Err(StoreError::Conflict { actual: 2, .. })
        ));
        assert_eq!(store.load(id).unwrap().unwrap(), vec![created, mv]);
        assert!(store.load(GameId::new()).unwrap().is_none());
        assert!(matches!(
            store.append(
                GameId::new(),
                1,
                &Event::Resigned {
                    side: crate::session::Side::White,
                    at_ms: 3
                }
            ),
            Err(StoreError::NotFound(_))
        ));
        assert_eq!(store.count().unwrap(), 1);
    }

    #[test]
    fn memory_store() {
        exercise(&MemoryStore::default());
    }

    #[test]
    fn redb_store_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("chess-store-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.redb");
        let _ = std::fs::remove_file(&path);
        {
            let store = RedbStore::open(&path).unwrap();
            exercise(&store);
        }
        let store = RedbStore::open(&path).unwrap();
        assert_eq!(store.count().unwrap(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
