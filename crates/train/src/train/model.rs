//! The float model: the chess-nn shape `(768K -> H) x 2 -> 1` with SCReLU in `f32`,
//! optionally several output layers (buckets, chosen by the number of pieces as in chess-nn)
//! and `K` king buckets (sets of input features chosen by each side's king square), its
//! initialisation and forward pass, and its quantisation into a chess-nn network.
//!
//! **Quantisation** (QA = 255, QB = 64): feature weights and biases `round(w * QA)`, output
//! weights `round(w * QB)`, output bias `round(b * QA * QB)`. Weights are clamped throughout
//! training (projected after each step) so that the integer arithmetic cannot wrap:
//! * feature weights and biases to `±FT_LIMIT / QA` with `FT_LIMIT = 32767 / 33 = 992`, so a
//!   bias plus 32 active rows stays within i16;
//! * output weights to `±L / QB`, where `L` is `--output-weight-limit` (default
//!   [`default_out_limit`]: 20 for H = 256, the limit of the output arithmetic before
//!   2026-12-05) and at most [`max_out_limit`]: the largest integer for which `2H` terms
//!   `(QA * L) * QA` still sum within `i32`, 64 for H = 256 and 32 for H = 512 (a weight
//!   above 128, where `QA * L` no longer fits `i16`, takes the kernels' general path);
//! * the output bias to `±B / (QA * QB)` (in every bucket) with `B = i32::MAX / M / 2`,
//!   `M = 5` the numerator of `SCALE / (QA * QB)` reduced (`chess_nn::output_ratio`), so
//!   that `sum / QA` and `out_bias` each stay within `B` and `(sum / QA + out_bias) * M`
//!   within `i32`.

use chess_nn::{
    DEFAULT_QA, DEFAULT_QB, DEFAULT_SCALE, KingBuckets, MAX_ACTIVE, NetworkParts, output_bucket,
    output_ratio,
};

use crate::rng::{Rng, uniform};

pub(super) const QA: i32 = DEFAULT_QA;
pub(super) const QB: i32 = DEFAULT_QB;
pub(super) const SCALE: i32 = DEFAULT_SCALE;
/// Largest quantised feature weight or bias: a bias plus 32 rows fits in i16.
pub const FT_LIMIT: i32 = i16::MAX as i32 / (MAX_ACTIVE as i32 + 1);
/// The multiplier of the output's last step (`SCALE / (QA * QB)` reduced: 5 / 204).
const OUT_MUL: i32 = output_ratio(QA, QB, SCALE).0;
pub(super) const OUT_BUDGET: i32 = i32::MAX / OUT_MUL / 2;

/// The default limit of the quantised output weights for hidden size `hidden`: the one the
/// output's last step imposed before its fraction was reduced (`i32::MAX / SCALE / 2` over
/// `2H * QA`; 20 for H = 256, 10 for H = 512). Kept as the default because a larger one did
/// not help: one pass over 8.4 M positions allowed 64 scored -25.9 Elo (95% -39.9 .. -12.0)
/// against the starting network, the same with 20 -7.8 (-20.5 .. +4.9) (docs/network.md).
pub fn default_out_limit(hidden: usize) -> i32 {
    (i32::MAX / SCALE / 2) / (2 * hidden as i32 * QA)
}

/// The largest limit of the quantised output weights for hidden size `hidden` (see the
/// module documentation).
pub fn max_out_limit(hidden: usize) -> i32 {
    let terms = 2 * hidden as i32;
    (OUT_BUDGET / (terms * QA)).min(i32::MAX / (terms * QA * QA))
}

/// Float weights, laid out as in [`NetworkParts`].
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    pub hidden: usize,
    /// Output buckets (see `chess_nn::output_bucket`).
    pub buckets: usize,
    /// The input layout: `ft_w` has `768 * K` rows for `K` king buckets.
    pub king_buckets: KingBuckets,
    pub ft_w: Vec<f32>,
    pub ft_b: Vec<f32>,
    /// `buckets * 2H`, bucket-major.
    pub out_w: Vec<f32>,
    /// `buckets`.
    pub out_b: Vec<f32>,
}

