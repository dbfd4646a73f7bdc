//! The optimiser: each batch's gradient of the squared error, summed by several threads (each
//! over its share of the batch, sparse in the feature rows it touched), then one lazy Adam step
//! on the weights and the rows the batch touched.

use chess_nn::{KingBuckets, Simd};

use super::dataset::Dataset;
use super::factor::Factor;
use super::model::{FloatNet, output, sigmoid};
use super::simd;
use crate::rng::Rng;

/// Adam with the usual constants.
#[derive(Clone, Debug)]
pub(super) struct Adam {
    pub(super) m: FloatNet,
    pub(super) v: FloatNet,
    pub(super) step: u64,
    /// The king buckets' shared factor (`--factorise`), when trained.
    pub(super) factor: Option<Factor>,
}

const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPS: f32 = 1e-8;

/// Adam's update of weights `w` by gradient `g` with moments `m` and `v`, at the step's
/// bias-corrected rate `lr_t`.
#[inline(always)]
pub(super) fn adam_step(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], lr_t: f32) {
    for i in 0..w.len() {
        m[i] = BETA1 * m[i] + (1.0 - BETA1) * g[i];
        v[i] = BETA2 * v[i] + (1.0 - BETA2) * g[i] * g[i];
        w[i] -= lr_t * m[i] / (v[i].sqrt() + EPS);
    }
}

/// One thread's share of a batch's gradient: sparse in the feature rows it touched.
pub(super) struct GradPart {
    grad: FloatNet,
    touched: Vec<bool>,
    touched_list: Vec<u16>,
    acc: Vec<f32>,
    loss: f64,
}

impl GradPart {
    fn new(net: &FloatNet) -> GradPart {
        let h = net.hidden;
        GradPart {
            grad: FloatNet::zeros_like(net),
            touched: vec![false; net.king_buckets.inputs()],
            touched_list: Vec::new(),
            acc: vec![0.0; 2 * h],
            loss: 0.0,
        }
    }

    /// Adds the gradient of the squared error of `idx`'s positions, times `scale` (inlined
    /// into each copy `simd.rs` compiles).
    #[inline(always)]
    pub(super) fn add_batch(&mut self, net: &FloatNet, set: &Dataset, idx: &[u32], scale: f32) {
        let h = net.hidden;
        for &i in idx {
            let (stm, nstm) = set.features(i as usize);
            net.accumulate(stm, &mut self.acc[..h]);
            net.accumulate(nstm, &mut self.acc[h..]);
            let bucket = net.bucket(stm);
            let out_w = net.bucket_weights(bucket);
            let y = output(&self.acc, out_w, net.out_b[bucket]);
            let p = sigmoid(y);
            let err = p - set.targets[i as usize];
            self.loss += f64::from(err * err);
            let g = 2.0 * err * p * (1.0 - p) * scale;
            self.grad.out_b[bucket] += g;
            for (side, list) in [(0, stm), (1, nstm)] {
                let a = &mut self.acc[side * h..][..h];
                let w = &out_w[side * h..][..h];
                let gw = &mut self.grad.out_w[(2 * bucket + side) * h..][..h];
                // Without branches or index checks, so that the compiler vectorises it.
                for ((aj, &wj), gj) in a.iter_mut().zip(w).zip(gw.iter_mut()) {
                    let x = *aj;
                    let c = x.clamp(0.0, 1.0);
                    *gj += g * c * c;
                    // The accumulator becomes the gradient with respect to it.
                    let inside = (x > 0.0) & (x < 1.0);
                    *aj = if inside { 2.0 * g * c * wj } else { 0.0 };
                }
                self.grad
                    .ft_b
                    .iter_mut()
                    .zip(a.iter())
                    .for_each(|(b, d)| *b += d);
                for &f in list {
                    let f = usize::from(f);
                    if !self.touched[f] {
                        self.touched[f] = true;
                        self.touched_list.push(f as u16);
                    }
                    let row = &mut self.grad.ft_w[f * h..][..h];
                    row.iter_mut().zip(a.iter()).for_each(|(r, d)| *r += d);
                }
            }
        }
    }

    /// Moves `other`'s sums into this one, leaving `other` zero.
    fn absorb(&mut self, other: &mut GradPart) {
        let h = self.grad.hidden;
        for &f in &other.touched_list {
            let f = usize::from(f);
            if !self.touched[f] {
                self.touched[f] = true;
                self.touched_list.push(f as u16);
            }
            let (src, dst) = (
                &mut other.grad.ft_w[f * h..][..h],
                &mut self.grad.ft_w[f * h..][..h],
            );
            dst.iter_mut().zip(src.iter()).for_each(|(d, s)| *d += s);
            src.fill(0.0);
            other.touched[f] = false;
        }
        other.touched_list.clear();
        for (d, s) in [
            (&mut self.grad.ft_b, &mut other.grad.ft_b),
            (&mut self.grad.out_w, &mut other.grad.out_w),
            (&mut self.grad.out_b, &mut other.grad.out_b),
        ] {
            d.iter_mut().zip(s.iter()).for_each(|(d, s)| *d += s);
            s.fill(0.0);
        }
        self.loss += std::mem::take(&mut other.loss);
    }
}

