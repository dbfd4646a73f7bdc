//! Durable storage of game event logs behind the [`GameStore`] trait. The default is an
//! embedded single-file ACID store (redb): an append returns only after the transaction is
//! committed to disk, so an acknowledged move survives a crash.

mod memory;
mod redb;

pub use self::memory::MemoryStore;
pub use self::redb::RedbStore;

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
    fn count(&self) -> Result<u64, StoreError>;
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}
