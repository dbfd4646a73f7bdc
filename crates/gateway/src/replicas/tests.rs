//! The pool's tests: DNS answers followed, round-robin and ejection, and which calls go to a
//! second replica.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use tonic::Code;

use super::*;
use crate::upstream::Call;

pub(crate) fn name(host: &str, port: u16) -> Target {
    Target::Name {
        host: host.to_owned(),
        port,
        shown: format!("dns:///{host}:{port}"),
    }
}

fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

/// A resolver answering from a table the test changes.
pub(crate) type DnsTable = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

pub(crate) fn fake_dns() -> (Resolver, DnsTable) {
    let table: DnsTable = Arc::default();
    let t = table.clone();
    let resolver: Resolver = Arc::new(move |host: String, _port: u16| {
        let answer = t.lock().unwrap().get(&host).cloned();
        Box::pin(async move {
            answer.ok_or_else(|| std::io::Error::other(format!("{host}: no such name")))
        })
    });
    (resolver, table)
}

fn addrs(pool: &ReplicaPool) -> Vec<SocketAddr> {
    pool.replicas().iter().map(|r| r.addr).collect()
}

#[test]
fn backoff_doubles_up_to_the_cap() {
    assert_eq!(backoff(1), Duration::from_secs(1));
    assert_eq!(backoff(2), Duration::from_secs(2));
    assert_eq!(backoff(4), Duration::from_secs(8));
    assert_eq!(backoff(6), EJECT_MAX);
    assert_eq!(backoff(u32::MAX), EJECT_MAX);
}

#[tokio::test]
async fn names_resolve_to_one_replica_per_address_and_follow_dns() {
    let (resolver, dns) = fake_dns();
    let fixed = Target::Fixed("http://10.0.0.1:7".parse().unwrap());
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::with_resolver(
        SEARCH,
        &[fixed, name("search", 50053)],
        Some(Duration::from_secs(5)),
        &metrics,
        resolver,
    );
    assert_eq!(addrs(&pool), [addr("10.0.0.1:7")]);
    // Unresolvable at start: the fixed replica only, and the name reported.
    pool.resolve().await;
    assert_eq!(addrs(&pool), [addr("10.0.0.1:7")]);
    let unresolved = pool.unresolved();
    assert_eq!(unresolved.len(), 1);
    assert_eq!(unresolved[0].0, "dns:///search:50053");
    assert!(unresolved[0].1.as_deref().unwrap().contains("no such name"));

    dns.lock().unwrap().insert(
        "search".into(),
        vec![addr("10.0.1.2:50053"), addr("10.0.1.1:50053")],
    );
    pool.resolve().await;
    assert_eq!(
        addrs(&pool),
        [
            addr("10.0.0.1:7"),
            addr("10.0.1.1:50053"),
            addr("10.0.1.2:50053")
        ]
    );
    assert!(pool.unresolved().is_empty());
    assert_eq!(
        pool.replicas()[1].backend.address.as_ref(),
        "http://10.0.1.1:50053"
    );
    let text = metrics.encode();
    assert!(
        text.contains("chess_gateway_search_replicas{service=\"test\"} 3"),
        "{text}"
    );

    // A replica that stays keeps its state; one that leaves DNS goes; a lookup failure
    // keeps the last answer.
    let kept = pool.replicas()[2].clone();
    pool.failed(&kept, &Status::unavailable("down"));
    dns.lock()
        .unwrap()
        .insert("search".into(), vec![addr("10.0.1.2:50053")]);
    pool.resolve().await;
    assert_eq!(addrs(&pool), [addr("10.0.0.1:7"), addr("10.0.1.2:50053")]);
    assert!(Arc::ptr_eq(&pool.replicas()[1], &kept) && !kept.is_healthy());
    dns.lock().unwrap().clear();
    pool.resolve().await;
    assert_eq!(addrs(&pool), [addr("10.0.0.1:7"), addr("10.0.1.2:50053")]);

    // An address that comes back is a fresh replica.
    dns.lock().unwrap().insert(
        "search".into(),
        vec![addr("10.0.1.1:50053"), addr("10.0.1.2:50053")],
    );
    pool.resolve().await;
    assert_eq!(addrs(&pool).len(), 3);
    assert!(pool.replicas()[1].is_healthy());
}

