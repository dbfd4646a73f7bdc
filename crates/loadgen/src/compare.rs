//! `chess-loadgen compare OLD NEW`: two JSON reports side by side, and a verdict on the chosen
//! figures (exit 1 when one got worse by more than the threshold).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use crate::failure::Failure;

/// The flags of `chess-loadgen compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline JSON report.
    pub old: PathBuf,
    /// The JSON report to judge.
    pub new: PathBuf,
    /// The figure to judge (repeat for several): p50, p90, p99, p999, max, mean, min, rate,
    /// ok-rate, error-rate, errors, nps, positions-per-s.
    #[arg(long, value_name = "FIGURE", default_value = "p99", value_parser = parse_figure)]
    pub metric: Vec<Figure>,
    /// How much worse the figure may get: a percentage of the old value (10%).
    #[arg(long, value_name = "PERCENT", default_value = "10%", value_parser = parse_threshold)]
    pub threshold: f64,
    /// Judge one method's figures (e.g. /chess.v1.AnalysisService/Analyze) instead of the
    /// whole run's.
    #[arg(long, value_name = "PATH")]
    pub method: Option<String>,
}

/// A figure of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Min,
    Mean,
    P50,
    P90,
    P99,
    P999,
    Max,
    Rate,
    OkRate,
    ErrorRate,
    Errors,
    Nps,
    PositionsPerS,
}

const ALL: [Figure; 13] = [
    Figure::Rate,
    Figure::OkRate,
    Figure::Errors,
    Figure::ErrorRate,
    Figure::Min,
    Figure::Mean,
    Figure::P50,
    Figure::P90,
    Figure::P99,
    Figure::P999,
    Figure::Max,
    Figure::Nps,
    Figure::PositionsPerS,
];

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Min => "min",
            Figure::Mean => "mean",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P99 => "p99",
            Figure::P999 => "p999",
            Figure::Max => "max",
            Figure::Rate => "rate",
            Figure::OkRate => "ok-rate",
            Figure::ErrorRate => "error-rate",
            Figure::Errors => "errors",
            Figure::Nps => "nps",
            Figure::PositionsPerS => "positions-per-s",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Figure::Rate | Figure::OkRate => "req/s",
            Figure::ErrorRate => "%",
            Figure::Errors => "",
            Figure::Nps => "nodes/s",
            Figure::PositionsPerS => "pos/s",
            _ => "ms",
        }
    }

    /// Whether a larger value is worse (latency, errors) or better (rates).
    fn higher_is_worse(self) -> bool {
        !matches!(
            self,
            Figure::Rate | Figure::OkRate | Figure::Nps | Figure::PositionsPerS
        )
    }

    /// The figure from a report's `result`, or from one method's entry.
    fn value(self, report: &Value, method: Option<&str>) -> Option<f64> {
        let scope = match method {
            None => report.get("result")?,
            Some(m) => report
                .get("methods")?
                .as_array()?
                .iter()
                .find(|e| e.get("method").and_then(Value::as_str) == Some(m))?,
        };
        let num = |v: &Value, path: &[&str]| -> Option<f64> {
            path.iter().try_fold(v, |v, k| v.get(*k))?.as_f64()
        };
        match self {
            Figure::Min => num(scope, &["latency_ms", "min"]),
            Figure::Mean => num(scope, &["latency_ms", "mean"]),
            Figure::P50 => num(scope, &["latency_ms", "p50"]),
            Figure::P90 => num(scope, &["latency_ms", "p90"]),
            Figure::P99 => num(scope, &["latency_ms", "p99"]),
            Figure::P999 => num(scope, &["latency_ms", "p999"]),
            Figure::Max => num(scope, &["latency_ms", "max"]),
            Figure::Rate => num(scope, &["rate"]),
            Figure::OkRate => num(scope, &["ok_rate"]).or_else(|| {
                // Methods carry no ok_rate: ok / requests of their rate.
                let (ok, n, rate) = (
                    num(scope, &["ok"])?,
                    num(scope, &["requests"])?,
                    num(scope, &["rate"])?,
                );
                Some(if n > 0.0 { rate * ok / n } else { 0.0 })
            }),
            Figure::ErrorRate => {
                let (e, n) = (num(scope, &["errors"])?, num(scope, &["requests"])?);
                Some(if n > 0.0 { e * 100.0 / n } else { 0.0 })
            }
            Figure::Errors => num(scope, &["errors"]),
            Figure::Nps => num(scope, &["engine", "nodes_per_s"]),
            Figure::PositionsPerS => num(scope, &["engine", "positions_per_s"]),
        }
    }
}

fn parse_figure(text: &str) -> Result<Figure, String> {
    let t = text.trim().to_ascii_lowercase().replace('_', "-");
    let t = match t.as_str() {
        "p99.9" => "p999",
        "rps" => "rate",
        "nodes-per-s" => "nps",
        other => other,
    };
    ALL.iter().copied().find(|f| f.name() == t).ok_or_else(|| {
        format!(
            "{text:?} is not a figure: {}",
            ALL.map(Figure::name).join(", ")
        )
    })
}

/// `10%` or `10` (percent of the old value).
fn parse_threshold(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches('%');
    let v: f64 = t
        .parse()
        .map_err(|_| format!("{text:?} is not a percentage (e.g. 10%)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{text:?}: the threshold must be 0% or more"));
    }
    Ok(v)
}

/// The change from `old` to `new` in percent of `old`, made positive when it is a change for
/// the worse; `None` when there is no base to compare with.
fn worsening(f: Figure, old: f64, new: f64) -> Option<f64> {
    if old == 0.0 {
        return match (f.higher_is_worse(), new > 0.0) {
            (true, true) => Some(f64::INFINITY),
            _ => Some(0.0),
        };
    }
    let change = (new - old) / old.abs() * 100.0;
    Some(if f.higher_is_worse() { change } else { -change })
}

