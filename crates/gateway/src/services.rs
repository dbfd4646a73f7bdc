//! The four public services: each call is admitted (key, rate, deadline), checked against the
//! limits, then forwarded to the backend that owns it ([`crate::upstream`] sends it on,
//! [`crate::replicas`] picks the rules or search replica; MakeMove's retry is in
//! [`crate::make_move`], and EngineMove is composed in [`crate::engine_move`]).
//!
//! The unary calls the gateway forwards as they came are served first by
//! [`crate::passthrough`], which passes their bytes on undecoded with the same admission, checks
//! and keys as here; the typed methods below serve the streams, ServerInfo and EngineMove, and
//! stay the generated servers' own for any forwarded method passthrough/ does not list.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::analysis_service_server::AnalysisService;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::game_service_server::GameService;
use chess_proto::v1::gateway_service_server::GatewayService;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::rules_service_server::RulesService;
use chess_proto::v1::{
    AnalyzeBatchRequest, AnalyzeBatchResponse, AnalyzeRequest, AnalyzeResponse, BackendStatus,
    BestMoveRequest, BestMoveResponse, ClaimDrawRequest, ConvertMovesRequest, ConvertMovesResponse,
    CreateGameRequest, DescribePositionRequest, DescribePositionResponse, EngineMoveRequest,
    EngineMoveResponse, EvaluatePositionsRequest, EvaluatePositionsResponse, GameEvent, GameState,
    GetGameRequest, LegalMovesRequest, LegalMovesResponse, MakeMoveRequest, ParsePgnRequest,
    ParsePgnResponse, PositionStatusRequest, PositionStatusResponse, ResignRequest,
    RespondToDrawRequest, ReviewGameRequest, ReviewGameResponse, ServerInfoRequest,
    ServerInfoResponse, TakeBackRequest, TouchPieceRequest, ValidateFenRequest,
    ValidateFenResponse, WatchGameRequest, WinnabilityRequest, WinnabilityResponse,
    WritePgnRequest, WritePgnResponse,
};
use chess_proto::{FieldViolation, ensure_request_id};
use chess_service_kit::{Metrics, Shutdown};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::{Code, Request, Response, Status};

use crate::auth::{Authenticator, Caller};
use crate::config::Settings;
use crate::engine_move::{Backends, engine_move};
use crate::make_move::make_move;
use crate::replicas::{RULES, ReplicaPool, Retry, SEARCH};
use crate::upstream::{
    BoxStream, Call, StreamHooks, UpstreamChannel, client, gzip_request, incoming_timeout,
};

/// The gateway's state, shared by all four services.
#[derive(Debug)]
pub(crate) struct Gateway {
    auth: Authenticator,
    rules: Arc<ReplicaPool>,
    search: Arc<ReplicaPool>,
    max_pgn_bytes: u64,
    max_moves: u32,
    max_batch: u32,
    rate_limit: u32,
    default_deadline: Option<Duration>,
    backend_gzip: bool,
    watchers: Option<(Arc<Semaphore>, u32)>,
    /// `--max-watchers-per-caller` and the streams each caller holds open.
    watchers_per_caller: Option<(u32, PerCaller)>,
    shutdown: Shutdown,
    stats: Stats,
}

#[derive(Debug)]
struct Stats {
    unauthenticated: Counter,
    rate_limited: Counter,
    watchers: Gauge,
}

