//! # chess-rules-service
//!
//! The rules service: stateless rules queries (`chess.v1.RulesService`) and durable game
//! sessions (`chess.v1.GameService`) over gRPC, with health, reflection, Prometheus metrics
//! and graceful shutdown. Games are event logs in a game store; the default store is an
//! embedded redb file under the data directory, and a move is acknowledged only after its
//! event is on disk.
//!
//! Other crates use [`Config`] and [`run`] (the binary, `chess up`), [`TimeControl`] (the
//! CLI shows a game's time control as the service writes it) and [`store`] (`chess store
//! export|import` and the store tests against PostgreSQL); the rest is private.

#![forbid(unsafe_code)]

mod arbiter;
mod games_api;
mod rules_api;
mod session;
mod small_answers;
pub mod store;
mod store_guard;
mod store_sync;
mod timecontrol;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chess_proto::v1::game_service_server::GameServiceServer;
use chess_proto::v1::rules_service_server::RulesServiceServer;
use chess_service_kit::{
    CommonArgs, DeadlineLayer, FramingErrorsLayer, GrpcMetricsLayer, Metrics, ServeError, Shutdown,
    Startup, serve_until_stopped,
};
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
    /// Settings that contradict each other or cannot be read.
    #[error("{0}")]
    Config(String),
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

    pub fn from_u128(v: u128) -> GameId {
        GameId(uuid::Uuid::from_u128(v))
    }

    /// The id of the game a CreateGame with idempotency key `key` makes: the same key, the
    /// same game (a version-8 UUID from the key's SHA-256), so the call can be sent again.
    pub fn for_request(key: &str) -> GameId {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("chess-game/{key}").as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        GameId(uuid::Builder::from_custom_bytes(bytes).into_uuid())
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

/// Reads stored and exported ids (files, database rows); request fields go through
/// `chess_proto::game_uuid_from_text`, which quotes bad input cut short.
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
    /// PostgreSQL at `--database-url`: shared by any number of replicas (durable).
    Postgres,
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

    /// PostgreSQL database of `--store postgres`:
    /// `postgres://user:password@host:port/database`.
    #[arg(
        long,
        env = "CHESS_RULES_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub database_url: Option<String>,

    /// A file holding the `--database-url` (e.g. a mounted Kubernetes Secret), read at start.
    #[arg(
        long,
        env = "CHESS_RULES_DATABASE_URL_FILE",
        value_name = "PATH",
        conflicts_with = "database_url"
    )]
    pub database_url_file: Option<PathBuf>,

    /// Most connections to PostgreSQL held at once.
    #[arg(long, env = "CHESS_RULES_DATABASE_POOL_SIZE", default_value_t = 16)]
    pub database_pool_size: usize,

    /// Longest a PostgreSQL statement (or the wait for a connection) may take, in ms; past it
    /// the call fails with UNAVAILABLE.
    #[arg(long, env = "CHESS_RULES_DATABASE_TIMEOUT_MS", default_value_t = 5_000)]
    pub database_timeout_ms: u64,

    /// How long start-up waits for PostgreSQL to accept connections, in seconds.
    #[arg(
        long,
        env = "CHESS_RULES_DATABASE_START_WAIT_SECS",
        default_value_t = 30
    )]
    pub database_start_wait_secs: u64,

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

/// Opens the store the configuration names (for PostgreSQL: connects and migrates).
async fn open_store(config: &Config) -> Result<Arc<dyn store::GameStore>, Error> {
    let url = match (&config.database_url, &config.database_url_file) {
        (Some(url), _) => Some(url.trim().to_owned()),
        (None, Some(path)) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| Error::Config(format!("--database-url-file {}: {e}", path.display())))?
                .trim()
                .to_owned(),
        ),
        (None, None) => None,
    };
    if url.is_some() && config.store != StoreKind::Postgres {
        return Err(Error::Config(
            "--database-url (CHESS_RULES_DATABASE_URL) is only for --store postgres: add \
             --store postgres (CHESS_RULES_STORE=postgres) or leave the URL out"
                .into(),
        ));
    }
    match config.store {
        StoreKind::Memory => Ok(Arc::new(store::MemoryStore::default())),
        StoreKind::Postgres => {
            let url = url.as_deref().filter(|u| !u.is_empty()).ok_or_else(|| {
                Error::Config(
                    "--store postgres needs --database-url \
                     postgres://user:password@host:port/database (or CHESS_RULES_DATABASE_URL, \
                     or --database-url-file)"
                        .into(),
                )
            })?;
            let options = store::PostgresOptions {
                pool_size: config.database_pool_size,
                statement_timeout: Duration::from_millis(config.database_timeout_ms.max(1)),
                start_wait: Duration::from_secs(config.database_start_wait_secs),
                ..store::PostgresOptions::new(url)
            };
            let store = store::PostgresStore::connect(&options).await?;
            Ok(Arc::new(store))
        }
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

/// Watches for damage found while serving ([`store::GameStore::damage`]) and then reports
/// the game service, and the server as a whole, `NOT_SERVING`: a store that panics must not
/// leave the health `SERVING`.
fn report_store_damage(
    store: Arc<dyn store::GameStore>,
    reporter: tonic_health::server::HealthReporter,
) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            if let Some(damage) = store.damage() {
                tracing::error!(%damage, "reporting NOT_SERVING: the game store is damaged");
                for name in ["chess.v1.GameService", ""] {
                    reporter
                        .set_service_status(name, tonic_health::ServingStatus::NotServing)
                        .await;
                }
                return;
            }
        }
    });
}

/// Runs the service until `shutdown` fires, then stops taking calls and gives in-flight
/// calls the configured grace period.
pub async fn run(config: Config, shutdown: Shutdown) -> Result<(), Error> {
    let store: Arc<dyn store::GameStore> =
        Arc::new(store_guard::GuardedStore::new(open_store(&config).await?));
    let metrics = Metrics::new("rules");
    let games =
        games_api::GamesApi::new(store.clone(), config.limits(), shutdown.clone(), &metrics);
    store_sync::start(&games, store_sync::Eviction::default());
    let rules = rules_api::RulesApi::new(config.limits());
    let max_message = config.max_pgn_bytes + (64 << 10);
    // Answers are gzipped for callers that accept it only when large (small_answers.rs).
    let rules = RulesServiceServer::new(small_answers::SmallAnswers(rules))
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max_message);
    let games = GameServiceServer::new(small_answers::SmallAnswers(games))
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip);

    let startup = Startup {
        service: "rules",
        listen: config.listen,
        metrics_listen: config.common.metrics_listen,
        serving: &["chess.v1.RulesService", "chess.v1.GameService"],
        not_serving: &[],
        connections: config.common.connection_limits(),
    };
    let grace = Duration::from_secs(config.common.shutdown_grace_secs);
    // Startup::serve, with the health reporter kept for the store's damage.
    let started = startup.start(&metrics, &shutdown).await?;
    report_store_damage(store, started.health.clone());
    let stop = shutdown.clone();
    let server = chess_service_kit::grpc_server(&startup.connections)
        .layer(GrpcMetricsLayer::new(metrics))
        .layer(FramingErrorsLayer)
        .layer(DeadlineLayer)
        .add_routes(started.routes.add_service(rules).add_service(games))
        .serve_with_incoming_shutdown(started.incoming, async move { stop.wait().await });
    let served = serve_until_stopped(server, &shutdown, grace).await;
    drop(started.health);
    Ok(served?)
}