impl FloatNet {
    pub fn random(
        hidden: usize,
        buckets: usize,
        king_buckets: KingBuckets,
        rng: &mut Rng,
    ) -> FloatNet {
        let ft = 1.0 / (MAX_ACTIVE as f32).sqrt();
        let out = 1.0 / (2.0 * hidden as f32).sqrt();
        let mut net = FloatNet {
            hidden,
            buckets,
            king_buckets,
            ft_w: (0..king_buckets.inputs() * hidden)
                .map(|_| uniform(rng, ft))
                .collect(),
            ft_b: vec![0.0; hidden],
            out_w: (0..buckets * 2 * hidden)
                .map(|_| uniform(rng, out))
                .collect(),
            out_b: vec![0.0; buckets],
        };
        net.clamp(default_out_limit(hidden));
        net
    }

    /// The same network with `buckets` output buckets, each a copy of this one's only output
    /// layer (so it evaluates every position as before), to train further with buckets.
    /// `None` unless this network has one bucket.
    pub fn with_buckets(self, buckets: usize) -> Option<FloatNet> {
        if self.buckets == buckets {
            return Some(self);
        }
        if self.buckets != 1 {
            return None;
        }
        Some(FloatNet {
            buckets,
            out_w: self.out_w.repeat(buckets),
            out_b: self.out_b.repeat(buckets),
            ..self
        })
    }

    /// The same network with the king buckets `layout`, each bucket's feature weights a copy
    /// of this one's (so it evaluates every position as before), to train further with
    /// them. `None` unless this network has no king buckets (or has `layout` already).
    pub fn with_king_buckets(self, layout: KingBuckets) -> Option<FloatNet> {
        if self.king_buckets == layout {
            return Some(self);
        }
        if self.king_buckets != KingBuckets::NONE {
            return None;
        }
        Some(FloatNet {
            king_buckets: layout,
            ft_w: self.ft_w.repeat(layout.count()),
            ..self
        })
    }

    /// The same network with `hidden` neurons per perspective (at least its own): the first
    /// ones are this network's, the new ones get random feature weights (as
    /// [`Self::random`] draws them), zero biases and zero output weights, so the wider
    /// network evaluates every position exactly as this one does and training grows the new
    /// neurons from there. `None` when `hidden` is smaller.
    pub fn widened(self, hidden: usize, rng: &mut Rng) -> Option<FloatNet> {
        let old = self.hidden;
        if hidden < old {
            return None;
        }
        if hidden == old {
            return Some(self);
        }
        let ft = 1.0 / (MAX_ACTIVE as f32).sqrt();
        let mut ft_w = Vec::with_capacity(self.king_buckets.inputs() * hidden);
        for row in self.ft_w.chunks_exact(old) {
            ft_w.extend_from_slice(row);
            ft_w.extend((old..hidden).map(|_| uniform(rng, ft)));
        }
        let mut ft_b = self.ft_b;
        ft_b.resize(hidden, 0.0);
        let mut out_w = Vec::with_capacity(self.buckets * 2 * hidden);
        for half in self.out_w.chunks_exact(old) {
            out_w.extend_from_slice(half);
            out_w.resize(out_w.len() + hidden - old, 0.0);
        }
        Some(FloatNet {
            hidden,
            buckets: self.buckets,
            king_buckets: self.king_buckets,
            ft_w,
            ft_b,
            out_w,
            out_b: self.out_b,
        })
    }

    /// The bucket a position with feature lists of these lengths (one feature per piece)
    /// uses, as chess-nn chooses it.
    #[inline]
    pub(super) fn bucket(&self, stm: &[u16]) -> usize {
        output_bucket(stm.len(), self.buckets)
    }

    /// Bucket `b`'s `2H` output weights.
    #[inline]
    pub(super) fn bucket_weights(&self, b: usize) -> &[f32] {
        &self.out_w[b * 2 * self.hidden..][..2 * self.hidden]
    }

