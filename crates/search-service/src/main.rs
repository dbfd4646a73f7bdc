#![forbid(unsafe_code)]

use clap::Parser;

#[tokio::main]
async fn main() {
    let config = chess_search_service::Config::parse();
    if let Err(e) = chess_service_kit::init_tracing(config.common.log_format, &config.common.log) {
        eprintln!("chess-search-service: {e}");
        std::process::exit(2);
    }
    let shutdown = chess_service_kit::Shutdown::new();
    shutdown.trigger_on_signal();
    if let Err(e) = chess_search_service::run(config, shutdown).await {
        eprintln!("chess-search-service: {e}");
        std::process::exit(1);
    }
}
