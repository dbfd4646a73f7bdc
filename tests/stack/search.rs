//! chess.v1.AnalysisService, straight to the search service and through the gateway: analysis
//! (unary, streaming, batch), levelled best moves, game review, bulk evaluation, overload,
//! cancellation and every bad input.

use std::time::{Duration, Instant};

use chess_integration_tests::analysis::{
    ITALIAN, SCHOLAR, analyze, assert_cancels_stopped_fast, client, depth, long_analysis, mate_in,
    value, wait_for_active_searches, wait_until_cancelled,
};
use chess_integration_tests::{Stack, TempDir, assert_field_error, bin, runtime, spawn};
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::{
    AnalyzeBatchRequest, AnalyzeRequest, BestMoveRequest, EvaluatePositionsRequest, Judgement,
    ReviewGameRequest, SearchLimits, Strength,
};
use tonic::Code;

#[test]
fn analysis_lines_are_complete_and_ordered() {
    let dir = TempDir::new("search-analyze");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "2"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let r = c
            .analyze(analyze(ITALIAN, depth(7), 3))
            .await
            .unwrap()
            .into_inner();
        assert!(r.done);
        assert_eq!(r.fen, ITALIAN);
        assert_eq!(r.lines.len(), 3);
        let firsts: Vec<&str> = r.lines.iter().map(|l| l.pv[0].uci.as_str()).collect();
        assert_eq!(firsts.len(), 3);
        assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
        for (i, l) in r.lines.iter().enumerate() {
            assert_eq!(l.multipv, i as u32 + 1);
            assert_eq!(l.depth, 7);
            assert!(l.seldepth >= l.depth);
            assert!(l.nodes > 0 && l.pv.len() >= 2, "{l:?}");
            let wdl = l.wdl.unwrap();
            assert_eq!(wdl.win + wdl.draw + wdl.loss, 1000);
            for m in &l.pv {
                assert!(!m.uci.is_empty() && !m.san.is_empty() && !m.coordinate.is_empty());
            }
            if i > 0 {
                assert!(
                    value(&r.lines[i - 1].score) >= value(&l.score),
                    "lines best first"
                );
            }
        }
        assert_eq!(r.best_move.as_ref().unwrap().uci, r.lines[0].pv[0].uci);

        // Moves from the FEN are played first (and the answer names the position reached).
        let mut req = analyze("", depth(3), 1);
        req.moves = vec![
            "e4".into(),
            "e7e5".into(),
            "Ng1-f3".into(),
            "Nc6".into(),
            "Bc4".into(),
        ];
        let r = c.analyze(req).await.unwrap().into_inner();
        assert_eq!(r.fen, ITALIAN);

        // A mate is found with its distance, and a mate search stops there.
        let r = c
            .analyze(analyze(SCHOLAR, depth(4), 1))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
        assert_eq!(mate_in(&r.lines[0].score), Some(1));
        let mate2 = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1";
        let limits = Some(SearchLimits {
            mate: 2,
            ..SearchLimits::default()
        });
        let r = c
            .analyze(analyze(mate2, limits, 1))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(mate_in(&r.lines[0].score), Some(2), "{r:?}");
        assert_eq!(r.best_move.unwrap().san, "Nf6+");

        // No legal move: one line with the verdict and no best move.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        let r = c
            .analyze(analyze(mated, depth(3), 1))
            .await
            .unwrap()
            .into_inner();
        assert!(r.best_move.is_none());
        assert_eq!(mate_in(&r.lines[0].score), Some(0));

        // No limit at all: the server's default time (1 s) ends the search.
        let started = Instant::now();
        let r = c.analyze(analyze("", None, 1)).await.unwrap().into_inner();
        assert!(r.best_move.is_some());
        assert!(started.elapsed() < Duration::from_secs(10));
    });
}

