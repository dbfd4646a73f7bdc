//! `chess.v1.GameService`: durable game sessions. Each game's state lives behind its own
//! async mutex, so calls on one game are serialised while different games proceed in
//! parallel; an event is applied only after the store has made it durable.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chess_proto::v1::game_service_server::GameService;
use chess_proto::v1::{
    self, ClaimDrawRequest, CreateGameRequest, GameEvent, GameState, GetGameRequest,
    MakeMoveRequest, ResignRequest, RespondToDrawRequest, TouchPieceRequest, WatchGameRequest,
    game_event::Kind,
};
use chess_proto::{
    FieldViolation, color_from_proto, color_to_proto, draw_rule, game_uuid_from_text,
    move_from_text, move_to_proto, opening_to_proto, outcome_to_proto, position_from_fen,
    request_id_from_text,
};
use chess_rules::{Color, Outcome, Position, WinReason};
use chess_service_kit::{MetricCounter, MetricGauge, Shutdown};
use tokio::sync::{OwnedMutexGuard, broadcast};
use tokio_stream::Stream;
use tonic::{Code, Request, Response, Status};

use crate::arbiter::ArbiterMode;
use crate::session::{Event, Session, SessionError, Side, check_player_name};
use crate::store::{GameStore, StoreError};
use crate::timecontrol::TimeControl;
use crate::{GameId, Limits};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub(crate) struct Live {
    pub(crate) session: Session,
    pub(crate) events: broadcast::Sender<GameEvent>,
    /// Bumped on every change so that a stale flag timer does nothing.
    generation: u64,
    /// When a call last used the game (for evicting idle games from memory).
    pub(crate) last_used: std::time::Instant,
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

#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) live: Option<Live>,
}

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn GameStore>,
    /// The games in memory: those in use (see `store_sync` for their eviction).
    pub(crate) slots: Mutex<HashMap<GameId, Arc<tokio::sync::Mutex<Slot>>>>,
    limits: Limits,
    pub(crate) shutdown: Shutdown,
    moves: MetricCounter,
    created: MetricCounter,
    watchers: MetricGauge,
    pub(crate) cached: MetricGauge,
}

/// The game-session half of the rules service.
#[derive(Clone)]
pub struct GamesApi {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for GamesApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GamesApi").finish_non_exhaustive()
    }
}

fn session_status(e: SessionError) -> Status {
    let (field, code) = match &e {
        SessionError::GameOver(_) => ("game_id", Code::FailedPrecondition),
        SessionError::NotYourTurn { .. } => ("side", Code::FailedPrecondition),
        SessionError::StalePly { .. } => ("expected_ply", Code::FailedPrecondition),
        SessionError::IllegalMove(_) => ("move", Code::InvalidArgument),
        SessionError::DrawOffer(_) => ("offer_draw", Code::FailedPrecondition),
        SessionError::NoDrawOffer(_) => ("side", Code::FailedPrecondition),
        SessionError::NoClaim(_) => ("move", Code::FailedPrecondition),
        SessionError::Clock(_) => ("game_id", Code::FailedPrecondition),
        SessionError::TouchMove(_) => ("move", Code::FailedPrecondition),
        SessionError::Touch(_) => ("square", Code::InvalidArgument),
        SessionError::NoArbiter => ("move", Code::InvalidArgument),
        SessionError::Corrupt(_) => return Status::data_loss(e.to_string()),
    };
    FieldViolation::new(field, e.to_string()).into_status_with(code)
}

fn store_status(e: StoreError) -> Status {
    match e {
        StoreError::NotFound(id) => Status::not_found(format!("game {id} not found")),
        // Another replica wrote first: the caller must look at the game again.
        StoreError::Conflict { .. } => Status::failed_precondition(format!(
            "{e}: the game changed meanwhile (another replica?): reload it and retry"
        )),
        StoreError::Corrupt(_) | StoreError::Damaged(_) => Status::data_loss(e.to_string()),
        // Sent but not confirmed: saying it failed could be untrue.
        StoreError::Unconfirmed(_) => Status::unavailable(format!(
            "outcome unknown: {e}. The change may or may not have been recorded: GetGame shows \
             the game as it stands, and the same call with the same request_id is safe to send \
             again (the gateway adds a request_id when the call has none)"
        )),
        StoreError::Backend(_) | StoreError::Exists(_) => {
            Status::unavailable(format!("nothing was changed: {e}"))
        }
    }
}

