//! Keeping the games in memory in step with the store, in the background:
//!
//! - the change feed of a shared store (PostgreSQL's notifications): a game another replica
//!   changed is read again at once, so this replica's watchers see the change;
//!   [`Change::Resync`] (after a reconnect, and every poll while disconnected) reads again
//!   every game in memory;
//! - the flag sweep of a shared store: games whose flag falls soon are loaded, so that their
//!   flag timers fire on time even when the replica that served them has died (every
//!   replica's timer races to record the flag fall; the store lets exactly one win);
//! - eviction: a game leaves memory once idle and unwatched, so that memory holds only the
//!   games in play, however many the store holds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::cache::{Games, Slot, blocking};
use crate::GameId;
use crate::event::now_ms;
use crate::store::Change;

/// How often the flag sweep looks for games whose flag falls soon.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// How far ahead the sweep looks: such games are loaded and their timers armed.
const SWEEP_AHEAD_MS: u64 = 2_000;
/// Games the sweep loads per round at most.
const SWEEP_BATCH: usize = 500;

/// When an unwatched game leaves memory.
#[derive(Clone, Copy, Debug)]
pub struct Eviction {
    /// A finished game, after this long unused.
    pub finished_idle: Duration,
    /// A game in play, after this long unused (never while its clock runs, unless the store
    /// is shared: then the flag sweep loads it again in time).
    pub playing_idle: Duration,
    /// How often eviction looks.
    pub every: Duration,
}

impl Default for Eviction {
    fn default() -> Self {
        Eviction {
            finished_idle: Duration::from_secs(10),
            playing_idle: Duration::from_secs(300),
            every: Duration::from_secs(5),
        }
    }
}

/// Starts the background work for the live games `api` (it stops with the service's shutdown).
pub(super) fn start(api: &Games, eviction: Eviction) {
    let store = api.inner.store.clone();
    if let Some(changes) = store.subscribe() {
        tokio::spawn(follow(api.clone(), changes));
    }
    if store.shared() {
        tokio::spawn(sweep(api.clone()));
    }
    tokio::spawn(evict(api.clone(), eviction));
}

fn cell(api: &Games, id: GameId) -> Option<Arc<tokio::sync::Mutex<Slot>>> {
    api.inner.slots.lock().ok()?.get(&id).cloned()
}

async fn refresh(api: Games, id: GameId, seen: Option<u32>) {
    let Some(cell) = cell(&api, id) else {
        return;
    };
    let mut slot = cell.lock_owned().await;
    let Some(live) = slot.live.as_ref() else {
        return;
    };
    if seen.is_some_and(|n| live.session.events >= n) {
        return; // This replica's own change, or one already read.
    }
    if let Err(e) = api.refresh(id, &mut slot).await {
        tracing::warn!(%id, error = %e, "reading a game changed by another replica failed");
    }
}

async fn follow(api: Games, mut changes: mpsc::Receiver<Change>) {
    loop {
        let change = tokio::select! {
            c = changes.recv() => c,
            _ = api.inner.shutdown.wait() => return,
        };
        match change {
            None => return,
            Some(Change::Appended { id, events }) => {
                if cell(&api, id).is_some() {
                    tokio::spawn(refresh(api.clone(), id, Some(events)));
                }
            }
            Some(Change::Resync) => {
                let ids: Vec<GameId> = match api.inner.slots.lock() {
                    Ok(slots) => slots.keys().copied().collect(),
                    Err(_) => continue,
                };
                for id in ids {
                    tokio::spawn(refresh(api.clone(), id, None));
                }
            }
        }
    }
}

async fn sweep(api: Games) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
            _ = api.inner.shutdown.wait() => return,
        }
        let store = api.inner.store.clone();
        let due = blocking(move || store.flags_due(now_ms() + SWEEP_AHEAD_MS, SWEEP_BATCH)).await;
        let ids = match due {
            Ok(Ok(ids)) => ids,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "flag sweep: store unavailable");
                continue;
            }
            Err(_) => continue,
        };
        for id in ids {
            if cell(&api, id).is_none() {
                // Loading arms the game's flag timer (and records a flag already fallen).
                let api = api.clone();
                tokio::spawn(async move {
                    if let Err(e) = api.touch(id).await {
                        tracing::debug!(%id, error = %e, "flag sweep: loading a game failed");
                    }
                });
            }
        }
    }
}