#[tokio::test]
async fn round_robin_skips_ejected_replicas_but_never_leaves_a_call_nowhere() {
    let targets: Vec<Target> = (1..=3)
        .map(|i| Target::Fixed(format!("http://10.0.0.{i}:1").parse().unwrap()))
        .collect();
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(SEARCH, &targets, None, &metrics);
    let first: Vec<SocketAddr> = (0..3).map(|_| pool.candidates().unwrap()[0].addr).collect();
    assert_eq!(first.len(), 3);
    assert_eq!(
        first.iter().collect::<std::collections::HashSet<_>>().len(),
        3
    );
    for c in (0..3).map(|_| pool.candidates().unwrap()) {
        assert_eq!(c.len(), 2);
        assert_ne!(c[0].addr, c[1].addr);
    }

    let dead = pool.replicas()[1].clone();
    pool.failed(&dead, &Status::unavailable("connection refused"));
    // Calls that were in flight with it fail too: still one ejection.
    pool.failed(&dead, &Status::unavailable("connection lost"));
    assert_eq!(dead.ejection().failures, 1);
    assert!(
        metrics
            .encode()
            .contains("chess_gateway_search_ejections_total{service=\"test\"} 1")
    );
    assert!(
        metrics
            .encode()
            .contains("chess_gateway_search_replicas_healthy{service=\"test\"} 2")
    );
    for _ in 0..6 {
        let c = pool.candidates().unwrap();
        assert!(c.iter().all(|r| r.addr != dead.addr), "{c:?}");
    }
    // All ejected: calls still go somewhere, soonest due first.
    pool.failed(&pool.replicas()[0], &Status::unavailable("x"));
    pool.failed(&pool.replicas()[2], &Status::unavailable("x"));
    let c = pool.candidates().unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].addr, dead.addr);
    pool.succeeded(&dead);
    assert!(dead.is_healthy());
    assert_eq!(pool.candidates().unwrap()[0].addr, dead.addr);
}

#[tokio::test]
async fn nothing_configured_or_resolved_is_unavailable_with_a_reason() {
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(SEARCH, &[], None, &metrics);
    let e = pool.candidates().unwrap_err();
    assert!(e.message().contains("--search-addr"), "{e:?}");
    let (resolver, _) = fake_dns();
    let pool = ReplicaPool::with_resolver(
        SEARCH,
        &[name("search", 1)],
        Some(Duration::from_secs(5)),
        &metrics,
        resolver,
    );
    let e = pool.candidates().unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable);
    assert!(
        e.message().contains("dns:///search:1") && e.message().contains("every second"),
        "{e:?}"
    );
}

/// A health service on a free loopback port, for calls that must be answered.
async fn live_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_, health) = tonic_health::server::health_reporter();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(health)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    addr
}

/// A port that takes connections, reads what comes and hangs up: a replica that dies
/// with the call on it.
async fn dying_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buf = [0; 4096];
                let _ =
                    tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf)).await;
            });
        }
    });
    addr
}

