//! Builds the default network: a hand-initialised placeholder, NOT a trained network.
//!
//! `cargo run -p chess-nn --example make_default` writes `crates/nn/networks/<file name>` and
//! prints the name (put it in `DEFAULT_NETWORK_FILE` and the `include_bytes!` beside it).
//! The output is deterministic: the same source gives the same bytes, hence the same name
//! (a test rebuilds it and compares with the embedded file).
//!
//! The weights are set by hand so that the network computes the hand-written evaluation's
//! material + piece-square part, tapered by the game phase, in centipawns for the side to
//! move (no mobility, pawn structure, king safety or anything else HandEval adds). With
//! `QA = 255, QB = 64, SCALE = 400` the score is `total / 10404` where `total` is the output
//! sum over both accumulators. Two tricks make the SCReLU (`clamp(a, 0, 255)^2`) compute it:
//!
//! * Linear terms by pairs: neurons `B + x` and `B - x` with output weights `+w` and `-w`
//!   give `w((B + x)^2 - (B - x)^2) = 4Bwx` while both stay inside `0..=255`. With `B = 130`,
//!   `w = 10` and the same pair in the other perspective, one unit of `x` is
//!   `2 * 4 * 130 * 10 = 10400` (one centipawn, 0.04 % short). 64 pairs carry the endgame
//!   score `EG` (own minus their material + piece-square, endgame values), each a 64th of
//!   every feature's value; `floor((v + k) / 64)` over `k = 0..64` adds up to `v` exactly.
//! * The taper `(MG * phase + EG * (24 - phase)) / 24 = EG + (MG - EG) * phase / 24` needs the
//!   product of `D = MG - EG` and the phase: four neurons `A + s d + t p` (`s, t = ±1`) with
//!   output weights `s t w` give `8 w d p`. With `A = 128`, `p = 3 * phase` and `w = 9`, and
//!   the other perspective the same, that is `432 D phase` against the exact `433.5` (0.35 %
//!   short). 32 such quads each carry a 32nd of `D`.
//!
//! The other perspective's neurons see the same position with colours swapped, so their `x`
//! and `d` are negated and their output weights are too: the network is exactly
//! colour-symmetric, and the start position scores 0.

use std::path::PathBuf;

use chess_nn::{DEFAULT_QA, DEFAULT_QB, DEFAULT_SCALE, INPUTS, Network, NetworkParts};

const HIDDEN: usize = 256;
const PAIRS: usize = 64;
const QUADS: usize = 32;
const PAIR_BIAS: i16 = 130;
const PAIR_WEIGHT: i16 = 10;
const QUAD_BIAS: i16 = 128;
const QUAD_WEIGHT: i16 = 9;
const PHASE_UNIT: i32 = 3;

const _: () = assert!(2 * PAIRS + 4 * QUADS == HIDDEN);

/// HandEval's piece values (middlegame, endgame) and phase weights.
const PIECE_VALUE: [(i32, i32); 6] = [
    (85, 105),
    (330, 300),
    (350, 320),
    (470, 540),
    (980, 990),
    (0, 0),
];
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];

