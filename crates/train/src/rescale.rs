//! `chess-train rescale`: a network's evaluation scale matched to another's.
//!
//! The search's margins (futility, razoring, null move, the SPSA-tuned parameters) are
//! centipawns tuned against the default network's evaluations. A network trained on search
//! scores learns their larger spread (a search finds what a static evaluation only guesses):
//! the third round's networks evaluate about 17 % larger than the default network on the same
//! positions, and lost 8-26 Elo against it; the same network with its scale matched won +25.5
//! (docs/network.md, "fifth round"). Matching changes only the file's `SCALE` (the last step
//! `(sum / QA + out_bias) * SCALE / (QA * QB)`), so the weights and every other evaluation
//! detail stay bit for bit as trained.
//!
//! The factor is the least-squares slope through the origin of the network's evaluations on
//! the reference's, over positions from data files where the reference's evaluation is within
//! [`COMPARE_LIMIT`] (decided positions say nothing about the scale of the rest).

use std::path::PathBuf;

use chess_nn::{Network, NetworkParts, output_ratio};
use chess_rules::Position;

use crate::Error;
use crate::data;

/// Positions where the reference evaluates beyond this many centipawns are left out.
pub const COMPARE_LIMIT: i32 = 600;
/// The fewest positions within [`COMPARE_LIMIT`] a slope is taken from.
pub const MIN_COMPARED: usize = 100;

#[derive(Debug, clap::Args)]
pub struct RescaleConfig {
    /// The network to rescale: a network file, or `default` (the embedded network).
    #[arg(long)]
    pub net: String,
    /// The network whose evaluation scale to match: `default` (the embedded network) or a
    /// network file.
    #[arg(long, default_value = "default")]
    pub like: String,
    /// Data files (chess-train datagen's format) whose positions are compared.
    #[arg(long, num_args = 1.., required_unless_present = "scale")]
    pub data: Vec<PathBuf>,
    /// Set this SCALE instead of measuring one (still checked against the output's range).
    #[arg(long, conflicts_with_all = ["data", "like"])]
    pub scale: Option<u32>,
    /// How many positions to compare, taken evenly across the files.
    #[arg(long, default_value_t = 100_000)]
    pub positions: usize,
    /// Where to write the rescaled network.
    #[arg(long)]
    pub out: PathBuf,
}

/// What a rescale found and wrote.
#[derive(Debug)]
pub struct Rescaled {
    /// The network's evaluations over the reference's (least squares through the origin;
    /// with `--scale`, the old scale over the new).
    pub slope: f64,
    /// Positions compared (within [`COMPARE_LIMIT`]; 0 with `--scale`).
    pub compared: usize,
    pub old_scale: i32,
    pub new_scale: i32,
    /// `chnn-<hash>.nnue` of the written network.
    pub file_name: String,
}

fn network(option: &str, flag: &str) -> Result<Network, Error> {
    crate::network_option(option, flag, "is not a network").map(|net| Network::clone(&net))
}

