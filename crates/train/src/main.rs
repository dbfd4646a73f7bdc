//! `chess-train datagen ...`, `chess-train train ...` and `chess-train rescale ...`; see the
//! crate documentation.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use chess_train::datagen::{self, DatagenConfig};
use chess_train::rescale::{self, RescaleConfig};
use chess_train::train::{self, TrainConfig};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "chess-train",
    about = "Self-play data generation and network training"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play self-play games and append their quiet positions to a data file (resumes).
    Datagen(DatagenConfig),
    /// Train a network on data files and write it in the chess-nn format.
    Train(TrainConfig),
    /// Write a network with its evaluation scale matched to another network's (by the file's
    /// SCALE alone: the weights stay as they are).
    Rescale(RescaleConfig),
}

/// The checks clap's declarations cannot state.
fn check(cfg: &TrainConfig) -> Result<(), chess_train::Error> {
    use chess_train::Error::Usage;
    let hidden = cfg.hidden;
    if hidden == 0
        || !hidden.is_multiple_of(chess_nn::HIDDEN_MULTIPLE)
        || hidden > chess_nn::MAX_HIDDEN
    {
        return Err(Usage(format!(
            "--hidden {hidden}: must be a multiple of {} from {} to {}",
            chess_nn::HIDDEN_MULTIPLE,
            chess_nn::HIDDEN_MULTIPLE,
            chess_nn::MAX_HIDDEN
        )));
    }
    if !(1..=chess_nn::MAX_BUCKETS).contains(&cfg.buckets) {
        return Err(Usage(format!(
            "--buckets {}: must be 1 to {}",
            cfg.buckets,
            chess_nn::MAX_BUCKETS
        )));
    }
    if !(0.0..=1.0).contains(&cfg.wdl) {
        return Err(Usage(format!("--wdl {}: must be between 0 and 1", cfg.wdl)));
    }
    if !(cfg.lr > 0.0 && cfg.lr.is_finite()) {
        return Err(Usage(format!("--lr {}: must be positive", cfg.lr)));
    }
    if !(0.0..0.5).contains(&cfg.validation) {
        return Err(Usage(format!(
            "--validation {}: must be at least 0 and below 0.5",
            cfg.validation
        )));
    }
    let max = chess_train::train::max_out_limit(hidden);
    if let Some(limit) = cfg.output_weight_limit
        && !(1..=max).contains(&limit)
    {
        return Err(Usage(format!(
            "--output-weight-limit {limit}: must be from 1 to {max} for --hidden {hidden}"
        )));
    }
    if cfg.factorise && cfg.king_buckets.is_none_or(|k| k.count() < 2) {
        return Err(Usage(
            "--factorise shares feature weights between king buckets: give --king-buckets with at least two".into(),
        ));
    }
    if cfg.batch == 0 {
        return Err(Usage("--batch must be at least 1".into()));
    }
    if !(1..=256).contains(&cfg.threads) {
        return Err(Usage(format!(
            "--threads {}: must be from 1 to 256",
            cfg.threads
        )));
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), chess_train::Error> {
    match cli.command {
        Command::Datagen(cfg) => {
            let s = datagen::run(&cfg)?;
            println!(
                "games_before={} games_played={} positions={} seconds={:.2} positions_per_s={:.0}",
                s.games_before,
                s.games_played,
                s.positions,
                s.seconds,
                s.positions as f64 / s.seconds.max(1e-9)
            );
        }
        Command::Train(cfg) => {
            check(&cfg)?;
            let s = train::run(&cfg)?;
            println!(
                "wrote {} ({}) positions={} positions_per_s={:.0} loss={} val_loss={}",
                cfg.out.display(),
                s.file_name,
                s.positions,
                s.positions_per_second,
                s.last_loss.map_or("-".into(), |l| format!("{l:.6}")),
                s.last_validation_loss
                    .map_or("-".into(), |l| format!("{l:.6}"))
            );
        }
        Command::Rescale(cfg) => {
            let r = rescale::run(&cfg)?;
            println!(
                "wrote {} ({}) slope={:.4} compared={} scale={} -> {}",
                cfg.out.display(),
                r.file_name,
                r.slope,
                r.compared,
                r.old_scale,
                r.new_scale
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ chess_train::Error::Usage(_)) => {
            eprintln!("chess-train: error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("chess-train: error: {e}");
            ExitCode::FAILURE
        }
    }
}