/// The call's idempotency key.
fn request_key(text: &str) -> Result<Option<String>, Status> {
    Ok(request_id_from_text("request_id", text)?)
}

fn parse_id(text: &str) -> Result<GameId, Status> {
    game_uuid_from_text("game_id", text)
        .map(GameId)
        .map_err(FieldViolation::into_status)
}

fn side_of(value: i32) -> Result<Option<Color>, Status> {
    Ok(color_from_proto("side", value)?)
}

fn required_side(value: i32) -> Result<Color, Status> {
    side_of(value)?.ok_or_else(|| {
        FieldViolation::new("side", "say which side: COLOR_WHITE or COLOR_BLACK").into()
    })
}

fn tc_to_proto(tc: &TimeControl) -> v1::TimeControl {
    v1::TimeControl {
        periods: tc
            .periods
            .iter()
            .map(|p| v1::TimeControlPeriod {
                moves: p.moves,
                base_ms: p.base_ms,
                increment_ms: p.increment_ms,
            })
            .collect(),
    }
}

fn tc_from_request(req: &CreateGameRequest) -> Result<Option<TimeControl>, Status> {
    if let Some(tc) = &req.time_control {
        let periods = TimeControl::periods_from_proto(tc);
        return TimeControl::new(periods)
            .map(Some)
            .map_err(|e| FieldViolation::new("time_control", e).into());
    }
    if req.time_control_text.trim().is_empty() {
        return Ok(None);
    }
    TimeControl::parse(&req.time_control_text)
        .map(Some)
        .map_err(|e| FieldViolation::new("time_control_text", e).into())
}

