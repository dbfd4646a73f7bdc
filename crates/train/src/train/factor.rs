//! The shared factor of king-bucketed feature weights (`--factorise`).
//!
//! With `K` king buckets a feature (a piece on a square) has `K` rows of weights, one per
//! bucket, and each row learns only from the positions whose king stands in its bucket: a
//! quarter of the data or less. Factorised, each row is trained as the sum of the bucket's own
//! part and a part shared by every bucket, which learns from all positions. The network file
//! is unchanged (it holds the sums), and so are its size and speed. (Measured in
//! docs/network.md's twelfth round: on 29 M positions four buckets lost as much with the
//! factor as without it.)
//!
//! The trainer keeps the sums themselves in `FloatNet::ft_w` (what the forward pass and the
//! network file use) and only the shared part's Adam moments here. A batch's gradient with
//! respect to the shared row of a feature is the sum of its gradients in every bucket; Adam's
//! step on it moves that feature's row in all `K` buckets alike, beside each touched row's
//! own step. That is the same as keeping the two parts apart and adding them, without a second
//! row to read for every feature in the forward and backward passes.

use chess_nn::INPUTS;

use super::optimiser::adam_step;

/// The shared part's Adam state (saved in checkpoints) and its per-batch scratch.
#[derive(Clone, Debug)]
pub(super) struct Factor {
    /// Adam's first moments, `768 * H`.
    pub(super) m: Vec<f32>,
    /// Adam's second moments, `768 * H`.
    pub(super) v: Vec<f32>,
    grad: Vec<f32>,
    touched: Vec<bool>,
    list: Vec<u16>,
    step: Vec<f32>,
}

impl PartialEq for Factor {
    /// The saved state only (the scratch is empty between batches).
    fn eq(&self, other: &Factor) -> bool {
        (&self.m, &self.v) == (&other.m, &other.v)
    }
}

impl Factor {
    /// Zero moments for hidden size `hidden`.
    pub(super) fn new(hidden: usize) -> Factor {
        Factor::with_moments(vec![0.0; INPUTS * hidden], vec![0.0; INPUTS * hidden])
    }

    /// The state read from a checkpoint.
    pub(super) fn with_moments(m: Vec<f32>, v: Vec<f32>) -> Factor {
        let (rows, hidden) = (INPUTS, m.len() / INPUTS);
        Factor {
            grad: vec![0.0; m.len()],
            touched: vec![false; rows],
            list: Vec::new(),
            step: vec![0.0; hidden],
            m,
            v,
        }
    }

    /// Sums the batch's gradient `grad` of the feature rows `touched` (rows of `ft_w`, `768`
    /// per king bucket) into the shared rows. Call before the rows' own step clears `grad`.
    pub(super) fn gather(&mut self, grad: &[f32], touched: &[u16], hidden: usize) {
        for &f in touched {
            let f = usize::from(f);
            let p = f % INPUTS;
            if !self.touched[p] {
                self.touched[p] = true;
                self.list.push(p as u16);
            }
            let dst = &mut self.grad[p * hidden..][..hidden];
            dst.iter_mut()
                .zip(&grad[f * hidden..][..hidden])
                .for_each(|(d, g)| *d += g);
        }
    }

    /// Adam's step on the shared rows gathered since the last call, added to the feature's
    /// row in every one of the `ft_w.len() / (768 * H)` king buckets.
    pub(super) fn apply(&mut self, ft_w: &mut [f32], hidden: usize, lr_t: f32) {
        let buckets = ft_w.len() / (INPUTS * hidden);
        for &p in &self.list {
            let p = usize::from(p);
            let r = p * hidden..p * hidden + hidden;
            self.step.fill(0.0);
            adam_step(
                &mut self.step,
                &self.grad[r.clone()],
                &mut self.m[r.clone()],
                &mut self.v[r.clone()],
                lr_t,
            );
            self.grad[r].fill(0.0);
            self.touched[p] = false;
            for b in 0..buckets {
                let row = &mut ft_w[(b * INPUTS + p) * hidden..][..hidden];
                row.iter_mut().zip(&self.step).for_each(|(w, s)| *w += s);
            }
        }
        self.list.clear();
    }
}

#[cfg(test)]
mod tests {
    use chess_nn::{KingBuckets, Simd};

    use super::super::dataset::{Dataset, toy_set};
    use super::super::model::default_out_limit;
    use super::super::optimiser::Trainer;
    use super::*;

    fn four() -> KingBuckets {
        "00011222/3".parse().unwrap()
    }

