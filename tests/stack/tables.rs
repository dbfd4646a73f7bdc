//! The search service with endgame tables (`--tables`): analysis of a table position through
//! the gateway is exact (`tablebase: true`, the mate distance the tables give), review calls
//! the move that gives a table win away a blunder with the table's mate as the best score,
//! `--tables generate` makes a small set in the data directory and reuses it, and a folder
//! without tables stops the service with a clear message.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chess_integration_tests::analysis::{analyze, depth, mate_in};
use chess_integration_tests::{Stack, TempDir, bin, runtime, spawn};
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::{Judgement, ReviewGameRequest, SearchLimits, score};
use chess_rules::Position;
use chess_tablebase::Tablebase;

/// KRvK, white to move: a win.
const KRK: &str = "8/8/8/4k3/8/8/8/R3K3 w - - 0 1";
/// KQvK, black to move: a loss.
const KQK_LOST: &str = "8/8/3k4/8/8/2Q5/8/4K3 b - - 0 1";

/// Generates the tables of `endings` with the real `chess tb generate`.
fn generate(dir: &Path, endings: &str) {
    let out = Command::new(bin("chess"))
        .args(["tb", "generate", "--only", endings, "--dir"])
        .arg(dir)
        .output()
        .expect("run chess tb generate");
    assert!(
        out.status.success(),
        "chess tb generate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn dtm(dir: &Path, fen: &str) -> i32 {
    let tb = Tablebase::open_dir(dir).unwrap();
    tb.probe_dtm(&Position::from_fen(fen).unwrap())
        .unwrap()
        .dtm_plies()
}

#[test]
fn analysis_and_review_of_table_positions_are_exact() {
    let tables = TempDir::new("tables-set");
    generate(&tables.0, "KQvK,KRvK");
    let dir = tables.0.to_str().unwrap();
    let stack = Stack::start_full(&["--tables", dir], &[], &[]);
    runtime().block_on(async {
        let mut c = AnalysisServiceClient::new(stack.gateway.channel().await);

        // A win: the mate in moves from the tables' distance, the line the tables' best play.
        let plies = dtm(&tables.0, KRK);
        assert!(plies > 0);
        let r = c.analyze(analyze(KRK, depth(6), 2)).await.unwrap().into_inner();
        assert_eq!(r.lines.len(), 2);
        let line = &r.lines[0];
        assert!(line.tablebase, "{line:?}");
        assert_eq!(line.dtm_plies, Some(plies));
        assert_eq!(mate_in(&line.score), Some((plies + 1) / 2));
        assert_eq!(line.pv.len(), plies as usize);
        assert!(line.tbhits > 0);
        assert!(r.lines[1].tablebase);

        // A loss for the side to move: negative distances.
        let plies = dtm(&tables.0, KQK_LOST);
        assert!(plies < 0);
        let r = c
            .analyze(analyze(KQK_LOST, depth(6), 1))
            .await
            .unwrap()
            .into_inner();
        let line = &r.lines[0];
        assert!(line.tablebase);
        assert_eq!(line.dtm_plies, Some(plies));
        assert_eq!(mate_in(&line.score), Some(plies / 2));

        // A table draw (the king takes the rook): exact, with no distance.
        let r = c
            .analyze(analyze("8/8/8/8/8/8/1k6/R3K3 b - - 0 1", depth(6), 1))
            .await
            .unwrap()
            .into_inner();
        let line = &r.lines[0];
        assert!(line.tablebase, "{line:?}");
        assert_eq!(line.dtm_plies, None);
        assert_eq!(line.score.unwrap().value, Some(score::Value::Centipawns(0)));
        assert_eq!(r.best_move.as_ref().unwrap().uci, "b2a1");

        // A position outside the tables is the search's estimate.
        let r = c
            .analyze(analyze("", depth(4), 1))
            .await
            .unwrap()
            .into_inner();
        assert!(!r.lines[0].tablebase && r.lines[0].dtm_plies.is_none());
        assert_eq!(r.lines[0].tbhits, 0);

        // Review: Ra3+?? lets the king take the rook (KvK, a draw).
        let pgn = "[Event \"t\"]\n[SetUp \"1\"]\n[FEN \"8/8/8/8/8/1k6/8/R3K3 w - - 0 1\"]\n\n1. Ra3+ Kxa3 1/2-1/2\n";
        let best = dtm(&tables.0, "8/8/8/8/8/1k6/8/R3K3 w - - 0 1");
        let review = c
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
        let first = &review.moves[0];
        assert_eq!(first.judgement, Judgement::Blunder as i32, "{first:?}");
        assert_eq!(mate_in(&first.best_score), Some((best + 1) / 2));
    });
}

#[test]
fn tables_generate_makes_a_set_in_the_data_dir_and_reuses_it() {
    let dir = TempDir::new("tables-generate");
    let data = dir.0.join("data");
    let data_arg = data.to_str().unwrap();
    let args = [
        "--hash-mb",
        "16",
        "--tables",
        "generate",
        "--tables-generate-pieces",
        "3",
        "--data-dir",
        data_arg,
        "--log-format",
        "json",
    ];
    for run in 0..2 {
        let svc = spawn::search(&dir, &args, &[]);
        runtime().block_on(async {
            let mut c = AnalysisServiceClient::new(svc.channel().await);
            // The service answers at once and takes the tables up once they are made.
            let started = Instant::now();
            loop {
                let r = c
                    .analyze(analyze(KRK, depth(3), 1))
                    .await
                    .unwrap()
                    .into_inner();
                if r.lines[0].tablebase {
                    assert_eq!(r.lines[0].dtm_plies, Some(dtm(&data.join("tables"), KRK)));
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "no tables after 120 s (run {run}): {}",
                    svc.stderr()
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let log = svc.stderr();
        assert!(log.contains("endgame tables ready"), "{log}");
        if run == 1 {
            assert!(
                log.contains("\"generated\":0"),
                "the set was not reused: {log}"
            );
        }
    }
    assert!(data.join("tables").join("KRvK.ctb").exists());
}

#[test]
fn a_folder_without_tables_stops_the_service_with_a_message() {
    let dir = TempDir::new("tables-empty");
    let out = Command::new(bin("chess-search-service"))
        .args(["--listen", "127.0.0.1:0", "--tables"])
        .arg(&dir.0)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no tables in it"), "{err}");
}
