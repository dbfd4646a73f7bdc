//! A load test's report agrees with what the servers counted: every scenario, every load
//! shape (open and closed model, steps and ramps), warm-up left out, the other outputs.

use chess_integration_tests::Stack;
use chess_integration_tests::TempDir;
use chess_integration_tests::loadgen::{
    Fields, Json, assert_counts_agree, assert_percentiles_ordered, loadgen, run_report, text,
};
use chess_integration_tests::metrics::{delta, handled_all, metric};

#[test]
fn every_scenario_agrees_with_what_the_gateway_counted() {
    let stack = Stack::start();
    let out = TempDir::new("loadgen-scenarios");
    let target = stack.gateway.url();
    let gateway_metrics = format!("http://{}/metrics", stack.gateway.metrics);
    let search_metrics = stack.search.metrics.to_string();
    for scenario in [
        "analyze",
        "analyze-stream",
        "evaluate",
        "game",
        "moves",
        "rules",
        "mix",
    ] {
        let before = handled_all(&stack.gateway.scrape_metrics());
        let search_before = stack.search.scrape_metrics();
        let report = run_report(
            &out.0,
            scenario,
            &[
                "--target",
                &target,
                "--scenario",
                scenario,
                "--clients",
                "2",
                "--requests",
                "12",
                "--duration",
                "60s",
                "--nodes",
                "3000",
                "--multipv",
                "2",
                "--batch",
                "8",
                "--connections",
                "2",
                "--metrics",
                &gateway_metrics,
                "--metrics",
                &search_metrics,
            ],
        );
        let counted = delta(&before, &handled_all(&stack.gateway.scrape_metrics()));
        let search_after = stack.search.scrape_metrics();
        let result = report.at("result");
        assert_eq!(result.num("requests"), 12.0, "{scenario}");
        assert_eq!(result.num("errors"), 0.0, "{scenario}: {result:?}");
        assert_eq!(result.at("stopped_by").str(), "requests");
        assert_percentiles_ordered(result.at("latency_ms"));
        assert_counts_agree(&report, &counted, "gateway");
        // Engine figures agree with the search service's counters.
        let nodes = result.at("engine").num("nodes");
        let server_nodes = metric(&search_after, "chess_search_nodes_total", &[])
            - metric(&search_before, "chess_search_nodes_total", &[]);
        let evaluations = metric(&search_after, "chess_search_static_evaluations_total", &[])
            - metric(&search_before, "chess_search_static_evaluations_total", &[]);
        match scenario {
            "analyze" | "analyze-stream" => {
                assert_eq!(nodes, server_nodes, "{scenario}");
                assert!(nodes >= 12.0 * 1000.0, "{scenario}: {nodes} nodes");
                assert_eq!(result.at("engine").num("positions"), 12.0);
            }
            "evaluate" => {
                assert_eq!(result.at("engine").num("positions"), 12.0 * 8.0);
                assert_eq!(evaluations, 96.0);
            }
            "game" => {
                assert_eq!(nodes, server_nodes, "{scenario}");
                let names: Vec<&str> = report
                    .at("methods")
                    .arr()
                    .iter()
                    .map(|m| m.at("method").str())
                    .collect();
                for m in [
                    "/chess.v1.GameService/CreateGame",
                    "/chess.v1.GameService/MakeMove",
                    "/chess.v1.GatewayService/EngineMove",
                ] {
                    assert!(names.contains(&m), "{m} not in {names:?}");
                }
            }
            "moves" => {
                let names: Vec<&str> = report
                    .at("methods")
                    .arr()
                    .iter()
                    .map(|m| m.at("method").str())
                    .collect();
                assert_eq!(
                    names,
                    [
                        "/chess.v1.GameService/CreateGame",
                        "/chess.v1.GameService/MakeMove"
                    ]
                );
                assert_eq!((nodes, server_nodes), (0.0, 0.0));
            }
            "rules" => {
                assert_eq!(report.at("methods").arr().len(), 4);
                assert_eq!(nodes, 0.0);
            }
            _ => {
                assert!(report.at("methods").arr().len() >= 3);
                assert_eq!(nodes, server_nodes, "{scenario}");
            }
        }
        // The report's search section read the same counters.
        let search_side = report
            .at("server")
            .arr()
            .iter()
            .find(|s| s.at("service").str() == "search")
            .expect("the search service's section")
            .at("search");
        assert_eq!(search_side.num("nodes"), server_nodes, "{scenario}");
    }

    // Straight to the search service: the same scenario, counted there.
    let before = handled_all(&stack.search.scrape_metrics());
    let report = run_report(
        &out.0,
        "direct",
        &[
            "--target",
            &stack.search.url(),
            "--scenario",
            "analyze",
            "--requests",
            "5",
            "--depth",
            "4",
            "--metrics",
            &search_metrics,
        ],
    );
    let counted = delta(&before, &handled_all(&stack.search.scrape_metrics()));
    assert_counts_agree(&report, &counted, "search");
    assert_eq!(report.at("config").num("depth"), 4.0);

    // The moves scenario straight to the rules service (it needs no engine).
    let rules_metrics = format!("http://{}/metrics", stack.rules.metrics);
    let before = handled_all(&stack.rules.scrape_metrics());
    let report = run_report(
        &out.0,
        "direct-moves",
        &[
            "--target",
            &stack.rules.url(),
            "--scenario",
            "moves",
            "--clients",
            "2",
            "--requests",
            "20",
            "--game-plies",
            "6",
            "--metrics",
            &rules_metrics,
        ],
    );
    let counted = delta(&before, &handled_all(&stack.rules.scrape_metrics()));
    assert_counts_agree(&report, &counted, "rules");
    assert_eq!(report.at("result").num("errors"), 0.0, "{report:?}");
}

