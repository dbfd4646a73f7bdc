//! `chess-loadgen` as a child process, and its JSON reports read with serde_json (with 0 and
//! "" for what a report leaves out).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::bin;
use crate::metrics::Handled;

/// Runs chess-loadgen with `args`; every run is bounded by its own flags, and this waits at
/// most two minutes.
pub fn loadgen(args: &[&str]) -> Output {
    let mut child = Command::new(bin("chess-loadgen"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chess-loadgen");
    let started = Instant::now();
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chess-loadgen {args:?} ran for two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("chess-loadgen output")
}

/// A finished process's exit status, stdout and stderr, for a failure message.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a load test that must succeed, its JSON report written to `dir/<name>.json`, and
/// returns the report.
pub fn run_report(dir: &Path, name: &str, args: &[&str]) -> Json {
    let path = dir.join(format!("{name}.json"));
    let path_text = path.to_str().expect("utf-8 path").to_owned();
    let mut all = vec!["run", "--quiet", "--json", &path_text];
    all.extend_from_slice(args);
    let out = loadgen(&all);
    assert!(out.status.success(), "{name}: {}", text(&out));
    let report = std::fs::read_to_string(&path).expect("the JSON report");
    parse_json(&report).unwrap_or_else(|e| panic!("{name}: bad JSON ({e}):\n{report}"))
}

pub type Json = serde_json::Value;

/// A report's fields, with 0, "" and empty lists for what it leaves out.
pub trait Fields {
    /// A field; null when absent.
    fn at(&self, key: &str) -> &Json;
    fn as_num(&self) -> f64;
    /// A number field; 0 when absent.
    fn num(&self, key: &str) -> f64 {
        self.at(key).as_num()
    }
    fn str(&self) -> &str;
    fn arr(&self) -> &[Json];
    fn obj(&self) -> Vec<(&str, &Json)>;
}

impl Fields for Json {
    fn at(&self, key: &str) -> &Json {
        &self[key]
    }
    fn as_num(&self) -> f64 {
        self.as_f64().unwrap_or(0.0)
    }
    fn str(&self) -> &str {
        self.as_str().unwrap_or("")
    }
    fn arr(&self) -> &[Json] {
        self.as_array().map_or(&[], Vec::as_slice)
    }
    fn obj(&self) -> Vec<(&str, &Json)> {
        self.as_object()
            .map(|o| o.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default()
    }
}

pub fn parse_json(text: &str) -> Result<Json, serde_json::Error> {
    serde_json::from_str(text)
}

/// A report's latency percentiles are positive and in order, the mean between min and max.
#[track_caller]
pub fn assert_percentiles_ordered(latency: &Json) {
    let f = |k: &str| latency.num(k);
    let (min, p50, p90, p99, p999, max) =
        (f("min"), f("p50"), f("p90"), f("p99"), f("p999"), f("max"));
    assert!(
        min > 0.0 && min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max,
        "percentiles out of order: {latency:?}"
    );
    assert!(min <= f("mean") && f("mean") <= max, "{latency:?}");
}

/// Every method of the report: its client count equals the calls `service` counted for it
/// between `before` and `after` (all codes), and the report's own server section says the
/// same.
#[track_caller]
pub fn assert_counts_agree(report: &Json, counted: &Handled, service: &str) {
    let methods = report.at("methods").arr();
    assert!(!methods.is_empty(), "no methods in the report");
    let mut client_total = 0;
    for m in methods {
        let method = m.at("method").str();
        let requests = m.num("requests") as u64;
        client_total += requests;
        let server: u64 = counted
            .iter()
            .filter(|((meth, _), _)| meth == method)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            requests, server,
            "{method}: the client sent {requests}, the {service} counted {server}"
        );
        let reported = m.at("server_counts").num(service) as u64;
        assert_eq!(reported, server, "{method}: the report's own server count");
        // The client's codes match the server's, code by code.
        for (code, n) in m.at("codes").obj() {
            let server_code: u64 = counted
                .iter()
                .filter(|((meth, c), _)| {
                    meth == method && c.to_ascii_uppercase() == code.replace('_', "")
                })
                .map(|(_, n)| n)
                .sum();
            assert_eq!(n.as_num() as u64, server_code, "{method} {code}");
        }
    }
    assert_eq!(client_total, report.at("result").num("requests") as u64);
}