/// Reads the files and rescales `--net` to `--like`'s scale; writes `--out`.
pub fn run(cfg: &RescaleConfig) -> Result<Rescaled, Error> {
    if cfg.positions < MIN_COMPARED {
        return Err(Error::Usage(format!(
            "--positions {}: at least {MIN_COMPARED}",
            cfg.positions
        )));
    }
    let net = network(&cfg.net, "--net")?;
    if let Some(scale) = cfg.scale {
        let old_scale = net.scale();
        let parts = net.into_parts();
        let rescaled = with_scale(parts, f64::from(scale))?;
        if rescaled.scale() != i32::try_from(scale).unwrap_or(i32::MAX) {
            return Err(Error::Usage(format!(
                "--scale {scale}: the output would leave i32 for these weights (nearest that \
                 fits: {})",
                rescaled.scale()
            )));
        }
        return write(
            cfg,
            rescaled,
            f64::from(old_scale) / f64::from(scale),
            0,
            old_scale,
        );
    }
    let like = network(&cfg.like, "--like")?;
    let mut positions = Vec::new();
    let files: Vec<data::DataFile> = cfg
        .data
        .iter()
        .map(|path| data::read(path))
        .collect::<Result<_, _>>()?;
    let total: usize = files.iter().map(data::DataFile::positions).sum();
    let step = (total / cfg.positions).max(1);
    let records = files.iter().zip(&cfg.data).flat_map(|(file, path)| {
        file.games
            .iter()
            .flat_map(move |g| g.positions.iter().map(move |r| (path, r)))
    });
    for (path, record) in records.step_by(step) {
        let pos = Position::from_fen(&record.fen).map_err(|e| Error::Format {
            path: path.clone(),
            what: format!("position {:?}: {e}", record.fen),
        })?;
        positions.push(pos);
    }
    let (slope, compared) = slope(&net, &like, &positions)?;
    let parts = net.into_parts();
    let old_scale = parts.scale;
    let rescaled = with_scale(parts, f64::from(old_scale) / slope)?;
    write(cfg, rescaled, slope, compared, old_scale)
}

fn write(
    cfg: &RescaleConfig,
    rescaled: Network,
    slope: f64,
    compared: usize,
    old_scale: i32,
) -> Result<Rescaled, Error> {
    std::fs::write(&cfg.out, rescaled.to_bytes()).map_err(|source| Error::Io {
        path: cfg.out.clone(),
        source,
    })?;
    Ok(Rescaled {
        slope,
        compared,
        old_scale,
        new_scale: rescaled.scale(),
        file_name: rescaled.file_name(),
    })
}

/// The least-squares slope through the origin of `net`'s evaluations on `like`'s over the
/// `positions` where `like` evaluates within [`COMPARE_LIMIT`], and how many those were.
pub fn slope(net: &Network, like: &Network, positions: &[Position]) -> Result<(f64, usize), Error> {
    let (mut xy, mut xx, mut n) = (0.0f64, 0.0f64, 0usize);
    for pos in positions {
        let x = like.evaluate(pos);
        if x.abs() > COMPARE_LIMIT {
            continue;
        }
        let y = net.evaluate(pos);
        xy += f64::from(x) * f64::from(y);
        xx += f64::from(x) * f64::from(x);
        n += 1;
    }
    if n < MIN_COMPARED || xx == 0.0 {
        return Err(Error::Usage(format!(
            "only {n} of {} positions evaluate within {COMPARE_LIMIT} cp by the reference: \
             at least {MIN_COMPARED} are needed",
            positions.len()
        )));
    }
    let slope = xy / xx;
    if !(slope.is_finite() && slope > 0.0) {
        return Err(Error::Usage(format!(
            "the two networks do not agree in sign (slope {slope:.3}): not the same kind of \
             evaluation"
        )));
    }
    Ok((slope, n))
}

/// `parts` with `SCALE` as near to `wanted` as the output arithmetic allows: within `i32`,
/// `(sum / QA + out_bias) * M` must hold for the largest `sum` the weights can give (`M` the
/// numerator of `SCALE / (QA * QB)` reduced), so of the scales within 2 % of `wanted` the
/// nearest that keeps it is taken.
pub fn with_scale(mut parts: NetworkParts, wanted: f64) -> Result<Network, Error> {
    let reach = output_reach(&parts);
    let nearest = wanted.round();
    let fits = |scale: i64| {
        i32::try_from(scale).is_ok_and(|s| {
            s >= 1
                && s <= chess_nn::MAX_QUANT as i32
                && reach.saturating_mul(i64::from(output_ratio(parts.qa, parts.qb, s).0))
                    <= i64::from(i32::MAX)
        })
    };
    let spread = (wanted * 0.02).ceil() as i64;
    let scale = (0..=spread)
        .flat_map(|d| [nearest as i64 - d, nearest as i64 + d])
        .find(|&s| fits(s))
        .ok_or_else(|| {
            Error::Usage(format!(
                "no scale within 2 % of {wanted:.1} keeps the output within i32 for these weights"
            ))
        })?;
    parts.scale = i32::try_from(scale).expect("checked by fits");
    Network::from_parts(parts).map_err(Error::Network)
}

