//! `chess-loadgen`: a gRPC load generator for the chess platform that knows chess. See the
//! crate's `cli` module (or `chess-loadgen --help`) for the flags and `docs/benchmarks.md` for
//! measured runs.

#![forbid(unsafe_code)]

mod cli;
mod compare;
mod positions;
mod prom;
mod refusal;
mod report;
mod run;
mod scenario;
mod schedule;
mod stats;
mod svg;
mod target;
mod workload;

use std::process::ExitCode;

use clap::Parser;

/// Exit status of a run that could not be done (target unreachable, file unreadable, ...).
const EXIT_FAILURE: u8 = 1;
/// Exit status of bad flags (clap uses the same).
const EXIT_USAGE: u8 = 2;

/// Why the program stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Bad flags or input files: exit 2.
    Usage(String),
    /// The run could not be done: exit 1.
    Run(String),
}

impl Failure {
    fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Run(_) => EXIT_FAILURE,
        }
    }
}

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let outcome = match args.command {
        cli::Command::Run(run) => run::main(*run),
        cli::Command::Compare(cmp) => compare::main(&cmp),
        cli::Command::Positions(p) => positions::main(&p),
    };
    match outcome {
        Ok(code) => code,
        Err(f) => {
            let (Failure::Usage(text) | Failure::Run(text)) = &f;
            eprintln!("chess-loadgen: {text}");
            ExitCode::from(f.code())
        }
    }
}