    /// `set` with every feature moved into king bucket `b`.
    fn in_bucket(set: &Dataset, b: u16) -> Dataset {
        let shift = |v: &[u16]| v.iter().map(|&f| f + b * INPUTS as u16).collect();
        Dataset {
            stm: shift(&set.stm),
            nstm: shift(&set.nstm),
            offsets: set.offsets.clone(),
            targets: set.targets.clone(),
            ..Dataset::default()
        }
    }

    /// One Adam step on one position whose features are all in bucket 0: the shared step
    /// moves those features' rows in every bucket alike, and bucket 0's rows by their own step
    /// as well (Adam's first step is the same for the same gradient, so twice as far); no
    /// other row moves. Without the factor only bucket 0's rows move. (Differences of
    /// weights, so equal to rounding.)
    #[test]
    fn the_shared_step_moves_a_feature_in_every_bucket() {
        let (h, features) = (16, [3u16, 400]);
        let set = Dataset {
            stm: vec![features[0]],
            nstm: vec![features[1]],
            offsets: vec![0, 1],
            targets: vec![1.0],
            ..Dataset::default()
        };
        let start = Trainer::new(h, 1, four(), 9);
        let mut plain = start.clone();
        let mut shared = start.clone();
        shared.factorise();
        let limit = default_out_limit(h);
        plain.epoch(Simd::detect(), &set, &[0], 1, 0.01, 1, limit);
        shared.epoch(Simd::detect(), &set, &[0], 1, 0.01, 1, limit);
        let moved = |t: &Trainer, row: usize| -> Vec<f32> {
            let r = row * h..row * h + h;
            t.net.ft_w[r.clone()]
                .iter()
                .zip(&start.net.ft_w[r])
                .map(|(a, b)| a - b)
                .collect()
        };
        let mut moved_any = false;
        for row in 0..4 * INPUTS {
            let (p, b) = (row % INPUTS, row / INPUTS);
            let (own, both) = (moved(&plain, row), moved(&shared, row));
            if !features.contains(&(p as u16)) {
                assert!(own.iter().chain(&both).all(|&d| d == 0.0), "row {row}");
                continue;
            }
            let step = moved(&shared, INPUTS + p);
            moved_any |= step.iter().any(|&d| d != 0.0);
            for j in 0..h {
                if b == 0 {
                    assert!((own[j] - step[j]).abs() < 1e-6, "row {row}");
                    assert!((both[j] - 2.0 * step[j]).abs() < 1e-6, "row {row}");
                } else {
                    assert_eq!(own[j], 0.0, "row {row}");
                    assert!((both[j] - step[j]).abs() < 1e-6, "row {row}");
                }
            }
        }
        assert!(moved_any);
    }

    /// From random weights a factorised network starts with every bucket alike, as the
    /// network without buckets of the same seed.
    #[test]
    fn a_factorised_network_starts_as_one_without_buckets() {
        let t = Trainer::new_factorised(16, 8, four(), 5);
        let one = Trainer::new(16, 8, KingBuckets::NONE, 5).net;
        assert!(t.is_factorised());
        assert_eq!(t.net.king_buckets, four());
        for bucket in t.net.ft_w.chunks_exact(one.ft_w.len()) {
            assert_eq!(bucket, &one.ft_w[..]);
        }
        assert_eq!((&t.net.out_w, &t.net.ft_b), (&one.out_w, &one.ft_b));
    }

    /// What the factor is for: trained on positions of one king bucket only, a factorised
    /// network also evaluates the same positions with the kings in another bucket better than
    /// before, which one without the factor cannot (those rows never see a position).
    #[test]
    fn positions_of_one_bucket_teach_the_others() {
        let set = toy_set(2000);
        let elsewhere = in_bucket(&set, 2);
        let order: Vec<u32> = (0..set.len() as u32).collect();
        let limit = default_out_limit(32);
        let mut plain = Trainer::new(32, 1, four(), 3);
        let mut shared = plain.clone();
        shared.factorise();
        let before = plain.loss(&elsewhere, &order);
        for _ in 0..4 {
            plain.epoch(Simd::detect(), &set, &order, 256, 0.01, 2, limit);
            shared.epoch(Simd::detect(), &set, &order, 256, 0.01, 2, limit);
        }
        let (home, away) = (shared.loss(&set, &order), shared.loss(&elsewhere, &order));
        let (plain_home, plain_away) = (plain.loss(&set, &order), plain.loss(&elsewhere, &order));
        eprintln!("before {before}: shared {home} / {away}, plain {plain_home} / {plain_away}");
        assert!(home < before * 0.8, "{before} -> {home}");
        assert!(plain_home < before * 0.8, "{before} -> {plain_home}");
        // Away from home the plain network learnt only through its biases and output layer.
        assert!(away < before * 0.8, "{before} -> {away}");
        assert!(away < plain_away * 0.8, "{away} against {plain_away}");
    }
}
