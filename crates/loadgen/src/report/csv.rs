//! The CSV renderings: the summary (one row per scope) and the per-second timeline.

use std::fmt::Write as _;

use crate::stats::Latency;

use super::{Engine, Report};

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
