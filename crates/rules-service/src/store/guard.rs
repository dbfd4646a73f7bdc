//! A [`GameStore`] wrapper that turns a panic inside the store (a store damaged while the
//! service runs: redb panics on some pages it cannot read) into [`StoreError::Damaged`], and
//! remembers it: every later call fails the same way and [`GameStore::damage`] reports it, so
//! the service can stop reporting itself healthy instead of answering `INTERNAL` while its
//! health says `SERVING`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use super::{Change, GameStore, StoreError};
use crate::GameId;
use crate::event::Event;

/// See the module documentation.
pub struct GuardedStore {
    inner: Arc<dyn GameStore>,
    /// What went wrong first; set once.
    damage: OnceLock<String>,
}

impl std::fmt::Debug for GuardedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedStore")
            .field("damage", &self.damage.get())
            .finish_non_exhaustive()
    }
}

impl GuardedStore {
    pub fn new(inner: Arc<dyn GameStore>) -> GuardedStore {
        GuardedStore {
            inner,
            damage: OnceLock::new(),
        }
    }

    fn guard<T>(&self, op: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        if let Some(text) = self.damage.get() {
            return Err(StoreError::Damaged(text.clone()));
        }
        match catch_unwind(AssertUnwindSafe(op)) {
            Ok(result) => result,
            Err(panic) => {
                let cause = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("no message");
                let text = format!(
                    "the game store failed while serving ({cause}); it may be damaged: stop the \
                     service and start it again to have the store verified"
                );
                tracing::error!(error = %text, "game store failed");
                let text = self.damage.get_or_init(|| text).clone();
                Err(StoreError::Damaged(text))
            }
        }
    }
}

impl GameStore for GuardedStore {
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
        self.guard(|| self.inner.create(id, first))
    }

    fn create_with_log(
        &self,
        id: GameId,
        events: &[Event],
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        self.guard(|| self.inner.create_with_log(id, events, flag_deadline_ms))
    }

    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        self.guard(|| self.inner.append(id, seq, event, flag_deadline_ms))
    }

    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
        self.guard(|| self.inner.load(id))
    }

    fn load_from(&self, id: GameId, from: u32) -> Result<Option<Vec<Event>>, StoreError> {
        self.guard(|| self.inner.load_from(id, from))
    }

    fn count(&self) -> Result<u64, StoreError> {
        self.guard(|| self.inner.count())
    }

    fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.guard(|| self.inner.list(after, limit))
    }

    fn shared(&self) -> bool {
        self.inner.shared()
    }

    fn flags_due(&self, now_ms: u64, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.guard(|| self.inner.flags_due(now_ms, limit))
    }

    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<Change>> {
        self.inner.subscribe()
    }

    fn damage(&self) -> Option<String> {
        self.damage.get().cloned().or_else(|| self.inner.damage())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    /// A store whose loads panic, as redb does on a page it cannot read.
    #[derive(Debug, Default)]
    struct Broken(MemoryStore);

    impl GameStore for Broken {
        fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
            self.0.create(id, first)
        }
        fn create_with_log(
            &self,
            id: GameId,
            events: &[Event],
            deadline: Option<u64>,
        ) -> Result<(), StoreError> {
            self.0.create_with_log(id, events, deadline)
        }
        fn append(
            &self,
            id: GameId,
            seq: u32,
            event: &Event,
            deadline: Option<u64>,
        ) -> Result<(), StoreError> {
            self.0.append(id, seq, event, deadline)
        }
        fn load(&self, _: GameId) -> Result<Option<Vec<Event>>, StoreError> {
            panic!("internal error: entered unreachable code")
        }
        fn count(&self) -> Result<u64, StoreError> {
            self.0.count()
        }
        fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
            self.0.list(after, limit)
        }
    }

    #[test]
    fn a_panic_becomes_damage_that_stays() {
        let store = GuardedStore::new(Arc::new(Broken::default()));
        assert_eq!(store.count().unwrap(), 0);
        assert!(store.damage().is_none());
        let e = store.load(GameId::new()).unwrap_err();
        let StoreError::Damaged(text) = e else {
            panic!("{e:?}")
        };
        assert!(text.contains("entered unreachable code"), "{text}");
        assert_eq!(store.damage().as_deref(), Some(text.as_str()));
        // Every later call fails the same way, even those that would work.
        assert!(matches!(store.count(), Err(StoreError::Damaged(_))));
    }
}
