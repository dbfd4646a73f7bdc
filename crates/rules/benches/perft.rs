//! Perft speed next to cozy-chess and shakmaty, measured in the same run.
//!
//! `cargo bench -p chess-rules --bench perft` prints nodes per second for each generator and
//! our ratio to the peer. Every timed run asserts its node count, so a fast wrong answer fails.
//! Set `CHESS_BENCH_ROUNDS` to change the number of rounds (best round counts).

use std::hint::black_box;
use std::time::{Duration, Instant};

use chess_rules::{Position, perft, perft_make_all};
use shakmaty::Position as _;

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn cozy_perft(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    if depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut next = board.clone();
                next.play_unchecked(mv);
                nodes += cozy_perft(&next, depth - 1);
            }
            false
        });
    }
    nodes
}

fn shakmaty_make_all(pos: &shakmaty::Chess, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    for m in pos.legal_moves() {
        let mut next = pos.clone();
        next.play_unchecked(m);
        nodes += shakmaty_make_all(&next, depth - 1);
    }
    nodes
}

fn best_of(rounds: usize, expected: u64, mut f: impl FnMut() -> u64) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let n = black_box(f());
        let el = t.elapsed();
        assert_eq!(n, expected, "wrong node count");
        best = best.min(el);
    }
    best
}

fn mnps(nodes: u64, d: Duration) -> f64 {
    nodes as f64 / d.as_secs_f64() / 1e6
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that run tiny.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds: usize = std::env::var("CHESS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 1 } else { 5 });
    let cases: &[(&str, &str, u32, u64, u32, u64)] = if quick {
        &[
            ("startpos", STARTPOS, 4, 197_281, 3, 8_902),
            ("kiwipete", KIWIPETE, 3, 97_862, 2, 2_039),
        ]
    } else {
        &[
            ("startpos", STARTPOS, 6, 119_060_324, 5, 4_865_609),
            ("kiwipete", KIWIPETE, 5, 193_690_690, 4, 4_085_603),
        ]
    };

    println!("perft, best of {rounds} rounds, million nodes per second (Mnps)");
    println!(
        "{:<10} {:>6} {:>14} {:>12} {:>12} {:>7}",
        "position", "depth", "nodes", "ours", "peer", "ratio"
    );
    for &(name, fen, depth, nodes, make_depth, make_nodes) in cases {
        let ours = Position::from_fen(fen).unwrap();
        let cozy: cozy_chess::Board = fen.parse().unwrap();
        let shak: shakmaty::Chess = fen
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();

        // Interleave ours and the peer's so that machine noise hits both alike.
        let mut t_ours = Duration::MAX;
        let mut t_cozy = Duration::MAX;
        for _ in 0..rounds {
            t_ours = t_ours.min(best_of(1, nodes, || perft(&ours, depth)));
            t_cozy = t_cozy.min(best_of(1, nodes, || cozy_perft(&cozy, depth)));
        }
        let (a, b) = (mnps(nodes, t_ours), mnps(nodes, t_cozy));
        println!(
            "{name:<10} {depth:>6} {nodes:>14} {a:>12.1} {b:>12.1} {:>6.2}x  bulk-counting vs cozy-chess",
            a / b
        );

        let mut t_ours = Duration::MAX;
        let mut t_shak = Duration::MAX;
        for _ in 0..rounds {
            t_ours = t_ours.min(best_of(1, make_nodes, || perft_make_all(&ours, make_depth)));
            t_shak = t_shak.min(best_of(1, make_nodes, || {
                shakmaty_make_all(&shak, make_depth)
            }));
        }
        let (a, b) = (mnps(make_nodes, t_ours), mnps(make_nodes, t_shak));
        println!(
            "{name:<10} {make_depth:>6} {make_nodes:>14} {a:>12.1} {b:>12.1} {:>6.2}x  make-every-move vs shakmaty",
            a / b
        );
    }

    notation_rates(quick);
}

/// SAN writing and reading rates over every legal move of positions along a fixed game tree.
fn notation_rates(quick: bool) {
    let mut positions = Vec::new();
    let mut frontier = vec![Position::startpos(), Position::from_fen(KIWIPETE).unwrap()];
    // A deterministic walk: breadth-first two plies from each seed, then a long line.
    while positions.len() < if quick { 200 } else { 2_000 } {
        let Some(pos) = frontier.pop() else { break };
        for (i, m) in pos.legal_moves().iter().enumerate() {
            let mut next = pos.clone();
            next.play_unchecked(*m);
            if i % 3 == 0 && next.has_legal_moves() {
                frontier.insert(0, next.clone());
            }
        }
        positions.push(pos);
    }
    let pairs: Vec<(Position, chess_rules::Move, String)> = positions
        .iter()
        .flat_map(|p| {
            p.legal_moves()
                .into_iter()
                .map(move |m| (p.clone(), m, p.san(m)))
        })
        .collect();
    let n = pairs.len() as f64;
    let rounds = if quick { 1 } else { 5 };
    let mut best_w = Duration::MAX;
    let mut best_r = Duration::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut len = 0;
        for (p, m, _) in &pairs {
            len += black_box(p.san(*m)).len();
        }
        black_box(len);
        best_w = best_w.min(t.elapsed());
        let t = Instant::now();
        for (p, m, san) in &pairs {
            assert_eq!(p.parse_san(san).unwrap(), *m);
        }
        best_r = best_r.min(t.elapsed());
    }
    println!(
        "SAN over {} moves: write {:.2} M moves/s, read {:.2} M moves/s",
        pairs.len(),
        n / best_w.as_secs_f64() / 1e6,
        n / best_r.as_secs_f64() / 1e6
    );
}
