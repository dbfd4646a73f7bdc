//! Float training of the chess-nn shape, `(768K -> H) x 2 -> 1` with SCReLU, `--buckets`
//! output layers chosen by the number of pieces and `--king-buckets` sets of input features
//! chosen by each side's king square, on the CPU.
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
//! as they are: lazy Adam).
//!
//! **Threads.** Each batch is split across `--threads` threads, each summing the gradient of
//! its share; the sums are added in thread order (so a run is repeatable for a given thread
//! count) before the Adam step.
//!
//! The parts: `dataset.rs` loads the data files (features, targets, mirror images, the
//! validation split); `model.rs` is the float network and its quantisation; `optimiser.rs` the
//! gradients and Adam; `factor.rs` the king buckets' shared factor (`--factorise`);
//! `checkpoint.rs` the checkpoint file; `simd.rs` the inner loops' copies for AVX2 and
//! AVX-512; `settings.rs` the run's settings it records and the check that a resumed run keeps
//! them; this file the run loop.

mod checkpoint;
mod dataset;
mod factor;
mod model;
mod optimiser;
mod settings;
#[allow(unsafe_code)] // calls the AVX2 and AVX-512 copies of the inner loops: see its SAFETY lines
mod simd;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use chess_nn::{KingBuckets, Network};

pub use dataset::{Dataset, load_dataset};
pub use model::{FT_LIMIT, FloatNet, default_out_limit, max_out_limit, sigmoid};
pub use optimiser::Trainer;

use crate::Error;
use crate::rng::Rng;
use settings::RunSettings;

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
    /// Output buckets, 1 to 16, chosen by the number of pieces on the board (more than one
    /// writes a version-2 network file).
    #[arg(long, default_value_t = 1)]
    pub buckets: usize,
    /// King buckets: which set of 768 input features each side uses, by its king's square
    /// seen from its side, as 64 bucket symbols (0-9, a-v) rank by rank from its back rank,
    /// `/` between ranks, a rank of one symbol for the whole rank, the last rank repeated
    /// (e.g. `00011222/3`: back rank a-c, d-e, f-h, and the rest). More than one bucket
    /// writes a version-3 network file. A network of none given by --init starts with every
    /// bucket a copy of its feature weights.
    #[arg(long, value_parser = parse_king_buckets)]
    pub king_buckets: Option<KingBuckets>,
    /// With --king-buckets: train each bucket's feature weights as its own part plus a part
    /// shared by every bucket, which learns from all positions (the network file holds the
    /// sums: its shape and speed do not change). From random weights every bucket starts
    /// alike (the buckets' own parts at zero). A resumed run must be given it as before.
    #[arg(long)]
    pub factorise: bool,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: u32,
    #[arg(long, default_value_t = 0.001)]
    pub lr: f32,
    /// Weight of the game result in the target (the rest is the search score). 0.3 until
    /// 2026-12-06, when the same training with 0.1 played +24.8 Elo better and then with 0.0
    /// +8.2 better again (docs/network.md, fourteenth and fifteenth rounds).
    #[arg(long, default_value_t = 0.0)]
    pub wdl: f32,
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Checkpoint written after each epoch and resumed from when present. It records
    /// --wdl, --mirror, --dedup, --validation and --output-weight-limit, and a resumed run
    /// must give the same; --lr, --lr-drop, --batch and --seed may change (the log says so).
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
    /// Train on each position (board and side to move) once: a repeat of one seen before,
    /// in any game of any file, is left out; the first keeps its score and result.
    #[arg(long)]
    pub dedup: bool,
    /// The largest output weight, in quantised steps of 1/64 (default: 20 for --hidden 256,
    /// 10 for 512; at most 64 for 256, 32 for 512). A network given by --init whose output
    /// weights go further is clamped to it: widening the default network to 512 needs 20.
    /// A resumed run must be given the same value.
    #[arg(long)]
    pub output_weight_limit: Option<i32>,
    /// Start from this network instead of random weights: `default` (the embedded network)
    /// or a network file, of the --hidden size or narrower. A network of one output bucket
    /// may start one of --buckets N: each bucket begins as a copy of its output layer. A
    /// narrower network starts a wider one: its neurons come first, the new ones (random
    /// feature weights, zero output weights) add nothing until trained. A checkpoint, when
    /// there is one, comes first.
    #[arg(long)]
    pub init: Option<String>,
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

fn parse_king_buckets(s: &str) -> Result<KingBuckets, String> {
    s.parse().map_err(|e: chess_nn::FeatureError| e.to_string())
}

