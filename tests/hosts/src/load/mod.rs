//! Steady, bounded load through the gateway, each call recorded: movers play games (one game
//! each at a time, every move with `expected_ply` and its own idempotency key, a move of
//! unknown outcome sent again with the same key), a reader reads games and asks rules
//! questions, an analyst asks the search service, a flag maker makes games that lose on time,
//! and a watcher follows every game, reconnecting after errors. After `--duration-s` the load
//! stops, the final games are read, the watchers catch up, and the history is written.

use std::collections::HashMap;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chess_proto::v1;
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_rules::Position;
use tokio::sync::watch;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use crate::guard;
use crate::history::{Call, FlagGame, History, Outcome, Seen, WatchLog, classify, now_ms};

mod flag_games;
mod watchers;

use flag_games::flag_maker;
use watchers::watch_game;

#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// The gateway, `IP:port`; must be one of --hosts.
    #[arg(long)]
    gateway: SocketAddr,
    /// The harness's hosts (comma-separated): no other address is ever called.
    #[arg(long, value_delimiter = ',', required = true)]
    hosts: Vec<Ipv4Addr>,
    /// How long the load runs.
    #[arg(long, default_value_t = 30)]
    duration_s: u64,
    /// Games played at once (one mover each).
    #[arg(long, default_value_t = 4)]
    movers: u32,
    /// Pause between one task's calls, in ms (bounds the load: about movers * 1000 / pause
    /// moves a second).
    #[arg(long, default_value_t = 60)]
    pause_ms: u64,
    /// Each call's deadline (sent as grpc-timeout; the client gives up 500 ms later).
    #[arg(long, default_value_t = 3000)]
    deadline_ms: u64,
    /// Plies after which a mover starts a new game.
    #[arg(long, default_value_t = 40)]
    plies: u32,
    /// A game that loses on time is made this often (ms; 0: none).
    #[arg(long, default_value_t = 2500)]
    flag_every_ms: u64,
    /// The time control of those games, in minutes (black's whole time).
    #[arg(long, default_value = "0.1")]
    flag_minutes: String,
    /// Ask the search service too (an Analyze of a few plies' depth now and then).
    #[arg(long)]
    search: bool,
    /// How long the final reads and the watchers' catching up may take after the load.
    #[arg(long, default_value_t = 20)]
    settle_s: u64,
    /// Where the history goes (JSON).
    #[arg(long)]
    out: PathBuf,
}

/// Everything the tasks share.
struct Shared {
    channel: Channel,
    deadline: Duration,
    pause: Duration,
    calls: Mutex<Vec<Call>>,
    /// Every game made, with its watcher's log.
    watches: Mutex<HashMap<String, Arc<Mutex<WatchLog>>>>,
    flags: Mutex<Vec<FlagGame>>,
    /// Games the load plays (not the flag games), for the reader.
    games: Mutex<Vec<String>>,
    /// True once the load stops.
    stop: watch::Receiver<bool>,
    /// The ply each watcher must reach before it stops (set after the final reads).
    targets: Mutex<HashMap<String, u32>>,
    /// True once the watchers must stop, caught up or not.
    stop_watching: watch::Receiver<bool>,
    run: u64,
}

impl Shared {
    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Sends one call within the deadline and records it.
    async fn call<T: Answer, F, Fut>(&self, record: Call, send: F) -> Result<T, Status>
    where
        F: FnOnce(Channel, Duration) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let mut record = record;
        record.start_ms = now_ms();
        let bound = self.deadline + Duration::from_millis(500);
        let result =
            match tokio::time::timeout(bound, send(self.channel.clone(), self.deadline)).await {
                Ok(r) => r.map(tonic::Response::into_inner),
                Err(_) => Err(Status::deadline_exceeded("the client gave up waiting")),
            };
        record.end_ms = now_ms();
        match &result {
            Ok(answer) => {
                record.outcome = Outcome::Ok;
                record.answer_ply = answer.ply();
            }
            Err(status) => {
                record.outcome = classify(status);
                record.error = Some(format!("{:?}: {}", status.code(), status.message()));
            }
        }
        self.calls.lock().unwrap().push(record);
        result
    }

    async fn pause(&self) {
        tokio::time::sleep(self.pause).await;
    }
}

