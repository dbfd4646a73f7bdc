//! # chess-gateway
//!
//! The chess platform's public gRPC API. It serves `chess.v1.RulesService` and
//! `chess.v1.GameService` by forwarding every call to the rules service,
//! `chess.v1.AnalysisService` by forwarding to the search service replicas (round-robin over
//! the healthy ones, names resolved periodically, a failed replica ejected for a while), and
//! its own `chess.v1.GatewayService`. On the way it checks API keys, applies per-caller rate
//! limits and size limits, passes the caller's deadline on, and lets a dropped call cancel the
//! backend call. It also serves gRPC health and reflection (open, for probes and grpcurl),
//! gRPC-Web over HTTP/1.1 for browsers, gzip, and Prometheus metrics on a separate port.
//!
//! Other crates use [`GatewayConfig`] and [`run`] (the binary, `chess up`, the CLI's tests);
//! the rest is private.
//!
//! ```no_run
//! use clap::Parser;
//! # async fn example() -> Result<(), chess_gateway::Error> {
//! let config = chess_gateway::GatewayConfig::parse_from(["chess-gateway", "--listen", "127.0.0.1:0"]);
//! let shutdown = chess_service_kit::Shutdown::new();
//! shutdown.trigger_on_signal();
//! chess_gateway::run(config, shutdown).await
//! # }
//! ```

#![forbid(unsafe_code)]

mod auth;
mod coalesce;
mod config;
mod connection;
mod engine_move;
mod health;
mod layers;
mod make_move;
mod passthrough;
mod replicas;
mod services;
mod small_answers;
mod target;
mod upstream;
mod web;

use crate::small_answers::SmallAnswers;
use std::sync::Arc;

use chess_proto::v1::analysis_service_server::AnalysisServiceServer;
use chess_proto::v1::game_service_server::GameServiceServer;
use chess_proto::v1::gateway_service_server::GatewayServiceServer;
use chess_proto::v1::rules_service_server::RulesServiceServer;
use chess_service_kit::{
    DeadlineLayer, FramingErrorsLayer, GrpcMetricsLayer, Incoming, Metrics, ServeError, Shutdown,
    Startup, grpc_server,
};
use tonic::codec::CompressionEncoding::Gzip;
use tonic::service::Routes;

pub use config::{AuthMode, BackendCompression, ConfigError, GatewayConfig};

use crate::config::Auth;
use crate::health::BackendHealth;
use crate::layers::{CorsLayer, OversizeLayer};
use crate::passthrough::Forwarding;
use crate::services::Gateway;

/// Why the gateway could not start, or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

const SERVICE_NAME: &str = "gateway";

