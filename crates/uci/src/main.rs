//! `chess-uci`: the engine over UCI on stdin/stdout. `chess-uci bench [depth]` runs the bench
//! and exits.

#![forbid(unsafe_code)]

mod uci;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = uci::Output::new(std::io::stdout());
    match args.first().map(String::as_str) {
        None => {
            uci::run(std::io::BufReader::new(std::io::stdin()), out);
            ExitCode::SUCCESS
        }
        Some("bench") => {
            let depth = match args.get(1) {
                None => Some(chess_search::bench::BENCH_DEPTH),
                Some(d) => d.parse().ok().filter(|d| (1..=64).contains(d)),
            };
            match depth {
                Some(d) => {
                    uci::print_bench(d, &out);
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("usage: chess-uci [bench [depth 1-64]]");
                    ExitCode::from(2)
                }
            }
        }
        Some(_) => {
            eprintln!("usage: chess-uci [bench [depth 1-64]]");
            ExitCode::from(2)
        }
    }
}
