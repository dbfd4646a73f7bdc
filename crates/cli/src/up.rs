//! `chess up`: the whole stack in this one process, on loopback: the rules service with its
//! embedded game store, the search service (the engine, on a worker per core), and the gateway
//! in front of them, sharing one shutdown trigger.
//!
//! ```text
//! chess up                                   gateway on 127.0.0.1:50051, games in ./chess-data
//! chess up --memory                          games kept in memory only
//! chess up --listen 127.0.0.1:0 --rules-listen 127.0.0.1:0 --search-listen 127.0.0.1:0   free ports
//! chess up --search-workers 1 --search-hash-mb 32   a smaller engine
//! chess up --tables generate                 endgame tables up to 4 pieces in ./chess-data/tables
//! chess up --tables tables                   the tables in ./tables (`chess tb generate`)
//! ```
//!
//! Each service prints its own `LISTENING service=<name> grpc=<addr> metrics=<addr>` line
//! (the gateway's gives the actual port when `--listen` asks for port 0); once all three answer
//! their gRPC health checks a `chess up: ready` block follows with ready-to-paste examples.
//! Ctrl-C or SIGTERM stops them gracefully and the process exits 0.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

use chess_gateway::{AuthMode, GatewayConfig};
use chess_rules_service::Config as RulesConfig;
use chess_rules_service::StoreKind;
use chess_search_service::{Config as SearchConfig, TablesSpec};
use chess_service_kit::{LogFormat, Shutdown};
use clap::Args;
use tokio::sync::mpsc;
use tonic::transport::Endpoint;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::client::DEFAULT_SERVER;
use crate::error::{CliError, CliResult};

/// How long both services get to answer their health checks after starting.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between health-check attempts.
const READY_RETRY: Duration = Duration::from_millis(100);
/// Time allowed to one health-check connection or call.
const HEALTH_CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Time allowed past the grace period for the servers to return after shutdown.
const STOP_SLACK: Duration = Duration::from_secs(5);

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Directory of the embedded game store (`games.redb`); created if missing.
    #[arg(long, value_name = "DIR", default_value = "chess-data")]
    data_dir: PathBuf,
    /// The gateway's address, the public API (loopback only); port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// The rules service's address, called only by the gateway (loopback only); port 0 picks a
    /// free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50052")]
    rules_listen: SocketAddr,
    /// The search service's address, called only by the gateway (loopback only); port 0 picks
    /// a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50053")]
    search_listen: SocketAddr,
    /// The web app's address (the page and the gRPC-Web API it calls; loopback only); port 0
    /// picks a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    web_listen: SocketAddr,
    /// The gateway's Prometheus metrics address (loopback only); port 0, the default, picks a
    /// free port (each service's `LISTENING` line says which).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    metrics_listen: SocketAddr,
    /// The rules service's metrics address (loopback only; port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    rules_metrics_listen: SocketAddr,
    /// The search service's metrics address (loopback only; port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    search_metrics_listen: SocketAddr,
    /// Searches the engine runs at once (default: one per CPU core).
    #[arg(long, value_name = "N")]
    search_workers: Option<u32>,
    /// Hash table per search worker, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    search_hash_mb: u32,
    /// Keep games in memory only: they are lost when the stack stops (no data directory).
    #[arg(long)]
    memory: bool,
    /// Endgame tables for analysis: a folder from `chess tb generate`, or `generate` to make
    /// every ending up to 4 pieces in DATA_DIR/tables in the background on first use (about
    /// 10 minutes on two cores, 182 MB; reused when there and valid).
    #[arg(long, env = "CHESS_SEARCH_TABLES", value_name = "DIR|generate")]
    tables: Option<TablesSpec>,
    /// Requests per second the gateway allows each caller; 0, the default, sets no limit: on
    /// loopback the only caller is you, and a load test should meet the servers, not a limit.
    #[arg(long, env = "CHESS_GATEWAY_RATE_LIMIT", default_value_t = 0)]
    rate_limit: u32,
    /// Game store: `redb` (a file in --data-dir, the default), `memory`, or `postgres`
    /// (the database at --database-url).
    #[arg(long, value_enum, env = "CHESS_RULES_STORE", value_name = "STORE")]
    store: Option<StoreKind>,
    /// The PostgreSQL database of `--store postgres`:
    /// `postgres://user:password@host:port/database`.
    #[arg(
        long,
        env = "CHESS_RULES_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    database_url: Option<String>,
    /// Log filter in `tracing` syntax (logs go to stderr); `info` shows the services' activity.
    #[arg(long, env = "CHESS_LOG", value_name = "FILTER", default_value = "warn")]
    log: String,
    /// Seconds the calls in flight get to finish after Ctrl-C or SIGTERM.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    shutdown_grace_secs: u64,
}

