//! Flags (each with an environment fallback) and their validation into [`Settings`].

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chess_service_kit::{CommonArgs, ConnectionLimits};

use crate::target::{Target, targets};

/// How callers authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// No API key needed; rate limits apply per client IP.
    Open,
    /// Every call needs `authorization: Bearer <key>` with a configured key.
    Keys,
    /// `open` when listening on a loopback address with no keys configured, `keys` otherwise.
    Auto,
}

/// Compression of the gateway's calls to its backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendCompression {
    /// Gzip requests of 1 KiB or more (the backends must accept gzip; smaller ones do not
    /// shrink and cost more CPU to compress than to send) and accept gzip answers (the
    /// backends gzip those of 1 KiB or more): for a slow link between gateway and backends.
    Gzip,
    /// Plain requests and answers (the default: CPU, not bandwidth, is what a cluster's
    /// network hop costs).
    None,
}

/// The gateway's configuration: flags, each with an environment fallback.
#[derive(Clone, Debug, clap::Parser)]
#[command(
    name = "chess-gateway",
    version,
    about = "The chess platform's public gRPC (and gRPC-Web) gateway: authentication, limits, \
             deadlines, routing to the rules and search services"
)]
pub struct GatewayConfig {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Address to serve gRPC and gRPC-Web on; port 0 picks a free port.
    #[arg(long, env = "CHESS_GATEWAY_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Rules service replicas (chess.v1.RulesService and chess.v1.GameService): repeat the flag
    /// or separate with commas, each `http://IP:port` or a name (`dns:///host:port`,
    /// `http://host:port` or `host:port`) resolved at start and every
    /// --rules-resolve-interval-secs, one replica per address. Several replicas must share one
    /// game store (`--store postgres`). Calls go round-robin over the healthy replicas; one that
    /// finds a replica unavailable is retried once on another where that is safe (queries,
    /// GetGame, opening a watch, a MakeMove with expected_ply; any call the replica never got).
    #[arg(
        long,
        env = "CHESS_GATEWAY_RULES_ADDR",
        value_delimiter = ',',
        default_value = "http://127.0.0.1:50052"
    )]
    pub rules_addr: Vec<String>,

    /// How often the names among --rules-addr are resolved again, in seconds; 0 resolves them
    /// only at start. A name that resolves to no address is looked up every second until it
    /// does, whatever this says (and at once for a call that finds no replica).
    #[arg(
        long,
        env = "CHESS_GATEWAY_RULES_RESOLVE_INTERVAL_SECS",
        default_value_t = 5
    )]
    pub rules_resolve_interval_secs: u64,

    /// Search service replicas (chess.v1.AnalysisService): repeat the flag or separate with
    /// commas. `http://IP:port` is one replica; a name (`dns:///host:port`, `http://host:port`
    /// or `host:port`) is resolved at start and every --search-resolve-interval-secs, one
    /// replica per address. Calls go round-robin over the healthy replicas; a call that finds
    /// one unavailable is retried once on another. None: analysis calls fail with UNAVAILABLE.
    #[arg(long, env = "CHESS_GATEWAY_SEARCH_ADDR", value_delimiter = ',')]
    pub search_addr: Vec<String>,

    /// How often the names among --search-addr are resolved again, in seconds (added and
    /// removed addresses become and stop being replicas); 0 resolves them only at start. A
    /// name that resolves to no address is looked up every second until it does, whatever this
    /// says (and at once for a call that finds no replica).
    #[arg(
        long,
        env = "CHESS_GATEWAY_SEARCH_RESOLVE_INTERVAL_SECS",
        default_value_t = 5
    )]
    pub search_resolve_interval_secs: u64,

    /// File of API keys: one key per line; blank lines and lines starting with `#` are ignored.
    #[arg(long, env = "CHESS_GATEWAY_API_KEYS_FILE")]
    pub api_keys_file: Option<PathBuf>,

    /// API keys, comma-separated. Prefer the environment variable or --api-keys-file: a flag's
    /// value shows in the process list.
    #[arg(
        long,
        env = "CHESS_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub api_keys: Vec<String>,

    /// Authentication: `keys` needs `authorization: Bearer <key>` on every call (health and
    /// reflection stay open); `open` needs none; `auto` is `open` on a loopback address
    /// without keys, `keys` otherwise.
    #[arg(long, env = "CHESS_GATEWAY_AUTH", value_enum, default_value = "auto")]
    pub auth: AuthMode,

    /// Allow `--auth open` on an address other than loopback (anyone who reaches it can call).
    #[arg(
        long,
        env = "CHESS_GATEWAY_ALLOW_OPEN_NONLOCAL",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub allow_open_nonlocal: bool,

    /// Requests per second allowed per API key (per client IP in open mode); 0 turns the
    /// limit off. Excess calls fail with RESOURCE_EXHAUSTED.
    #[arg(long, env = "CHESS_GATEWAY_RATE_LIMIT", default_value_t = 100)]
    pub rate_limit: u32,

    /// Requests a key may make at once above the steady rate (token-bucket size)
    /// [default: the --rate-limit value].
    #[arg(long, env = "CHESS_GATEWAY_RATE_BURST")]
    pub rate_burst: Option<u32>,

    /// Largest ParsePgn `pgn` text accepted, in bytes.
    #[arg(long, env = "CHESS_GATEWAY_MAX_PGN_BYTES", default_value_t = 1 << 20)]
    pub max_pgn_bytes: u64,

    /// Longest `moves` list accepted in any request.
    #[arg(long, env = "CHESS_GATEWAY_MAX_MOVES", default_value_t = 1024)]
    pub max_moves: u32,

    /// Most positions accepted in one batch request (AnalyzeBatch `positions`,
    /// EvaluatePositions `fens`).
    #[arg(long, env = "CHESS_GATEWAY_MAX_BATCH", default_value_t = 256)]
    pub max_batch: u32,

    /// Most WatchGame streams open at once through this gateway; 0 for no limit.
    #[arg(long, env = "CHESS_GATEWAY_MAX_WATCHERS", default_value_t = 10_000)]
    pub max_watchers: u32,

    /// Most WatchGame streams one caller (an API key, or a client address in open mode) may
    /// hold open at once, so that no caller can take all of --max-watchers; 0 for no limit.
    #[arg(
        long,
        env = "CHESS_GATEWAY_MAX_WATCHERS_PER_CALLER",
        default_value_t = 1_000
    )]
    pub max_watchers_per_caller: u32,

    /// Failed authentications (missing, malformed or unknown key) allowed per client address
    /// and minute, also as a burst; past them every call from that address is refused with
    /// RESOURCE_EXHAUSTED until the budget refills; 0 for no limit.
    #[arg(long, env = "CHESS_GATEWAY_MAX_AUTH_FAILURES", default_value_t = 10)]
    pub max_auth_failures: u32,

    /// Deadline given to a unary call whose caller sets none, in seconds; 0 for none.
    /// Callers' own deadlines are passed on as they are.
    #[arg(
        long,
        env = "CHESS_GATEWAY_DEFAULT_DEADLINE_SECS",
        default_value_t = 60
    )]
    pub default_deadline_secs: u64,

    /// Compression between the gateway and its backends (gzip: messages of 1 KiB or more).
    #[arg(
        long,
        env = "CHESS_GATEWAY_BACKEND_COMPRESSION",
        value_enum,
        default_value = "none"
    )]
    pub backend_compression: BackendCompression,

    /// Browser origins allowed to call over gRPC-Web from another site (CORS), comma-separated
    /// or repeated; `*` allows any. None: same-origin only.
    #[arg(long, env = "CHESS_GATEWAY_CORS_ALLOW_ORIGIN", value_delimiter = ',')]
    pub cors_allow_origin: Vec<String>,

    /// Address to serve the web app on (the page, plus the same gRPC-Web API for it to call);
    /// port 0 picks a free port. None: no web app.
    #[arg(long, env = "CHESS_GATEWAY_WEB_LISTEN", value_name = "ADDR")]
    pub web_listen: Option<SocketAddr>,

    /// Threads that run the gateway's calls (the chess-gateway binary's runtime). 1, the
    /// default: one thread does all the work, with no wake-ups between threads, which cost more
    /// CPU than a forwarded call itself (docs/benchmarks.md, "The gateway's hop by CPU"); one
    /// thread forwards up to about 18,000 small calls a second. More gateway replicas, or N
    /// threads here, for more; 0: one per CPU.
    #[arg(long, env = "CHESS_GATEWAY_WORKER_THREADS", default_value_t = 1)]
    pub worker_threads: usize,
}

