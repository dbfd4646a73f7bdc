//! `chess-gateway`: the public gRPC gateway. See the crate README for flags and examples.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use chess_gateway::GatewayConfig;
use chess_service_kit::{Shutdown, init_tracing};
use clap::Parser;

fn main() -> ExitCode {
    let config = GatewayConfig::parse();
    // One worker (the default): a runtime on this thread alone, so that a call's tasks (the
    // caller's connection, the handler, the backend connection) never wake another thread.
    let runtime = match config.worker_threads {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if n > 0 {
                builder.worker_threads(n);
            }
            builder.enable_all().build()
        }
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("chess-gateway: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(config))
}

async fn serve(config: GatewayConfig) -> ExitCode {
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
