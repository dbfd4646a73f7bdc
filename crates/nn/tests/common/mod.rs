//! Helpers shared by the integration tests: a seeded generator, random networks, playouts.

#![allow(dead_code)]

use chess_nn::{KingBuckets, Network, NetworkParts};
use chess_rules::{Move, Position};

/// xorshift64*: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `-range..=range`.
    pub fn i16(&mut self, range: i32) -> i16 {
        ((self.next() % (2 * range as u64 + 1)) as i32 - range) as i16
    }
}

/// A random network with `buckets` output buckets. Large `ft_range`/`out_range` make the sums
/// wrap and the output take the general (`i32`) path.
pub fn random_network(
    seed: u64,
    shape: (usize, usize),
    ft_range: i32,
    out_range: i32,
    quant: (i32, i32, i32),
) -> Network {
    random_bucketed(seed, shape, KingBuckets::NONE, ft_range, out_range, quant)
}

/// A random network with `buckets` output buckets and the king buckets `king_buckets`.
pub fn random_bucketed(
    seed: u64,
    (hidden, buckets): (usize, usize),
    king_buckets: KingBuckets,
    ft_range: i32,
    out_range: i32,
    (qa, qb, scale): (i32, i32, i32),
) -> Network {
    let mut rng = Rng::new(seed);
    Network::from_parts(NetworkParts {
        hidden,
        qa,
        qb,
        scale,
        king_buckets,
        ft_weights: (0..king_buckets.inputs() * hidden)
            .map(|_| rng.i16(ft_range))
            .collect(),
        ft_biases: (0..hidden).map(|_| rng.i16(ft_range)).collect(),
        buckets,
        out_weights: (0..buckets * 2 * hidden)
            .map(|_| rng.i16(out_range))
            .collect(),
        out_biases: (0..buckets).map(|_| rng.next() as i32 % 100_000).collect(),
    })
    .unwrap()
}

/// A king-bucket map that a king leaves on most of its moves: 16 buckets in 2 x 2 blocks.
pub fn busy_king_buckets() -> KingBuckets {
    "00112233/00112233/44556677/44556677/8899aabb/8899aabb/ccddeeff/ccddeeff"
        .parse()
        .unwrap()
}

/// Positions that reach castling, en passant and promotions quickly.
pub const START_FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1",
];

/// A random game: `(position before, move)` pairs, preferring special moves (castling, en
/// passant, promotions, then captures) so that every kind shows up.
pub fn playout(rng: &mut Rng, start: &Position, plies: usize) -> Vec<(Position, Move)> {
    let mut pos = start.clone();
    let mut out = Vec::new();
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.halfmoves() >= 100 {
            break;
        }
        let rare: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| m.is_castle() || m.is_en_passant() || m.promotion().is_some())
            .collect();
        let captures: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| pos.color_at(m.to()).is_some())
            .collect();
        let m = if !rare.is_empty() && rng.below(4) != 0 {
            rare[rng.below(rare.len())]
        } else if !captures.is_empty() && rng.below(2) == 0 {
            captures[rng.below(captures.len())]
        } else {
            moves[rng.below(moves.len())]
        };
        out.push((pos.clone(), m));
        pos.play_unchecked(m);
    }
    out
}
