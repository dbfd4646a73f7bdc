//! Hostile clients, kept as a test: a seeded stream of random and mutated requests to every
//! RPC of a real stack (rules service, two search replicas, gateway), sent as raw protobuf
//! bytes so that they can be anything a client can put on the wire: random fields and wire
//! types, long strings, boundary numbers, invalid UTF-8, truncated and garbled messages.
//!
//! Whatever arrives, the stack must answer like a service and stay one: no `INTERNAL` or
//! `UNKNOWN`, no `UNAVAILABLE` (every process is up, so that one would be caused by the
//! request), no call that outlives its deadline, response metadata under 8 KiB, every search
//! replica still in rotation afterwards, every gauge back to zero, and each process's memory
//! grown by a bounded amount.
//!
//! `CHESS_FUZZ_SEED` and `CHESS_FUZZ_REQUESTS` change the seed and the request count.

mod hostile;
mod schema;
mod send;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_integration_tests::games::{Games, game_after};
use chess_integration_tests::metrics::metric;
use chess_integration_tests::rng::Rng;
use chess_integration_tests::{Replicated, Service, runtime};
use chess_proto::v1::CreateGameRequest;
use chess_proto::v1::game_service_client::GameServiceClient;
use tonic::transport::Channel;

use hostile::Ctx;
use send::{Tally, Target, make_case, send};

/// Requests sent unless `CHESS_FUZZ_REQUESTS` says otherwise, and how many are in flight.
const REQUESTS: usize = 3000;
const CONCURRENCY: usize = 12;
/// gRPC's usual limit on the response metadata a client accepts.
const MAX_METADATA_BYTES: usize = 8 * 1024;
/// Memory a process may gain over the run (its caches and tables are allocated at start).
const MAX_RSS_GROWTH_KIB: u64 = 256 * 1024;
/// How long past its deadline a call may take before it counts as a hang.
const HANG_MARGIN: Duration = Duration::from_secs(10);

/// The gauges that count work in progress, by process: all must be zero when idle.
const IDLE_GAUGES: &[&str] = &[
    "chess_grpc_server_in_flight",
    "chess_gateway_watchers",
    "chess_game_watchers",
    "chess_search_queue_depth",
    "chess_search_active_searches",
];

fn busy_gauges(service: &Service) -> Vec<String> {
    let text = service.scrape_metrics();
    IDLE_GAUGES
        .iter()
        .filter_map(|g| {
            let v = metric(&text, g, &[]);
            (v != 0.0).then(|| format!("{} {g} = {v}", service.name))
        })
        .collect()
}

/// Three real games (new, under way with a clock, checkmated) for the game-id fields.
async fn create_games(gateway: &Channel) -> Vec<String> {
    let mut games: Games = GameServiceClient::new(gateway.clone());
    let mut ids = Vec::new();
    for (moves, control) in [
        (&[][..], ""),
        (&["e4", "e5", "Nf3"][..], "5+3"),
        (&["f3", "e5", "g4", "Qh4#"][..], ""),
    ] {
        let request = CreateGameRequest {
            time_control_text: control.to_owned(),
            ..CreateGameRequest::default()
        };
        ids.push(game_after(&mut games, request, moves).await);
    }
    ids
}

