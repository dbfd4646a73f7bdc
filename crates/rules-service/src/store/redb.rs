//! The embedded store: one redb file. An append returns only after the transaction is
//! committed to disk, so an acknowledged move survives a crash.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::{GameStore, StoreError, backend};
use crate::GameId;
use crate::event::Event;

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
    /// The store's file name inside a data directory.
    pub const FILE_NAME: &'static str = "games.redb";

    /// The store file of data directory `dir`.
    pub fn path_in(dir: &std::path::Path) -> std::path::PathBuf {
        dir.join(Self::FILE_NAME)
    }

    /// Opens the store file, or creates it (its directory must exist), after verifying it
    /// (see [`open_verified`]).
    pub fn open(path: &Path) -> Result<RedbStore, StoreError> {
        let db = open_verified(path)?;
        let txn = db.begin_write().map_err(backend)?;
        {
            txn.open_table(EVENTS).map_err(backend)?;
            txn.open_table(GAMES).map_err(backend)?;
        }
        txn.commit().map_err(backend)?;
        mark_created(path)?;
        Ok(RedbStore { db })
    }

    /// Writes `events` as numbers `seq`.. of game `id` (a new game when `new`) in one
    /// transaction.
    fn write(&self, id: GameId, seq: u32, events: &[Event], new: bool) -> Result<(), StoreError> {
        let jsons = events
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
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
            let mut table = txn.open_table(EVENTS).map_err(backend)?;
            for (n, json) in (seq..).zip(&jsons) {
                table
                    .insert((id.as_u128(), n), json.as_str())
                    .map_err(backend)?;
            }
            games
                .insert(id.as_u128(), seq + jsons.len() as u32)
                .map_err(backend)?;
        }
        // redb's default durability is immediate: commit returns after fsync. A failed
        // commit may have reached the disk in part: its outcome is unknown.
        txn.commit()
            .map_err(|e| StoreError::Unconfirmed(e.to_string()))
    }
}

/// The marker written beside a store file once the store is created (`games.redb.created`):
/// while it exists, a missing or empty store file is damage, not a new store.
fn created_marker(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".created");
    path.with_file_name(name)
}

/// A [`StoreError::Damaged`] naming the file, what is wrong and how to recover.
fn damaged(path: &Path, what: &str) -> StoreError {
    let marker = created_marker(path);
    StoreError::Damaged(format!(
        "the game store {} is damaged: {what}. The service does not start on a damaged store. \
         To recover: stop every process using it and keep a copy of the data directory; then \
         either restore {} from a backup, or, to start over without the stored games, move {} \
         and {} out of the data directory",
        path.display(),
        path.display(),
        path.display(),
        marker.display()
    ))
}

/// Opens (or creates) the redb file and verifies it before anything is served: a store file
/// that is missing or empty where [`created_marker`] shows a store was created is refused, and
/// an existing file is opened with redb's integrity check (every page checksum of the
/// committed trees), so damage is reported as [`StoreError::Damaged`] instead of a panic at
/// start or on a later read. A panic inside redb while opening is caught and reported the
/// same way.
fn open_verified(path: &Path) -> Result<Database, StoreError> {
    let created = created_marker(path).exists();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if created {
                return Err(damaged(
                    path,
                    "the file is missing, but a store was created here",
                ));
            }
        }
        Err(e) => return Err(damaged(path, &format!("it cannot be read ({e})"))),
        Ok(m) if !m.is_file() => return Err(damaged(path, "it is not a regular file")),
        // Empty without the marker: a creation that stopped before its first commit.
        Ok(m) if m.len() == 0 && created => {
            return Err(damaged(
                path,
                "the file is empty (0 bytes), but a store was created here",
            ));
        }
        Ok(_) => {}
    }
    let opened = std::panic::catch_unwind(|| {
        let mut builder = Database::builder();
        builder.set_check_integrity_on_open(true);
        builder.create(path)
    });
    match opened {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(e)) => Err(damaged(path, &e.to_string())),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(damaged(path, &format!("reading it failed ({text})")))
        }
    }
}

/// Writes [`created_marker`] (once; it is durable before this returns).
fn mark_created(path: &Path) -> Result<(), StoreError> {
    let marker = created_marker(path);
    if marker.exists() {
        return Ok(());
    }
    let write = || -> std::io::Result<()> {
        let f = std::fs::File::create(&marker)?;
        std::io::Write::write_all(
            &mut &f,
            b"chess-rules-service created the game store beside this file. While this file \
              exists, a missing or empty store is reported as damage. Remove it only together \
              with the store.\n",
        )?;
        f.sync_all()?;
        if let Some(dir) = marker.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| StoreError::Backend(format!("cannot write {}: {e}", marker.display())))
}

impl GameStore for RedbStore {
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
        self.write(id, 0, std::slice::from_ref(first), true)
    }

    fn create_with_log(
        &self,
        id: GameId,
        events: &[Event],
        _flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        if events.is_empty() {
            return Err(StoreError::Corrupt(format!(
                "game {id}: no events to store"
            )));
        }
        self.write(id, 0, events, true)
    }

    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        _flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        // One process owns a redb file: its flag timers cover every game it has loaded.
        self.write(id, seq, std::slice::from_ref(event), false)
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
        let path = RedbStore::path_in(&dir);
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
