//! `chess-gateway`: the public gRPC gateway. See the crate README for flags and examples.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use chess_gateway::GatewayConfig;
use chess_service_kit::{Shutdown, init_tracing};
use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let config = GatewayConfig::parse();
    let checked = init_tracing(config.common.log_format, &config.common.log)
        .map_err(|e| e.to_string())
        .and_then(|()| config.validate().map_err(|e| e.to_string()));
    if let Err(e) = checked {
        eprintln!("chess-gateway: {e}");
        return ExitCode::from(2);
    }
    let shutdown = Shutdown::new();
    shutdown.trigger_on_signal();
    match chess_gateway::run(config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chess-gateway: {e}");
            ExitCode::FAILURE
        }
    }
}
