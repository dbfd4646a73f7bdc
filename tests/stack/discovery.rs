//! Several search replicas behind one gateway: calls spread over three chess-search-service
//! processes, one replica killed mid-load without losing a call, and a replica found by name
//! (`dns:///localhost:PORT`), ejected when it dies and taken back when it returns.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chess_integration_tests::metrics::{eventually, metric};
use chess_integration_tests::{Service, TempDir, runtime, spawn};
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::{AnalyzeRequest, SearchLimits, ServerInfoRequest};
use tonic::transport::Channel;
use tonic::{Code, Request};

/// Varied positions, so the replicas do real and different work.
const FENS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
];

/// Calls in the kill-mid-load test, and how many run at once.
const CALLS: usize = 36;
const CONCURRENCY: usize = 6;
/// Bound on any one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The replicas' flags: one worker each, room to queue every call of the load.
const SEARCH: &[&str] = &["--workers", "1", "--queue", "32", "--hash-mb", "8"];

fn gateway(dir: &TempDir, rules: &Service, search_addrs: &[String]) -> Service {
    spawn::gateway(
        dir,
        &rules.url(),
        search_addrs,
        &["--rate-limit", "0", "--search-resolve-interval-secs", "1"],
        &[],
    )
}

fn analyze(i: usize) -> Request<AnalyzeRequest> {
    let mut request = Request::new(AnalyzeRequest {
        fen: FENS[i % FENS.len()].to_owned(),
        moves: vec![],
        // A time limit, not a depth: every call keeps its replica busy for a while, so the
        // kill below always finds a call in flight, however fast the machine.
        limits: Some(SearchLimits {
            time_ms: 40 + 20 * u64::try_from(i % 2).unwrap(),
            ..SearchLimits::default()
        }),
        multipv: 1,
    });
    request.set_timeout(CALL_TIMEOUT);
    request
}

/// Analyze calls a search replica has answered, from its own metrics.
fn answered(replica: &Service) -> f64 {
    metric(
        &replica.scrape_metrics(),
        "chess_grpc_server_handled_total",
        &["AnalysisService/Analyze\""],
    )
}

async fn search_backends(channel: Channel) -> Vec<(String, String)> {
    GatewayServiceClient::new(channel)
        .server_info(ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .backends
        .into_iter()
        .filter(|b| b.name == "search")
        .map(|b| (b.address, b.health))
        .collect()
}

#[test]
fn killing_a_replica_mid_load_loses_no_call() {
    let dir = TempDir::new("discovery");
    let rules = spawn::rules(&dir, &[], &[]);
    let mut replicas: Vec<Service> = (0..3).map(|_| spawn::search(&dir, SEARCH, &[])).collect();
    let addrs: Vec<String> = replicas.iter().map(Service::url).collect();
    let gateway = gateway(&dir, &rules, &addrs);
    let rt = runtime();
    let channel = rt.block_on(gateway.channel());

    // Round-robin: three calls, one per replica.
    rt.block_on(async {
        let mut client = AnalysisServiceClient::new(channel.clone());
        for i in 0..3 {
            client.analyze(analyze(i)).await.unwrap();
        }
    });
    for (i, r) in replicas.iter().enumerate() {
        eventually(
            &format!("replica {i} got no call of the first three"),
            || answered(r) == 1.0,
        );
    }

    // The load: CALLS calls, CONCURRENCY at a time.
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let next = next.clone();
            let mut client = AnalysisServiceClient::new(channel.clone());
            rt.spawn(async move {
                let mut results = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= CALLS {
                        return results;
                    }
                    let call = client.analyze(analyze(i));
                    let result = match tokio::time::timeout(CALL_TIMEOUT, call).await {
                        Ok(result) => result.map(|r| r.into_inner()),
                        Err(_) => Err(tonic::Status::deadline_exceeded("the test's bound")),
                    };
                    results.push((i, result));
                }
            })
        })
        .collect();

    // Kill replica 1 mid-load, while it is working on a call.
    let victim = &mut replicas[1];
    let started = Instant::now();
    loop {
        let busy = metric(&victim.scrape_metrics(), "chess_grpc_server_in_flight", &[]);
        // A third into the load, with a call on the victim.
        if busy >= 1.0 && next.load(Ordering::SeqCst) >= CALLS / 3 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30) && next.load(Ordering::SeqCst) < CALLS,
            "replica 1 never had a call in flight"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed_at = next.load(Ordering::SeqCst);
    victim.kill_hard();

    let mut results = Vec::new();
    for worker in workers {
        results.extend(rt.block_on(worker).unwrap());
    }
    results.sort_by_key(|(i, _)| *i);
    assert_eq!(results.len(), CALLS, "every call came back");
    let mut failed = Vec::new();
    for (i, result) in &results {
        match result {
            Ok(answer) => {
                assert!(answer.done, "call {i}: {answer:?}");
                assert!(
                    answer.best_move.as_ref().is_some_and(|m| !m.uci.is_empty()),
                    "call {i}: {answer:?}"
                );
            }
            Err(status) => {
                // Not lost: a clear status that says which service failed.
                assert!(
                    matches!(status.code(), Code::Unavailable | Code::ResourceExhausted),
                    "call {i}: {status:?}"
                );
                assert!(status.message().contains("search"), "call {i}: {status:?}");
                failed.push((*i, status.code(), status.message().to_owned()));
            }
        }
    }
    let text = gateway.scrape_metrics();
    let retried = metric(&text, "chess_gateway_search_retries_total", &[]);
    let ejections = metric(&text, "chess_gateway_search_ejections_total", &[]);
    eprintln!(
        "kill mid-load: {CALLS} calls ({CONCURRENCY} at a time, replica killed after {killed_at} \
         were started): {} succeeded, {retried} retried on another replica, {} failed {failed:?}; \
         {ejections} ejections",
        CALLS - failed.len(),
        failed.len()
    );
    assert!(
        retried >= 1.0,
        "the calls in flight on the killed replica were retried"
    );
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas", &["service"]),
        3.0
    );
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas_healthy", &["service"]),
        2.0,
        "{text}"
    );

    // Afterwards the dead replica is left out: more calls all succeed without retries.
    rt.block_on(async {
        let mut client = AnalysisServiceClient::new(channel.clone());
        for i in 0..4 {
            client.analyze(analyze(i)).await.unwrap();
        }
        let backends = search_backends(channel.clone()).await;
        let dead = backends
            .iter()
            .find(|(address, _)| address == &addrs[1])
            .unwrap();
        assert_eq!(dead.1, "UNKNOWN", "{backends:?}");
        assert_eq!(
            backends.iter().filter(|(_, h)| h == "SERVING").count(),
            2,
            "{backends:?}"
        );
    });
    let after = metric(
        &gateway.scrape_metrics(),
        "chess_gateway_search_retries_total",
        &[],
    );
    assert!(
        after <= retried + 1.0,
        "a probe may let one call find it dead again, no more"
    );
}