/// Binds, announces (`LISTENING service=gateway grpc=... metrics=...` on stdout), serves until
/// `shutdown` fires, then stops taking calls and lets the calls in flight finish within the
/// grace period (`--shutdown-grace-secs`); WatchGame streams end at once with UNAVAILABLE.
pub async fn run(config: GatewayConfig, shutdown: Shutdown) -> Result<(), Error> {
    let settings = config.settings().map_err(ConfigError)?;
    let metrics = Metrics::new(SERVICE_NAME);
    let gateway = Arc::new(Gateway::new(&settings, &metrics, shutdown.clone()));
    // Names among the rules and search addresses are looked up before the gateway announces
    // itself, so its first calls have replicas to go to (a name that does not resolve yet is
    // retried in the background).
    for pool in [gateway.rules(), gateway.search()] {
        pool.resolve().await;
        pool.spawn_maintenance(shutdown.clone());
    }

    let max_message = chess_service_kit::max_message_bytes(
        usize::try_from(settings.max_pgn_bytes).unwrap_or(usize::MAX),
    );
    // Small answers go uncompressed (small_answers.rs). The unary calls the gateway forwards as
    // they came are served by passthrough/, the bytes of request and answer passed on
    // undecoded; the generated servers serve the streams (and whatever else is not listed
    // there).
    let forwarded = passthrough::Settings { max_message };
    // Each generated server the same way: small answers uncompressed, gzip both ways otherwise,
    // the message cap.
    macro_rules! generated {
        ($server:ident) => {
            $server::new(SmallAnswers(gateway.clone()))
                .accept_compressed(Gzip)
                .send_compressed(Gzip)
                .max_decoding_message_size(max_message)
        };
    }
    let rules = Forwarding::rules(gateway.clone(), forwarded, generated!(RulesServiceServer));
    let games = Forwarding::games(gateway.clone(), forwarded, generated!(GameServiceServer));
    let analysis = Forwarding::analysis(
        gateway.clone(),
        forwarded,
        generated!(AnalysisServiceServer),
    );
    let info = generated!(GatewayServiceServer);

    let analysis_available = gateway.search().is_configured();
    let health = BackendHealth::at_start(gateway.rules(), gateway.search());
    // The web app's address is bound first, so that a taken port stops the start-up before
    // the gateway announces itself.
    let web_bound = match settings.web_listen {
        Some(addr) => Some(web::bind(addr, settings.connections).await?),
        None => None,
    };
    let startup = Startup {
        service: SERVICE_NAME,
        listen: settings.listen,
        metrics_listen: settings.metrics_listen,
        serving: &health.serving,
        not_serving: &health.not_serving,
        connections: settings.connections,
    };
    // Startup::serve_with: the gateway builds its own two routers (gRPC-Web, CORS, the
    // oversize layer, and the web app's listener), the kit runs them.
    let layer_metrics = metrics.clone();
    let server = |incoming: Incoming, routes: Routes| {
        let routes = routes
            .add_service(rules)
            .add_service(games)
            .add_service(analysis)
            .add_service(info);
        let router = grpc_server(&settings.connections)
            .accept_http1(true)
            .layer(CorsLayer::new(settings.cors.clone()))
            .layer(tonic_web::GrpcWebLayer::new())
            .layer(GrpcMetricsLayer::new(layer_metrics.clone()))
            .layer(FramingErrorsLayer)
            .layer(OversizeLayer::new(max_message, settings.max_pgn_bytes))
            .add_routes(routes.clone());
        // The web app's listener: the page, and the same API for it on the same origin.
        let web_router = grpc_server(&settings.connections)
            .accept_http1(true)
            .layer(web::WebLayer)
            .layer(CorsLayer::new(settings.cors.clone()))
            .layer(tonic_web::GrpcWebLayer::new())
            .layer(GrpcMetricsLayer::new(layer_metrics))
            .layer(FramingErrorsLayer)
            .layer(DeadlineLayer)
            .layer(OversizeLayer::new(max_message, settings.max_pgn_bytes))
            .add_routes(routes);

        if let Some((addr, _)) = &web_bound {
            web::announce(*addr);
        }
        tracing::info!(
            auth = if matches!(settings.auth, Auth::Open) { "open" } else { "keys" },
            rules = ?gateway.rules().targets(),
            rules_replicas = gateway.rules().replicas().len(),
            search = ?gateway.search().targets(),
            search_replicas = gateway.search().replicas().len(),
            rate_limit = settings.rate.map_or(0, |(rate, _)| rate),
            max_pgn_bytes = settings.max_pgn_bytes,
            max_moves = settings.max_moves,
            "gateway ready"
        );
        if !analysis_available {
            tracing::warn!("no --search-addr: analysis calls will fail with UNAVAILABLE");
        }

        let stop = {
            let shutdown = shutdown.clone();
            async move {
                shutdown.wait().await;
                tracing::info!("no longer taking calls; letting the calls in flight finish");
            }
        };
        // Each caller's connection writes a call's answer in one go (coalesce.rs).
        let incoming = futures::StreamExt::map(incoming, |c| c.map(coalesce::Coalesce::new));
        let grpc = router.serve_with_incoming_shutdown(incoming, stop);
        let web_stop = {
            let shutdown = shutdown.clone();
            async move { shutdown.wait().await }
        };
        async move {
            match web_bound {
                Some((_, incoming)) => {
                    let web = web_router.serve_with_incoming_shutdown(incoming, web_stop);
                    tokio::try_join!(grpc, web).map(|_| ())
                }
                None => grpc.await,
            }
        }
    };
    startup
        .serve_with(
            server,
            |reporter| health.follow(reporter, &shutdown),
            &metrics,
            &shutdown,
            settings.grace,
        )
        .await?;
    Ok(())
}
