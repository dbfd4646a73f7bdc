//! Size limits, checked before forwarding, and the WatchGame stream limit.

mod common;

use std::time::Duration;

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::*;
use common::*;
use futures::StreamExt;
use tonic::codec::CompressionEncoding::Gzip;
use tonic::{Code, Request};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgn_text_over_the_limit_is_refused_with_a_field_violation() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--max-pgn-bytes", "1000"]).await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);

    let at_limit = rules
        .parse_pgn(ParsePgnRequest {
            pgn: "x".repeat(1000),
        })
        .await
        .unwrap();
    assert_eq!(at_limit.get_ref().valid_games, 1000, "forwarded whole");

    let status = rules
        .parse_pgn(ParsePgnRequest {
            pgn: "x".repeat(1001),
        })
        .await
        .unwrap_err();
    let (field, description) = violation(&status);
    assert_eq!(field, "pgn");
    assert!(
        description.contains("1001 bytes") && description.contains("1000 bytes"),
        "{description}"
    );
    assert_eq!(backend.recorder.events().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn far_oversize_messages_are_refused_cleanly() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--max-pgn-bytes", "1000"]).await;
    let channel = gateway.channel().await;
    // Well past --max-pgn-bytes plus the slack: the transport refuses it before decoding.
    let big = "x".repeat(512 << 10);
    let mut rules = RulesServiceClient::new(channel.clone());
    let call = rules.parse_pgn(ParsePgnRequest { pgn: big.clone() });
    let status = tokio::time::timeout(WAIT, call)
        .await
        .expect("no hang")
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("1000 bytes"), "{status:?}");

    // Compressed, it is the decompressed size that counts.
    let mut rules = RulesServiceClient::new(channel.clone()).send_compressed(Gzip);
    let call = rules.parse_pgn(ParsePgnRequest { pgn: big });
    let status = tokio::time::timeout(WAIT, call)
        .await
        .expect("no hang")
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    // The connection is still good afterwards.
    let mut rules = RulesServiceClient::new(channel);
    rules
        .parse_pgn(ParsePgnRequest {
            pgn: "1. e4 *".into(),
        })
        .await
        .unwrap();
    assert_eq!(backend.recorder.events().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_lists_over_the_limit_are_refused_everywhere() {
    let backend = start_rules().await;
    let search = start_search("s1").await;
    let search_addr = format!("http://{}", search.addr);
    let gateway = Gateway::start(
        backend.addr,
        &["--max-moves", "3", "--search-addr", &search_addr],
    )
    .await;
    let mut rules = RulesServiceClient::new(gateway.channel().await);
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let ok = || vec!["e4".to_owned(); 3];
    let long = || vec!["e4".to_owned(); 4];

    rules
        .legal_moves(LegalMovesRequest {
            fen: String::new(),
            moves: ok(),
        })
        .await
        .unwrap();
    let refusals = [
        rules
            .legal_moves(LegalMovesRequest {
                fen: String::new(),
                moves: long(),
            })
            .await
            .unwrap_err(),
        rules
            .convert_moves(ConvertMovesRequest {
                moves: long(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
        rules
            .position_status(PositionStatusRequest {
                fen: String::new(),
                moves: long(),
            })
            .await
            .unwrap_err(),
        rules
            .write_pgn(WritePgnRequest {
                moves: long(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
        analysis
            .analyze(AnalyzeRequest {
                moves: long(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
        analysis
            .analyze_stream(AnalyzeRequest {
                moves: long(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
    ];
    for status in refusals {
        let (field, description) = violation(&status);
        assert_eq!(field, "moves");
        assert!(
            description.contains("4 moves") && description.contains("limit of 3"),
            "{description}"
        );
    }
    assert_eq!(backend.recorder.events().len(), 1);
    assert_eq!(search.recorder.events().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_are_limited() {
    let backend = start_rules().await;
    let gateway = Gateway::start(backend.addr, &["--max-watchers", "1"]).await;
    let mut games = GameServiceClient::new(gateway.channel().await);
    let mut first = games
        .watch_game(WatchGameRequest {
            game_id: "a".into(),
        })
        .await
        .unwrap()
        .into_inner();
    tokio::time::timeout(WAIT, first.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let status = games
        .watch_game(WatchGameRequest {
            game_id: "b".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("--max-watchers"), "{status:?}");
    // Closing the first stream frees its place.
    drop(first);
    assert!(backend.recorder.wait_for("watch dropped", WAIT).await);
    let mut again = None;
    for _ in 0..100 {
        let mut request = Request::new(WatchGameRequest {
            game_id: "c".into(),
        });
        request.set_timeout(WAIT);
        match games.watch_game(request).await {
            Ok(stream) => {
                again = Some(stream);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    assert!(again.is_some(), "the slot was not freed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_reviews_and_best_moves_are_limited() {
    let backend = start_rules().await;
    let search = start_search("s1").await;
    let search_addr = format!("http://{}", search.addr);
    let gateway = Gateway::start(
        backend.addr,
        &[
            "--max-batch",
            "2",
            "--max-pgn-bytes",
            "1000",
            "--max-moves",
            "3",
            "--search-addr",
            &search_addr,
        ],
    )
    .await;
    let mut analysis = AnalysisServiceClient::new(gateway.channel().await);
    let positions = |n: usize, moves: usize| AnalyzeBatchRequest {
        positions: (0..n)
            .map(|_| AnalyzeRequest {
                moves: vec!["e4".to_owned(); moves],
                ..Default::default()
            })
            .collect(),
    };

    // At the limits: forwarded, one result per position.
    let mut stream = analysis
        .analyze_batch(positions(2, 3))
        .await
        .unwrap()
        .into_inner();
    let mut indexes = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, stream.next()).await.unwrap() {
        indexes.push(item.unwrap().index);
    }
    assert_eq!(indexes, [1, 0]);
    let evaluated = analysis
        .evaluate_positions(EvaluatePositionsRequest {
            fens: vec![String::new(); 2],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (evaluated.evaluations.len(), evaluated.evaluator.as_str()),
        (2, "s1")
    );
    let reviewed = analysis
        .review_game(ReviewGameRequest {
            pgn: "x".repeat(1000),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reviewed.annotated_pgn, "s1");
    let events = search.recorder.events();
    assert_eq!(
        events,
        [
            "analyze_batch 2",
            "evaluate_positions 2",
            "review_game 1000"
        ]
    );

    let refusals = [
        (
            analysis
                .analyze_batch(positions(3, 0))
                .await
                .map(|_| ())
                .unwrap_err(),
            "positions",
            "3 positions",
        ),
        (
            analysis
                .analyze_batch(positions(2, 4))
                .await
                .map(|_| ())
                .unwrap_err(),
            "positions[0].moves",
            "4 moves",
        ),
        (
            analysis
                .evaluate_positions(EvaluatePositionsRequest {
                    fens: vec![String::new(); 3],
                })
                .await
                .map(|_| ())
                .unwrap_err(),
            "fens",
            "3 positions",
        ),
        (
            analysis
                .review_game(ReviewGameRequest {
                    pgn: "x".repeat(1001),
                    ..Default::default()
                })
                .await
                .map(|_| ())
                .unwrap_err(),
            "pgn",
            "1001 bytes",
        ),
        (
            analysis
                .best_move(BestMoveRequest {
                    moves: vec!["e4".to_owned(); 4],
                    ..Default::default()
                })
                .await
                .map(|_| ())
                .unwrap_err(),
            "moves",
            "4 moves",
        ),
    ];
    for (status, want_field, want_text) in refusals {
        let (field, description) = violation(&status);
        assert_eq!(field, want_field, "{status:?}");
        assert!(description.contains(want_text), "{description}");
    }
    assert_eq!(
        search.recorder.events(),
        events,
        "nothing more was forwarded"
    );
}