#[test]
fn load_shapes_send_what_they_promise_and_warm_up_is_not_counted() {
    let stack = Stack::start();
    let out = TempDir::new("loadgen-shapes");
    let target = stack.gateway.url();
    let count = |report: &Json| report.at("result").num("requests") as u64;

    // Open model, two steps: 10/s then 20/s for a second each is 30 sends exactly, and the
    // warm-up before it shows in neither the report nor the gateway's count.
    let before = handled_all(&stack.gateway.scrape_metrics());
    let report = run_report(
        &out.0,
        "open-steps",
        &[
            "--target",
            &target,
            "--scenario",
            "rules",
            "--rate",
            "10,20",
            "--step-duration",
            "1s",
            "--warmup",
            "500ms",
            "--metrics",
            &stack.gateway.metrics.to_string(),
        ],
    );
    let counted = delta(&before, &handled_all(&stack.gateway.scrape_metrics()));
    assert_eq!(count(&report), 30);
    // The report read the gateway's metrics after the warm-up had drained: its server counts
    // are the measured calls only, while the gateway saw both.
    let warmup = report.at("warmup").num("requests") as u64;
    assert!(warmup >= 1, "{:?}", report.at("warmup"));
    // (Besides the health check chess-loadgen makes before it starts.)
    let chess_calls: u64 = counted
        .iter()
        .filter(|((method, _), _)| method.starts_with("/chess.v1."))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(chess_calls, 30 + warmup, "{counted:?}");
    for m in report.at("methods").arr() {
        assert_eq!(
            m.num("requests"),
            m.at("server_counts").num("gateway"),
            "{m:?}"
        );
    }
    assert_eq!(report.at("config").at("model").str(), "open");
    let stages = report.at("stages").arr();
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0].num("requests"), 10.0);
    assert_eq!(stages[1].num("requests"), 20.0);
    assert_eq!(stages[1].num("level"), 20.0);
    assert_percentiles_ordered(report.at("result").at("latency_ms"));
    // Coordinated-omission correction: latency from the intended send time is never below
    // the time from the actual send.
    let result = report.at("result");
    assert!(result.at("latency_ms").num("max") >= result.at("service_time_ms").num("max"));

    // Open model, a ramp from 0 to 20/s over two seconds: 20 sends, with a request cap that
    // stops it earlier.
    let ramp = run_report(
        &out.0,
        "open-ramp",
        &[
            "--target",
            &target,
            "--scenario",
            "rules",
            "--rate",
            "0..20",
            "--duration",
            "2s",
        ],
    );
    assert_eq!(count(&ramp), 20);
    let capped = run_report(
        &out.0,
        "open-capped",
        &[
            "--target",
            &target,
            "--scenario",
            "rules",
            "--rate",
            "50",
            "--duration",
            "10s",
            "--requests",
            "7",
        ],
    );
    assert_eq!(count(&capped), 7);
    assert_eq!(capped.at("result").at("stopped_by").str(), "requests");

    // Closed model: steps of clients and a ramp, bounded by time; several connections.
    let before = handled_all(&stack.gateway.scrape_metrics());
    let steps = run_report(
        &out.0,
        "closed-steps",
        &[
            "--target",
            &target,
            "--scenario",
            "evaluate",
            "--clients",
            "1,3",
            "--step-duration",
            "700ms",
            "--connections",
            "3",
            "--batch",
            "4",
            "--metrics",
            &stack.gateway.metrics.to_string(),
        ],
    );
    let counted = delta(&before, &handled_all(&stack.gateway.scrape_metrics()));
    assert_counts_agree(&steps, &counted, "gateway");
    assert_eq!(steps.at("result").at("stopped_by").str(), "duration");
    let stages = steps.at("stages").arr();
    assert_eq!(stages.len(), 2);
    assert!(stages[0].num("requests") > 0.0 && stages[1].num("requests") > 0.0);
    let wall = steps.at("result").num("wall_s");
    assert!((1.3..10.0).contains(&wall), "{wall}");
    let timeline = steps.at("timeline").arr();
    assert!(!timeline.is_empty());
    let per_second: f64 = timeline.iter().map(|s| s.num("ok") + s.num("errors")).sum();
    assert_eq!(per_second, steps.at("result").num("requests"));

    let ramp = run_report(
        &out.0,
        "closed-ramp",
        &[
            "--target",
            &target,
            "--scenario",
            "rules",
            "--clients",
            "1..3",
            "--duration",
            "1s",
        ],
    );
    assert!(count(&ramp) > 0);
    assert_eq!(ramp.at("config").at("level").str(), "1..3");

    // The other outputs: CSV summary and timeline, and the SVG chart.
    let csv = out.0.join("r.csv");
    let timeline_csv = out.0.join("t.csv");
    let svg = out.0.join("r.svg");
    let o = loadgen(&[
        "run",
        "-q",
        "--target",
        &target,
        "--scenario",
        "analyze",
        "--nodes",
        "2000",
        "--requests",
        "4",
        "--csv",
        csv.to_str().expect("path"),
        "--timeline-csv",
        timeline_csv.to_str().expect("path"),
        "--svg",
        svg.to_str().expect("path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("requests      4 in"), "{summary}");
    let csv = std::fs::read_to_string(csv).expect("csv");
    assert!(csv.starts_with("scope,name,level,requests"), "{csv}");
    assert!(csv.contains("\nrun,analyze,1,4,4,0,"), "{csv}");
    assert!(
        csv.contains("\nmethod,/chess.v1.AnalysisService/Analyze,,4,4,0,"),
        "{csv}"
    );
    let t = std::fs::read_to_string(timeline_csv).expect("timeline csv");
    assert!(t.starts_with("second,level,ok,errors"), "{t}");
    let svg = std::fs::read_to_string(svg).expect("svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<polyline") || svg.contains("<circle"));
}
