//! Evaluations per second of the CPU backend: full refresh, incremental update + evaluate,
//! and the batch interface at batch sizes 1, 64, 1024 and 16384.
//!
//! `cargo bench -p chess-nn --bench nnue` prints one line per measurement. Every timed run
//! checks the sum of its scores against the full-refresh reference, so a fast wrong answer
//! fails. `CHESS_BENCH_ROUNDS` sets the rounds (the best counts; default 5).

use std::hint::black_box;
use std::time::{Duration, Instant};

use chess_nn::{
    Accumulator, BatchEvaluator, CpuBatch, FeatureBatch, MoveDelta, Network, RefreshCache,
};
use chess_rules::{Move, Position};

const POSITIONS: usize = 16_384;

/// xorshift64*, seeded: the same positions every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// Random games from the start position: each game's start and its moves.
fn games() -> Vec<(Position, Vec<Move>)> {
    let mut rng = Rng(0x5EED);
    let mut games = Vec::new();
    let mut total = 0;
    while total < POSITIONS {
        let start = Position::startpos();
        let mut pos = start.clone();
        let mut moves = Vec::new();
        while moves.len() < 120 && total < POSITIONS {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.below(legal.len())];
            pos.play_unchecked(m);
            moves.push(m);
            total += 1;
        }
        games.push((start, moves));
    }
    games
}

fn best_of(rounds: usize, expected: i64, mut f: impl FnMut() -> i64) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let sum = black_box(f());
        let el = t.elapsed();
        assert_eq!(sum, expected, "wrong scores");
        best = best.min(el);
    }
    best
}

fn report(what: &str, evals: usize, d: Duration) {
    let per_sec = evals as f64 / d.as_secs_f64();
    println!(
        "{what:<34} {:>12.0} evals/s  ({:>7.1} ns/eval)",
        per_sec,
        1e9 / per_sec
    );
}

