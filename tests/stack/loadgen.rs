//! chess-loadgen against a real local stack: every scenario and load shape with small bounded
//! counts, its JSON report checked against what the services' own metrics counted, overload
//! seen as RESOURCE_EXHAUSTED, the compare mode's exit status, and the refusal of targets
//! outside loopback.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use chess_integration_tests::{Service, Stack, TempDir, bin};

/// Runs chess-loadgen with `args`; every run is bounded by its own flags, and this waits at
/// most two minutes.
fn loadgen(args: &[&str]) -> Output {
    let mut child = Command::new(bin("chess-loadgen"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
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

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a load test that must succeed and returns its JSON report.
fn run_report(dir: &Path, name: &str, args: &[&str]) -> Json {
    let path = dir.join(format!("{name}.json"));
    let path_text = path.to_str().expect("utf-8 path").to_owned();
    let mut all = vec!["run", "--quiet", "--json", &path_text];
    all.extend_from_slice(args);
    let out = loadgen(&all);
    assert!(out.status.success(), "{name}: {}", text(&out));
    let report = std::fs::read_to_string(&path).expect("the JSON report");
    parse_json(&report).unwrap_or_else(|e| panic!("{name}: bad JSON ({e}):\n{report}"))
}

// ---- the servers' side, read by the test itself ----

/// `name{labels} value` samples of a metrics page whose line starts with `name{` and carries
/// every `with` label text, summed.
fn metric_sum(page: &str, name: &str, with: &[&str]) -> f64 {
    page.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| with.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// All calls the service counted, by method and code.
fn handled_all(page: &str) -> BTreeMap<(String, String), u64> {
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

fn delta(
    before: &BTreeMap<(String, String), u64>,
    after: &BTreeMap<(String, String), u64>,
) -> BTreeMap<(String, String), u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

// ---- checks on a report ----

#[track_caller]
fn assert_percentiles_ordered(latency: &Json) {
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
fn assert_counts_agree(report: &Json, counted: &BTreeMap<(String, String), u64>, service: &str) {
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
        let server_nodes = metric_sum(&search_after, "chess_search_nodes_total", &[])
            - metric_sum(&search_before, "chess_search_nodes_total", &[]);
        let evaluations = metric_sum(&search_after, "chess_search_static_evaluations_total", &[])
            - metric_sum(&search_before, "chess_search_static_evaluations_total", &[]);
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

#[test]
fn overload_shows_as_resource_exhausted_on_both_sides() {
    // The stack's own search service has a queue; this one has one worker and none.
    let out = TempDir::new("loadgen-overload");
    let data = out.0.join("data");
    let rules = Service::start(
        "chess-rules-service",
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().expect("utf-8 path"),
        ],
        &[],
        &out.0,
    );
    let search = Service::start(
        "chess-search-service",
        &[
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--queue",
            "0",
            "--hash-mb",
            "16",
        ],
        &[],
        &out.0,
    );
    let gateway = Service::start(
        "chess-gateway",
        &[
            "--listen",
            "127.0.0.1:0",
            "--rules-addr",
            &rules.url(),
            "--search-addr",
            &search.url(),
            "--rate-limit",
            "0",
        ],
        &[],
        &out.0,
    );
    let stack = Stack {
        gateway,
        rules,
        search,
        dir: TempDir::new("loadgen-overload-stack"),
    };
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
    let rejected = metric_sum(&search_after, "chess_search_rejected_total", &[])
        - metric_sum(&search_before, "chess_search_rejected_total", &[]);
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
    let data = out.0.join("data");
    let rules = Service::start(
        "chess-rules-service",
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().expect("utf-8 path"),
        ],
        &[],
        &out.0,
    );
    let gateway = Service::start(
        "chess-gateway",
        &[
            "--listen",
            "127.0.0.1:0",
            "--rules-addr",
            &rules.url(),
            "--rate-limit",
            "5",
            "--rate-burst",
            "5",
        ],
        &[],
        &out.0,
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

/// A `chess up` child process on free loopback ports; killed when dropped.
struct Up {
    child: std::process::Child,
    /// The gateway's address.
    gateway: String,
}

impl Up {
    fn start(extra: &[&str]) -> Up {
        use std::io::BufRead as _;
        let mut args = vec![
            "up",
            "--memory",
            "--listen",
            "127.0.0.1:0",
            "--rules-listen",
            "127.0.0.1:0",
            "--search-listen",
            "127.0.0.1:0",
            "--search-workers",
            "1",
            "--search-hash-mb",
            "16",
        ];
        args.extend_from_slice(extra);
        let mut child = Command::new(bin("chess"))
            .args(&args)
            .env_remove("CHESS_GATEWAY_RATE_LIMIT")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chess up");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut up = Up {
            child,
            gateway: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chess up {args:?} was not ready within 90 s"));
            if let Some(rest) = line.strip_prefix("LISTENING service=gateway ") {
                up.gateway = rest
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("grpc="))
                    .expect("the gateway's address")
                    .to_owned();
            }
            if line == "chess up: ready" {
                break;
            }
        }
        assert!(!up.gateway.is_empty(), "no LISTENING line for the gateway");
        up
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let search = Service::start(
        "chess-search-service",
        &[
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--hash-mb",
            "4",
        ],
        &[],
        &dir.0,
    );
    let o = loadgen(&["run", "--target", &search.url(), "--scenario", "rules"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does not serve chess.v1.RulesService"),
        "{err}"
    );
}

// ---- reading the reports (serde_json, with 0 and "" for what a report leaves out) ----

type Json = serde_json::Value;

trait Fields {
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

fn parse_json(text: &str) -> Result<Json, serde_json::Error> {
    serde_json::from_str(text)
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
