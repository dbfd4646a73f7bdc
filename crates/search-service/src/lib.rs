//! # chess-search-service
//!
//! The search service (`chess.v1.AnalysisService`): analysis of a position with MultiPV,
//! unary or streaming each depth; batches of positions streamed back as each finishes; the
//! move to play at an Elo-like strength; reviews of whole games; bulk static evaluation.
//!
//! Searches run on a fixed pool of worker threads behind a bounded admission gate: a call
//! that finds every search slot busy and the queue full gets `RESOURCE_EXHAUSTED` at once.
//! With a batched backend (`--backend cpu-batched|gpu`) each worker runs many searches as
//! coroutines and evaluates their leaves in batches (see `pool.rs`). A call
//! that goes away (client gone, deadline passed) stops its searches within milliseconds.
//! Every limit is checked, and bad input gets `INVALID_ARGUMENT` naming the field.
//!
//! Other crates use [`Config`] and [`run`] (the binary, `chess up`); the rest is private.

#![forbid(unsafe_code)]

mod api;
mod checks;
mod jobs;
mod pool;
mod review;
mod strength;
mod tables;
mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chess_proto::v1::analysis_service_server::AnalysisServiceServer;
use chess_service_kit::{CommonArgs, Metrics, ServeError, Shutdown, Startup};
use tonic::codec::CompressionEncoding;

pub use pool::Backend;
pub use tables::{TablesError, TablesSpec};

/// Why the service could not start, or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--eval-file` names no evaluation this service can load.
    #[error("--eval-file {option:?}: {source}")]
    EvalFile {
        option: String,
        source: chess_nn::NetworkError,
    },
    #[error(transparent)]
    Tables(#[from] TablesError),
    #[error(transparent)]
    Pool(#[from] pool::StartError),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

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
    #[arg(long, env = "CHESS_SEARCH_BACKEND", value_enum, default_value_t = Backend::Cpu)]
    pub backend: Backend,

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

/// Runs the service until `shutdown` fires, then stops taking calls and gives in-flight
/// calls the configured grace period.
pub async fn run(config: Config, shutdown: Shutdown) -> Result<(), Error> {
    let eval =
        chess_search::EvalSource::from_option(&config.eval_file).map_err(|e| Error::EvalFile {
            option: config.eval_file.clone(),
            source: e,
        })?;
    let tables = tables::start(
        config.tables.as_ref(),
        &config.data_dir,
        usize::from(config.tables_generate_pieces),
    )?;
    let metrics = Metrics::new("search");
    let search_metrics = pool::SearchMetrics::new(&metrics);
    let pool = pool::Pool::start(
        pool::PoolConfig {
            workers: config.workers(),
            queue: config.queue,
            hash_mb: config.hash_mb as usize,
            threads: config.threads as usize,
            eval: eval.clone(),
            backend: config.backend,
            tasks: config.tasks as usize,
            batch_size: config.batch_size as usize,
            tables,
        },
        search_metrics,
    )?;
    tracing::info!(
        workers = pool.config.workers,
        queue = pool.config.queue,
        hash_mb = pool.config.hash_mb,
        threads = pool.config.threads,
        backend = pool.config.backend.name(),
        slots = pool.config.slots(),
        evaluation = %api::evaluator_name(&eval),
        "search pool started"
    );
    let api = api::SearchApi::new(pool, &config);
    let max_message = config.max_pgn_bytes + (256 << 10);
    let analysis = AnalysisServiceServer::new(api)
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max_message);

    let startup = Startup {
        service: "search",
        listen: config.listen,
        metrics_listen: config.common.metrics_listen,
        serving: &["chess.v1.AnalysisService"],
        not_serving: &[],
        connections: config.common.connection_limits(),
    };
    let grace = Duration::from_secs(config.common.shutdown_grace_secs);
    startup
        .serve(
            |routes| routes.add_service(analysis),
            metrics,
            &shutdown,
            grace,
        )
        .await?;
    Ok(())
}
