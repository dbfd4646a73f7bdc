//! `chess-train datagen ...` and `chess-train train ...`; see the crate documentation.

use std::path::PathBuf;
use std::process::ExitCode;

use chess_train::datagen::{self, DatagenConfig};
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
    Datagen {
        #[arg(long)]
        out: PathBuf,
        /// Games the file should hold at the end (those already there count).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        games: u64,
        /// Search nodes per move.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        nodes: u64,
        /// Random legal plies that open each game.
        #[arg(long, default_value_t = 8)]
        random_plies: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Progress line every this many games.
        #[arg(long, default_value_t = 10)]
        report_every: u64,
    },
    /// Train a network on data files and write it in the chess-nn format.
    Train {
        #[arg(long, required = true, num_args = 1..)]
        data: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        /// Neurons per perspective: a multiple of 16 from 16 to 1024.
        #[arg(long, default_value_t = 256)]
        hidden: usize,
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        epochs: u32,
        #[arg(long, default_value_t = 0.001)]
        lr: f32,
        /// Weight of the game result in the target (the rest is the search score).
        #[arg(long, default_value_t = 0.3)]
        wdl: f32,
        #[arg(long, default_value_t = 1024)]
        batch: usize,
        /// Checkpoint written after each epoch and resumed from when present.
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads summing each batch's gradient (default: the machine's cores).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: Option<u32>,
        /// From this epoch (counted from 0) on, train at a tenth of --lr.
        #[arg(long)]
        lr_drop: Option<u32>,
        /// Share of the games held out for a validation loss after every epoch (0: none).
        #[arg(long, default_value_t = 0.02)]
        validation: f32,
    },
}

fn run(cli: Cli) -> Result<(), chess_train::Error> {
    use chess_train::Error::Usage;
    match cli.command {
        Command::Datagen {
            out,
            games,
            nodes,
            random_plies,
            seed,
            report_every,
        } => {
            let s = datagen::run(&DatagenConfig {
                out,
                games,
                nodes,
                random_plies,
                seed,
                report_every,
            })?;
            println!(
                "games_before={} games_played={} positions={} seconds={:.2} positions_per_s={:.0}",
                s.games_before,
                s.games_played,
                s.positions,
                s.seconds,
                s.positions as f64 / s.seconds.max(1e-9)
            );
        }
        Command::Train {
            data,
            out,
            hidden,
            epochs,
            lr,
            wdl,
            batch,
            checkpoint,
            seed,
            threads,
            lr_drop,
            validation,
        } => {
            let threads = threads.map_or_else(
                || std::thread::available_parallelism().map_or(1, usize::from),
                |t| t as usize,
            );
            if hidden == 0
                || hidden % chess_nn::HIDDEN_MULTIPLE != 0
                || hidden > chess_nn::MAX_HIDDEN
            {
                return Err(Usage(format!(
                    "--hidden {hidden}: must be a multiple of {} from {} to {}",
                    chess_nn::HIDDEN_MULTIPLE,
                    chess_nn::HIDDEN_MULTIPLE,
                    chess_nn::MAX_HIDDEN
                )));
            }
            if !(0.0..=1.0).contains(&wdl) {
                return Err(Usage(format!("--wdl {wdl}: must be between 0 and 1")));
            }
            if !(lr > 0.0 && lr.is_finite()) {
                return Err(Usage(format!("--lr {lr}: must be positive")));
            }
            if !(0.0..0.5).contains(&validation) {
                return Err(Usage(format!(
                    "--validation {validation}: must be at least 0 and below 0.5"
                )));
            }
            if batch == 0 {
                return Err(Usage("--batch must be at least 1".into()));
            }
            let s = train::run(&TrainConfig {
                data,
                out: out.clone(),
                hidden,
                epochs,
                lr,
                wdl,
                batch,
                checkpoint,
                seed,
                threads,
                lr_drop,
                validation,
            })?;
            println!(
                "wrote {} ({}) positions={} positions_per_s={:.0} loss={} val_loss={}",
                out.display(),
                s.file_name,
                s.positions,
                s.positions_per_second,
                s.last_loss.map_or("-".into(), |l| format!("{l:.6}")),
                s.last_validation_loss
                    .map_or("-".into(), |l| format!("{l:.6}"))
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