    /// The float weights a quantised network stands for (the inverse of [`Self::quantise`]:
    /// quantising the result gives `parts` back when its `SCALE` is the trainer's). A network
    /// whose `SCALE` differs (one matched to another's scale by `chess-train rescale`) has
    /// its output layer multiplied by `SCALE / 400`, so that it evaluates alike (to rounding)
    /// at the trainer's scale. `None` when the network was made with another QA or QB.
    pub fn dequantise(parts: &NetworkParts) -> Option<FloatNet> {
        if (parts.qa, parts.qb) != (QA, QB) || parts.scale < 1 {
            return None;
        }
        let by = |v: &[i16], s: i32| v.iter().map(|&w| f32::from(w) / s as f32).collect();
        let k = parts.scale as f32 / SCALE as f32;
        Some(FloatNet {
            hidden: parts.hidden,
            buckets: parts.buckets,
            king_buckets: parts.king_buckets,
            ft_w: by(&parts.ft_weights, QA),
            ft_b: by(&parts.ft_biases, QA),
            out_w: parts
                .out_weights
                .iter()
                .map(|&w| f32::from(w) / QB as f32 * k)
                .collect(),
            out_b: parts
                .out_biases
                .iter()
                .map(|&b| b as f32 / (QA * QB) as f32 * k)
                .collect(),
        })
    }

    /// A network of `net`'s shape with every weight zero (gradients, Adam's moments).
    pub(super) fn zeros_like(net: &FloatNet) -> FloatNet {
        let (hidden, buckets) = (net.hidden, net.buckets);
        FloatNet {
            hidden,
            buckets,
            king_buckets: net.king_buckets,
            ft_w: vec![0.0; net.king_buckets.inputs() * hidden],
            ft_b: vec![0.0; hidden],
            out_w: vec![0.0; buckets * 2 * hidden],
            out_b: vec![0.0; buckets],
        }
    }

    fn ft_limit() -> f32 {
        FT_LIMIT as f32 / QA as f32
    }

    fn out_b_limit() -> f32 {
        OUT_BUDGET as f32 / (QA * QB) as f32
    }

    /// Projects the weights into the range quantisation can represent without wrapping, the
    /// output weights into `±out_limit` quantised steps.
    #[inline(always)]
    pub fn clamp(&mut self, out_limit: i32) {
        let ft = Self::ft_limit();
        let ow = out_limit as f32 / QB as f32;
        self.ft_w.iter_mut().for_each(|w| *w = w.clamp(-ft, ft));
        self.ft_b.iter_mut().for_each(|w| *w = w.clamp(-ft, ft));
        self.out_w.iter_mut().for_each(|w| *w = w.clamp(-ow, ow));
        let ob = Self::out_b_limit();
        self.out_b.iter_mut().for_each(|b| *b = b.clamp(-ob, ob));
    }

    #[inline(always)]
    pub(super) fn accumulate(&self, features: &[u16], acc: &mut [f32]) {
        let h = self.hidden;
        acc.copy_from_slice(&self.ft_b);
        for &f in features {
            let row = &self.ft_w[usize::from(f) * h..][..h];
            acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
        }
    }

    /// The output (in units of 400 cp) for a position given by its feature lists.
    pub fn forward(&self, stm: &[u16], nstm: &[u16]) -> f32 {
        let h = self.hidden;
        let mut acc = vec![0.0; 2 * h];
        self.accumulate(stm, &mut acc[..h]);
        self.accumulate(nstm, &mut acc[h..]);
        let b = self.bucket(stm);
        output(&acc, self.bucket_weights(b), self.out_b[b])
    }

    /// The largest output weight in quantised steps (as [`Self::quantise`] rounds it).
    pub fn out_reach(&self) -> i32 {
        self.out_w
            .iter()
            .map(|&w| (w * QB as f32).round().abs() as i32)
            .max()
            .unwrap_or(0)
    }

    /// Rounds into the chess-nn integer format, the output weights within `±out_limit`.
    pub fn quantise(&self, out_limit: i32) -> NetworkParts {
        let q = |w: f32, s: i32, lim: i32| (w * s as f32).round().clamp(-lim as f32, lim as f32);
        let ow_lim = out_limit;
        NetworkParts {
            hidden: self.hidden,
            buckets: self.buckets,
            king_buckets: self.king_buckets,
            qa: QA,
            qb: QB,
            scale: SCALE,
            ft_weights: self
                .ft_w
                .iter()
                .map(|&w| q(w, QA, FT_LIMIT) as i16)
                .collect(),
            ft_biases: self
                .ft_b
                .iter()
                .map(|&w| q(w, QA, FT_LIMIT) as i16)
                .collect(),
            out_weights: self
                .out_w
                .iter()
                .map(|&w| q(w, QB, ow_lim) as i16)
                .collect(),
            out_biases: self
                .out_b
                .iter()
                .map(|&b| q(b, QA * QB, OUT_BUDGET) as i32)
                .collect(),
        }
    }

