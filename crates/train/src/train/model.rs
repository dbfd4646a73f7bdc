//! The float model: the chess-nn shape `(768 -> H) x 2 -> 1` with SCReLU in `f32`, its
//! initialisation and forward pass, and its quantisation into a chess-nn network.
//!
//! **Quantisation** (QA = 255, QB = 64): feature weights and biases `round(w * QA)`, output
//! weights `round(w * QB)`, output bias `round(b * QA * QB)`. Weights are clamped throughout
//! training (projected after each step) so that the integer arithmetic cannot wrap:
//! * feature weights and biases to `±FT_LIMIT / QA` with `FT_LIMIT = 32767 / 33 = 992`, so a
//!   bias plus 32 active rows stays within i16;
//! * output weights to `±floor(B / (2H * QA)) / QB` and the output bias to `±B / (QA * QB)`
//!   with `B = i32::MAX / SCALE / 2`, so that `sum / QA` and `out_bias` each stay within
//!   `B` and `(sum / QA + out_bias) * SCALE` within i32 (with H = 256 the output weight
//!   limit is 20 / 64 = 0.3125, the bias limit 164.5).

use chess_nn::{DEFAULT_QA, DEFAULT_QB, DEFAULT_SCALE, INPUTS, MAX_ACTIVE, NetworkParts};

use crate::rng::{Rng, uniform};

pub(super) const QA: i32 = DEFAULT_QA;
pub(super) const QB: i32 = DEFAULT_QB;
pub(super) const SCALE: i32 = DEFAULT_SCALE;
/// Largest quantised feature weight or bias: a bias plus 32 rows fits in i16.
pub const FT_LIMIT: i32 = i16::MAX as i32 / (MAX_ACTIVE as i32 + 1);
pub(super) const OUT_BUDGET: i32 = i32::MAX / SCALE / 2;

/// Float weights, laid out as in [`NetworkParts`].
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    pub hidden: usize,
    pub ft_w: Vec<f32>,
    pub ft_b: Vec<f32>,
    pub out_w: Vec<f32>,
    pub out_b: f32,
}

impl FloatNet {
    pub fn random(hidden: usize, rng: &mut Rng) -> FloatNet {
        let ft = 1.0 / (MAX_ACTIVE as f32).sqrt();
        let out = 1.0 / (2.0 * hidden as f32).sqrt();
        let mut net = FloatNet {
            hidden,
            ft_w: (0..INPUTS * hidden).map(|_| uniform(rng, ft)).collect(),
            ft_b: vec![0.0; hidden],
            out_w: (0..2 * hidden).map(|_| uniform(rng, out)).collect(),
            out_b: 0.0,
        };
        net.clamp();
        net
    }

    /// The float weights a quantised network stands for (the inverse of [`Self::quantise`]:
    /// quantising the result gives `parts` back). `None` when the network was made with other
    /// scales than the trainer's.
    pub fn dequantise(parts: &NetworkParts) -> Option<FloatNet> {
        if (parts.qa, parts.qb, parts.scale) != (QA, QB, SCALE) {
            return None;
        }
        let by = |v: &[i16], s: i32| v.iter().map(|&w| f32::from(w) / s as f32).collect();
        Some(FloatNet {
            hidden: parts.hidden,
            ft_w: by(&parts.ft_weights, QA),
            ft_b: by(&parts.ft_biases, QA),
            out_w: by(&parts.out_weights, QB),
            out_b: parts.out_bias as f32 / (QA * QB) as f32,
        })
    }

    pub(super) fn zeros(hidden: usize) -> FloatNet {
        FloatNet {
            hidden,
            ft_w: vec![0.0; INPUTS * hidden],
            ft_b: vec![0.0; hidden],
            out_w: vec![0.0; 2 * hidden],
            out_b: 0.0,
        }
    }

    fn ft_limit() -> f32 {
        FT_LIMIT as f32 / QA as f32
    }

    fn out_w_limit(hidden: usize) -> f32 {
        (OUT_BUDGET / (2 * hidden as i32 * QA)) as f32 / QB as f32
    }

    fn out_b_limit() -> f32 {
        OUT_BUDGET as f32 / (QA * QB) as f32
    }

    /// Projects the weights into the range quantisation can represent without wrapping.
    pub fn clamp(&mut self) {
        let ft = Self::ft_limit();
        let ow = Self::out_w_limit(self.hidden);
        self.ft_w.iter_mut().for_each(|w| *w = w.clamp(-ft, ft));
        self.ft_b.iter_mut().for_each(|w| *w = w.clamp(-ft, ft));
        self.out_w.iter_mut().for_each(|w| *w = w.clamp(-ow, ow));
        self.out_b = self.out_b.clamp(-Self::out_b_limit(), Self::out_b_limit());
    }

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
        output(&acc, &self.out_w, self.out_b)
    }

    /// Rounds into the chess-nn integer format.
    pub fn quantise(&self) -> NetworkParts {
        let q = |w: f32, s: i32, lim: i32| (w * s as f32).round().clamp(-lim as f32, lim as f32);
        let ow_lim = OUT_BUDGET / (2 * self.hidden as i32 * QA);
        NetworkParts {
            hidden: self.hidden,
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
            out_bias: q(self.out_b, QA * QB, OUT_BUDGET) as i32,
        }
    }

    pub(super) fn arrays(&self) -> [&[f32]; 3] {
        [&self.ft_w, &self.ft_b, &self.out_w]
    }
}

/// The output layer on both accumulators (side to move's first): SCReLU, then the weighted sum.
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

    #[test]
    fn quantised_network_agrees_with_float() {
        let mut net = FloatNet::random(32, &mut Rng::new(7));
        // Output weights on the QB grid, so only the feature transformer's rounding and the
        // integer divisions separate the two.
        for w in &mut net.out_w {
            *w = (*w * 4.0 * QB as f32).round() / QB as f32;
        }
        net.clamp();
        let quantised = Network::from_parts(net.quantise()).unwrap();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let stm = chess_nn::active_features(&pos, pos.turn());
            let nstm = chess_nn::active_features(&pos, !pos.turn());
            let float_cp = net.forward(&stm, &nstm) * SCALE as f32;
            let int_cp = quantised.evaluate(&pos) as f32;
            assert!((float_cp - int_cp).abs() < 5.0, "{float_cp} vs {int_cp}");
        }
    }

    #[test]
    fn dequantised_network_quantises_back_to_itself() {
        let parts = Network::clone(&Network::default_network()).into_parts();
        let net = FloatNet::dequantise(&parts).unwrap();
        let mut clamped = net.clone();
        clamped.clamp();
        assert_eq!(
            clamped, net,
            "a shipped network lies inside the training limits"
        );
        assert_eq!(net.quantise(), parts);
        let other = NetworkParts {
            qb: QB * 2,
            ..parts
        };
        assert!(FloatNet::dequantise(&other).is_none());
    }

    #[test]
    fn limits_keep_integer_arithmetic_in_range() {
        assert_eq!(FT_LIMIT, 992);
        let ow = OUT_BUDGET / (2 * 256 * QA);
        assert_eq!(ow, 20);
        // Largest |sum / QA| plus the largest bias, times SCALE, fits in i32.
        let sum_q = i64::from(2 * 256 * QA) * i64::from(ow);
        assert!((sum_q + i64::from(OUT_BUDGET)) * i64::from(SCALE) <= i64::from(i32::MAX));
    }
}