// HandEval's piece-square shapes, drawn from the owner's side with the eighth rank first:
// a piece on owner-relative square `s` (a1 = 0 on the owner's back rank) reads `s ^ 56`.
#[rustfmt::skip]
const PAWN_MG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     30,  40,  45,  50,  50,  45,  40,  30,
     10,  15,  20,  30,  30,  20,  15,  10,
      0,   5,  10,  22,  22,  10,   5,   0,
     -5,   0,   8,  18,  18,   5,   0,  -5,
     -5,   0,   0,   5,   5,  -5,   5,  -5,
     -5,   0,  -2, -12, -12,  10,  10,  -5,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const PAWN_EG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     50,  50,  45,  40,  40,  45,  50,  50,
     30,  30,  25,  20,  20,  25,  30,  30,
     12,  12,   8,   4,   4,   8,  12,  12,
      4,   4,   0,  -4,  -4,   0,   4,   4,
      0,   0,  -4,  -4,  -4,  -4,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const KNIGHT_MG: [i32; 64] = [
    -60, -25, -15, -10, -10, -15, -25, -60,
    -20, -10,  10,  15,  15,  10, -10, -20,
    -10,  15,  25,  30,  30,  25,  15, -10,
     -5,  10,  20,  30,  30,  20,  10,  -5,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -20,   0,  10,  12,  12,  10,   0, -20,
    -30, -15,  -5,   5,   5,  -5, -15, -30,
    -60, -25, -20, -15, -15, -20, -25, -60,
];
#[rustfmt::skip]
const KNIGHT_EG: [i32; 64] = [
    -40, -25, -15, -10, -10, -15, -25, -40,
    -25, -10,   0,   5,   5,   0, -10, -25,
    -15,   0,  10,  15,  15,  10,   0, -15,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -15,   0,  10,  15,  15,  10,   0, -15,
    -25, -10,   0,   5,   5,   0, -10, -25,
    -40, -25, -15, -10, -10, -15, -25, -40,
];
#[rustfmt::skip]
const BISHOP_MG: [i32; 64] = [
    -20, -10, -10, -10, -10, -10, -10, -20,
    -10,   0,   0,   0,   0,   0,   0, -10,
     -5,   5,  10,  10,  10,  10,   5,  -5,
     -5,  10,  10,  15,  15,  10,  10,  -5,
     -5,   5,  15,  15,  15,  15,   5,  -5,
      0,  10,  10,  10,  10,  10,  10,   0,
      0,  15,   5,   5,   5,   5,  15,   0,
    -15, -10, -12, -10, -10, -12, -10, -15,
];
#[rustfmt::skip]
const BISHOP_EG: [i32; 64] = [
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
    -10,  -3,   0,   2,   2,   0,  -3, -10,
     -8,   0,   5,   5,   5,   5,   0,  -8,
     -5,   2,   5,  10,  10,   5,   2,  -5,
     -5,   2,   5,  10,  10,   5,   2,  -5,
     -8,   0,   5,   5,   5,   5,   0,  -8,
    -10,  -3,   0,   2,   2,   0,  -3, -10,
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
];
#[rustfmt::skip]
const ROOK_MG: [i32; 64] = [
      5,  10,  10,  15,  15,  10,  10,   5,
     15,  20,  20,  25,  25,  20,  20,  15,
      0,   5,   5,  10,  10,   5,   5,   0,
     -5,   0,   0,   5,   5,   0,   0,  -5,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -15,  -5,  -5,   0,   0,  -5,  -5, -15,
    -20, -10,  -5,   0,   0,  -5, -10, -20,
     -8,  -5,   0,  10,  10,   5,  -5,  -8,
];
#[rustfmt::skip]
const ROOK_EG: [i32; 64] = [
     10,  10,  10,  10,  10,  10,  10,  10,
     15,  15,  15,  15,  15,  15,  15,  15,
      5,   5,   5,   5,   5,   5,   5,   5,
      0,   0,   0,   0,   0,   0,   0,   0,
     -2,  -2,  -2,  -2,  -2,  -2,  -2,  -2,
     -5,  -5,  -5,  -5,  -5,  -5,  -5,  -5,
     -8,  -8,  -5,  -5,  -5,  -5,  -8,  -8,
    -10,  -5,  -3,   0,   0,  -3,  -5, -10,
];
#[rustfmt::skip]
const QUEEN_MG: [i32; 64] = [
    -20, -10, -10,  -5,  -5, -10, -10, -20,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -10,   0,   5,   5,   5,   5,   0, -10,
     -5,   0,   5,   5,   5,   5,   0,  -5,
     -5,   0,   5,   5,   5,   5,   0,  -5,
    -10,   0,   5,   5,   5,   5,   0, -10,
    -10,  -5,   5,   5,   5,   0,  -5, -10,
    -20, -15, -10,   0,  -5, -10, -15, -20,
];
#[rustfmt::skip]
const QUEEN_EG: [i32; 64] = [
    -25, -15, -10,  -5,  -5, -10, -15, -25,
    -15,  -5,   0,   5,   5,   0,  -5, -15,
    -10,   0,  10,  12,  12,  10,   0, -10,
     -5,   5,  12,  18,  18,  12,   5,  -5,
     -5,   5,  12,  18,  18,  12,   5,  -5,
    -10,   0,  10,  12,  12,  10,   0, -10,
    -15,  -5,   0,   5,   5,   0,  -5, -15,
    -25, -15, -10,  -5,  -5, -10, -15, -25,
];
#[rustfmt::skip]
const KING_MG: [i32; 64] = [
    -60, -60, -60, -70, -70, -60, -60, -60,
    -50, -50, -55, -65, -65, -55, -50, -50,
    -45, -45, -50, -60, -60, -50, -45, -45,
    -40, -40, -45, -55, -55, -45, -40, -40,
    -30, -35, -40, -50, -50, -40, -35, -30,
    -15, -20, -25, -35, -35, -25, -20, -15,
     15,  10,  -5, -20, -20,  -5,  10,  15,
     20,  35,  15, -15,   0, -10,  35,  25,
];
#[rustfmt::skip]
const KING_EG: [i32; 64] = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -30, -10,   0,   5,   5,   0, -10, -30,
    -20,   5,  15,  20,  20,  15,   5, -20,
    -15,  10,  20,  30,  30,  20,  10, -15,
    -15,   5,  20,  25,  25,  20,   5, -15,
    -20,   0,  10,  15,  15,  10,   0, -20,
    -30, -10,   0,   5,   5,   0, -10, -30,
    -50, -35, -25, -20, -20, -25, -35, -50,
];

