//! Times the unwinnability analysis on real game positions: every position of the engine games
//! under `docs/matches` in quick mode (the cost after every move of a game), and the final
//! positions of those games and of seeded random games in full mode (the cost when a flag
//! falls). Prints positions per second, the mean and worst time, the verdict counts and the
//! node total, which a change of the search must report. Times are the CPU time of the
//! thread (so a time slice taken by another process on a shared machine is not counted), and
//! quick times the fastest of three runs of each position.
//!
//! `cargo run --release -p chess-knowledge --example winnable_bench [-- PGN...]`

use std::fs::File;
use std::io::BufReader;
use std::time::Duration;

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_time;

use chess_knowledge::{Verdict, WinnableBudget, proves_mate, winnability};
use chess_pgn::read_games;
use chess_rules::Position;

struct Tally {
    positions: u64,
    total: Duration,
    worst: Duration,
    worst_fen: String,
    nodes: u64,
    /// winnable, unwinnable, undetermined (sides, two per position)
    verdicts: [u64; 3],
    dead: u64,
    /// Sides proven unable to mate, in positions where the game goes on, that the old
    /// material rule says could mate: a flag fall there was scored wrongly.
    beyond_material: u64,
    beyond_example: String,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            positions: 0,
            total: Duration::ZERO,
            worst: Duration::ZERO,
            worst_fen: String::new(),
            nodes: 0,
            verdicts: [0; 3],
            dead: 0,
            beyond_material: 0,
            beyond_example: String::new(),
        }
    }

    /// Times `repeats` runs and keeps the fastest, so that a time slice lost to another
    /// process on a shared machine is not taken for the analysis's worst case.
    fn run(&mut self, pos: &Position, limits: &WinnableBudget, repeats: u32) {
        let mut took = Duration::MAX;
        let mut both = None;
        for _ in 0..repeats.max(1) {
            let start = thread_cpu_time();
            let b = winnability(pos, limits);
            took = took.min(thread_cpu_time().saturating_sub(start));
            both = Some(b);
        }
        let Some(both) = both else { return };
        self.positions += 1;
        self.total += took;
        if took > self.worst {
            self.worst = took;
            self.worst_fen = pos.fen();
        }
        for a in [&both.white, &both.black] {
            self.nodes += a.nodes;
            let i = match &a.verdict {
                Verdict::Winnable { line } => {
                    assert!(proves_mate(pos, a.winner, line), "{}", pos.fen());
                    0
                }
                Verdict::Unwinnable { .. } => {
                    if pos.has_legal_moves() && pos.can_possibly_mate(a.winner) {
                        self.beyond_material += 1;
                        if self.beyond_example.is_empty() {
                            self.beyond_example = format!("{} for {:?}", pos.fen(), a.winner);
                        }
                    }
                    1
                }
                Verdict::Undetermined => {
                    if std::env::var_os("SHOW_UNDETERMINED").is_some() {
                        eprintln!("undetermined for {:?}: {}", a.winner, pos.fen());
                    }
                    2
                }
            };
            self.verdicts[i] += 1;
        }
        self.dead += u64::from(both.is_dead());
    }

    fn print(&self, name: &str) {
        let mean = self.total.as_secs_f64() / self.positions.max(1) as f64;
        let sides = 2 * self.positions;
        println!(
            "{name}: {} positions, {:.0} positions/s, mean {:.2} µs, worst {:.1} µs ({})",
            self.positions,
            1.0 / mean.max(1e-12),
            mean * 1e6,
            self.worst.as_secs_f64() * 1e6,
            self.worst_fen
        );
        println!(
            "  sides: {} winnable, {} unwinnable, {} undetermined of {sides} ({:.1}% decided); {} dead positions; {} nodes",
            self.verdicts[0],
            self.verdicts[1],
            self.verdicts[2],
            100.0 * (self.verdicts[0] + self.verdicts[1]) as f64 / sides.max(1) as f64,
            self.dead,
            self.nodes
        );
        if self.beyond_material > 0 {
            println!(
                "  {} sides unwinnable that material alone calls winnable, e.g. {}",
                self.beyond_material, self.beyond_example
            );
        }
    }
}

/// Positions of seeded random games (xorshift), the final one of each.
fn random_finals(seed: u64, games: usize) -> Vec<Position> {
    let mut state = seed;
    let mut out = Vec::new();
    for _ in 0..games {
        let mut p = Position::startpos();
        for _ in 0..300 {
            let moves = p.legal_moves();
            if moves.is_empty() || p.halfmoves() >= 100 {
                break;
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            p.play_unchecked(moves[(state % moves.len() as u64) as usize]);
        }
        out.push(p);
    }
    out
}

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/matches");
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
                    .map(|p| p.display().to_string())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        paths = found;
    }
    let mut every = Vec::new();
    let mut finals = Vec::new();
    for path in &paths {
        let Ok(file) = File::open(path) else {
            eprintln!("cannot open {path}");
            continue;
        };
        for game in read_games(BufReader::new(file)).flatten() {
            let mut p = game.start.clone();
            every.push(p.clone());
            for m in game.mainline() {
                p.play_unchecked(m);
                every.push(p.clone());
            }
            finals.push(p);
        }
    }
    println!("{} games, {} positions", finals.len(), every.len());

    let mut quick = Tally::new();
    for p in &every {
        quick.run(p, &WinnableBudget::quick(), 3);
    }
    quick.print("quick, every position of the games");

    let mut full = Tally::new();
    for p in &finals {
        full.run(p, &WinnableBudget::full(), 1);
    }
    full.print("full, final positions of the games");

    let randoms = random_finals(0x5eed_0000_0000_0001, 500);
    let mut quick_random = Tally::new();
    for p in &randoms {
        quick_random.run(p, &WinnableBudget::quick(), 3);
    }
    quick_random.print("quick, final positions of 500 random games");
    let mut full_random = Tally::new();
    for p in &randoms {
        full_random.run(p, &WinnableBudget::full(), 1);
    }
    full_random.print("full, final positions of 500 random games");
}