/// Whether `f` regressed beyond `threshold` percent.
pub fn regressed(f: Figure, old: f64, new: f64, threshold: f64) -> bool {
    worsening(f, old, new).is_some_and(|w| w > threshold)
}

fn load(path: &Path) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{} is not a JSON report: {e}", path.display())))?;
    if value.get("tool").and_then(Value::as_str) != Some("chess-loadgen") {
        return Err(Failure::Usage(format!(
            "{} is not a chess-loadgen report (no \"tool\": \"chess-loadgen\")",
            path.display()
        )));
    }
    Ok(value)
}

fn config(v: &Value, key: &str) -> String {
    match v.get("config").and_then(|c| c.get(key)) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

pub fn main(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let old = load(&args.old)?;
    let new = load(&args.new)?;
    let method = args.method.as_deref();
    if let Some(m) = method {
        for (v, p) in [(&old, &args.old), (&new, &args.new)] {
            if Figure::Rate.value(v, Some(m)).is_none() {
                return Err(Failure::Usage(format!("{} has no method {m}", p.display())));
            }
        }
    }
    let scope = method.unwrap_or("whole run");
    println!(
        "old: {} ({})\nnew: {} ({})\nscope: {scope}",
        args.old.display(),
        config(&old, "scenario"),
        args.new.display(),
        config(&new, "scenario")
    );
    for key in [
        "target",
        "scenario",
        "model",
        "level",
        "nodes",
        "depth",
        "movetime_ms",
    ] {
        let (a, b) = (config(&old, key), config(&new, key));
        if a != b {
            println!("note: {key} differs: {a} -> {b}");
        }
    }
    println!(
        "{:<18} {:>14} {:>14} {:>10}",
        "figure", "old", "new", "change"
    );
    let mut failed = Vec::new();
    for f in ALL {
        let (Some(a), Some(b)) = (f.value(&old, method), f.value(&new, method)) else {
            continue;
        };
        let change = if a != 0.0 {
            format!("{:+.1}%", (b - a) / a.abs() * 100.0)
        } else if b == 0.0 {
            "0%".to_owned()
        } else {
            "new".to_owned()
        };
        let judged = args.metric.contains(&f);
        let verdict = if !judged {
            String::new()
        } else if regressed(f, a, b, args.threshold) {
            failed.push(f);
            format!("  REGRESSED (worse by more than {}%)", args.threshold)
        } else {
            format!("  ok (threshold {}%)", args.threshold)
        };
        let name = format!("{} {}", f.name(), f.unit());
        println!("{name:<18} {a:>14.3} {b:>14.3} {change:>10}{verdict}");
    }
    for f in &args.metric {
        if f.value(&old, method).is_none() || f.value(&new, method).is_none() {
            return Err(Failure::Usage(format!(
                "{} is missing from a report",
                f.name()
            )));
        }
    }
    if failed.is_empty() {
        println!("no regression");
        Ok(ExitCode::SUCCESS)
    } else {
        let names: Vec<&str> = failed.iter().map(|f| f.name()).collect();
        println!("regression: {}", names.join(", "));
        Ok(ExitCode::from(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_figures_and_thresholds() {
        assert_eq!(parse_figure("p99").unwrap(), Figure::P99);
        assert_eq!(parse_figure("P99.9").unwrap(), Figure::P999);
        assert_eq!(parse_figure("ok_rate").unwrap(), Figure::OkRate);
        assert!(parse_figure("p42").is_err());
        assert_eq!(parse_threshold("10%").unwrap(), 10.0);
        assert_eq!(parse_threshold("2.5").unwrap(), 2.5);
        assert!(parse_threshold("-1%").is_err());
        assert!(parse_threshold("ten").is_err());
    }

    #[test]
    fn direction_matters() {
        // Latency up 20%: a regression at 10%, not at 25%.
        assert!(regressed(Figure::P99, 10.0, 12.0, 10.0));
        assert!(!regressed(Figure::P99, 10.0, 12.0, 25.0));
        // Latency down: never.
        assert!(!regressed(Figure::P99, 10.0, 5.0, 0.0));
        // Throughput down 20%: a regression; up: never.
        assert!(regressed(Figure::Rate, 100.0, 80.0, 10.0));
        assert!(!regressed(Figure::Rate, 100.0, 180.0, 10.0));
        // Errors from none to some.
        assert!(regressed(Figure::Errors, 0.0, 1.0, 1000.0));
        assert!(!regressed(Figure::Errors, 0.0, 0.0, 0.0));
    }

    #[test]
    fn reads_figures_from_a_report() {
        let report: Value = serde_json::from_str(
            r#"{"tool":"chess-loadgen","result":{"rate":50.0,"ok_rate":45.0,"requests":100,"errors":10,
               "latency_ms":{"p99":12.5},"engine":{"nodes_per_s":1e6}},
               "methods":[{"method":"/a","rate":20.0,"requests":10,"ok":5,"errors":5,"latency_ms":{"p99":3.0}}]}"#,
        )
        .unwrap();
        assert_eq!(Figure::P99.value(&report, None), Some(12.5));
        assert_eq!(Figure::ErrorRate.value(&report, None), Some(10.0));
        assert_eq!(Figure::Nps.value(&report, None), Some(1e6));
        assert_eq!(Figure::P99.value(&report, Some("/a")), Some(3.0));
        assert_eq!(Figure::OkRate.value(&report, Some("/a")), Some(10.0));
        assert_eq!(Figure::P99.value(&report, Some("/b")), None);
    }
}