impl Gateway {
    pub fn new(settings: &Settings, metrics: &Metrics, shutdown: Shutdown) -> Gateway {
        Gateway {
            auth: Authenticator::new(
                settings.auth.clone(),
                settings.rate,
                settings.max_auth_failures,
            ),
            rules: Arc::new(ReplicaPool::new(
                RULES,
                &settings.rules,
                settings.rules_resolve_interval,
                metrics,
            )),
            search: Arc::new(ReplicaPool::new(
                SEARCH,
                &settings.search,
                settings.search_resolve_interval,
                metrics,
            )),
            max_pgn_bytes: settings.max_pgn_bytes,
            max_moves: settings.max_moves,
            max_batch: settings.max_batch,
            rate_limit: settings.rate.map_or(0, |(rate, _)| rate),
            default_deadline: settings.default_deadline,
            backend_gzip: settings.backend_gzip,
            watchers: settings
                .max_watchers
                .map(|n| (Arc::new(Semaphore::new(n as usize)), n)),
            watchers_per_caller: settings
                .max_watchers_per_caller
                .map(|n| (n, Arc::new(Mutex::new(HashMap::new())))),
            shutdown,
            stats: Stats {
                unauthenticated: metrics.counter(
                    "gateway_unauthenticated",
                    "Calls refused for a missing, malformed or unknown API key",
                ),
                rate_limited: metrics.counter(
                    "gateway_rate_limited",
                    "Calls refused by the per-caller rate limit",
                ),
                watchers: metrics.gauge("gateway_watchers", "WatchGame streams open"),
            },
        }
    }

    /// Checks the key and the rate, and works out the deadline to pass on: the caller's, or
    /// for a unary call without one the default.
    pub(crate) fn admit<T>(
        &self,
        method: &'static str,
        request: Request<T>,
        unary: bool,
    ) -> Result<(Call, T), Status> {
        let peer = chess_service_kit::remote_addr(&request);
        let (metadata, _, message) = request.into_parts();
        let caller = self.auth.admit(&metadata, peer).inspect_err(|status| {
            let counter = match status.code() {
                Code::Unauthenticated => &self.stats.unauthenticated,
                _ => &self.stats.rate_limited,
            };
            counter.inc();
        })?;
        let timeout = incoming_timeout(&metadata)?;
        let timeout = timeout.or(if unary { self.default_deadline } else { None });
        let deadline = timeout.map(|t| Instant::now() + t);
        tracing::debug!(method, caller = %caller.label(), timeout = ?timeout, "forwarding");
        Ok((
            Call {
                metadata,
                deadline,
                caller,
            },
            message,
        ))
    }

    pub fn rules(&self) -> &Arc<ReplicaPool> {
        &self.rules
    }

    pub fn search(&self) -> &Arc<ReplicaPool> {
        &self.search
    }

    /// Whether calls to the backends are gzipped (`--backend-compression gzip`).
    pub(crate) fn backend_gzip(&self) -> bool {
        self.backend_gzip
    }

    pub(crate) fn check_moves(&self, field: &str, count: usize) -> Result<(), Status> {
        if count > self.max_moves as usize {
            return Err(FieldViolation::new(
                field,
                format!(
                    "{count} moves is more than this gateway's limit of {} moves",
                    self.max_moves
                ),
            )
            .into());
        }
        Ok(())
    }

    pub(crate) fn check_batch(&self, field: &str, count: usize) -> Result<(), Status> {
        if count > self.max_batch as usize {
            return Err(FieldViolation::new(
                field,
                format!(
                    "{count} positions is more than this gateway's limit of {} positions per \
                     call",
                    self.max_batch
                ),
            )
            .into());
        }
        Ok(())
    }

    /// A stream slot, or RESOURCE_EXHAUSTED when the caller holds its share or the gateway
    /// serves its limit.
    fn watcher_slot(&self, caller: &Caller) -> Result<WatchSlot, Status> {
        let share = match &self.watchers_per_caller {
            None => None,
            Some((max, open)) => {
                let mut counts = open.lock().unwrap_or_else(|p| p.into_inner());
                let held = counts.entry(caller.clone()).or_insert(0);
                if *held >= *max {
                    return Err(Status::resource_exhausted(format!(
                        "this caller already holds its limit of {max} WatchGame streams \
                         (--max-watchers-per-caller); close one or retry later"
                    )));
                }
                *held += 1;
                Some(CallerShare {
                    caller: caller.clone(),
                    open: open.clone(),
                })
            }
        };
        let permit = match &self.watchers {
            None => None,
            Some((semaphore, max)) => {
                Some(semaphore.clone().try_acquire_owned().map_err(|_| {
                    Status::resource_exhausted(format!(
                        "this gateway already serves its limit of {max} WatchGame streams \
                     (--max-watchers); retry later"
                    ))
                })?)
            }
        };
        self.stats.watchers.inc();
        Ok(WatchSlot {
            _permit: permit,
            _share: share,
            gauge: self.stats.watchers.clone(),
        })
    }
}

