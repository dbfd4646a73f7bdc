//! `chess-loadgen`: a gRPC load generator for the chess platform that knows chess. See the
//! crate's `cli` module (or `chess-loadgen --help`) for the flags and `docs/benchmarks.md` for
//! measured runs.

#![forbid(unsafe_code)]

mod cli;
mod compare;
mod failure;
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

use crate::failure::Failure;

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
