//! The cache of live games: each game in use sits in memory behind its own async mutex, so
//! calls on one game are serialised while different games proceed in parallel. A game is
//! loaded from the store on first use, and an event is applied (and announced to the game's
//! watchers) only after the store has made it durable.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chess_proto::v1::{GameEvent, GameState, game_event::Kind};
use chess_service_kit::{MetricCounter, MetricGauge, Shutdown};
use tokio::sync::{OwnedMutexGuard, broadcast};
use tonic::{Code, Status};

use super::wire::{kind_of, session_status, state_of, store_status};
use crate::event::{Event, Side, now_ms};
use crate::session::{Session, SessionError};
use crate::store::{GameStore, StoreError};
use crate::{GameId, RequestLimits};

/// Runs blocking work (a store call, the full winnability analysis) on a blocking thread,
/// off the async executor; a task that could not finish is `UNAVAILABLE`.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Status::unavailable(e.to_string()))
}

/// A game in memory.
pub(super) struct Live {
    pub(super) session: Session,
    pub(super) events: broadcast::Sender<GameEvent>,
    /// Bumped on every change so that a stale flag timer does nothing.
    generation: u64,
    /// When a call last used the game (for evicting idle games from memory).
    pub(super) last_used: std::time::Instant,
    /// A write's outcome was unknown: the store may hold events this copy lacks, so it is
    /// read again before the next use.
    unconfirmed: bool,
}

impl Live {
    fn new(session: Session) -> Live {
        let (events, _) = broadcast::channel(64);
        Live {
            session,
            events,
            generation: 0,
            last_used: std::time::Instant::now(),
            unconfirmed: false,
        }
    }
}

/// A game's place in the cache: empty until the game is loaded.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) live: Option<Live>,
}

pub(super) struct Inner {
    pub(super) store: Arc<dyn GameStore>,
    /// The games in memory: those in use (see `sync.rs` for their eviction).
    pub(super) slots: Mutex<HashMap<GameId, Arc<tokio::sync::Mutex<Slot>>>>,
    pub(super) limits: RequestLimits,
    pub(super) shutdown: Shutdown,
    moves: MetricCounter,
    pub(super) cached: MetricGauge,
}

/// The live games, a cheap handle (shared by the handlers and the background work).
#[derive(Clone)]
pub(super) struct Games {
    pub(super) inner: Arc<Inner>,
}

/// Sends the game's new state to its watchers (and `GameOver` when this change ended it);
/// returns the state sent.
fn announce(id: GameId, live: &Live, kind: Kind) -> GameState {
    let state = state_of(id, &live.session, now_ms());
    let over = live.session.outcome.is_some();
    let _ = live.events.send(GameEvent {
        kind: kind.into(),
        state: Some(state.clone()),
    });
    if over && kind != Kind::GameOver {
        let _ = live.events.send(GameEvent {
            kind: Kind::GameOver.into(),
            state: Some(state.clone()),
        });
    }
    state
}

impl Games {
    pub(super) fn new(
        store: Arc<dyn GameStore>,
        limits: RequestLimits,
        shutdown: Shutdown,
        metrics: &chess_service_kit::Metrics,
    ) -> Games {
        Games {
            inner: Arc::new(Inner {
                store,
                slots: Mutex::new(HashMap::new()),
                limits,
                shutdown,
                moves: metrics.counter("game_moves", "Moves stored"),
                cached: metrics.gauge("games_cached", "Games held in memory"),
            }),
        }
    }

    /// Puts a game just created (and stored) in memory.
    pub(super) fn insert(&self, id: GameId, session: Session) {
        let slot = Slot {
            live: Some(Live::new(session)),
        };
        if let Ok(mut slots) = self.inner.slots.lock() {
            slots.insert(id, Arc::new(tokio::sync::Mutex::new(slot)));
        }
    }

    /// The game's slot, locked and loaded from the store if needed, with a fallen flag
    /// recorded.
    pub(super) async fn slot(&self, id: GameId) -> Result<OwnedMutexGuard<Slot>, Status> {
        let cell = {
            let mut slots = self
                .inner
                .slots
                .lock()
                .map_err(|_| Status::internal("state lock poisoned"))?;
            slots.entry(id).or_default().clone()
        };
        let mut slot = cell.lock_owned().await;
        if slot.live.is_none() {
            let store = self.inner.store.clone();
            let events = blocking(move || store.load(id))
                .await?
                .map_err(store_status);
            let events = match events {
                Ok(Some(events)) => events,
                failed => {
                    // Nothing cached for an unknown game or a failed read.
                    if let Ok(mut slots) = self.inner.slots.lock() {
                        slots.remove(&id);
                    }
                    return Err(failed
                        .err()
                        .unwrap_or_else(|| Status::not_found(format!("game {id} not found"))));
                }
            };
            let session = Session::replay(&events).map_err(session_status)?;
            slot.live = Some(Live::new(session));
            self.arm_flag_timer(id, &slot);
        } else if self.inner.store.shared() || slot.live.as_ref().is_some_and(|l| l.unconfirmed) {
            // Another replica may have changed the game since it was cached, or a write whose
            // outcome was unknown may have reached the store.
            self.refresh(id, &mut slot).await?;
            if let Some(live) = slot.live.as_mut() {
                live.unconfirmed = false;
            }
        }
        if let Some(live) = slot.live.as_mut() {
            live.last_used = std::time::Instant::now();
        }
        self.settle_flag(id, &mut slot).await?;
        Ok(slot)
    }