fn main() {
    let rounds = std::env::var("CHESS_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let net = Network::default_network();
    let games = games();
    let positions: Vec<Position> = games
        .iter()
        .flat_map(|(start, moves)| {
            let mut pos = start.clone();
            moves.iter().map(move |&m| {
                pos.play_unchecked(m);
                pos.clone()
            })
        })
        .collect();
    assert_eq!(positions.len(), POSITIONS);
    let expected: i64 = positions.iter().map(|p| i64::from(net.evaluate(p))).sum();
    println!(
        "chess-nn CPU backend, network {} (H = {}), {POSITIONS} positions from random games, best of {rounds}",
        net.file_name(),
        net.hidden()
    );

    let d = best_of(rounds, expected, || {
        positions.iter().map(|p| i64::from(net.evaluate(p))).sum()
    });
    report("full refresh + evaluate", POSITIONS, d);

    // The incremental step over every game: the move's delta, then (with `update`) the
    // accumulators brought up to date, the move made on the board, then (with `evaluate`)
    // the output layer; without it, a cheap sum that keeps the work from being optimised out.
    let walk = |update: bool, evaluate: bool| {
        let mut sum = 0i64;
        let mut acc = Accumulator::new(&net);
        let mut next = acc.clone();
        for (start, moves) in &games {
            let mut pos = start.clone();
            acc.refresh(&net, &pos);
            for &m in moves {
                let delta = MoveDelta::new(&pos, m);
                if update {
                    next.update_from(&net, &acc, &delta);
                    std::mem::swap(&mut acc, &mut next);
                }
                pos.play_unchecked(m);
                sum += if evaluate {
                    i64::from(net.evaluate_accumulator(&acc, pos.turn()))
                } else {
                    i64::from(black_box(&delta).added().len() as u8)
                        + i64::from(acc.perspective(pos.turn())[0])
                };
            }
        }
        sum
    };
    let d = best_of(rounds, expected, || walk(true, true));
    report("incremental update + evaluate", POSITIONS, d);
    println!("  (includes making the move on the board and one refresh per game)");

    // The same with king buckets: the default network's feature weights copied into the
    // four buckets of `00011222/3` (so the scores, and the check, are the same); a move that
    // takes a king into another bucket computes that side's perspective from the board.
    let kb_net = {
        let mut parts = Network::clone(&net).into_parts();
        parts.king_buckets = "00011222/3".parse().expect("a valid map");
        parts.ft_weights = parts.ft_weights.repeat(parts.king_buckets.count());
        Network::from_parts(parts).expect("a valid network")
    };
    let mut crossings = 0;
    let kb_walk = |crossings: &mut usize, cached: bool| {
        let mut sum = 0i64;
        let mut acc = Accumulator::new(&kb_net);
        let mut next = acc.clone();
        let mut cache = RefreshCache::new(&kb_net);
        for (start, moves) in &games {
            let mut pos = start.clone();
            acc.refresh(&kb_net, &pos);
            for &m in moves {
                let delta = MoveDelta::new(&pos, m);
                pos.play_unchecked(m);
                if delta.changes_king_bucket(kb_net.king_buckets()) {
                    *crossings += 1;
                    if cached {
                        cache.update(&kb_net, &mut next, &acc, &delta, &pos);
                    } else {
                        next.update_or_refresh(&kb_net, &acc, &delta, &pos);
                    }
                } else {
                    next.update_from(&kb_net, &acc, &delta);
                }
                std::mem::swap(&mut acc, &mut next);
                sum += i64::from(kb_net.evaluate_accumulator(&acc, pos.turn()));
            }
        }
        sum
    };
    let d = best_of(rounds, expected, || kb_walk(&mut crossings, false));
    report("incremental, 4 king buckets", POSITIONS, d);
    let d = best_of(rounds, expected, || kb_walk(&mut 0, true));
    report("  the same with a refresh cache", POSITIONS, d);
    println!(
        "  ({} of the {POSITIONS} moves take a king into another bucket)",
        crossings / rounds
    );

    // The same loop in its parts, to see where the step's time goes: the board alone (the
    // move made, its delta computed), then with the accumulator update, then the output
    // layer alone on accumulators computed beforehand.
    let board_only = |with_update: bool| walk(with_update, false);
    let parts_expected = board_only(false);
    let d = best_of(rounds, parts_expected, || board_only(false));
    report("  part: board (move, delta)", POSITIONS, d);
    let parts_expected = board_only(true);
    let d = best_of(rounds, parts_expected, || board_only(true));
    report("  part: board + update", POSITIONS, d);
    let accs: Vec<(Accumulator, chess_rules::Color)> = positions
        .iter()
        .map(|p| (Accumulator::from_position(&net, p), p.turn()))
        .collect();
    let d = best_of(rounds, expected, || {
        accs.iter()
            .map(|(a, stm)| i64::from(net.evaluate_accumulator(a, *stm)))
            .sum()
    });
    report("  part: output layer", POSITIONS, d);

    let mut cpu = CpuBatch::new(net.clone());
    let mut feature_time = Duration::ZERO;
    for size in [1usize, 64, 1024, 16_384] {
        let t = Instant::now();
        let batches: Vec<FeatureBatch> = positions
            .chunks(size)
            .map(|chunk| {
                let mut b = FeatureBatch::with_capacity(*net.king_buckets(), size);
                chunk.iter().for_each(|p| b.push_position(p));
                b
            })
            .collect();
        if size == 16_384 {
            feature_time = t.elapsed();
        }
        let mut out = vec![0i32; size];
        let d = best_of(rounds, expected, || {
            let mut sum = 0;
            for b in &batches {
                let out = &mut out[..b.len()];
                cpu.evaluate_batch(b, out).unwrap();
                sum += out.iter().map(|&v| i64::from(v)).sum::<i64>();
            }
            sum
        });
        report(
            &format!("batch of {size:>5} (evaluate_batch)"),
            POSITIONS,
            d,
        );
    }
    report("FeatureBatch::push_position", POSITIONS, feature_time);
}
