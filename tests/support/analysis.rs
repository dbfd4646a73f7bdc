//! Analysis through an AnalysisService client: positions, requests, scores, and the search
//! service's own count of its searches.

use std::time::{Duration, Instant};

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::{AnalyzeRequest, Score, SearchLimits, score};
use tonic::transport::Channel;

use crate::Service;
use crate::metrics::metric;

pub const ITALIAN: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3";
/// White mates with Qxf7#.
pub const SCHOLAR: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";

/// An AnalysisService client of `service` (a gateway or a search service).
pub async fn client(service: &Service) -> AnalysisServiceClient<Channel> {
    AnalysisServiceClient::new(service.channel().await)
}

pub fn depth(d: u32) -> Option<SearchLimits> {
    Some(SearchLimits {
        depth: d,
        ..SearchLimits::default()
    })
}

pub fn analyze(fen: &str, limits: Option<SearchLimits>, multipv: u32) -> AnalyzeRequest {
    AnalyzeRequest {
        fen: fen.to_owned(),
        moves: vec![],
        limits,
        multipv,
    }
}

/// An analysis of the start position that runs 20 s unless stopped.
pub fn long_analysis() -> AnalyzeRequest {
    analyze(
        "",
        Some(SearchLimits {
            time_ms: 20_000,
            ..SearchLimits::default()
        }),
        1,
    )
}

/// The mate distance of a score; `None` for centipawns.
pub fn mate_in(s: &Option<Score>) -> Option<i32> {
    match s.as_ref()?.value? {
        score::Value::MateIn(n) => Some(n),
        score::Value::Centipawns(_) => None,
    }
}

/// A score as one number to compare: centipawns, or ±100,000 less the mate distance.
pub fn value(s: &Option<Score>) -> i32 {
    match s.as_ref().and_then(|s| s.value) {
        Some(score::Value::Centipawns(cp)) => cp,
        Some(score::Value::MateIn(n)) if n > 0 => 100_000 - n,
        Some(score::Value::MateIn(n)) => -100_000 - n,
        None => panic!("no score"),
    }
}

/// Waits (at most 10 s) until at least `n` searches run.
pub async fn wait_for_active_searches(svc: &Service, n: f64) {
    let started = Instant::now();
    while metric(&svc.scrape_metrics(), "chess_search_active_searches", &[]) < n {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "fewer than {n} searches ever ran at once"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (at most 5 s) until no search runs or waits and at least `cancelled` searches were
/// cancelled; returns the metrics text of that moment.
pub async fn wait_until_cancelled(svc: &Service, cancelled: f64) -> String {
    let started = Instant::now();
    loop {
        let text = svc.scrape_metrics();
        if metric(&text, "chess_search_active_searches", &[]) == 0.0
            && metric(&text, "chess_search_queue_depth", &[]) == 0.0
            && metric(&text, "chess_search_cancelled_total", &[]) >= cancelled
        {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "searches still running:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every cancelled search let go of its worker within 50 ms; returns how many were timed.
pub fn assert_cancels_stopped_fast(text: &str) -> f64 {
    let count = metric(text, "chess_search_cancel_stop_seconds_count", &[]);
    let fast = metric(
        text,
        "chess_search_cancel_stop_seconds_bucket",
        &["le=\"0.05\""],
    );
    assert_eq!(fast, count, "a search took over 50 ms to stop:\n{text}");
    count
}
