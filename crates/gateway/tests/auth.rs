//! API keys, open mode, rate limits, and configurations the gateway refuses.

mod common;

use std::time::Duration;

use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::*;
use common::*;
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_mode_needs_a_known_key() {
    let backend = start_rules().await;
    let dir = std::env::temp_dir().join(format!("chess-gateway-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("keys");
    std::fs::write(&file, "# team keys\n\nfile-key-1\n  file-key-2  \n").unwrap();
    let gateway = Gateway::start_with_env(
        backend.addr,
        &["--auth", "keys", "--api-keys-file", file.to_str().unwrap()],
        &[("CHESS_API_KEYS", "env-key-1,env-key-2")],
    )
    .await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);

    let status = rules
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(
        status.message().contains("missing API key") && status.message().contains("Bearer"),
        "{status:?}"
    );

    let status = rules
        .legal_moves(with_key(LegalMovesRequest::default(), "guess"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(status.message().contains("not recognised"), "{status:?}");
    assert!(
        !gateway.stderr().contains("guess"),
        "the key must not be logged"
    );

    for key in ["file-key-1", "file-key-2", "env-key-2"] {
        let response = rules
            .legal_moves(with_key(LegalMovesRequest::default(), key))
            .await
            .unwrap();
        assert_eq!(
            echoed(&response, "x-received-authorization"),
            "none",
            "the key stays at the gateway"
        );
    }
    assert_eq!(
        backend.recorder.events().len(),
        3,
        "refused calls never reach the backend"
    );

    let mut info = GatewayServiceClient::new(gateway.channel().await);
    assert_eq!(
        info.server_info(ServerInfoRequest {})
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );
    assert!(
        info.server_info(with_key(ServerInfoRequest {}, "env-key-1"))
            .await
            .unwrap()
            .get_ref()
            .auth_required
    );

    // Probes stay open.
    let mut health = HealthClient::new(gateway.channel().await);
    let answer = health
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();
    assert_eq!(
        answer.get_ref().status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_mode_needs_no_key() {
    let backend = start_rules().await;
    // `auto` on loopback without keys is open.
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    rules
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap();
    let mut info = GatewayServiceClient::new(gateway.channel().await);
    assert!(
        !info
            .server_info(ServerInfoRequest {})
            .await
            .unwrap()
            .get_ref()
            .auth_required
    );

    // Explicit open mode with keys configured ignores them.
    let gateway = Gateway::start_with_env(
        backend.addr,
        &["--auth", "open"],
        &[("CHESS_API_KEYS", "k")],
    )
    .await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    rules
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_per_key() {
    let backend = start_rules().await;
    let gateway = Gateway::start_with_env(
        backend.addr,
        &["--rate-limit", "1", "--rate-burst", "3"],
        &[("CHESS_API_KEYS", "a,b")],
    )
    .await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let (admitted, status) = until_refused(&mut rules, Some("a")).await;
    // The burst, plus any token that came back while the calls ran.
    assert!((3..=5).contains(&admitted), "{admitted} calls admitted");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("1 requests per second (burst 3)"),
        "{status:?}"
    );
    let retry = status
        .get_details_retry_info()
        .expect("RetryInfo detail")
        .retry_delay
        .unwrap();
    assert!(
        retry > Duration::ZERO && retry <= Duration::from_secs(1),
        "{retry:?}"
    );
    // Another key has its own bucket.
    rules
        .legal_moves(with_key(LegalMovesRequest::default(), "b"))
        .await
        .unwrap();
    // Tokens come back at the configured rate.
    tokio::time::sleep(retry + Duration::from_millis(50)).await;
    rules
        .legal_moves(with_key(LegalMovesRequest::default(), "a"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_per_address_in_open_mode() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--rate-limit", "2"]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let (admitted, status) = until_refused(&mut rules, None).await;
    assert!((2..=5).contains(&admitted), "{admitted} calls admitted");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("this client address"),
        "{status:?}"
    );
    // Health checks are not counted.
    let mut health = HealthClient::new(gateway.channel().await);
    for _ in 0..5 {
        health
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap();
    }
}

/// Calls LegalMoves (with `key`) until one is refused: how many were admitted, and the refusal.
async fn until_refused(
    rules: &mut RulesServiceClient<tonic::transport::Channel>,
    key: Option<&str>,
) -> (usize, tonic::Status) {
    for admitted in 0..50 {
        let request = match key {
            Some(key) => with_key(LegalMovesRequest::default(), key),
            None => tonic::Request::new(LegalMovesRequest::default()),
        };
        if let Err(status) = rules.legal_moves(request).await {
            return (admitted, status);
        }
    }
    panic!("50 calls and none refused");
}

#[test]
fn refuses_bad_configurations_with_exit_code_2() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--listen", "0.0.0.0:0", "--auth", "open"],
            "--allow-open-nonlocal",
        ),
        (&["--listen", "0.0.0.0:0"], "needs API keys"),
        (&["--auth", "keys"], "none are configured"),
        (
            &["--api-keys-file", "/nonexistent/chess-keys"],
            "/nonexistent/chess-keys",
        ),
        (&["--rules-addr", "https://rules:1"], "https"),
        (&["--rate-burst", "0"], "--rate-burst"),
    ];
    for (args, expected) in cases {
        let (code, stderr) = refuse(args, &[]);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // One clear line, not a backtrace or a usage dump.
    let (_, stderr) = refuse(&["--auth", "keys"], &[]);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
