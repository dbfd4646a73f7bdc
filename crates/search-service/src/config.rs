//! The service's configuration: flags with `CHESS_SEARCH_*` environment fallbacks.

use std::net::SocketAddr;
use std::path::PathBuf;

use chess_service_kit::CommonArgs;

use crate::pool::EvalBackend;
use crate::tables::{self, TablesSpec};

/// Configuration: flags with `CHESS_SEARCH_*` environment fallbacks.
#[derive(Clone, Debug, clap::Parser)]
#[command(
    name = "chess-search-service",
    version,
    about = "Chess engine analysis, levelled play, game review and evaluation over gRPC"
)]
pub struct Config {
    /// gRPC listen address; port 0 picks a free port (printed on the LISTENING line).
    #[arg(long, env = "CHESS_SEARCH_LISTEN", default_value = "127.0.0.1:50053")]
    pub listen: SocketAddr,

    /// Search worker threads: how many searches run at once (default: one per CPU core).
    #[arg(long, env = "CHESS_SEARCH_WORKERS", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: Option<u32>,

    /// Calls that may wait for a worker; beyond workers + queue, calls are refused with
    /// RESOURCE_EXHAUSTED.
    #[arg(long, env = "CHESS_SEARCH_QUEUE", default_value_t = 64)]
    pub queue: usize,

    /// Hash table per worker, in MiB.
    #[arg(long, env = "CHESS_SEARCH_HASH_MB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub hash_mb: u32,

    /// Threads per search (Lazy SMP); workers x threads should not exceed the cores.
    #[arg(long, env = "CHESS_SEARCH_THREADS", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,

    /// Deepest search a call may ask for, in plies.
    #[arg(long, env = "CHESS_SEARCH_MAX_DEPTH", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=120))]
    pub max_depth: u32,

    /// Longest search a call may ask for, in milliseconds; every search stops by then.
    #[arg(long, env = "CHESS_SEARCH_MAX_TIME_MS", default_value_t = 60_000)]
    pub max_time_ms: u64,

    /// Most nodes a call may ask for per position.
    #[arg(long, env = "CHESS_SEARCH_MAX_NODES", default_value_t = 1_000_000_000)]
    pub max_nodes: u64,

    /// Search time when a call sets no limit at all, in milliseconds.
    #[arg(long, env = "CHESS_SEARCH_DEFAULT_TIME_MS", default_value_t = 1000)]
    pub default_time_ms: u64,

    /// Most principal variations per analysis.
    #[arg(long, env = "CHESS_SEARCH_MAX_MULTIPV", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub max_multipv: u32,

    /// Most moves in a request's move list, and most plies in a reviewed game.
    #[arg(long, env = "CHESS_SEARCH_MAX_MOVES", default_value_t = 1024)]
    pub max_moves: usize,

    /// Most positions in one AnalyzeBatch or EvaluatePositions call.
    #[arg(long, env = "CHESS_SEARCH_MAX_BATCH", default_value_t = 1024)]
    pub max_batch: usize,

    /// Largest PGN accepted by ReviewGame, in bytes.
    #[arg(long, env = "CHESS_SEARCH_MAX_PGN_BYTES", default_value_t = 1 << 20)]
    pub max_pgn_bytes: usize,

    /// Nodes per position when a review sets no limits.
    #[arg(long, env = "CHESS_SEARCH_REVIEW_NODES", default_value_t = 200_000)]
    pub review_nodes: u64,

    /// The evaluation: `default` (the trained network embedded in the binary), `hand` (the
    /// hand-written one) or the path of a network file.
    #[arg(long, env = "CHESS_SEARCH_EVAL_FILE", default_value = "default")]
    pub eval_file: String,

    /// Workers one review or batch may use at once (0: all of them).
    #[arg(long, env = "CHESS_SEARCH_CALL_PARALLELISM", default_value_t = 0)]
    pub call_parallelism: usize,

    /// Where evaluations run: `cpu` (one search per worker, incremental evaluation), or the
    /// batched search with batches on the CPU (`cpu-batched`) or the GPU (`gpu`, falling back
    /// to the CPU with a warning when no GPU can run it). The batched backends need a network
    /// (`--eval-file`). `cpu` is the default because it is the fastest on machines without a
    /// GPU (docs/network.md has the measurements).
    #[arg(long, env = "CHESS_SEARCH_BACKEND", value_enum, default_value_t = EvalBackend::Cpu)]
    pub backend: EvalBackend,

    /// Batched backends: searches each worker runs at once (their leaves fill the batches).
    #[arg(long, env = "CHESS_SEARCH_TASKS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub tasks: u32,

    /// Batched backends: most positions per evaluation batch.
    #[arg(long, env = "CHESS_SEARCH_BATCH_SIZE", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub batch_size: u32,

    /// Endgame tables: a folder of tables from `chess tb generate`, or `generate` for every
    /// ending up to --tables-generate-pieces pieces, generated into DATA_DIR/tables in the
    /// background on first use (valid tables already there are reused). Analysis of a table
    /// position is then exact (`tablebase: true`, mate distances) and review calls a move that
    /// throws a table win away a blunder. Default: none.
    #[arg(long, env = "CHESS_SEARCH_TABLES", value_name = "DIR|generate", value_parser = tables::parse_spec)]
    pub tables: Option<TablesSpec>,

    /// Where `--tables generate` puts the tables (in its `tables` folder).
    #[arg(long, env = "CHESS_SEARCH_DATA_DIR", default_value = "chess-data")]
    pub data_dir: PathBuf,

    /// Most pieces (kings included) of the endings `--tables generate` makes: 4 (36 tables,
    /// 182 MB, about 10 minutes on two cores) or 3 (seconds).
    #[arg(long, env = "CHESS_SEARCH_TABLES_GENERATE_PIECES", default_value_t = 4, value_parser = clap::value_parser!(u8).range(3..=4))]
    pub tables_generate_pieces: u8,

    #[command(flatten)]
    pub common: CommonArgs,
}

impl Config {
    /// Worker threads: the flag, or one per core.
    pub fn workers(&self) -> usize {
        self.workers.map(|w| w as usize).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }
}
