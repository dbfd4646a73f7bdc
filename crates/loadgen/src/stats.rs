//! What the client saw: latency histograms (HdrHistogram, microseconds, 3 significant digits)
//! for the whole run, each method and each step, status codes, engine figures, and a
//! per-second timeline.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use tonic::Code;

use crate::refusal::Refusals;
use crate::workload::CallOutcome;

/// A send this far behind its intended time is late: well past the timer's 1 ms tick.
const LATE: Duration = Duration::from_millis(2);

/// Highest latency recorded exactly: an hour, in microseconds (longer ones saturate).
const HIGHEST_US: u64 = 3_600_000_000;

fn histogram(digits: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, digits).expect("valid histogram bounds")
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HIGHEST_US)
}

/// The gRPC name of a status code: `OK`, `RESOURCE_EXHAUSTED`, ...
fn code_name(code: Code) -> String {
    upper_snake(&format!("{code:?}"))
}

/// `ResourceExhausted` -> `RESOURCE_EXHAUSTED` (also how the services' metrics label codes).
pub fn upper_snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Latency figures in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Latency {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub stdev: f64,
}

impl Latency {
    pub fn of(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Latency {
            count: h.len(),
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            // The highest equivalent value: max is never below p99.9 after bucketing.
            max: ms(h.max()),
            stdev: h.stdev() / 1000.0,
        }
    }
}

/// Counts and latencies of a set of calls.
#[derive(Clone, Debug)]
pub struct Tally {
    /// Successful calls, from the intended send time (open model) or the send (closed).
    pub ok: Histogram<u64>,
    /// Failed calls.
    pub failed: Histogram<u64>,
    /// Successful calls from the moment they were actually sent (differs from `ok` only when
    /// the open model sent late).
    pub service: Histogram<u64>,
    pub codes: BTreeMap<String, u64>,
    /// First message of each error code.
    pub samples: BTreeMap<String, String>,
    pub nodes: u64,
    pub positions: u64,
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            ok: histogram(3),
            failed: histogram(3),
            service: histogram(3),
            codes: BTreeMap::new(),
            samples: BTreeMap::new(),
            nodes: 0,
            positions: 0,
        }
    }

    pub fn requests(&self) -> u64 {
        self.codes.values().sum()
    }

    pub fn errors(&self) -> u64 {
        self.requests() - self.codes.get("OK").copied().unwrap_or(0)
    }

    fn add(&mut self, o: &CallOutcome, latency: Duration, service: Duration) {
        let name = code_name(o.code);
        *self.codes.entry(name.clone()).or_default() += 1;
        if o.code == Code::Ok {
            let _ = self.ok.record(micros(latency));
            let _ = self.service.record(micros(service));
            self.nodes += o.nodes;
            self.positions += o.positions;
        } else {
            let _ = self.failed.record(micros(latency));
            self.samples
                .entry(name)
                .or_insert_with(|| o.message.clone());
        }
    }
}

/// One second of the measured run (by completion time).
#[derive(Clone, Debug)]
pub struct Second {
    pub ok: u64,
    pub errors: u64,
    pub latency: Histogram<u64>,
    pub nodes: u64,
    pub positions: u64,
}

impl Second {
    fn new() -> Second {
        Second {
            ok: 0,
            errors: 0,
            // Two digits are plenty for a chart and keep a long timeline small.
            latency: histogram(2),
            nodes: 0,
            positions: 0,
        }
    }
}

/// Everything recorded during one phase (warm-up or the measured run).
#[derive(Debug)]
pub struct Recorder {
    pub total: Tally,
    pub methods: BTreeMap<&'static str, Tally>,
    pub stages: Vec<Tally>,
    pub seconds: Vec<Second>,
    /// Open model: sends more than [`LATE`] after their intended time, and every send's lag.
    pub late_sends: u64,
    pub lag: Histogram<u64>,
    /// Calls started and not yet finished.
    pub in_flight: u64,
    /// Calls refused with RESOURCE_EXHAUSTED, by what refused them.
    pub refusals: Refusals,
}

