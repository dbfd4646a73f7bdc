//! Forwarding to the rules service: answers, errors, metadata, deadlines, cancellation,
//! streams, compression, and an unreachable backend.

mod common;

use std::time::{Duration, Instant};

use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::*;
use common::*;
use futures::StreamExt;
use tonic::codec::CompressionEncoding::Gzip;
use tonic::{Code, Request};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwards_unary_calls_with_their_metadata() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);

    let mut request = Request::new(LegalMovesRequest {
        fen: "8/8 w".into(),
        moves: vec!["e4".into(), "e5".into()],
    });
    request
        .metadata_mut()
        .insert("x-request-id", "req-42".parse().unwrap());
    let response = rules.legal_moves(request).await.unwrap();
    assert_eq!(response.get_ref().fen, "echo:8/8 w");
    assert_eq!(response.get_ref().moves.len(), 2);
    // Response metadata set by the backend comes through; the request id went to the backend.
    assert_eq!(echoed(&response, "x-received-request-id"), "req-42");
    assert_eq!(backend.recorder.events(), ["legal_moves 8/8 w"]);

    let mut games = GameServiceClient::new(gateway.channel().await);
    let game = games
        .create_game(CreateGameRequest::default())
        .await
        .unwrap();
    assert_eq!(game.get_ref().game_id, "g1");
    let status = games
        .get_game(GetGameRequest {
            game_id: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (Code::NotFound, "no game \"nope\"")
    );
    let status = games
        .make_move(MakeMoveRequest {
            game_id: "g1".into(),
            r#move: "e4".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (Code::FailedPrecondition, "not your move: e4")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_errors_pass_through_unchanged() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let status = rules
        .validate_fen(ValidateFenRequest { fen: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(
        status.message(),
        "fen: invalid FEN \"x\": expected 6 fields"
    );
    assert_eq!(
        violation(&status),
        ("fen".into(), "invalid FEN \"x\": expected 6 fields".into())
    );
    assert_eq!(status.metadata().get("x-backend").unwrap(), "rules-fake");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passes_the_callers_deadline_on() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--default-deadline-secs", "42"]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);

    let mut request = Request::new(LegalMovesRequest::default());
    request.set_timeout(Duration::from_secs(5));
    let response = rules.legal_moves(request).await.unwrap();
    let received = grpc_timeout(&echoed(&response, "x-received-timeout"));
    assert!(
        received <= Duration::from_secs(5) && received > Duration::from_millis(4500),
        "{received:?}"
    );

    // No deadline from the caller: the gateway's default for unary calls.
    let response = rules
        .legal_moves(LegalMovesRequest::default())
        .await
        .unwrap();
    let received = grpc_timeout(&echoed(&response, "x-received-timeout"));
    assert!(
        received <= Duration::from_secs(42) && received > Duration::from_secs(41),
        "{received:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_deadline_ends_the_call_and_the_backend_call() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let mut request = Request::new(LegalMovesRequest {
        fen: "sleep:forever".into(),
        moves: vec![],
    });
    request.set_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let status = rules.legal_moves(request).await.unwrap_err();
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        backend.recorder.wait_for("legal_moves dropped", WAIT).await,
        "{:?}",
        backend.recorder.events()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_cancels_the_backend_call() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let call = rules.legal_moves(LegalMovesRequest {
        fen: "sleep:forever".into(),
        moves: vec![],
    });
    // Give up on the call from the client side (no deadline sent): the future is dropped.
    let gave_up = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(gave_up.is_err());
    assert!(
        backend.recorder.wait_for("legal_moves dropped", WAIT).await,
        "{:?}",
        backend.recorder.events()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_game_streams_and_a_dropped_stream_cancels_upstream() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &[]).await;
    let mut games = GameServiceClient::new(gateway.channel().await);
    let response = games
        .watch_game(WatchGameRequest {
            game_id: "g7".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        echoed(&response, "x-received-timeout"),
        "none",
        "streams get no default deadline"
    );
    let mut stream = response.into_inner();
    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.kind(), game_event::Kind::Snapshot);
    assert_eq!(first.state.unwrap().game_id, "g7");
    for ply in 1..=3 {
        let event = tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (event.kind(), event.state.unwrap().ply),
            (game_event::Kind::Move, ply)
        );
    }
    assert!(
        !backend
            .recorder
            .events()
            .contains(&"watch dropped".to_owned())
    );
    drop(stream);
    assert!(
        backend.recorder.wait_for("watch dropped", WAIT).await,
        "{:?}",
        backend.recorder.events()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_is_accepted_and_sent_on_both_hops() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--backend-compression", "gzip"]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await)
        .send_compressed(Gzip)
        .accept_compressed(Gzip);
    // 300 moves: a request of 1200 bytes, over the 1 KiB from which backend calls are gzipped.
    let response = rules
        .convert_moves(ConvertMovesRequest {
            moves: vec!["e4".into(); 300],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        response.metadata().get("grpc-encoding").unwrap(),
        "gzip",
        "the gateway compresses its answer"
    );
    assert_eq!(
        echoed(&response, "x-received-encoding"),
        "gzip",
        "the gateway compresses its large backend calls"
    );
    assert_eq!(response.get_ref().moves.len(), 60_000);

    // A client that does not ask for gzip gets a plain answer.
    let mut plain = RulesServiceClient::new(gateway.channel().await);
    let response = plain
        .convert_moves(ConvertMovesRequest::default())
        .await
        .unwrap();
    assert!(response.metadata().get("grpc-encoding").is_none());
    assert_eq!(
        echoed(&response, "x-received-encoding"),
        "none",
        "a small backend call goes plain, even with --backend-compression gzip"
    );

    // --backend-compression none, the default: plain requests to the backend, large ones too.
    for args in [&[][..], &["--backend-compression", "none"][..]] {
        let gateway = Gateway::start(backend.addr, args).await;
        let mut rules = RulesServiceClient::new(gateway.channel().await).send_compressed(Gzip);
        let response = rules
            .convert_moves(ConvertMovesRequest {
                moves: vec!["e4".into(); 300],
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(echoed(&response, "x-received-encoding"), "none", "{args:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_backend_is_unavailable_naming_it() {
    let dead = closed_port();
    let gateway = Gateway::start(dead, &[]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    for _ in 0..2 {
        let mut request = Request::new(LegalMovesRequest::default());
        request.set_timeout(WAIT);
        let status = rules.legal_moves(request).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert!(
            status
                .message()
                .contains(&format!("rules service at http://{dead}")),
            "{status:?}"
        );
    }
    let mut games = GameServiceClient::new(gateway.channel().await);
    let status = games
        .watch_game(WatchGameRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(status.message().contains(&dead.to_string()), "{status:?}");
}
