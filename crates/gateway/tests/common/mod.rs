//! Shared by the integration tests: the real `chess-gateway` binary on 127.0.0.1 port 0, and
//! in-process fake backends (a rules/game service and search replicas) that return canned
//! data and record what reached them.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_proto::FieldViolation;
use chess_proto::v1::analysis_service_server::{AnalysisService, AnalysisServiceServer};
use chess_proto::v1::game_service_server::{GameService, GameServiceServer};
use chess_proto::v1::rules_service_server::{RulesService, RulesServiceServer};
use chess_proto::v1::*;
use futures::Stream;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::codec::CompressionEncoding::Gzip;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint, Server};
use tonic::{Code, Request, Response, Status};

/// Bound on every wait in these tests.
pub const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// The gateway process

/// A running `chess-gateway`; killed on drop.
pub struct Gateway {
    child: Option<Child>,
    pub addr: SocketAddr,
    pub metrics: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Gateway {
    /// Starts the gateway on 127.0.0.1:0 in front of `rules` with extra flags.
    pub async fn start(rules: SocketAddr, args: &[&str]) -> Gateway {
        Gateway::start_with_env(rules, args, &[]).await
    }

    pub async fn start_with_env(rules: SocketAddr, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let rules = format!("http://{rules}");
        let mut all = vec![
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--rules-addr",
            &rules,
            "--log",
            "chess_gateway=debug,warn",
        ];
        all.extend_from_slice(args);
        let mut child = command(&all, env).spawn().expect("start chess-gateway");
        let stdout = child.stdout.take().unwrap();
        let stderr = drain(child.stderr.take().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.starts_with("LISTENING ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(line);
                }
            }
        });
        let mut gateway = Gateway {
            child: Some(child),
            addr: "0.0.0.0:0".parse().unwrap(),
            metrics: "0.0.0.0:0".parse().unwrap(),
            stderr,
        };
        let line = match tokio::time::timeout(WAIT, rx).await {
            Ok(Ok(line)) => line,
            _ => panic!(
                "the gateway did not announce itself; stderr:\n{}",
                gateway.stderr()
            ),
        };
        assert!(line.starts_with("LISTENING service=gateway "), "{line}");
        let field = |name: &str| -> SocketAddr {
            let prefix = format!("{name}=");
            let word = line
                .split(' ')
                .find_map(|w| w.strip_prefix(prefix.as_str()))
                .unwrap();
            word.parse().unwrap()
        };
        gateway.addr = field("grpc");
        gateway.metrics = field("metrics");
        assert!(gateway.addr.ip().is_loopback() && gateway.addr.port() != 0);
        gateway
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        channel(self.addr).await
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    /// Waits (bounded) for the process to exit.
    pub async fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < within,
                "the gateway did not exit within {within:?}; stderr:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- gateway stderr ---\n{}", self.stderr());
        }
    }
}

pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chess-gateway"));
    cmd.args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs the gateway expecting it to refuse to start: (exit code, stderr).
pub fn refuse(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = command(args, env).spawn().expect("start chess-gateway");
    let stderr = drain(child.stderr.take().unwrap());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            std::thread::sleep(Duration::from_millis(50));
            return (status.code(), stderr.lock().unwrap().clone());
        }
        if started.elapsed() > WAIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the gateway kept running with {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn drain(mut from: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

pub async fn channel(addr: SocketAddr) -> Channel {
    Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(WAIT)
        .connect()
        .await
        .expect("connect to the gateway")
}

/// A request with `authorization: Bearer <key>`.
pub fn with_key<T>(message: T, key: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    request
}

/// A closed port on 127.0.0.1 (bound, then released).
pub fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

// ---------------------------------------------------------------------------------------------
// The fake backends

/// What reached a fake backend.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<String>>,
    changed: tokio::sync::Notify,
}

impl Recorder {
    pub fn record(&self, event: impl Into<String>) {
        self.events.lock().unwrap().push(event.into());
        self.changed.notify_waiters();
    }

    pub fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    /// Waits (bounded) until `event` has been recorded.
    pub async fn wait_for(&self, event: &str, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let changed = self.changed.notified();
            if self.events().iter().any(|e| e == event) {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.events().iter().any(|e| e == event);
            }
        }
    }
}