/// A port that takes connections and reads what comes but never answers: a replica that
/// hangs (stopped, or its host gone without a reset).
async fn hung_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buf = [0; 4096];
                while let Ok(Ok(n)) =
                    tokio::time::timeout(Duration::from_secs(30), socket.read(&mut buf)).await
                {
                    if n == 0 {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// A loopback port nobody listens on.
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// One health call through `pool` with `retry`: the replica that answered, or the error.
async fn health_call(pool: &ReplicaPool, retry: Retry) -> Result<SocketAddr, Status> {
    health_call_within(pool, retry, Duration::from_secs(10)).await
}

/// [`health_call`] with the caller's deadline `within`.
async fn health_call_within(
    pool: &ReplicaPool,
    retry: Retry,
    within: Duration,
) -> Result<SocketAddr, Status> {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let call = Call {
        metadata: tonic::metadata::MetadataMap::new(),
        deadline: Some(Instant::now() + within),
        caller: crate::auth::Caller::Ip("test".into()),
    };
    pool.call(
        &call,
        HealthCheckRequest::default(),
        retry,
        |b| HealthClient::new(b.connection.clone()),
        |mut c, r| async move { c.check(r).await },
    )
    .await
    .map(|(replica, _)| replica.addr)
}

fn fixed(addrs: &[SocketAddr]) -> Vec<Target> {
    addrs
        .iter()
        .map(|a| Target::Fixed(format!("http://{a}").parse().unwrap()))
        .collect()
}

#[tokio::test]
async fn a_call_the_replica_never_got_is_retried_whatever_it_is() {
    let live = live_server().await;
    let dead = closed_port();
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(RULES, &fixed(&[dead, live]), None, &metrics);
    // The first call starts at the dead replica: refused connection, so even a call that
    // is not safe to send twice goes on to the live one.
    assert_eq!(health_call(&pool, Retry::IfNotSent).await.unwrap(), live);
    let text = metrics.encode();
    assert!(
        text.contains("chess_gateway_rules_retries_total{service=\"test\"} 1")
            && text.contains("chess_gateway_rules_ejections_total{service=\"test\"} 1"),
        "{text}"
    );
    // Ejected now: calls go to the live one only.
    for _ in 0..4 {
        assert_eq!(health_call(&pool, Retry::IfNotSent).await.unwrap(), live);
    }
}

#[tokio::test]
async fn a_call_that_may_have_arrived_is_retried_only_when_safe() {
    let live = live_server().await;
    let dying = dying_server().await;
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(RULES, &fixed(&[dying, live]), None, &metrics);
    // Not safe to send twice: the dying replica's failure is the answer, not a retry.
    let e = health_call(&pool, Retry::IfNotSent).await.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    assert!(
        e.message().contains("rules service") && e.message().contains(&dying.to_string()),
        "{e:?}"
    );
    assert!(
        !metrics
            .encode()
            .contains("retries_total{service=\"test\"} 1"),
        "{}",
        metrics.encode()
    );
    // Safe: sent again to the live replica. (The dying one is ejected by now, so bring it
    // back to be tried first.)
    pool.succeeded(&pool.replicas()[0]);
    pool.next.store(0, Ordering::Relaxed);
    assert_eq!(health_call(&pool, Retry::Safe).await.unwrap(), live);
    assert!(
        metrics
            .encode()
            .contains("chess_gateway_rules_retries_total{service=\"test\"} 1")
    );
}

/// Found by tests/hosts (vanish-rules, slow-rules): a replica that hangs was never ejected, so
/// every other call waited out its whole deadline on it.
#[tokio::test]
async fn a_replica_that_hangs_is_ejected_not_only_one_that_refuses() {
    let hung = hung_server().await;
    let live = live_server().await;
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(RULES, &fixed(&[hung, live]), None, &metrics);
    let within = Duration::from_millis(1200);
    let e = health_call_within(&pool, Retry::Safe, within)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::DeadlineExceeded, "{e:?}");
    assert!(
        !pool.replicas()[0].is_healthy(),
        "the hung replica is ejected"
    );
    // The next calls all go to the live replica, each answered well within its deadline.
    for _ in 0..4 {
        let started = Instant::now();
        assert_eq!(
            health_call_within(&pool, Retry::Safe, within)
                .await
                .unwrap(),
            live
        );
        assert!(started.elapsed() < Duration::from_millis(500));
    }
}

/// A replica that answers other calls while one call outlives its deadline is busy, not hung:
/// it stays in.
#[tokio::test]
async fn a_replica_that_answers_meanwhile_is_not_ejected_for_a_slow_call() {
    let live = live_server().await;
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(RULES, &fixed(&[live]), None, &metrics);
    let replica = pool.replicas()[0].clone();
    let started = Instant::now();
    pool.succeeded(&replica);
    assert!(replica.answered_since(started));
    assert!(!replica.answered_since(Instant::now() + Duration::from_millis(1)));
}

/// Found by tests/hosts (vanish-postgres): when the first replica fails late and the retry on
/// the other cannot finish either, the caller got its own DEADLINE_EXCEEDED, saying nothing.
/// The retry now leaves part of the deadline unused and the caller hears UNAVAILABLE, with the
/// outcome unknown, before its deadline.
#[tokio::test]
async fn a_retry_that_cannot_finish_ends_unavailable_before_the_deadline() {
    let dying = dying_server().await;
    let hung = hung_server().await;
    let metrics = Metrics::new("test");
    let pool = ReplicaPool::new(RULES, &fixed(&[dying, hung]), None, &metrics);
    let within = Duration::from_millis(1500);
    let started = Instant::now();
    let e = health_call_within(&pool, Retry::Safe, within)
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    assert!(
        e.message().contains("outcome unknown")
            && e.message().contains(&dying.to_string())
            && e.message().contains(&hung.to_string()),
        "{e:?}"
    );
    assert!(
        took < within,
        "answered after {took:?}, the deadline was {within:?}"
    );
    assert!(
        metrics
            .encode()
            .contains("chess_gateway_rules_retries_total{service=\"test\"} 1")
    );
}

/// A resolver answering from a table, counting its lookups.
fn counting_dns() -> (Resolver, DnsTable, Arc<AtomicUsize>) {
    let (inner, table) = fake_dns();
    let lookups = Arc::new(AtomicUsize::new(0));
    let counted = lookups.clone();
    let resolver: Resolver = Arc::new(move |host: String, port: u16| {
        counted.fetch_add(1, Ordering::SeqCst);
        inner(host, port)
    });
    (resolver, table, lookups)
}

#[tokio::test]
async fn a_call_that_finds_no_replica_looks_the_name_up_at_once() {
    let live = live_server().await;
    let (resolver, dns, lookups) = counting_dns();
    let metrics = Metrics::new("test");
    // An interval far beyond the test: only the call itself can make the lookup.
    let pool = ReplicaPool::with_resolver(
        RULES,
        &[name("rules", live.port())],
        Some(Duration::from_secs(3600)),
        &metrics,
        resolver,
    );
    pool.resolve().await;
    assert!(pool.replicas().is_empty());
    let e = health_call(&pool, Retry::Safe).await.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    assert!(
        e.message().contains("dns:///rules:")
            && e.message().contains("no such name")
            && e.message().contains("looked up again every second"),
        "{e:?}"
    );
    // The backend's name appears (its pod started after the gateway): the next call finds it
    // without waiting for the interval.
    dns.lock().unwrap().insert("rules".into(), vec![live]);
    tokio::time::sleep(RESOLVE_AGAIN_MIN).await;
    assert_eq!(health_call(&pool, Retry::Safe).await.unwrap(), live);
    assert_eq!(addrs(&pool), [live]);
    assert_eq!(lookups.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn calls_that_find_no_replica_share_one_lookup() {
    let (resolver, _dns, lookups) = counting_dns();
    let metrics = Metrics::new("test");
    let pool =
        ReplicaPool::with_resolver(SEARCH, &[name("search", 50053)], None, &metrics, resolver);
    let calls = (0..50).map(|_| health_call_within(&pool, Retry::Safe, Duration::from_secs(5)));
    let answers = futures::future::join_all(calls).await;
    assert!(
        answers
            .iter()
            .all(|a| a.as_ref().is_err_and(|e| e.code() == Code::Unavailable)),
        "{answers:?}"
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 1, "one lookup for 50 calls");
}

#[tokio::test]
async fn a_name_without_an_address_is_looked_up_every_second_and_wakes_the_waiters() {
    let (resolver, dns, _) = counting_dns();
    let metrics = Metrics::new("test");
    let pool = Arc::new(ReplicaPool::with_resolver(
        SEARCH,
        &[name("search", 50053)],
        Some(Duration::from_secs(3600)),
        &metrics,
        resolver,
    ));
    pool.resolve().await;
    let shutdown = Shutdown::new();
    pool.spawn_maintenance(shutdown.clone());
    let waiting = tokio::spawn({
        let pool = pool.clone();
        async move { pool.first_replica().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "no replica yet");
    dns.lock()
        .unwrap()
        .insert("search".into(), vec![addr("10.0.1.1:50053")]);
    // The maintenance tick (1 s) finds it long before the interval (an hour).
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the replica joins within a tick or two")
        .unwrap();
    assert_eq!(addrs(&pool), [addr("10.0.1.1:50053")]);
    shutdown.trigger();
}