/// The state a checkpoint holds.
#[derive(Clone, Debug)]
pub struct Trainer {
    pub net: FloatNet,
    pub(super) adam: Adam,
    /// Epochs completed.
    pub epoch: u32,
}

impl Trainer {
    pub fn new(hidden: usize, buckets: usize, king_buckets: KingBuckets, seed: u64) -> Trainer {
        Trainer::from_net(FloatNet::random(
            hidden,
            buckets,
            king_buckets,
            &mut Rng::new(seed),
        ))
    }

    /// Random weights for king buckets trained with their shared factor (`--factorise`):
    /// every bucket's feature weights start as the same random set, as the shared part alone
    /// (each bucket's own part zero), so the network starts as one without king buckets of
    /// the same seed.
    pub fn new_factorised(
        hidden: usize,
        buckets: usize,
        king_buckets: KingBuckets,
        seed: u64,
    ) -> Trainer {
        let one = FloatNet::random(hidden, buckets, KingBuckets::NONE, &mut Rng::new(seed));
        let net = one.with_king_buckets(king_buckets);
        let mut t = Trainer::from_net(net.expect("a network without king buckets takes any"));
        t.factorise();
        t
    }

    /// Starts from given weights (a network to train further), with fresh Adam moments.
    pub fn from_net(net: FloatNet) -> Trainer {
        Trainer {
            adam: Adam {
                m: FloatNet::zeros_like(&net),
                v: FloatNet::zeros_like(&net),
                step: 0,
                factor: None,
            },
            net,
            epoch: 0,
        }
    }

    /// Trains the king buckets' feature weights with a factor shared by all buckets (see
    /// `factor.rs`) from now on; a no-op when it does already.
    pub fn factorise(&mut self) {
        if self.adam.factor.is_none() {
            self.adam.factor = Some(Factor::new(self.net.hidden));
        }
    }

    /// Whether the king buckets' feature weights train with a shared factor.
    pub fn is_factorised(&self) -> bool {
        self.adam.factor.is_some()
    }

    /// One pass over `order`'s positions in batches; returns the mean loss. Each batch is
    /// split across `threads` threads, each summing the gradient of its share; the sums are
    /// added (in thread order, so a run is repeatable for a given thread count) before the
    /// Adam step, after which the output weights are clamped to `±out_limit` quantised steps
    /// (`--output-weight-limit`, a setting of the run like the rate). The inner loops run on
    /// `simd`'s instructions ([`Simd::detect`]'s, or any other path this CPU has): the same
    /// network to the bit on every path.
    #[allow(clippy::too_many_arguments)]
    pub fn epoch(
        &mut self,
        simd: Simd,
        set: &Dataset,
        order: &[u32],
        batch: usize,
        lr: f32,
        threads: usize,
        out_limit: i32,
    ) -> f32 {
        let threads = threads.max(1);
        let mut parts: Vec<GradPart> = (0..threads).map(|_| GradPart::new(&self.net)).collect();
        let mut total = 0.0f64;
        for chunk in order.chunks(batch.max(1)) {
            let scale = 1.0 / chunk.len() as f32;
            let share = chunk.len().div_ceil(threads);
            let net = &self.net;
            if threads == 1 {
                simd::add_batch(simd, &mut parts[0], net, set, chunk, scale);
            } else {
                std::thread::scope(|sc| {
                    for (part, idx) in parts.iter_mut().zip(chunk.chunks(share)) {
                        sc.spawn(move || simd::add_batch(simd, part, net, set, idx, scale));
                    }
                });
            }
            let (first, rest) = parts.split_first_mut().expect("at least one part");
            for other in rest {
                first.absorb(other);
            }
            total += first.loss;
            first.loss = 0.0;
            let GradPart {
                grad,
                touched,
                touched_list,
                ..
            } = first;
            simd::step(simd, self, grad, touched, touched_list, lr, out_limit);
        }
        (total / order.len().max(1) as f64) as f32
    }

    /// The mean squared error over `idx`'s positions, without training.
    pub fn loss(&self, set: &Dataset, idx: &[u32]) -> f32 {
        let h = self.net.hidden;
        let mut acc = vec![0.0f32; 2 * h];
        let mut total = 0.0f64;
        for &i in idx {
            let (stm, nstm) = set.features(i as usize);
            self.net.accumulate(stm, &mut acc[..h]);
            self.net.accumulate(nstm, &mut acc[h..]);
            let b = self.net.bucket(stm);
            let y = output(&acc, self.net.bucket_weights(b), self.net.out_b[b]);
            let err = sigmoid(y) - set.targets[i as usize];
            total += f64::from(err * err);
        }
        (total / idx.len().max(1) as f64) as f32
    }

