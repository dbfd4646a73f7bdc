//! Issue 22, item 3: connections that send nothing, or only the HTTP/2 preface, are closed by
//! the first-byte and idle timeouts on every listener (the gateway's two, the rules and search
//! services'); a connection with a stream open is busy, not idle; a peer that stops answering
//! keepalive pings is dropped; one address may hold only so many connections; and a process
//! out of file descriptors waits for them instead of spinning, then serves again.
//!
//! The limits are set through their environment variables (`CHESS_HANDSHAKE_TIMEOUT_MS` and
//! the rest), low, so each test takes seconds.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use chess_integration_tests::{Service, TempDir, runtime, spawn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// The HTTP/2 client preface and an empty SETTINGS frame: all a lazy client sends.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Low limits for every service of a test, through the environment.
const QUICK: &[(&str, &str)] = &[
    ("CHESS_HANDSHAKE_TIMEOUT_MS", "500"),
    ("CHESS_IDLE_TIMEOUT_S", "1"),
    ("CHESS_KEEPALIVE_INTERVAL_MS", "300"),
    ("CHESS_KEEPALIVE_TIMEOUT_MS", "500"),
];

/// Reads (and drops) what the server sends until it closes the connection; how long that took,
/// or `None` if it was still open after `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.checked_sub(start.elapsed())?;
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

/// Connects from `from` (a loopback address) to `to`.
async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("address"))
        .expect("bind");
    socket.connect(to).await.expect("connect")
}

/// A connection that sent the preface and got the server's SETTINGS back: the server serves it.
async fn served(from: &str, to: SocketAddr) -> Result<TcpStream, String> {
    let mut stream = connect_from(from, to).await;
    stream
        .write_all(PREFACE)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut head = [0u8; 9];
    match tokio::time::timeout(Duration::from_secs(2), stream.read_exact(&mut head)).await {
        Ok(Ok(_)) if head[3] == 4 => Ok(stream),
        Ok(Ok(_)) => Err(format!("a frame of type {} first", head[3])),
        Ok(Err(e)) => Err(format!("closed: {e}")),
        Err(_) => Err("no SETTINGS within 2 s".to_owned()),
    }
}

fn start_services(dir: &TempDir, envs: &[(&str, &str)]) -> (Service, Service, Service) {
    let rules = spawn::rules(dir, &[], envs);
    let search = spawn::search(dir, &["--workers", "1", "--hash-mb", "16"], envs);
    let gateway = spawn::gateway(
        dir,
        &rules.url(),
        &[search.url()],
        &["--web-listen", "127.0.0.1:0", "--rate-limit", "0"],
        envs,
    );
    (rules, search, gateway)
}

/// Silent connections close after the first-byte timeout (0.5 s), connections that sent only
/// the preface after the idle timeout (2 s), on all four listeners; a watch open through the
/// gateway all that time is still open.
#[test]
fn idle_connections_are_closed_on_every_listener() {
    let dir = TempDir::new("idle");
    // PINGs rarely enough that the raw clients, which answer none, outlast the idle timeout.
    // An idle timeout well past the first-byte timeout, to tell one from the other.
    let mut envs = QUICK.to_vec();
    envs[1] = ("CHESS_IDLE_TIMEOUT_S", "2");
    envs[2] = ("CHESS_KEEPALIVE_INTERVAL_MS", "10000");
    let (rules, search, gateway) = start_services(&dir, &envs);
    let web = gateway.web.expect("web address");
    let listeners = [
        ("gateway", gateway.grpc),
        ("web", web),
        ("rules", rules.grpc),
        ("search", search.grpc),
    ];
    runtime().block_on(async {
        let mut watch = HealthClient::new(gateway.channel().await)
            .watch(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .expect("watch")
            .into_inner();
        watch.message().await.expect("first status").expect("one");

        let mut checks = Vec::new();
        for (name, addr) in listeners {
            checks.push(tokio::spawn(async move {
                let mut silent = TcpStream::connect(addr).await.expect("connect");
                let mut lazy = served("127.0.0.1", addr).await.expect("served");
                let (silent, lazy) = tokio::join!(
                    closed_within(&mut silent, Duration::from_secs(4)),
                    closed_within(&mut lazy, Duration::from_secs(5)),
                );
                (name, silent, lazy)
            }));
        }
        for check in checks {
            let (name, silent, lazy) = check.await.expect("check");
            let silent = silent.unwrap_or_else(|| panic!("{name}: a silent connection open 4 s"));
            assert!(
                silent >= Duration::from_millis(400) && silent < Duration::from_millis(1500),
                "{name}: a silent connection closed after {silent:?}"
            );
            let lazy = lazy.unwrap_or_else(|| panic!("{name}: an idle HTTP/2 connection open 5 s"));
            assert!(
                lazy >= Duration::from_millis(1900),
                "{name}: an idle connection closed after {lazy:?}"
            );
        }
        // The watch has been open through all of that: busy, not idle.
        match tokio::time::timeout(Duration::from_millis(500), watch.message()).await {
            Err(_) => {}
            Ok(end) => panic!("the watch ended: {end:?}"),
        }
    });
}

/// A client with a stream open that stops answering PINGs (its HTTP/2 task no longer runs) is
/// dropped after the keepalive interval and timeout (0.3 s + 0.5 s).
#[test]
fn a_peer_that_stops_answering_pings_is_dropped() {
    let dir = TempDir::new("keepalive");
    let (_rules, _search, gateway) = start_services(&dir, QUICK);
    runtime().block_on(async {
        let tcp = TcpStream::connect(gateway.grpc).await.expect("connect");
        let (mut client, conn) = h2::client::handshake(tcp).await.expect("handshake");
        let (pause, paused) = tokio::sync::oneshot::channel::<()>();
        let (give_back, conn_back) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let mut conn = conn;
            tokio::select! {
                _ = &mut conn => panic!("the connection ended while the client was alive"),
                _ = paused => {}
            }
            let _ = give_back.send(conn);
        });
        let request = http::Request::post(format!(
            "http://{}/grpc.health.v1.Health/Watch",
            gateway.grpc
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .expect("request");
        let (response, mut body) = client.send_request(request, false).expect("send");
        body.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true)
            .expect("message");
        let response = tokio::time::timeout(Duration::from_secs(5), response)
            .await
            .expect("headers in time")
            .expect("headers");
        assert_eq!(response.status(), 200);
        // The client falls silent, its stream still open.
        pause.send(()).expect("pause");
        let conn = conn_back.await.expect("connection back");
        tokio::time::sleep(Duration::from_secs(2)).await;
        // Running again, it finds the connection closed by the server.
        match tokio::time::timeout(Duration::from_millis(500), conn).await {
            Ok(_) => {}
            Err(_) => panic!("a client that answered no PING for 2 s is still connected"),
        }
    });
}

