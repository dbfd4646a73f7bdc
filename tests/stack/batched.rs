//! The batched backends of the search service (`--backend cpu-batched` and `gpu`): the same
//! answers as the incremental CPU backend, leaves from concurrent calls sharing batches, bulk
//! evaluation, reviews, cancellation, and the network they need.

use chess_integration_tests::analysis::{
    ITALIAN, SCHOLAR, analyze, assert_cancels_stopped_fast, client, depth, long_analysis,
    wait_for_active_searches, wait_until_cancelled,
};
use chess_integration_tests::metrics::metric;
use chess_integration_tests::{Service, TempDir, bin, runtime, spawn};
use chess_proto::v1::{
    AnalyzeResponse, EvaluatePositionsRequest, Judgement, ReviewGameRequest, SearchLimits,
};

const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    ITALIAN,
];

fn backend(dir: &TempDir, backend: &str) -> Service {
    spawn::search(
        dir,
        &[
            "--hash-mb",
            "16",
            "--workers",
            "1",
            "--eval-file",
            "default",
            "--backend",
            backend,
            "--tasks",
            "16",
        ],
        &[],
    )
}

/// Best move, and per line: score, depth, nodes and PV.
fn answer(r: &AnalyzeResponse) -> String {
    let mut out = format!("{:?}", r.best_move.as_ref().map(|m| &m.uci));
    for l in &r.lines {
        let pv: Vec<&str> = l.pv.iter().map(|m| m.uci.as_str()).collect();
        out.push_str(&format!(
            " | {:?} d{} n{} {}",
            l.score,
            l.depth,
            l.nodes,
            pv.join(" ")
        ));
    }
    out
}

#[test]
fn batched_backends_answer_as_the_cpu_backend_does() {
    let dir = TempDir::new("search-batched");
    let services = [
        backend(&dir, "cpu"),
        backend(&dir, "cpu-batched"),
        backend(&dir, "gpu"),
    ];
    runtime().block_on(async {
        let mut clients = Vec::new();
        for s in &services {
            clients.push(client(s).await);
        }
        // The same calls in the same order: the same hash table contents, the same answers.
        for fen in FENS {
            let mut answers = Vec::new();
            for c in &mut clients {
                let r = c.analyze(analyze(fen, depth(7), 2)).await.unwrap();
                answers.push(answer(&r.into_inner()));
            }
            assert_eq!(answers[0], answers[1], "cpu-batched: {fen}");
            assert_eq!(answers[0], answers[2], "gpu: {fen}");
        }
        let fens: Vec<String> = FENS.iter().map(|f| f.to_string()).collect();
        let mut evals = Vec::new();
        for c in &mut clients {
            let r = c
                .evaluate_positions(EvaluatePositionsRequest { fens: fens.clone() })
                .await
                .unwrap()
                .into_inner();
            evals.push(format!("{:?} {:?}", r.evaluations, r.evaluator));
        }
        assert_eq!(evals[0], evals[1]);
        assert_eq!(evals[0], evals[2]);

        // Concurrent calls on the batched backend: their leaves share batches.
        let mut calls = Vec::new();
        for i in 0..12 {
            let mut c = clients[1].clone();
            let fen = FENS[i % FENS.len()];
            calls.push(tokio::spawn(async move {
                c.analyze(analyze(fen, depth(6 + (i as u32 % 3)), 1)).await
            }));
        }
        for call in calls {
            let r = call.await.unwrap().unwrap().into_inner();
            assert!(r.best_move.is_some());
        }
        let text = services[1].scrape_metrics();
        let batches = metric(&text, "chess_search_eval_batch_size_count", &[]);
        let leaves = metric(&text, "chess_search_eval_batch_size_sum", &[]);
        let singles = metric(&text, "chess_search_eval_batch_size_bucket", &["le=\"1\""]);
        assert!(batches > 100.0, "{text}");
        assert!(
            singles < batches,
            "some batches held several leaves:\n{text}"
        );
        assert!(leaves > batches, "{text}");

        // A review: its positions are searched as tasks of one worker.
        let pgn = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n";
        let r = clients[1]
            .review_game(ReviewGameRequest {
                pgn: pgn.into(),
                game_index: 0,
                limits: Some(SearchLimits {
                    nodes: 20_000,
                    ..SearchLimits::default()
                }),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.moves.len(), 7);
        assert_eq!(r.moves[5].judgement, Judgement::Blunder as i32);
        let r = clients[2]
            .analyze(analyze(SCHOLAR, depth(3), 1))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.best_move.unwrap().san, "Qxf7#");
    });
    // The GPU worker says where it evaluates: on a GPU (Mesa's lavapipe counts), or on the
    // CPU after one warning; CI demands the GPU.
    let log = services[2].stderr();
    let on_gpu = log.contains("evaluating on the GPU");
    assert!(
        on_gpu || log.contains("GPU backend unavailable, evaluating on the CPU"),
        "{log}"
    );
    if std::env::var("CHESS_REQUIRE_GPU").as_deref() == Ok("1") {
        assert!(
            on_gpu,
            "CHESS_REQUIRE_GPU=1 but the service fell back:\n{log}"
        );
    } else if !on_gpu {
        eprintln!("NOTE: no GPU adapter; the gpu backend ran on its CPU fallback");
    }
    assert!(log.contains("batched search worker started"), "{log}");
}

#[test]
fn cancelled_batched_searches_stop() {
    let dir = TempDir::new("search-batched-cancel");
    let svc = backend(&dir, "cpu-batched");
    runtime().block_on(async {
        let c = client(&svc).await;
        let mut running = Vec::new();
        for _ in 0..3 {
            let mut c = c.clone();
            running.push(tokio::spawn(
                async move { c.analyze(long_analysis()).await },
            ));
        }
        wait_for_active_searches(&svc, 3.0).await;
        for r in running {
            r.abort();
        }
        let text = wait_until_cancelled(&svc, 3.0).await;
        assert_cancels_stopped_fast(&text);
        let mut c = c.clone();
        c.analyze(analyze("", depth(3), 1)).await.unwrap();
    });
}

#[test]
fn a_batched_backend_needs_a_network() {
    let out = std::process::Command::new(bin("chess-search-service"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--backend",
            "gpu",
            "--eval-file",
            "hand",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--backend gpu") && stderr.contains("--eval-file"),
        "{stderr}"
    );
    let out = std::process::Command::new(bin("chess-search-service"))
        .args(["--listen", "127.0.0.1:0", "--backend", "tpu"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tpu") && stderr.contains("cpu-batched"),
        "{stderr}"
    );
}