#[test]
fn streaming_sends_every_depth_then_the_result() {
    let dir = TempDir::new("search-stream");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "1"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let mut stream = c
            .analyze_stream(analyze(ITALIAN, depth(6), 2))
            .await
            .unwrap()
            .into_inner();
        let mut depths = Vec::new();
        let mut last = None;
        while let Some(m) = stream.message().await.unwrap() {
            assert!(last.is_none(), "nothing after the final message");
            if m.done {
                last = Some(m);
            } else {
                assert_eq!(m.lines.len(), 2, "every progress message has all the lines");
                assert!(m.lines.iter().all(|l| l.depth == m.lines[0].depth));
                depths.push(m.lines[0].depth);
            }
        }
        assert_eq!(depths, [1, 2, 3, 4, 5, 6]);
        let last = last.expect("a final message");
        assert_eq!(last.lines.len(), 2);
        assert_eq!(last.lines[0].depth, 6);
    });
}

#[test]
fn a_batch_streams_each_position_as_it_finishes() {
    let dir = TempDir::new("search-batch");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "2"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let fens = [
            "",
            ITALIAN,
            SCHOLAR,
            "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1",
            "8/8/8/8/8/5k2/8/4K2R w K - 0 1",
        ];
        let positions = fens
            .iter()
            .enumerate()
            .map(|(i, f)| analyze(f, depth(3 + i as u32), 1 + (i % 2) as u32))
            .collect();
        let mut stream = c
            .analyze_batch(AnalyzeBatchRequest { positions })
            .await
            .unwrap()
            .into_inner();
        let mut seen = vec![false; fens.len()];
        while let Some(m) = stream.message().await.unwrap() {
            let i = m.index as usize;
            assert!(!seen[i], "position {i} answered twice");
            seen[i] = true;
            let r = m.result.unwrap();
            assert!(r.done);
            assert_eq!(r.lines[0].depth, 3 + i as u32);
            assert_eq!(r.lines.len(), 1 + i % 2);
            if i == 2 {
                assert_eq!(r.best_move.unwrap().san, "Qxf7#");
            }
        }
        assert!(seen.iter().all(|s| *s), "{seen:?}");
    });
}

#[test]
fn best_move_plays_at_a_level() {
    let dir = TempDir::new("search-best");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "1"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let req = |fen: &str, elo: u32, seed: u64| BestMoveRequest {
            fen: fen.into(),
            moves: vec![],
            strength: Some(Strength {
                elo,
                seed,
                ..Strength::default()
            }),
            limits: None,
        };
        // Full strength (with the server's default time) and a strong level find the mate.
        let r = c.best_move(req(SCHOLAR, 0, 0)).await.unwrap().into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
        let r = c
            .best_move(req(SCHOLAR, 2800, 5))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
        // No setting plays at 2800: the strongest level is played, and the answer says which.
        assert!((2500..2800).contains(&r.elo), "{}", r.elo);
        let again = c.best_move(req(SCHOLAR, r.elo, 5)).await.unwrap();
        assert_eq!(again.into_inner().elo, r.elo);
        let low = c.best_move(req(ITALIAN, 1500, 5)).await.unwrap();
        assert_eq!(low.into_inner().elo, 1500);
        // A seeded level gives the same move every time.
        let a = c
            .best_move(req(ITALIAN, 900, 11))
            .await
            .unwrap()
            .into_inner();
        let b = c
            .best_move(req(ITALIAN, 900, 11))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(a.best_move, b.best_move);
        assert!(
            a.line.unwrap().nodes <= 1_000,
            "level 900 keeps to its small budget"
        );
        // Level 900 is on the curve (a setting below 800): played as asked.
        assert_eq!(a.elo, 900);
        // A weak level varies its moves over seeds; the strongest move is always reported.
        let mut moves = std::collections::BTreeSet::new();
        for seed in 1..=12 {
            let r = c
                .best_move(req(ITALIAN, 800, seed))
                .await
                .unwrap()
                .into_inner();
            assert!(r.strongest_move.is_some());
            moves.insert(r.best_move.unwrap().uci);
        }
        assert!(moves.len() >= 2, "level 800 always played {moves:?}");

        // Caps, errors.
        let mut capped = req(ITALIAN, 0, 0);
        capped.strength = Some(Strength {
            max_depth: 2,
            ..Strength::default()
        });
        let r = c.best_move(capped).await.unwrap().into_inner();
        assert_eq!(r.line.unwrap().depth, 2);
        assert_field_error(
            c.best_move(req(ITALIAN, 500, 0)).await,
            Code::InvalidArgument,
            "strength.elo",
        );
        assert_field_error(
            c.best_move(req(ITALIAN, 3001, 0)).await,
            Code::InvalidArgument,
            "strength.elo",
        );
        let mut deep = req(ITALIAN, 0, 0);
        deep.strength = Some(Strength {
            max_depth: 500,
            ..Strength::default()
        });
        assert_field_error(
            c.best_move(deep).await,
            Code::InvalidArgument,
            "strength.max_depth",
        );
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        let s = c.best_move(req(mated, 0, 0)).await.unwrap_err();
        assert_eq!(s.code(), Code::FailedPrecondition, "{s:?}");
        assert!(s.message().contains("checkmate"), "{}", s.message());
    });
}

