//! The embedded store: one redb file. An append returns only after the transaction is
//! committed to disk, so an acknowledged move survives a crash.

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::{GameStore, StoreError, backend};
use crate::GameId;
use crate::session::Event;

const EVENTS: TableDefinition<'_, (u128, u32), &str> = TableDefinition::new("events");
const GAMES: TableDefinition<'_, u128, u32> = TableDefinition::new("games");

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

    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        _flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        // One process owns a redb file: its flag timers cover every game it has loaded.
        self.write(id, seq, event, false)
    }

    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
        self.load_from(id, 0)
    }

    fn load_from(&self, id: GameId, from: u32) -> Result<Option<Vec<Event>>, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let games = txn.open_table(GAMES).map_err(backend)?;
        let Some(n) = games.get(id.as_u128()).map_err(backend)?.map(|v| v.value()) else {
            return Ok(None);
        };
        let from = from.min(n);
        let events = txn.open_table(EVENTS).map_err(backend)?;
        let mut out = Vec::with_capacity((n - from) as usize);
        for row in events
            .range((id.as_u128(), from)..(id.as_u128(), n))
            .map_err(backend)?
        {
            let (_, v) = row.map_err(backend)?;
            let ev: Event =
                serde_json::from_str(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            out.push(ev);
        }
        if out.len() != (n - from) as usize {
            return Err(StoreError::Corrupt(format!(
                "game {id}: {} of events {from}..{n} present",
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

    fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let games = txn.open_table(GAMES).map_err(backend)?;
        let first = match after {
            Some(a) => match a.as_u128().checked_add(1) {
                Some(next) => next,
                None => return Ok(Vec::new()),
            },
            None => 0,
        };
        let rows = games.range(first..).map_err(backend)?;
        let mut out = Vec::with_capacity(limit.min(1024));
        for row in rows.take(limit) {
            let (k, _) = row.map_err(backend)?;
            out.push(GameId::from_u128(k.value()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redb_store_passes_the_conformance_suite_and_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("chess-store-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.redb");
        let _ = std::fs::remove_file(&path);
        let count = {
            let store = RedbStore::open(&path).unwrap();
            crate::store::conformance::run(&store);
            store.count().unwrap()
        };
        let store = RedbStore::open(&path).unwrap();
        assert_eq!(store.count().unwrap(), count);
        assert!(count > 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
