//! What one request does, scenario by scenario, and what it brought back (status, nodes,
//! positions). Every call carries a deadline, sent as `grpc-timeout` and enforced here too.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use chess_proto::v1;
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_rules::Position;
use chess_search::SplitMix64;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use crate::positions::PositionSet;
use crate::scenario::Scenario;

pub const ANALYZE: &str = "/chess.v1.AnalysisService/Analyze";
const ANALYZE_STREAM: &str = "/chess.v1.AnalysisService/AnalyzeStream";
const EVALUATE: &str = "/chess.v1.AnalysisService/EvaluatePositions";
const CREATE_GAME: &str = "/chess.v1.GameService/CreateGame";
const MAKE_MOVE: &str = "/chess.v1.GameService/MakeMove";
const ENGINE_MOVE: &str = "/chess.v1.GatewayService/EngineMove";
const LEGAL_MOVES: &str = "/chess.v1.RulesService/LegalMoves";
const POSITION_STATUS: &str = "/chess.v1.RulesService/PositionStatus";
const VALIDATE_FEN: &str = "/chess.v1.RulesService/ValidateFen";
const CONVERT_MOVES: &str = "/chess.v1.RulesService/ConvertMoves";

/// What one call brought back.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    /// The gRPC method path, as the servers' metrics label it.
    pub method: &'static str,
    pub code: Code,
    /// The error's message (empty on success).
    pub message: String,
    /// Nodes the engine reports in the answer (the search's total, once per position).
    pub nodes: u64,
    /// Positions analysed or evaluated by this call.
    pub positions: u64,
}

impl CallOutcome {
    fn ok(method: &'static str, nodes: u64, positions: u64) -> CallOutcome {
        CallOutcome {
            method,
            code: Code::Ok,
            message: String::new(),
            nodes,
            positions,
        }
    }

    fn failed(method: &'static str, status: &Status) -> CallOutcome {
        CallOutcome {
            method,
            code: status.code(),
            message: status.message().to_owned(),
            nodes: 0,
            positions: 0,
        }
    }
}

/// The client's reproducible choices: the first output of the shared SplitMix64 generator
/// seeded with `x`, so each choice depends only on the run's seed and the request number.
fn mix64(x: u64) -> u64 {
    SplitMix64::new(x).next_u64()
}

/// A game in progress of the game scenario.
#[derive(Debug)]
struct GameSession {
    id: String,
    position: Position,
    ply: u32,
    /// The engine moves next (else the client).
    engine_next: bool,
    /// The engine plays one side (the game scenario; else the moves scenario).
    engine: bool,
}

/// Everything a request needs; shared by all clients.
#[derive(Debug)]
pub struct Work {
    pub scenario: Scenario,
    pub mix: Vec<(Scenario, u32)>,
    pub positions: PositionSet,
    pub limits: v1::SearchLimits,
    pub multipv: u32,
    pub batch: u32,
    pub game_plies: u32,
    pub elo: u32,
    pub seed: u64,
    pub timeout: Duration,
    /// `authorization: Bearer KEY` for a gateway that wants API keys; sent on every call.
    authorization: Option<AsciiMetadataValue>,
    /// Games waiting for their next step; a request takes one (or creates one) and puts it
    /// back after its step. Index 1: games against the engine; 0: between clients.
    games: [Mutex<Vec<GameSession>>; 2],
}

