//! The batched search gives the same best move, score, PV and node count whether its leaves
//! are evaluated by the incremental CPU evaluator, in CPU batches, or in GPU batches, for
//! networks with and without king buckets.
//!
//! Skips (or fails under `CHESS_REQUIRE_GPU=1`) like the other GPU tests.

mod support;

use std::sync::Arc;

use chess_nn::{BatchEvaluator, CpuBatch, Network};
use chess_nn_gpu::GpuOptions;
use chess_rules::Position;
use chess_search::batched::{self, Scheduler};
use chess_search::{Engine, EngineOptions, NnueEval, SearchLimits, SearchResult};

fn batched(
    net: &Arc<Network>,
    backend: Box<dyn BatchEvaluator + Send>,
    positions: &[Position],
    limits: &SearchLimits,
) -> (Vec<SearchResult>, u64) {
    let mut s = Scheduler::new(net.clone(), backend, 1024);
    let r = batched::search_all(&mut s, &EngineOptions::default(), positions, limits);
    (r, s.stats().largest)
}

#[test]
fn search_is_the_same_on_cpu_incremental_cpu_batches_and_gpu_batches() {
    for net in [
        Network::default_network(),
        support::network(7, 256, support::REALISTIC),
        // King buckets: most king moves change bucket, and the batches must follow.
        support::network_with_layout(
            8,
            128,
            8,
            "00112233/00112233/44556677/44556677/8899aabb/8899aabb/ccddeeff/ccddeeff"
                .parse()
                .unwrap(),
            support::REALISTIC,
        ),
    ] {
        let Some(gpu) = support::gpu(&net, &GpuOptions::default()) else {
            return;
        };
        let positions: Vec<Position> = support::positions(11, 800)
            .into_iter()
            .step_by(100)
            .filter(|p| !p.legal_moves().is_empty())
            .collect();
        assert!(positions.len() >= 6);
        let limits = SearchLimits::depth(6);
        let (on_gpu, largest) = batched(&net, Box::new(gpu), &positions, &limits);
        let (on_cpu, _) = batched(
            &net,
            Box::new(CpuBatch::new(net.clone())),
            &positions,
            &limits,
        );
        assert!(
            largest >= 4,
            "the GPU batches held several searches' leaves"
        );
        for (i, pos) in positions.iter().enumerate() {
            let n = net.clone();
            let mut engine = Engine::with_evaluator(EngineOptions::default(), move || {
                Box::new(NnueEval::new(n.clone()))
            });
            let incremental = engine.search(pos, &[], limits.clone());
            assert!(incremental.lines[0].nodes > 100, "{}", pos.fen());
            assert_eq!(
                on_cpu[i].fingerprint(),
                incremental.fingerprint(),
                "cpu batches: {}",
                pos.fen()
            );
            assert_eq!(
                on_gpu[i].fingerprint(),
                incremental.fingerprint(),
                "gpu batches: {}",
                pos.fen()
            );
        }
    }
}
