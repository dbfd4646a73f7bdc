//! `chess`: local chess tools on the command line, the whole platform in one process
//! (`chess up`), and a client for its gateway.
//!
//! ```text
//! chess perft --depth 5                          count leaf nodes (last stdout line: the total)
//! chess perft --epd suite.epd --max-nodes 1000000  check a perft suite
//! chess fen 'FEN' [--plain] [--board]            validate and normalise a FEN
//! chess moves [--fen FEN] [--format uci]         list legal moves
//! chess san e4 e5 Nf3                            convert moves to SAN and UCI
//! chess pgn games.pgn [--normalize]              check (and re-emit) a PGN file
//! chess opening e4 c5 | --pgn FILE               ECO code, name and class of a line
//! chess report --fen FEN [--moves ..] [--json]   the position report (--lang en|zh)
//! chess winnable FEN|MOVES|- [--for SIDE] [--full] [--json]  who can still checkmate
//! chess up [--data-dir DIR] [--memory]           rules service + gateway on loopback
//! chess game new|move|show|watch|resign|draw     games, through the gateway
//! chess rules legal-moves|status                 rules queries, through the gateway
//! chess store export|import --store URL          move games between redb and PostgreSQL
//! ```
//!
//! The local commands run synchronously; only `up`, `game` and `rules` start a Tokio runtime.
//! The gateway commands take `--server URL` (`CHESS_SERVER`), `--api-key KEY`
//! (`CHESS_API_KEY`) and `--timeout SECS`.
//!
//! Exit codes: 0 success, 1 invalid input, a failed check or a failed call, 2 usage error.

#![forbid(unsafe_code)]

mod analyze;
mod client;
mod error;
mod fen;
mod game;
mod input;
mod moves;
mod opening;
mod perft;
mod pgn;
mod report;
mod rules;
mod san;
mod show;
mod store;
mod tb;
mod up;
mod winnable;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliResult;

/// Chess tools: perft, FEN, legal moves, SAN conversion and PGN checking locally; `chess up`
/// runs the whole platform on this machine, and `chess game` / `chess rules` talk to it.
#[derive(Debug, Parser)]
#[command(
    name = "chess",
    version,
    about,
    propagate_version = true,
    after_help = "Run the platform locally and play a game:\n  \
                  chess up\n  \
                  chess game new --tc 5+3        # prints the game id\n  \
                  chess game move <ID> e4\n  \
                  chess game show <ID>"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    client: client::ClientArgs,
}

// Parsed once per run: the size of the largest variant (`up`'s addresses and settings) costs
// nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
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
    /// The opening of a line of moves or of each game of a PGN file: ECO code, name and class
    /// (open, semi-open, closed; gambit), on one line.
    Opening(opening::OpeningArgs),
    /// The position report: material, bishops, pawn structure, files, king safety,
    /// development, centre, space, phase and endgame class, in English or Chinese, or JSON.
    Report(report::ReportArgs),
    /// Who can still checkmate by some series of legal moves (dead positions, FIDE 5.2.2;
    /// flag falls, 6.9): a helpmate proof, the reason a side cannot win, or undetermined.
    Winnable(winnable::WinnableArgs),
    /// Run the whole stack in this process on loopback: the rules service (games stored in
    /// the data directory), the search service (the engine) and the gateway in front of them,
    /// with the web app. Ctrl-C stops it.
    Up(up::UpArgs),
    /// Create, play, show and follow games through the gateway.
    Game(game::GameArgs),
    /// Rules queries through the gateway (legal moves, position status), e.g. to check a
    /// deployment.
    Rules(rules::RulesArgs),
    /// Analyse a position with the engine through the gateway: best lines with scores.
    Analyze(analyze::AnalyzeArgs),
    /// Review a game from a PGN file: judgements, better moves, accuracy, centipawn loss.
    Review(analyze::ReviewArgs),
    /// Export and import games between game stores (redb files, PostgreSQL) as JSON lines.
    Store(store::StoreArgs),
    /// Our endgame tables: generate, probe (win/draw/loss, distance to mate, best moves),
    /// summarise.
    Tb(tb::TbArgs),
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Perft(args) => perft::run(args),
        Command::Fen(args) => fen::run(args),
        Command::Moves(args) => moves::run(args),
        Command::San(args) => san::run(args),
        Command::Pgn(args) => pgn::run(args),
        Command::Opening(args) => opening::run(args),
        Command::Report(args) => report::run(args),
        Command::Winnable(args) => winnable::run(args),
        Command::Up(args) => up::run(args),
        Command::Game(args) => game::run(args, &cli.client),
        Command::Rules(args) => rules::run(args, &cli.client),
        Command::Analyze(args) => analyze::run_analyze(args, &cli.client),
        Command::Review(args) => analyze::run_review(args, &cli.client),
        Command::Store(args) => store::run(args),
        Command::Tb(args) => tb::run(args),
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
