//! `chess-uci`: the engine over UCI on stdin/stdout. `chess-uci bench [depth [evalfile]]` runs
//! the bench (with the embedded network, or what `evalfile` names as the `EvalFile` option
//! would: `hand`, `default` or a network file) and exits.

#![forbid(unsafe_code)]

mod strength;
mod uci;

use std::process::ExitCode;

use chess_search::EvalSource;

const USAGE: &str = "usage: chess-uci [bench [depth 1-64 [hand|default|NETWORK_FILE]]]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = uci::Output::new(std::io::stdout());
    match args.first().map(String::as_str) {
        None => {
            uci::run(std::io::BufReader::new(std::io::stdin()), out);
            ExitCode::SUCCESS
        }
        Some("bench") if args.len() <= 3 => {
            let depth = match args.get(1) {
                None => Some(chess_search::bench::BENCH_DEPTH),
                Some(d) => d.parse().ok().filter(|d| (1..=64).contains(d)),
            };
            let source = match args.get(2) {
                None => Ok(EvalSource::default()),
                Some(v) => EvalSource::from_option(v),
            };
            match (depth, source) {
                (Some(d), Ok(source)) => {
                    uci::print_bench(d, &source, &out);
                    ExitCode::SUCCESS
                }
                (None, _) => {
                    eprintln!("{USAGE}");
                    ExitCode::from(2)
                }
                (_, Err(e)) => {
                    eprintln!("chess-uci: bad evalfile: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(_) => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