#[test]
fn a_replica_found_by_name_is_ejected_when_it_dies_and_taken_back() {
    let resolves_to_loopback = ("localhost", 1)
        .to_socket_addrs()
        .map(|mut a| a.any(|a| a.ip().is_loopback()))
        .unwrap_or(false);
    if !resolves_to_loopback {
        eprintln!("skipped: localhost does not resolve to a loopback address here");
        return;
    }
    let dir = TempDir::new("discovery-dns");
    let rules = spawn::rules(&dir, &[], &[]);
    let mut replica = spawn::search(&dir, SEARCH, &[]);
    let port = replica.grpc.port();
    let by_name = format!("dns:///localhost:{port}");
    let gateway = gateway(&dir, &rules, std::slice::from_ref(&by_name));
    let rt = runtime();
    let channel = rt.block_on(gateway.channel());
    let mut client = AnalysisServiceClient::new(channel.clone());
    let replica_url = format!("http://127.0.0.1:{port}");

    rt.block_on(async {
        client.analyze(analyze(0)).await.unwrap();
        let backends = search_backends(channel.clone()).await;
        assert!(
            backends.contains(&(replica_url.clone(), "SERVING".to_owned())),
            "{backends:?}"
        );
    });
    eventually("the replica answered", || answered(&replica) == 1.0);

    // The only replica dies: a clear UNAVAILABLE naming it, and it is ejected.
    replica.kill_hard();
    rt.block_on(async {
        let status = client.analyze(analyze(1)).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert!(
            status.message().contains(&replica_url) || status.message().contains("search"),
            "{status:?}"
        );
    });
    let text = gateway.scrape_metrics();
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas_healthy", &["service"]),
        0.0,
        "{text}"
    );

    // Back on the same port: the health check after the backoff takes it back.
    let listen = SocketAddr::from(([127, 0, 0, 1], port)).to_string();
    let replica = spawn::search_on(&listen, &dir, SEARCH, &[]);
    let started = Instant::now();
    loop {
        let healthy = metric(
            &gateway.scrape_metrics(),
            "chess_gateway_search_replicas_healthy",
            &["service"],
        );
        if healthy >= 1.0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the replica was not taken back"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    rt.block_on(async {
        client.analyze(analyze(2)).await.unwrap();
    });
    eventually("the returned replica answered", || {
        answered(&replica) == 1.0
    });
}
