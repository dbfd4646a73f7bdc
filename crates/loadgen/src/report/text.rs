//! The human summary printed at the end of a run.

use std::fmt::Write as _;

use crate::stats::Latency;

use super::Report;

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
fn thousands(n: u64) -> String {
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

/// `text` after `label`, wrapped at word boundaries to lines of about 100 characters, each
/// continuation line indented under the first.
fn paragraph(label: &str, text: &str) -> String {
    const WIDTH: usize = 100;
    let indent = " ".repeat(label.chars().count());
    let mut out = String::from(label);
    let mut column = out.chars().count();
    let mut first = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !first && column + 1 + len > WIDTH {
            out.push('\n');
            out.push_str(&indent);
            column = indent.len();
        } else if !first {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += len;
        first = false;
    }
    out.push('\n');
    out
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
        for refusal in &res.refused {
            let _ = write!(s, "{}", paragraph("why           ", &refusal.explanation));
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

    /// A run as the README's first load test met it against a rate-limited gateway: the
    /// summary says which limit refused the calls and how to lift it.
    #[test]
    fn a_rate_limited_run_says_why_and_how_to_lift_the_limit() {
        use std::collections::BTreeMap;
        use std::time::Duration;

        use tonic::Code;

        use crate::report::{Config, Inputs, WarmupResult, build};
        use crate::stats::Recorder;
        use crate::workload::CallOutcome;

        let refused = "rate limit exceeded: 100 requests per second (burst 100) allowed for \
                       this client address; retry in 9 ms";
        let mut rec = Recorder::new(1);
        for i in 0..1000u64 {
            let (code, message) = if i < 5 {
                (Code::Ok, "")
            } else {
                (Code::ResourceExhausted, refused)
            };
            let outcome = CallOutcome {
                method: crate::workload::ANALYZE,
                code,
                message: message.to_owned(),
                nodes: 0,
                positions: 0,
            };
            rec.started(Duration::ZERO);
            let d = Duration::from_millis(1);
            rec.finished(&outcome, d, d, d, 0);
        }
        let config = Config {
            target: "http://127.0.0.1:50051".to_owned(),
            scenario: "analyze",
            mix: BTreeMap::new(),
            model: "closed",
            level: "4".to_owned(),
            step_s: None,
            duration_s: 1.0,
            requests: None,
            warmup_s: 0.0,
            connections: 1,
            max_in_flight: None,
            timeout_s: 60.0,
            depth: 0,
            nodes: 1000,
            movetime_ms: 0,
            multipv: 1,
            batch: 64,
            game_plies: 40,
            elo: 0,
            positions: "built-in".to_owned(),
            position_count: 1,
            seed: 1,
            metrics: Vec::new(),
        };
        let report = build(
            &rec,
            Inputs {
                label: String::new(),
                started_unix_ms: 0,
                command: Vec::new(),
                config,
                wall_s: 1.0,
                stopped_by: "duration",
                unfinished: 0,
                stages: vec![(0.0, 1.0, 4.0)],
                level_at: Box::new(|_| 4.0),
                gauges_by_second: BTreeMap::new(),
                server: Vec::new(),
                warmup: WarmupResult::default(),
            },
        );
        let refusals = &report.result.refused;
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].by, "gateway-rate-limit");
        assert_eq!(refusals[0].count, 995);
        let text = summary(&report);
        // The explanation's words, from its label to the end of its paragraph.
        let why = text[text.find("\nwhy ").expect("a why paragraph")..]
            .split("\nmethods")
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            why.starts_with("why 995 of 1000 calls (99.5%) were refused by the gateway's per-caller rate limit (100 requests per second (burst 100)"),
            "{text}"
        );
        assert!(why.contains("--rate-limit 0"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 200), "{text}");

        // A run with no refusals says nothing of the kind.
        let mut rec = Recorder::new(1);
        let ok = CallOutcome {
            method: crate::workload::ANALYZE,
            code: Code::Ok,
            message: String::new(),
            nodes: 0,
            positions: 0,
        };
        rec.started(Duration::ZERO);
        rec.finished(
            &ok,
            Duration::from_millis(1),
            Duration::from_millis(1),
            Duration::ZERO,
            0,
        );
        assert!(rec.refusals.0.is_empty());
    }

    #[test]
    fn paragraphs_wrap_under_their_label() {
        let text = paragraph("why   ", &"word ".repeat(40));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 1);
        assert!(lines[0].starts_with("why   word"));
        assert!(lines[1..].iter().all(|l| l.starts_with("      word")));
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{text}");
        assert_eq!(text.split_whitespace().filter(|w| *w == "word").count(), 40);
    }
}
