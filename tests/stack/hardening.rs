//! Issue 15's service defects, one test each: what a hostile but careful client found, kept
//! out for good.

use std::time::{Duration, Instant};

use chess_integration_tests::analysis::{long_analysis, wait_for_active_searches};
use chess_integration_tests::metrics::{eventually_async, metric};
use chess_integration_tests::raw::Raw;
use chess_integration_tests::status::{status_header_bytes, with_key};
use chess_integration_tests::{Replicated, Stack, TempDir, assert_field_error, runtime, spawn};
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::{
    AnalyzeRequest, BestMoveRequest, CreateGameRequest, EngineMoveRequest,
    EvaluatePositionsRequest, LegalMovesRequest, SearchLimits, Strength, WatchGameRequest, outcome,
};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{Code, Request};
use tonic_types::StatusExt;

/// gRPC's usual limit on the response metadata a client accepts.
const MAX_METADATA_BYTES: usize = 8 * 1024;

/// Item 1: a 4 KB move (LegalMoves) and an 8 KB one (Analyze) through the gateway get a short
/// INVALID_ARGUMENT that quotes the move cut short, and both search replicas stay in rotation.
#[test]
fn a_huge_bad_move_gets_a_short_error_and_ejects_no_replica() {
    let stack = Replicated::start(&[], &[]);
    runtime().block_on(async {
        let channel = stack.gateway.channel().await;
        let mut rules = RulesServiceClient::new(channel.clone());
        let status = assert_field_error(
            rules
                .legal_moves(LegalMovesRequest {
                    fen: String::new(),
                    moves: vec!["N".repeat(4234)],
                })
                .await,
            Code::InvalidArgument,
            "moves[0]",
        );
        let bytes = status_header_bytes(&status);
        assert!(bytes < 2048, "{bytes} bytes of metadata: {status:?}");
        assert!(status.message().contains("4234"), "{}", status.message());

        let mut search = AnalysisServiceClient::new(channel.clone());
        for _ in 0..3 {
            let status = assert_field_error(
                search
                    .analyze(AnalyzeRequest {
                        moves: vec!["N".repeat(8000)],
                        ..AnalyzeRequest::default()
                    })
                    .await,
                Code::InvalidArgument,
                "moves[0]",
            );
            let bytes = status_header_bytes(&status);
            assert!(bytes < 2048, "{bytes} bytes of metadata: {status:?}");
        }
        // Multi-byte characters (percent-encoded three times over in the message header).
        let status = assert_field_error(
            rules
                .legal_moves(LegalMovesRequest {
                    fen: String::new(),
                    moves: vec!["♞".repeat(3000)],
                })
                .await,
            Code::InvalidArgument,
            "moves[0]",
        );
        let bytes = status_header_bytes(&status);
        assert!(bytes < MAX_METADATA_BYTES, "{bytes} bytes of metadata");
    });
    assert_eq!(
        stack.rotation(),
        (2.0, 0.0),
        "replicas in rotation, ejections"
    );
}

/// Item 10: a message that is not valid protobuf, or a string field that is not UTF-8, is
/// the caller's mistake: INVALID_ARGUMENT, at the gateway and at each backend.
#[test]
fn malformed_protobuf_and_invalid_utf8_are_invalid_argument() {
    let stack = Stack::start();
    runtime().block_on(async {
        let cases: [(&str, Vec<u8>); 4] = [
            // Field 1 (fen) as a string holding 0xff.
            ("/chess.v1.RulesService/ValidateFen", vec![0x0a, 0x01, 0xff]),
            // A length past the end.
            ("/chess.v1.RulesService/LegalMoves", vec![0x0a, 0x40, b'x']),
            // Wire type 7 does not exist.
            ("/chess.v1.AnalysisService/Analyze", vec![0x0f, 0x01]),
            // moves[0] with an overlong UTF-8 encoding.
            (
                "/chess.v1.AnalysisService/Analyze",
                vec![0x12, 0x02, 0xc0, 0xaf],
            ),
        ];
        for service in [&stack.gateway, &stack.rules, &stack.search] {
            let channel = service.channel().await;
            for (path, body) in &cases {
                if service.name == "chess-rules-service" && path.contains("Analysis")
                    || service.name == "chess-search-service" && path.contains("Rules")
                {
                    continue;
                }
                let mut grpc = tonic::client::Grpc::new(channel.clone());
                grpc.ready().await.unwrap();
                let status = grpc
                    .unary(
                        Request::new(body.clone()),
                        PathAndQuery::from_static(path),
                        Raw,
                    )
                    .await
                    .unwrap_err();
                assert_eq!(
                    status.code(),
                    Code::InvalidArgument,
                    "{path} at {}: {status:?}",
                    service.name
                );
            }
        }
    });
}