async fn evict(api: Games, eviction: Eviction) {
    let shared = api.inner.store.shared();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(eviction.every) => {}
            _ = api.inner.shutdown.wait() => return,
        }
        let now = Instant::now();
        let Ok(mut slots) = api.inner.slots.lock() else {
            return;
        };
        slots.retain(|_, cell| {
            // A clone of the cell means a call is using or about to use the game.
            if Arc::strong_count(cell) > 1 {
                return true;
            }
            let Ok(slot) = cell.try_lock() else {
                return true;
            };
            let Some(live) = slot.live.as_ref() else {
                return false;
            };
            if live.events.receiver_count() > 0 {
                return true;
            }
            let idle = now.saturating_duration_since(live.last_used);
            if live.session.outcome.is_some() {
                idle < eviction.finished_idle
            } else if live.session.flag_deadline_ms().is_some() && !shared {
                true
            } else {
                idle < eviction.playing_idle
            }
        });
        api.inner.cached.set(slots.len() as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestLimits;
    use crate::games::GamesApi;
    use crate::store::{GameStore, MemoryStore};
    use chess_proto::v1::game_service_server::GameService;
    use chess_proto::v1::{CreateGameRequest, GetGameRequest, MakeMoveRequest, WatchGameRequest};
    use tonic::Request;

    fn cached(api: &GamesApi) -> usize {
        api.games.inner.slots.lock().unwrap().len()
    }

    /// Only games in use stay in memory: idle games leave (finished ones sooner), watched
    /// games and games with a running clock (on a store of one process) stay, and an evicted
    /// game is read again from the store when next used.
    #[tokio::test]
    async fn idle_games_leave_memory_and_come_back_from_the_store() {
        let store: Arc<dyn GameStore> = Arc::new(MemoryStore::default());
        let metrics = chess_service_kit::Metrics::new("test");
        let shutdown = chess_service_kit::Shutdown::new();
        let limits = RequestLimits {
            max_moves: 100,
            max_pgn_bytes: 1 << 20,
            max_games: 10,
            max_game_plies: 100,
        };
        let api = GamesApi::new(store.clone(), limits, shutdown.clone(), &metrics);
        api.start_sync(Eviction {
            finished_idle: Duration::from_millis(50),
            playing_idle: Duration::from_millis(400),
            every: Duration::from_millis(20),
        });
        let create = |tc: &str| CreateGameRequest {
            time_control_text: tc.into(),
            ..Default::default()
        };
        let mut ids = Vec::new();
        for _ in 0..20 {
            let s = api.create_game(Request::new(create(""))).await.unwrap();
            ids.push(s.into_inner().game_id);
        }
        let timed = api
            .create_game(Request::new(create("5+0")))
            .await
            .unwrap()
            .into_inner()
            .game_id;
        for m in ["e4", "e5"] {
            api.make_move(Request::new(MakeMoveRequest {
                game_id: timed.clone(),
                r#move: m.into(),
                ..Default::default()
            }))
            .await
            .unwrap();
        }
        let watched = ids[0].clone();
        let _watch = api
            .watch_game(Request::new(WatchGameRequest {
                game_id: watched.clone(),
            }))
            .await
            .unwrap();
        assert_eq!(cached(&api), 21);
        tokio::time::sleep(Duration::from_millis(700)).await;
        // The watched game and the game whose clock runs are all that is left.
        assert_eq!(cached(&api), 2);
        let keys: Vec<String> = api
            .games
            .inner
            .slots
            .lock()
            .unwrap()
            .keys()
            .map(|k| k.to_string())
            .collect();
        assert!(keys.contains(&watched) && keys.contains(&timed), "{keys:?}");
        // An evicted game comes back from the store as it was.
        let again = api
            .get_game(Request::new(GetGameRequest {
                game_id: ids[5].clone(),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(again.game_id, ids[5]);
        assert_eq!(cached(&api), 3);
        assert_eq!(store.count().unwrap(), 21);
        shutdown.trigger();
    }
}