/// Open WatchGame streams by caller.
type PerCaller = Arc<Mutex<HashMap<Caller, u32>>>;

/// One of a caller's streams under `--max-watchers-per-caller`, given back on drop.
#[derive(Debug)]
struct CallerShare {
    caller: Caller,
    open: PerCaller,
}

impl Drop for CallerShare {
    fn drop(&mut self) {
        let mut counts = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = counts.get_mut(&self.caller) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                counts.remove(&self.caller);
            }
        }
    }
}

/// Holds a WatchGame stream's place under `--max-watchers` (and the caller's share) while it
/// is open.
#[derive(Debug)]
struct WatchSlot {
    _permit: Option<OwnedSemaphorePermit>,
    _share: Option<CallerShare>,
    gauge: Gauge,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// A unary call to a rules replica, after the admission and the given checks; `$retry` says
/// whether it may be sent to a second replica. A `keyed` call (one that changes a game) gets
/// an idempotency key when it has none: with it the call makes at most one event however
/// often it is sent, so it may go to a second replica.
macro_rules! rules_call {
    (@send $self:ident, $call:ident, $message:ident, $client:ident, $method:ident, $retry:expr) => {{
        let gzip = gzip_request($self.backend_gzip, &$message);
        $self
            .rules
            .call(
                &$call,
                $message,
                $retry,
                |b| client!($client, b, gzip),
                |mut c, r| async move { c.$method(r).await },
            )
            .await
            .map(|(_, response)| response)
    }};
    ($self:ident, $request:ident, $client:ident, $method:ident, keyed) => {{
        let (call, mut message) = $self.admit(stringify!($method), $request, true)?;
        ensure_request_id(&mut message.request_id);
        rules_call!(@send $self, call, message, $client, $method, Retry::Safe)
    }};
    ($self:ident, $request:ident, $client:ident, $method:ident, $retry:expr
     $(, |$m:ident| $check:expr)?) => {{
        let (call, message) = $self.admit(stringify!($method), $request, true)?;
        $( { let $m = &message; $check?; } )?
        rules_call!(@send $self, call, message, $client, $method, $retry)
    }};
}

/// A call to a search replica (any analysis call is safe to send twice) after the admission
/// and the checks; the replica and the answer.
macro_rules! search_call {
    ($self:ident, $call:expr, $message:expr, $method:ident) => {{
        let message = $message;
        let gzip = gzip_request($self.backend_gzip, &message);
        $self
            .search
            .call(
                $call,
                message,
                Retry::Safe,
                |b| client!(AnalysisServiceClient, b, gzip),
                |mut c, r| async move { c.$method(r).await },
            )
            .await
    }};
}

#[tonic::async_trait]
impl RulesService for Gateway {
    async fn legal_moves(
        &self,
        request: Request<LegalMovesRequest>,
    ) -> Result<Response<LegalMovesResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            legal_moves,
            Retry::Safe,
            |m| self.check_moves("moves", m.moves.len())
        )
    }

    async fn convert_moves(
        &self,
        request: Request<ConvertMovesRequest>,
    ) -> Result<Response<ConvertMovesResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            convert_moves,
            Retry::Safe,
            |m| self.check_moves("moves", m.moves.len())
        )
    }

    async fn validate_fen(
        &self,
        request: Request<ValidateFenRequest>,
    ) -> Result<Response<ValidateFenResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, validate_fen, Retry::Safe)
    }

    async fn position_status(
        &self,
        request: Request<PositionStatusRequest>,
    ) -> Result<Response<PositionStatusResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            position_status,
            Retry::Safe,
            |m| self.check_moves("moves", m.moves.len())
        )
    }

    async fn parse_pgn(
        &self,
        request: Request<ParsePgnRequest>,
    ) -> Result<Response<ParsePgnResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            parse_pgn,
            Retry::Safe,
            |m| self.check_pgn(&m.pgn)
        )
    }

    async fn write_pgn(
        &self,
        request: Request<WritePgnRequest>,
    ) -> Result<Response<WritePgnResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            write_pgn,
            Retry::Safe,
            |m| self.check_moves("moves", m.moves.len())
        )
    }

    async fn describe_position(
        &self,
        request: Request<DescribePositionRequest>,
    ) -> Result<Response<DescribePositionResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            describe_position,
            Retry::Safe,
            |m| { self.check_moves("moves", m.moves.len()) }
        )
    }

    async fn winnability(
        &self,
        request: Request<WinnabilityRequest>,
    ) -> Result<Response<WinnabilityResponse>, Status> {
        rules_call!(
            self,
            request,
            RulesServiceClient,
            winnability,
            Retry::Safe,
            |m| { self.check_moves("moves", m.moves.len()) }
        )
    }
}