    pub(super) fn arrays(&self) -> [&[f32]; 4] {
        [&self.ft_w, &self.ft_b, &self.out_w, &self.out_b]
    }
}

/// An output layer (one bucket's weights and bias) on both accumulators (side to move's
/// first): SCReLU, then the weighted sum.
#[inline(always)]
pub(super) fn output(acc: &[f32], out_w: &[f32], out_b: f32) -> f32 {
    acc.iter()
        .zip(out_w)
        .map(|(&a, &w)| {
            let c = a.clamp(0.0, 1.0);
            c * c * w
        })
        .sum::<f32>()
        + out_b
}

/// The logistic function: an output (or a score in units of 400 cp) as an expected result.
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use chess_nn::Network;
    use chess_rules::Position;

    use super::*;

    /// The float network's and the quantised network's evaluations (centipawns) of `fen`.
    fn both_evaluations(net: &FloatNet, quantised: &Network, fen: &str) -> (f32, f32) {
        let pos = Position::from_fen(fen).unwrap();
        let stm = chess_nn::active_features(&pos, pos.turn());
        let nstm = chess_nn::active_features(&pos, !pos.turn());
        (
            net.forward(&stm, &nstm) * SCALE as f32,
            quantised.evaluate(&pos) as f32,
        )
    }

    #[test]
    fn quantised_network_agrees_with_float() {
        let mut net = FloatNet::random(32, 1, KingBuckets::NONE, &mut Rng::new(7));
        // Output weights on the QB grid, so only the feature transformer's rounding and the
        // integer divisions separate the two.
        for w in &mut net.out_w {
            *w = (*w * 4.0 * QB as f32).round() / QB as f32;
        }
        net.clamp(default_out_limit(32));
        let quantised = Network::from_parts(net.quantise(default_out_limit(32))).unwrap();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4",
        ] {
            let (float_cp, int_cp) = both_evaluations(&net, &quantised, fen);
            assert!((float_cp - int_cp).abs() < 5.0, "{float_cp} vs {int_cp}");
        }
    }

    #[test]
    fn dequantised_network_quantises_back_to_itself() {
        // At the trainer's scale (the default network's weights; its own file may state a
        // matched scale, below).
        let parts = NetworkParts {
            scale: SCALE,
            ..Network::clone(&Network::default_network()).into_parts()
        };
        let net = FloatNet::dequantise(&parts).unwrap();
        let mut clamped = net.clone();
        let limit = default_out_limit(parts.hidden);
        clamped.clamp(limit);
        assert_eq!(
            clamped, net,
            "a shipped network lies inside the default training limits"
        );
        assert_eq!(net.quantise(limit), parts);
        let other = NetworkParts {
            qb: QB * 2,
            ..parts
        };
        assert!(FloatNet::dequantise(&other).is_none());
    }

    #[test]
    fn a_network_of_another_scale_dequantises_to_the_same_evaluations() {
        let mut parts = Network::clone(&Network::default_network()).into_parts();
        parts.scale = 343;
        let quantised = Network::from_parts(parts.clone()).unwrap();
        let net = FloatNet::dequantise(&parts).unwrap();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4",
            "8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 99 50",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ] {
            let (float_cp, int_cp) = both_evaluations(&net, &quantised, fen);
            assert!(
                (float_cp - int_cp).abs() < 2.0,
                "{fen}: {float_cp} vs {int_cp}"
            );
        }
    }

    #[test]
    fn limits_keep_integer_arithmetic_in_range() {
        assert_eq!(FT_LIMIT, 992);
        assert_eq!(OUT_MUL, 5);
        assert_eq!(max_out_limit(256), 64);
        assert_eq!(max_out_limit(512), 32);
        assert_eq!(max_out_limit(16), 1032);
        assert_eq!(default_out_limit(256), 20);
        assert_eq!(default_out_limit(512), 10);
        for hidden in (16..=chess_nn::MAX_HIDDEN).step_by(16) {
            assert!(
                default_out_limit(hidden) <= max_out_limit(hidden),
                "{hidden}"
            );
            let ow = i64::from(max_out_limit(hidden));
            let terms = 2 * hidden as i64;
            let qa = i64::from(QA);
            // The sum of 2H terms (c * w) * c.
            assert!(terms * qa * ow * qa <= i64::from(i32::MAX), "{hidden}");
            // Largest |sum / QA| plus the largest bias, times the reduced multiplier.
            let sum_q = terms * qa * ow;
            let last = (sum_q + i64::from(OUT_BUDGET)) * i64::from(OUT_MUL);
            assert!(last <= i64::from(i32::MAX), "{hidden}");
        }
    }

    /// A network at every limit (output weights and bias at their largest, every accumulator
    /// at QA) evaluates to exactly what unbounded arithmetic gives: nothing wraps.
    #[test]
    fn a_network_at_its_limits_does_not_wrap() {
        for hidden in [16, 256, 512, chess_nn::MAX_HIDDEN] {
            for sign in [1, -1] {
                let ow = sign * max_out_limit(hidden);
                let parts = NetworkParts {
                    hidden,
                    buckets: 1,
                    qa: QA,
                    qb: QB,
                    scale: SCALE,
                    king_buckets: KingBuckets::NONE,
                    ft_weights: vec![0; chess_nn::INPUTS * hidden],
                    ft_biases: vec![FT_LIMIT as i16; hidden],
                    out_weights: vec![ow as i16; 2 * hidden],
                    out_biases: vec![sign * OUT_BUDGET],
                };
                let net = chess_nn::Network::from_parts(parts).unwrap();
                let acc = vec![QA as i16; hidden];
                let sum = 2 * hidden as i64 * i64::from(QA) * i64::from(ow) * i64::from(QA);
                let exact = (sum / i64::from(QA) + i64::from(sign * OUT_BUDGET)) * i64::from(SCALE)
                    / i64::from(QA * QB);
                assert_eq!(
                    i64::from(net.output(&acc, &acc, 0)),
                    exact,
                    "{hidden} {sign}"
                );
            }
        }
    }
}