/// The authentication actually in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Auth {
    Open,
    Keys(HashSet<String>),
}

/// A validated configuration.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub listen: SocketAddr,
    pub metrics_listen: SocketAddr,
    pub grace: Duration,
    pub rules: Vec<Target>,
    /// How often names among the rules targets are resolved again; `None`: only at start.
    pub rules_resolve_interval: Option<Duration>,
    pub search: Vec<Target>,
    /// How often names among the search targets are resolved again; `None`: only at start.
    pub search_resolve_interval: Option<Duration>,
    pub auth: Auth,
    /// Requests per second and bucket size; `None` when off.
    pub rate: Option<(u32, u32)>,
    pub max_pgn_bytes: u64,
    pub max_moves: u32,
    pub max_batch: u32,
    pub max_watchers: Option<u32>,
    pub max_watchers_per_caller: Option<u32>,
    pub max_auth_failures: Option<u32>,
    pub default_deadline: Option<Duration>,
    pub backend_gzip: bool,
    pub cors: Vec<String>,
    pub web_listen: Option<SocketAddr>,
    /// Timeouts, keepalive and the per-address cap, on both listeners.
    pub connections: ConnectionLimits,
}

/// The configuration cannot be used: one line for the operator naming the flag and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub(crate) String);

impl GatewayConfig {
    /// Checks the configuration (reading the API keys file) without starting anything; the
    /// error is one line meant for the operator.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.settings().map(|_| ()).map_err(ConfigError)
    }

    pub(crate) fn settings(&self) -> Result<Settings, String> {
        let keys = self.keys()?;
        let nonlocal = [Some(self.listen), self.web_listen]
            .into_iter()
            .flatten()
            .find(|addr| !addr.ip().is_loopback());
        let auth = match self.auth {
            AuthMode::Open => {
                if let Some(addr) = nonlocal.filter(|_| !self.allow_open_nonlocal) {
                    return Err(format!(
                        "refusing --auth open on {addr}, which is not a loopback address: anyone \
                         who can reach it could call without a key; configure API keys, or pass \
                         --allow-open-nonlocal if that is really intended",
                    ));
                }
                if !keys.is_empty() {
                    tracing::warn!(
                        keys = keys.len(),
                        "--auth open: the configured API keys are ignored"
                    );
                }
                Auth::Open
            }
            AuthMode::Auto if nonlocal.is_none() && keys.is_empty() => Auth::Open,
            AuthMode::Keys | AuthMode::Auto => {
                if keys.is_empty() {
                    return Err(format!(
                        "authentication needs API keys (--auth {} on {}) but none are \
                         configured: set --api-keys-file or CHESS_API_KEYS{}",
                        if self.auth == AuthMode::Keys {
                            "keys"
                        } else {
                            "auto"
                        },
                        nonlocal.unwrap_or(self.listen),
                        if nonlocal.is_none() {
                            ""
                        } else {
                            ", or listen on a loopback address"
                        }
                    ));
                }
                Auth::Keys(keys)
            }
        };
        let rate = match (self.rate_limit, self.rate_burst) {
            (0, _) => None,
            (_, Some(0)) => {
                return Err(
                    "--rate-burst must be at least 1 (use --rate-limit 0 to turn the \
                            limit off)"
                        .to_owned(),
                );
            }
            (rate, burst) => Some((rate, burst.unwrap_or(rate))),
        };
        let search = targets("--search-addr", &self.search_addr)?;
        let rules = targets("--rules-addr", &self.rules_addr)?;
        if rules.is_empty() {
            return Err(
                "--rules-addr names no rules service: give at least one address".to_owned(),
            );
        }
        let mut cors = Vec::new();
        for origin in &self.cors_allow_origin {
            let origin = origin.trim();
            if origin.is_empty() {
                continue;
            }
            if origin != "*" && http::HeaderValue::from_str(origin).is_err() {
                return Err(format!(
                    "--cors-allow-origin {origin:?} is not a valid origin"
                ));
            }
            cors.push(origin.trim_end_matches('/').to_owned());
        }
        Ok(Settings {
            listen: self.listen,
            metrics_listen: self.common.metrics_listen,
            grace: Duration::from_secs(self.common.shutdown_grace_secs),
            rules,
            rules_resolve_interval: (self.rules_resolve_interval_secs > 0)
                .then(|| Duration::from_secs(self.rules_resolve_interval_secs)),
            search,
            search_resolve_interval: (self.search_resolve_interval_secs > 0)
                .then(|| Duration::from_secs(self.search_resolve_interval_secs)),
            auth,
            rate,
            max_pgn_bytes: self.max_pgn_bytes,
            max_moves: self.max_moves,
            max_batch: self.max_batch,
            max_watchers: (self.max_watchers > 0).then_some(self.max_watchers),
            max_watchers_per_caller: (self.max_watchers_per_caller > 0)
                .then_some(self.max_watchers_per_caller),
            max_auth_failures: (self.max_auth_failures > 0).then_some(self.max_auth_failures),
            default_deadline: (self.default_deadline_secs > 0)
                .then(|| Duration::from_secs(self.default_deadline_secs)),
            backend_gzip: self.backend_compression == BackendCompression::Gzip,
            cors,
            web_listen: self.web_listen,
            connections: self.common.connection_limits(),
        })
    }

    /// Keys from the file and the environment/flag together.
    fn keys(&self) -> Result<HashSet<String>, String> {
        let mut keys = HashSet::new();
        for (i, key) in self.api_keys.iter().enumerate() {
            let key = key.trim();
            if key.is_empty() {
                continue;
            }
            check_key(key).map_err(|e| format!("API key #{} in CHESS_API_KEYS {e}", i + 1))?;
            keys.insert(key.to_owned());
        }
        if let Some(path) = &self.api_keys_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read API keys file {}: {e}", path.display()))?;
            for (n, line) in text.lines().enumerate() {
                let key = line.trim();
                if key.is_empty() || key.starts_with('#') {
                    continue;
                }
                check_key(key)
                    .map_err(|e| format!("{} line {}: API key {e}", path.display(), n + 1))?;
                keys.insert(key.to_owned());
            }
        }
        Ok(keys)
    }
}

