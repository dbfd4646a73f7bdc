//! Runs the unwinnability analysis in full mode on a labelled set and counts how it fares:
//! each line of the input is a two-letter code (`WB`, `W-`, `-B`, `--`: which sides can still
//! mate) and a FEN, `#` starts a comment. A side is *right* when the analysis gives the
//! labelled answer, *undetermined* when it gives none, and *wrong* when it contradicts the
//! label (every wrong answer is printed: there must be none). Prints the counts per label, the
//! mean and worst time, and the undetermined positions with `-v`.
//!
//! `cargo run --release -p chess-knowledge --example winnable_labelled -- FILE [-v] [--nodes N]`

use std::time::Duration;

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_time;

use chess_knowledge::{Verdict, WinnableBudget, proves_mate, winnability};
use chess_rules::{Color, Position};

#[derive(Default)]
struct Counts {
    positions: u64,
    right: u64,
    undetermined: u64,
    wrong: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let nodes = args
        .iter()
        .position(|a| a == "--nodes")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(WinnableBudget::FULL_NODES);
    let Some(path) = args
        .iter()
        .find(|a| !a.starts_with('-') && a.parse::<u64>().is_err())
    else {
        eprintln!("usage: winnable_labelled FILE [-v] [--nodes N]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let limits = WinnableBudget::full().with_nodes(nodes);
    let mut by_label: std::collections::BTreeMap<String, Counts> = Default::default();
    let mut total = Duration::ZERO;
    let mut worst = (Duration::ZERO, String::new());
    let mut wrong = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((label, fen)) = line.split_once(' ') else {
            continue;
        };
        let pos = match Position::from_fen(fen.trim()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("not a position: {fen}: {e}");
                continue;
            }
        };
        let start = thread_cpu_time();
        let both = winnability(&pos, &limits);
        let took = thread_cpu_time().saturating_sub(start);
        total += took;
        if took > worst.0 {
            worst = (took, fen.to_owned());
        }
        let counts = by_label.entry(label.to_owned()).or_default();
        counts.positions += 1;
        for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
            let can = label.as_bytes().get(i).is_some_and(|&c| c != b'-');
            let a = both.get(color);
            match &a.verdict {
                Verdict::Winnable { line } => {
                    assert!(proves_mate(&pos, color, line), "bad proof: {fen}");
                    if can {
                        counts.right += 1;
                    } else {
                        counts.wrong += 1;
                        wrong += 1;
                        println!("WRONG {label} {fen}: {color:?} winnable");
                    }
                }
                Verdict::Unwinnable { reason } => {
                    if can {
                        counts.wrong += 1;
                        wrong += 1;
                        println!("WRONG {label} {fen}: {color:?} unwinnable: {reason}");
                    } else {
                        counts.right += 1;
                        if verbose {
                            println!("unwinnable {label} {fen}: {color:?}: {reason}");
                        }
                    }
                }
                Verdict::Undetermined => {
                    counts.undetermined += 1;
                    if verbose {
                        println!("undetermined {label} {fen}: {color:?}");
                    }
                }
            }
        }
    }
    let positions: u64 = by_label.values().map(|c| c.positions).sum();
    println!("label  positions  sides right  undetermined  wrong");
    for (label, c) in &by_label {
        println!(
            "{label:5}  {:9}  {:11}  {:12}  {:5}",
            c.positions, c.right, c.undetermined, c.wrong
        );
    }
    println!(
        "{positions} positions, mean {:.1} µs, worst {:.1} ms ({}), {wrong} wrong",
        total.as_secs_f64() * 1e6 / positions.max(1) as f64,
        worst.0.as_secs_f64() * 1e3,
        worst.1
    );
    if wrong > 0 {
        std::process::exit(1);
    }
}