    #[inline(always)]
    pub(super) fn step(
        &mut self,
        grad: &mut FloatNet,
        touched: &mut [bool],
        list: &mut Vec<u16>,
        lr: f32,
        out_limit: i32,
    ) {
        let h = self.net.hidden;
        let a = &mut self.adam;
        a.step += 1;
        let t = a.step as i32;
        let lr_t = lr * (1.0 - BETA2.powi(t)).sqrt() / (1.0 - BETA1.powi(t));
        if let Some(factor) = &mut a.factor {
            factor.gather(&grad.ft_w, list, h);
        }
        for &f in list.iter() {
            let r = usize::from(f) * h..usize::from(f) * h + h;
            adam_step(
                &mut self.net.ft_w[r.clone()],
                &grad.ft_w[r.clone()],
                &mut a.m.ft_w[r.clone()],
                &mut a.v.ft_w[r.clone()],
                lr_t,
            );
            grad.ft_w[r].fill(0.0);
            touched[usize::from(f)] = false;
        }
        list.clear();
        if let Some(factor) = &mut a.factor {
            factor.apply(&mut self.net.ft_w, h, lr_t);
        }
        // The dense arrays: feature biases, output weights and output biases.
        let net = &mut self.net;
        for (w, g, m, v) in [
            (&mut net.ft_b, &mut grad.ft_b, &mut a.m.ft_b, &mut a.v.ft_b),
            (
                &mut net.out_w,
                &mut grad.out_w,
                &mut a.m.out_w,
                &mut a.v.out_w,
            ),
            (
                &mut net.out_b,
                &mut grad.out_b,
                &mut a.m.out_b,
                &mut a.v.out_b,
            ),
        ] {
            adam_step(w, g, m, v, lr_t);
            g.fill(0.0);
        }
        self.net.clamp(out_limit);
    }
}

#[cfg(test)]
mod tests {
    use super::super::dataset::toy_set;
    use super::super::model::default_out_limit;
    use super::*;

    #[test]
    fn validation_holds_out_whole_games() {
        let mut set = toy_set(1000);
        set.game_starts = (0..100).map(|g| g * 10).collect();
        let (train, val) = set.split(0.2);
        assert_eq!(train.len() + val.len(), 1000);
        // Whole games: every held-out index's game is held out entirely.
        assert!(
            val.len() % 10 == 0 && (100..=300).contains(&val.len()),
            "{}",
            val.len()
        );
        for v in &val {
            assert!(!train.contains(v));
            let start = v - v % 10;
            assert!((start..start + 10).all(|i| val.contains(&i)));
        }
        assert_eq!(set.split(0.0).1, Vec::<u32>::new());
        // Without game boundaries each position is its own game.
        set.game_starts.clear();
        let (_, val) = set.split(0.5);
        assert!((400..600).contains(&val.len()), "{}", val.len());
        // The loss without training matches what an epoch starts from.
        let t = Trainer::new(32, 1, KingBuckets::NONE, 3);
        let all: Vec<u32> = (0..1000).collect();
        let l = t.loss(&set, &all);
        let mut copy = t.clone();
        let first = copy.epoch(
            Simd::detect(),
            &set,
            &all,
            1000,
            0.0,
            1,
            default_out_limit(32),
        );
        assert!((l - first).abs() < 1e-6, "{l} {first}");
    }

    /// Every instruction set this CPU has trains the same network to the bit, on one thread
    /// and on two, with output buckets.
    #[test]
    fn every_simd_path_trains_the_same_network() {
        let set = toy_set(1500);
        let order: Vec<u32> = (0..set.len() as u32).rev().collect();
        let paths = Simd::available();
        for threads in [1, 2] {
            let start = Trainer::new(48, 4, KingBuckets::NONE, 5);
            let trained: Vec<(Vec<f32>, FloatNet)> = paths
                .iter()
                .map(|&simd| {
                    let mut t = start.clone();
                    let losses = (0..3)
                        .map(|_| {
                            t.epoch(
                                simd,
                                &set,
                                &order,
                                128,
                                0.01,
                                threads,
                                default_out_limit(48),
                            )
                        })
                        .collect();
                    (losses, t.net)
                })
                .collect();
            for (simd, other) in paths.iter().zip(&trained).skip(1) {
                assert_eq!(other.0, trained[0].0, "{simd}, {threads} threads: losses");
                assert!(
                    other.1 == trained[0].1,
                    "{simd}, {threads} threads: weights"
                );
            }
            assert_ne!(trained[0].1, start.net);
        }
    }

    #[test]
    fn threads_share_a_batch_and_agree_with_one_thread() {
        let set = toy_set(2000);
        let order: Vec<u32> = (0..set.len() as u32).collect();
        let mut one = Trainer::new(32, 4, KingBuckets::NONE, 3);
        let mut two = one.clone();
        let mut losses = Vec::new();
        let limit = default_out_limit(32);
        for _ in 0..4 {
            let a = one.epoch(Simd::detect(), &set, &order, 256, 0.01, 1, limit);
            let b = two.epoch(Simd::detect(), &set, &order, 256, 0.01, 2, limit);
            // Only the order of float additions differs.
            assert!((a - b).abs() < 1e-4, "{a} {b}");
            losses.push(a);
        }
        assert!(losses[3] < losses[0] * 0.8, "{losses:?}");
        let max_diff = one
            .net
            .ft_w
            .iter()
            .zip(&two.net.ft_w)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(max_diff < 1e-3, "{max_diff}");
    }
}
