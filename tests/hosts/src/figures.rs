//! A scenario's figures from its history: calls ok / failed / unknown, availability and p99
//! latency during the fault, the longest stall a client task saw, the time to recover after
//! healing.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::history::{Call, History, Outcome};

/// When the fault held, on the client's clock.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub fault_ms: u64,
    pub heal_ms: u64,
    /// The whole service is expected down during the fault.
    pub outage: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct Figures {
    pub ok: usize,
    pub failed: usize,
    pub unknown: usize,
    /// Share of the calls made during the fault that succeeded.
    pub availability: f64,
    /// p99 latency of the calls made during the fault (ms).
    pub p99_fault_ms: u64,
    /// Longest time a client task went without a successful call (ms), and which task.
    pub stall_ms: u64,
    pub stall_worker: String,
    /// From healing to the last failure of a call made after it (ms); None: calls still failed
    /// at the end of the load.
    pub recovery_ms: Option<u64>,
}

/// The calls of the load itself (not the final reads).
fn load_calls(history: &History) -> impl Iterator<Item = &Call> {
    history
        .calls
        .iter()
        .filter(|c| c.worker != "final" && c.start_ms < history.load_ended_ms)
}

pub fn figures(history: &History, window: Window) -> Figures {
    let mut f = Figures::default();
    let mut during = Vec::new();
    let mut by_worker: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    for c in load_calls(history) {
        match c.outcome {
            Outcome::Ok => f.ok += 1,
            Outcome::Failed => f.failed += 1,
            Outcome::Unknown => f.unknown += 1,
        }
        if (window.fault_ms..window.heal_ms).contains(&c.start_ms) {
            during.push(c);
        }
        if c.worker != "flags" {
            by_worker.entry(&c.worker).or_default().push(c);
        }
    }
    let ok_during = during.iter().filter(|c| c.outcome == Outcome::Ok).count();
    f.availability = if during.is_empty() {
        0.0
    } else {
        ok_during as f64 / during.len() as f64
    };
    let mut latencies: Vec<u64> = during
        .iter()
        .map(|c| c.end_ms.saturating_sub(c.start_ms))
        .collect();
    latencies.sort_unstable();
    if !latencies.is_empty() {
        let i = ((latencies.len() as f64) * 0.99).ceil() as usize;
        f.p99_fault_ms = latencies[i.clamp(1, latencies.len()) - 1];
    }
    for (worker, calls) in &by_worker {
        let mut last_ok = history.started_ms;
        let mut longest = 0;
        let mut oks: Vec<u64> = calls
            .iter()
            .filter(|c| c.outcome == Outcome::Ok)
            .map(|c| c.end_ms)
            .collect();
        oks.sort_unstable();
        for t in oks.iter().copied().chain([history.load_ended_ms]) {
            longest = longest.max(t.saturating_sub(last_ok));
            last_ok = last_ok.max(t);
        }
        if longest > f.stall_ms {
            f.stall_ms = longest;
            f.stall_worker = (*worker).to_owned();
        }
    }
    // Recovery: the last failure among calls made after healing, unless calls still fail in
    // the load's last two seconds (not recovered).
    let after: Vec<&Call> = load_calls(history)
        .filter(|c| c.start_ms >= window.heal_ms && c.worker != "flags")
        .collect();
    let last_bad = after
        .iter()
        .filter(|c| c.outcome != Outcome::Ok)
        .map(|c| c.end_ms)
        .max();
    f.recovery_ms = match last_bad {
        None => Some(0),
        Some(t) if t + 2000 >= history.load_ended_ms => None,
        Some(t) => Some(t.saturating_sub(window.heal_ms)),
    };
    f
}