    /// Applies (and announces to this replica's watchers) the events another replica has
    /// stored since the game was cached.
    pub(super) async fn refresh(&self, id: GameId, slot: &mut Slot) -> Result<(), Status> {
        let Some(live) = slot.live.as_mut() else {
            return Ok(());
        };
        let from = live.session.events;
        let store = self.inner.store.clone();
        let events = blocking(move || store.load_from(id, from))
            .await?
            .map_err(store_status)?
            .ok_or_else(|| Status::not_found(format!("game {id} not found")))?;
        if events.is_empty() {
            return Ok(());
        }
        for ev in &events {
            live.session
                .check(ev)
                .map_err(|e| Status::data_loss(format!("game {id}: stored event: {e}")))?;
            live.session.apply(ev);
            live.generation += 1;
            announce(id, live, kind_of(ev));
        }
        self.arm_flag_timer(id, slot);
        Ok(())
    }

    /// Records a flag that has fallen by now, unless another replica records it first.
    async fn settle_flag(&self, id: GameId, slot: &mut Slot) -> Result<(), Status> {
        for _ in 0..3 {
            let Some(live) = slot.live.as_mut() else {
                return Ok(());
            };
            let now = now_ms();
            let Some(side) = live.session.flag_fallen(now) else {
                return Ok(());
            };
            let ev = Event::FlagFell {
                side: Side::from(side),
                at_ms: now,
                cannot_mate: None,
            };
            match self.commit(id, slot, ev, Kind::GameOver).await {
                // Lost the race to another replica: `commit` has reloaded the game; look again.
                Err(e) if e.code() == Code::FailedPrecondition => continue,
                other => {
                    other?;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Checks, stores, applies and announces one event; returns the new state (the one the
    /// watchers were sent).
    pub(super) async fn commit(
        &self,
        id: GameId,
        slot: &mut Slot,
        ev: Event,
        kind: Kind,
    ) -> Result<GameState, Status> {
        let live = slot
            .live
            .as_mut()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        live.session.check_new(&ev).map_err(session_status)?;
        // The winnability analysis decides dead positions and flag falls before the event is
        // stored; the full analysis (a flag, a losing foul) runs off the executor.
        let ev = if live.session.judges_at_length(&ev) {
            let session = live.session.clone();
            blocking(move || session.judge(ev)).await?
        } else {
            live.session.judge(ev)
        };
        let seq = live.session.events;
        let mut next = live.session.clone();
        next.apply(&ev);
        let deadline = next.flag_deadline_ms();
        let store = self.inner.store.clone();
        let stored = ev.clone();
        let appended = blocking(move || store.append(id, seq, &stored, deadline)).await?;
        if let Err(e) = appended {
            if let StoreError::Unconfirmed(_) = e {
                live.unconfirmed = true;
            }
            if let StoreError::Conflict { .. } = e {
                // Another replica stored an event first: catch up, and say what changed.
                let before = live.session.ply();
                self.refresh(id, slot).await?;
                // It may be this very call, sent before to a replica that failed to answer.
                if let Some(state) = self.already_done(id, slot, ev.request_id()) {
                    return Ok(state);
                }
                let now = slot.live.as_ref().map_or(before, |l| l.session.ply());
                if matches!(ev, Event::Move { .. }) && now != before {
                    return Err(session_status(SessionError::StalePly {
                        expected: before,
                        actual: now,
                    }));
                }
            }
            return Err(store_status(e));
        }
        live.session = next;
        live.generation += 1;
        if matches!(ev, Event::Move { .. }) {
            self.inner.moves.inc();
        }
        let state = announce(id, live, kind);
        self.arm_flag_timer(id, slot);
        Ok(state)
    }

    /// Wakes up when the side to move's flag falls, so watchers learn of it without a call.
    fn arm_flag_timer(&self, id: GameId, slot: &Slot) {
        let Some(live) = slot.live.as_ref() else {
            return;
        };
        let Some(deadline) = live.session.flag_deadline_ms() else {
            return;
        };
        let generation = live.generation;
        let me = self.clone();
        tokio::spawn(async move {
            let wait = deadline.saturating_sub(now_ms()) + 1;
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(wait)) => {}
                _ = me.inner.shutdown.wait() => return,
            }
            let cell = me.inner.slots.lock().ok().and_then(|s| s.get(&id).cloned());
            if let Some(cell) = cell {
                let mut slot = cell.lock_owned().await;
                if slot
                    .live
                    .as_ref()
                    .is_none_or(|l| l.generation != generation)
                {
                    return;
                }
                let refreshed = if me.inner.store.shared() {
                    me.refresh(id, &mut slot).await
                } else {
                    Ok(())
                };
                if let Err(e) = refreshed.and(me.settle_flag(id, &mut slot).await) {
                    tracing::warn!(%id, error = %e, "recording a flag fall failed");
                }
            }
        });
    }

    /// Loads the game if it is not in memory, records its fallen flag if any, and releases
    /// it (the flag sweep's way in).
    pub(super) async fn touch(&self, id: GameId) -> Result<(), Status> {
        self.slot(id).await.map(drop)
    }

    /// The game as it stands when it already holds the event of the call with idempotency
    /// key `key`: the call was sent again (a retry after an unknown outcome), and makes no
    /// second event.
    pub(super) fn already_done(
        &self,
        id: GameId,
        slot: &Slot,
        key: Option<&str>,
    ) -> Option<GameState> {
        let (live, key) = (slot.live.as_ref()?, key?);
        if !live.session.request_ids.contains(key) {
            return None;
        }
        tracing::info!(%id, key, "a call sent again found its event: no second one");
        Some(state_of(id, &live.session, now_ms()))
    }

    pub(super) fn state(&self, id: GameId, slot: &Slot) -> Result<GameState, Status> {
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        Ok(state_of(id, &live.session, now_ms()))
    }
}