const SHAPES: [(&[i32; 64], &[i32; 64]); 6] = [
    (&PAWN_MG, &PAWN_EG),
    (&KNIGHT_MG, &KNIGHT_EG),
    (&BISHOP_MG, &BISHOP_EG),
    (&ROOK_MG, &ROOK_EG),
    (&QUEEN_MG, &QUEEN_EG),
    (&KING_MG, &KING_EG),
];

/// Material + piece-square value (middlegame, endgame) of a `role` on owner-relative `sq`.
fn value(role: usize, sq: usize) -> (i32, i32) {
    let (mg, eg) = SHAPES[role];
    (
        PIECE_VALUE[role].0 + mg[sq ^ 56],
        PIECE_VALUE[role].1 + eg[sq ^ 56],
    )
}

/// Part `k` of `n` of `v`: the parts add up to `v` exactly (Hermite's identity).
fn split(v: i32, k: usize, n: usize) -> i32 {
    (v + k as i32).div_euclid(n as i32)
}

/// The placeholder network.
pub fn build() -> Network {
    let h = HIDDEN;
    let mut ft_weights = vec![0i16; INPUTS * h];
    let mut ft_biases = vec![0i16; h];
    let mut out_weights = vec![0i16; 2 * h];
    for f in 0..INPUTS {
        let theirs = f >= 384;
        let role = (f % 384) / 64;
        let sq = f % 64;
        // Their pieces count against us, valued from their side of the board.
        let (mg, eg) = if theirs {
            let (mg, eg) = value(role, sq ^ 56);
            (-mg, -eg)
        } else {
            value(role, sq)
        };
        let sign = if theirs { -1 } else { 1 };
        let row = &mut ft_weights[f * h..(f + 1) * h];
        for k in 0..PAIRS {
            // Split the magnitude so that our piece and their mirrored piece cancel exactly.
            let x = sign * split(sign * eg, k, PAIRS);
            row[2 * k] = x as i16;
            row[2 * k + 1] = -x as i16;
        }
        for q in 0..QUADS {
            let d = sign * split(sign * (mg - eg), q, QUADS);
            let p = PHASE_UNIT * PHASE[role];
            for (i, (s, t)) in [(1, 1), (1, -1), (-1, 1), (-1, -1)].into_iter().enumerate() {
                row[2 * PAIRS + 4 * q + i] = (s * d + t * p) as i16;
            }
        }
    }
    for k in 0..PAIRS {
        ft_biases[2 * k] = PAIR_BIAS;
        ft_biases[2 * k + 1] = PAIR_BIAS;
        out_weights[2 * k] = PAIR_WEIGHT;
        out_weights[2 * k + 1] = -PAIR_WEIGHT;
    }
    for q in 0..QUADS {
        for (i, st) in [1, -1, -1, 1].into_iter().enumerate() {
            let j = 2 * PAIRS + 4 * q + i;
            ft_biases[j] = QUAD_BIAS;
            out_weights[j] = st * QUAD_WEIGHT;
        }
    }
    // The other perspective sees x and d negated: negated weights add the same amount.
    for j in 0..h {
        out_weights[h + j] = -out_weights[j];
    }
    Network::from_parts(NetworkParts {
        hidden: h,
        qa: DEFAULT_QA,
        qb: DEFAULT_QB,
        scale: DEFAULT_SCALE,
        ft_weights,
        ft_biases,
        out_weights,
        out_bias: 0,
    })
    .expect("the placeholder's parts have the right sizes")
}

#[allow(dead_code)]
fn main() {
    let net = build();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("networks");
    let path = dir.join(net.file_name());
    if let Err(e) = net.save(&path) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    println!("{}", net.file_name());
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
        "8/8/4k3/8/8/3R4/8/4K3 w - - 0 1",
    ] {
        let pos = chess_rules::Position::from_fen(fen).unwrap();
        println!("{:>6} cp  {fen}", net.evaluate(&pos));
    }
}