#[test]
fn a_review_judges_the_moves_and_annotates_the_game() {
    let dir = TempDir::new("search-review");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "2"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let pgn = "[Event \"Test\"]\n[White \"Ann\"]\n[Black \"Bob\"]\n[Result \"1-0\"]\n\n\
                   1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n";
        let request = ReviewGameRequest {
            pgn: pgn.into(),
            game_index: 0,
            limits: Some(SearchLimits {
                nodes: 30_000,
                ..SearchLimits::default()
            }),
        };
        let r = c.review_game(request).await.unwrap().into_inner();
        assert_eq!(r.moves.len(), 7);
        let nf6 = &r.moves[5];
        assert_eq!(nf6.r#move.as_ref().unwrap().san, "Nf6");
        assert_eq!(nf6.judgement, Judgement::Blunder as i32, "{nf6:?}");
        assert_eq!(nf6.symbol, "??");
        assert_eq!(mate_in(&nf6.played_score), Some(-1));
        assert!(nf6.best_move.is_some() && !nf6.best_line.is_empty());
        assert!(nf6.centipawn_loss > 300);
        let mate = &r.moves[6];
        assert_eq!(mate_in(&mate.best_score), Some(1));
        assert_eq!(mate.centipawn_loss, 0);
        assert!(mate.best_move.is_none(), "no better move than mate");
        let (white, black) = (r.white.unwrap(), r.black.unwrap());
        assert_eq!((white.name.as_str(), black.name.as_str()), ("Ann", "Bob"));
        assert_eq!((white.moves, black.moves), (4, 3));
        assert!(black.blunders >= 1);
        assert!(white.accuracy > black.accuracy, "{white:?} {black:?}");
        assert!(black.average_centipawn_loss > white.average_centipawn_loss);
        // Export format writes the judgements as NAGs: `$4` is `??`.
        assert!(r.annotated_pgn.contains("Nf6 $4"), "{}", r.annotated_pgn);
        assert!(r.annotated_pgn.contains("[%eval"), "{}", r.annotated_pgn);
        assert!(
            r.annotated_pgn
                .contains("[Annotator \"chess-search-service\"]")
        );
        // The opening, by position in the lichess data, in the response and as tags.
        let opening = r.opening.as_ref().expect("the review names the opening");
        assert_eq!(
            (
                opening.eco.as_str(),
                opening.name.as_str(),
                opening.class.as_str()
            ),
            ("C23", "Bishop's Opening", "open"),
            "{opening:?}"
        );
        assert!(
            r.annotated_pgn.contains("[ECO \"C23\"]"),
            "{}",
            r.annotated_pgn
        );
        assert!(
            r.annotated_pgn.contains("[Opening \"Bishop's Opening\"]"),
            "{}",
            r.annotated_pgn
        );
        assert!(r.nodes > 0);

        // Errors: not PGN, no such game, no moves.
        let bad = |pgn: &str, game_index: u32| ReviewGameRequest {
            pgn: pgn.into(),
            game_index,
            limits: None,
        };
        assert_field_error(
            c.review_game(bad("1. e4 e5 2. Ke3 *", 0)).await,
            Code::InvalidArgument,
            "pgn",
        );
        assert_field_error(
            c.review_game(bad(pgn, 1)).await,
            Code::InvalidArgument,
            "game_index",
        );
        assert_field_error(
            c.review_game(bad("[Event \"x\"]\n\n*", 0)).await,
            Code::InvalidArgument,
            "pgn",
        );
    });
}

