//! `chess-loadgen run`: check the flags, reach the target, warm up, read the servers' metrics,
//! run the measured load, drain it, read the metrics again, and report.
//!
//! The metrics are read only when no call is in flight (after the warm-up has drained and
//! after the measured run has drained), so the servers' counts between the two reads are
//! exactly the measured run's calls when nothing else talks to them.

mod args;

pub use args::RunArgs;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write as _};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chess_proto::v1::SearchLimits;
use chess_search::{MAX_ELO, MIN_ELO};
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinSet;
use tonic::transport::Channel;

use crate::failure::Failure;
use crate::positions::PositionSet;
use crate::prom::{self, Page};
use crate::report::{self, Inputs, ServerReads, WarmupResult};
use crate::scenario::Scenario;
use crate::schedule::{LevelSpec, Schedule};
use crate::stats::{Latency, Recorder};
use crate::target::{self, HostPort};
use crate::workload::Work;

/// Time bound of a run given only --requests.
const REQUESTS_TIME_BOUND: Duration = Duration::from_secs(300);
/// Default time bound.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Default nodes per search when no limit is given.
const DEFAULT_NODES: u64 = 100_000;
/// How long the drain waits past the call deadline before giving up on a call.
const DRAIN_SLACK: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Model {
    Closed,
    Open,
}

/// A metrics endpoint to read.
#[derive(Debug)]
struct MetricsTarget {
    url: String,
    hp: HostPort,
    addr: SocketAddr,
}

/// Gauge reads during the run: by second, (metrics endpoint index, its gauges).
type GaugeReads = BTreeMap<u64, Vec<(usize, Page)>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the phases share.
struct Ctx {
    work: Arc<Work>,
    channels: Vec<Channel>,
    /// Requests so far over all phases: picks positions and connections.
    seq: AtomicU64,
    model: Model,
    max_in_flight: u32,
}

impl Ctx {
    fn next(&self) -> (u64, Channel) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let channel = self.channels[(seq % self.channels.len() as u64) as usize].clone();
        (seq, channel)
    }
}

/// How a phase ended.
struct PhaseEnd {
    wall: Duration,
    stopped_by: &'static str,
    unfinished: u64,
}

pub fn main(args: RunArgs) -> Result<ExitCode, Failure> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(run(args))
}

fn limits(args: &RunArgs) -> SearchLimits {
    let mut l = SearchLimits {
        depth: args.depth.unwrap_or(0),
        nodes: args.nodes.unwrap_or(0),
        time_ms: args.movetime.map_or(0, |d| d.as_millis().max(1) as u64),
        mate: 0,
    };
    if l.depth == 0 && l.nodes == 0 && l.time_ms == 0 {
        l.nodes = DEFAULT_NODES;
    }
    l
}

async fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    // ---- flags ----
    if args.elo != 0 && !(MIN_ELO..=MAX_ELO).contains(&args.elo) {
        return Err(Failure::Usage(format!(
            "--elo {}: a level from {MIN_ELO} to {MAX_ELO}, or 0 for full strength",
            args.elo
        )));
    }
    let (model, spec) = match (&args.clients, &args.rate) {
        (_, Some(rate)) => (Model::Open, rate.clone()),
        (Some(c), None) => (Model::Closed, c.clone()),
        (None, None) => (Model::Closed, LevelSpec::Const(1.0)),
    };
    let duration = match (args.duration, args.step_duration, &spec) {
        (Some(d), _, _) => d,
        (None, Some(step), LevelSpec::Steps(s)) => step * s.len() as u32,
        (None, _, _) if args.requests.is_some() => REQUESTS_TIME_BOUND,
        (None, _, _) => DEFAULT_DURATION,
    };
    if duration.is_zero() {
        return Err(Failure::Usage("--duration must be above 0".to_owned()));
    }
    if args.step_duration.is_some() && !matches!(spec, LevelSpec::Steps(_)) {
        return Err(Failure::Usage(
            "--step-duration goes with stepped --clients or --rate (e.g. --clients 1,2,4)"
                .to_owned(),
        ));
    }
    let schedule = Schedule::new(spec.clone(), duration, args.step_duration);
    let positions = PositionSet::load(args.positions.as_deref()).map_err(Failure::Usage)?;
    let target_hp = HostPort::parse(&args.target, "target").map_err(Failure::Usage)?;
    if !target_hp.path.is_empty() && target_hp.path != "/" {
        return Err(Failure::Usage(format!(
            "target {}: a gRPC target takes no path",
            args.target
        )));
    }
    let mut metric_targets = Vec::new();
    for url in &args.metrics {
        let hp = HostPort::parse(url, "metrics").map_err(Failure::Usage)?;
        metric_targets.push((url.clone(), hp));
    }
    let limits = limits(&args);
    let work = Arc::new(
        Work::new(
            args.scenario,
            args.mix.0.clone(),
            positions,
            limits,
            args.multipv,
            args.batch,
            args.game_plies,
            args.elo,
            args.seed,
            args.timeout,
        )
        .with_api_key(args.api_key.as_deref())
        .map_err(Failure::Usage)?,
    );

    // ---- the target and the metrics endpoints ----
    let refuse_or_fail = |e: String| {
        if e.contains("--allow-remote") {
            Failure::Usage(e)
        } else {
            Failure::Run(e)
        }
    };
    let target_addr = target_hp
        .resolve("target", args.allow_remote)
        .await
        .map_err(refuse_or_fail)?;
    let mut metrics = Vec::new();
    for (url, hp) in metric_targets {
        let addr = hp
            .resolve("metrics", args.allow_remote)
            .await
            .map_err(refuse_or_fail)?;
        metrics.push(MetricsTarget { url, hp, addr });
    }
    if args.allow_remote && !target_addr.ip().is_loopback() {
        eprintln!("chess-loadgen: loading {target_addr}, outside this machine (--allow-remote)");
    }
    let channels = target::connect(target_addr, args.connections)
        .await
        .map_err(Failure::Run)?;
    for service in work.required_services() {
        let serves = target::serves(&channels[0], service)
            .await
            .map_err(|e| Failure::Run(format!("{}: {e}", args.target)))?;
        if !serves {
            return Err(Failure::Run(format!(
                "{} does not serve {service}, which the {} scenario needs (the gateway serves \
                 every service; the search service only chess.v1.AnalysisService, the rules \
                 service only chess.v1.RulesService and chess.v1.GameService)",
                args.target,
                args.scenario.name()
            )));
        }
    }
    for m in &metrics {
        read(m)
            .await
            .map_err(|e| Failure::Run(format!("cannot read the metrics at {}: {e}", m.url)))?;
    }

    let ctx = Arc::new(Ctx {
        work: work.clone(),
        channels,
        seq: AtomicU64::new(0),
        model,
        max_in_flight: args.max_in_flight,
    });
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let progress = !args.quiet;

    // ---- warm-up ----
    let mut warmup = WarmupResult::default();
    if !args.warmup.is_zero() {
        // A ramp from 0 warms up at its lowest non-zero level.
        let level = spec.first().max(1.0);
        let rec = Arc::new(Mutex::new(Recorder::new(1)));
        if progress {
            eprintln!(
                "chess-loadgen: warming up for {:.1} s (not counted)",
                args.warmup.as_secs_f64()
            );
        }
        let end = run_phase(
            &ctx,
            Schedule::constant(level, args.warmup),
            args.warmup,
            None,
            rec.clone(),
        )
        .await;
        let r = lock(&rec);
        warmup = WarmupResult {
            seconds: end.wall.as_secs_f64(),
            requests: r.total.requests(),
            errors: r.total.errors(),
        };
    }

    // ---- the measured run ----
    let mut before: Vec<Result<Page, String>> = Vec::new();
    for m in &metrics {
        before.push(read(m).await);
    }
    let rec = Arc::new(Mutex::new(Recorder::new(schedule.steps_count())));
    let during: Arc<Mutex<GaugeReads>> = Arc::default();
    let (stop_ticker, ticker_stopped) = oneshot::channel::<()>();
    let started = Instant::now();
    let ticker = tokio::spawn(ticker(
        rec.clone(),
        metrics
            .iter()
            .map(|m| (m.addr, m.hp.authority(), m.hp.path.clone()))
            .collect(),
        during.clone(),
        schedule.clone(),
        model,
        started,
        progress,
        ticker_stopped,
    ));
    let end = run_phase(&ctx, schedule.clone(), duration, args.requests, rec.clone()).await;
    let _ = stop_ticker.send(());
    let _ = ticker.await;
    if progress && std::io::stderr().is_terminal() {
        eprintln!();
    }
    let mut after: Vec<Result<Page, String>> = Vec::new();
    for m in &metrics {
        after.push(read(m).await);
    }

    // ---- the report ----
    let wall_s = end.wall.as_secs_f64();
    let during = lock(&during);
    let mut server = Vec::new();
    for (i, m) in metrics.iter().enumerate() {
        let pages: Vec<Page> = during
            .values()
            .flat_map(|v| v.iter().filter(|(j, _)| *j == i).map(|(_, p)| p.clone()))
            .collect();
        let error = match (&before[i], &after[i]) {
            (Err(e), _) => Some(format!("before the run: {e}")),
            (_, Err(e)) => Some(format!("after the run: {e}")),
            _ => None,
        };
        server.push(report::server_result(
            &ServerReads {
                url: &m.url,
                before: before[i].as_ref().ok(),
                after: after[i].as_ref().ok(),
                during: &pages,
                error,
            },
            wall_s,
        ));
    }
    let gauges_by_second = during
        .iter()
        .map(|(s, v)| (*s, v.iter().map(|(_, p)| p.clone()).collect()))
        .collect();
    drop(during);
    let stages = schedule
        .stages()
        .iter()
        .map(|s| {
            (
                s.start.as_secs_f64(),
                s.end.map_or(f64::INFINITY, |e| e.as_secs_f64()),
                s.level,
            )
        })
        .collect();
    let level_schedule = schedule.clone();
    let config = report::Config {
        target: args.target.clone(),
        scenario: args.scenario.name(),
        mix: if args.scenario == Scenario::Mix {
            args.mix.0.iter().map(|(s, w)| (s.name(), *w)).collect()
        } else {
            BTreeMap::new()
        },
        model: match model {
            Model::Closed => "closed",
            Model::Open => "open",
        },
        level: spec.describe(),
        step_s: matches!(spec, LevelSpec::Steps(_)).then(|| schedule.step.as_secs_f64()),
        duration_s: duration.as_secs_f64(),
        requests: args.requests,
        warmup_s: args.warmup.as_secs_f64(),
        connections: args.connections,
        max_in_flight: (model == Model::Open).then_some(args.max_in_flight),
        timeout_s: args.timeout.as_secs_f64(),
        depth: limits.depth,
        nodes: limits.nodes,
        movetime_ms: limits.time_ms,
        multipv: args.multipv,
        batch: args.batch,
        game_plies: args.game_plies,
        elo: args.elo,
        positions: work.positions.source.clone(),
        position_count: work.positions.spots.len(),
        seed: args.seed,
        metrics: metrics.iter().map(|m| m.url.clone()).collect(),
    };
    let report = {
        let r = lock(&rec);
        report::build(
            &r,
            Inputs {
                label: args.label.clone(),
                started_unix_ms,
                command: std::env::args().collect(),
                config,
                wall_s,
                stopped_by: end.stopped_by,
                unfinished: end.unfinished,
                stages,
                level_at: Box::new(move |t| {
                    level_schedule.level_at(Duration::from_secs_f64(t.max(0.0)))
                }),
                gauges_by_second,
                server,
                warmup,
            },
        )
    };
    print!("{}", report::summary(&report));
    let write = |path: &std::path::Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Failure::Run(format!("cannot encode the report: {e}")))?;
        write(path, text + "\n")?;
    }
    if let Some(path) = &args.csv {
        write(path, report::csv(&report))?;
    }
    if let Some(path) = &args.timeline_csv {
        write(path, report::timeline_csv(&report))?;
    }
    if let Some(path) = &args.svg {
        write(path, crate::svg::chart(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn read(m: &MetricsTarget) -> Result<Page, String> {
    prom::scrape(m.addr, &m.hp.authority(), &m.hp.path).await
}

/// Runs one phase to its bounds and waits for its calls to end.
async fn run_phase(
    ctx: &Arc<Ctx>,
    schedule: Schedule,
    duration: Duration,
    limit: Option<u64>,
    rec: Arc<Mutex<Recorder>>,
) -> PhaseEnd {
    let start = Instant::now();
    let issued = Arc::new(AtomicU64::new(0));
    let schedule = Arc::new(schedule);
    let mut tasks = JoinSet::new();
    match ctx.model {
        Model::Closed => {
            let clients = schedule.spec.max().ceil() as usize;
            for id in 0..clients {
                let (ctx, schedule, rec, issued) =
                    (ctx.clone(), schedule.clone(), rec.clone(), issued.clone());
                tasks.spawn(async move {
                    loop {
                        let now = start.elapsed();
                        if now >= duration {
                            break;
                        }
                        if id >= schedule.clients_at(now) {
                            let idle = Duration::from_millis(10).min(duration - now);
                            tokio::time::sleep(idle).await;
                            continue;
                        }
                        let n = issued.fetch_add(1, Ordering::SeqCst);
                        if limit.is_some_and(|l| n >= l) {
                            break;
                        }
                        let (seq, channel) = ctx.next();
                        let stage = schedule.stage_at(now);
                        lock(&rec).started(Duration::ZERO);
                        let sent = Instant::now();
                        let outcome = ctx.work.call(seq, channel).await;
                        let done = Instant::now();
                        let took = done - sent;
                        lock(&rec).finished(&outcome, took, took, done - start, stage);
                    }
                });
            }
        }
        Model::Open => {
            let slots = Arc::new(Semaphore::new(ctx.max_in_flight as usize));
            let mut k = 0u64;
            loop {
                if limit.is_some_and(|l| k >= l) {
                    break;
                }
                let Some(at) = schedule.send_time(k, duration) else {
                    break;
                };
                let intended = start + at;
                tokio::time::sleep_until(intended.into()).await;
                let Ok(permit) = slots.clone().acquire_owned().await else {
                    break;
                };
                issued.fetch_add(1, Ordering::SeqCst);
                let (seq, channel) = ctx.next();
                let stage = schedule.stage_at(at);
                let sent = Instant::now();
                lock(&rec).started(sent.saturating_duration_since(intended));
                let (ctx, rec) = (ctx.clone(), rec.clone());
                tasks.spawn(async move {
                    let outcome = ctx.work.call(seq, channel).await;
                    let done = Instant::now();
                    lock(&rec).finished(
                        &outcome,
                        done - intended,
                        done - sent,
                        done - start,
                        stage,
                    );
                    drop(permit);
                });
                // Forget finished calls as we go, so a long run keeps no pile of handles.
                while tasks.try_join_next().is_some() {}
                k += 1;
            }
        }
    }
    let reached = |n: u64| limit.is_some_and(|l| n >= l);
    let drain = async { while tasks.join_next().await.is_some() {} };
    let bound = duration.saturating_sub(start.elapsed()) + ctx.work.timeout + DRAIN_SLACK;
    let mut unfinished = 0;
    if tokio::time::timeout(bound, drain).await.is_err() {
        unfinished = tasks.len() as u64;
        tasks.abort_all();
    }
    let wall = start.elapsed();
    PhaseEnd {
        wall,
        stopped_by: if reached(issued.load(Ordering::SeqCst)) {
            "requests"
        } else {
            "duration"
        },
        unfinished,
    }
}

/// Once a second: the progress line on stderr and a read of every metrics endpoint's gauges.
#[allow(clippy::too_many_arguments)]
async fn ticker(
    rec: Arc<Mutex<Recorder>>,
    metrics: Vec<(SocketAddr, String, String)>,
    during: Arc<Mutex<GaugeReads>>,
    schedule: Schedule,
    model: Model,
    started: Instant,
    progress: bool,
    mut stop: oneshot::Receiver<()>,
) {
    let tty = std::io::stderr().is_terminal();
    let mut tick = tokio::time::interval_at(
        (started + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {}
        }
        let elapsed = started.elapsed();
        let second = elapsed.as_secs().saturating_sub(1);
        let mut queue = None;
        for (i, (addr, host, path)) in metrics.iter().enumerate() {
            if let Ok(page) = prom::scrape(*addr, host, path).await {
                let mut gauges = Page::default();
                for (k, s) in page.gauges() {
                    gauges.samples.insert(k.clone(), s.clone());
                }
                gauges.types = page
                    .types
                    .iter()
                    .filter(|(_, t)| t.as_str() == "gauge")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if let Some(q) = gauges.sum("chess_search_queue_depth") {
                    *queue.get_or_insert(0.0) += q;
                }
                lock(&during).entry(second).or_default().push((i, gauges));
            }
        }
        if !progress {
            continue;
        }
        let line = {
            let r = lock(&rec);
            let last = r
                .seconds
                .get(second as usize)
                .map(|s| (s.ok, s.errors, Latency::of(&s.latency)));
            let (ok, err, lat) = last.unwrap_or((0, 0, Latency::default()));
            let level = match model {
                Model::Closed => format!("{} clients", schedule.clients_at(elapsed)),
                Model::Open => format!("{:.1} req/s target", schedule.level_at(elapsed)),
            };
            let nodes = r.seconds.get(second as usize).map_or(0, |s| s.nodes);
            let mut line = format!(
                "[{:>4}s] {level}: {ok} ok {err} err in the last second, p50 {:.1} ms p99 {:.1} ms | total {} ({} errors), in flight {}",
                elapsed.as_secs(),
                lat.p50,
                lat.p99,
                r.total.requests(),
                r.total.errors(),
                r.in_flight
            );
            if nodes > 0 {
                line.push_str(&format!(", {} nodes/s", report::si(nodes as f64)));
            }
            if let Some(q) = queue {
                line.push_str(&format!(", server queue {q}"));
            }
            line
        };
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }
}
