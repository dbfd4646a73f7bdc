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
mod config;
mod jobs;
mod pool;
mod review;
mod small_answers;
mod tables;
mod wire;

use std::time::Duration;

use chess_proto::v1::analysis_service_server::AnalysisServiceServer;
use chess_service_kit::{Metrics, ServeError, Shutdown, Startup};
use tonic::codec::CompressionEncoding;

pub use config::Config;
pub use pool::EvalBackend;
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
    WorkerPool(#[from] pool::StartError),
    #[error(transparent)]
    Serve(#[from] ServeError),
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
    let pool = pool::WorkerPool::start(
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
        simd = %chess_nn::Simd::detect(),
        "search pool started"
    );
    let api = api::SearchApi::new(pool, &config);
    let max_message = chess_service_kit::max_message_bytes(config.max_pgn_bytes);
    let analysis = AnalysisServiceServer::new(small_answers::SmallAnswers(api))
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
            |_| {},
            metrics,
            &shutdown,
            grace,
        )
        .await?;
    Ok(())
}
