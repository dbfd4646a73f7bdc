//! The four public services: each call is admitted (key, rate, deadline), checked against the
//! limits, then forwarded to the backend that owns it. EngineMove is the one call the gateway
//! composes itself: a game from the rules service, a move from the search service, and that
//! move played in the game.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use chess_proto::FieldViolation;
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
    ServerInfoResponse, TouchPieceRequest, ValidateFenRequest, ValidateFenResponse,
    WatchGameRequest, WritePgnRequest, WritePgnResponse,
};
use chess_service_kit::{Metrics, Shutdown};
use futures::Stream;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::codec::{CompressionEncoding, Streaming};
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status};

use crate::auth::Authenticator;
use crate::config::Settings;
use crate::replicas::{Replica, SearchPool};
use crate::upstream::{Backend, incoming_timeout, outgoing, pass_response};

/// Largest response accepted from a backend (a parsed PGN of many games is several times the
/// size of the text).
const MAX_BACKEND_MESSAGE: usize = 64 << 20;

/// A forwarded server stream.
pub(crate) type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The gateway's state, shared by all four services.
#[derive(Debug)]
pub(crate) struct Gateway {
    auth: Authenticator,
    rules: Backend,
    search: Arc<SearchPool>,
    max_pgn_bytes: u64,
    max_moves: u32,
    max_batch: u32,
    rate_limit: u32,
    default_deadline: Option<Duration>,
    backend_gzip: bool,
    watchers: Option<(Arc<Semaphore>, u32)>,
    shutdown: Shutdown,
    stats: Stats,
}

#[derive(Debug)]
struct Stats {
    unauthenticated: Counter,
    rate_limited: Counter,
    watchers: Gauge,
}

/// An admitted call: its metadata and the deadline to pass on.
#[derive(Debug)]
struct Call {
    metadata: MetadataMap,
    deadline: Option<Instant>,
}

/// A generated client with the gateway's settings for backend calls.
macro_rules! client {
    ($self:ident, $client:ident, $backend:expr) => {{
        let client = $client::new($backend.channel.clone())
            .accept_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_BACKEND_MESSAGE);
        if $self.backend_gzip {
            client.send_compressed(CompressionEncoding::Gzip)
        } else {
            client
        }
    }};
}