impl Work {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        scenario: Scenario,
        mix: Vec<(Scenario, u32)>,
        positions: PositionSet,
        limits: v1::SearchLimits,
        multipv: u32,
        batch: u32,
        game_plies: u32,
        elo: u32,
        seed: u64,
        timeout: Duration,
    ) -> Work {
        Work {
            scenario,
            mix,
            positions,
            limits,
            multipv,
            batch,
            game_plies,
            elo,
            seed,
            timeout,
            authorization: None,
            games: Default::default(),
        }
    }

    /// Sends `key` as `authorization: Bearer KEY` on every call (none or blank: no header).
    pub fn with_api_key(mut self, key: Option<&str>) -> Result<Work, String> {
        // The message never repeats the key.
        let unsendable = |_| "the API key has characters that cannot be sent in a header";
        self.authorization = match key.map(str::trim) {
            None | Some("") => None,
            Some(key) => {
                Some(MetadataValue::try_from(format!("Bearer {key}")).map_err(unsendable)?)
            }
        };
        Ok(self)
    }

    /// The scenarios requests will run.
    pub fn scenarios(&self) -> Vec<Scenario> {
        match self.scenario {
            Scenario::Mix => self.mix.iter().map(|(s, _)| *s).collect(),
            s => vec![s],
        }
    }

    /// The gRPC services the target must serve.
    pub fn required_services(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for s in self.scenarios() {
            let needs: &[&'static str] = match s {
                Scenario::Analyze | Scenario::AnalyzeStream | Scenario::Evaluate => {
                    &["chess.v1.AnalysisService"]
                }
                Scenario::Game => &["chess.v1.GameService", "chess.v1.GatewayService"],
                Scenario::Moves => &["chess.v1.GameService"],
                Scenario::Rules => &["chess.v1.RulesService"],
                Scenario::Mix => &[],
            };
            for n in needs {
                if !out.contains(n) {
                    out.push(*n);
                }
            }
        }
        out
    }

    fn pick(&self, seq: u64) -> Scenario {
        if self.scenario != Scenario::Mix {
            return self.scenario;
        }
        let total: u64 = self.mix.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut r = mix64(self.seed ^ mix64(seq)) % total.max(1);
        for (s, w) in &self.mix {
            if r < u64::from(*w) {
                return *s;
            }
            r -= u64::from(*w);
        }
        self.mix[0].0
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut r = Request::new(message);
        r.set_timeout(self.timeout);
        if let Some(value) = &self.authorization {
            r.metadata_mut().insert("authorization", value.clone());
        }
        r
    }

    /// Runs `call` within the deadline; a call the server lets run past it ends here with
    /// DEADLINE_EXCEEDED.
    async fn bounded<F>(&self, method: &'static str, call: F) -> CallOutcome
    where
        F: Future<Output = Result<CallOutcome, Status>>,
    {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(status)) => CallOutcome::failed(method, &status),
            Err(_) => CallOutcome::failed(
                method,
                &Status::deadline_exceeded(format!(
                    "no answer within {:?} (client-side deadline)",
                    self.timeout
                )),
            ),
        }
    }

    /// Request number `seq`.
    pub async fn call(&self, seq: u64, channel: Channel) -> CallOutcome {
        match self.pick(seq) {
            Scenario::Analyze | Scenario::Mix => self.analyze(seq, channel).await,
            Scenario::AnalyzeStream => self.analyze_stream(seq, channel).await,
            Scenario::Evaluate => self.evaluate(seq, channel).await,
            Scenario::Game => self.game_step(seq, channel, true).await,
            Scenario::Moves => self.game_step(seq, channel, false).await,
            Scenario::Rules => self.rules(seq, channel).await,
        }
    }

    fn analyze_request(&self, seq: u64) -> v1::AnalyzeRequest {
        v1::AnalyzeRequest {
            fen: self.positions.get(seq).fen.clone(),
            moves: Vec::new(),
            limits: Some(self.limits),
            multipv: self.multipv,
        }
    }

    async fn analyze(&self, seq: u64, channel: Channel) -> CallOutcome {
        let request = self.request(self.analyze_request(seq));
        self.bounded(ANALYZE, async {
            let answer = AnalysisServiceClient::new(channel)
                .analyze(request)
                .await?
                .into_inner();
            Ok(CallOutcome::ok(ANALYZE, search_nodes(&answer.lines), 1))
        })
        .await
    }

    async fn analyze_stream(&self, seq: u64, channel: Channel) -> CallOutcome {
        let request = self.request(self.analyze_request(seq));
        self.bounded(ANALYZE_STREAM, async {
            let mut stream = AnalysisServiceClient::new(channel)
                .analyze_stream(request)
                .await?
                .into_inner();
            let mut last = None;
            // Read to the end, trailers included: a stream dropped after its last message
            // counts as CANCELLED on the servers.
            while let Some(message) = stream.message().await? {
                if message.done {
                    last = Some(search_nodes(&message.lines));
                }
            }
            match last {
                Some(nodes) => Ok(CallOutcome::ok(ANALYZE_STREAM, nodes, 1)),
                None => Err(Status::internal(
                    "the stream ended without its final message (done: true)",
                )),
            }
        })
        .await
    }

    async fn evaluate(&self, seq: u64, channel: Channel) -> CallOutcome {
        let n = u64::from(self.batch);
        let fens = (0..n)
            .map(|i| self.positions.get(seq * n + i).fen.clone())
            .collect();
        let request = self.request(v1::EvaluatePositionsRequest { fens });
        self.bounded(EVALUATE, async {
            let answer = AnalysisServiceClient::new(channel)
                .evaluate_positions(request)
                .await?
                .into_inner();
            if answer.evaluations.len() as u64 != n {
                return Err(Status::internal(format!(
                    "{} evaluations for {n} positions",
                    answer.evaluations.len()
                )));
            }
            Ok(CallOutcome::ok(EVALUATE, 0, n))
        })
        .await
    }

    async fn rules(&self, seq: u64, channel: Channel) -> CallOutcome {
        let spot = self.positions.get(seq);
        let fen = spot.fen.clone();
        let mut client = RulesServiceClient::new(channel);
        match (seq / self.positions.spots.len().max(1) as u64 + seq) % 4 {
            0 => {
                let request = self.request(v1::LegalMovesRequest { fen, moves: vec![] });
                self.bounded(LEGAL_MOVES, async {
                    client.legal_moves(request).await?;
                    Ok(CallOutcome::ok(LEGAL_MOVES, 0, 0))
                })
                .await
            }
            1 => {
                let request = self.request(v1::PositionStatusRequest { fen, moves: vec![] });
                self.bounded(POSITION_STATUS, async {
                    client.position_status(request).await?;
                    Ok(CallOutcome::ok(POSITION_STATUS, 0, 0))
                })
                .await
            }
            2 => {
                let request = self.request(v1::ValidateFenRequest { fen });
                self.bounded(VALIDATE_FEN, async {
                    client.validate_fen(request).await?;
                    Ok(CallOutcome::ok(VALIDATE_FEN, 0, 0))
                })
                .await
            }
            _ => {
                // A few legal moves in a row from the position, in UCI.
                let mut pos = spot.position.clone();
                let mut moves = Vec::new();
                let mut r = mix64(self.seed ^ seq);
                for _ in 0..4 {
                    let legal = pos.legal_moves();
                    if legal.is_empty() {
                        break;
                    }
                    let m = legal[(r % legal.len() as u64) as usize];
                    r = mix64(r);
                    moves.push(m.to_string());
                    pos.play_unchecked(m);
                }
                let request = self.request(v1::ConvertMovesRequest {
                    fen,
                    moves,
                    strict: false,
                });
                self.bounded(CONVERT_MOVES, async {
                    client.convert_moves(request).await?;
                    Ok(CallOutcome::ok(CONVERT_MOVES, 0, 0))
                })
                .await
            }
        }
    }

    fn take_game(&self, engine: bool) -> Option<GameSession> {
        self.games[usize::from(engine)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
    }

    /// Puts a game back unless it is over or long enough.
    fn keep_game(&self, session: GameSession) {
        if session.ply >= self.game_plies || !session.position.has_legal_moves() {
            return;
        }
        self.games[usize::from(session.engine)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session);
    }

    /// One step of a game: create it, the client's move, or (with `engine`) the engine's
    /// reply. A failed step drops the game (its state is unknown); the next request starts a
    /// new one.
    async fn game_step(&self, seq: u64, channel: Channel, engine: bool) -> CallOutcome {
        match self.take_game(engine) {
            None => {
                let spot = self.positions.get(seq);
                let request = self.request(v1::CreateGameRequest {
                    start_fen: spot.fen.clone(),
                    white: "chess-loadgen".to_owned(),
                    black: if engine { "engine" } else { "chess-loadgen" }.to_owned(),
                    ..Default::default()
                });
                let position = spot.position.clone();
                self.bounded(CREATE_GAME, async {
                    let state = GameServiceClient::new(channel)
                        .create_game(request)
                        .await?
                        .into_inner();
                    self.keep_game(GameSession {
                        id: state.game_id,
                        position,
                        ply: state.ply,
                        engine_next: false,
                        engine,
                    });
                    Ok(CallOutcome::ok(CREATE_GAME, 0, 0))
                })
                .await
            }
            Some(session) if session.engine_next => {
                let request = self.request(v1::EngineMoveRequest {
                    game_id: session.id.clone(),
                    strength: Some(v1::Strength {
                        elo: self.elo,
                        seed: mix64(self.seed ^ seq) | 1,
                        ..Default::default()
                    }),
                    limits: Some(self.limits),
                    play: true,
                });
                self.bounded(ENGINE_MOVE, async {
                    let answer = GatewayServiceClient::new(channel)
                        .engine_move(request)
                        .await?
                        .into_inner();
                    let nodes = answer
                        .engine
                        .as_ref()
                        .and_then(|e| e.line.as_ref())
                        .map_or(0, |l| l.nodes);
                    self.after_step(session, answer.game.as_ref(), false)?;
                    Ok(CallOutcome::ok(ENGINE_MOVE, nodes, 1))
                })
                .await
            }
            Some(session) => {
                let legal = session.position.legal_moves();
                let r = mix64(self.seed ^ mix64(seq));
                let m = legal[(r % legal.len().max(1) as u64) as usize];
                let request = self.request(v1::MakeMoveRequest {
                    game_id: session.id.clone(),
                    r#move: m.to_string(),
                    expected_ply: Some(session.ply),
                    ..Default::default()
                });
                self.bounded(MAKE_MOVE, async {
                    let state = GameServiceClient::new(channel)
                        .make_move(request)
                        .await?
                        .into_inner();
                    self.after_step(session, Some(&state), engine)?;
                    Ok(CallOutcome::ok(MAKE_MOVE, 0, 0))
                })
                .await
            }
        }
    }

    fn after_step(
        &self,
        mut session: GameSession,
        state: Option<&v1::GameState>,
        engine_next: bool,
    ) -> Result<(), Status> {
        let state = state.ok_or_else(|| Status::internal("the answer carries no game state"))?;
        if state.outcome.is_some() {
            return Ok(());
        }
        session.position = Position::from_fen(&state.fen).map_err(|e| {
            Status::internal(format!("the game's FEN {:?} does not read: {e}", state.fen))
        })?;
        session.ply = state.ply;
        session.engine_next = engine_next;
        self.keep_game(session);
        Ok(())
    }
}

