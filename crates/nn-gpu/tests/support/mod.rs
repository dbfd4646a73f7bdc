//! Shared by the tests and the bench: a seeded generator, networks with chosen weight
//! ranges, positions from random playouts, and opening the GPU or deciding to skip.

#![allow(dead_code)]

use std::sync::Arc;

use chess_nn::{FeatureBatch, KingBuckets, Network, NetworkParts};
use chess_nn_gpu::{GpuBatch, GpuError, GpuOptions};
use chess_rules::Position;

/// The project's seeded generator.
pub use chess_search::SplitMix64 as Rng;

/// Weight ranges of a test network.
#[derive(Clone, Copy, Debug)]
pub struct Ranges {
    pub ft: (i16, i16),
    pub bias: (i16, i16),
    pub out: (i16, i16),
    pub out_bias: (i32, i32),
    pub qa: i32,
    pub qb: i32,
    pub scale: i32,
}

/// Weights of the size a trained network has: accumulators mostly inside the clamp range,
/// so the activations vary and the scores do too.
pub const REALISTIC: Ranges = Ranges {
    ft: (-90, 90),
    bias: (-60, 200),
    out: (-128, 128),
    out_bias: (-20_000, 20_000),
    qa: 255,
    qb: 64,
    scale: 400,
};

/// Full-range i16 weights: accumulators wrap around i16 and the output sum wraps around i32.
pub const LARGE: Ranges = Ranges {
    ft: (i16::MIN, i16::MAX),
    bias: (i16::MIN, i16::MAX),
    out: (i16::MIN, i16::MAX),
    out_bias: (i32::MIN, i32::MAX),
    qa: 255,
    qb: 64,
    scale: 400,
};

/// Largest constants the format allows as well: `(c * w) * c` itself wraps, and so do the
/// bias addition and the scale multiplication.
pub const EXTREME: Ranges = Ranges {
    qa: 32_767,
    qb: 32_767,
    scale: 32_767,
    ..LARGE
};

pub fn network(seed: u64, hidden: usize, r: Ranges) -> Arc<Network> {
    network_with_buckets(seed, hidden, 1, r)
}

/// A network with `buckets` output buckets (format version 2 when more than one).
pub fn network_with_buckets(seed: u64, hidden: usize, buckets: usize, r: Ranges) -> Arc<Network> {
    network_with_layout(seed, hidden, buckets, KingBuckets::NONE, r)
}

/// A network with `buckets` output buckets and the king buckets `king_buckets` (format
/// version 3 when more than one).
pub fn network_with_layout(
    seed: u64,
    hidden: usize,
    buckets: usize,
    king_buckets: KingBuckets,
    r: Ranges,
) -> Arc<Network> {
    let mut rng = Rng::new(seed);
    let mut fill = |n: usize, (lo, hi): (i16, i16)| -> Vec<i16> {
        (0..n)
            .map(|_| rng.range(i64::from(lo), i64::from(hi)) as i16)
            .collect()
    };
    let ft_weights = fill(king_buckets.inputs() * hidden, r.ft);
    let ft_biases = fill(hidden, r.bias);
    let out_weights = fill(buckets * 2 * hidden, r.out);
    let out_biases = (0..buckets)
        .map(|_| rng.range(i64::from(r.out_bias.0), i64::from(r.out_bias.1)) as i32)
        .collect();
    let parts = NetworkParts {
        hidden,
        qa: r.qa,
        qb: r.qb,
        scale: r.scale,
        king_buckets,
        ft_weights,
        ft_biases,
        buckets,
        out_weights,
        out_biases,
    };
    Arc::new(Network::from_parts(parts).expect("valid test network"))
}

/// Starting points of the playouts besides the initial position: middlegames with castling
/// and en passant, and sparse endgames.
pub const FENS: [&str; 6] = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
];

/// `count` positions from seeded random playouts (up to 160 plies each, stopping at mate or
/// stalemate), from the initial position and from [`FENS`].
pub fn positions(seed: u64, count: usize) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let starts: Vec<Position> = std::iter::once(Position::startpos())
        .chain(
            FENS.iter()
                .map(|f| Position::from_fen(f).expect("valid FEN")),
        )
        .collect();
    let mut out = Vec::with_capacity(count);
    let mut game = 0;
    while out.len() < count {
        let mut pos = starts[game % starts.len()].clone();
        game += 1;
        let plies = rng.range(1, 160);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() || out.len() == count {
                break;
            }
            pos.play_unchecked(moves[rng.below(moves.len())]);
            out.push(pos.clone());
        }
    }
    out
}

pub fn batch_of(positions: &[Position]) -> FeatureBatch {
    batch_in(KingBuckets::NONE, positions)
}

/// The positions' features in `layout`.
pub fn batch_in(layout: KingBuckets, positions: &[Position]) -> FeatureBatch {
    let mut batch = FeatureBatch::with_capacity(layout, positions.len());
    for pos in positions {
        batch.push_position(pos);
    }
    batch
}

/// The GPU evaluator, or `None` (with a message) where there is no usable adapter and the
/// environment does not demand one. `CHESS_REQUIRE_GPU=1` (set by CI) turns the skip into a
/// failure. Errors other than a missing or unsuitable adapter always fail: they are bugs.
pub fn gpu(net: &Network, options: &GpuOptions) -> Option<GpuBatch> {
    match GpuBatch::new(net, options) {
        Ok(gpu) => Some(gpu),
        Err(
            e @ (GpuError::NoAdapter { .. }
            | GpuError::Unsupported { .. }
            | GpuError::RequestDevice { .. }),
        ) => {
            if std::env::var("CHESS_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("CHESS_REQUIRE_GPU=1 but the GPU backend cannot run: {e}");
            }
            eprintln!("SKIPPED (no GPU): {e}. Set CHESS_REQUIRE_GPU=1 to make this a failure.");
            None
        }
        Err(e) => panic!("GPU backend failed to start: {e}"),
    }
}
