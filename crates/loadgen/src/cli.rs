//! The command line: `run` (the load test), `compare` (two reports side by side) and
//! `positions` (the position set a run would use).

use clap::{Parser, Subcommand};

use crate::compare::CompareArgs;
use crate::positions::PositionsArgs;
use crate::run::RunArgs;

#[derive(Debug, Parser)]
#[command(
    name = "chess-loadgen",
    version,
    about = "gRPC load generator for the chess platform: analysis, evaluation, games and rules \
             queries under closed or open load, with latency histograms, the servers' own \
             metrics, JSON/CSV/SVG reports and a regression check",
    after_help = "Examples:\n  \
      chess-loadgen run --scenario analyze --nodes 100000 --clients 4 --duration 30s --warmup 5s\n  \
      chess-loadgen run --scenario rules --rate 200 --duration 20s --json rules.json\n  \
      chess-loadgen run --scenario mix --mix analyze=1,rules=8,evaluate=1 --clients 1,2,4 --step-duration 10s\n  \
      chess-loadgen compare old.json new.json --metric p99 --threshold 10%"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs a load test and reports what the client and the servers saw.
    Run(Box<RunArgs>),
    /// Sets two JSON reports side by side; exits 1 when a chosen figure regressed beyond the
    /// threshold, 0 otherwise.
    Compare(CompareArgs),
    /// Prints the positions a run would use (the built-in set or a file's), one FEN a line.
    Positions(PositionsArgs),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn clients_and_rate_exclude_each_other() {
        let r = Cli::try_parse_from(["chess-loadgen", "run", "--clients", "2", "--rate", "5"]);
        assert!(r.is_err());
    }
}
