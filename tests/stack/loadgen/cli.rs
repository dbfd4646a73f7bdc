//! chess-loadgen's command line: compare's exit status, targets outside loopback and bad
//! flags refused clearly, and the report reader.

use std::path::Path;
use std::time::{Duration, Instant};

use chess_integration_tests::loadgen::{Fields, Json, loadgen, parse_json, text};
use chess_integration_tests::{Stack, TempDir, spawn};

fn write_report(dir: &Path, name: &str, p99: f64, rate: f64, errors: u64) -> String {
    let path = dir.join(name);
    let text = format!(
        r#"{{"tool":"chess-loadgen","format":1,"config":{{"scenario":"analyze","target":"t"}},
            "result":{{"requests":100,"errors":{errors},"rate":{rate},"ok_rate":{rate},
            "latency_ms":{{"min":1.0,"mean":5.0,"p50":4.0,"p90":8.0,"p99":{p99},"p999":{p99},"max":{p99}}},
            "engine":{{"nodes_per_s":1000.0,"positions_per_s":10.0}}}},"methods":[]}}"#
    );
    std::fs::write(&path, text).expect("write report");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn compare_exits_non_zero_only_on_a_regression() {
    let dir = TempDir::new("loadgen-compare");
    let old = write_report(&dir.0, "old.json", 10.0, 100.0, 0);
    let slower = write_report(&dir.0, "slower.json", 12.0, 100.0, 0);
    let fewer = write_report(&dir.0, "fewer.json", 10.0, 80.0, 0);
    let failing = write_report(&dir.0, "failing.json", 10.0, 100.0, 3);

    let cmp = |a: &str, b: &str, extra: &[&str]| {
        let mut args = vec!["compare", a, b];
        args.extend_from_slice(extra);
        loadgen(&args)
    };
    // p99 up 20%: a regression at 10%, not at 25%.
    let o = cmp(&old, &slower, &["--metric", "p99", "--threshold", "10%"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("REGRESSED"));
    let o = cmp(&old, &slower, &["--metric", "p99", "--threshold", "25%"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Faster is never a regression.
    let o = cmp(&slower, &old, &["--metric", "p99", "--threshold", "0%"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Throughput down 20%.
    let o = cmp(&old, &fewer, &["--metric", "rate", "--threshold", "10%"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = cmp(&old, &fewer, &["--metric", "p99"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Errors where there were none, judged with another figure alongside.
    let o = cmp(&old, &failing, &["--metric", "p99", "--metric", "errors"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // A real report against itself.
    let stack = Stack::start();
    let report = dir.0.join("real.json");
    let o = loadgen(&[
        "run",
        "-q",
        "--target",
        &stack.gateway.url(),
        "--scenario",
        "rules",
        "--requests",
        "20",
        "--json",
        report.to_str().expect("path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let real = report.to_str().expect("path");
    let o = cmp(real, real, &["--metric", "p99", "--threshold", "0%"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = cmp(
        real,
        real,
        &[
            "--method",
            "/chess.v1.RulesService/LegalMoves",
            "--metric",
            "p50",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Not a report, an unknown figure: usage errors.
    let o = cmp(real, "/nonexistent.json", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = cmp(real, real, &["--metric", "p42"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn targets_outside_loopback_and_bad_flags_are_refused_clearly() {
    let started = Instant::now();
    // Refused before any connection is tried (TEST-NET-1 address, never reached).
    let o = loadgen(&[
        "run",
        "--target",
        "http://192.0.2.1:50051",
        "--requests",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("outside loopback") && err.contains("--allow-remote"),
        "{err}"
    );
    let o = loadgen(&[
        "run",
        "--target",
        "http://127.0.0.1:1",
        "--metrics",
        "http://192.0.2.1:9000/metrics",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(started.elapsed() < Duration::from_secs(5));

    // Nothing listening: a clear failure, exit 1, quickly.
    let o = loadgen(&["run", "--target", "http://127.0.0.1:1", "--requests", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach the target"));

    // Bad flags: clap's usage errors.
    for args in [
        &["run", "--clients", "0"][..],
        &["run", "--clients", "2", "--rate", "5"],
        &["run", "--rate", "fast"],
        &["run", "--duration", "soon"],
        &["run", "--scenario", "chess"],
        &["run", "--mix", "analyze=x"],
        &["run", "--multipv", "17"],
        &["run", "--depth", "65"],
        &["run", "--elo", "100"],
        &["run", "--target", "https://127.0.0.1:1"],
    ] {
        let o = loadgen(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(!o.stderr.is_empty());
    }

    // A service that lacks what the scenario needs.
    let dir = TempDir::new("loadgen-refuse");
    let search = spawn::search(&dir, &["--workers", "1", "--hash-mb", "4"], &[]);
    let o = loadgen(&["run", "--target", &search.url(), "--scenario", "rules"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does not serve chess.v1.RulesService"),
        "{err}"
    );
}

#[test]
fn the_json_reader_reads_reports() {
    let j =
        parse_json(r#"{"a":[1,2.5e1,-3],"b":{"c":"x\"\u00e9"},"d":true,"e":null}"#).expect("json");
    assert_eq!(j.at("a").arr()[1].as_num(), 25.0);
    assert_eq!(j.at("b").at("c").str(), "x\"é");
    assert_eq!(j.at("d"), &Json::Bool(true));
    assert_eq!(j.at("missing"), &Json::Null);
    assert_eq!(j.num("missing"), 0.0);
    assert!(parse_json("{").is_err());
}
