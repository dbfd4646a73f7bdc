//! Building the report from what the recorder saw and what the servers' metrics showed.

use std::collections::BTreeMap;

use crate::prom::Page;
use crate::stats::{Latency, Recorder, Tally, upper_snake};

use super::{
    Config, Engine, FORMAT, GaugeSummary, Machine, MethodResult, Refusal, Report, RunResult,
    SearchSide, SecondResult, ServerCall, ServerHandling, ServerResult, StageResult, WarmupResult,
};

fn machine() -> Machine {
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
    }
}

fn engine(t: &Tally, secs: f64) -> Engine {
    Engine {
        nodes: t.nodes,
        nodes_per_s: per_s(t.nodes, secs),
        positions: t.positions,
        positions_per_s: per_s(t.positions, secs),
    }
}

fn per_s(n: u64, secs: f64) -> f64 {
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
        engine: engine(total, wall),
        refused: rec
            .refusals
            .0
            .iter()
            .map(|(refuser, (count, sample))| Refusal {
                by: refuser.name(),
                count: *count,
                explanation: refuser.explain(*count, requests, sample),
            })
            .collect(),
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
                engine: engine(t, wall),
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
                    engine: engine(t, secs),
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
        machine: machine(),
        config: inputs.config,
        result,
        methods,
        stages,
        timeline,
        server: inputs.server,
        warmup: inputs.warmup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
