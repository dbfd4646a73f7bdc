//! Refused calls in a report: overload (RESOURCE_EXHAUSTED on both sides, told apart from a
//! rate limit), a gateway's rate limit explained, and `chess up`, which sets none.

use chess_integration_tests::loadgen::{
    Fields, assert_counts_agree, assert_percentiles_ordered, loadgen, parse_json, run_report, text,
};
use chess_integration_tests::metrics::{delta, handled_all, metric};
use chess_integration_tests::up::Up;
use chess_integration_tests::{Stack, TempDir, spawn};

#[test]
fn overload_shows_as_resource_exhausted_on_both_sides() {
    // The stack's own search service has a queue; this one has one worker and none.
    let out = TempDir::new("loadgen-overload");
    let stack = Stack::start_with_search(&["--workers", "1", "--queue", "0", "--hash-mb", "16"]);
    let before = handled_all(&stack.gateway.scrape_metrics());
    let search_before = stack.search.scrape_metrics();
    // Four clients on one worker with no queue: while one search runs, the others are
    // refused at once.
    let report = run_report(
        &out.0,
        "overload",
        &[
            "--target",
            &stack.gateway.url(),
            "--scenario",
            "analyze",
            "--clients",
            "4",
            "--nodes",
            "200000",
            "--requests",
            "40",
            "--duration",
            "60s",
            "--metrics",
            &stack.gateway.metrics.to_string(),
            "--metrics",
            &stack.search.metrics.to_string(),
        ],
    );
    let search_after = stack.search.scrape_metrics();
    let counted = delta(&before, &handled_all(&stack.gateway.scrape_metrics()));
    let result = report.at("result");
    assert_eq!(result.num("requests"), 40.0);
    let codes = result.at("codes");
    let exhausted = codes.num("RESOURCE_EXHAUSTED");
    assert!(exhausted > 0.0, "no overload seen: {result:?}");
    assert_eq!(codes.num("OK") + exhausted, 40.0, "{codes:?}");
    let gateway_exhausted = counted
        .get(&(
            "/chess.v1.AnalysisService/Analyze".to_owned(),
            "ResourceExhausted".to_owned(),
        ))
        .copied()
        .unwrap_or(0);
    assert_eq!(exhausted as u64, gateway_exhausted);
    assert_counts_agree(&report, &counted, "gateway");
    let rejected = metric(&search_after, "chess_search_rejected_total", &[])
        - metric(&search_before, "chess_search_rejected_total", &[]);
    assert_eq!(rejected, exhausted);
    let side = report
        .at("server")
        .arr()
        .iter()
        .find(|s| s.at("service").str() == "search")
        .expect("the search service's section")
        .at("search");
    assert_eq!(side.num("rejected"), exhausted);
    assert!(
        result
            .at("error_samples")
            .at("RESOURCE_EXHAUSTED")
            .str()
            .contains("busy")
    );
    // The report tells this overload from a rate limit.
    let refused = result.at("refused").arr();
    assert_eq!(refused.len(), 1, "{result:?}");
    assert_eq!(refused[0].at("by").str(), "search-busy");
    assert_eq!(refused[0].num("count"), exhausted);
    assert_percentiles_ordered(result.at("latency_ms"));
    assert_percentiles_ordered(result.at("error_latency_ms"));
}

#[test]
fn a_rate_limited_run_says_why_and_how_to_lift_the_limit() {
    // A gateway with a small per-caller limit in front of the rules service: 100 sends in a
    // second against 5 a second (burst 5) are mostly refused, and the report must say that the
    // limit, not the servers, refused them.
    let out = TempDir::new("loadgen-rate-limited");
    let rules = spawn::rules(&out, &[], &[]);
    let gateway = spawn::gateway(
        &out,
        &rules.url(),
        &[],
        &["--rate-limit", "5", "--rate-burst", "5"],
        &[],
    );
    let json = out.0.join("limited.json");
    let o = loadgen(&[
        "run",
        "--quiet",
        "--target",
        &gateway.url(),
        "--scenario",
        "rules",
        "--rate",
        "100",
        "--duration",
        "1s",
        "--json",
        json.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report = parse_json(&std::fs::read_to_string(&json).expect("the JSON report"))
        .expect("a JSON report");
    let result = report.at("result");
    let exhausted = result.at("codes").num("RESOURCE_EXHAUSTED");
    assert!(exhausted >= 80.0, "{result:?}");
    let refused = result.at("refused").arr();
    assert_eq!(refused.len(), 1, "{result:?}");
    assert_eq!(refused[0].at("by").str(), "gateway-rate-limit");
    assert_eq!(refused[0].num("count"), exhausted);
    let explanation = refused[0].at("explanation").str();
    assert!(
        explanation.contains("5 requests per second (burst 5)")
            && explanation.contains("--rate-limit 0"),
        "{explanation}"
    );
    let summary = String::from_utf8_lossy(&o.stdout);
    let why = summary
        .lines()
        .skip_while(|l| !l.starts_with("why "))
        .take_while(|l| l.starts_with(' ') || l.starts_with("why "))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        why.contains("per-caller rate limit") && why.contains("--rate-limit 0"),
        "{summary}"
    );
}

#[test]
fn a_chess_up_stack_does_not_rate_limit_the_load_generator() {
    // The README's load test runs against `chess up`; 300 calls in a second is three times the
    // gateway's usual per-caller limit (100 a second, burst 100), and none may be refused.
    let up = Up::start(&[]);
    let out = TempDir::new("loadgen-up");
    let report = run_report(
        &out.0,
        "up",
        &[
            "--target",
            &format!("http://{}", up.gateway),
            "--scenario",
            "rules",
            "--rate",
            "300",
            "--duration",
            "1s",
        ],
    );
    let result = report.at("result");
    assert_eq!(result.num("requests"), 300.0, "{result:?}");
    assert_eq!(result.num("errors"), 0.0, "{result:?}");
    assert!(result.at("refused").arr().is_empty(), "{result:?}");
}
