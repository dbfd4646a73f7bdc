//! Inference: the output layer on a pair of accumulators, and whole positions evaluated from
//! scratch or from feature lists, with the arithmetic [`Network`] documents (every backend
//! reproduces it bit for bit). The weights are `network.rs`, their file `file.rs`; the first layer's
//! incremental state is `accumulator.rs`.

use chess_rules::{Color, Position};

use crate::accumulator::Accumulator;
use crate::network::Network;
use crate::simd;

impl Network {
    /// The output layer of bucket `bucket` (see [`Network::bucket`]) on two accumulators
    /// (each `H` values): centipawns for the side to move, exactly as the type documentation
    /// defines it. A bucket the network does not have panics (the slices are indexed by it).
    pub fn output(&self, stm: &[i16], nstm: &[i16], bucket: usize) -> i32 {
        let h = self.hidden();
        assert!(
            stm.len() == h && nstm.len() == h,
            "accumulators of {h} values"
        );
        let qa = self.qa() as i16;
        let (simd, small) = (self.simd(), self.small_out());
        let w = self.bucket_weights(bucket);
        let sum = simd::screlu_sum(simd, stm, &w[..h], qa, small).wrapping_add(simd::screlu_sum(
            simd,
            nstm,
            &w[h..],
            qa,
            small,
        ));
        let (mul, div) = self.output_ratio();
        (sum / self.qa())
            .wrapping_add(self.out_biases()[bucket])
            .wrapping_mul(mul)
            / div
    }

    /// Evaluates from an accumulator pair kept for the position with `stm` to move.
    #[inline]
    pub fn evaluate_accumulator(&self, acc: &Accumulator, stm: Color) -> i32 {
        self.output(
            acc.perspective(stm),
            acc.perspective(!stm),
            self.bucket(acc.pieces()),
        )
    }

    /// Evaluates a position from scratch (both accumulators refreshed): centipawns for the
    /// side to move.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let acc = Accumulator::from_position(self, pos);
        self.evaluate_accumulator(&acc, pos.turn())
    }

    /// Evaluates a position given as feature lists (side to move's first), as a batch
    /// backend sees it (the side to move's list has one feature per piece, so its length
    /// chooses the bucket). `scratch` is reused between calls (resized to `2H`).
    pub fn evaluate_features(&self, stm: &[u16], nstm: &[u16], scratch: &mut Vec<i16>) -> i32 {
        let h = self.hidden();
        scratch.resize(2 * h, 0);
        let (a, b) = scratch.split_at_mut(h);
        for (acc, list) in [(a, stm), (b, nstm)] {
            simd::accumulate(
                self.simd(),
                acc,
                self.ft_biases(),
                self.ft_weights(),
                h,
                list,
            );
        }
        self.output(&scratch[..h], &scratch[h..], self.bucket(stm.len()))
    }
}
