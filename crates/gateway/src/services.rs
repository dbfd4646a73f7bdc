//! The four public services: each call is admitted (key, rate, deadline), checked against the
//! limits, then forwarded to the backend that owns it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    AnalyzeRequest, AnalyzeResponse, BackendStatus, ClaimDrawRequest, ConvertMovesRequest,
    ConvertMovesResponse, CreateGameRequest, GameEvent, GameState, GetGameRequest,
    LegalMovesRequest, LegalMovesResponse, MakeMoveRequest, ParsePgnRequest, ParsePgnResponse,
    PositionStatusRequest, PositionStatusResponse, ResignRequest, RespondToDrawRequest,
    ServerInfoRequest, ServerInfoResponse, ValidateFenRequest, ValidateFenResponse,
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
    search: Vec<Backend>,
    next_search: AtomicUsize,
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
            search: settings
                .search
                .iter()
                .map(|uri| Backend::new("search", uri))
                .collect(),
            next_search: AtomicUsize::new(0),
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

    pub fn search_addresses(&self) -> Vec<&str> {
        self.search.iter().map(|b| &*b.address).collect()
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

    /// The search replicas in round-robin order, starting with the next one's turn.
    fn search_replicas(&self) -> Result<impl Iterator<Item = &Backend>, Status> {
        if self.search.is_empty() {
            return Err(Status::unavailable(
                "analysis is not available: this gateway has no search service configured; \
                 start chess-search-service and pass its address with --search-addr \
                 (CHESS_GATEWAY_SEARCH_ADDR)",
            ));
        }
        let n = self.search.len();
        let start = self.next_search.fetch_add(1, Ordering::Relaxed) % n;
        Ok((0..n).map(move |i| &self.search[(start + i) % n]))
    }

    /// Forwards an idempotent analysis call to the replicas in turn until one is available;
    /// also says which one answered.
    async fn to_search<Resp, Fut>(
        &self,
        call: &Call,
        message: AnalyzeRequest,
        send: impl Fn(AnalysisServiceClient<Channel>, Request<AnalyzeRequest>) -> Fut,
    ) -> Result<(&Backend, Response<Resp>), Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let mut last = None;
        for backend in self.search_replicas()? {
            if call.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(backend.deadline_exceeded());
            }
            let client = client!(self, AnalysisServiceClient, backend);
            match Self::forward(backend, client, call, message.clone(), &send).await {
                Err(status) if status.code() == Code::Unavailable => {
                    tracing::warn!(
                        address = %backend.address,
                        message = status.message(),
                        "search replica unavailable; trying the next"
                    );
                    last = Some(status);
                }
                done => return done.map(|response| (backend, response)),
            }
        }
        Err(last.unwrap_or_else(|| Status::unavailable("no search replica answered")))
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
                Poll::Ready(Some(Err(this.backend.map_error(status, this.deadline))))
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
        let stop = slot.is_some().then(|| {
            let shutdown = self.shutdown.clone();
            Box::pin(async move { shutdown.wait().await })
                as Pin<Box<dyn Future<Output = ()> + Send>>
        });
        let (metadata, inner, extensions) = response.into_parts();
        let stream = Forwarded {
            inner,
            backend: backend.clone(),
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
        let (backend, response) = self
            .to_search(&call, message, |mut c, r| async move {
                c.analyze_stream(r).await
            })
            .await?;
        Ok(self.stream(response, backend, call.deadline, None))
    }
}

#[tonic::async_trait]
impl GatewayService for Gateway {
    async fn server_info(
        &self,
        request: Request<ServerInfoRequest>,
    ) -> Result<Response<ServerInfoResponse>, Status> {
        self.admit("server_info", request, true)?;
        let backends: Vec<&Backend> = std::iter::once(&self.rules).chain(&self.search).collect();
        let health = futures::future::join_all(backends.iter().map(|b| b.health())).await;
        let backends = backends
            .iter()
            .zip(health)
            .map(|(b, health)| BackendStatus {
                name: b.name.to_owned(),
                address: b.address.to_string(),
                health: health.to_owned(),
            })
            .collect();
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
}