impl Recorder {
    pub fn new(stages: usize) -> Recorder {
        Recorder {
            total: Tally::new(),
            methods: BTreeMap::new(),
            stages: (0..stages.max(1)).map(|_| Tally::new()).collect(),
            seconds: Vec::new(),
            late_sends: 0,
            lag: histogram(2),
            in_flight: 0,
            refusals: Refusals::default(),
        }
    }

    pub fn started(&mut self, lag: Duration) {
        self.in_flight += 1;
        if lag > LATE {
            self.late_sends += 1;
        }
        let _ = self.lag.record(micros(lag));
    }

    /// A finished call: `latency` from its intended send, `service` from its actual send,
    /// `done_at` its completion counted from the phase start, `stage` its step.
    pub fn finished(
        &mut self,
        o: &CallOutcome,
        latency: Duration,
        service: Duration,
        done_at: Duration,
        stage: usize,
    ) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.total.add(o, latency, service);
        self.refusals.add(o.code, &o.message);
        self.methods
            .entry(o.method)
            .or_insert_with(Tally::new)
            .add(o, latency, service);
        let s = stage.min(self.stages.len() - 1);
        self.stages[s].add(o, latency, service);
        let second = done_at.as_secs() as usize;
        while self.seconds.len() <= second {
            self.seconds.push(Second::new());
        }
        let b = &mut self.seconds[second];
        if o.code == Code::Ok {
            b.ok += 1;
            let _ = b.latency.record(micros(latency));
            b.nodes += o.nodes;
            b.positions += o.positions;
        } else {
            b.errors += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(code: Code, nodes: u64) -> CallOutcome {
        CallOutcome {
            method: crate::workload::ANALYZE,
            code,
            message: "busy".to_owned(),
            nodes,
            positions: 1,
        }
    }

    #[test]
    fn code_names_match_grpc() {
        assert_eq!(code_name(Code::Ok), "OK");
        assert_eq!(code_name(Code::ResourceExhausted), "RESOURCE_EXHAUSTED");
        assert_eq!(upper_snake("DeadlineExceeded"), "DEADLINE_EXCEEDED");
    }

    #[test]
    fn records_and_orders_percentiles() {
        let mut r = Recorder::new(1);
        for ms in 1..=1000u64 {
            r.started(Duration::ZERO);
            let d = Duration::from_millis(ms);
            r.finished(&outcome(Code::Ok, 10), d, d, d, 0);
        }
        r.started(Duration::from_millis(5));
        assert_eq!(r.lag.len(), 1001);
        r.finished(
            &outcome(Code::ResourceExhausted, 0),
            Duration::from_millis(1),
            Duration::from_millis(1),
            Duration::from_millis(2500),
            0,
        );
        assert_eq!(r.in_flight, 0);
        assert_eq!(r.late_sends, 1);
        assert_eq!(r.total.requests(), 1001);
        assert_eq!(r.total.errors(), 1);
        assert_eq!(r.total.nodes, 10_000);
        assert_eq!(r.total.samples["RESOURCE_EXHAUSTED"], "busy");
        let l = Latency::of(&r.total.ok);
        assert_eq!(l.count, 1000);
        assert!(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999);
        assert!(l.p999 <= l.max);
        assert!((l.p50 - 500.0).abs() < 1.0, "{l:?}");
        assert!((l.p99 - 990.0).abs() < 1.0, "{l:?}");
        assert!((l.mean - 500.5).abs() < 0.5, "{l:?}");
        // Seconds 0 and 1 hold the successes, second 2 the error.
        assert_eq!(r.seconds.len(), 3);
        assert_eq!(r.seconds[0].ok + r.seconds[1].ok, 1000);
        assert_eq!(r.seconds[2].errors, 1);
    }
}