impl Gateway {
    pub fn new(settings: &Settings, metrics: &Metrics, shutdown: Shutdown) -> Gateway {
        Gateway {
            auth: Authenticator::new(settings.auth.clone(), settings.rate),
            rules: Backend::new("rules", &settings.rules),
            search: Arc::new(SearchPool::new(
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
    fn admit<T>(
        &self,
        method: &'static str,
        request: Request<T>,
        unary: bool,
    ) -> Result<(Call, T), Status> {
        let peer = request.remote_addr();
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
        Ok((Call { metadata, deadline }, message))
    }

    pub fn rules_address(&self) -> &str {
        &self.rules.address
    }

    pub fn search(&self) -> &Arc<SearchPool> {
        &self.search
    }

    fn check_moves(&self, field: &str, count: usize) -> Result<(), Status> {
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

    /// Sends one call to `backend` and waits for its answer (for a server stream: its
    /// headers), within the call's deadline. Dropping the returned future (the caller went
    /// away) drops the backend call, which cancels it there.
    async fn forward<C, Req, Resp, Fut>(
        backend: &Backend,
        client: C,
        call: &Call,
        message: Req,
        send: impl FnOnce(C, Request<Req>) -> Fut,
    ) -> Result<Response<Resp>, Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let request = outgoing(message, &call.metadata, call.deadline);
        let result = match call.deadline {
            Some(deadline) => {
                let deadline = tokio::time::Instant::from_std(deadline);
                match tokio::time::timeout_at(deadline, send(client, request)).await {
                    Ok(result) => result,
                    Err(_) => return Err(backend.deadline_exceeded()),
                }
            }
            None => send(client, request).await,
        };
        result
            .map(pass_response)
            .map_err(|status| backend.map_error(status, call.deadline))
    }

    /// Forwards an idempotent analysis call to a search replica (round-robin over the healthy
    /// ones). One that fails with UNAVAILABLE before answering is ejected and the call is
    /// retried once on another replica, within the same deadline. Also says which replica
    /// answered.
    async fn to_search<Req: Clone, Resp, Fut>(
        &self,
        call: &Call,
        message: Req,
        send: impl Fn(AnalysisServiceClient<Channel>, Request<Req>) -> Fut,
    ) -> Result<(Arc<Replica>, Response<Resp>), Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let candidates = self.search.candidates()?;
        let mut failed: Vec<(Arc<str>, Status)> = Vec::new();
        for replica in candidates {
            let backend = &replica.backend;
            if call.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(backend.deadline_exceeded());
            }
            if !failed.is_empty() {
                self.search.retried();
                tracing::info!(address = %backend.address, "retrying the analysis call on another search replica");
            }
            let client = client!(self, AnalysisServiceClient, backend);
            match Self::forward(backend, client, call, message.clone(), &send).await {
                Err(status) if status.code() == Code::Unavailable => {
                    self.search.failed(&replica, &status);
                    failed.push((backend.address.clone(), status));
                }
                Err(status) => return Err(status),
                Ok(response) => {
                    self.search.succeeded(&replica);
                    return Ok((replica, response));
                }
            }
        }
        match failed.len() {
            0 => Err(Status::unavailable("no search replica answered")),
            // The only replica there is: its own answer, details and all.
            1 => Err(failed
                .pop()
                .map(|(_, status)| status)
                .unwrap_or_else(|| Status::unavailable("no search replica answered"))),
            _ => {
                let tried: Vec<String> = failed
                    .iter()
                    .map(|(address, status)| {
                        if status.message().contains(&**address) {
                            status.message().to_owned()
                        } else {
                            format!("the search service at {address}: {}", status.message())
                        }
                    })
                    .collect();
                Err(Status::unavailable(format!(
                    "analysis failed on two search replicas, each UNAVAILABLE: {}",
                    tried.join("; ")
                )))
            }
        }
    }

    fn check_batch(&self, field: &str, count: usize) -> Result<(), Status> {
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

    /// A stream slot, or RESOURCE_EXHAUSTED when the gateway serves its limit.
    fn watcher_slot(&self) -> Result<WatchSlot, Status> {
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
            gauge: self.stats.watchers.clone(),
        })
    }
}

/// Holds a WatchGame stream's place under `--max-watchers` while it is open.
#[derive(Debug)]
struct WatchSlot {
    _permit: Option<OwnedSemaphorePermit>,
    gauge: Gauge,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// A backend's server stream passed through: errors mapped like unary ones, and optionally
/// ended with UNAVAILABLE when the gateway shuts down. Dropping it (the caller went away)
/// drops the backend stream, which cancels the call there.
struct Forwarded<T> {
    inner: Streaming<T>,
    backend: Backend,
    /// For a search stream: the pool and replica to eject when the stream fails UNAVAILABLE.
    replica: Option<(Arc<SearchPool>, Arc<Replica>)>,
    deadline: Option<Instant>,
    stop: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    done: bool,
    _slot: Option<WatchSlot>,
}

impl<T> Stream for Forwarded<T> {
    type Item = Result<T, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(stop) = &mut this.stop
            && stop.as_mut().poll(cx).is_ready()
        {
            this.done = true;
            return Poll::Ready(Some(Err(Status::unavailable(
                "the gateway is shutting down; watch again to resume",
            ))));
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Err(status))) => {
                this.done = true;
                let status = this.backend.map_error(status, this.deadline);
                if let Some((pool, replica)) = &this.replica
                    && status.code() == Code::Unavailable
                {
                    pool.failed(replica, &status);
                }
                Poll::Ready(Some(Err(status)))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            other => other,
        }
    }
}

impl Gateway {
    fn stream<T: Send + 'static>(
        &self,
        response: Response<Streaming<T>>,
        backend: &Backend,
        deadline: Option<Instant>,
        slot: Option<WatchSlot>,
    ) -> Response<BoxStream<T>> {
        self.stream_from(response, backend, None, deadline, slot)
    }

    fn search_stream<T: Send + 'static>(
        &self,
        response: Response<Streaming<T>>,
        replica: Arc<Replica>,
        deadline: Option<Instant>,
    ) -> Response<BoxStream<T>> {
        let backend = replica.backend.clone();
        let on_failure = Some((self.search.clone(), replica));
        self.stream_from(response, &backend, on_failure, deadline, None)
    }

    fn stream_from<T: Send + 'static>(
        &self,
        response: Response<Streaming<T>>,
        backend: &Backend,
        replica: Option<(Arc<SearchPool>, Arc<Replica>)>,
        deadline: Option<Instant>,
        slot: Option<WatchSlot>,
    ) -> Response<BoxStream<T>> {
        let stop = slot.is_some().then(|| {
            let shutdown = self.shutdown.clone();
            Box::pin(async move { shutdown.wait().await })
                as Pin<Box<dyn Future<Output = ()> + Send>>
        });
        let (metadata, inner, extensions) = response.into_parts();
        let stream = Forwarded {
            inner,
            backend: backend.clone(),
            replica,
            deadline,
            stop,
            done: false,
            _slot: slot,
        };
        Response::from_parts(metadata, Box::pin(stream) as BoxStream<T>, extensions)
    }
}