#[cfg(test)]
mod widen_tests {
    use chess_nn::Network;
    use chess_rules::Position;

    use super::*;

    /// The two float networks give the same output on each position, and so do their
    /// quantisations within `limit`.
    pub(super) fn assert_evaluate_alike((a, b): (&FloatNet, &FloatNet), limit: i32, fens: &[&str]) {
        let quant_a = Network::from_parts(a.quantise(limit)).unwrap();
        let quant_b = Network::from_parts(b.quantise(limit)).unwrap();
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            let stm = chess_nn::active_features(&pos, pos.turn());
            let nstm = chess_nn::active_features(&pos, !pos.turn());
            assert_eq!(a.forward(&stm, &nstm), b.forward(&stm, &nstm), "{fen}");
            assert_eq!(quant_a.evaluate(&pos), quant_b.evaluate(&pos), "{fen}");
        }
    }

    /// A widened network evaluates every position as the original did, in float and once
    /// quantised, and keeps the original's weights in its first neurons.
    #[test]
    fn a_widened_network_evaluates_as_the_original() {
        let parts = Network::clone(&Network::default_network()).into_parts();
        let (h, buckets) = (parts.hidden, parts.buckets);
        let original = FloatNet::dequantise(&parts).unwrap();
        let wide = original.clone().widened(h + 128, &mut Rng::new(3)).unwrap();
        assert_eq!((wide.hidden, wide.buckets), (h + 128, buckets));
        assert_eq!(&wide.ft_w[..h], &original.ft_w[..h]);
        assert_eq!(&wide.ft_w[h + 128..2 * h + 128], &original.ft_w[h..2 * h]);
        assert!(wide.ft_w[h..h + 128].iter().any(|&w| w != 0.0));
        assert!(wide.out_w[h..h + 128].iter().all(|&w| w == 0.0));
        assert_eq!(
            &wide.out_w[(h + 128)..(2 * h + 128)],
            &original.out_w[h..2 * h]
        );
        assert!(original.clone().widened(h - 16, &mut Rng::new(3)).is_none());
        assert_eq!(
            original.clone().widened(h, &mut Rng::new(3)),
            Some(original.clone())
        );
        // Quantised with the starting network's limit (20), which holds its weights; the
        // default limit at 384 neurons would be 13.
        let limit = default_out_limit(h);
        let q1 = Network::from_parts(wide.quantise(limit)).unwrap();
        assert_eq!(q1.hidden(), h + 128);
        assert_evaluate_alike(
            (&original, &wide),
            limit,
            &[
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
            ],
        );
    }
}