/// Item 4: unary calls cancelled by their deadline or by their client leave
/// `chess_grpc_server_in_flight` at zero, at the search service and at the gateway.
#[test]
fn cancelled_unary_calls_leave_no_call_in_flight() {
    let stack = Stack::start();
    runtime().block_on(async {
        let channel = stack.gateway.channel().await;
        let direct = stack.search.channel().await;
        let mut calls = Vec::new();
        for i in 0..16 {
            let ch = if i % 2 == 0 {
                channel.clone()
            } else {
                direct.clone()
            };
            calls.push(tokio::spawn(async move {
                let mut c = AnalysisServiceClient::new(ch);
                if i % 4 < 2 {
                    let mut req = Request::new(long_analysis());
                    req.set_timeout(Duration::from_millis(200));
                    c.analyze(req).await.map(|_| ())
                } else {
                    let mut req = Request::new(BestMoveRequest {
                        limits: Some(SearchLimits {
                            time_ms: 20_000,
                            ..SearchLimits::default()
                        }),
                        ..BestMoveRequest::default()
                    });
                    req.set_timeout(Duration::from_millis(200));
                    c.best_move(req).await.map(|_| ())
                }
            }));
        }
        // Four more that the client abandons.
        for _ in 0..4 {
            let ch = channel.clone();
            let call = tokio::spawn(async move {
                AnalysisServiceClient::new(ch)
                    .analyze(long_analysis())
                    .await
                    .map(|_| ())
            });
            tokio::time::sleep(Duration::from_millis(100)).await;
            call.abort();
        }
        for call in calls {
            let r = call.await.unwrap();
            assert!(r.is_err(), "a 20 s search ended within 200 ms");
        }
        for service in [&stack.search, &stack.gateway] {
            eventually_async(
                &format!(
                    "{} still counts calls in flight:\n{}",
                    service.name,
                    service
                        .scrape_metrics()
                        .lines()
                        .filter(|l| l.contains("in_flight"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                || {
                    metric(
                        &service.scrape_metrics(),
                        "chess_grpc_server_in_flight",
                        &[],
                    ) == 0.0
                },
            )
            .await;
        }
    });
}

/// Item 5: failed authentication is limited per caller address (then RESOURCE_EXHAUSTED with
/// RetryInfo, even for a good key: guessing stops) and logged in a few lines, not one WARN per
/// failure.
#[test]
fn failed_authentication_is_limited_per_address() {
    let stack = Stack::start_with(&["--auth", "keys"], &[("CHESS_API_KEYS", "alpha-key")]);
    runtime().block_on(async {
        let mut rules = RulesServiceClient::new(stack.gateway.channel().await);
        let mut unauthenticated = 0;
        let mut limited = 0;
        for i in 0..300 {
            let s = rules
                .legal_moves(with_key(
                    LegalMovesRequest::default(),
                    &format!("guess-{i}"),
                ))
                .await
                .unwrap_err();
            match s.code() {
                Code::Unauthenticated => unauthenticated += 1,
                Code::ResourceExhausted => {
                    assert!(
                        s.get_error_details().retry_info().is_some(),
                        "no RetryInfo: {s:?}"
                    );
                    limited += 1;
                }
                other => panic!("{other:?}: {s:?}"),
            }
        }
        assert!(
            (1..=20).contains(&unauthenticated) && limited == 300 - unauthenticated,
            "{unauthenticated} unauthenticated, {limited} limited"
        );
        // The address is limited, whatever key it sends now.
        let s = rules
            .legal_moves(with_key(LegalMovesRequest::default(), "alpha-key"))
            .await
            .unwrap_err();
        assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    });
    let log = stack.gateway.stderr();
    let warnings = log.lines().filter(|l| l.contains("WARN")).count();
    assert!(warnings <= 5, "{warnings} WARN lines:\n{log}");
}

/// Item 9: a game over by fivefold repetition has no move to analyse: Analyze reports the
/// outcome (no best move, no principal variation) and BestMove refuses, as for checkmate.
#[test]
fn analysis_of_a_finished_game_reports_its_outcome() {
    let dir = TempDir::new("finished");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "1"], &[]);
    runtime().block_on(async {
        let mut c = AnalysisServiceClient::new(svc.channel().await);
        let shuffle: Vec<String> = ["Nf3", "Nf6", "Ng1", "Ng8"]
            .iter()
            .cycle()
            .take(16)
            .map(|m| (*m).to_owned())
            .collect();
        let r = c
            .analyze(AnalyzeRequest {
                moves: shuffle.clone(),
                limits: Some(SearchLimits {
                    depth: 4,
                    ..SearchLimits::default()
                }),
                ..AnalyzeRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        let o = r.outcome.as_ref().expect("an outcome");
        assert_eq!(o.rule(), outcome::Rule::FivefoldRepetition, "{o:?}");
        assert_eq!(o.result(), outcome::Result::Draw);
        assert!(r.best_move.is_none(), "{r:?}");
        assert!(r.lines.iter().all(|l| l.pv.is_empty()), "{r:?}");
        assert!(r.done);
        // One move short of it, the game goes on.
        let r = c
            .analyze(AnalyzeRequest {
                moves: shuffle[..15].to_vec(),
                limits: Some(SearchLimits {
                    depth: 2,
                    ..SearchLimits::default()
                }),
                ..AnalyzeRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(r.outcome.is_none() && r.best_move.is_some(), "{r:?}");

        let s = c
            .best_move(BestMoveRequest {
                moves: shuffle,
                ..BestMoveRequest::default()
            })
            .await
            .unwrap_err();
        assert_eq!(s.code(), Code::FailedPrecondition, "{s:?}");
        assert!(s.message().contains("fivefold"), "{}", s.message());
        // A dead position (king against king) is over too.
        let s = c
            .best_move(BestMoveRequest {
                fen: "8/8/4k3/8/8/3K4/8/8 w - - 0 1".to_owned(),
                ..BestMoveRequest::default()
            })
            .await
            .unwrap_err();
        assert_eq!(s.code(), Code::FailedPrecondition, "{s:?}");
    });
}

/// Item 10: EngineMove reads a game id in every form GetGame reads.
#[test]
fn engine_move_reads_every_game_id_form_get_game_reads() {
    let stack = Stack::start();
    runtime().block_on(async {
        let channel = stack.gateway.channel().await;
        let id = GameServiceClient::new(channel.clone())
            .create_game(CreateGameRequest::default())
            .await
            .unwrap()
            .into_inner()
            .game_id;
        let mut gateway = GatewayServiceClient::new(channel);
        for form in [
            format!("{{{id}}}"),
            format!("urn:uuid:{id}"),
            id.to_uppercase(),
        ] {
            let r = gateway
                .engine_move(EngineMoveRequest {
                    game_id: form.clone(),
                    strength: Some(Strength {
                        max_depth: 2,
                        ..Strength::default()
                    }),
                    limits: None,
                    play: false,
                })
                .await
                .unwrap_or_else(|e| panic!("{form}: {e:?}"))
                .into_inner();
            assert_eq!(r.game.unwrap().game_id, id);
        }
    });
}

/// Item 10: the search service's "busy" answer says when to retry, as the rate limiter's does.
#[test]
fn a_busy_search_service_says_when_to_retry() {
    let dir = TempDir::new("busy");
    let svc = spawn::search(
        &dir,
        &["--hash-mb", "16", "--workers", "1", "--queue", "1"],
        &[],
    );
    runtime().block_on(async {
        let c = AnalysisServiceClient::new(svc.channel().await);
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut c = c.clone();
            held.push(tokio::spawn(
                async move { c.analyze(long_analysis()).await },
            ));
        }
        wait_for_active_searches(&svc, 1.0).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let s = c.clone().analyze(long_analysis()).await.unwrap_err();
        assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
        let retry = s.get_error_details().retry_info().cloned();
        assert!(
            retry.is_some_and(|r| r.retry_delay.is_some_and(|d| d > Duration::ZERO)),
            "no RetryInfo with a delay: {s:?}"
        );
        for h in held {
            h.abort();
        }
    });
}

/// Item 10: EvaluatePositions reads `""` as the start position, as Analyze does.
#[test]
fn evaluate_positions_reads_an_empty_fen_as_the_start_position() {
    let dir = TempDir::new("eval-empty");
    let svc = spawn::search(
        &dir,
        &["--hash-mb", "16", "--workers", "1", "--eval-file", "hand"],
        &[],
    );
    runtime().block_on(async {
        let mut c = AnalysisServiceClient::new(svc.channel().await);
        let r = c
            .evaluate_positions(EvaluatePositionsRequest {
                fens: vec![
                    String::new(),
                    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
                ],
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.evaluations.len(), 2);
        assert_eq!(r.evaluations[0], r.evaluations[1]);
    });
}

/// Item 10: `--max-watchers` is shared fairly: one caller may hold at most
/// `--max-watchers-per-caller` streams, and another caller still gets its own.
#[test]
fn one_caller_cannot_take_every_watch_slot() {
    let stack = Stack::start_with(
        &[
            "--auth",
            "keys",
            "--max-watchers",
            "10",
            "--max-watchers-per-caller",
            "2",
        ],
        &[("CHESS_API_KEYS", "alpha-key,beta-key")],
    );
    runtime().block_on(async {
        let mut games = GameServiceClient::new(stack.gateway.channel().await);
        let id = games
            .create_game(with_key(CreateGameRequest::default(), "alpha-key"))
            .await
            .unwrap()
            .into_inner()
            .game_id;
        let watch = |key: &str| {
            with_key(
                WatchGameRequest {
                    game_id: id.clone(),
                },
                key,
            )
        };
        let mut open = Vec::new();
        for _ in 0..2 {
            open.push(games.watch_game(watch("alpha-key")).await.unwrap());
        }
        let s = games.watch_game(watch("alpha-key")).await.unwrap_err();
        assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
        assert!(s.message().contains("per-caller"), "{}", s.message());
        open.push(games.watch_game(watch("beta-key")).await.unwrap());
        // A stream closed gives its caller the place back.
        drop(open.remove(0));
        let started = Instant::now();
        loop {
            match games.watch_game(watch("alpha-key")).await {
                Ok(s) => {
                    open.push(s);
                    break;
                }
                Err(s) if started.elapsed() < Duration::from_secs(10) => {
                    assert_eq!(s.code(), Code::ResourceExhausted);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(s) => panic!("the place never came back: {s:?}"),
            }
        }
    });
}

/// Found by the fuzz test: a WatchGame stream (which never ends by itself) ran on past the
/// caller's deadline, at the gateway and at the rules service. It ends with DEADLINE_EXCEEDED.
#[test]
fn a_watch_ends_at_the_callers_deadline() {
    let stack = Stack::start();
    runtime().block_on(async {
        let id = GameServiceClient::new(stack.gateway.channel().await)
            .create_game(CreateGameRequest::default())
            .await
            .unwrap()
            .into_inner()
            .game_id;
        for service in [&stack.gateway, &stack.rules] {
            let mut games = GameServiceClient::new(service.channel().await);
            let mut req = Request::new(WatchGameRequest {
                game_id: id.clone(),
            });
            req.set_timeout(Duration::from_millis(300));
            let started = Instant::now();
            let mut stream = games.watch_game(req).await.unwrap().into_inner();
            assert!(stream.message().await.unwrap().is_some(), "the snapshot");
            let end = tokio::time::timeout(Duration::from_secs(10), stream.message())
                .await
                .unwrap_or_else(|_| panic!("{}: the watch outlived its deadline", service.name));
            let status = end.unwrap_err();
            assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
            assert!(started.elapsed() < Duration::from_secs(5));
        }
        for service in [&stack.gateway, &stack.rules] {
            eventually_async("a watch still counted", || {
                let text = service.scrape_metrics();
                metric(&text, "chess_gateway_watchers", &[])
                    + metric(&text, "chess_game_watchers", &[])
                    == 0.0
            })
            .await;
        }
    });
}