/// The largest `|sum / QA + out_bias|` any position can give, over the output buckets: each
/// clamped activation is at most `QA`, so `|sum| / QA <= QA * sum(|w|)`.
fn output_reach(parts: &NetworkParts) -> i64 {
    let per_bucket = 2 * parts.hidden;
    parts
        .out_weights
        .chunks(per_bucket)
        .zip(&parts.out_biases)
        .map(|(w, &b)| {
            let sum: i64 = w.iter().map(|&w| i64::from(w).abs()).sum();
            sum * i64::from(parts.qa) + i64::from(b).abs()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use chess_rules::Game;

    /// Positions of random games from the start.
    fn positions(n: usize) -> Vec<Position> {
        let mut rng = Rng::new(5);
        let mut out = Vec::new();
        while out.len() < n {
            let mut game = Game::new(Position::startpos());
            for _ in 0..60 {
                let moves = game.position().legal_moves();
                if moves.is_empty() || game.outcome().is_some() {
                    break;
                }
                let m = moves.as_slice()[rng.below(moves.len())];
                game.play(m).unwrap();
                out.push(game.position().clone());
            }
        }
        out.truncate(n);
        out
    }

    fn default_parts() -> NetworkParts {
        Network::clone(&Network::default_network()).into_parts()
    }

    #[test]
    fn a_network_scaled_by_hand_is_scaled_back() {
        let like = Network::from_parts(NetworkParts {
            scale: 400,
            ..default_parts()
        })
        .unwrap();
        let mut parts = default_parts();
        parts.scale = 500;
        let net = Network::from_parts(parts).unwrap();
        let positions = positions(2_000);
        let (s, n) = slope(&net, &like, &positions).unwrap();
        assert!(n >= MIN_COMPARED);
        assert!((s - 1.25).abs() < 0.01, "slope {s}");
        let back = with_scale(net.into_parts(), 500.0 / s).unwrap();
        assert!((back.scale() - 400).abs() <= 2, "scale {}", back.scale());
        // Matched to itself, a network keeps its scale.
        let (s, _) = slope(&like, &like, &positions).unwrap();
        assert_eq!(s, 1.0);
    }

    #[test]
    fn too_few_positions_within_the_limit_is_an_error() {
        let net = Network::from_parts(default_parts()).unwrap();
        let e = slope(&net, &net, &positions(50)).unwrap_err();
        assert!(e.to_string().contains("at least 100"), "{e}");
    }

    #[test]
    fn a_scale_that_would_overflow_the_output_is_moved_or_refused() {
        let mut parts = default_parts();
        // Output weights at 128 everywhere: the reach is 512 * 128 * 255 = 16.7 M, so the
        // numerator M of SCALE / 16,320 may be at most 128.
        parts.out_weights.iter_mut().for_each(|w| *w = 128);
        let reach = output_reach(&parts);
        // 347 is prime (M = 347): too much; a neighbour within 2 % with a smaller M is taken.
        let net = with_scale(parts.clone(), 347.0).unwrap();
        let (m, _) = output_ratio(net.qa(), net.qb(), net.scale());
        assert!(reach * i64::from(m) <= i64::from(i32::MAX), "M {m}");
        assert!((net.scale() - 347).abs() <= 7);
        // Far beyond any scale: refused with the reason.
        parts.out_weights.iter_mut().for_each(|w| *w = i16::MAX);
        let e = with_scale(parts, 20_001.0).unwrap_err();
        assert!(e.to_string().contains("within i32"), "{e}");
    }
}
