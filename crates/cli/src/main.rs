//! `chess`: local chess tools on the command line.
//!
//! ```text
//! chess perft --depth 5                          count leaf nodes (last stdout line: the total)
//! chess perft --epd suite.epd --max-nodes 1000000  check a perft suite
//! chess fen 'FEN' [--plain] [--board]            validate and normalise a FEN
//! chess moves [--fen FEN] [--format uci]         list legal moves
//! chess san e4 e5 Nf3                            convert moves to SAN and UCI
//! chess pgn games.pgn [--normalize]              check (and re-emit) a PGN file
//! ```
//!
//! Exit codes: 0 success, 1 invalid input or a failed check, 2 usage error.

#![forbid(unsafe_code)]

mod error;
mod fen;
mod input;
mod moves;
mod perft;
mod pgn;
mod san;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliResult;

/// Local chess tools: perft, FEN, legal moves, SAN conversion, PGN checking.
#[derive(Debug, Parser)]
#[command(name = "chess", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count the leaf nodes of the legal move tree, or check an EPD perft suite.
    Perft(perft::PerftArgs),
    /// Validate a FEN and print it normalised.
    Fen(fen::FenArgs),
    /// List the legal moves of a position.
    Moves(moves::MovesArgs),
    /// Convert moves in any notation to SAN and UCI, playing them in sequence.
    San(san::SanArgs),
    /// Check a PGN file game by game, optionally re-emitting the good games.
    Pgn(pgn::PgnArgs),
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Perft(args) => perft::run(args),
        Command::Fen(args) => fen::run(args),
        Command::Moves(args) => moves::run(args),
        Command::San(args) => san::run(args),
        Command::Pgn(args) => pgn::run(args),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Whatever was printed before the failure belongs before the message.
            let _ = std::io::stdout().flush();
            if let Some(message) = err.message() {
                eprintln!("error: {message}");
            }
            ExitCode::from(err.exit_code())
        }
    }
}
