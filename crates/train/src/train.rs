//! Float training of the chess-nn shape, `(768 -> H) x 2 -> 1` with SCReLU, on the CPU.
//!
//! **Scaling.** The float network's output `y` is in units of [`chess_nn::DEFAULT_SCALE`]
//! (400) centipawns, side to move's point of view, so the quantised network evaluates to
//! `400 * y` centipawns. The target is `(1 - wdl) * sigmoid(score / 400) + wdl * result`,
//! with `score` and `result` (1, 0.5, 0) both from the side to move's point of view, and the
//! loss is `(sigmoid(y) - target)^2`, averaged over a batch.
//!
//! **Sparse.** A position touches only the feature-transformer rows of its (at most 32 per
//! perspective) active features: forward sums those rows, backward adds into them, and Adam
//! updates only the rows some position of the batch touched (moments of untouched rows stay
//! as they are: lazy Adam). Single-threaded.
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

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use chess_nn::{DEFAULT_QA, DEFAULT_QB, DEFAULT_SCALE, INPUTS, MAX_ACTIVE, Network, NetworkParts};
use chess_rules::{Color, Position};

use crate::Error;
use crate::data;
use crate::rng::{Rng, uniform};

const QA: i32 = DEFAULT_QA;
const QB: i32 = DEFAULT_QB;
const SCALE: i32 = DEFAULT_SCALE;
/// Largest quantised feature weight or bias: a bias plus 32 rows fits in i16.
pub const FT_LIMIT: i32 = i16::MAX as i32 / (MAX_ACTIVE as i32 + 1);
const OUT_BUDGET: i32 = i32::MAX / SCALE / 2;

/// Settings of a `train` run (also its command line; `chess-train` checks the values).
#[derive(Clone, Debug, clap::Args)]
pub struct TrainConfig {
    #[arg(long, required = true, num_args = 1..)]
    pub data: Vec<PathBuf>,
    #[arg(long)]
    pub out: PathBuf,
    /// Neurons per perspective: a multiple of 16 from 16 to 1024.
    #[arg(long, default_value_t = 256)]
    pub hidden: usize,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: u32,
    #[arg(long, default_value_t = 0.001)]
    pub lr: f32,
    /// Weight of the game result in the target (the rest is the search score).
    #[arg(long, default_value_t = 0.3)]
    pub wdl: f32,
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Checkpoint written after each epoch and resumed from when present.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Threads summing each batch's gradient, 1 to 256 (default: the machine's cores).
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(1, usize::from))]
    pub threads: usize,
    /// From this epoch (counted from 0) on, train at a tenth of --lr.
    #[arg(long)]
    pub lr_drop: Option<u32>,
    /// Share of the games held out for a validation loss after every epoch (0: none).
    #[arg(long, default_value_t = 0.02)]
    pub validation: f32,
    /// Also train on each position without castling rights mirrored left to right (files a
    /// and h swapped). Such a position and its mirror image have the same value under the
    /// rules, so the copy carries the same target. Validation uses the originals only.
    #[arg(long)]
    pub mirror: bool,
}