#[cfg(test)]
mod bucket_tests {
    use chess_nn::Network;
    use chess_rules::Position;

    use super::*;

    /// Copying the one output layer into every bucket changes no evaluation, and the copy
    /// quantises into a version-2 network that evaluates like the original.
    #[test]
    fn buckets_copied_from_one_layer_evaluate_alike() {
        // The default network's first output layer alone: a network of one bucket.
        let mut parts = Network::clone(&Network::default_network()).into_parts();
        parts.out_weights.truncate(2 * parts.hidden);
        parts.out_biases.truncate(1);
        parts.buckets = 1;
        let one = FloatNet::dequantise(&parts).unwrap();
        let eight = one.clone().with_buckets(8).unwrap();
        assert_eq!((eight.buckets, eight.out_w.len()), (8, 8 * 512));
        assert!(eight.clone().with_buckets(4).is_none());
        let limit = default_out_limit(parts.hidden);
        let q8 = Network::from_parts(eight.quantise(limit)).unwrap();
        assert_eq!(q8.buckets(), 8);
        super::widen_tests::assert_evaluate_alike(
            (&one, &eight),
            limit,
            &[
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
            ],
        );
        // A bucket's weights move only the positions of that bucket.
        let mut moved = eight.clone();
        moved.out_b[7] += 1.0;
        let start = Position::startpos();
        let king_queen = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
        let f = |net: &FloatNet, pos: &Position| {
            net.forward(
                &chess_nn::active_features(pos, pos.turn()),
                &chess_nn::active_features(pos, !pos.turn()),
            )
        };
        assert_ne!(f(&moved, &start), f(&eight, &start));
        assert_eq!(f(&moved, &king_queen), f(&eight, &king_queen));
    }
}

#[cfg(test)]
mod king_bucket_tests {
    use chess_nn::Network;
    use chess_rules::Position;

    use super::*;

    /// Copying the feature weights into every king bucket changes no evaluation, in float
    /// and once quantised (a version-3 network); a bucket's weights then move only the
    /// positions whose king stands in it.
    #[test]
    fn king_buckets_copied_from_one_set_evaluate_alike() {
        let parts = Network::clone(&Network::default_network()).into_parts();
        let one = FloatNet::dequantise(&parts).unwrap();
        let layout: KingBuckets = "00011222/3".parse().unwrap();
        let four = one.clone().with_king_buckets(layout).unwrap();
        assert_eq!(four.ft_w.len(), 4 * one.ft_w.len());
        assert!(four.clone().with_king_buckets(KingBuckets::NONE).is_none());
        assert_eq!(four.clone().with_king_buckets(layout), Some(four.clone()));
        let limit = default_out_limit(parts.hidden);
        let q1 = Network::from_parts(one.quantise(limit)).unwrap();
        let q4 = Network::from_parts(four.quantise(limit)).unwrap();
        assert_eq!(q4.king_buckets(), &layout);
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bq1rk1/pppp1ppp/2n2n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 b - - 0 6",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "2kr4/8/8/8/8/8/8/4K3 w - - 0 1",
        ];
        let f = |net: &FloatNet, pos: &Position| {
            let kb = net.king_buckets;
            net.forward(
                &kb.active_features(pos, pos.turn()),
                &kb.active_features(pos, !pos.turn()),
            )
        };
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(f(&one, &pos), f(&four, &pos), "{fen}");
            assert_eq!(q1.evaluate(&pos), q4.evaluate(&pos), "{fen}");
        }
        // Bucket 2 (white's king on f1-h1, black's on f8-h8) moved: only the castled
        // middlegame (both kings on g-files) changes.
        let mut moved = four.clone();
        let (rows, h) = (768, four.hidden);
        moved.ft_w[2 * rows * h..3 * rows * h]
            .iter_mut()
            .for_each(|w| *w += 0.01);
        let castled = Position::from_fen(fens[1]).unwrap();
        let start = Position::from_fen(fens[0]).unwrap();
        assert_ne!(f(&moved, &castled), f(&four, &castled));
        assert_eq!(f(&moved, &start), f(&four, &start));
    }
}
