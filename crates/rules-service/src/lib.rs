//! # chess-rules-service
//!
//! The rules service: stateless rules queries (`chess.v1.RulesService`) and durable game
//! sessions (`chess.v1.GameService`) over gRPC, with health, reflection, Prometheus metrics
//! and graceful shutdown. Games are event logs in a game store; the default store is an
//! embedded redb file under the data directory, and a move is acknowledged only after its
//! event is on disk.
//!
//! Other crates use [`Config`] and [`run`] (the binary, `chess up`) and [`TimeControl`] (the
//! CLI shows a game's time control as the service writes it); the rest is private.

#![forbid(unsafe_code)]

mod games_api;
mod rules_api;
mod session;
mod store;
mod timecontrol;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chess_proto::v1::game_service_server::GameServiceServer;
use chess_proto::v1::rules_service_server::RulesServiceServer;
use chess_service_kit::{CommonArgs, Metrics, ServeError, Shutdown, Startup};
use tonic::codec::CompressionEncoding;

pub use timecontrol::TimeControl;

/// Why the service could not start, or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot create data directory {}: {source}", path.display())]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

/// A game's id: a random UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GameId(uuid::Uuid);

impl GameId {
    pub fn new() -> GameId {
        GameId(uuid::Uuid::new_v4())
    }

    pub fn as_u128(self) -> u128 {
        self.0.as_u128()
    }
}

impl Default for GameId {
    fn default() -> Self {
        GameId::new()
    }
}

impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for GameId {
    type Err = String;
    fn from_str(s: &str) -> Result<GameId, String> {
        uuid::Uuid::parse_str(s).map(GameId).map_err(|_| {
            format!("{s:?} is not a game id (a UUID like 67e55044-10b1-426f-9247-bb680e5fe0c8)")
        })
    }
}

/// Request limits the service enforces itself (the gateway enforces its own, usually
/// tighter, in front).
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub max_moves: usize,
    pub max_pgn_bytes: usize,
    pub max_games: usize,
    pub max_game_plies: usize,
}

/// Where games are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreKind {
    /// Embedded redb file `games.redb` in the data directory (durable).
    Redb,
    /// In memory only: games are lost when the process stops.
    Memory,
}

/// Configuration: flags with `CHESS_RULES_*` environment fallbacks.
#[derive(Clone, Debug, clap::Parser)]
#[command(
    name = "chess-rules-service",
    version,
    about = "Chess rules queries and durable game sessions over gRPC"
)]
pub struct Config {
    /// gRPC listen address; port 0 picks a free port (printed on the LISTENING line).
    #[arg(long, env = "CHESS_RULES_LISTEN", default_value = "127.0.0.1:50052")]
    pub listen: SocketAddr,

    /// Directory for the embedded game store (created if missing).
    #[arg(long, env = "CHESS_RULES_DATA_DIR", default_value = "chess-data")]
    pub data_dir: PathBuf,

    /// Game store.
    #[arg(long, env = "CHESS_RULES_STORE", value_enum, default_value = "redb")]
    pub store: StoreKind,

    /// Most moves accepted in one request's move list.
    #[arg(long, env = "CHESS_RULES_MAX_MOVES", default_value_t = 2048)]
    pub max_moves: usize,

    /// Largest PGN text accepted, in bytes.
    #[arg(long, env = "CHESS_RULES_MAX_PGN_BYTES", default_value_t = 8 << 20)]
    pub max_pgn_bytes: usize,

    /// Most games returned by one ParsePgn call.
    #[arg(long, env = "CHESS_RULES_MAX_GAMES", default_value_t = 10_000)]
    pub max_games: usize,

    /// Longest game session, in plies.
    #[arg(long, env = "CHESS_RULES_MAX_GAME_PLIES", default_value_t = 2048)]
    pub max_game_plies: usize,

    #[command(flatten)]
    pub common: CommonArgs,
}

impl Config {
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_moves: self.max_moves,
            max_pgn_bytes: self.max_pgn_bytes,
            max_games: self.max_games,
            max_game_plies: self.max_game_plies,
        }
    }
}

/// Opens the store the configuration names.
fn open_store(config: &Config) -> Result<Arc<dyn store::GameStore>, Error> {
    match config.store {
        StoreKind::Memory => Ok(Arc::new(store::MemoryStore::default())),
        StoreKind::Redb => {
            std::fs::create_dir_all(&config.data_dir).map_err(|source| Error::DataDir {
                path: config.data_dir.clone(),
                source,
            })?;
            let path = config.data_dir.join("games.redb");
            let store = store::RedbStore::open(&path)?;
            Ok(Arc::new(store))
        }
    }
}

/// Runs the service until `shutdown` fires, then stops taking calls and gives in-flight
/// calls the configured grace period.
pub async fn run(config: Config, shutdown: Shutdown) -> Result<(), Error> {
    let store = open_store(&config)?;
    let metrics = Metrics::new("rules");
    let games = games_api::GamesApi::new(store, config.limits(), shutdown.clone(), &metrics);
    let rules = rules_api::RulesApi::new(config.limits());
    let max_message = config.max_pgn_bytes + (64 << 10);
    let rules = RulesServiceServer::new(rules)
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max_message);
    let games = GameServiceServer::new(games)
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip);

    let startup = Startup {
        service: "rules",
        listen: config.listen,
        metrics_listen: config.common.metrics_listen,
        serving: &["chess.v1.RulesService", "chess.v1.GameService"],
        not_serving: &[],
    };
    let grace = Duration::from_secs(config.common.shutdown_grace_secs);
    startup
        .serve(
            |routes| routes.add_service(rules).add_service(games),
            metrics,
            &shutdown,
            grace,
        )
        .await?;
    Ok(())
}
