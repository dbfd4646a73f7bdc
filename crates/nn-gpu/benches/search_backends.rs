//! Evaluations and nodes per second of whole searches with each evaluation path, in one run:
//!
//! - `incremental`: one search at a time, [`NnueEval`] updating accumulators in make/unmake;
//! - `cpu batched`: N searches at once as tasks of a [`Scheduler`], leaves batched for
//!   [`CpuBatch`];
//! - `gpu batched`: the same with [`GpuBatch`] (skipped without an adapter).
//!
//! N is 1, 8 and 64 concurrent searches, each a fixed-depth search of a different position,
//! so every mode does the same searches (same node counts: the bench checks). The figures are
//! wall-clock rates of the whole set.
//!
//! ```text
//! cargo bench -p chess-nn-gpu --bench search_backends                  # depth 7
//! cargo bench -p chess-nn-gpu --bench search_backends -- --depth 8 --net net.nnue
//! ```
//!
//! On a machine without a GPU wgpu finds Mesa's lavapipe: those figures are labelled software
//! Vulkan and say nothing about a real GPU.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use chess_nn::{BatchEvaluator, CpuBatch, Network};
use chess_nn_gpu::{GpuBatch, GpuOptions};
use chess_rules::Position;
use chess_search::batched::{self, Scheduler};
use chess_search::{Engine, EngineOptions, NnueEval, NnueStats, SearchLimits, SearchResult};

const CONCURRENCY: [usize; 3] = [1, 8, 64];

/// `--depth D` (default 7) and `--net FILE` (default: the embedded network).
fn args() -> (u32, Arc<Network>) {
    let (mut depth, mut net) = (7, Network::default_network());
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--depth" => depth = it.next().and_then(|v| v.parse().ok()).unwrap_or(7),
            "--net" => {
                let path = it.next().unwrap_or_default();
                net = Arc::new(
                    Network::load(&path).unwrap_or_else(|e| panic!("--net {path:?}: {e}")),
                );
            }
            _ => {} // cargo bench passes --bench
        }
    }
    (depth, net)
}

struct Run {
    seconds: f64,
    nodes: u64,
    evals: u64,
    batches: u64,
}

fn total_nodes(results: &[SearchResult]) -> u64 {
    results
        .iter()
        .map(|r| r.lines.first().map_or(0, |l| l.nodes))
        .sum()
}

fn incremental(
    net: &Arc<Network>,
    positions: &[Position],
    limits: &SearchLimits,
) -> (Run, Vec<SearchResult>) {
    let stats = Arc::new(NnueStats::default());
    let (n, s) = (net.clone(), stats.clone());
    let mut engine = Engine::with_evaluator(EngineOptions::default(), move || {
        Box::new(NnueEval::new(n.clone()).with_stats(s.clone()))
    });
    let start = Instant::now();
    let results: Vec<SearchResult> = positions
        .iter()
        .map(|p| {
            engine.new_game();
            engine.search(p, &[], limits.clone())
        })
        .collect();
    let run = Run {
        seconds: start.elapsed().as_secs_f64(),
        nodes: total_nodes(&results),
        evals: stats.incremental.load(Relaxed) + stats.refreshed.load(Relaxed),
        batches: 0,
    };
    (run, results)
}

fn batched_run(
    net: &Arc<Network>,
    backend: Box<dyn BatchEvaluator + Send>,
    positions: &[Position],
    limits: &SearchLimits,
) -> (Run, Vec<SearchResult>) {
    let mut s = Scheduler::new(net.clone(), backend, 16_384);
    let start = Instant::now();
    let results = batched::search_all(&mut s, &EngineOptions::default(), positions, limits);
    let stats = s.stats();
    let run = Run {
        seconds: start.elapsed().as_secs_f64(),
        nodes: total_nodes(&results),
        evals: stats.leaves,
        batches: stats.batches,
    };
    (run, results)
}

fn main() {
    let (depth, net) = args();
    let limits = SearchLimits::depth(depth);
    let pool: Vec<Position> = support::positions(3, 64 * 40)
        .into_iter()
        .step_by(40)
        .filter(|p| !p.legal_moves().is_empty())
        .collect();
    let gpu = GpuBatch::new(&net, &GpuOptions::default());
    let gpu_label = match &gpu {
        Ok(g) => {
            let a = g.adapter();
            let software = if a.is_software {
                " (SOFTWARE Vulkan: not a GPU figure)"
            } else {
                ""
            };
            format!("{a}{software}")
        }
        Err(e) => format!("none ({e})"),
    };
    let mut gpu = gpu.ok();
    println!("network: {} (hidden {})", net.file_name(), net.hidden());
    println!("depth: {depth}; positions from seeded random playouts");
    println!("gpu adapter: {gpu_label}");
    println!(
        "{:>10} {:>14} {:>12} {:>12} {:>12} {:>10}",
        "searches", "mode", "seconds", "evals/s", "nodes/s", "mean batch"
    );
    for n in CONCURRENCY {
        let positions = &pool[..n.min(pool.len())];
        let (inc, want) = incremental(&net, positions, &limits);
        let mut rows = vec![("incremental", inc)];
        let (cpu, got) = batched_run(
            &net,
            Box::new(CpuBatch::new(net.clone())),
            positions,
            &limits,
        );
        check(&want, &got, "cpu batched");
        rows.push(("cpu batched", cpu));
        if let Some(g) = gpu.take() {
            // The scheduler takes the backend; rebuild it for the next round.
            let (run, got) = batched_run(&net, Box::new(g), positions, &limits);
            check(&want, &got, "gpu batched");
            rows.push(("gpu batched", run));
            gpu = GpuBatch::new(&net, &GpuOptions::default()).ok();
        }
        for (mode, r) in rows {
            let mean = if r.batches > 0 {
                format!("{:.1}", r.evals as f64 / r.batches as f64)
            } else {
                "-".to_owned()
            };
            println!(
                "{:>10} {:>14} {:>12.3} {:>12.0} {:>12.0} {:>10}",
                positions.len(),
                mode,
                r.seconds,
                r.evals as f64 / r.seconds,
                r.nodes as f64 / r.seconds,
                mean
            );
        }
    }
}

/// The batched searches found exactly what the incremental ones found.
fn check(want: &[SearchResult], got: &[SearchResult], what: &str) {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(
            w.fingerprint(),
            g.fingerprint(),
            "{what}: search {i} differs"
        );
    }
}
