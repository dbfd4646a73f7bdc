//! Evaluations per second of the GPU backend at several batch sizes, with the CPU backend
//! measured in the same run on the same positions.
//!
//! ```text
//! cargo bench -p chess-nn-gpu --bench throughput                 # default network
//! cargo bench -p chess-nn-gpu --bench throughput -- --hidden 1024 --seconds 3
//! ```
//!
//! Every timed GPU batch is checked against the CPU scores, so a fast wrong answer fails.
//! On a machine without a GPU wgpu finds Mesa's lavapipe: its figures are labelled software
//! Vulkan and say nothing about a real GPU.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chess_nn::{BatchEvaluator, CpuBatch, FeatureBatch, Network};
use chess_nn_gpu::{GpuBatch, GpuOptions};

const BATCH_SIZES: [usize; 4] = [1, 64, 1024, 16_384];

struct Args {
    /// A random network of this hidden size instead of the default network.
    hidden: Option<usize>,
    /// Time spent on each measurement.
    seconds: f64,
}

fn args() -> Args {
    let mut args = Args {
        hidden: None,
        seconds: 2.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--hidden" => args.hidden = it.next().and_then(|v| v.parse().ok()),
            "--seconds" => args.seconds = it.next().and_then(|v| v.parse().ok()).unwrap_or(2.0),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// Runs `f` (which evaluates `per_call` positions) until `budget` has passed, at least
/// twice; evaluations per second.
fn rate(budget: Duration, per_call: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let start = Instant::now();
    let mut calls = 0u64;
    while calls < 2 || start.elapsed() < budget {
        f();
        calls += 1;
    }
    (calls as f64 * per_call as f64) / start.elapsed().as_secs_f64()
}

fn batches(positions: &[chess_rules::Position], size: usize) -> Vec<FeatureBatch> {
    positions.chunks(size).map(support::batch_of).collect()
}

fn main() {
    let args = args();
    let budget = Duration::from_secs_f64(args.seconds);
    let net: Arc<Network> = match args.hidden {
        Some(h) => support::network(1, h, support::REALISTIC),
        None => Network::default_network(),
    };
    let positions = support::positions(99, 4 * 16_384);
    let mut cpu = CpuBatch::new(Arc::clone(&net));
    let all = support::batch_of(&positions);
    let mut expected = vec![0; all.len()];
    cpu.evaluate_batch(&all, &mut expected).unwrap();

    println!(
        "network: hidden {} ({}), {} positions from random playouts",
        net.hidden(),
        if args.hidden.is_some() {
            "random weights"
        } else {
            "default network"
        },
        positions.len()
    );
    let mut gpu = match GpuBatch::new(&net, &GpuOptions::default()) {
        Ok(gpu) => {
            let a = gpu.adapter();
            println!(
                "adapter: {}\nbackend: {}{}; max batch {}, {} batches in flight",
                a.name,
                a.backend,
                if a.is_software {
                    " (software Vulkan: CPU rasteriser, not a GPU)"
                } else {
                    ""
                },
                gpu.max_batch(),
                gpu.in_flight()
            );
            println!("driver: {} ({})", a.driver, a.device_type);
            Some(gpu)
        }
        Err(e) => {
            println!("adapter: none ({e}); CPU figures only");
            None
        }
    };
    println!(
        "\n{:>6}  {:>14}  {:>18}  {:>14}",
        "batch", "gpu evals/s", "gpu piped evals/s", "cpu evals/s"
    );

    for size in BATCH_SIZES {
        let chunks = batches(&positions, size);
        let mut out = vec![0; size];
        let mut next = 0;
        let cpu_rate = rate(budget, size, || {
            let b = &chunks[next % chunks.len()];
            cpu.evaluate_batch(b, &mut out[..b.len()]).unwrap();
            next += 1;
        });
        let (gpu_rate, piped_rate) = match gpu.as_mut() {
            None => (f64::NAN, f64::NAN),
            Some(gpu) => {
                // One batch at a time: upload, run, read back, then the next.
                let mut next = 0;
                let one = rate(budget, size, || {
                    let i = next % chunks.len();
                    let b = &chunks[i];
                    gpu.evaluate(b, &mut out[..b.len()]).unwrap();
                    assert_eq!(out[..b.len()], expected[i * size..i * size + b.len()]);
                    next += 1;
                });
                // A stream of batches with several in flight.
                let group = chunks.len().clamp(1, 64);
                let mut next = 0;
                let piped = rate(budget, group * size, || {
                    let start = next % (chunks.len() - group + 1);
                    gpu.evaluate_stream(&chunks[start..start + group], |k, scores| {
                        let at = (start + k) * size;
                        assert_eq!(scores, &expected[at..at + scores.len()]);
                    })
                    .unwrap();
                    next += group;
                });
                (one, piped)
            }
        };
        println!("{size:>6}  {gpu_rate:>14.0}  {piped_rate:>18.0}  {cpu_rate:>14.0}");
    }
}
