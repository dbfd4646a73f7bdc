//! Builds the default network: a hand-initialised placeholder, NOT a trained network.
//!
//! `cargo run -p chess-search --example make_default_network` writes `crates/nn/networks/<file name>` and
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
use chess_rules::{Color, Role, Square};
use chess_search::HandEval;

const HIDDEN: usize = 256;
const PAIRS: usize = 64;
const QUADS: usize = 32;
const PAIR_BIAS: i16 = 130;
const PAIR_WEIGHT: i16 = 10;
const QUAD_BIAS: i16 = 128;
const QUAD_WEIGHT: i16 = 9;
const PHASE_UNIT: i32 = 3;

const _: () = assert!(2 * PAIRS + 4 * QUADS == HIDDEN);

/// HandEval's material + piece-square value (middlegame, endgame) of a `role` on
/// owner-relative `sq` (a1 = 0 on the owner's back rank), read from the evaluation itself.
fn value(eval: &HandEval, role: usize, sq: usize) -> (i32, i32) {
    let s = eval.material_psqt(Color::White, Role::ALL[role], Square::new(sq as u32));
    (s.mg, s.eg)
}

/// Part `k` of `n` of `v`: the parts add up to `v` exactly (Hermite's identity).
fn split(v: i32, k: usize, n: usize) -> i32 {
    (v + k as i32).div_euclid(n as i32)
}

/// The placeholder network.
pub fn build() -> Network {
    let eval = HandEval::default();
    let phase = eval.params().phase_weight;
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
            let (mg, eg) = value(&eval, role, sq ^ 56);
            (-mg, -eg)
        } else {
            value(&eval, role, sq)
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
            let p = PHASE_UNIT * phase[role];
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
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../nn/networks");
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