/// `YYYY.MM.DD` of a Unix time in ms (PGN's date format).
fn pgn_date(ms: u64) -> String {
    // Civil-from-days (proleptic Gregorian), valid for any date after 1970.
    let days = (ms / 86_400_000) as i64 + 719_468;
    let era = days / 146_097;
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

/// PGN `TimeControl` tag (seconds, per the PGN standard): `40/5400+30:1800+30`.
fn pgn_time_control(tc: &TimeControl) -> String {
    tc.periods
        .iter()
        .map(|p| {
            let moves = if p.moves > 0 {
                format!("{}/", p.moves)
            } else {
                String::new()
            };
            let inc = if p.increment_ms > 0 {
                format!("+{}", p.increment_ms / 1000)
            } else {
                String::new()
            };
            format!("{moves}{}{inc}", p.base_ms / 1000)
        })
        .collect::<Vec<_>>()
        .join(":")
}

fn mode_to_proto(m: ArbiterMode) -> v1::IllegalMoves {
    match m {
        ArbiterMode::Reject => v1::IllegalMoves::Reject,
        ArbiterMode::Fide => v1::IllegalMoves::Fide,
        ArbiterMode::ThreeStrikes => v1::IllegalMoves::ThreeStrikes,
    }
}

fn mode_from_proto(value: i32) -> Result<ArbiterMode, Status> {
    match v1::IllegalMoves::try_from(value) {
        Ok(v1::IllegalMoves::Reject) => Ok(ArbiterMode::Reject),
        Ok(v1::IllegalMoves::Fide) => Ok(ArbiterMode::Fide),
        Ok(v1::IllegalMoves::ThreeStrikes) => Ok(ArbiterMode::ThreeStrikes),
        Err(_) => Err(FieldViolation::new(
            "illegal_moves",
            format!("unknown value {value}: ILLEGAL_MOVES_REJECT, _FIDE or _THREE_STRIKES"),
        )
        .into()),
    }
}

fn state_of(id: GameId, s: &Session, now: u64) -> GameState {
    let mut moves = Vec::with_capacity(s.records.len());
    let mut pos: Position = s.game.start().clone();
    for (m, rec) in s.game.moves().iter().zip(&s.records) {
        let mv = move_to_proto(&pos, *m);
        pos.play_unchecked(*m);
        moves.push(v1::PlayedMove {
            r#move: Some(mv),
            time_used_ms: rec.time_used_ms,
            draw_offered: rec.draw_offered,
            fen_after: pos.fen(),
        });
    }
    let clock = s.remaining(now).map(|r| v1::Clock {
        white_ms: r.white,
        black_ms: r.black,
        running: match s.clock.as_ref().and_then(|c| c.running_since_ms) {
            Some(_) => color_to_proto(s.turn()).into(),
            None => v1::Color::Unspecified.into(),
        },
    });
    let pos = s.position();
    GameState {
        game_id: id.to_string(),
        start_fen: s.start_fen.clone(),
        fen: pos.fen(),
        turn: color_to_proto(pos.turn()).into(),
        moves,
        ply: s.ply(),
        time_control: s.time_control.as_ref().map(tc_to_proto),
        clock,
        draw_offer_from: s
            .draw_offer
            .map_or(v1::Color::Unspecified, color_to_proto)
            .into(),
        outcome: s.outcome.map(|o| {
            let mut out = outcome_to_proto(o);
            if let Some(detail) = &s.outcome_detail {
                out.description = format!("{}: {detail}", out.description);
            }
            out
        }),
        claimable_draw: s
            .claimable_draw()
            .map_or(v1::outcome::Rule::Unspecified, draw_rule)
            .into(),
        check: pos.is_check(),
        white: s.white.clone(),
        black: s.black.clone(),
        pgn: pgn_of(id, s),
        opening: Some(opening_to_proto(&chess_knowledge::classify(
            s.game.start(),
            s.game.moves(),
        ))),
        illegal_moves: mode_to_proto(s.mode).into(),
        fouls: s
            .fouls
            .iter()
            .map(|f| v1::Foul {
                side: color_to_proto(f.side).into(),
                attempted: f.attempted.clone(),
                reason: f.reason.clone(),
                penalty: f.penalty_text(),
                ply: f.ply,
                count: f.count,
            })
            .collect(),
        touches: s
            .touches
            .iter()
            .map(|t| v1::Touch {
                side: color_to_proto(t.side).into(),
                square: t.square.to_string(),
                piece: t.piece.clone(),
                adjust: t.adjust,
            })
            .collect(),
    }
}

/// A foul as a PGN comment: `foul 1 by black: e8e7 (king moved into check ...); two
/// minutes added to white's clock`.
fn foul_comment(f: &crate::arbiter::FoulRecord) -> String {
    format!(
        "illegal move {} by {}: {} ({}); penalty: {}",
        f.count,
        f.side,
        f.attempted,
        f.reason,
        f.penalty_text()
    )
}

fn pgn_of(id: GameId, s: &Session) -> String {
    let mut pgn = chess_pgn::PgnGame::new(s.game.start().clone());
    pgn.set_tag("Event", "Casual game");
    pgn.set_tag("Site", format!("chess-rules-service game {id}"));
    pgn.set_tag("Date", pgn_date(s.created_ms));
    pgn.set_tag("Round", "-");
    pgn.set_tag("White", if s.white.is_empty() { "?" } else { &s.white });
    pgn.set_tag("Black", if s.black.is_empty() { "?" } else { &s.black });
    let result = s.outcome.map_or("*", |o| o.result());
    pgn.set_tag("Result", result);
    if let Some(tc) = &s.time_control {
        pgn.set_tag("TimeControl", pgn_time_control(tc));
    }
    let opening = chess_knowledge::classify(s.game.start(), s.game.moves());
    if let Some(o) = opening.opening {
        pgn.set_tag("ECO", o.eco);
        pgn.set_tag("Opening", o.name);
    }
    if s.mode != ArbiterMode::Reject {
        let mode = match s.mode {
            ArbiterMode::Fide => "fide",
            _ => "three-strikes",
        };
        pgn.set_tag("IllegalMoves", mode);
    }
    if let Some(o) = s.outcome {
        let termination = match o {
            Outcome::Decisive {
                reason: WinReason::Timeout,
                ..
            } => "time forfeit",
            Outcome::Draw {
                reason: chess_rules::DrawReason::TimeoutInsufficientMaterial,
            } => "time forfeit",
            Outcome::Decisive {
                reason: WinReason::IllegalMoves,
                ..
            }
            | Outcome::Draw {
                reason: chess_rules::DrawReason::IllegalMovesInsufficientMaterial,
            } => "rules infraction",
            _ => "normal",
        };
        pgn.set_tag("Termination", termination);
    }
    crate::rules_api::fill_moves(&mut pgn, &s.game);
    // Each foul as a comment after the move it followed (before the first move: on the game).
    for f in &s.fouls {
        let text = foul_comment(f);
        match (f.ply as usize).checked_sub(1) {
            Some(i) if i < pgn.root.nodes.len() => pgn.root.nodes[i].comments_after.push(text),
            _ => pgn.root.comments.push(text),
        }
    }
    pgn.result = result.parse().ok();
    pgn.to_pgn().unwrap_or_default()
}

/// The watchers' kind of event for a stored event (events another replica stored are
/// announced the way the replica that stored them announced them).
fn kind_of(ev: &Event) -> Kind {
    match ev {
        Event::Created { .. } => Kind::Snapshot,
        Event::Move {
            offer_draw: true, ..
        } => Kind::DrawOffered,
        Event::Move { .. } => Kind::Move,
        Event::DrawAnswered { accept: false, .. } => Kind::DrawDeclined,
        Event::DrawAnswered { .. }
        | Event::Resigned { .. }
        | Event::DrawClaimed { .. }
        | Event::FlagFell { .. } => Kind::GameOver,
        Event::Foul { .. } => Kind::Foul,
        Event::Touched { .. } => Kind::Touch,
    }
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

impl GamesApi {
    pub fn new(
        store: Arc<dyn GameStore>,
        limits: Limits,
        shutdown: Shutdown,
        metrics: &chess_service_kit::Metrics,
    ) -> GamesApi {
        GamesApi {
            inner: Arc::new(Inner {
                store,
                slots: Mutex::new(HashMap::new()),
                limits,
                shutdown,
                moves: metrics.counter("game_moves", "Moves stored"),
                created: metrics.counter("games_created", "Games created"),
                watchers: metrics.gauge("game_watchers", "Open WatchGame streams"),
                cached: metrics.gauge("games_cached", "Games held in memory"),
            }),
        }
    }

    /// The game's slot, locked and loaded from the store if needed, with a fallen flag
    /// recorded.
    async fn slot(&self, id: GameId) -> Result<OwnedMutexGuard<Slot>, Status> {
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
            let events = tokio::task::spawn_blocking(move || store.load(id))
                .await
                .map_err(|e| Status::unavailable(e.to_string()))?
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
    pub(crate) async fn refresh(&self, id: GameId, slot: &mut Slot) -> Result<(), Status> {
        let Some(live) = slot.live.as_mut() else {
            return Ok(());
        };
        let from = live.session.events;
        let store = self.inner.store.clone();
        let events = tokio::task::spawn_blocking(move || store.load_from(id, from))
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?
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
    async fn commit(
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
            tokio::task::spawn_blocking(move || session.judge(ev))
                .await
                .map_err(|e| Status::unavailable(e.to_string()))?
        } else {
            live.session.judge(ev)
        };
        let seq = live.session.events;
        let mut next = live.session.clone();
        next.apply(&ev);
        let deadline = next.flag_deadline_ms();
        let store = self.inner.store.clone();
        let stored = ev.clone();
        let appended =
            tokio::task::spawn_blocking(move || store.append(id, seq, &stored, deadline))
                .await
                .map_err(|e| Status::unavailable(e.to_string()))?;
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
    pub(crate) async fn touch(&self, id: GameId) -> Result<(), Status> {
        self.slot(id).await.map(drop)
    }

    /// The game as it stands when it already holds the event of the call with idempotency
    /// key `key`: the call was sent again (a retry after an unknown outcome), and makes no
    /// second event.
    fn already_done(&self, id: GameId, slot: &Slot, key: Option<&str>) -> Option<GameState> {
        let (live, key) = (slot.live.as_ref()?, key?);
        if !live.session.request_ids.contains(key) {
            return None;
        }
        tracing::info!(%id, key, "a call sent again found its event: no second one");
        Some(state_of(id, &live.session, now_ms()))
    }

    fn state(&self, id: GameId, slot: &Slot) -> Result<GameState, Status> {
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        Ok(state_of(id, &live.session, now_ms()))
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<GameEvent, Status>> + Send>>;

#[tonic::async_trait]
impl GameService for GamesApi {
    #[tracing::instrument(skip_all)]
    async fn create_game(
        &self,
        request: Request<CreateGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let start = position_from_fen("start_fen", &req.start_fen)?;
        let time_control = tc_from_request(&req)?;
        for (field, name) in [("white", &req.white), ("black", &req.black)] {
            check_player_name(name).map_err(|e| FieldViolation::new(field, e))?;
        }
        let illegal_moves = mode_from_proto(req.illegal_moves)?;
        let key = request_key(&req.request_id)?;
        let id = key.as_deref().map_or_else(GameId::new, GameId::for_request);
        let ev = Event::Created {
            start_fen: start.fen(),
            time_control,
            white: req.white,
            black: req.black,
            at_ms: now_ms(),
            illegal_moves,
            request_id: key.clone(),
        };
        let session = Session::create(&ev).map_err(session_status)?;
        let store = self.inner.store.clone();
        let created = tokio::task::spawn_blocking(move || store.create(id, &ev))
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?;
        match created {
            Ok(()) => {}
            // Sent again: the game the first call created.
            Err(StoreError::Exists(_)) if key.is_some() => {
                let slot = self.slot(id).await?;
                return self
                    .already_done(id, &slot, key.as_deref())
                    .map(Response::new)
                    .ok_or_else(|| {
                        FieldViolation::new(
                            "request_id",
                            "this key named another CreateGame call: use a new key per game",
                        )
                        .into_status_with(Code::AlreadyExists)
                    });
            }
            Err(e) => return Err(store_status(e)),
        }
        self.inner.created.inc();
        let state = state_of(id, &session, now_ms());
        let slot = Slot {
            live: Some(Live::new(session)),
        };
        if let Ok(mut slots) = self.inner.slots.lock() {
            slots.insert(id, Arc::new(tokio::sync::Mutex::new(slot)));
        }
        tracing::info!(%id, "game created");
        Ok(Response::new(state))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_game(
        &self,
        request: Request<GetGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        let id = parse_id(&request.get_ref().game_id)?;
        let slot = self.slot(id).await?;
        Ok(Response::new(self.state(id, &slot)?))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, mv = %request.get_ref().r#move))]
    async fn make_move(
        &self,
        request: Request<MakeMoveRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = side_of(req.side)?;
        if req.r#move.len() > 32 {
            return Err(FieldViolation::new("move", "a move is at most 32 bytes").into());
        }
        let key = request_key(&req.request_id)?;
        let mut slot = self.slot(id).await?;
        if let Some(state) = self.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        let s = &live.session;
        if let Some(o) = s.outcome {
            return Err(session_status(SessionError::GameOver(o)));
        }
        if let Some(side) = side
            && side != s.turn()
        {
            return Err(session_status(SessionError::NotYourTurn {
                side,
                turn: s.turn(),
            }));
        }
        if let Some(expected) = req.expected_ply
            && expected != s.ply()
        {
            return Err(session_status(SessionError::StalePly {
                expected,
                actual: s.ply(),
            }));
        }
        if s.ply() as usize >= self.inner.limits.max_game_plies {
            return Err(FieldViolation::new(
                "move",
                format!(
                    "games are limited to {} plies",
                    self.inner.limits.max_game_plies
                ),
            )
            .into_status_with(Code::FailedPrecondition));
        }
        let m = match move_from_text("move", s.position(), &req.r#move, false) {
            Ok(m) => m,
            Err(refused) => {
                // Under an arbiter mode an illegal move that names a piece and a square is a
                // foul: recorded, penalised, the position unchanged. Under three strikes only
                // the king moved onto an attacked square is (送王); other illegal moves are
                // refused as in a game without an arbiter.
                let attempt = (s.mode != ArbiterMode::Reject)
                    .then(|| chess_knowledge::illegal_attempt(s.position(), &req.r#move))
                    .flatten();
                let Some(attempt) = attempt else {
                    return Err(refused.into());
                };
                if s.mode == ArbiterMode::ThreeStrikes && !attempt.king_into_attack {
                    return Err(FieldViolation::new(
                        "move",
                        format!(
                            "illegal move {}: {}. Refused, not a foul: under three strikes only \
                             a king moved onto an attacked square counts",
                            chess_proto::quote(req.r#move.trim()),
                            attempt.reason
                        ),
                    )
                    .into());
                }
                let ev = Event::Foul {
                    side: Side::from(s.turn()),
                    attempted: req.r#move.trim().to_owned(),
                    reason: attempt.reason,
                    at_ms: now_ms(),
                    request_id: key,
                    cannot_mate: None,
                };
                return self
                    .commit(id, &mut slot, ev, Kind::Foul)
                    .await
                    .map(Response::new);
            }
        };
        let kind = if req.offer_draw {
            Kind::DrawOffered
        } else {
            Kind::Move
        };
        let ev = Event::Move {
            uci: m.to_string(),
            offer_draw: req.offer_draw,
            at_ms: now_ms(),
            request_id: key,
            dead: None,
        };
        self.commit(id, &mut slot, ev, kind)
            .await
            .map(Response::new)
    }

    type WatchGameStream = EventStream;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let id = parse_id(&request.get_ref().game_id)?;
        let slot = self.slot(id).await?;
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        let mut rx = live.events.subscribe();
        let snapshot = state_of(id, &live.session, now_ms());
        let over = live.session.outcome.is_some();
        drop(slot);
        let (tx, out) = tokio::sync::mpsc::channel(16);
        let me = self.clone();
        tokio::spawn(async move {
            me.inner.watchers.inc();
            let _ = tx
                .send(Ok(GameEvent {
                    kind: Kind::Snapshot.into(),
                    state: Some(snapshot),
                }))
                .await;
            if !over {
                loop {
                    let ev = tokio::select! {
                        ev = rx.recv() => ev,
                        _ = tx.closed() => break,
                        _ = me.inner.shutdown.wait() => {
                            let _ = tx.send(Err(Status::unavailable("the rules service is shutting down"))).await;
                            break;
                        }
                    };
                    match ev {
                        Ok(ev) => {
                            let done = ev.kind == i32::from(Kind::GameOver);
                            if tx.send(Ok(ev)).await.is_err() || done {
                                break;
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            // Too slow to keep up: send the whole state again.
                            let state = match me.slot(id).await {
                                Ok(slot) => me.state(id, &slot),
                                Err(e) => Err(e),
                            };
                            if tx
                                .send(state.map(|s| GameEvent {
                                    kind: Kind::Snapshot.into(),
                                    state: Some(s),
                                }))
                                .await
                                .is_err()
                            {
                                break;
                            }
                        }
                        Err(broadcast::error::RecvError::Closed) => break,
                    }
                }
            }
            me.inner.watchers.dec();
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(out),
        )))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = required_side(req.side)?;
        let key = request_key(&req.request_id)?;
        let mut slot = self.slot(id).await?;
        if let Some(state) = self.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let ev = Event::Resigned {
            side: side.into(),
            at_ms: now_ms(),
            request_id: key,
        };
        self.commit(id, &mut slot, ev, Kind::GameOver)
            .await
            .map(Response::new)
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn respond_to_draw(
        &self,
        request: Request<RespondToDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = required_side(req.side)?;
        let key = request_key(&req.request_id)?;
        let mut slot = self.slot(id).await?;
        if let Some(state) = self.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let ev = Event::DrawAnswered {
            side: side.into(),
            accept: req.accept,
            at_ms: now_ms(),
            request_id: key,
        };
        let kind = if req.accept {
            Kind::GameOver
        } else {
            Kind::DrawDeclined
        };
        self.commit(id, &mut slot, ev, kind)
            .await
            .map(Response::new)
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, square = %request.get_ref().square))]
    async fn touch_piece(
        &self,
        request: Request<TouchPieceRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = required_side(req.side)?;
        let square = req.square.trim().to_ascii_lowercase();
        if square.parse::<chess_rules::Square>().is_err() {
            return Err(FieldViolation::new(
                "square",
                format!(
                    "{:?} is not a square (a1 to h8)",
                    req.square.chars().take(16).collect::<String>()
                ),
            )
            .into());
        }
        let key = request_key(&req.request_id)?;
        let mut slot = self.slot(id).await?;
        if let Some(state) = self.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let ev = Event::Touched {
            side: side.into(),
            square,
            adjust: req.adjust,
            at_ms: now_ms(),
            request_id: key,
        };
        self.commit(id, &mut slot, ev, Kind::Touch)
            .await
            .map(Response::new)
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn claim_draw(
        &self,
        request: Request<ClaimDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = required_side(req.side)?;
        let key = request_key(&req.request_id)?;
        let mut slot = self.slot(id).await?;
        if let Some(state) = self.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let uci = if req.r#move.trim().is_empty() {
            None
        } else {
            let live = slot
                .live
                .as_ref()
                .ok_or_else(|| Status::internal("game not loaded"))?;
            Some(move_from_text("move", live.session.position(), &req.r#move, false)?.to_string())
        };
        let ev = Event::DrawClaimed {
            side: side.into(),
            uci,
            at_ms: now_ms(),
            request_id: key,
        };
        self.commit(id, &mut slot, ev, Kind::GameOver)
            .await
            .map(Response::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_dates_and_time_controls() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(1_796_083_200_000), "2026.12.01");
        assert_eq!(
            pgn_time_control(&TimeControl::parse("40/90+30:30+30").unwrap()),
            "40/5400+30:1800+30"
        );
        assert_eq!(pgn_time_control(&TimeControl::parse("5+0").unwrap()), "300");
    }
}