/// Records `event` when dropped: a handler future dropped before it finished was cancelled.
struct OnDrop(Arc<Recorder>, String);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.record(self.1.clone());
    }
}

/// What the backend saw of the request, sent back as response metadata so the tests can check
/// what the gateway passed on.
fn echo(request_metadata: &MetadataMap) -> MetadataMap {
    let mut out = MetadataMap::new();
    let get = |name: &str| {
        request_metadata
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned()
    };
    out.insert("x-received-timeout", get("grpc-timeout").parse().unwrap());
    out.insert("x-received-encoding", get("grpc-encoding").parse().unwrap());
    out.insert(
        "x-received-authorization",
        get("authorization").parse().unwrap(),
    );
    out.insert(
        "x-received-request-id",
        get("x-request-id").parse().unwrap(),
    );
    out
}

fn respond<T>(request_metadata: &MetadataMap, message: T) -> Response<T> {
    let mut response = Response::new(message);
    *response.metadata_mut() = echo(request_metadata);
    response
}

/// The fake rules service (RulesService and GameService).
///
/// `LegalMoves` with fen `sleep:<ms>` sleeps first, `sleep:forever` never answers (and records
/// `legal_moves dropped` when cancelled); otherwise it echoes the fen as `echo:<fen>`.
/// `ValidateFen` always fails with INVALID_ARGUMENT, a BadRequest detail and metadata.
/// `ParsePgn` answers `valid_games` = the byte length it received.
/// `WatchGame` sends one event every 50 ms (`KIND_SNAPSHOT` first) and records
/// `watch dropped` when the stream is dropped.
#[derive(Clone, Default)]
pub struct FakeRules {
    pub recorder: Arc<Recorder>,
}

pub struct FakeBackend {
    pub addr: SocketAddr,
    pub recorder: Arc<Recorder>,
}

/// Starts the fake rules service (with gRPC health: SERVING) on 127.0.0.1:0.
pub async fn start_rules() -> FakeBackend {
    let fake = FakeRules::default();
    let recorder = fake.recorder.clone();
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    let router = Server::builder()
        .add_service(health)
        .add_service(
            RulesServiceServer::new(fake.clone())
                .accept_compressed(Gzip)
                .send_compressed(Gzip),
        )
        .add_service(
            GameServiceServer::new(fake)
                .accept_compressed(Gzip)
                .send_compressed(Gzip),
        );
    let addr = serve(router).await;
    FakeBackend { addr, recorder }
}

async fn serve(router: tonic::transport::server::Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    addr
}

/// A game in progress on the fake rules service: 1. e4 e5, white to move.
pub const GAME_IN_PROGRESS: &str = "67e55044-10b1-426f-9247-bb680e5fe0c8";
/// A finished game on the fake rules service.
pub const GAME_OVER: &str = "0b7d3f0a-4a4e-4c8e-9a51-7f4f3b0e2c11";