/// The resolved plan: actual addresses and the services' configurations.
struct Plan {
    gateway_addr: SocketAddr,
    rules_addr: SocketAddr,
    search_addr: SocketAddr,
    rules: RulesConfig,
    search: SearchConfig,
    gateway: GatewayConfig,
    store: String,
}

pub fn run(args: UpArgs) -> CliResult {
    for (flag, addr) in [
        ("--listen", args.listen),
        ("--rules-listen", args.rules_listen),
        ("--search-listen", args.search_listen),
        ("--web-listen", args.web_listen),
        ("--metrics-listen", args.metrics_listen),
        ("--rules-metrics-listen", args.rules_metrics_listen),
        ("--search-metrics-listen", args.search_metrics_listen),
    ] {
        if !addr.ip().is_loopback() {
            return Err(CliError::usage(format!(
                "{flag} {addr}: `chess up` serves on loopback only (the gateway runs without API \
                 keys); run chess-gateway, chess-rules-service and chess-search-service for \
                 other addresses"
            )));
        }
    }
    let [gateway_addr, rules_addr, search_addr, web_addr] = reserve(
        args.listen,
        args.rules_listen,
        args.search_listen,
        args.web_listen,
    )?;
    chess_service_kit::init_tracing(LogFormat::Human, &args.log)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let mut plan = plan(&args, gateway_addr, rules_addr, search_addr)?;
    plan.gateway.web_listen = Some(web_addr);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(serve(plan, Duration::from_secs(args.shutdown_grace_secs)))
}

/// Binds the four addresses (port 0 resolved to the port each service will use: the gateway
/// must know the others' addresses before any starts) and hands the listeners to the services
/// of this process ([`chess_service_kit::hand_over`]), so that no port is free between this
/// bind and the service's.
fn reserve(
    gateway: SocketAddr,
    rules: SocketAddr,
    search: SocketAddr,
    web: SocketAddr,
) -> CliResult<[SocketAddr; 4]> {
    let bind = |addr: SocketAddr, what: &str, flag: &str| {
        TcpListener::bind(addr).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
                format!(" (is another `chess up` running? choose another address with {flag})")
            } else {
                String::new()
            };
            CliError::failure(format!("cannot listen on {addr} for the {what}: {e}{hint}"))
        })
    };
    // All are held at once, so that equal addresses fail here too.
    let g = bind(gateway, "gateway", "--listen")?;
    let r = bind(rules, "rules service", "--rules-listen")?;
    let s = bind(search, "search service", "--search-listen")?;
    let w = bind(web, "web app", "--web-listen")?;
    let addrs = [
        g.local_addr()?,
        r.local_addr()?,
        s.local_addr()?,
        w.local_addr()?,
    ];
    for listener in [g, r, s, w] {
        chess_service_kit::hand_over(listener);
    }
    Ok(addrs)
}