#[test]
fn static_evaluation_of_many_positions() {
    let dir = TempDir::new("search-eval");
    let svc = spawn::search(
        &dir,
        &["--hash-mb", "16", "--workers", "1", "--eval-file", "hand"],
        &[],
    );
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let fens = vec![
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3".to_owned(),
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1".to_owned(),
            "4k3/8/8/8/8/8/8/QQQ1K3 w - - 0 1".to_owned(),
        ];
        let r = c
            .evaluate_positions(EvaluatePositionsRequest { fens })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.evaluations.len(), 4);
        assert_eq!(r.evaluator, "hand-written");
        assert!(value(&r.evaluations[0].score).abs() < 100);
        assert_eq!(mate_in(&r.evaluations[1].score), Some(0), "checkmated");
        assert_eq!(value(&r.evaluations[2].score), 0, "stalemate");
        assert!(value(&r.evaluations[3].score) > 1500, "three queens up");
        let s = assert_field_error(
            c.evaluate_positions(EvaluatePositionsRequest {
                fens: vec![String::new(), "8/8 w".into()],
            })
            .await,
            Code::InvalidArgument,
            "fens[1]",
        );
        assert!(s.message().contains("invalid FEN"), "{}", s.message());
        assert_field_error(
            c.evaluate_positions(EvaluatePositionsRequest { fens: vec![] })
                .await,
            Code::InvalidArgument,
            "fens",
        );
    });
}

#[test]
fn every_bad_input_names_its_field() {
    let dir = TempDir::new("search-bad");
    let svc = spawn::search(
        &dir,
        &[
            "--hash-mb",
            "16",
            "--workers",
            "1",
            "--max-batch",
            "3",
            "--max-time-ms",
            "5000",
        ],
        &[],
    );
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let limits = |depth, nodes, time_ms, mate| {
            Some(SearchLimits {
                depth,
                nodes,
                time_ms,
                mate,
            })
        };
        let cases: Vec<(AnalyzeRequest, &str)> = vec![
            (analyze("not a fen", None, 1), "fen"),
            (
                AnalyzeRequest {
                    moves: vec!["e4".into(), "e4".into()],
                    ..analyze("", None, 1)
                },
                "moves[1]",
            ),
            (analyze("", limits(65, 0, 0, 0), 1), "limits.depth"),
            (
                analyze("", limits(0, 2_000_000_000, 0, 0), 1),
                "limits.nodes",
            ),
            (analyze("", limits(0, 0, 5001, 0), 1), "limits.time_ms"),
            (analyze("", limits(0, 0, 0, 40), 1), "limits.mate"),
            (analyze("", depth(2), 17), "multipv"),
        ];
        for (req, field) in cases {
            let s = assert_field_error(c.analyze(req.clone()).await, Code::InvalidArgument, field);
            assert!(!s.message().is_empty());
            let stream = c.analyze_stream(req.clone()).await.map(|_| ());
            assert_field_error(stream, Code::InvalidArgument, field);
            let batch = c
                .analyze_batch(AnalyzeBatchRequest {
                    positions: vec![analyze("", depth(1), 1), req],
                })
                .await
                .map(|_| ());
            assert_field_error(
                batch,
                Code::InvalidArgument,
                &format!("positions[1].{field}"),
            );
        }
        let too_many = AnalyzeBatchRequest {
            positions: vec![analyze("", depth(1), 1); 4],
        };
        assert_field_error(
            c.analyze_batch(too_many).await.map(|_| ()),
            Code::InvalidArgument,
            "positions",
        );
        assert_field_error(
            c.analyze_batch(AnalyzeBatchRequest { positions: vec![] })
                .await
                .map(|_| ()),
            Code::InvalidArgument,
            "positions",
        );
    });
}