/// With `CHESS_MAX_CONNECTIONS_PER_IP=3`, a fourth connection from 127.0.0.1 is closed at once
/// (on the gateway's listeners and the rules service's), 127.0.0.2 is still served, and a
/// closed connection frees its place.
#[test]
fn connections_over_the_per_address_cap_are_refused() {
    let dir = TempDir::new("per-ip");
    let mut envs = QUICK.to_vec();
    envs[0] = ("CHESS_HANDSHAKE_TIMEOUT_MS", "10000");
    envs[1] = ("CHESS_IDLE_TIMEOUT_S", "60");
    envs.push(("CHESS_MAX_CONNECTIONS_PER_IP", "3"));
    let (rules, _search, gateway) = start_services(&dir, &envs);
    let web = gateway.web.expect("web address");
    runtime().block_on(async {
        for (name, addr) in [
            ("gateway", gateway.grpc),
            ("web", web),
            ("rules", rules.grpc),
        ] {
            let mut held = Vec::new();
            for i in 0..3 {
                let stream = served("127.0.0.1", addr)
                    .await
                    .unwrap_or_else(|e| panic!("{name}: connection {i} not served: {e}"));
                held.push(stream);
            }
            let mut fourth = connect_from("127.0.0.1", addr).await;
            let _ = fourth.write_all(PREFACE).await;
            let refused = closed_within(&mut fourth, Duration::from_secs(2)).await;
            assert!(refused.is_some(), "{name}: a fourth connection is open");
            let other = served("127.0.0.2", addr).await;
            assert!(other.is_ok(), "{name}: 127.0.0.2 not served: {other:?}");
            drop(held.pop());
            // The server notices the close when it reads the end of the stream.
            let mut again = Err(String::new());
            for _ in 0..20 {
                again = served("127.0.0.1", addr).await;
                if again.is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert!(again.is_ok(), "{name}: a freed place not given: {again:?}");
        }
    });
}

/// The CPU time (user + system) a process has used, from `/proc/PID/stat`, in clock ticks
/// (100 a second on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // Fields after the command name (which may hold spaces) end with ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("stat format")
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// A gateway limited to 64 open files, held by 100 silent connections (and a scrape waiting on
/// its metrics port): it waits for descriptors instead of spinning (under a quarter of a
/// core), and once the first-byte timeout has closed the silent connections it answers a new
/// caller.
#[test]
fn out_of_descriptors_the_gateway_waits_and_recovers() {
    let dir = TempDir::new("emfile");
    let gateway = Service::start_with_nofile(
        "chess-gateway",
        64,
        &spawn::gateway_args("http://127.0.0.1:9", &[], &["--rate-limit", "0"]),
        &[
            ("CHESS_HANDSHAKE_TIMEOUT_MS", "1500"),
            ("CHESS_MAX_CONNECTIONS_PER_IP", "100000"),
        ],
        &dir.0,
    );
    let pid = gateway.child.as_ref().expect("running").id();
    runtime().block_on(async {
        let mut flood = Vec::new();
        for _ in 0..100 {
            flood.push(TcpStream::connect(gateway.grpc).await.expect("connect"));
        }
        // A scrape waiting on the metrics port, which must not spin either.
        flood.push(TcpStream::connect(gateway.metrics).await.expect("connect"));
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = cpu_ticks(pid);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let used = cpu_ticks(pid) - before;
        assert!(
            used <= 25,
            "out of descriptors, the gateway used {used} ticks of CPU in one second"
        );
        let channel = tonic::transport::Endpoint::from_shared(gateway.url())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(10))
            .connect()
            .await;
        let answer = match channel {
            Ok(channel) => HealthClient::new(channel)
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .map(|_| ())
                .map_err(|s| s.to_string()),
            Err(e) => Err(e.to_string()),
        };
        assert!(
            answer.is_ok(),
            "no answer {:?} after the flood: {answer:?}",
            start.elapsed()
        );
        drop(flood);
    });
}
