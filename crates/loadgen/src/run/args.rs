//! The flags of `chess-loadgen run`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::scenario::{Mix, Scenario};
use crate::schedule::LevelSpec;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The gRPC server to load: the gateway, or one service straight (http://HOST:PORT).
    #[arg(
        long,
        short = 't',
        value_name = "URL",
        default_value = "http://127.0.0.1:50051"
    )]
    pub target: String,

    /// API key for a gateway that wants one, sent as `authorization: Bearer KEY` on every
    /// call. Prefer the environment variable: a flag's value shows in the process list.
    #[arg(
        long,
        env = "CHESS_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub api_key: Option<String>,

    /// Allow a target or metrics address outside loopback (127.0.0.0/8, ::1, localhost). Load
    /// only servers you run.
    #[arg(long)]
    pub allow_remote: bool,

    /// What each request does.
    #[arg(long, short = 's', value_enum, default_value = "analyze")]
    pub scenario: Scenario,

    /// Weights of the mix scenario: SCENARIO=WEIGHT,... (e.g. analyze=1,rules=8,evaluate=1).
    #[arg(long, value_name = "SPEC", default_value = "analyze=2,analyze-stream=1,evaluate=1,game=2,rules=4", value_parser = crate::scenario::parse_mix)]
    pub mix: Mix,

    // ---- load shape ----
    /// Closed model: concurrent clients, each sending its next request when the last one is
    /// answered. N, steps N1,N2,... (each --step-duration long) or a ramp A..B over the run.
    /// The default when --rate is not given: 1.
    #[arg(long, short = 'c', value_name = "N|N1,N2,..|A..B", conflicts_with = "rate", value_parser = LevelSpec::parse_clients)]
    pub clients: Option<LevelSpec>,

    /// Open model: requests per second sent on schedule whether or not earlier ones were
    /// answered; latency counts from the intended send time (coordinated-omission
    /// correction). R, steps R1,R2,... or a ramp A..B.
    #[arg(long, short = 'r', value_name = "R|R1,R2,..|A..B", value_parser = LevelSpec::parse_rate)]
    pub rate: Option<LevelSpec>,

    /// Length of each step of a stepped --clients or --rate [default: the duration divided
    /// evenly].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub step_duration: Option<Duration>,

    /// Open model: most requests in flight at once; a send that finds them all busy waits,
    /// and its wait counts in its latency.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_in_flight: u32,

    /// How long the measured run lasts (e.g. 30s, 2m, 500ms) [default: 10s, or 5m with
    /// --requests]. The run stops at --requests or at this time, whichever comes first.
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Stop after this many measured requests.
    #[arg(long, short = 'n', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,

    /// Load before the measured run, at the schedule's first level; not counted. The servers'
    /// metrics are read after it has drained.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub warmup: Duration,

    /// gRPC connections (HTTP/2 channels) to open; requests go round-robin over them.
    #[arg(long, value_name = "M", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub connections: u32,

    /// Deadline of every call (sent to the server as grpc-timeout and enforced here).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub timeout: Duration,

    // ---- the work ----
    /// Search depth per analysis (and per engine move in games), 1..=64.
    #[arg(long, value_name = "PLIES", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub depth: Option<u32>,

    /// Nodes per analysis (and per engine move) [default: 100000 when neither --depth nor
    /// --movetime is given].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,

    /// Search time per analysis (and per engine move), e.g. 200ms.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub movetime: Option<Duration>,

    /// Principal variations per analysis, 1..=16.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub multipv: u32,

    /// Positions per EvaluatePositions call, 1..=1024 (the gateway's own limit defaults to
    /// 256).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,

    /// Game scenario: plies after which a game is left and a new one created.
    #[arg(long, value_name = "PLIES", default_value_t = 40, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub game_plies: u32,

    /// Game scenario: the engine's playing strength (800..=3000; 0 for full strength).
    #[arg(long, value_name = "ELO", default_value_t = 0)]
    pub elo: u32,

    /// Positions from a file instead of the built-in set: FEN or EPD (one a line) or PGN
    /// (every position of every game's mainline).
    #[arg(long, value_name = "FILE")]
    pub positions: Option<PathBuf>,

    /// Seed of the client's choices (moves in games, the mix's draws).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    // ---- the servers ----
    /// A Prometheus metrics endpoint to read before and after the run and once a second
    /// during it (http://HOST:PORT/metrics or HOST:PORT); repeat for each service.
    #[arg(long = "metrics", value_name = "URL")]
    pub metrics: Vec<String>,

    // ---- output ----
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the summary as CSV here (one row for the whole run, one per method, one per step).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write the per-second timeline as CSV here.
    #[arg(long, value_name = "FILE")]
    pub timeline_csv: Option<PathBuf>,

    /// Write an SVG chart of latency percentiles and throughput per second here.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// A label for the reports (e.g. the commit or the machine).
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub label: String,

    /// No progress line on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `30s`, `500ms`, `2m`, `1h`, or a bare number of seconds (decimals allowed).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 30s, 500ms, 2m)"))?;
    if !value.is_finite() || value < 0.0 || value * scale > 86_400.0 * 7.0 {
        return Err(format!("{text:?} is out of range (0 to a week)"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
