//! The network evaluator in whole searches: the incremental accumulator stack finds exactly what
//! full refreshes find, and a network search repeats itself.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use chess_nn::Network;
use chess_rules::{Move, Position};
use chess_search::{Engine, EngineOptions, NnueEval, NnueStats, SearchLimits, SearchResult};

const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
];

fn search(make: impl Fn() -> NnueEval + Send + Sync + 'static, fen: &str) -> SearchResult {
    let mut engine = Engine::with_evaluator(EngineOptions::default(), move || Box::new(make()));
    let pos = Position::from_fen(fen).unwrap();
    engine.search(&pos, &[], SearchLimits::depth(8))
}

fn summary(r: &SearchResult) -> (Option<Move>, u64, Vec<Move>) {
    let l = &r.lines[0];
    (r.best_move, l.nodes, l.pv.clone())
}

/// The default network with eight output buckets all alike (its first bucket's weights),
/// each bucket's bias moved by a different amount (so a wrong piece count changes the scores).
fn bucketed_default() -> Arc<Network> {
    let mut parts = Network::clone(&Network::default_network()).into_parts();
    let first = parts.out_weights[..2 * parts.hidden].to_vec();
    parts.buckets = 8;
    parts.out_weights = first.repeat(8);
    let bias = parts.out_biases[0];
    parts.out_biases = (0..8).map(|b| bias + (b - 4) * 64 * 255 / 8).collect();
    Arc::new(Network::from_parts(parts).unwrap())
}

/// The default network given 16 king buckets in 2 x 2 blocks of squares, so that most king
/// moves change bucket: bucket `k` is the default's feature weights with `k` added to each
/// (so a feature read in the wrong bucket changes the scores).
fn king_bucketed_default() -> Arc<Network> {
    let mut parts = Network::clone(&Network::default_network()).into_parts();
    parts.king_buckets = "00112233/00112233/44556677/44556677/8899aabb/8899aabb/ccddeeff/ccddeeff"
        .parse()
        .unwrap();
    parts.ft_weights = (0..16)
        .flat_map(|k| parts.ft_weights.iter().map(move |w| w.wrapping_add(k)))
        .collect();
    Arc::new(Network::from_parts(parts).unwrap())
}

#[test]
fn incremental_search_equals_full_refresh_search() {
    for net in [
        Network::default_network(),
        bucketed_default(),
        king_bucketed_default(),
    ] {
        let stats = Arc::new(NnueStats::default());
        for fen in FENS {
            let (n, s) = (net.clone(), stats.clone());
            let inc = search(move || NnueEval::new(n.clone()).with_stats(s.clone()), fen);
            let n = net.clone();
            let full = search(move || NnueEval::full_refresh(n.clone()), fen);
            assert_eq!(summary(&inc), summary(&full), "{fen}");
            assert_eq!(inc.lines[0].score, full.lines[0].score, "{fen}");
        }
        // The hooks are wired: the incremental searches never fell back to a refresh, and
        // evaluated thousands of positions incrementally (with the default network
        // `chnn-7e616c9c4844`: 8,913 plain, 16,193 with output buckets, 7,932 with king
        // buckets).
        assert_eq!(stats.refreshed.load(Relaxed), 0);
        let incremental = stats.incremental.load(Relaxed);
        assert!(incremental > 5_000, "{incremental} incremental evaluations");
    }
}

#[test]
fn nnue_search_is_deterministic() {
    let net = Network::default_network();
    for fen in FENS {
        let n = net.clone();
        let a = search(move || NnueEval::new(n.clone()), fen);
        let n = net.clone();
        let b = search(move || NnueEval::new(n.clone()), fen);
        assert_eq!(summary(&a), summary(&b), "{fen}");
    }
}
