//! The bench: a fixed list of positions searched to a fixed depth, one thread, a fresh 16 MiB
//! hash for each position. The node total is the search's fingerprint: a change that alters
//! search behaviour changes it (say so, with the new total, in the commit message); a refactor
//! keeps it.

use std::time::{Duration, Instant};

use chess_rules::Position;

use crate::engine::{Engine, SearchLimits};
use crate::nnue::EvalSource;
use crate::options::EngineOptions;

/// Default bench depth.
pub const BENCH_DEPTH: u32 = 12;

/// Openings, middlegames and endgames of every kind, tactical and quiet.
pub const BENCH_POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/8 b - - 3 54",
    "r2r1n2/pp2bk2/2p1p2p/3q4/3PN1QP/2P3R1/P4PP1/5RK1 w - - 0 1",
    "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
    "8/8/8/5N2/8/p7/8/2NK3k w - - 0 1",
    "8/3k4/8/8/8/4B3/4KB2/2B5 w - - 0 1",
    "8/8/1P6/5pr1/8/4R3/7k/2K5 w - - 0 1",
    "8/2p4P/8/kr6/6R1/8/8/1K6 w - - 0 1",
    "8/8/3P3k/8/1p6/8/1P6/1K3n2 b - - 0 1",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    "6k1/3b3r/1p1p4/p1n2p2/1PPNpP1q/P3Q1p1/1R1RB1P1/5K2 b - - 0 1",
    "r2r2k1/pp1q1ppp/2n1b3/2bpP3/8/1PN2N2/PBQ2PPP/R2R2K1 w - - 3 15",
    "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "8/3p4/p1bk3p/Pp6/1Kp1PpPp/2P2P1P/2P5/5B2 b - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "1r3k2/4q3/2Pp3b/3Bp3/2Q2p2/1p1P2P1/1P2KP2/3N4 w - - 0 1",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 1",
    "8/3p3B/5p2/5P2/p7/PP5b/k7/6K1 w - - 0 1",
    "5rk1/q6p/2p3bR/1pPp1rP1/1P1Pp3/P3B1Q1/1K3P2/R7 w - - 93 90",
    "4rrk1/1p1nq3/p7/2p1P1pp/3P2bp/3Q1Bn1/PPPB4/1K2R1NR w - - 40 21",
    "r3k2r/3nnpbp/q2pp1p1/p7/Pp1PPPP1/4BNN1/1P5P/R2Q1RK1 w kq - 0 16",
    "3Qb1k1/1r2ppb1/pN1n2q1/Pp1Pp1Pr/4P2p/4BP2/4B1R1/1R5K b - - 11 40",
];

/// What a bench run measured (time and speed count the searches only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchReport {
    pub positions: usize,
    pub nodes: u64,
    pub elapsed_ms: u64,
    pub nps: u64,
}

/// Searches every bench position to `depth` with the default evaluation (the embedded
/// network); `on_position(index, fen, nodes)` hears about each.
///
/// ```
/// let report = chess_search::bench::run(1, |_, _, _| {});
/// assert_eq!(report.positions, chess_search::bench::BENCH_POSITIONS.len());
/// assert!(report.nodes > 0);
/// ```
pub fn run(depth: u32, on_position: impl FnMut(usize, &str, u64)) -> BenchReport {
    run_with(depth, &EvalSource::default(), on_position)
}

/// [`run`] with `source` evaluating: the same positions, depth, hash (16 MiB) and one thread.
pub fn run_with(
    depth: u32,
    source: &EvalSource,
    mut on_position: impl FnMut(usize, &str, u64),
) -> BenchReport {
    let options = EngineOptions {
        hash_mb: 16,
        threads: 1,
        ..EngineOptions::default()
    };
    let mut engine = Engine::with_source(options, source.clone());
    let mut nodes = 0;
    let mut searching = Duration::ZERO;
    for (i, fen) in BENCH_POSITIONS.iter().enumerate() {
        let Ok(pos) = Position::from_fen(fen) else {
            continue;
        };
        engine.new_game();
        // Only the searches are timed, not the clearing of the hash table between them.
        let start = Instant::now();
        let result = engine.search(&pos, &[], SearchLimits::depth(depth));
        searching += start.elapsed();
        let n = result.lines.first().map_or(0, |l| l.nodes);
        nodes += n;
        on_position(i, fen, n);
    }
    let elapsed_ms = searching.as_millis() as u64;
    BenchReport {
        positions: BENCH_POSITIONS.len(),
        nodes,
        elapsed_ms,
        nps: nodes * 1000 / elapsed_ms.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_legal() {
        for fen in BENCH_POSITIONS {
            Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        }
        assert!(BENCH_POSITIONS.len() >= 40);
    }

    /// The bench's node totals at the default depth, with the default network and with the
    /// hand-written evaluation. A refactor keeps them; a commit that changes search behaviour
    /// changes them here and gives the new totals in its message.
    #[test]
    fn node_totals_are_pinned() {
        assert_eq!(run(BENCH_DEPTH, |_, _, _| {}).nodes, 1_841_919);
        let hand = run_with(BENCH_DEPTH, &EvalSource::Hand, |_, _, _| {});
        assert_eq!(hand.nodes, 1_984_693);
    }

    #[test]
    fn node_count_is_deterministic() {
        let a = run(5, |_, _, _| {});
        let b = run(5, |_, _, _| {});
        assert_eq!(a.nodes, b.nodes);
    }
}