#[test]
fn hostile_requests_to_every_rpc_leave_the_stack_healthy() {
    let seed: u64 = std::env::var("CHESS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x005e_ed15);
    let requests: usize = std::env::var("CHESS_FUZZ_REQUESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(REQUESTS);

    let stack = Replicated::start(&[], &[]);
    let Replicated {
        gateway,
        rules,
        searches,
        ..
    } = &stack;
    let processes = [gateway, rules, &searches[0], &searches[1]];

    let rt = runtime();
    rt.block_on(async {
        let gw = gateway.lazy_channel();
        let ids = create_games(&gw).await;
        let healthy_before = metric(
            &gateway.scrape_metrics(),
            "chess_gateway_search_replicas_healthy",
            &[],
        );
        assert_eq!(healthy_before, 2.0, "both replicas in rotation at the start");
        let rss_before: Vec<u64> = processes.iter().map(|p| p.rss_kib()).collect();

        let ctx = Arc::new(Ctx { games: ids });
        let channels = Arc::new([
            (Target::Gateway, gw.clone()),
            (Target::Rules, rules.lazy_channel()),
            (Target::Search, searches[0].lazy_channel()),
        ]);
        let tally = Arc::new(Mutex::new(Tally::default()));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for worker in 0..CONCURRENCY {
            let (ctx, channels, tally) = (ctx.clone(), channels.clone(), tally.clone());
            let mut rng = Rng::new(seed ^ (worker as u64).wrapping_mul(0x9e37_79b9));
            let count = requests / CONCURRENCY + usize::from(worker < requests % CONCURRENCY);
            tasks.push(tokio::spawn(async move {
                for _ in 0..count {
                    let case = make_case(&mut rng, &ctx);
                    let channel = channels
                        .iter()
                        .find(|(t, _)| *t == case.target)
                        .map(|(_, c)| c.clone())
                        .expect("channel");
                    let limit = case.deadline + HANG_MARGIN;
                    let outcome = match tokio::time::timeout(limit, send(channel, &case)).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(format!("no answer within {limit:?}")),
                    };
                    let mut t = tally.lock().unwrap();
                    t.sent += 1;
                    match outcome {
                        Ok(code) => *t.codes.entry(format!("{code:?}")).or_default() += 1,
                        Err(what) => {
                            *t.codes.entry("finding".to_owned()).or_default() += 1;
                            // One entry per kind of finding: numbers (ports, sizes,
                            // offsets) do not tell findings apart.
                            let what: String = what
                                .chars()
                                .filter(|c| !c.is_ascii_digit())
                                .take(120)
                                .collect();
                            let key = format!("{} at {:?}: {what}", case.rpc.path, case.target);
                            t.finding(key, case.describe());
                        }
                    }
                }
            }));
        }
        for task in tasks {
            task.await.expect("fuzz task");
        }
        let elapsed = started.elapsed();
        let tally = Arc::try_unwrap(tally).unwrap().into_inner().unwrap();
        println!(
            "fuzz: {} requests (seed {seed:#x}) in {:.1} s; answers by code: {:?}",
            tally.sent,
            elapsed.as_secs_f64(),
            tally.codes
        );
        for (what, (count, example)) in &tally.findings {
            println!("FINDING x{count}: {what}\n    e.g. {example}");
        }

        // Vital signs: in rotation, idle, bounded.
        let gauges_deadline = Instant::now() + Duration::from_secs(15);
        let mut busy: Vec<String>;
        loop {
            busy = processes.iter().flat_map(|p| busy_gauges(p)).collect();
            if busy.is_empty() || Instant::now() > gauges_deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let gateway_metrics = gateway.scrape_metrics();
        let healthy_after = metric(&gateway_metrics, "chess_gateway_search_replicas_healthy", &[]);
        let ejections = metric(&gateway_metrics, "chess_gateway_search_ejections_total", &[]);
        let rss_after: Vec<u64> = processes.iter().map(|p| p.rss_kib()).collect();
        for ((p, before), after) in processes.iter().zip(&rss_before).zip(&rss_after) {
            println!("fuzz: {} RSS {before} KiB -> {after} KiB", p.name);
        }
        println!("fuzz: replicas healthy {healthy_before} -> {healthy_after}, ejections {ejections}");

        let mut problems: Vec<String> = tally
            .findings
            .iter()
            .map(|(what, (count, _))| format!("{count} x {what}"))
            .collect();
        if healthy_after != healthy_before || ejections != 0.0 {
            problems.push(format!(
                "search replicas in rotation {healthy_before} -> {healthy_after}, {ejections} ejections"
            ));
        }
        problems.extend(busy.into_iter().map(|b| format!("gauge not back to zero: {b}")));
        for ((p, before), after) in processes.iter().zip(&rss_before).zip(&rss_after) {
            if after.saturating_sub(*before) > MAX_RSS_GROWTH_KIB {
                problems.push(format!("{} grew from {before} KiB to {after} KiB", p.name));
            }
        }
        assert_eq!(tally.sent, requests, "every request sent");
        let shown = problems.len().min(40);
        assert!(
            problems.is_empty(),
            "{} problem(s) after {} hostile requests:\n{}{}\n(stderr of the gateway:\n{})",
            problems.len(),
            tally.sent,
            problems[..shown].join("\n"),
            if shown < problems.len() { "\n..." } else { "" },
            short_log(&gateway.stderr())
        );
    });
}

fn short_log(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