fn plan(
    args: &UpArgs,
    gateway_addr: SocketAddr,
    rules_addr: SocketAddr,
    search_addr: SocketAddr,
) -> CliResult<Plan> {
    let kind = match (args.memory, args.store) {
        (true, None | Some(StoreKind::Memory)) => StoreKind::Memory,
        (true, Some(_)) => {
            return Err(CliError::usage(
                "--memory and --store name two stores: choose one",
            ));
        }
        (false, kind) => kind.unwrap_or(StoreKind::Redb),
    };
    let store = match kind {
        StoreKind::Memory => "in memory (lost when the stack stops)".to_owned(),
        StoreKind::Redb => format!(
            "in {}",
            chess_rules_service::store::RedbStore::path_in(&args.data_dir).display()
        ),
        StoreKind::Postgres => format!(
            "in PostgreSQL {}",
            chess_rules_service::store::redact_url(
                args.database_url.as_deref().unwrap_or_default()
            )
        ),
    };
    // Each service's configuration from its defaults, set field by field: neither the
    // command line nor the services' own environment variables (`CHESS_RULES_*`,
    // `CHESS_METRICS_LISTEN`, ...) reach the stack `chess up` starts, only its own flags.
    let grace = args.shutdown_grace_secs;
    let mut rules: RulesConfig = service_defaults("rules service")?;
    rules.listen = rules_addr;
    rules.data_dir = args.data_dir.clone();
    rules.store = kind;
    rules.database_url = args.database_url.clone();
    rules.common.metrics_listen = args.rules_metrics_listen;
    rules.common.shutdown_grace_secs = grace;
    let mut search: SearchConfig = service_defaults("search service")?;
    search.listen = search_addr;
    search.hash_mb = args.search_hash_mb;
    search.workers = args.search_workers.or(search.workers);
    search.tables = args.tables.clone();
    search.data_dir = args.data_dir.clone();
    search.common.metrics_listen = args.search_metrics_listen;
    search.common.shutdown_grace_secs = grace;
    let mut gateway: GatewayConfig = service_defaults("gateway")?;
    gateway.listen = gateway_addr;
    gateway.rules_addr = vec![format!("http://{rules_addr}")];
    gateway.search_addr = vec![format!("http://{search_addr}")];
    gateway.auth = AuthMode::Open;
    gateway.rate_limit = args.rate_limit;
    gateway.common.metrics_listen = args.metrics_listen;
    gateway.common.shutdown_grace_secs = grace;
    gateway
        .validate()
        .map_err(|e| CliError::usage(format!("gateway configuration: {e}")))?;
    Ok(Plan {
        gateway_addr,
        rules_addr,
        search_addr,
        rules,
        search,
        gateway,
        store,
    })
}

/// A service's configuration at its defaults (see [`chess_service_kit::defaults`]); `what`
/// names the service in the error, which would be a defect of its flags.
fn service_defaults<C: clap::Parser>(what: &str) -> CliResult<C> {
    chess_service_kit::defaults::<C>()
        .map_err(|e| CliError::usage(format!("{what} configuration: {}", first_line(&e))))
}

fn first_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or("invalid");
    line.trim_start_matches("error: ").to_owned()
}

/// A service task's end: its name and what its `run` returned.
type Ended = (&'static str, ServiceResult);
/// What a service's `run` returned (each service has its own error type).
type ServiceResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

async fn serve(plan: Plan, grace: Duration) -> CliResult {
    let Plan {
        gateway_addr,
        rules_addr,
        search_addr,
        rules,
        search,
        gateway,
        store,
    } = plan;
    let web = gateway.web_listen;
    let shutdown = Shutdown::new();
    let (ended_tx, mut ended) = mpsc::channel::<Ended>(3);
    let mut running = 0;

    let tx = ended_tx.clone();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let result = chess_rules_service::run(rules, stop)
            .await
            .map_err(Into::into);
        let _ = tx.send(("rules service", result)).await;
    });
    running += 1;

    let tx = ended_tx.clone();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let result = chess_search_service::run(search, stop)
            .await
            .map_err(Into::into);
        let _ = tx.send(("search service", result)).await;
    });
    running += 1;

    let tx = ended_tx;
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let result = chess_gateway::run(gateway, stop).await.map_err(Into::into);
        let _ = tx.send(("gateway", result)).await;
    });
    running += 1;

    // One signal listener for the whole run, so that no signal falls between two waits.
    let mut signalled = std::pin::pin!(signal());
    let ready = async {
        wait_healthy(rules_addr).await?;
        wait_healthy(search_addr).await?;
        wait_healthy(gateway_addr).await
    };
    let mut failure: Option<String> = None;
    let mut interrupted = None;
    tokio::select! {
        r = tokio::time::timeout(READY_TIMEOUT, ready) => match r {
            Ok(Ok(())) => print_ready(gateway_addr, rules_addr, search_addr, &store, web),
            Ok(Err(e)) => failure = Some(e),
            Err(_) => failure = Some(format!(
                "the services did not report healthy within {} s", READY_TIMEOUT.as_secs()
            )),
        },
        Some((name, result)) = ended.recv() => {
            running -= 1;
            failure = Some(ended_text(name, result));
        }
        signal = &mut signalled => interrupted = Some(signal),
    }

    if failure.is_none() && interrupted.is_none() {
        tokio::select! {
            signal = &mut signalled => interrupted = Some(signal),
            Some((name, result)) = ended.recv() => {
                running -= 1;
                failure = Some(ended_text(name, result));
            }
        }
    }
    if let Some(signal) = interrupted {
        eprintln!(
            "chess up: {signal}: stopping (calls in flight get {} s)",
            grace.as_secs()
        );
    }
    shutdown.trigger();

    let drained = tokio::time::timeout(grace + STOP_SLACK, async {
        while running > 0 {
            let Some((name, result)) = ended.recv().await else {
                break;
            };
            running -= 1;
            if let Err(e) = result {
                failure.get_or_insert_with(|| format!("{name}: {e}"));
            }
        }
    })
    .await;
    if drained.is_err() {
        failure.get_or_insert_with(|| "the services did not stop in time".to_owned());
    }
    match failure {
        None => {
            println!("chess up: stopped");
            Ok(())
        }
        Some(text) => Err(CliError::failure(text)),
    }
}

