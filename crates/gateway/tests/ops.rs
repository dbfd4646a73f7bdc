//! Analysis routing, ServerInfo, health, reflection, gRPC-Web, CORS, metrics and graceful
//! shutdown.

mod common;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::*;
use common::*;
use futures::StreamExt;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_without_a_search_service_is_unavailable() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let status = analysis
        .analyze(AnalyzeRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert!(
        status.message().contains("analysis is not available")
            && status.message().contains("--search-addr"),
        "{status:?}"
    );
    let status = analysis
        .analyze_stream(AnalyzeRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);

    let mut health = HealthClient::new(gateway.channel().await);
    let check = |service: &str| HealthCheckRequest {
        service: service.to_owned(),
    };
    let status = health
        .check(check("chess.v1.AnalysisService"))
        .await
        .unwrap()
        .into_inner()
        .status;
    assert_eq!(status, ServingStatus::NotServing as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_goes_round_robin_and_skips_a_dead_replica() {
    let backend = start_rules().await;
    let (s1, s2) = (start_search("s1").await, start_search("s2").await);
    let dead = closed_port();
    let replicas = format!("http://{},http://{}", s1.addr, dead);
    let gateway = Gateway::start(
        backend.addr,
        &[
            "--search-addr",
            &replicas,
            "--search-addr",
            &s2.addr.to_string(),
        ],
    )
    .await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let mut answered = Vec::new();
    for _ in 0..6 {
        let mut request = tonic::Request::new(AnalyzeRequest::default());
        request.set_timeout(Duration::from_secs(3));
        let response = analysis.analyze(request).await.unwrap();
        let received = grpc_timeout(&echoed(&response, "x-received-timeout"));
        assert!(
            received <= Duration::from_secs(3) && received > Duration::from_secs(2),
            "{received:?}"
        );
        answered.push(response.into_inner().fen);
    }
    let names: HashSet<_> = answered.iter().map(String::as_str).collect();
    assert_eq!(names, HashSet::from(["s1", "s2"]), "{answered:?}");

    let mut stream = analysis
        .analyze_stream(AnalyzeRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut depths = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, stream.next()).await.unwrap() {
        depths.push(item.unwrap().lines[0].depth);
    }
    assert_eq!(depths, [1, 2, 3]);
}

/// The gateway's Prometheus text.
async fn scrape(gateway: &Gateway) -> String {
    let (head, body) = http1(
        gateway.metrics,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"",
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    String::from_utf8(body).unwrap()
}

/// The value of a metric without labels other than `service`.
fn metric(text: &str, name: &str) -> f64 {
    let prefix = format!("{name}{{");
    text.lines()
        .find(|l| l.starts_with(&prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_analysis_call_is_retried_once_and_a_dead_replica_ejected() {
    let backend = start_rules().await;
    let live = start_search("live").await;
    let dead = closed_port();
    let replicas = format!("http://{dead},http://{}", live.addr);
    let gateway = Gateway::start(backend.addr, &["--search-addr", &replicas]).await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    for _ in 0..2 {
        let r = analysis.analyze(AnalyzeRequest::default()).await.unwrap();
        assert_eq!(r.into_inner().fen, "live");
        let mut s = analysis
            .analyze_stream(AnalyzeRequest::default())
            .await
            .unwrap()
            .into_inner();
        while let Some(item) = tokio::time::timeout(WAIT, s.next()).await.unwrap() {
            assert_eq!(item.unwrap().fen, "live");
        }
        let batch = AnalyzeBatchRequest {
            positions: vec![AnalyzeRequest::default()],
        };
        let mut s = analysis.analyze_batch(batch).await.unwrap().into_inner();
        let first = tokio::time::timeout(WAIT, s.next()).await.unwrap();
        assert_eq!(first.unwrap().unwrap().result.unwrap().fen, "live");
        let r = analysis
            .best_move(BestMoveRequest::default())
            .await
            .unwrap();
        assert_eq!(r.into_inner().best_move.unwrap().coordinate, "live");
        let r = analysis
            .review_game(ReviewGameRequest::default())
            .await
            .unwrap();
        assert_eq!(r.into_inner().annotated_pgn, "live");
        let r = analysis
            .evaluate_positions(EvaluatePositionsRequest::default())
            .await
            .unwrap();
        assert_eq!(r.into_inner().evaluator, "live");
    }
    assert_eq!(live.recorder.events().len(), 12);
    let text = scrape(&gateway).await;
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas"),
        2.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas_healthy"),
        1.0,
        "{text}"
    );
    assert!(metric(&text, "chess_gateway_search_ejections_total") >= 1.0);
    // The dead replica was tried once, then left out while ejected (a probe keeps it out).
    assert!(metric(&text, "chess_gateway_search_retries_total") >= 1.0);
    assert!(
        metric(&text, "chess_gateway_search_retries_total") <= 2.0,
        "{text}"
    );

    // Two dead replicas: one retry, then a status naming both.
    let (d1, d2) = (closed_port(), closed_port());
    let replicas = format!("{d1},{d2}");
    let gateway = Gateway::start(backend.addr, &["--search-addr", &replicas]).await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let status = analysis
        .best_move(BestMoveRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    if d1 != d2 {
        assert!(
            status.message().contains("two search replicas")
                && status.message().contains(&d1.to_string())
                && status.message().contains(&d2.to_string()),
            "{status:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_names_are_resolved_into_replicas() {
    let backend = start_rules().await;
    let search = start_search("s1").await;
    let by_name = format!("dns:///localhost:{}", search.addr.port());
    let gateway = Gateway::start(
        backend.addr,
        &[
            "--search-addr",
            &by_name,
            "--search-addr",
            "dns:///nonexistent.invalid:50053",
            "--search-resolve-interval-secs",
            "1",
        ],
    )
    .await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    for _ in 0..3 {
        let r = analysis.analyze(AnalyzeRequest::default()).await.unwrap();
        assert_eq!(r.into_inner().fen, "s1");
    }
    let mut info = GatewayServiceClient::new(gateway.channel().await);
    let info = info
        .server_info(ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    let search_backends: Vec<_> = info
        .backends
        .iter()
        .filter(|b| b.name == "search")
        .map(|b| (b.address.as_str(), b.health.as_str()))
        .collect();
    let resolved = format!("http://127.0.0.1:{}", search.addr.port());
    assert!(
        search_backends.contains(&(resolved.as_str(), "SERVING")),
        "{search_backends:?}"
    );
    assert!(
        search_backends.contains(&("dns:///nonexistent.invalid:50053", "UNKNOWN")),
        "{search_backends:?}"
    );
    let text = scrape(&gateway).await;
    assert!(
        metric(&text, "chess_gateway_search_replicas") >= 1.0,
        "{text}"
    );

    // Only a name that resolves to nothing: UNAVAILABLE saying so.
    let gateway = Gateway::start(
        backend.addr,
        &["--search-addr", "dns:///nonexistent.invalid:50053"],
    )
    .await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let status = analysis
        .analyze(AnalyzeRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(
        status
            .message()
            .contains("dns:///nonexistent.invalid:50053")
            && status.message().contains("resolved to no address"),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_info_reports_version_backends_and_limits() {
    let backend = start_rules().await;
    let search = start_search("s1").await;
    let dead = closed_port();
    let replicas = format!("{},{}", search.addr, dead);
    let gateway = Gateway::start(
        backend.addr,
        &[
            "--search-addr",
            &replicas,
            "--max-pgn-bytes",
            "5000",
            "--max-moves",
            "7",
            "--max-batch",
            "9",
            "--rate-limit",
            "11",
        ],
    )
    .await;
    let mut info = GatewayServiceClient::new(gateway.channel().await);
    let info = info
        .server_info(ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        (info.max_pgn_bytes, info.max_moves, info.max_batch),
        (5000, 7, 9)
    );
    assert_eq!(info.rate_limit_per_second, 11);
    assert!(!info.auth_required);
    let backends: Vec<_> = info
        .backends
        .iter()
        .map(|b| (b.name.as_str(), b.address.clone(), b.health.as_str()))
        .collect();
    assert_eq!(
        backends,
        [
            ("rules", format!("http://{}", backend.addr), "SERVING"),
            ("search", format!("http://{}", search.addr), "SERVING"),
            ("search", format!("http://{dead}"), "UNKNOWN"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_reflection() {
    let backend = start_rules().await;
    let gateway = Gateway::start_with_env(backend.addr, &[], &[("CHESS_API_KEYS", "k")]).await;
    let mut health = HealthClient::new(gateway.channel().await);
    for service in [
        "",
        "chess.v1.RulesService",
        "chess.v1.GameService",
        "chess.v1.GatewayService",
    ] {
        let answer = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap();
        assert_eq!(
            answer.get_ref().status,
            ServingStatus::Serving as i32,
            "{service:?}"
        );
    }

    // Reflection is open even in keys mode, so grpcurl can list and describe.
    let mut reflection = ServerReflectionClient::new(gateway.channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = reflection
        .server_reflection_info(futures::stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = tokio::time::timeout(WAIT, answers.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
        panic!("unexpected reflection answer {answer:?}");
    };
    let names: HashSet<String> = list.service.into_iter().map(|s| s.name).collect();
    for name in [
        "chess.v1.RulesService",
        "chess.v1.GameService",
        "chess.v1.AnalysisService",
        "chess.v1.GatewayService",
        "grpc.health.v1.Health",
    ] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
}

/// Sends one raw HTTP/1.1 request and reads the whole response (the server closes).
async fn http1(addr: SocketAddr, head: &str, body: &[u8]) -> (String, Vec<u8>) {
    let mut stream = tokio::time::timeout(WAIT, TcpStream::connect(addr))
        .await
        .unwrap()
        .unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut body = raw[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    (head, body)
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = std::str::from_utf8(&raw[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// Splits a gRPC-Web body into its frames: (flag, payload).
fn frames(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
        out.push((body[0], body[5..5 + len].to_vec()));
        body = &body[5 + len..];
    }
    out
}

fn grpc_web_request(
    addr: SocketAddr,
    path: &str,
    message: &impl Message,
    extra: &str,
) -> (String, Vec<u8>) {
    let payload = message.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    body.extend_from_slice(&payload);
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nAccept: application/grpc-web+proto\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    (head, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_over_http1() {
    let backend = start_rules().await;
    let gateway =
        Gateway::start_with_env(backend.addr, &[], &[("CHESS_API_KEYS", "web-key")]).await;
    let request = LegalMovesRequest {
        fen: "from-browser".into(),
        moves: vec![],
    };
    let path = "/chess.v1.RulesService/LegalMoves";

    let (head, body) = grpc_web_request(
        gateway.addr,
        path,
        &request,
        "Authorization: Bearer web-key\r\n",
    );
    let (head, body) = http1(gateway.addr, &head, &body).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/grpc-web+proto"),
        "{head}"
    );
    let frames = frames(&body);
    assert_eq!(frames.len(), 2, "a message and the trailers");
    assert_eq!(frames[0].0, 0);
    let answer = LegalMovesResponse::decode(frames[0].1.as_slice()).unwrap();
    assert_eq!(answer.fen, "echo:from-browser");
    assert_eq!(frames[1].0, 0x80);
    let trailers = String::from_utf8(frames[1].1.clone())
        .unwrap()
        .to_ascii_lowercase();
    assert!(trailers.contains("grpc-status:0"), "{trailers}");

    // The same without a key: UNAUTHENTICATED, as a gRPC-Web status.
    let (head, body) = grpc_web_request(gateway.addr, path, &request, "");
    let (head, _) = http1(gateway.addr, &head, &body).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("grpc-status: 16"),
        "{head}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_for_allowed_origins() {
    let backend = start_rules().await;
    let gateway = Gateway::start(
        backend.addr,
        &["--cors-allow-origin", "https://app.example"],
    )
    .await;
    let preflight = |origin: &str| {
        format!(
            "OPTIONS /chess.v1.RulesService/LegalMoves HTTP/1.1\r\nHost: x\r\nOrigin: {origin}\r\n\
             Access-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: content-type,x-grpc-web,authorization\r\n\
             Connection: close\r\n\r\n"
        )
    };
    let (head, _) = http1(gateway.addr, &preflight("https://app.example"), b"").await;
    let lower = head.to_ascii_lowercase();
    assert!(head.starts_with("HTTP/1.1 204"), "{head}");
    assert!(
        lower.contains("access-control-allow-origin: https://app.example"),
        "{head}"
    );
    assert!(
        lower.contains("access-control-allow-headers:") && lower.contains("authorization"),
        "{head}"
    );
    let (head, _) = http1(gateway.addr, &preflight("https://evil.example"), b"").await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");

    let request = LegalMovesRequest::default();
    let (head, body) = grpc_web_request(
        gateway.addr,
        "/chess.v1.RulesService/LegalMoves",
        &request,
        "Origin: https://app.example\r\n",
    );
    let (head, _) = http1(gateway.addr, &head, &body).await;
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("access-control-allow-origin: https://app.example"),
        "{head}"
    );
    assert!(
        lower.contains("access-control-expose-headers:") && lower.contains("grpc-status"),
        "{head}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_calls() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    rules
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap();
    rules
        .validate_fen(ValidateFenRequest::default())
        .await
        .unwrap_err();
    let (head, body) = http1(
        gateway.metrics,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"",
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let text = String::from_utf8(body).unwrap();
    let handled = |method: &str, code: &str| {
        text.lines().any(|l| {
            l.starts_with("chess_grpc_server_handled_total{")
                && l.contains(&format!("method=\"/chess.v1.RulesService/{method}\""))
                && l.contains(&format!("code=\"{code}\""))
                && l.ends_with(" 1")
        })
    };
    assert!(handled("LegalMoves", "Ok"), "{text}");
    assert!(handled("ValidateFen", "InvalidArgument"), "{text}");
    assert!(text.contains("chess_gateway_watchers"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_calls_in_flight_then_exits_0() {
    let backend = start_rules().await;
    let mut gateway = Gateway::start(backend.addr, &["--shutdown-grace-secs", "10"]).await;
    let channel = gateway.channel().await;
    let mut rules = RulesServiceClient::new(channel.clone());
    let slow = tokio::spawn(async move {
        rules
            .legal_moves(LegalMovesRequest {
                fen: "sleep:1000".into(),
                moves: vec![],
            })
            .await
    });
    let mut games = GameServiceClient::new(channel);
    let mut watch = games
        .watch_game(WatchGameRequest {
            game_id: "g1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    tokio::time::timeout(WAIT, watch.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        backend
            .recorder
            .wait_for("legal_moves sleep:1000", WAIT)
            .await
    );

    let started = Instant::now();
    gateway.terminate();
    // Watch streams end at once, saying why.
    let ended = loop {
        match tokio::time::timeout(WAIT, watch.next()).await.unwrap() {
            Some(Ok(_)) => continue,
            other => break other,
        }
    };
    let status = ended.expect("an error item").unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(status.message().contains("shutting down"), "{status:?}");
    // The unary call in flight completes.
    let answer = tokio::time::timeout(WAIT, slow)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer.get_ref().fen, "echo:sleep:1000");
    let exit = gateway.wait_exit(WAIT).await;
    assert_eq!(exit.code(), Some(0), "stderr:\n{}", gateway.stderr());
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "shutdown waited for the grace period: {:?}",
        started.elapsed()
    );
    // Nothing listens any more.
    assert!(TcpStream::connect(gateway.addr).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_when_idle_exits_0_promptly() {
    let backend = start_rules().await;
    let mut gateway = Gateway::start(backend.addr, &[]).await;
    RulesServiceClient::new(gateway.channel().await)
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap();
    gateway.terminate();
    let exit = gateway.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(exit.code(), Some(0), "stderr:\n{}", gateway.stderr());
}

/// A replica's answer that cannot be read (headers over HTTP/2's limit) fails that call, not
/// the replica: it is not ejected, and the caller is not told the service is unavailable.
#[tokio::test]
async fn an_unreadable_answer_fails_the_call_and_ejects_no_replica() {
    let backend = start_rules().await;
    let (s1, s2) = (start_search("s1").await, start_search("s2").await);
    let replicas = format!("http://{},http://{}", s1.addr, s2.addr);
    let gateway = Gateway::start(backend.addr, &["--search-addr", &replicas]).await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    for _ in 0..4 {
        let status = analysis
            .analyze(AnalyzeRequest {
                fen: common::HUGE_ERROR.to_owned(),
                ..AnalyzeRequest::default()
            })
            .await
            .unwrap_err();
        assert_ne!(status.code(), Code::Unavailable, "{status:?}");
    }
    let text = scrape(&gateway).await;
    assert_eq!(
        metric(&text, "chess_gateway_search_replicas_healthy"),
        2.0,
        "{text}"
    );
    assert_eq!(metric(&text, "chess_gateway_search_ejections_total"), 0.0);
    let r = analysis.analyze(AnalyzeRequest::default()).await.unwrap();
    assert!(r.into_inner().done);
}