/// Training positions, flattened: features of both perspectives, side to move's first.
#[derive(Debug, Default)]
pub struct Dataset {
    stm: Vec<u16>,
    nstm: Vec<u16>,
    /// Position `i`'s features are `offsets[i]..offsets[i + 1]` of both lists.
    offsets: Vec<u32>,
    targets: Vec<f32>,
    /// The index of each game's first position (empty: every position is a game of its own).
    game_starts: Vec<u32>,
    /// Whether each position is a mirrored copy (`--mirror`); empty when none is.
    mirrored: Vec<bool>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Position indices for training and for validation. About `fraction` of the games are
    /// held out, whole (a game's positions are alike, so holding out single positions would
    /// flatter the validation loss); which ones depends only on the game's index.
    pub fn split(&self, fraction: f32) -> (Vec<u32>, Vec<u32>) {
        let held_out = |game: usize| {
            let h = (game as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            (h % 10_000) < (f64::from(fraction.clamp(0.0, 1.0)) * 10_000.0) as u64
        };
        let (mut train, mut val) = (Vec::new(), Vec::new());
        let n = self.len();
        let bounds: Vec<usize> = if self.game_starts.is_empty() {
            (0..=n).collect()
        } else {
            let mut b: Vec<usize> = self.game_starts.iter().map(|&s| s as usize).collect();
            b.push(n);
            b
        };
        let copy = |i: u32| self.mirrored.get(i as usize).copied().unwrap_or(false);
        for (game, w) in bounds.windows(2).enumerate() {
            let range = w[0] as u32..w[1] as u32;
            if held_out(game) {
                val.extend(range.filter(|&i| !copy(i)));
            } else {
                train.extend(range);
            }
        }
        (train, val)
    }

    fn features(&self, i: usize) -> (&[u16], &[u16]) {
        let r = self.offsets[i] as usize..self.offsets[i + 1] as usize;
        (&self.stm[r.clone()], &self.nstm[r])
    }
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The feature of the same piece on the square mirrored left to right (file a <-> h).
fn mirror_feature(f: u16) -> u16 {
    f ^ 7
}

/// Loads the data files and computes each position's features and target; with `mirror`,
/// each position without castling rights is followed by its mirror image (same target).
pub fn load_dataset(paths: &[PathBuf], wdl: f32, mirror: bool) -> Result<Dataset, Error> {
    let mut set = Dataset {
        offsets: vec![0],
        ..Dataset::default()
    };
    for path in paths {
        let file = data::read(path)?;
        if file.torn_bytes > 0 {
            eprintln!(
                "train: {}: skipping {} bytes of a torn last game",
                path.display(),
                file.torn_bytes
            );
        }
        for game in &file.games {
            set.game_starts.push(set.len() as u32);
            let white_points = game.result.white_points();
            for rec in &game.positions {
                let pos = Position::from_fen(&rec.fen).map_err(|e| Error::Format {
                    path: path.clone(),
                    what: format!("bad FEN {:?}: {e}", rec.fen),
                })?;
                let stm = pos.turn();
                let (score, result) = if stm == Color::White {
                    (f32::from(rec.score), white_points)
                } else {
                    (-f32::from(rec.score), 1.0 - white_points)
                };
                chess_nn::for_each_feature(&pos, stm, |f| set.stm.push(f));
                chess_nn::for_each_feature(&pos, !stm, |f| set.nstm.push(f));
                set.offsets.push(set.stm.len() as u32);
                let target = (1.0 - wdl) * sigmoid(score / SCALE as f32) + wdl * result;
                set.targets.push(target);
                if mirror {
                    set.mirrored.push(false);
                    if pos.castling_rights().is_empty() {
                        let r = set.offsets[set.len() - 1] as usize..set.stm.len();
                        for i in r {
                            set.stm.push(mirror_feature(set.stm[i]));
                            set.nstm.push(mirror_feature(set.nstm[i]));
                        }
                        set.offsets.push(set.stm.len() as u32);
                        set.targets.push(target);
                        set.mirrored.push(true);
                    }
                }
            }
        }
    }
    Ok(set)
}

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

    fn zeros(hidden: usize) -> FloatNet {
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

    fn accumulate(&self, features: &[u16], acc: &mut [f32]) {
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

    fn arrays(&self) -> [&[f32]; 3] {
        [&self.ft_w, &self.ft_b, &self.out_w]
    }
}

fn output(acc: &[f32], out_w: &[f32], out_b: f32) -> f32 {
    acc.iter()
        .zip(out_w)
        .map(|(&a, &w)| {
            let c = a.clamp(0.0, 1.0);
            c * c * w
        })
        .sum::<f32>()
        + out_b
}

/// Adam with the usual constants.
#[derive(Clone, Debug)]
struct Adam {
    m: FloatNet,
    v: FloatNet,
    step: u64,
}

const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPS: f32 = 1e-8;

fn adam_update(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], lr_t: f32) {
    for i in 0..w.len() {
        m[i] = BETA1 * m[i] + (1.0 - BETA1) * g[i];
        v[i] = BETA2 * v[i] + (1.0 - BETA2) * g[i] * g[i];
        w[i] -= lr_t * m[i] / (v[i].sqrt() + EPS);
    }
}

/// One thread's share of a batch's gradient: sparse in the feature rows it touched.
struct GradPart {
    grad: FloatNet,
    touched: Vec<bool>,
    touched_list: Vec<u16>,
    acc: Vec<f32>,
    loss: f64,
}

impl GradPart {
    fn new(h: usize) -> GradPart {
        GradPart {
            grad: FloatNet::zeros(h),
            touched: vec![false; INPUTS],
            touched_list: Vec::new(),
            acc: vec![0.0; 2 * h],
            loss: 0.0,
        }
    }

    /// Adds the gradient of the squared error of `idx`'s positions, times `scale`.
    fn add_batch(&mut self, net: &FloatNet, set: &Dataset, idx: &[u32], scale: f32) {
        let h = net.hidden;
        for &i in idx {
            let (stm, nstm) = set.features(i as usize);
            net.accumulate(stm, &mut self.acc[..h]);
            net.accumulate(nstm, &mut self.acc[h..]);
            let y = output(&self.acc, &net.out_w, net.out_b);
            let p = sigmoid(y);
            let err = p - set.targets[i as usize];
            self.loss += f64::from(err * err);
            let g = 2.0 * err * p * (1.0 - p) * scale;
            self.grad.out_b += g;
            for (side, list) in [(0, stm), (1, nstm)] {
                let a = &mut self.acc[side * h..][..h];
                let w = &net.out_w[side * h..][..h];
                let gw = &mut self.grad.out_w[side * h..][..h];
                for j in 0..h {
                    let c = a[j].clamp(0.0, 1.0);
                    gw[j] += g * c * c;
                    // a[j] becomes the gradient with respect to the accumulator.
                    a[j] = if a[j] > 0.0 && a[j] < 1.0 {
                        2.0 * g * c * w[j]
                    } else {
                        0.0
                    };
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
        ] {
            d.iter_mut().zip(s.iter()).for_each(|(d, s)| *d += s);
            s.fill(0.0);
        }
        self.grad.out_b += std::mem::take(&mut other.grad.out_b);
        self.loss += std::mem::take(&mut other.loss);
    }
}

/// The state a checkpoint holds.
#[derive(Clone, Debug)]
pub struct Trainer {
    pub net: FloatNet,
    adam: Adam,
    /// Epochs completed.
    pub epoch: u32,
}

const CKPT_MAGIC: [u8; 4] = *b"CHTC";
const CKPT_VERSION: u32 = 1;

impl Trainer {
    pub fn new(hidden: usize, seed: u64) -> Trainer {
        Trainer {
            net: FloatNet::random(hidden, &mut Rng::new(seed)),
            adam: Adam {
                m: FloatNet::zeros(hidden),
                v: FloatNet::zeros(hidden),
                step: 0,
            },
            epoch: 0,
        }
    }

    /// One pass over `order`'s positions in batches; returns the mean loss. Each batch is
    /// split across `threads` threads, each summing the gradient of its share; the sums are
    /// added (in thread order, so a run is repeatable for a given thread count) before the
    /// Adam step.
    pub fn epoch(
        &mut self,
        set: &Dataset,
        order: &[u32],
        batch: usize,
        lr: f32,
        threads: usize,
    ) -> f32 {
        let h = self.net.hidden;
        let threads = threads.max(1);
        let mut parts: Vec<GradPart> = (0..threads).map(|_| GradPart::new(h)).collect();
        let mut total = 0.0f64;
        for chunk in order.chunks(batch.max(1)) {
            let scale = 1.0 / chunk.len() as f32;
            let share = chunk.len().div_ceil(threads);
            let net = &self.net;
            if threads == 1 {
                parts[0].add_batch(net, set, chunk, scale);
            } else {
                std::thread::scope(|sc| {
                    for (part, idx) in parts.iter_mut().zip(chunk.chunks(share)) {
                        sc.spawn(move || part.add_batch(net, set, idx, scale));
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
            self.step(grad, touched, touched_list, lr);
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
            let err =
                sigmoid(output(&acc, &self.net.out_w, self.net.out_b)) - set.targets[i as usize];
            total += f64::from(err * err);
        }
        (total / idx.len().max(1) as f64) as f32
    }

    fn step(&mut self, grad: &mut FloatNet, touched: &mut [bool], list: &mut Vec<u16>, lr: f32) {
        let h = self.net.hidden;
        let a = &mut self.adam;
        a.step += 1;
        let t = a.step as i32;
        let lr_t = lr * (1.0 - BETA2.powi(t)).sqrt() / (1.0 - BETA1.powi(t));
        for &f in list.iter() {
            let r = usize::from(f) * h..usize::from(f) * h + h;
            adam_update(
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
        adam_update(
            &mut self.net.ft_b,
            &grad.ft_b,
            &mut a.m.ft_b,
            &mut a.v.ft_b,
            lr_t,
        );
        adam_update(
            &mut self.net.out_w,
            &grad.out_w,
            &mut a.m.out_w,
            &mut a.v.out_w,
            lr_t,
        );
        let (mut b, mut m, mut v) = ([self.net.out_b], [a.m.out_b], [a.v.out_b]);
        adam_update(&mut b, &[grad.out_b], &mut m, &mut v, lr_t);
        (self.net.out_b, a.m.out_b, a.v.out_b) = (b[0], m[0], v[0]);
        grad.ft_b.fill(0.0);
        grad.out_w.fill(0.0);
        grad.out_b = 0.0;
        self.net.clamp();
    }

    /// Checkpoint file: `CHTC`, version u32, hidden u32, epochs done u32, Adam step u64,
    /// then the weights, Adam's first and second moments (each `ft_w, ft_b, out_w, out_b`)
    /// as little-endian f32.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = CKPT_MAGIC.to_vec();
        out.extend_from_slice(&CKPT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.net.hidden as u32).to_le_bytes());
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.adam.step.to_le_bytes());
        for net in [&self.net, &self.adam.m, &self.adam.v] {
            for arr in net.arrays() {
                arr.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            out.extend_from_slice(&net.out_b.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Trainer, Error> {
        let bad = |what: String| Error::Format {
            path: path.to_owned(),
            what,
        };
        if bytes.len() < 24 || bytes[..4] != CKPT_MAGIC {
            return Err(bad("not a chess-train checkpoint".into()));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        if u32_at(4) != CKPT_VERSION {
            return Err(bad(format!(
                "checkpoint version {}, expected {CKPT_VERSION}",
                u32_at(4)
            )));
        }
        let hidden = u32_at(8) as usize;
        let epoch = u32_at(12);
        let step = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
        let per_net = INPUTS * hidden + hidden + 2 * hidden + 1;
        let expected = 24 + 3 * 4 * per_net;
        if bytes.len() != expected {
            return Err(bad(format!(
                "checkpoint of {} bytes, expected {expected} for hidden size {hidden}",
                bytes.len()
            )));
        }
        let mut floats = bytes[24..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()));
        let mut take = |n: usize| floats.by_ref().take(n).collect::<Vec<f32>>();
        let mut nets = Vec::new();
        for _ in 0..3 {
            nets.push(FloatNet {
                hidden,
                ft_w: take(INPUTS * hidden),
                ft_b: take(hidden),
                out_w: take(2 * hidden),
                out_b: take(1)[0],
            });
        }
        let v = nets.pop().unwrap();
        let m = nets.pop().unwrap();
        let net = nets.pop().unwrap();
        Ok(Trainer {
            net,
            adam: Adam { m, v, step },
            epoch,
        })
    }
}

fn save_checkpoint(path: &Path, trainer: &Trainer) -> Result<(), Error> {
    // Write beside and rename, so an interruption never leaves half a checkpoint.
    let tmp = path.with_extension("tmp");
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&tmp, trainer.to_bytes()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct TrainSummary {
    pub positions: usize,
    pub file_name: String,
    pub positions_per_second: f64,
    pub last_loss: Option<f32>,
    pub last_validation_loss: Option<f32>,
}

/// Trains (resuming from the checkpoint when there is one) and writes the network.
pub fn run(cfg: &TrainConfig) -> Result<TrainSummary, Error> {
    let set = load_dataset(&cfg.data, cfg.wdl, cfg.mirror)?;
    if set.is_empty() {
        return Err(Error::Usage("the data files hold no positions".into()));
    }
    eprintln!(
        "train: {} positions from {} file(s)",
        set.len(),
        cfg.data.len()
    );
    let mut trainer = match &cfg.checkpoint {
        Some(path) if path.exists() => {
            let bytes = std::fs::read(path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            let t = Trainer::from_bytes(path, &bytes)?;
            if t.net.hidden != cfg.hidden {
                return Err(Error::Usage(format!(
                    "checkpoint {} has hidden size {}, not {}",
                    path.display(),
                    t.net.hidden,
                    cfg.hidden
                )));
            }
            eprintln!(
                "train: resuming from {} after epoch {}",
                path.display(),
                t.epoch
            );
            t
        }
        _ => Trainer::new(cfg.hidden, cfg.seed),
    };
    let (mut order, held_out) = set.split(cfg.validation);
    if order.is_empty() {
        return Err(Error::Usage(
            "--validation holds out every game: nothing is left to train on".into(),
        ));
    }
    let copies = set.mirrored.iter().filter(|&&m| m).count();
    if copies > 0 {
        eprintln!("train: {copies} of them are mirror images (--mirror)");
    }
    if !held_out.is_empty() {
        eprintln!(
            "train: {} positions for training, {} held out for validation",
            order.len(),
            held_out.len()
        );
    }
    let mut trained = 0usize;
    let mut seconds = 0.0;
    let mut last_loss = None;
    let mut last_validation_loss = None;
    while trainer.epoch < cfg.epochs {
        // The shuffle depends on the epoch only, so a resumed run sees the same order.
        let mut rng = Rng::new(cfg.seed ^ u64::from(trainer.epoch).wrapping_mul(0x9E37_79B9));
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let start = Instant::now();
        let lr = match cfg.lr_drop {
            Some(e) if trainer.epoch >= e => cfg.lr / 10.0,
            _ => cfg.lr,
        };
        let loss = trainer.epoch(&set, &order, cfg.batch, lr, cfg.threads);
        let secs = start.elapsed().as_secs_f64();
        trainer.epoch += 1;
        trained += order.len();
        seconds += secs;
        last_loss = Some(loss);
        let val = (!held_out.is_empty()).then(|| trainer.loss(&set, &held_out));
        last_validation_loss = val;
        eprintln!(
            "train: epoch {}/{} loss {loss:.6}{} lr {lr:.1e} {:.0} positions/s",
            trainer.epoch,
            cfg.epochs,
            val.map_or(String::new(), |v| format!(" val_loss {v:.6}")),
            order.len() as f64 / secs.max(1e-9)
        );
        let _ = std::io::stderr().flush();
        if let Some(path) = &cfg.checkpoint {
            save_checkpoint(path, &trainer)?;
        }
    }
    let net = Network::from_parts(trainer.net.quantise()).map_err(Error::Network)?;
    net.save(&cfg.out).map_err(Error::Network)?;
    Ok(TrainSummary {
        positions: set.len(),
        file_name: net.file_name(),
        positions_per_second: trained as f64 / f64::max(seconds, 1e-9),
        last_loss,
        last_validation_loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random-playout positions with targets from material (a learnable signal).
    fn toy_set(n: usize) -> Dataset {
        let mut rng = Rng::new(5);
        let mut set = Dataset {
            offsets: vec![0],
            ..Dataset::default()
        };
        let mut pos = Position::startpos();
        while set.len() < n {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.halfmoves() > 60 {
                pos = Position::startpos();
                continue;
            }
            pos.play_unchecked(moves.as_slice()[rng.below(moves.len())]);
            let stm = pos.turn();
            chess_nn::for_each_feature(&pos, stm, |f| set.stm.push(f));
            chess_nn::for_each_feature(&pos, !stm, |f| set.nstm.push(f));
            set.offsets.push(set.stm.len() as u32);
            let (ours, theirs) = (pos.by_color(stm).count(), pos.by_color(!stm).count());
            set.targets
                .push(sigmoid((ours as f32 - theirs as f32) * 0.5));
        }
        set
    }

    #[test]
    fn mirror_adds_the_mirror_image_of_positions_without_castling_rights() {
        use crate::data::{self, GameRecord, GameResult, Record};
        let path =
            std::env::temp_dir().join(format!("chess-train-mirror-{}.bin", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let (mut out, _) = data::open_for_append(&path).unwrap();
        let rec = |fen: &str, score| Record {
            fen: fen.into(),
            score,
        };
        // One game: a position with castling rights (kept once), then two without (each
        // followed by its mirror image).
        out.append(&GameRecord {
            result: GameResult::WhiteWin,
            positions: vec![
                rec("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 10),
                rec("4k3/8/8/8/8/8/1P6/N3K3 w - - 0 1", 150),
                rec("4k3/8/8/8/8/8/1P6/N3K3 b - - 0 1", -150),
            ],
        })
        .unwrap();
        drop(out);
        let plain = load_dataset(std::slice::from_ref(&path), 0.3, false).unwrap();
        let set = load_dataset(std::slice::from_ref(&path), 0.3, true).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(plain.len(), 3);
        assert_eq!(set.len(), 5);
        assert_eq!(set.mirrored, [false, false, true, false, true]);
        // The copy is the mirrored position: its features are those of the mirrored FEN.
        let mirrored = Position::from_fen("3k4/8/8/8/8/8/6P1/3K3N w - - 0 1").unwrap();
        let (stm, nstm) = set.features(2);
        let mut want = chess_nn::active_features(&mirrored, Color::White);
        let mut got = stm.to_vec();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
        let mut want = chess_nn::active_features(&mirrored, Color::Black);
        let mut got = nstm.to_vec();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(set.targets[2], set.targets[1]);
        assert_eq!(set.targets[4], set.targets[3]);
        assert_ne!(set.targets[1], set.targets[3]);
        // Validation never sees a copy; training sees every position.
        // (The one game is held out at a fraction of 0.9, kept at 0.)
        assert_eq!(set.split(0.9), (vec![], vec![0, 1, 3]));
        assert_eq!(plain.split(0.9), (vec![], vec![0, 1, 2]));
        assert_eq!(set.split(0.0), (vec![0, 1, 2, 3, 4], vec![]));
    }

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
        let t = Trainer::new(32, 3);
        let all: Vec<u32> = (0..1000).collect();
        let l = t.loss(&set, &all);
        let mut copy = t.clone();
        let first = copy.epoch(&set, &all, 1000, 0.0, 1);
        assert!((l - first).abs() < 1e-6, "{l} {first}");
    }

    #[test]
    fn threads_share_a_batch_and_agree_with_one_thread() {
        let set = toy_set(2000);
        let order: Vec<u32> = (0..set.len() as u32).collect();
        let mut one = Trainer::new(32, 3);
        let mut two = one.clone();
        let mut losses = Vec::new();
        for _ in 0..4 {
            let a = one.epoch(&set, &order, 256, 0.01, 1);
            let b = two.epoch(&set, &order, 256, 0.01, 2);
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

    #[test]
    fn quantised_network_agrees_with_float() {
        let mut trainer = Trainer::new(32, 7);
        // Output weights on the QB grid, so only the feature transformer's rounding and the
        // integer divisions separate the two.
        for w in &mut trainer.net.out_w {
            *w = (*w * 4.0 * QB as f32).round() / QB as f32;
        }
        trainer.net.clamp();
        let net = Network::from_parts(trainer.net.quantise()).unwrap();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let stm = chess_nn::active_features(&pos, pos.turn());
            let nstm = chess_nn::active_features(&pos, !pos.turn());
            let float_cp = trainer.net.forward(&stm, &nstm) * SCALE as f32;
            let int_cp = net.evaluate(&pos) as f32;
            assert!((float_cp - int_cp).abs() < 5.0, "{float_cp} vs {int_cp}");
        }
    }

    #[test]
    fn checkpoint_round_trip() {
        let t = Trainer::new(16, 1);
        let back = Trainer::from_bytes(Path::new("c"), &t.to_bytes()).unwrap();
        assert_eq!(back.net, t.net);
        assert_eq!(back.epoch, t.epoch);
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