/// The nodes of one search: every MultiPV line carries the search's total, so the largest,
/// not the sum (the search service's `chess_search_nodes_total` counts it the same way).
fn search_nodes(lines: &[v1::AnalysisLine]) -> u64 {
    lines.iter().map(|l| l.nodes).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_mix;

    #[test]
    fn choices_are_the_splitmix64_outputs_they_always_were() {
        // SplitMix64's first outputs for these seeds: a seed keeps drawing the same
        // positions, moves and mix from one version to the next.
        assert_eq!(mix64(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(mix64(1), 0x910a_2dec_8902_5cc1);
        assert_eq!(mix64(0x1234_5678_9abc_def0), 0x1619_22c6_45ce_50e8);
        assert_eq!(mix64(u64::MAX), 0xe4d9_7177_1b65_2c20);
    }

    #[test]
    fn an_api_key_goes_on_every_request_as_a_bearer_token() {
        let work = |key: Option<&str>| {
            Work::new(
                Scenario::Rules,
                Vec::new(),
                PositionSet::built_in(),
                v1::SearchLimits::default(),
                1,
                1,
                10,
                0,
                7,
                Duration::from_secs(1),
            )
            .with_api_key(key)
        };
        let keyed = work(Some(" local-example-key\n")).unwrap();
        let r = keyed.request(());
        assert_eq!(
            r.metadata().get("authorization").unwrap(),
            "Bearer local-example-key"
        );
        for none in [None, Some(""), Some("  ")] {
            let r = work(none).unwrap().request(());
            assert!(r.metadata().get("authorization").is_none());
        }
        let refused = work(Some("k\ney")).unwrap_err();
        assert!(!refused.contains("k\ney"), "{refused}");
    }

    #[test]
    fn mixes_parse_and_draw_by_weight() {
        let mix = parse_mix("analyze=1,rules=3").unwrap().0;
        assert_eq!(mix, vec![(Scenario::Analyze, 1), (Scenario::Rules, 3)]);
        assert!(parse_mix("analyze=x").is_err());
        assert!(parse_mix("chess=1").is_err());
        assert!(parse_mix("mix=1").is_err());
        assert!(parse_mix("rules=0").is_err());
        assert!(parse_mix("rules=1,rules=2").is_err());
        let work = Work::new(
            Scenario::Mix,
            mix,
            PositionSet::built_in(),
            v1::SearchLimits::default(),
            1,
            1,
            10,
            0,
            7,
            Duration::from_secs(1),
        );
        let rules = (0..10_000)
            .filter(|&s| work.pick(s) == Scenario::Rules)
            .count();
        assert!((7_000..8_000).contains(&rules), "{rules}");
        assert_eq!(
            work.required_services(),
            ["chess.v1.AnalysisService", "chess.v1.RulesService"]
        );
    }

    #[test]
    fn nodes_are_the_search_total_not_a_sum_over_lines() {
        let line = |nodes| v1::AnalysisLine {
            nodes,
            ..Default::default()
        };
        assert_eq!(search_nodes(&[line(500), line(500), line(500)]), 500);
        assert_eq!(search_nodes(&[]), 0);
    }
}