/// Trains (resuming from the checkpoint when there is one) and writes the network.
pub fn run(cfg: &TrainConfig) -> Result<TrainSummary, Error> {
    let king_buckets = cfg.king_buckets.unwrap_or(KingBuckets::NONE);
    let out_limit = cfg
        .output_weight_limit
        .unwrap_or_else(|| default_out_limit(cfg.hidden));
    let settings = RunSettings::of(cfg, out_limit);
    let mut trainer = match &cfg.checkpoint {
        Some(path) if path.exists() => {
            let ckpt = checkpoint::load(path)?;
            let t = ckpt.trainer;
            if t.is_factorised() != cfg.factorise {
                let how = if t.is_factorised() { "with" } else { "without" };
                return Err(Error::Usage(format!(
                    "checkpoint {} was trained {how} a shared factor: resume it {how} --factorise",
                    path.display(),
                )));
            }
            if (t.net.hidden, t.net.buckets, t.net.king_buckets)
                != (cfg.hidden, cfg.buckets, king_buckets)
            {
                return Err(Error::Usage(format!(
                    "checkpoint {} has hidden size {}, {} output buckets and king buckets {}, not {}, {} and {}",
                    path.display(),
                    t.net.hidden,
                    t.net.buckets,
                    t.net.king_buckets,
                    cfg.hidden,
                    cfg.buckets,
                    king_buckets
                )));
            }
            match &ckpt.settings {
                Some(recorded) => {
                    for note in settings.check_resume(recorded, path)? {
                        eprintln!("{note}");
                    }
                }
                None => eprintln!(
                    "train: checkpoint {} (version {}) does not record its run's settings: resuming with {}",
                    path.display(),
                    ckpt.version,
                    settings.one_line()
                ),
            }
            eprintln!(
                "train: resuming from {} after epoch {}",
                path.display(),
                t.epoch
            );
            t
        }
        _ => match &cfg.init {
            Some(init) => {
                let net = initial_network(init, cfg, king_buckets)?;
                let t = Trainer::from_net(net);
                eprintln!("train: starting from {init}");
                t
            }
            None if cfg.factorise => {
                Trainer::new_factorised(cfg.hidden, cfg.buckets, king_buckets, cfg.seed)
            }
            None => Trainer::new(cfg.hidden, cfg.buckets, king_buckets, cfg.seed),
        },
    };
    if cfg.factorise {
        trainer.factorise();
    }
    let set = load_dataset(
        &cfg.data,
        cfg.wdl,
        cfg.mirror,
        cfg.dedup,
        &trainer.net.king_buckets,
    )?;
    if set.is_empty() {
        return Err(Error::Usage("the data files hold no positions".into()));
    }
    eprintln!(
        "train: {} positions from {} file(s)",
        set.len(),
        cfg.data.len()
    );
    if cfg.dedup {
        eprintln!(
            "train: {} repeated positions left out (--dedup)",
            set.duplicates
        );
    }
    let reach = trainer.net.out_reach().min(max_out_limit(cfg.hidden));
    if reach > out_limit {
        eprintln!(
            "train: the starting output weights reach {reach}, beyond the limit {out_limit}: they are clamped (--output-weight-limit {reach} keeps them)"
        );
        trainer.net.clamp(out_limit);
    }
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
    if cfg.init.is_some() && trainer.epoch == 0 && !held_out.is_empty() {
        // What the starting network scores, to compare the epochs' figures with.
        let before = trainer.loss(&set, &held_out);
        eprintln!("train: val_loss {before:.6} before training");
    }
    let simd = chess_nn::Simd::detect();
    eprintln!("train: inner loops on {simd} (CHESS_NN_SIMD caps it)");
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
        let loss = trainer.epoch(simd, &set, &order, cfg.batch, lr, cfg.threads, out_limit);
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
            checkpoint::save(path, &trainer, &settings)?;
        }
    }
    let net = Network::from_parts(trainer.net.quantise(out_limit)).map_err(Error::Network)?;
    net.save(&cfg.out).map_err(Error::Network)?;
    Ok(TrainSummary {
        positions: set.len(),
        file_name: net.file_name(),
        positions_per_second: trained as f64 / f64::max(seconds, 1e-9),
        last_loss,
        last_validation_loss,
    })
}

/// The float weights of `--init`'s network, checked against `--hidden`, with its output layer
/// copied into `--buckets` buckets when it has one, its feature weights into each of
/// `--king-buckets` when it has none, widened to `--hidden` when narrower.
fn initial_network(
    init: &str,
    cfg: &TrainConfig,
    king_buckets: KingBuckets,
) -> Result<FloatNet, Error> {
    let (hidden, buckets, seed) = (cfg.hidden, cfg.buckets, cfg.seed);
    let net = crate::network_option(init, "--init", "has no weights to train")?;
    let parts = Network::clone(&net).into_parts();
    if parts.hidden > hidden {
        return Err(Error::Usage(format!(
            "--init {init:?} has hidden size {}, more than --hidden {hidden}",
            parts.hidden
        )));
    }
    let had = parts.buckets;
    let net = FloatNet::dequantise(&parts).ok_or_else(|| {
        Error::Usage(format!(
            "--init {init:?}: made with qa {} qb {}, the trainer uses {} {}",
            parts.qa,
            parts.qb,
            model::QA,
            model::QB
        ))
    })?;
    let net = net.with_buckets(buckets).ok_or_else(|| {
        Error::Usage(format!(
            "--init {init:?} has {had} output buckets, not --buckets {buckets} (only a network of one bucket can start one of more)"
        ))
    })?;
    let had = net.king_buckets;
    let net = net.with_king_buckets(king_buckets).ok_or_else(|| {
        Error::Usage(format!(
            "--init {init:?} has king buckets {had}, not --king-buckets {king_buckets} (only a network without them can start one with them)"
        ))
    })?;
    let widened = net.widened(hidden, &mut Rng::new(seed));
    Ok(widened.expect("checked: --hidden is at least the network's"))
}