fn ended_text(name: &str, result: ServiceResult) -> String {
    match result {
        Err(e) => format!("{name}: {e}"),
        Ok(()) => format!("the {name} stopped unexpectedly"),
    }
}

/// Polls the server's gRPC health (the whole server, service `""`) until it says SERVING.
async fn wait_healthy(addr: SocketAddr) -> Result<(), String> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad address {addr}: {e}"))?
        .connect_timeout(HEALTH_CALL_TIMEOUT)
        .timeout(HEALTH_CALL_TIMEOUT);
    loop {
        if let Ok(channel) = endpoint.connect().await {
            let mut client = HealthClient::new(channel);
            let request = HealthCheckRequest {
                service: String::new(),
            };
            if let Ok(answer) = client.check(request).await
                && answer.get_ref().status == i32::from(ServingStatus::Serving)
            {
                return Ok(());
            }
        }
        tokio::time::sleep(READY_RETRY).await;
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C), naming it.
async fn signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => {
                let _ = tokio::signal::ctrl_c().await;
                "Ctrl-C"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

fn print_ready(
    gateway: SocketAddr,
    rules: SocketAddr,
    search: SocketAddr,
    store: &str,
    web: Option<SocketAddr>,
) {
    let server = format!("http://{gateway}");
    let mut text = String::from("chess up: ready\n");
    text.push_str(&format!(
        "  gateway  {gateway:<21}  the public gRPC API; no API key needed on loopback\n"
    ));
    text.push_str(&format!(
        "  rules    {rules:<21}  rules and games, stored {store}\n"
    ));
    text.push_str(&format!(
        "  search   {search:<21}  the engine: analysis, engine moves, game review\n"
    ));
    if let Some(web) = web {
        text.push_str(&format!(
            "  web      http://{web}/  the web app: play, analyse, review, watch\n"
        ));
    }
    text.push_str("Try:\n");
    if server != DEFAULT_SERVER {
        text.push_str(&format!("  export CHESS_SERVER={server}\n"));
    }
    text.push_str(&format!(
        "  grpcurl -plaintext -d '{{\"fen\":\"\"}}' {gateway} chess.v1.RulesService/LegalMoves\n"
    ));
    text.push_str("  chess game new --tc 5+3 --white Ann --black Bob\n");
    text.push_str("  chess game move <ID> e4\n");
    text.push_str("  chess game show <ID>\n");
    text.push_str("  chess analyze 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3' --depth 14 --multipv 3\n");
    text.push_str("  chess review game.pgn\n");
    text.push_str("Ctrl-C stops the stack.\n");
    print!("{text}");
    let _ = std::io::Write::flush(&mut std::io::stdout());
}
