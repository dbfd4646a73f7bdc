//! The `chess.v1.GameService` handlers: each checks its request (`wire.rs`), builds the
//! event, and hands it to the cache of live games (`cache.rs`), which has the session check
//! it, stores it and tells the watchers.

use std::pin::Pin;
use std::sync::Arc;

use chess_proto::FieldViolation;
use chess_proto::v1::game_service_server::GameService;
use chess_proto::v1::{
    ClaimDrawRequest, CreateGameRequest, GameEvent, GameState, GetGameRequest, MakeMoveRequest,
    ResignRequest, RespondToDrawRequest, TakeBackRequest, TouchPieceRequest, WatchGameRequest,
    game_event::Kind,
};
use chess_service_kit::{MetricCounter, MetricGauge, Shutdown};
use chess_wire::{move_from_text, position_from_fen};
use tokio::sync::broadcast;
use tokio_stream::Stream;
use tonic::{Code, Request, Response, Status};

use super::cache::{Games, blocking};
use super::sync::{self, Eviction};
use super::wire::{
    mode_from_proto, parse_id, request_key, required_side, session_status, side_of, state_of,
    store_status, tc_from_request,
};
use crate::arbiter::ArbiterMode;
use crate::event::{Event, Side, now_ms};
use crate::session::{Session, check_player_name};
use crate::store::{GameStore, StoreError};
use crate::{GameId, RequestLimits};

/// The game-session half of the rules service.
#[derive(Clone)]
pub struct GamesApi {
    pub(super) games: Games,
    created: MetricCounter,
    watchers: MetricGauge,
}

impl std::fmt::Debug for GamesApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GamesApi").finish_non_exhaustive()
    }
}

impl GamesApi {
    pub fn new(
        store: Arc<dyn GameStore>,
        limits: RequestLimits,
        shutdown: Shutdown,
        metrics: &chess_service_kit::Metrics,
    ) -> GamesApi {
        GamesApi {
            games: Games::new(store, limits, shutdown, metrics),
            created: metrics.counter("games_created", "Games created"),
            watchers: metrics.gauge("game_watchers", "Open WatchGame streams"),
        }
    }

    /// One event on game `id` under idempotency key `key`: the game as it stands when the
    /// key's event is already there (a call sent again), else the event `event` makes from
    /// the game's session and the key, committed.
    async fn commit_keyed(
        &self,
        id: GameId,
        key: Option<String>,
        kind: Kind,
        event: impl FnOnce(&Session, Option<String>) -> Result<Event, Status>,
    ) -> Result<Response<GameState>, Status> {
        let mut slot = self.games.slot(id).await?;
        if let Some(state) = self.games.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        let ev = event(&live.session, key)?;
        self.games
            .commit(id, &mut slot, ev, kind)
            .await
            .map(Response::new)
    }

    /// Starts the background work that keeps the cached games in step with the store and
    /// evicts idle ones (it stops with the service's shutdown).
    pub fn start_sync(&self, eviction: Eviction) {
        sync::start(&self.games, eviction);
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
            takebacks: req.takebacks,
        };
        let session = Session::create(&ev).map_err(session_status)?;
        let store = self.games.inner.store.clone();
        let created = blocking(move || store.create(id, &ev)).await?;
        match created {
            Ok(()) => {}
            // Sent again: the game the first call created.
            Err(StoreError::Exists(_)) if key.is_some() => {
                let slot = self.games.slot(id).await?;
                return self
                    .games
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
        self.created.inc();
        let state = state_of(id, &session, now_ms());
        self.games.insert(id, session);
        tracing::info!(%id, "game created");
        Ok(Response::new(state))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_game(
        &self,
        request: Request<GetGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        let id = parse_id(&request.get_ref().game_id)?;
        let slot = self.games.slot(id).await?;
        Ok(Response::new(self.games.state(id, &slot)?))
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
        let mut slot = self.games.slot(id).await?;
        if let Some(state) = self.games.already_done(id, &slot, key.as_deref()) {
            return Ok(Response::new(state));
        }
        let live = slot
            .live
            .as_ref()
            .ok_or_else(|| Status::internal("game not loaded"))?;
        let s = &live.session;
        s.expect(side, req.expected_ply).map_err(session_status)?;
        let max_plies = self.games.inner.limits.max_game_plies;
        if s.ply() as usize >= max_plies {
            return Err(FieldViolation::new(
                "move",
                format!("games are limited to {max_plies} plies"),
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
                let attempt = (s.arbiter.mode() != ArbiterMode::Reject)
                    .then(|| chess_knowledge::illegal_attempt(s.position(), &req.r#move))
                    .flatten();
                let Some(attempt) = attempt else {
                    return Err(refused.into());
                };
                if s.arbiter.mode() == ArbiterMode::ThreeStrikes && !attempt.king_into_attack {
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
                    .games
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
        self.games
            .commit(id, &mut slot, ev, kind)
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
        let slot = self.games.slot(id).await?;
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
            me.watchers.inc();
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
                        _ = me.games.inner.shutdown.wait() => {
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
                            let state = match me.games.slot(id).await {
                                Ok(slot) => me.games.state(id, &slot),
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
            me.watchers.dec();
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
        self.commit_keyed(id, key, Kind::GameOver, |_, request_id| {
            Ok(Event::Resigned {
                side: side.into(),
                at_ms: now_ms(),
                request_id,
            })
        })
        .await
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
        let kind = if req.accept {
            Kind::GameOver
        } else {
            Kind::DrawDeclined
        };
        self.commit_keyed(id, key, kind, |_, request_id| {
            Ok(Event::DrawAnswered {
                side: side.into(),
                accept: req.accept,
                at_ms: now_ms(),
                request_id,
            })
        })
        .await
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
        self.commit_keyed(id, key, Kind::Touch, |_, request_id| {
            Ok(Event::Touched {
                side: side.into(),
                square,
                adjust: req.adjust,
                at_ms: now_ms(),
                request_id,
            })
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn take_back(
        &self,
        request: Request<TakeBackRequest>,
    ) -> Result<Response<GameState>, Status> {
        let req = request.into_inner();
        let id = parse_id(&req.game_id)?;
        let side = required_side(req.side)?;
        let key = request_key(&req.request_id)?;
        self.commit_keyed(id, key, Kind::TakeBack, |s, request_id| {
            s.expect(None, req.expected_ply).map_err(session_status)?;
            let plies = s.takeback_due(side).map_err(session_status)?;
            Ok(Event::TakenBack {
                side: side.into(),
                plies,
                at_ms: now_ms(),
                request_id,
            })
        })
        .await
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
        self.commit_keyed(id, key, Kind::GameOver, |s, request_id| {
            let uci = if req.r#move.trim().is_empty() {
                None
            } else {
                Some(move_from_text("move", s.position(), &req.r#move, false)?.to_string())
            };
            Ok(Event::DrawClaimed {
                side: side.into(),
                uci,
                at_ms: now_ms(),
                request_id,
            })
        })
        .await
    }
}
