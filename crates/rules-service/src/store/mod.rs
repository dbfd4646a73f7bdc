//! Durable storage of game event logs behind the [`GameStore`] trait. The default is an
//! embedded single-file ACID store (redb): an append returns only after the transaction is
//! committed to disk, so an acknowledged move survives a crash. PostgreSQL is the shared
//! store: any number of rules-service replicas serve the same games from one database.

pub mod conformance;
mod guard;
mod memory;
mod postgres;
mod redb;
pub mod transfer;

pub(crate) use self::guard::GuardedStore;
pub use self::memory::MemoryStore;
pub use self::postgres::{PostgresOptions, PostgresStore, redact as redact_url};
pub use self::redb::RedbStore;

use crate::GameId;
use crate::event::Event;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The write was not made (it failed before it could reach the store).
    #[error("storage failure: {0}")]
    Backend(String),
    /// The write was sent but its commit was not confirmed (the connection broke, the
    /// commit failed midway): it may or may not be stored.
    #[error("the store did not confirm the write: {0}")]
    Unconfirmed(String),
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
    /// The store file is damaged, or missing or emptied where a store was created: the
    /// service refuses to start on it. The message names the file and how to recover.
    #[error("{0}")]
    Damaged(String),
}

/// Append-only event logs, one per game. Implementations are blocking; the service calls
/// them from a blocking thread (never from an async task).
pub trait GameStore: Send + Sync + 'static {
    /// Stores a new game's first event.
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError>;
    /// Appends event number `seq` (0-based); fails with `Conflict` unless the log holds
    /// exactly `seq` events. Returns once the event is durable. `flag_deadline_ms` is when
    /// the side to move's flag falls after this event (`None`: no clock running), kept by
    /// shared stores so that any replica can record a flag fall on time.
    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError>;
    /// Stores a whole game, its log of one or more events, in one transaction: after a
    /// crash the store holds all of it or none of it (`chess store import`). Fails with
    /// `Exists` when the game is there already. `flag_deadline_ms` is as for `append`, after
    /// the last event.
    fn create_with_log(
        &self,
        id: GameId,
        events: &[Event],
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError>;
    /// The whole log, or `None` for an unknown game.
    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError>;
    /// The events from number `from` on (empty when the log has no more), or `None` for an
    /// unknown game.
    fn load_from(&self, id: GameId, from: u32) -> Result<Option<Vec<Event>>, StoreError> {
        Ok(self
            .load(id)?
            .map(|events| events.into_iter().skip(from as usize).collect()))
    }
    /// Number of games stored.
    fn count(&self) -> Result<u64, StoreError>;
    /// Up to `limit` game ids after `after` (all from the first when `None`), in id order:
    /// a stable order for paging through every game.
    fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError>;
    /// Whether other processes write to this store too, so that a cached game must be
    /// refreshed from the store before each use.
    fn shared(&self) -> bool {
        false
    }
    /// Games whose flag has fallen by `now_ms` without a recorded flag fall (at most
    /// `limit`), for shared stores whose games may have been left by a replica that died.
    fn flags_due(&self, _now_ms: u64, _limit: usize) -> Result<Vec<GameId>, StoreError> {
        Ok(Vec::new())
    }
    /// A feed of changes made by other processes, for shared stores (called once).
    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<Change>> {
        None
    }
    /// Damage found while serving, if any: the service then reports `NOT_SERVING`.
    fn damage(&self) -> Option<String> {
        None
    }
}

/// A change another process made to a shared store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The game's log now holds `events` events.
    Appended { id: GameId, events: u32 },
    /// Changes may have been missed (the notification connection was lost or has just been
    /// made again): every game in use must be read again.
    Resync,
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}
