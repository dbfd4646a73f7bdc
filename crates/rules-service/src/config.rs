//! The service's configuration: flags with `CHESS_RULES_*` environment fallbacks, and the
//! request limits they set.

use std::net::SocketAddr;
use std::path::PathBuf;

use chess_service_kit::CommonArgs;

/// Request limits the service enforces itself (the gateway enforces its own, usually
/// tighter, in front).
#[derive(Clone, Debug)]
pub(crate) struct RequestLimits {
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
    pub(crate) fn limits(&self) -> RequestLimits {
        RequestLimits {
            max_moves: self.max_moves,
            max_pgn_bytes: self.max_pgn_bytes,
            max_games: self.max_games,
            max_game_plies: self.max_game_plies,
        }
    }
}
