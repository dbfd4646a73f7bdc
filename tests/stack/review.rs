//! A game review is a function of its input: the same game with the same settings gives the
//! same judgements, scores and accuracies every time, however the service's workers happen
//! to share the work.

use chess_integration_tests::{TempDir, runtime, spawn};
use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::{ReviewGameRequest, ReviewGameResponse, SearchLimits};

/// Morphy v Duke of Brunswick and Count Isouard, Paris 1858 (the "Opera game").
const OPERA: &str = "[Event \"Paris\"]\n[White \"Morphy\"]\n[Black \"Allies\"]\n[Result \"1-0\"]\n\n\
    1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8. Nc3 c6 \
    9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14. Rd1 Qe6 \
    15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0\n";

/// What a reader of the review sees: per move the judgement, scores and better move; per
/// player the accuracy and counts.
fn seen(r: &ReviewGameResponse) -> String {
    let mut out = String::new();
    for m in &r.moves {
        out += &format!(
            "{} {} {:?} {:?} {:?} {}\n",
            m.r#move.as_ref().map_or("", |m| m.san.as_str()),
            m.symbol,
            m.played_score,
            m.best_score,
            m.best_move.as_ref().map(|b| b.uci.clone()),
            m.centipawn_loss
        );
    }
    out + &format!("{:?}\n{:?}\n{}", r.white, r.black, r.annotated_pgn)
}

#[test]
fn the_same_review_twice_is_the_same_review() {
    let dir = TempDir::new("review-twice");
    let svc = spawn::search(&dir, &["--hash-mb", "16", "--workers", "2"], &[]);
    runtime().block_on(async {
        let mut c = AnalysisServiceClient::new(svc.channel().await);
        let request = ReviewGameRequest {
            pgn: OPERA.into(),
            game_index: 0,
            limits: Some(SearchLimits {
                nodes: 20_000,
                ..SearchLimits::default()
            }),
        };
        let first = c.review_game(request.clone()).await.unwrap().into_inner();
        assert_eq!(first.moves.len(), 33);
        let first_seen = seen(&first);
        for run in 2..=4 {
            let again = c.review_game(request.clone()).await.unwrap().into_inner();
            let again_seen = seen(&again);
            if again_seen != first_seen {
                let diff: Vec<_> = first_seen
                    .lines()
                    .zip(again_seen.lines())
                    .filter(|(a, b)| a != b)
                    .take(3)
                    .collect();
                panic!("review {run} differs from the first: {diff:#?}");
            }
            assert_eq!(again.nodes, first.nodes, "review {run}");
        }
    });
}