fn played(uci: &str) -> PlayedMove {
    PlayedMove {
        r#move: Some(Move {
            uci: uci.to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn game_in_progress(ply: u32) -> GameState {
    GameState {
        game_id: GAME_IN_PROGRESS.to_owned(),
        start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
        moves: ["e2e4", "e7e5", "g1f3"]
            .iter()
            .take(ply as usize)
            .map(|m| played(m))
            .collect(),
        ply,
        turn: if ply.is_multiple_of(2) {
            Color::White
        } else {
            Color::Black
        }
        .into(),
        ..Default::default()
    }
}

fn game(id: &str) -> GameState {
    GameState {
        game_id: id.to_owned(),
        ply: 0,
        ..Default::default()
    }
}

#[tonic::async_trait]
impl RulesService for FakeRules {
    async fn legal_moves(
        &self,
        request: Request<LegalMovesRequest>,
    ) -> Result<Response<LegalMovesResponse>, Status> {
        let fen = request.get_ref().fen.clone();
        self.recorder.record(format!("legal_moves {fen}"));
        if fen == "sleep:forever" {
            let _guard = OnDrop(self.recorder.clone(), "legal_moves dropped".into());
            tokio::time::sleep(Duration::from_secs(3600)).await;
        } else if let Some(ms) = fen.strip_prefix("sleep:") {
            tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
        }
        let moves = request
            .get_ref()
            .moves
            .iter()
            .map(|m| Move {
                uci: m.clone(),
                ..Default::default()
            })
            .collect();
        Ok(respond(
            request.metadata(),
            LegalMovesResponse {
                fen: format!("echo:{fen}"),
                moves,
            },
        ))
    }

    async fn convert_moves(
        &self,
        request: Request<ConvertMovesRequest>,
    ) -> Result<Response<ConvertMovesResponse>, Status> {
        // A long, repetitive answer: compresses well.
        let n = request.get_ref().moves.len();
        let moves = (0..n.max(1) * 200)
            .map(|_| Move {
                uci: "e2e4".into(),
                san: "e4".into(),
                coordinate: "e2-e4".into(),
            })
            .collect();
        Ok(respond(
            request.metadata(),
            ConvertMovesResponse {
                moves,
                fens: vec![],
            },
        ))
    }

    async fn validate_fen(
        &self,
        _request: Request<ValidateFenRequest>,
    ) -> Result<Response<ValidateFenResponse>, Status> {
        let mut status =
            FieldViolation::new("fen", "invalid FEN \"x\": expected 6 fields").into_status();
        status
            .metadata_mut()
            .insert("x-backend", "rules-fake".parse().unwrap());
        Err(status)
    }

    async fn position_status(
        &self,
        request: Request<PositionStatusRequest>,
    ) -> Result<Response<PositionStatusResponse>, Status> {
        Ok(respond(
            request.metadata(),
            PositionStatusResponse {
                fen: request.get_ref().fen.clone(),
                ..Default::default()
            },
        ))
    }

    async fn parse_pgn(
        &self,
        request: Request<ParsePgnRequest>,
    ) -> Result<Response<ParsePgnResponse>, Status> {
        let len = request.get_ref().pgn.len() as u32;
        Ok(respond(
            request.metadata(),
            ParsePgnResponse {
                games: vec![],
                valid_games: len,
                invalid_games: 0,
            },
        ))
    }

    async fn write_pgn(
        &self,
        request: Request<WritePgnRequest>,
    ) -> Result<Response<WritePgnResponse>, Status> {
        Ok(respond(
            request.metadata(),
            WritePgnResponse { pgn: "*".into() },
        ))
    }

    async fn describe_position(
        &self,
        request: Request<DescribePositionRequest>,
    ) -> Result<Response<DescribePositionResponse>, Status> {
        Ok(respond(
            request.metadata(),
            DescribePositionResponse {
                fen: request.get_ref().fen.clone(),
                ..Default::default()
            },
        ))
    }

    async fn winnability(
        &self,
        request: Request<WinnabilityRequest>,
    ) -> Result<Response<WinnabilityResponse>, Status> {
        Ok(respond(
            request.metadata(),
            WinnabilityResponse {
                fen: request.get_ref().fen.clone(),
                ..Default::default()
            },
        ))
    }
}

type EventStream = std::pin::Pin<Box<dyn Stream<Item = Result<GameEvent, Status>> + Send>>;

#[tonic::async_trait]
impl GameService for FakeRules {
    async fn create_game(
        &self,
        request: Request<CreateGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        Ok(respond(request.metadata(), game("g1")))
    }

    async fn get_game(
        &self,
        request: Request<GetGameRequest>,
    ) -> Result<Response<GameState>, Status> {
        let id = request.get_ref().game_id.clone();
        self.recorder.record(format!("get_game {id}"));
        if id == GAME_IN_PROGRESS {
            return Ok(respond(request.metadata(), game_in_progress(2)));
        }
        if id == GAME_OVER {
            let mut over = game_in_progress(2);
            over.game_id = GAME_OVER.to_owned();
            over.outcome = Some(Outcome {
                result: outcome::Result::BlackWins.into(),
                rule: outcome::Rule::Resignation.into(),
                pgn_result: "0-1".into(),
                description: "0-1 (white resigned)".into(),
            });
            return Ok(respond(request.metadata(), over));
        }
        if request.get_ref().game_id != "g1" {
            return Err(Status::not_found(format!(
                "no game {:?}",
                request.get_ref().game_id
            )));
        }
        Ok(respond(request.metadata(), game("g1")))
    }

    async fn make_move(
        &self,
        request: Request<MakeMoveRequest>,
    ) -> Result<Response<GameState>, Status> {
        let m = request.get_ref();
        if m.game_id == GAME_IN_PROGRESS {
            self.recorder.record(format!(
                "make_move {} side={} expected_ply={:?}",
                m.r#move, m.side, m.expected_ply
            ));
            return Ok(respond(request.metadata(), game_in_progress(3)));
        }
        Err(Status::failed_precondition(format!(
            "not your move: {}",
            request.get_ref().r#move
        )))
    }

    type WatchGameStream = EventStream;

    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let id = request.get_ref().game_id.clone();
        self.recorder.record(format!("watch {id}"));
        let guard = OnDrop(self.recorder.clone(), "watch dropped".into());
        let stream = futures::stream::unfold((0u32, guard), move |(n, guard)| {
            let id = id.clone();
            async move {
                if n > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let kind = if n == 0 {
                    game_event::Kind::Snapshot
                } else {
                    game_event::Kind::Move
                };
                let event = GameEvent {
                    kind: kind.into(),
                    state: Some(GameState {
                        ply: n,
                        ..game(&id)
                    }),
                };
                Some((Ok(event), (n + 1, guard)))
            }
        });
        Ok(respond(request.metadata(), Box::pin(stream) as EventStream))
    }

    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<GameState>, Status> {
        Ok(respond(
            request.metadata(),
            game(&request.get_ref().game_id),
        ))
    }

    async fn respond_to_draw(
        &self,
        request: Request<RespondToDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        Ok(respond(
            request.metadata(),
            game(&request.get_ref().game_id),
        ))
    }

    async fn claim_draw(
        &self,
        request: Request<ClaimDrawRequest>,
    ) -> Result<Response<GameState>, Status> {
        Ok(respond(
            request.metadata(),
            game(&request.get_ref().game_id),
        ))
    }

    async fn touch_piece(
        &self,
        request: Request<TouchPieceRequest>,
    ) -> Result<Response<GameState>, Status> {
        Ok(respond(
            request.metadata(),
            game(&request.get_ref().game_id),
        ))
    }

    async fn take_back(
        &self,
        request: Request<TakeBackRequest>,
    ) -> Result<Response<GameState>, Status> {
        Ok(respond(
            request.metadata(),
            game(&request.get_ref().game_id),
        ))
    }
}

/// A fake search replica: answers with `fen` = its name (AnalyzeBatch: one result per position
/// in reverse order; EvaluatePositions: `evaluator` = its name; ReviewGame: `annotated_pgn` =
/// its name; BestMove: `g1f3` with `coordinate` = its name, and the search service's check of
/// `strength.elo`).
/// Analyze with this `fen` makes a fake search replica answer with error headers of 40 KB.
pub const HUGE_ERROR: &str = "huge-error";

#[derive(Clone)]
pub struct FakeSearch {
    name: String,
    recorder: Arc<Recorder>,
}

pub async fn start_search(name: &str) -> FakeBackend {
    let recorder = Arc::new(Recorder::default());
    let fake = FakeSearch {
        name: name.to_owned(),
        recorder: recorder.clone(),
    };
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    let router = Server::builder().add_service(health).add_service(
        AnalysisServiceServer::new(fake)
            .accept_compressed(Gzip)
            .send_compressed(Gzip),
    );
    let addr = serve(router).await;
    FakeBackend { addr, recorder }
}

type AnalyzeStream = std::pin::Pin<Box<dyn Stream<Item = Result<AnalyzeResponse, Status>> + Send>>;

#[tonic::async_trait]
impl AnalysisService for FakeSearch {
    async fn analyze(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<AnalyzeResponse>, Status> {
        self.recorder.record("analyze");
        if request.get_ref().fen == HUGE_ERROR {
            // An answer whose headers are over HTTP/2's limit: the replica is up, the call failed.
            return Err(Status::invalid_argument("x".repeat(40_000)));
        }
        Ok(respond(
            request.metadata(),
            AnalyzeResponse {
                fen: self.name.clone(),
                done: true,
                ..Default::default()
            },
        ))
    }

    type AnalyzeStreamStream = AnalyzeStream;

    async fn analyze_stream(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<AnalyzeStream>, Status> {
        self.recorder.record("analyze_stream");
        let name = self.name.clone();
        let items = (1..=3).map(move |depth| {
            Ok(AnalyzeResponse {
                fen: name.clone(),
                lines: vec![AnalysisLine {
                    depth,
                    ..Default::default()
                }],
                done: depth == 3,
                ..Default::default()
            })
        });
        Ok(respond(
            request.metadata(),
            Box::pin(futures::stream::iter(items)) as AnalyzeStream,
        ))
    }

    type AnalyzeBatchStream = BatchStream;

    async fn analyze_batch(
        &self,
        request: Request<AnalyzeBatchRequest>,
    ) -> Result<Response<BatchStream>, Status> {
        let n = request.get_ref().positions.len();
        self.recorder.record(format!("analyze_batch {n}"));
        let name = self.name.clone();
        let items = (0..n as u32).rev().map(move |index| {
            Ok(AnalyzeBatchResponse {
                index,
                result: Some(AnalyzeResponse {
                    fen: name.clone(),
                    done: true,
                    ..Default::default()
                }),
            })
        });
        Ok(respond(
            request.metadata(),
            Box::pin(futures::stream::iter(items)) as BatchStream,
        ))
    }

    async fn best_move(
        &self,
        request: Request<BestMoveRequest>,
    ) -> Result<Response<BestMoveResponse>, Status> {
        let m = request.get_ref();
        let elo = m.strength.as_ref().map_or(0, |s| s.elo);
        self.recorder.record(format!(
            "best_move fen={} moves={} elo={elo}",
            m.fen,
            m.moves.join(",")
        ));
        if elo != 0 && !(800..=3000).contains(&elo) {
            return Err(FieldViolation::new(
                "strength.elo",
                format!("{elo} is outside 800..=3000 (0 for full strength)"),
            )
            .into_status());
        }
        Ok(respond(
            request.metadata(),
            BestMoveResponse {
                best_move: Some(Move {
                    uci: "g1f3".into(),
                    san: "Nf3".into(),
                    coordinate: self.name.clone(),
                }),
                elo,
                ..Default::default()
            },
        ))
    }

    async fn review_game(
        &self,
        request: Request<ReviewGameRequest>,
    ) -> Result<Response<ReviewGameResponse>, Status> {
        self.recorder
            .record(format!("review_game {}", request.get_ref().pgn.len()));
        Ok(respond(
            request.metadata(),
            ReviewGameResponse {
                annotated_pgn: self.name.clone(),
                ..Default::default()
            },
        ))
    }

    async fn evaluate_positions(
        &self,
        request: Request<EvaluatePositionsRequest>,
    ) -> Result<Response<EvaluatePositionsResponse>, Status> {
        let n = request.get_ref().fens.len();
        self.recorder.record(format!("evaluate_positions {n}"));
        Ok(respond(
            request.metadata(),
            EvaluatePositionsResponse {
                evaluations: vec![PositionEvaluation::default(); n],
                evaluator: self.name.clone(),
            },
        ))
    }
}

type BatchStream =
    std::pin::Pin<Box<dyn Stream<Item = Result<AnalyzeBatchResponse, Status>> + Send>>;

/// The single BadRequest field violation of a status, as (field, description).
pub fn violation(status: &Status) -> (String, String) {
    use tonic_types::StatusExt;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let bad = details
        .bad_request()
        .unwrap_or_else(|| panic!("no BadRequest detail in {status:?}"));
    assert_eq!(bad.field_violations.len(), 1);
    let v = &bad.field_violations[0];
    (v.field.clone(), v.description.clone())
}

/// Parses a `grpc-timeout` value (`5S`, `4999872u`, ...).
pub fn grpc_timeout(text: &str) -> Duration {
    let (n, unit) = text.split_at(text.len() - 1);
    let n: u64 = n
        .parse()
        .unwrap_or_else(|_| panic!("bad grpc-timeout {text:?}"));
    match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => panic!("bad grpc-timeout {text:?}"),
    }
}

/// Reads a response's echoed metadata entry.
pub fn echoed<T>(response: &Response<T>, name: &str) -> String {
    response
        .metadata()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", response.metadata()))
        .to_str()
        .unwrap()
        .to_owned()
}
