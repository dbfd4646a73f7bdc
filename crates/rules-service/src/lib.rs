//! # chess-rules-service
//!
//! The rules service: stateless rules queries (`chess.v1.RulesService`) and durable game
//! sessions (`chess.v1.GameService`) over gRPC, with health, reflection, Prometheus metrics
//! and graceful shutdown. Games are event logs in a game store; the default store is an
//! embedded redb file under the data directory, and a move is acknowledged only after its
//! event is on disk.
//!
//! Other crates use [`Config`] and [`run`] (the binary, `chess up`) and [`store`] (`chess store
//! export|import` and the store tests against PostgreSQL); the rest is private. Time controls
//! are `chess-wire`'s (the CLI writes them too).

#![forbid(unsafe_code)]

mod arbiter;
mod config;
mod event;
mod game_id;
mod games;
mod rules_api;
mod session;
mod small_answers;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chess_proto::v1::game_service_server::GameServiceServer;
use chess_proto::v1::rules_service_server::RulesServiceServer;
use chess_service_kit::{Metrics, ServeError, Shutdown, Startup};
use tonic::codec::CompressionEncoding;

pub(crate) use config::RequestLimits;
pub use config::{Config, StoreKind};
pub use game_id::GameId;

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
            let path = store::RedbStore::path_in(&config.data_dir);
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
    // A stop asked for while start-up still waits for the database ends the wait: a pod
    // deleted before PostgreSQL came up exits at once instead of at its grace period's SIGKILL.
    let opened = tokio::select! {
        opened = open_store(&config) => opened?,
        () = shutdown.wait() => {
            tracing::info!("stopped during start-up, before the game store was open");
            return Ok(());
        }
    };
    let store: Arc<dyn store::GameStore> = Arc::new(store::GuardedStore::new(opened));
    let metrics = Metrics::new("rules");
    let games = games::GamesApi::new(store.clone(), config.limits(), shutdown.clone(), &metrics);
    games.start_sync(games::Eviction::default());
    let rules = rules_api::RulesApi::new(config.limits());
    let max_message = chess_service_kit::max_message_bytes(config.max_pgn_bytes);
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
    startup
        .serve(
            |routes| routes.add_service(rules).add_service(games),
            // The store's damage turns the health NOT_SERVING.
            |health| report_store_damage(store, health.clone()),
            metrics,
            &shutdown,
            grace,
        )
        .await?;
    Ok(())
}
