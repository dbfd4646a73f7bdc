//! Reading a service's Prometheus page, and waiting for what it says.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The samples of metric `name` (lines `name{labels} value` or `name value`) whose line holds
/// every text in `with` (label texts such as `method="/chess.v1.X/Y"`), summed; 0 when none.
pub fn metric(page: &str, name: &str, with: &[&str]) -> f64 {
    page.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| with.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Calls by (method, code), from `chess_grpc_server_handled_total`.
pub type Handled = BTreeMap<(String, String), u64>;

/// All calls the service counted, by method and code.
pub fn handled_all(page: &str) -> Handled {
    let mut out = BTreeMap::new();
    for line in page
        .lines()
        .filter(|l| l.starts_with("chess_grpc_server_handled_total{"))
    {
        let label = |k: &str| {
            let start = line.find(&format!("{k}=\""))? + k.len() + 2;
            let end = line[start..].find('"')? + start;
            Some(line[start..end].to_owned())
        };
        let value: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        if let (Some(m), Some(c)) = (label("method"), label("code")) {
            out.insert((m, c), value as u64);
        }
    }
    out
}

/// The calls counted between two readings of [`handled_all`] (those that grew).
pub fn delta(before: &Handled, after: &Handled) -> Handled {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// Waits (at most 10 s, looking every 10 ms) until `done` holds; panics with `what` if it
/// never does. A metric is recorded just after the response it counts, hence the wait.
pub fn eventually(what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// [`eventually`] inside a runtime (looking every 50 ms, without blocking its thread).
pub async fn eventually_async(what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
