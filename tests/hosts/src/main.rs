//! `chess-hosts`: the client of the multi-host fault harness (tests/hosts/run.sh). `load`
//! drives steady, bounded load through the gateway (moves in games, reads, analysis, games that
//! lose on time, a watcher on every game), records every call's invocation and completion with
//! the client's clock, then reads the final games and writes the history; `check` checks a
//! history against the final games and the store's event log and prints the scenario's figures.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check;
mod figures;
mod guard;
mod history;
mod load;

#[derive(Parser, Debug)]
#[command(
    name = "chess-hosts",
    about = "Load, history and checker of the multi-host fault harness"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load through the gateway for a while, then the final games; writes the history (JSON).
    Load(load::LoadArgs),
    /// Checks a history; prints the figures as one JSON line; exit status 1 on any finding.
    Check {
        /// The history `load` wrote.
        #[arg(long)]
        history: PathBuf,
        /// The store's events, one `game_id<TAB>seq<TAB>body` line each (psql's unaligned
        /// output), or absent for a store that cannot be read.
        #[arg(long)]
        events: Option<PathBuf>,
        /// When the fault began and healed, ms since the Unix epoch.
        #[arg(long)]
        fault_ms: u64,
        #[arg(long)]
        heal_ms: u64,
        /// The scenario's name (in the figures).
        #[arg(long)]
        scenario: String,
        /// The service as a whole is expected down during the fault (the client cut from the
        /// gateway, the gateway or the database gone): flags due then are not expected on time.
        #[arg(long)]
        outage: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Load(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime");
            match runtime.block_on(load::run(args)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("chess-hosts load: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Check {
            history,
            events,
            fault_ms,
            heal_ms,
            scenario,
            outage,
        } => {
            let window = figures::Window {
                fault_ms,
                heal_ms,
                outage,
            };
            match check::run(&history, events.as_deref(), &scenario, window) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("chess-hosts check: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
