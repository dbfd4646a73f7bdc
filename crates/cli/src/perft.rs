//! `chess perft`: leaf-node counts of the legal move tree, for one position or a whole EPD
//! suite, spread over the available cores.

use std::io::{self, BufWriter, Write};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use chess_rules::{Move, Position, perft};
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::input;

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Depth in plies.
    #[arg(
        long,
        short,
        value_name = "D",
        required_unless_present = "epd",
        conflicts_with = "epd"
    )]
    depth: Option<u32>,
    /// The position (default: the start position); unquoted FEN words are joined.
    #[arg(
        long,
        value_name = "FEN",
        num_args = 1..=6,
        allow_negative_numbers = true,
        conflicts_with = "epd"
    )]
    fen: Option<Vec<String>>,
    /// Print the count under each root move (`e2e4: 20`) before the total.
    #[arg(long, conflicts_with = "epd")]
    divide: bool,
    /// Check every `;D<depth> <nodes>` entry of an EPD perft suite.
    #[arg(long, value_name = "FILE")]
    epd: Option<PathBuf>,
    /// With --epd: skip entries that expect more than N nodes.
    #[arg(long, value_name = "N", requires = "epd", conflicts_with = "depth")]
    max_nodes: Option<u64>,
    /// With --epd: skip entries deeper than D plies.
    #[arg(long, value_name = "D", requires = "epd", conflicts_with = "depth")]
    max_depth: Option<u32>,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
}

pub fn run(args: PerftArgs) -> CliResult {
    let threads = match args.threads {
        Some(n) => n as usize,
        None => thread::available_parallelism().map_or(1, NonZeroUsize::get),
    };
    match (&args.epd, args.depth) {
        (Some(path), _) => run_suite(path, args.max_nodes, args.max_depth, threads),
        (None, Some(depth)) => {
            let pos = input::position_or_start(args.fen.as_deref())?;
            run_single(&pos, depth, args.divide, threads)
        }
        // clap requires --depth unless --epd is given.
        (None, None) => Err(CliError::usage("give --depth or --epd")),
    }
}

fn run_single(pos: &Position, depth: u32, divide: bool, threads: usize) -> CliResult {
    let start = Instant::now();
    let mut out = BufWriter::new(io::stdout().lock());
    let total = if depth >= 3 || divide {
        let counts = divide_parallel(pos, depth, threads);
        if divide {
            for (m, n) in &counts {
                writeln!(out, "{m}: {n}")?;
            }
            if !counts.is_empty() {
                writeln!(out)?;
            }
        }
        if depth == 0 {
            1
        } else {
            counts.iter().map(|(_, n)| n).sum()
        }
    } else {
        perft(pos, depth)
    };
    writeln!(out, "{total}")?;
    out.flush()?;
    let elapsed = start.elapsed();
    eprintln!(
        "depth {depth}: {total} nodes in {} ({})",
        seconds(elapsed),
        rate(total, elapsed)
    );
    Ok(())
}

/// Leaf counts under each root move, in generation order, the subtrees shared among threads.
fn divide_parallel(pos: &Position, depth: u32, threads: usize) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
    let counts = parallel_map(&moves, threads, |&m| {
        let mut next = pos.clone();
        next.play_unchecked(m);
        perft(&next, depth - 1)
    });
    moves.into_iter().zip(counts).collect()
}