/// A unary call to the rules service, after the admission and the given checks.
macro_rules! rules_call {
    ($self:ident, $request:ident, $client:ident, $method:ident $(, |$m:ident| $check:expr)?) => {{
        let (call, message) = $self.admit(stringify!($method), $request, true)?;
        $( { let $m = &message; $check?; } )?
        let client = client!($self, $client, $self.rules);
        Self::forward(&$self.rules, client, &call, message, |mut c, r| async move {
            c.$method(r).await
        })
        .await
    }};
}

#[tonic::async_trait]
impl RulesService for Gateway {
    async fn legal_moves(
        &self,
        request: Request<LegalMovesRequest>,
    ) -> Result<Response<LegalMovesResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, legal_moves, |m| self
            .check_moves("moves", m.moves.len()))
    }

    async fn convert_moves(
        &self,
        request: Request<ConvertMovesRequest>,
    ) -> Result<Response<ConvertMovesResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, convert_moves, |m| self
            .check_moves("moves", m.moves.len()))
    }

    async fn validate_fen(
        &self,
        request: Request<ValidateFenRequest>,
    ) -> Result<Response<ValidateFenResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, validate_fen)
    }

    async fn position_status(
        &self,
        request: Request<PositionStatusRequest>,
    ) -> Result<Response<PositionStatusResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, position_status, |m| self
            .check_moves("moves", m.moves.len()))
    }

    async fn parse_pgn(
        &self,
        request: Request<ParsePgnRequest>,
    ) -> Result<Response<ParsePgnResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, parse_pgn, |m| self
            .check_pgn(&m.pgn))
    }

    async fn write_pgn(
        &self,
        request: Request<WritePgnRequest>,
    ) -> Result<Response<WritePgnResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, write_pgn, |m| self
            .check_moves("moves", m.moves.len()))
    }

    async fn describe_position(
        &self,
        request: Request<DescribePositionRequest>,
    ) -> Result<Response<DescribePositionResponse>, Status> {
        rules_call!(self, request, RulesServiceClient, describe_position, |m| {
            self.check_moves("moves", m.moves.len())
        })
    }
}

impl Gateway {
    fn check_pgn(&self, pgn: &str) -> Result<(), Status> {
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
        rules_call!(self, request, GameServiceClient, create_game)
    }

    async fn get_game(
        &self,
        request: Request<GetGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, get_game)
    }

    async fn make_move(
        &self,
        request: Request<MakeMoveRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, make_move)
    }

    type WatchGameStream = BoxStream<GameEvent>;

    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let (call, message) = self.admit("watch_game", request, false)?;
        let slot = self.watcher_slot()?;
        let client = client!(self, GameServiceClient, self.rules);
        let response = Self::forward(&self.rules, client, &call, message, |mut c, r| async move {
            c.watch_game(r).await
        })
        .await?;
        Ok(self.stream(response, &self.rules, call.deadline, Some(slot)))
    }

    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, resign)
    }

    async fn respond_to_draw(
        &self,
        request: Request<RespondToDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, respond_to_draw)
    }

    async fn claim_draw(
        &self,
        request: Request<ClaimDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, claim_draw)
    }

    async fn touch_piece(
        &self,
        request: Request<TouchPieceRequest>,
    ) -> Result<Response<GameState>, Status> {
        rules_call!(self, request, GameServiceClient, touch_piece)
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
        let (_, response) = self
            .to_search(&call, message, |mut c, r| async move { c.analyze(r).await })
            .await?;
        Ok(response)
    }

    type AnalyzeStreamStream = BoxStream<AnalyzeResponse>;

    async fn analyze_stream(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStreamStream>, Status> {
        let (call, message) = self.admit("analyze_stream", request, false)?;
        self.check_moves("moves", message.moves.len())?;
        let (replica, response) = self
            .to_search(&call, message, |mut c, r| async move {
                c.analyze_stream(r).await
            })
            .await?;
        Ok(self.search_stream(response, replica, call.deadline))
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
        let (replica, response) = self
            .to_search(&call, message, |mut c, r| async move {
                c.analyze_batch(r).await
            })
            .await?;
        Ok(self.search_stream(response, replica, call.deadline))
    }

    async fn best_move(
        &self,
        request: Request<BestMoveRequest>,
    ) -> Result<Response<BestMoveResponse>, Status> {
        let (call, message) = self.admit("best_move", request, true)?;
        self.check_moves("moves", message.moves.len())?;
        let (_, response) = self
            .to_search(
                &call,
                message,
                |mut c, r| async move { c.best_move(r).await },
            )
            .await?;
        Ok(response)
    }

    async fn review_game(
        &self,
        request: Request<ReviewGameRequest>,
    ) -> Result<Response<ReviewGameResponse>, Status> {
        let (call, message) = self.admit("review_game", request, true)?;
        self.check_pgn(&message.pgn)?;
        let (_, response) = self
            .to_search(
                &call,
                message,
                |mut c, r| async move { c.review_game(r).await },
            )
            .await?;
        Ok(response)
    }

    async fn evaluate_positions(
        &self,
        request: Request<EvaluatePositionsRequest>,
    ) -> Result<Response<EvaluatePositionsResponse>, Status> {
        let (call, message) = self.admit("evaluate_positions", request, true)?;
        self.check_batch("fens", message.fens.len())?;
        let (_, response) = self
            .to_search(&call, message, |mut c, r| async move {
                c.evaluate_positions(r).await
            })
            .await?;
        Ok(response)
    }
}

