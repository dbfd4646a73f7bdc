//! A store in memory, for tests and `--store memory`.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{GameStore, StoreError, backend};
use crate::GameId;
use crate::event::Event;

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

    fn create_with_log(
        &self,
        id: GameId,
        events: &[Event],
        _flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut games = self.games.lock().map_err(backend)?;
        if games.contains_key(&id) {
            return Err(StoreError::Exists(id));
        }
        games.insert(id, events.to_vec());
        Ok(())
    }

    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        _flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
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

    fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
        let games = self.games.lock().map_err(backend)?;
        let mut ids: Vec<GameId> = games
            .keys()
            .copied()
            .filter(|id| after.is_none_or(|a| *id > a))
            .collect();
        ids.sort_unstable();
        ids.truncate(limit);
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_passes_the_conformance_suite() {
        crate::store::conformance::run(&super::MemoryStore::default());
    }
}