impl Gateway {
    pub(crate) fn check_pgn(&self, pgn: &str) -> Result<(), Status> {
        if pgn.len() as u64 > self.max_pgn_bytes {
            return Err(FieldViolation::new(
                "pgn",
                format!(
                    "PGN text of {} bytes is longer than this gateway's limit of {} bytes",
                    pgn.len(),
                    self.max_pgn_bytes
                ),
            )
            .into());
        }
        Ok(())
    }
}

#[tonic::async_trait]
impl GameService for Gateway {
    async fn create_game(
        &self,
        request: Request<CreateGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, create_game, keyed)
    }

    async fn get_game(
        &self,
        request: Request<GetGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, get_game, Retry::Safe)
    }

    async fn make_move(
        &self,
        request: Request<MakeMoveRequest>,
    ) -> Result<Response<GameState>, Status> {
        let (call, message) = self.admit("make_move", request, true)?;
        make_move(&self.rules, self.backend_gzip, &call, message).await
    }

    type WatchGameStream = BoxStream<GameEvent>;

    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let (call, message) = self.admit("watch_game", request, false)?;
        let slot = self.watcher_slot(&call.caller)?;
        let gzip = gzip_request(self.backend_gzip, &message);
        // Opening a watch changes nothing: safe on a second replica.
        let (replica, response) = self
            .rules
            .call(
                &call,
                message,
                Retry::Safe,
                |b| client!(GameServiceClient, b, gzip),
                |mut c, r| async move { c.watch_game(r).await },
            )
            .await?;
        let shutdown = self.shutdown.clone();
        let hooks = StreamHooks {
            stop: Some(Box::pin(async move { shutdown.wait().await })),
            hold: Some(Box::new(slot)),
            ..StreamHooks::default()
        };
        Ok(self.rules.stream(response, replica, call.deadline, hooks))
    }

    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, resign, keyed)
    }

    async fn respond_to_draw(
        &self,
        request: Request<RespondToDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, respond_to_draw, keyed)
    }

    async fn claim_draw(
        &self,
        request: Request<ClaimDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, claim_draw, keyed)
    }

    async fn touch_piece(
        &self,
        request: Request<TouchPieceRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, touch_piece, keyed)
    }

    async fn take_back(
        &self,
        request: Request<TakeBackRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, take_back, keyed)
    }
}

