use std::net::SocketAddr;
use std::time::Duration;

use crate::ConnectionLimits;

/// A service's configuration at its defaults, read from neither the command line nor the
/// environment: for a program that starts services in-process (`chess up`) and sets what it
/// needs field by field, so that no `CHESS_*` variable meant for a standalone service changes
/// them behind its back.
pub fn defaults<C: clap::Parser>() -> Result<C, clap::Error> {
    let matches = C::command()
        .no_binary_name(true)
        .mut_args(|a| a.env(None::<&str>))
        .try_get_matches_from(Vec::<std::ffi::OsString>::new())?;
    C::from_arg_matches(&matches)
}

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

    /// Milliseconds a new connection has to send its first byte before it is closed.
    #[arg(long, env = "CHESS_HANDSHAKE_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_ms: u64,

    /// Seconds a connection with no call in progress stays open (a call in progress, such as
    /// a long WatchGame or AnalyzeStream, keeps its connection open however quiet it is).
    #[arg(long, env = "CHESS_IDLE_TIMEOUT_S", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_s: u64,

    /// Milliseconds between HTTP/2 keepalive PINGs on each connection; 0: no PINGs.
    #[arg(long, env = "CHESS_KEEPALIVE_INTERVAL_MS", default_value_t = 30_000)]
    pub keepalive_interval_ms: u64,

    /// Milliseconds a keepalive PING may go unanswered before the connection is closed.
    #[arg(long, env = "CHESS_KEEPALIVE_TIMEOUT_MS", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub keepalive_timeout_ms: u64,

    /// Connections one client IP address may hold open on each listener; 0: no limit.
    #[arg(long, env = "CHESS_MAX_CONNECTIONS_PER_IP", default_value_t = 256)]
    pub max_connections_per_ip: usize,
}

impl CommonArgs {
    /// The connection limits these flags set.
    pub fn connection_limits(&self) -> ConnectionLimits {
        ConnectionLimits {
            handshake_timeout: Duration::from_millis(self.handshake_timeout_ms),
            idle_timeout: Duration::from_secs(self.idle_timeout_s),
            keepalive_interval: (self.keepalive_interval_ms > 0)
                .then(|| Duration::from_millis(self.keepalive_interval_ms)),
            keepalive_timeout: Duration::from_millis(self.keepalive_timeout_ms),
            max_per_ip: (self.max_connections_per_ip > 0).then_some(self.max_connections_per_ip),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        common: CommonArgs,
    }

    #[test]
    fn the_flag_defaults_are_the_documented_limits() {
        let flags = Flags::try_parse_from(["service"]).unwrap();
        assert_eq!(
            flags.common.connection_limits(),
            ConnectionLimits::default()
        );
        let off = Flags::try_parse_from([
            "service",
            "--keepalive-interval-ms",
            "0",
            "--max-connections-per-ip",
            "0",
        ])
        .unwrap();
        let limits = off.common.connection_limits();
        assert_eq!(limits.keepalive_interval, None);
        assert_eq!(limits.max_per_ip, None);
        assert!(Flags::try_parse_from(["service", "--idle-timeout-s", "0"]).is_err());
    }
}
