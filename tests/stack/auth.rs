//! The gateway's API keys, the services' metrics and graceful shutdown.

use std::time::Duration;

use chess_integration_tests::status::with_key;
use chess_integration_tests::{Stack, runtime};
use chess_proto::v1::LegalMovesRequest;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use tonic::Code;

#[test]
fn api_keys_metrics_and_graceful_shutdown() {
    let mut stack = Stack::start_with(
        &["--auth", "keys"],
        &[("CHESS_API_KEYS", "alpha-key,beta-key")],
    );
    runtime().block_on(async {
        let mut rules = RulesServiceClient::new(stack.gateway.channel().await);
        assert_eq!(
            rules
                .legal_moves(tonic::Request::new(LegalMovesRequest::default()))
                .await
                .unwrap_err()
                .code(),
            Code::Unauthenticated
        );
        assert_eq!(
            rules
                .legal_moves(with_key(LegalMovesRequest::default(), "wrong"))
                .await
                .unwrap_err()
                .code(),
            Code::Unauthenticated
        );
        assert_eq!(
            rules
                .legal_moves(with_key(LegalMovesRequest::default(), "beta-key"))
                .await
                .unwrap()
                .into_inner()
                .moves
                .len(),
            20
        );
        // The health service stays open for probes.
        let mut health =
            tonic_health::pb::health_client::HealthClient::new(stack.gateway.channel().await);
        let r = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap();
        assert_eq!(
            r.into_inner().status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        );
    });
    // The rules service counted the call that reached it.
    let text = stack.rules.scrape_metrics();
    assert!(
        text.contains("chess_grpc_server_handled_total{")
            && text.contains("LegalMoves")
            && text.contains("code=\"Ok\""),
        "{text}"
    );
    // SIGTERM: both stop cleanly.
    assert!(
        stack
            .gateway
            .terminate(Duration::from_secs(10))
            .is_some_and(|s| s.success())
    );
    assert!(
        stack
            .rules
            .terminate(Duration::from_secs(10))
            .is_some_and(|s| s.success()),
        "{}",
        stack.rules.stderr()
    );
}