/// What the history keeps of an answer: the game's ply, for a game.
trait Answer {
    fn ply(&self) -> Option<u32> {
        None
    }
}

impl Answer for v1::GameState {
    fn ply(&self) -> Option<u32> {
        Some(self.ply)
    }
}

impl Answer for v1::LegalMovesResponse {}
impl Answer for v1::AnalyzeResponse {}

fn request<T>(message: T, deadline: Duration) -> Request<T> {
    let mut r = Request::new(message);
    r.set_timeout(deadline);
    r
}

fn call(worker: &str, op: &str, game: Option<&str>) -> Call {
    Call {
        worker: worker.to_owned(),
        op: op.to_owned(),
        game: game.map(str::to_owned),
        key: None,
        ply: None,
        mv: None,
        start_ms: 0,
        end_ms: 0,
        outcome: Outcome::Unknown,
        error: None,
        answer_ply: None,
    }
}

/// A small deterministic generator (xorshift) for move choice.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

pub async fn run(args: LoadArgs) -> Result<(), String> {
    let target = guard::allowed(args.gateway, &args.hosts)?;
    let endpoint = Endpoint::from_shared(format!("http://{target}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(1))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(1))
        .keep_alive_timeout(Duration::from_secs(1))
        .keep_alive_while_idle(true);
    let channel = endpoint.connect_lazy();
    let (stop_tx, stop) = watch::channel(false);
    let (stop_watching_tx, stop_watching) = watch::channel(false);
    let shared = Arc::new(Shared {
        channel,
        deadline: Duration::from_millis(args.deadline_ms),
        pause: Duration::from_millis(args.pause_ms),
        calls: Mutex::default(),
        watches: Mutex::default(),
        flags: Mutex::default(),
        games: Mutex::default(),
        stop,
        targets: Mutex::default(),
        stop_watching,
        run: now_ms(),
    });
    let started_ms = now_ms();
    let mut tasks = Vec::new();
    for m in 0..args.movers {
        tasks.push(tokio::spawn(mover(shared.clone(), m, args.plies)));
    }
    tasks.push(tokio::spawn(reader(shared.clone())));
    if args.search {
        tasks.push(tokio::spawn(analyst(shared.clone())));
    }
    if args.flag_every_ms > 0 {
        tasks.push(tokio::spawn(flag_maker(
            shared.clone(),
            Duration::from_millis(args.flag_every_ms),
            args.flag_minutes.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(args.duration_s)).await;
    let _ = stop_tx.send(true);
    let load_ended_ms = now_ms();
    // Every task ends within a call's bound after the stop (plus a resync's).
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    }
    let settle_until = tokio::time::Instant::now() + Duration::from_secs(args.settle_s);
    let finals = read_finals(&shared, settle_until).await;
    {
        let mut targets = shared.targets.lock().unwrap();
        for f in &finals {
            if let Some(moves) = &f.moves {
                targets.insert(f.game.clone(), moves.len() as u32);
            }
        }
    }
    // The watchers catch up to the final games (or stop at the settle deadline).
    loop {
        let behind = {
            let watches = shared.watches.lock().unwrap();
            let targets = shared.targets.lock().unwrap();
            watches.iter().any(|(game, log)| {
                let log = log.lock().unwrap();
                let last = log.events.iter().rev().find(|e| e.kind >= 0);
                let seen = last.map_or(0, |e| e.moves.len() as u32);
                let over = last.is_some_and(|e| e.over);
                !over && targets.get(game).is_some_and(|t| seen < *t)
            })
        };
        if !behind || tokio::time::Instant::now() >= settle_until {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = stop_watching_tx.send(true);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let history = History {
        started_ms,
        load_ended_ms,
        calls: std::mem::take(&mut *shared.calls.lock().unwrap()),
        watches: shared
            .watches
            .lock()
            .unwrap()
            .values()
            .map(|w| w.lock().unwrap().clone())
            .collect(),
        flags: shared.flags.lock().unwrap().clone(),
        finals,
    };
    let text = serde_json::to_string(&history).map_err(|e| e.to_string())?;
    std::fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    eprintln!(
        "chess-hosts load: {} calls, {} games watched, {} flag games; history in {}",
        history.calls.len(),
        history.watches.len(),
        history.flags.len(),
        args.out.display()
    );
    Ok(())
}

/// Reads every game (retrying until `until`).
async fn read_finals(shared: &Shared, until: tokio::time::Instant) -> Vec<crate::history::Final> {
    let games: Vec<String> = shared.watches.lock().unwrap().keys().cloned().collect();
    let mut finals = Vec::new();
    for game in games {
        let mut read = None;
        while read.is_none() && tokio::time::Instant::now() < until {
            let request = v1::GetGameRequest {
                game_id: game.clone(),
            };
            let answer = shared
                .call(call("final", "GetGame", Some(&game)), |ch, d| async move {
                    GameServiceClient::new(ch)
                        .get_game(self::request(request, d))
                        .await
                })
                .await;
            match answer {
                Ok(state) => read = Some(state),
                Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        }
        finals.push(match read {
            Some(state) => crate::history::Final {
                game,
                moves: Some(uci_moves(&state)),
                over: state.outcome.is_some(),
                rule: state.outcome.as_ref().map_or(0, |o| o.rule),
            },
            None => crate::history::Final {
                game,
                moves: None,
                over: false,
                rule: 0,
            },
        });
    }
    finals
}

fn uci_moves(state: &v1::GameState) -> Vec<String> {
    state
        .moves
        .iter()
        .map(|m| {
            m.r#move
                .as_ref()
                .map_or_else(String::new, |m| m.uci.clone())
        })
        .collect()
}

/// A game being played by a mover.
struct Playing {
    id: String,
    ply: u32,
    position: Position,
    over: bool,
}

impl Playing {
    fn from_state(state: &v1::GameState) -> Option<Playing> {
        Some(Playing {
            id: state.game_id.clone(),
            ply: state.ply,
            position: Position::from_fen(&state.fen).ok()?,
            over: state.outcome.is_some(),
        })
    }
}

async fn mover(shared: Arc<Shared>, index: u32, plies: u32) {
    let worker = format!("mover-{index}");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((u64::from(index) + 1) * 0x1234_5678_9ABC_DEF1));
    let mut made = 0u64;
    let mut sent = 0u64;
    let mut playing: Option<Playing> = None;
    while !shared.stopped() {
        let Some(game) = playing.as_mut() else {
            made += 1;
            let key = format!("hosts-{}-{index}-{made}", shared.run);
            playing = create_game(&shared, &worker, &key, "", 0).await;
            if let Some(p) = &playing {
                shared.games.lock().unwrap().push(p.id.clone());
                watch_game(&shared, &p.id);
            }
            shared.pause().await;
            continue;
        };
        if game.over || game.ply >= plies || !game.position.has_legal_moves() {
            playing = None;
            continue;
        }
        let legal = game.position.legal_moves();
        let m = legal.as_slice()[(rng.next() % legal.len() as u64) as usize].to_string();
        // One key per intended call: a move chosen again at the same ply (after a failure)
        // is another call with another key.
        sent += 1;
        let key = format!("hosts-{}-{index}-{made}-{}-{sent}", shared.run, game.ply);
        let mut state = None;
        // The same call (same key) up to three times while its outcome is unknown.
        for _ in 0..3 {
            let mut record = call(&worker, "MakeMove", Some(&game.id));
            record.key = Some(key.clone());
            record.ply = Some(game.ply);
            record.mv = Some(m.clone());
            let req = v1::MakeMoveRequest {
                game_id: game.id.clone(),
                r#move: m.clone(),
                expected_ply: Some(game.ply),
                request_id: key.clone(),
                ..Default::default()
            };
            let answer = shared
                .call(record, |ch, d| async move {
                    GameServiceClient::new(ch).make_move(request(req, d)).await
                })
                .await;
            match answer {
                Ok(s) => {
                    state = Some(s);
                    break;
                }
                Err(status) if classify(&status) == Outcome::Failed => break,
                Err(_) if shared.stopped() => break,
                Err(_) => shared.pause().await,
            }
        }
        let state = match state {
            Some(s) => Some(s),
            None => resync(&shared, &worker, &game.id).await,
        };
        match state.as_ref().and_then(Playing::from_state) {
            Some(p) => *game = p,
            None => playing = None,
        }
        shared.pause().await;
    }
}

/// Reads the game until a read succeeds (or the load stops).
async fn resync(shared: &Shared, worker: &str, game: &str) -> Option<v1::GameState> {
    while !shared.stopped() {
        let req = v1::GetGameRequest {
            game_id: game.to_owned(),
        };
        let answer = shared
            .call(call(worker, "GetGame", Some(game)), |ch, d| async move {
                GameServiceClient::new(ch).get_game(request(req, d)).await
            })
            .await;
        if let Ok(state) = answer {
            return Some(state);
        }
        shared.pause().await;
    }
    None
}

/// CreateGame with `key`, sent again with the same key while its outcome is unknown.
async fn create_game(
    shared: &Shared,
    worker: &str,
    key: &str,
    minutes: &str,
    tries: u32,
) -> Option<Playing> {
    for attempt in 0..3 + tries {
        if shared.stopped() && attempt > 0 {
            return None;
        }
        let mut record = call(worker, "CreateGame", None);
        record.key = Some(key.to_owned());
        let req = v1::CreateGameRequest {
            white: "hosts".to_owned(),
            black: "hosts".to_owned(),
            request_id: key.to_owned(),
            time_control_text: if minutes.is_empty() {
                String::new()
            } else {
                format!("{minutes}+0")
            },
            ..Default::default()
        };
        let answer = shared
            .call(record, |ch, d| async move {
                GameServiceClient::new(ch)
                    .create_game(request(req, d))
                    .await
            })
            .await;
        match answer {
            Ok(state) => return Playing::from_state(&state),
            Err(status) if classify(&status) == Outcome::Failed => return None,
            Err(_) => shared.pause().await,
        }
    }
    None
}

async fn reader(shared: Arc<Shared>) {
    let mut rng = Rng(0xDEAD_BEEF_1234_5678);
    while !shared.stopped() {
        let game = {
            let games = shared.games.lock().unwrap();
            (!games.is_empty()).then(|| games[(rng.next() % games.len() as u64) as usize].clone())
        };
        if let Some(game) = game {
            let req = v1::GetGameRequest {
                game_id: game.clone(),
            };
            let _ = shared
                .call(call("reader", "GetGame", Some(&game)), |ch, d| async move {
                    GameServiceClient::new(ch).get_game(request(req, d)).await
                })
                .await;
        }
        let req = v1::LegalMovesRequest {
            fen: String::new(),
            moves: vec!["e4".into(), "e5".into(), "Nf3".into()],
        };
        let _ = shared
            .call(call("reader", "LegalMoves", None), |ch, d| async move {
                RulesServiceClient::new(ch)
                    .legal_moves(request(req, d))
                    .await
            })
            .await;
        shared.pause().await;
    }
}

async fn analyst(shared: Arc<Shared>) {
    let openings = [
        vec!["e4", "e5"],
        vec!["d4", "d5", "c4"],
        vec!["e4", "c5", "Nf3"],
        vec!["Nf3", "Nf6"],
    ];
    let mut i = 0usize;
    while !shared.stopped() {
        let req = v1::AnalyzeRequest {
            fen: String::new(),
            moves: openings[i % openings.len()]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            limits: Some(v1::SearchLimits {
                depth: 4,
                ..Default::default()
            }),
            multipv: 1,
        };
        i += 1;
        let _ = shared
            .call(call("analyst", "Analyze", None), |ch, d| async move {
                AnalysisServiceClient::new(ch)
                    .analyze(request(req, d))
                    .await
            })
            .await;
        tokio::time::sleep(shared.pause * 3).await;
    }
}
