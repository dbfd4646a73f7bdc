use std::net::SocketAddr;

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Human,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Flags every service takes; each falls back to an environment variable.
#[derive(Clone, Debug, clap::Args)]
pub struct CommonArgs {
    /// Address of the Prometheus metrics endpoint (`/metrics`); port 0 picks a free port.
    #[arg(long, env = "CHESS_METRICS_LISTEN", default_value = "127.0.0.1:0")]
    pub metrics_listen: SocketAddr,

    /// Log format.
    #[arg(long, env = "CHESS_LOG_FORMAT", value_enum, default_value = "human")]
    pub log_format: LogFormat,

    /// Log filter in `tracing` syntax, e.g. `info` or `chess_gateway=debug,info`.
    #[arg(long, env = "CHESS_LOG", default_value = "info")]
    pub log: String,

    /// Seconds to let in-flight calls finish after SIGTERM before they are cancelled.
    #[arg(long, env = "CHESS_SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    pub shutdown_grace_secs: u64,
}