#[test]
fn overload_is_refused_at_once_and_cancelled_calls_stop_their_searches() {
    let dir = TempDir::new("search-overload");
    let svc = spawn::search(
        &dir,
        &["--hash-mb", "16", "--workers", "1", "--queue", "1"],
        &[],
    );
    runtime().block_on(async {
        let c = client(&svc).await;
        // Two calls take the worker and the queue place.
        let mut c1 = c.clone();
        let first = tokio::spawn(async move { c1.analyze(long_analysis()).await });
        let mut c2 = c.clone();
        let second = tokio::spawn(async move { c2.analyze(long_analysis()).await });
        wait_for_active_searches(&svc, 1.0).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        // The third is refused at once.
        let mut c3 = c.clone();
        let asked = Instant::now();
        let s = c3.analyze(long_analysis()).await.unwrap_err();
        assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "refused at once, not after a wait"
        );
        assert!(s.message().contains("busy"), "{}", s.message());

        // Dropping the calls (the client goes away) stops the running search and the queued one.
        first.abort();
        second.abort();
        wait_until_cancelled(&svc, 1.0).await;

        // An expired deadline cancels too.
        let mut c4 = c.clone();
        let mut req = tonic::Request::new(long_analysis());
        req.set_timeout(Duration::from_millis(300));
        let s = c4.analyze(req).await.unwrap_err();
        assert!(
            matches!(s.code(), Code::DeadlineExceeded | Code::Cancelled),
            "{s:?}"
        );
        // A streaming call dropped mid-search.
        let mut c5 = c.clone();
        let mut stream = c5
            .analyze_stream(long_analysis())
            .await
            .unwrap()
            .into_inner();
        let _ = stream.message().await;
        drop(stream);
        let text = wait_until_cancelled(&svc, 3.0).await;
        assert!(assert_cancels_stopped_fast(&text) >= 2.0, "{text}");
        // The service is free again.
        let mut c6 = c.clone();
        c6.analyze(analyze("", depth(2), 1)).await.unwrap();
    });
}

#[test]
fn analysis_through_the_gateway() {
    let stack = Stack::start();
    runtime().block_on(async {
        let mut c = AnalysisServiceClient::new(stack.gateway.channel().await);
        let r = c
            .analyze(analyze(SCHOLAR, depth(3), 2))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
        assert_eq!(r.lines.len(), 2);
        let mut stream = c
            .analyze_stream(analyze("", depth(4), 1))
            .await
            .unwrap()
            .into_inner();
        let mut n = 0;
        while let Some(m) = stream.message().await.unwrap() {
            n += 1;
            if m.done {
                assert_eq!(m.lines[0].depth, 4);
            }
        }
        assert_eq!(n, 5);
        let s = c.analyze(analyze("", depth(2), 99)).await.unwrap_err();
        assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
        let r = c
            .evaluate_positions(EvaluatePositionsRequest {
                fens: vec![ITALIAN.into()],
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.evaluations.len(), 1);
    });
}

#[test]
fn the_network_evaluation_is_the_default_and_a_bad_file_is_refused() {
    let dir = TempDir::new("search-eval-file");
    // No --eval-file: the embedded network.
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "1"], &[]);
    runtime().block_on(async {
        let mut c = client(&svc).await;
        let r = c
            .evaluate_positions(EvaluatePositionsRequest {
                fens: vec![ITALIAN.into()],
            })
            .await
            .unwrap()
            .into_inner();
        assert!(
            r.evaluator.starts_with("chnn-") && r.evaluator.ends_with(".nnue"),
            "{}",
            r.evaluator
        );
        let r = c
            .analyze(analyze(SCHOLAR, depth(3), 1))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
    });
    let bad = dir.0.join("bad.nnue");
    std::fs::write(&bad, b"not a network").unwrap();
    let out = std::process::Command::new(bin("chess-search-service"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--eval-file",
            bad.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--eval-file") && stderr.contains("bad.nnue"),
        "{stderr}"
    );
}