/// Applies `work` to every item on up to `threads` scoped threads; each thread takes the next
/// unclaimed item, so put the expensive items first. Results come back in item order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let (next, work) = (&next, &work);
    let mut slots: Vec<Option<R>> = items.iter().map(|_| None).collect();
    thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(index) else { break };
                        done.push((index, work(item)));
                    }
                    done
                })
            })
            .collect();
        for handle in handles {
            match handle.join() {
                Ok(done) => {
                    for (index, result) in done {
                        slots[index] = Some(result);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every item was claimed by one thread"))
        .collect()
}

/// One line of an EPD perft suite.
#[derive(Debug)]
struct SuiteLine {
    line: usize,
    fen: String,
    pos: Position,
    /// `(depth, expected nodes)` in the order written.
    entries: Vec<(u32, u64)>,
}

/// Reads a suite; every malformed line is reported (`line N: ...`).
fn parse_suite(bytes: &[u8]) -> Result<Vec<SuiteLine>, Vec<String>> {
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match std::str::from_utf8(raw) {
            Ok(text) => match parse_suite_line(number, text) {
                Ok(Some(line)) => lines.push(line),
                Ok(None) => {}
                Err(e) => errors.push(format!("line {number}: {e}")),
            },
            Err(e) => errors.push(format!(
                "line {number}: not UTF-8 text (invalid byte 0x{:02x} at byte {})",
                raw[e.valid_up_to()],
                e.valid_up_to() + 1
            )),
        }
    }
    if errors.is_empty() {
        Ok(lines)
    } else {
        Err(errors)
    }
}

/// `FEN ;D1 20 ;D2 400`; `None` for blank lines and `#` comments.
fn parse_suite_line(number: usize, text: &str) -> Result<Option<SuiteLine>, String> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let mut parts = text.split(';');
    let fen = parts.next().unwrap_or_default().trim();
    if fen.is_empty() {
        return Err(format!("no FEN before the first ';' in {text:?}"));
    }
    let pos = Position::from_fen(fen).map_err(|e| input::fen_error_message(fen, &e))?;
    let mut entries = Vec::new();
    for part in parts.map(str::trim).filter(|p| !p.is_empty()) {
        entries.push(parse_entry(part).ok_or_else(|| {
            format!(
                "expected \";D<depth> <nodes>\" (like \";D3 8902\"), found {:?}",
                part
            )
        })?);
    }
    if entries.is_empty() {
        return Err(format!(
            "no \";D<depth> <nodes>\" entries after the FEN in {text:?}"
        ));
    }
    Ok(Some(SuiteLine {
        line: number,
        fen: fen.to_owned(),
        pos,
        entries,
    }))
}

/// `D3 8902` as `(3, 8902)`.
fn parse_entry(part: &str) -> Option<(u32, u64)> {
    let (depth, nodes) = part.strip_prefix('D')?.split_once(char::is_whitespace)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let nodes = nodes.trim();
    if !digits(depth) || !digits(nodes) {
        return None;
    }
    Some((depth.parse().ok()?, nodes.parse().ok()?))
}

/// A piece of work: the subtree under one root move of an entry (or the whole entry when it is
/// shallow). Splitting deep entries by root move keeps all threads busy to the end.
#[derive(Debug)]
struct Task {
    entry: usize,
    pos: Position,
    depth: u32,
    /// Expected share of the entry's nodes, for scheduling the big tasks first.
    weight: u64,
}

fn run_suite(
    path: &Path,
    max_nodes: Option<u64>,
    max_depth: Option<u32>,
    threads: usize,
) -> CliResult {
    let bytes = input::read_bytes(path)?;
    let suite = match parse_suite(&bytes) {
        Ok(suite) => suite,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {:?} {e}", path.display());
            }
            return Err(CliError::usage(format!(
                "{} malformed line(s) in {:?}",
                errors.len(),
                path.display()
            )));
        }
    };
    let start = Instant::now();
    // (line index, depth, expected) for every entry to check, in file order.
    let mut checked = Vec::new();
    let mut skipped = 0usize;
    let mut positions = 0usize;
    let mut tasks = Vec::new();
    for (li, line) in suite.iter().enumerate() {
        let before = checked.len();
        for &(depth, expected) in &line.entries {
            if max_nodes.is_some_and(|n| expected > n) || max_depth.is_some_and(|d| depth > d) {
                skipped += 1;
                continue;
            }
            let entry = checked.len();
            checked.push((li, depth, expected));
            if depth >= 3 {
                let moves = line.pos.legal_moves();
                let weight = expected / (moves.len() as u64).max(1);
                for &m in moves.iter() {
                    let mut pos = line.pos.clone();
                    pos.play_unchecked(m);
                    tasks.push(Task {
                        entry,
                        pos,
                        depth: depth - 1,
                        weight,
                    });
                }
            } else {
                tasks.push(Task {
                    entry,
                    pos: line.pos.clone(),
                    depth,
                    weight: expected,
                });
            }
        }
        if checked.len() > before {
            positions += 1;
        }
    }
    tasks.sort_by_key(|t| std::cmp::Reverse(t.weight));
    let counts = parallel_map(&tasks, threads, |t| perft(&t.pos, t.depth));
    let mut got = vec![0u64; checked.len()];
    for (task, n) in tasks.iter().zip(counts) {
        got[task.entry] += n;
    }
    let elapsed = start.elapsed();

    let mut out = BufWriter::new(io::stdout().lock());
    let mut mismatches = 0usize;
    for (&(li, depth, expected), &got) in checked.iter().zip(&got) {
        if got != expected {
            mismatches += 1;
            let line = &suite[li];
            writeln!(
                out,
                "mismatch: line {} depth {depth}: expected {expected}, got {got}: {}",
                line.line, line.fen
            )?;
        }
    }
    let nodes: u64 = got.iter().sum();
    writeln!(
        out,
        "checked {} entries in {positions} positions, {skipped} skipped, {mismatches} mismatches, \
         {nodes} nodes, {:.3} seconds",
        checked.len(),
        elapsed.as_secs_f64()
    )?;
    out.flush()?;
    eprintln!("{} on {threads} thread(s)", rate(nodes, elapsed));
    if mismatches > 0 {
        return Err(CliError::failure(format!(
            "{mismatches} perft mismatch(es) in {:?}",
            path.display()
        )));
    }
    Ok(())
}

fn seconds(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn rate(nodes: u64, d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs > 0.0 {
        format!("{:.2} Mnps", nodes as f64 / secs / 1e6)
    } else {
        "- Mnps".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries() {
        assert_eq!(parse_entry("D3 8902"), Some((3, 8902)));
        assert_eq!(parse_entry("D3   8902 "), Some((3, 8902)));
        assert_eq!(parse_entry("D3"), None);
        assert_eq!(parse_entry("d3 8902"), None);
        assert_eq!(parse_entry("D3 -1"), None);
        assert_eq!(parse_entry("D 3"), None);
    }

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<u64> = (0..100).collect();
        assert_eq!(
            parallel_map(&items, 3, |x| x * 2),
            items.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(parallel_map(&[] as &[u64], 3, |x| *x), Vec::<u64>::new());
    }

    #[test]
    fn suite_lines() {
        let text = b"# comment\n\n8/8/8/8/8/8/8/K6k w - - ;D1 3 ;\r\nbad line ;D1 3\n";
        let errors = parse_suite(text).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("line 4: invalid FEN"), "{errors:?}");
        let suite = parse_suite(&text[..text.len() - 15]).unwrap();
        assert_eq!(suite[0].entries, vec![(1, 3)]);
        assert_eq!(suite[0].line, 3);
    }
}