#[tonic::async_trait]
impl AnalysisService for Gateway {
    async fn analyze(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<AnalyzeResponse>, Status> {
        let (call, message) = self.admit("analyze", request, true)?;
        self.check_moves("moves", message.moves.len())?;
        let (_, response) = search_call!(self, &call, message, analyze)?;
        Ok(response)
    }

    type AnalyzeStreamStream = BoxStream<AnalyzeResponse>;

    async fn analyze_stream(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStreamStream>, Status> {
        let (call, message) = self.admit("analyze_stream", request, false)?;
        self.check_moves("moves", message.moves.len())?;
        let (replica, response) = search_call!(self, &call, message, analyze_stream)?;
        Ok(self
            .search
            .stream(response, replica, call.deadline, StreamHooks::default()))
    }

    type AnalyzeBatchStream = BoxStream<AnalyzeBatchResponse>;

    async fn analyze_batch(
        &self,
        request: Request<AnalyzeBatchRequest>,
    ) -> Result<Response<Self::AnalyzeBatchStream>, Status> {
        let (call, message) = self.admit("analyze_batch", request, false)?;
        self.check_batch("positions", message.positions.len())?;
        for (i, position) in message.positions.iter().enumerate() {
            self.check_moves(&format!("positions[{i}].moves"), position.moves.len())?;
        }
        let (replica, response) = search_call!(self, &call, message, analyze_batch)?;
        Ok(self
            .search
            .stream(response, replica, call.deadline, StreamHooks::default()))
    }

    async fn best_move(
        &self,
        request: Request<BestMoveRequest>,
    ) -> Result<Response<BestMoveResponse>, Status> {
        let (call, message) = self.admit("best_move", request, true)?;
        self.check_moves("moves", message.moves.len())?;
        let (_, response) = search_call!(self, &call, message, best_move)?;
        Ok(response)
    }

    async fn review_game(
        &self,
        request: Request<ReviewGameRequest>,
    ) -> Result<Response<ReviewGameResponse>, Status> {
        let (call, message) = self.admit("review_game", request, true)?;
        self.check_pgn(&message.pgn)?;
        let (_, response) = search_call!(self, &call, message, review_game)?;
        Ok(response)
    }

    async fn evaluate_positions(
        &self,
        request: Request<EvaluatePositionsRequest>,
    ) -> Result<Response<EvaluatePositionsResponse>, Status> {
        let (call, message) = self.admit("evaluate_positions", request, true)?;
        self.check_batch("fens", message.fens.len())?;
        let (_, response) = search_call!(self, &call, message, evaluate_positions)?;
        Ok(response)
    }
}

#[tonic::async_trait]
impl GatewayService for Gateway {
    async fn server_info(
        &self,
        request: Request<ServerInfoRequest>,
    ) -> Result<Response<ServerInfoResponse>, Status> {
        self.admit("server_info", request, true)?;
        let rules = self.rules.replicas();
        let search = self.search.replicas();
        let backends: Vec<&UpstreamChannel> = rules
            .iter()
            .chain(search.iter())
            .map(|r| &r.backend)
            .collect();
        let health = futures::future::join_all(backends.iter().map(|b| b.health())).await;
        let mut backends: Vec<BackendStatus> = backends
            .iter()
            .zip(health)
            .map(|(b, health)| BackendStatus {
                name: b.name.to_owned(),
                address: b.address.to_string(),
                health: health.to_owned(),
            })
            .collect();
        // A name that resolves to nothing is still reported, so its absence shows.
        for pool in [&self.rules, &self.search] {
            backends.extend(
                pool.unresolved()
                    .into_iter()
                    .map(|(name, _)| BackendStatus {
                        name: pool.service().name.to_owned(),
                        address: name,
                        health: "UNKNOWN".to_owned(),
                    }),
            );
        }
        Ok(Response::new(ServerInfoResponse {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            backends,
            max_pgn_bytes: self.max_pgn_bytes,
            max_moves: self.max_moves,
            max_batch: self.max_batch,
            rate_limit_per_second: self.rate_limit,
            auth_required: self.auth.required(),
        }))
    }

    async fn engine_move(
        &self,
        request: Request<EngineMoveRequest>,
    ) -> Result<Response<EngineMoveResponse>, Status> {
        let (call, message) = self.admit("engine_move", request, true)?;
        let to = Backends {
            rules: &self.rules,
            search: &self.search,
            gzip: self.backend_gzip,
        };
        engine_move(to, &call, message).await.map(Response::new)
    }
}