/// A key must fit in a header value after `Bearer `; the message never repeats the key.
fn check_key(key: &str) -> Result<(), String> {
    if key.chars().all(|c| c.is_ascii_graphic()) {
        Ok(())
    } else {
        Err("has characters other than printable ASCII (no spaces)".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> GatewayConfig {
        let mut all = vec!["chess-gateway"];
        all.extend_from_slice(args);
        GatewayConfig::try_parse_from(all).unwrap()
    }

    #[test]
    fn flattens_into_other_commands() {
        // `chess up` runs the gateway in-process with these flags under its own command.
        #[derive(clap::Parser)]
        struct Up {
            #[command(flatten)]
            gateway: GatewayConfig,
        }
        let up = Up::try_parse_from(["chess", "--max-moves", "5"]).unwrap();
        assert_eq!(up.gateway.max_moves, 5);
    }

    #[test]
    fn backend_flags() {
        let c = config(&["--search-addr", "a:1,b:2,", "--search-addr", "c:3"]);
        assert_eq!(c.settings().unwrap().search.len(), 3);
        assert!(
            config(&["--search-addr", ""])
                .settings()
                .unwrap()
                .search
                .is_empty()
        );
        let e = config(&["--search-addr", "https://s:1"])
            .settings()
            .unwrap_err();
        assert!(e.contains("--search-addr") && e.contains("https"), "{e}");
        let s = config(&[
            "--search-addr",
            "dns:///search:1,10.0.0.1:2",
            "--search-resolve-interval-secs",
            "0",
        ])
        .settings()
        .unwrap();
        assert_eq!(s.search.len(), 2);
        assert_eq!(s.search_resolve_interval, None);
        assert_eq!(
            config(&[]).settings().unwrap().search_resolve_interval,
            Some(Duration::from_secs(5))
        );
        let e = config(&["--search-addr", "dns:///x"])
            .settings()
            .unwrap_err();
        assert!(e.contains("--search-addr") && e.contains("port"), "{e}");
    }

    #[test]
    fn rules_targets() {
        let s = config(&[]).settings().unwrap();
        assert_eq!(s.rules.len(), 1);
        assert_eq!(s.rules[0].shown(), "http://127.0.0.1:50052");
        assert_eq!(s.rules_resolve_interval, Some(Duration::from_secs(5)));
        let s = config(&[
            "--rules-addr",
            "10.0.0.1:50052,dns:///rules.chess.svc:50052",
            "--rules-resolve-interval-secs",
            "0",
        ])
        .settings()
        .unwrap();
        assert_eq!(s.rules.len(), 2);
        assert!(matches!(&s.rules[1], Target::Name { host, .. } if host == "rules.chess.svc"));
        assert_eq!(s.rules_resolve_interval, None);
        let e = config(&["--rules-addr", ","]).settings().unwrap_err();
        assert!(
            e.contains("--rules-addr") && e.contains("at least one"),
            "{e}"
        );
        let e = config(&["--rules-addr", "https://r:1"])
            .settings()
            .unwrap_err();
        assert!(e.contains("--rules-addr") && e.contains("https"), "{e}");
    }

    #[test]
    fn auth_modes() {
        let s = config(&[]).settings().unwrap();
        assert_eq!(s.auth, Auth::Open);
        assert_eq!(s.rate, Some((100, 100)));
        let s = config(&["--api-keys", "k1,k2"]).settings().unwrap();
        assert!(matches!(s.auth, Auth::Keys(ref k) if k.len() == 2));
        let e = config(&["--listen", "0.0.0.0:0"]).settings().unwrap_err();
        assert!(e.contains("needs API keys"), "{e}");
        let e = config(&["--listen", "0.0.0.0:0", "--auth", "open"])
            .settings()
            .unwrap_err();
        assert!(e.contains("--allow-open-nonlocal"), "{e}");
        let s = config(&[
            "--listen",
            "0.0.0.0:0",
            "--auth",
            "open",
            "--allow-open-nonlocal",
        ]);
        assert_eq!(s.settings().unwrap().auth, Auth::Open);
        let e = config(&["--auth", "keys"]).settings().unwrap_err();
        assert!(e.contains("none are configured"), "{e}");
        let e = config(&["--api-keys", "bad key"]).settings().unwrap_err();
        assert!(
            !e.contains("bad key"),
            "the message must not repeat the key: {e}"
        );
    }

    #[test]
    fn web_listen_counts_as_a_listening_address() {
        let s = config(&["--web-listen", "127.0.0.1:0"]).settings().unwrap();
        assert_eq!(s.auth, Auth::Open);
        assert_eq!(s.web_listen, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(config(&[]).settings().unwrap().web_listen, None);
        let e = config(&["--web-listen", "0.0.0.0:8080"])
            .settings()
            .unwrap_err();
        assert!(
            e.contains("needs API keys") && e.contains("0.0.0.0:8080"),
            "{e}"
        );
        let e = config(&["--web-listen", "0.0.0.0:8080", "--auth", "open"])
            .settings()
            .unwrap_err();
        assert!(
            e.contains("0.0.0.0:8080") && e.contains("--allow-open-nonlocal"),
            "{e}"
        );
        let s = config(&["--web-listen", "0.0.0.0:8080", "--api-keys", "k"]);
        assert!(matches!(s.settings().unwrap().auth, Auth::Keys(_)));
    }

    #[test]
    fn keys_file() {
        let path = std::env::temp_dir().join(format!("chess-gateway-keys-{}", std::process::id()));
        std::fs::write(&path, "# ops team\n\n  alpha  \nbeta\n").unwrap();
        let c = config(&["--api-keys-file", path.to_str().unwrap()]);
        let s = c.settings().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            s.auth,
            Auth::Keys(["alpha".to_owned(), "beta".to_owned()].into())
        );
        let c = config(&["--api-keys-file", "/nonexistent/keys"]);
        assert!(c.settings().unwrap_err().contains("/nonexistent/keys"));
    }

    #[test]
    fn limits() {
        let s = config(&["--rate-limit", "0", "--max-watchers", "0"])
            .settings()
            .unwrap();
        assert_eq!((s.rate, s.max_watchers), (None, None));
        let s = config(&["--rate-limit", "5", "--rate-burst", "20"])
            .settings()
            .unwrap();
        assert_eq!(s.rate, Some((5, 20)));
        assert!(config(&["--rate-burst", "0"]).settings().is_err());
        assert_eq!(
            config(&[]).settings().unwrap().default_deadline,
            Some(Duration::from_secs(60))
        );
    }
}