/// Checks that `text` has the shape of a game id (a UUID, hyphenated or as 32 hex digits) so
/// a mistyped id fails here with the field named rather than after a trip to the rules service.
fn check_game_id(text: &str) -> Result<&str, Status> {
    let id = text.trim();
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
    let groups: Vec<&str> = id.split('-').collect();
    let shaped = match groups.as_slice() {
        [simple] => simple.len() == 32 && hex(simple),
        [a, b, c, d, e] => {
            [a.len(), b.len(), c.len(), d.len(), e.len()] == [8, 4, 4, 4, 12]
                && groups.iter().all(|g| hex(g))
        }
        _ => false,
    };
    if shaped {
        Ok(id)
    } else {
        Err(FieldViolation::new(
            "game_id",
            format!("{text:?} is not a game id (a UUID like 67e55044-10b1-426f-9247-bb680e5fe0c8)"),
        )
        .into())
    }
}

impl Gateway {
    /// EngineMove: the game from the rules service, the engine's move for it from the search
    /// service and, with `play`, that move made in the game; all within the caller's deadline.
    async fn engine_move_call(
        &self,
        call: &Call,
        message: EngineMoveRequest,
    ) -> Result<EngineMoveResponse, Status> {
        let game_id = check_game_id(&message.game_id)?.to_owned();
        let client = client!(self, GameServiceClient, self.rules);
        let get = GetGameRequest {
            game_id: game_id.clone(),
        };
        let game = Self::forward(&self.rules, client, call, get, |mut c, r| async move {
            c.get_game(r).await
        })
        .await?
        .into_inner();
        if let Some(outcome) = &game.outcome {
            let how = if outcome.description.is_empty() {
                &outcome.pgn_result
            } else {
                &outcome.description
            };
            return Err(Status::failed_precondition(format!(
                "game {game_id} is over ({how}): there is no move to make"
            )));
        }
        let search = BestMoveRequest {
            fen: game.start_fen.clone(),
            moves: game
                .moves
                .iter()
                .map(|played| {
                    played
                        .r#move
                        .as_ref()
                        .map(|m| m.uci.clone())
                        .unwrap_or_default()
                })
                .collect(),
            strength: message.strength,
            limits: message.limits,
        };
        let (_, engine) = self
            .to_search(call, search, |mut c, r| async move { c.best_move(r).await })
            .await?;
        let engine = engine.into_inner();
        if !message.play {
            return Ok(EngineMoveResponse {
                engine: Some(engine),
                game: Some(game),
            });
        }
        let uci = engine
            .best_move
            .as_ref()
            .map(|m| m.uci.clone())
            .filter(|uci| !uci.is_empty())
            .ok_or_else(|| {
                Status::internal("the search service answered BestMove without a move")
            })?;
        let play = MakeMoveRequest {
            game_id,
            r#move: uci,
            side: game.turn,
            expected_ply: Some(game.ply),
            offer_draw: false,
        };
        let client = client!(self, GameServiceClient, self.rules);
        let after = Self::forward(&self.rules, client, call, play, |mut c, r| async move {
            c.make_move(r).await
        })
        .await?
        .into_inner();
        Ok(EngineMoveResponse {
            engine: Some(engine),
            game: Some(after),
        })
    }
}

#[tonic::async_trait]
impl GatewayService for Gateway {
    async fn server_info(
        &self,
        request: Request<ServerInfoRequest>,
    ) -> Result<Response<ServerInfoResponse>, Status> {
        self.admit("server_info", request, true)?;
        let replicas = self.search.replicas();
        let backends: Vec<&Backend> = std::iter::once(&self.rules)
            .chain(replicas.iter().map(|r| &r.backend))
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
        backends.extend(
            self.search
                .unresolved()
                .into_iter()
                .map(|(name, _)| BackendStatus {
                    name: "search".to_owned(),
                    address: name,
                    health: "UNKNOWN".to_owned(),
                }),
        );
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
        self.engine_move_call(&call, message)
            .await
            .map(Response::new)
    }
}
