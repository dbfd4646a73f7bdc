//! The report: what the client saw next to what the servers counted, as JSON (for machines and
//! `compare`), CSV, and a human summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::prom::Page;
use crate::stats::{Latency, Recorder, Tally, upper_snake};

/// Bumped when a field changes meaning.
pub const FORMAT: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub format: u32,
    pub version: &'static str,
    pub label: String,
    pub started_unix_ms: u64,
    pub command: Vec<String>,
    pub machine: Machine,
    pub config: Config,
    pub result: RunResult,
    pub methods: Vec<MethodResult>,
    pub stages: Vec<StageResult>,
    pub timeline: Vec<SecondResult>,
    pub server: Vec<ServerResult>,
    pub warmup: WarmupResult,
}

#[derive(Debug, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub os: &'static str,
    pub arch: &'static str,
}

impl Machine {
    pub fn this() -> Machine {
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Config {
    pub target: String,
    pub scenario: &'static str,
    /// The mix's weights (only for the mix scenario).
    pub mix: BTreeMap<&'static str, u32>,
    /// `closed` (clients) or `open` (rate).
    pub model: &'static str,
    /// Clients or requests per second, as given: `4`, `1,2,4,8`, `10..100`.
    pub level: String,
    pub step_s: Option<f64>,
    pub duration_s: f64,
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub connections: u32,
    pub max_in_flight: Option<u32>,
    pub timeout_s: f64,
    pub depth: u32,
    pub nodes: u64,
    pub movetime_ms: u64,
    pub multipv: u32,
    pub batch: u32,
    pub game_plies: u32,
    pub elo: u32,
    pub positions: String,
    pub position_count: usize,
    pub seed: u64,
    pub metrics: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Engine {
    /// Nodes the answers reported (each search's total once).
    pub nodes: u64,
    pub nodes_per_s: f64,
    /// Positions analysed or evaluated by the successful calls.
    pub positions: u64,
    pub positions_per_s: f64,
}

impl Engine {
    fn of(t: &Tally, secs: f64) -> Engine {
        Engine {
            nodes: t.nodes,
            nodes_per_s: per_s(t.nodes, secs),
            positions: t.positions,
            positions_per_s: per_s(t.positions, secs),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct RunResult {
    /// From the start of the measured run to the end of its last call.
    pub wall_s: f64,
    /// `duration` or `requests`: which bound ended the run.
    pub stopped_by: &'static str,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    /// Errors as a percentage of requests.
    pub error_rate: f64,
    /// Requests completed per second.
    pub rate: f64,
    pub ok_rate: f64,
    /// Successful calls; from the intended send time in the open model.
    pub latency_ms: Latency,
    /// Successful calls from the moment they were sent (the open model's late sends excluded).
    pub service_time_ms: Latency,
    pub error_latency_ms: Latency,
    pub codes: BTreeMap<String, u64>,
    /// The first message of each error code.
    pub error_samples: BTreeMap<String, String>,
    /// Open model: sends more than 2 ms behind schedule (the generator, the machine or
    /// --max-in-flight could not keep up), and how far behind the sends were.
    pub late_sends: u64,
    pub send_lag_ms: Latency,
    /// Calls still running when the drain gave up (0 unless a server ignores deadlines).
    pub unfinished: u64,
    pub engine: Engine,
}

#[derive(Debug, Serialize)]
pub struct MethodResult {
    pub method: String,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    pub rate: f64,
    pub codes: BTreeMap<String, u64>,
    pub latency_ms: Latency,
    pub engine: Engine,
    /// Calls of this method the servers counted in the same window, by service.
    pub server_counts: BTreeMap<String, u64>,
}

#[derive(Debug, Serialize)]
pub struct StageResult {
    pub index: usize,
    pub level: f64,
    pub start_s: f64,
    pub end_s: f64,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    pub rate: f64,
    pub ok_rate: f64,
    pub latency_ms: Latency,
    pub engine: Engine,
}

#[derive(Debug, Serialize)]
pub struct SecondResult {
    pub second: u64,
    pub level: f64,
    pub ok: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub nodes: u64,
    pub positions: u64,
    /// The search service's queue depth and running searches, read during that second.
    pub queue_depth: Option<f64>,
    pub active_searches: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct ServerCall {
    pub method: String,
    pub code: String,
    pub count: u64,
}

#[derive(Debug, Serialize)]
pub struct ServerHandling {
    pub method: String,
    pub count: u64,
    pub mean_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct GaugeSummary {
    pub series: String,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub samples: usize,
}

#[derive(Debug, Serialize)]
pub struct SearchSide {
    pub nodes: u64,
    pub nodes_per_s: f64,
    pub searches: u64,
    pub searches_per_s: f64,
    pub rejected: u64,
    pub cancelled: u64,
    pub static_evaluations: u64,
}

#[derive(Debug, Serialize)]
pub struct ServerResult {
    pub url: String,
    /// The `service` label of its metrics (`gateway`, `search`, `rules`).
    pub service: String,
    /// Why a read failed, if one did.
    pub error: Option<String>,
    /// Calls finished between the reads before and after the measured run.
    pub calls: Vec<ServerCall>,
    pub handling: Vec<ServerHandling>,
    /// Every other counter that moved, `name{labels}` -> increase.
    pub counters: BTreeMap<String, f64>,
    /// Gauges read once a second during the run.
    pub gauges: Vec<GaugeSummary>,
    pub search: Option<SearchSide>,
}

#[derive(Debug, Default, Serialize)]
pub struct WarmupResult {
    pub seconds: f64,
    pub requests: u64,
    pub errors: u64,
}

pub fn per_s(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

/// What a metrics endpoint showed over the measured run.
pub struct ServerReads<'a> {
    pub url: &'a str,
    pub before: Option<&'a Page>,
    pub after: Option<&'a Page>,
    /// Gauge reads during the run.
    pub during: &'a [Page],
    pub error: Option<String>,
}

pub fn server_result(reads: &ServerReads<'_>, wall_s: f64) -> ServerResult {
    let mut out = ServerResult {
        url: reads.url.to_owned(),
        service: String::new(),
        error: reads.error.clone(),
        calls: Vec::new(),
        handling: Vec::new(),
        counters: BTreeMap::new(),
        gauges: Vec::new(),
        search: None,
    };
    let (Some(before), Some(after)) = (reads.before, reads.after) else {
        return out;
    };
    out.service = after
        .samples
        .values()
        .find_map(|s| s.labels.get("service").cloned())
        .unwrap_or_default();
    let increase = after.increase_since(before);
    let mut handling: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    let mut search = SearchSide {
        nodes: 0,
        nodes_per_s: 0.0,
        searches: 0,
        searches_per_s: 0.0,
        rejected: 0,
        cancelled: 0,
        static_evaluations: 0,
    };
    let mut has_search = false;
    for (key, (sample, delta)) in &increase {
        let name = sample.name.as_str();
        match name {
            "chess_grpc_server_handled_total" => {
                if *delta > 0.0 {
                    out.calls.push(ServerCall {
                        method: sample.label("method").to_owned(),
                        code: upper_snake(sample.label("code")),
                        count: *delta as u64,
                    });
                }
            }
            "chess_grpc_server_handling_seconds_sum" => {
                handling
                    .entry(sample.label("method").to_owned())
                    .or_default()
                    .0 = *delta;
            }
            "chess_grpc_server_handling_seconds_count" => {
                handling
                    .entry(sample.label("method").to_owned())
                    .or_default()
                    .1 = *delta;
            }
            _ if name.ends_with("_bucket") => {}
            _ => {
                let n = *delta as u64;
                let mut search_counter = true;
                match name {
                    "chess_search_nodes_total" => search.nodes = n,
                    "chess_search_searches_total" => search.searches = n,
                    "chess_search_rejected_total" => search.rejected = n,
                    "chess_search_cancelled_total" => search.cancelled = n,
                    "chess_search_static_evaluations_total" => search.static_evaluations = n,
                    _ => search_counter = false,
                }
                has_search |= search_counter;
                if *delta > 0.0 {
                    out.counters.insert(key.clone(), round(*delta, 6));
                }
            }
        }
    }
    out.handling = handling
        .into_iter()
        .filter(|(_, (_, count))| *count > 0.0)
        .map(|(method, (sum, count))| ServerHandling {
            method,
            count: count as u64,
            mean_ms: round(sum / count * 1000.0, 3),
        })
        .collect();
    if has_search {
        search.nodes_per_s = round(per_s(search.nodes, wall_s), 1);
        search.searches_per_s = round(per_s(search.searches, wall_s), 3);
        out.search = Some(search);
    }
    let mut gauges: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for page in reads.during {
        for (key, sample) in page.gauges() {
            gauges.entry(key.clone()).or_default().push(sample.value);
        }
    }
    out.gauges = gauges
        .into_iter()
        .map(|(series, v)| GaugeSummary {
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean: round(v.iter().sum::<f64>() / v.len() as f64, 3),
            samples: v.len(),
            series,
        })
        .collect();
    out
}

/// The pieces `build` needs besides the recorder.
pub struct Inputs {
    pub label: String,
    pub started_unix_ms: u64,
    pub command: Vec<String>,
    pub config: Config,
    pub wall_s: f64,
    pub stopped_by: &'static str,
    pub unfinished: u64,
    /// Start and end (seconds) of each step, and its level.
    pub stages: Vec<(f64, f64, f64)>,
    /// The level at the middle of each second.
    pub level_at: Box<dyn Fn(f64) -> f64>,
    /// Gauge reads by second of the run.
    pub gauges_by_second: BTreeMap<u64, Vec<Page>>,
    pub server: Vec<ServerResult>,
    pub warmup: WarmupResult,
}

pub fn build(rec: &Recorder, inputs: Inputs) -> Report {
    let wall = inputs.wall_s;
    let total = &rec.total;
    let requests = total.requests();
    let errors = total.errors();
    let ok = requests - errors;
    let result = RunResult {
        wall_s: round(wall, 3),
        stopped_by: inputs.stopped_by,
        requests,
        ok,
        errors,
        error_rate: if requests > 0 {
            round(errors as f64 * 100.0 / requests as f64, 3)
        } else {
            0.0
        },
        rate: round(per_s(requests, wall), 3),
        ok_rate: round(per_s(ok, wall), 3),
        latency_ms: Latency::of(&total.ok),
        service_time_ms: Latency::of(&total.service),
        error_latency_ms: Latency::of(&total.failed),
        codes: total.codes.clone(),
        error_samples: total.samples.clone(),
        late_sends: rec.late_sends,
        send_lag_ms: Latency::of(&rec.lag),
        unfinished: inputs.unfinished,
        engine: Engine::of(total, wall),
    };
    let methods = rec
        .methods
        .iter()
        .map(|(method, t)| {
            let server_counts = inputs
                .server
                .iter()
                .filter(|s| s.error.is_none() && !s.service.is_empty())
                .map(|s| {
                    let n = s
                        .calls
                        .iter()
                        .filter(|c| c.method == *method)
                        .map(|c| c.count)
                        .sum();
                    (s.service.clone(), n)
                })
                .collect();
            MethodResult {
                method: (*method).to_owned(),
                requests: t.requests(),
                ok: t.requests() - t.errors(),
                errors: t.errors(),
                rate: round(per_s(t.requests(), wall), 3),
                codes: t.codes.clone(),
                latency_ms: Latency::of(&t.ok),
                engine: Engine::of(t, wall),
                server_counts,
            }
        })
        .collect();
    let stages = if inputs.stages.len() > 1 {
        rec.stages
            .iter()
            .zip(&inputs.stages)
            .enumerate()
            .map(|(index, (t, &(start, end, level)))| {
                let end = end.min(wall).max(start);
                let secs = end - start;
                StageResult {
                    index,
                    level,
                    start_s: round(start, 3),
                    end_s: round(end, 3),
                    requests: t.requests(),
                    ok: t.requests() - t.errors(),
                    errors: t.errors(),
                    rate: round(per_s(t.requests(), secs), 3),
                    ok_rate: round(per_s(t.requests() - t.errors(), secs), 3),
                    latency_ms: Latency::of(&t.ok),
                    engine: Engine::of(t, secs),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let timeline = rec
        .seconds
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let q = |p: f64| {
                if s.latency.is_empty() {
                    0.0
                } else {
                    s.latency.value_at_quantile(p) as f64 / 1000.0
                }
            };
            let reads = inputs.gauges_by_second.get(&(i as u64));
            let gauge = |name: &str| {
                let values: Vec<f64> = reads?.iter().filter_map(|p| p.sum(name)).collect();
                (!values.is_empty()).then(|| values.iter().sum::<f64>())
            };
            SecondResult {
                second: i as u64,
                level: round((inputs.level_at)(i as f64 + 0.5), 3),
                ok: s.ok,
                errors: s.errors,
                p50_ms: q(0.5),
                p90_ms: q(0.9),
                p99_ms: q(0.99),
                max_ms: if s.latency.is_empty() {
                    0.0
                } else {
                    s.latency.max() as f64 / 1000.0
                },
                nodes: s.nodes,
                positions: s.positions,
                queue_depth: gauge("chess_search_queue_depth"),
                active_searches: gauge("chess_search_active_searches"),
            }
        })
        .collect();
    Report {
        tool: "chess-loadgen",
        format: FORMAT,
        version: env!("CARGO_PKG_VERSION"),
        label: inputs.label,
        started_unix_ms: inputs.started_unix_ms,
        command: inputs.command,
        machine: Machine::this(),
        config: inputs.config,
        result,
        methods,
        stages,
        timeline,
        server: inputs.server,
        warmup: inputs.warmup,
    }
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `12,345,678`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1.23 M`, `456 k`, `78.9`.
pub fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0} k", x / 1e3)
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn latency_line(l: &Latency) -> String {
    format!(
        "min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {} ms",
        ms(l.min),
        ms(l.mean),
        ms(l.p50),
        ms(l.p90),
        ms(l.p99),
        ms(l.p999),
        ms(l.max)
    )
}

/// The human summary.
pub fn summary(r: &Report) -> String {
    let c = &r.config;
    let res = &r.result;
    let mut s = String::new();
    let load = match c.model {
        "open" => format!("open model, {} requests/s", c.level),
        _ => format!("closed model, {} clients", c.level),
    };
    let _ = writeln!(
        s,
        "chess-loadgen: {} on {}, {load}, {} connection(s), {} positions ({})",
        c.scenario, c.target, c.connections, c.position_count, c.positions
    );
    if r.warmup.seconds > 0.0 {
        let _ = writeln!(
            s,
            "warm-up       {:.1} s, {} requests ({} errors), not counted",
            r.warmup.seconds, r.warmup.requests, r.warmup.errors
        );
    }
    let _ = writeln!(
        s,
        "requests      {} in {:.2} s (stopped by {}): {:.1}/s, ok {} ({:.1}/s), errors {} ({:.2}%)",
        res.requests,
        res.wall_s,
        res.stopped_by,
        res.rate,
        res.ok,
        res.ok_rate,
        res.errors,
        res.error_rate
    );
    let _ = writeln!(s, "latency       {}", latency_line(&res.latency_ms));
    if c.model == "open" {
        let _ = writeln!(s, "service time  {}", latency_line(&res.service_time_ms));
        let _ = writeln!(
            s,
            "late sends    {} more than 2 ms behind schedule; lag p50 {} p99 {} max {} ms",
            res.late_sends,
            ms(res.send_lag_ms.p50),
            ms(res.send_lag_ms.p99),
            ms(res.send_lag_ms.max)
        );
    }
    if res.errors > 0 {
        let codes: Vec<String> = res
            .codes
            .iter()
            .filter(|(k, _)| k.as_str() != "OK")
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(s, "errors        {}", codes.join(", "));
        for (code, message) in &res.error_samples {
            let _ = writeln!(s, "  {code}: {message}");
        }
    }
    if res.unfinished > 0 {
        let _ = writeln!(
            s,
            "unfinished    {} calls never ended, despite their deadline",
            res.unfinished
        );
    }
    if res.engine.nodes > 0 || res.engine.positions > 0 {
        let _ = writeln!(
            s,
            "engine        {} nodes: {} nodes/s; {} positions: {:.2} positions/s",
            thousands(res.engine.nodes),
            si(res.engine.nodes_per_s),
            thousands(res.engine.positions),
            res.engine.positions_per_s
        );
    }
    if !r.stages.is_empty() {
        let _ = writeln!(s, "steps");
        for st in &r.stages {
            let _ = writeln!(
                s,
                "  {:>7} {:>6.1}-{:<6.1}s {:>7} req {:>9.2}/s  err {:<5} p50 {:>7} p99 {:>7} ms  {:>9} nodes/s  {:>8.2} pos/s",
                st.level,
                st.start_s,
                st.end_s,
                st.requests,
                st.rate,
                st.errors,
                ms(st.latency_ms.p50),
                ms(st.latency_ms.p99),
                si(st.engine.nodes_per_s),
                st.engine.positions_per_s
            );
        }
    }
    let services: Vec<&str> = r
        .server
        .iter()
        .filter(|s| s.error.is_none() && !s.service.is_empty())
        .map(|s| s.service.as_str())
        .collect();
    let _ = writeln!(
        s,
        "methods       (client count{})",
        services
            .iter()
            .map(|n| format!(" | {n} counted"))
            .collect::<String>()
    );
    for m in &r.methods {
        let server: String = services
            .iter()
            .map(|n| format!(" | {}", m.server_counts.get(*n).copied().unwrap_or(0)))
            .collect();
        let _ = writeln!(
            s,
            "  {:<42} {:>7}{server}  {:>8.1}/s  p50 {} p99 {} ms  errors {}",
            m.method,
            m.requests,
            m.rate,
            ms(m.latency_ms.p50),
            ms(m.latency_ms.p99),
            m.errors
        );
    }
    for srv in &r.server {
        let name = if srv.service.is_empty() {
            "?"
        } else {
            &srv.service
        };
        let _ = writeln!(s, "server {name} ({})", srv.url);
        if let Some(e) = &srv.error {
            let _ = writeln!(s, "  unreadable: {e}");
            continue;
        }
        for call in &srv.calls {
            let _ = writeln!(s, "  {:<42} {:<20} {}", call.method, call.code, call.count);
        }
        for h in &srv.handling {
            let _ = writeln!(
                s,
                "  {:<42} mean handling time {} ms",
                h.method,
                ms(h.mean_ms)
            );
        }
        if let Some(search) = &srv.search {
            let _ = writeln!(
                s,
                "  searches {} ({:.2}/s), nodes {} ({} nodes/s), rejected {}, cancelled {}, static evaluations {}",
                search.searches,
                search.searches_per_s,
                thousands(search.nodes),
                si(search.nodes_per_s),
                search.rejected,
                search.cancelled,
                search.static_evaluations
            );
        }
        for g in srv.gauges.iter().filter(|g| g.max > 0.0) {
            let _ = writeln!(
                s,
                "  {:<60} min {} mean {} max {}",
                g.series, g.min, g.mean, g.max
            );
        }
    }
    s
}

/// One row per scope: the whole run, each method, each step.
pub fn csv(r: &Report) -> String {
    let mut s = String::from(
        "scope,name,level,requests,ok,errors,rate,min_ms,mean_ms,p50_ms,p90_ms,p99_ms,p999_ms,max_ms,nodes_per_s,positions_per_s\n",
    );
    let mut row = |scope: &str,
                   name: &str,
                   level: &str,
                   n: (u64, u64, u64),
                   rate: f64,
                   l: &Latency,
                   e: &Engine| {
        let _ = writeln!(
            s,
            "{scope},{name},{level},{},{},{},{rate:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.1},{:.3}",
            n.0,
            n.1,
            n.2,
            l.min,
            l.mean,
            l.p50,
            l.p90,
            l.p99,
            l.p999,
            l.max,
            e.nodes_per_s,
            e.positions_per_s
        );
    };
    let res = &r.result;
    row(
        "run",
        r.config.scenario,
        &r.config.level,
        (res.requests, res.ok, res.errors),
        res.rate,
        &res.latency_ms,
        &res.engine,
    );
    for m in &r.methods {
        row(
            "method",
            &m.method,
            "",
            (m.requests, m.ok, m.errors),
            m.rate,
            &m.latency_ms,
            &m.engine,
        );
    }
    for st in &r.stages {
        row(
            "step",
            &st.index.to_string(),
            &st.level.to_string(),
            (st.requests, st.ok, st.errors),
            st.rate,
            &st.latency_ms,
            &st.engine,
        );
    }
    s
}

/// The per-second timeline.
pub fn timeline_csv(r: &Report) -> String {
    let mut s = String::from(
        "second,level,ok,errors,p50_ms,p90_ms,p99_ms,max_ms,nodes,positions,queue_depth,active_searches\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for t in &r.timeline {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{:.3},{:.3},{:.3},{},{},{},{}",
            t.second,
            t.level,
            t.ok,
            t.errors,
            t.p50_ms,
            t.p90_ms,
            t.p99_ms,
            t.max_ms,
            t.nodes,
            t.positions,
            opt(t.queue_depth),
            opt(t.active_searches)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(si(2_500_000.0), "2.50 M");
        assert_eq!(si(45_000.0), "45 k");
        assert_eq!(ms(0.1234), "0.12");
        assert_eq!(ms(123.4), "123");
    }

    #[test]
    fn server_side_counts_what_moved() {
        let before = crate::prom::parse(
            "# TYPE chess_grpc_server_handled counter\n\
             chess_grpc_server_handled_total{service=\"search\",method=\"/a\",code=\"Ok\"} 5\n\
             # TYPE chess_search_nodes counter\n\
             chess_search_nodes_total{service=\"search\"} 1000\n\
             # TYPE chess_grpc_server_handling_seconds histogram\n\
             chess_grpc_server_handling_seconds_sum{service=\"search\",method=\"/a\"} 1\n\
             chess_grpc_server_handling_seconds_count{service=\"search\",method=\"/a\"} 5\n",
        )
        .unwrap();
        let after = crate::prom::parse(
            "# TYPE chess_grpc_server_handled counter\n\
             chess_grpc_server_handled_total{service=\"search\",method=\"/a\",code=\"Ok\"} 15\n\
             chess_grpc_server_handled_total{service=\"search\",method=\"/a\",code=\"ResourceExhausted\"} 2\n\
             # TYPE chess_search_nodes counter\n\
             chess_search_nodes_total{service=\"search\"} 3000\n\
             # TYPE chess_search_queue_depth gauge\n\
             chess_search_queue_depth{service=\"search\"} 0\n\
             # TYPE chess_grpc_server_handling_seconds histogram\n\
             chess_grpc_server_handling_seconds_sum{service=\"search\",method=\"/a\"} 2\n\
             chess_grpc_server_handling_seconds_count{service=\"search\",method=\"/a\"} 15\n",
        )
        .unwrap();
        let during = [after.clone()];
        let r = server_result(
            &ServerReads {
                url: "u",
                before: Some(&before),
                after: Some(&after),
                during: &during,
                error: None,
            },
            2.0,
        );
        assert_eq!(r.service, "search");
        assert_eq!(r.calls.len(), 2);
        assert_eq!(r.calls[0].code, "OK");
        assert_eq!(r.calls[0].count, 10);
        assert_eq!(r.calls[1].code, "RESOURCE_EXHAUSTED");
        let search = r.search.unwrap();
        assert_eq!(search.nodes, 2000);
        assert_eq!(search.nodes_per_s, 1000.0);
        assert_eq!(r.handling[0].mean_ms, 100.0);
        assert_eq!(r.gauges.len(), 1);
    }
}
