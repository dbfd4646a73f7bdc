//! Incremental accumulators and the batch interface against full refreshes, over random games.

mod common;

use std::sync::Arc;

use chess_nn::{
    Accumulator, BackendError, BatchEvaluator, CpuBatch, FeatureBatch, MoveDelta, Network,
    RefreshCache,
};
use chess_rules::{Move, Position};
use common::{Rng, START_FENS, busy_king_buckets, playout, random_bucketed, random_network};

fn networks() -> Vec<(&'static str, Network)> {
    vec![
        ("default", (*Network::default_network()).clone()),
        // Full-range weights: sums wrap, the output takes the i32 path.
        (
            "random wide",
            random_network(7, (64, 1), 32_767, 32_767, (255, 64, 400)),
        ),
        // Small weights, other quantisation constants from the header.
        (
            "random small",
            random_network(8, (32, 1), 40, 100, (127, 32, 600)),
        ),
        // Output buckets (format version 2): the piece count must follow every capture.
        (
            "random bucketed",
            random_network(9, (48, 8), 200, 100, (255, 64, 400)),
        ),
        // King buckets (format version 3): a king leaving its bucket refreshes its side.
        (
            "random king-bucketed",
            random_bucketed(10, (32, 8), busy_king_buckets(), 200, 100, (255, 64, 400)),
        ),
        (
            "random king-bucketed, two buckets",
            random_bucketed(
                11,
                (16, 1),
                "00000000/1".parse().unwrap(),
                32_767,
                32_767,
                (255, 64, 400),
            ),
        ),
    ]
}

#[test]
fn incremental_updates_equal_a_refresh_after_every_move() {
    let mut rng = Rng::new(2024);
    let (mut castles, mut en_passants, mut promotions, mut captures) = (0, 0, 0, 0);
    let mut crossings = 0;
    for (name, net) in networks() {
        // One cache for all the network's games: its buckets hold boards of other games.
        let mut cache = RefreshCache::new(&net);
        for fen in START_FENS {
            let start = Position::from_fen(fen).unwrap();
            for _ in 0..4 {
                let game = playout(&mut rng, &start, 160);
                let mut inplace = Accumulator::from_position(&net, &start);
                let mut stacked = inplace.clone();
                let mut next = inplace.clone();
                let mut cached = inplace.clone();
                let mut cached_next = inplace.clone();
                for (before, m) in &game {
                    let after = before.play(*m).unwrap();
                    castles += usize::from(m.is_castle());
                    en_passants += usize::from(m.is_en_passant());
                    promotions += usize::from(m.promotion().is_some());
                    captures += usize::from(before.color_at(m.to()).is_some());

                    inplace.play(&net, before, *m);
                    let delta = MoveDelta::new(before, *m);
                    if delta.changes_king_bucket(net.king_buckets()) {
                        // What the search does: the mover's perspective from the board.
                        crossings += 1;
                        next.update_or_refresh(&net, &stacked, &delta, &after);
                        cache.update(&net, &mut cached_next, &cached, &delta, &after);
                    } else {
                        next.update_from(&net, &stacked, &delta);
                        cached_next.update_from(&net, &cached, &delta);
                    }
                    std::mem::swap(&mut stacked, &mut next);
                    std::mem::swap(&mut cached, &mut cached_next);

                    let fresh = Accumulator::from_position(&net, &after);
                    assert_eq!(inplace, fresh, "{name}: {} then {m}", before.fen());
                    assert_eq!(stacked, fresh, "{name}: {} then {m}", before.fen());
                    assert_eq!(cached, fresh, "{name}: {} then {m}", before.fen());
                    assert_eq!(
                        net.evaluate_accumulator(&inplace, after.turn()),
                        net.evaluate(&after),
                        "{name}: {}",
                        after.fen()
                    );
                }
            }
        }
    }
    assert!(
        castles > 10 && en_passants > 10 && promotions > 10 && captures > 100 && crossings > 100,
        "coverage: {castles} castles, {en_passants} en passant, {promotions} promotions, {captures} captures, {crossings} king-bucket changes"
    );
}

#[test]
fn null_move_changes_nothing_but_the_side_to_move() {
    let net = Network::default_network();
    let pos = Position::from_fen(START_FENS[1]).unwrap();
    let mut acc = Accumulator::from_position(&net, &pos);
    acc.play(&net, &pos, Move::NULL);
    let passed = pos.null_move().unwrap();
    assert_eq!(acc, Accumulator::from_position(&net, &passed));
    assert_eq!(
        net.evaluate_accumulator(&acc, passed.turn()),
        net.evaluate(&passed)
    );
}

#[test]
fn batches_equal_single_evaluations() {
    let mut rng = Rng::new(99);
    let mut positions = Vec::new();
    for fen in START_FENS {
        let start = Position::from_fen(fen).unwrap();
        positions.push(start.clone());
        for (before, m) in playout(&mut rng, &start, 60) {
            positions.push(before.play(m).unwrap());
        }
    }
    for (name, net) in networks() {
        let net = Arc::new(net);
        let mut cpu = CpuBatch::new(net.clone());
        assert_eq!(cpu.name(), "cpu");
        let expected: Vec<i32> = positions.iter().map(|p| net.evaluate(p)).collect();
        for size in [1, 7, 64, positions.len()] {
            for chunk in positions.chunks(size).zip(expected.chunks(size)) {
                let mut batch = FeatureBatch::with_capacity(*net.king_buckets(), size);
                for p in chunk.0 {
                    batch.push_position(p);
                }
                let mut out = vec![0; batch.len()];
                cpu.evaluate_batch(&batch, &mut out).unwrap();
                assert_eq!(out, chunk.1, "{name}, batches of {size}");
            }
        }
        // The same through feature lists given by hand, and after a clear.
        let mut batch = FeatureBatch::for_network(&net);
        batch.push_position(&positions[0]);
        batch.clear();
        let layout = net.king_buckets();
        for p in &positions[..10] {
            let stm = layout.active_features(p, p.turn());
            let nstm = layout.active_features(p, !p.turn());
            batch.push_features(&stm, &nstm).unwrap();
        }
        let mut out = vec![0; 10];
        cpu.evaluate_batch(&batch, &mut out).unwrap();
        assert_eq!(out, expected[..10], "{name}");
    }
}

#[test]
fn batch_output_must_fit() {
    let mut cpu = CpuBatch::new(Network::default_network());
    let mut batch = FeatureBatch::new();
    cpu.evaluate_batch(&batch, &mut []).unwrap();
    batch.push_position(&Position::startpos());
    let err = cpu.evaluate_batch(&batch, &mut [0; 2]).unwrap_err();
    assert_eq!(
        err,
        BackendError::OutputLength {
            expected: 1,
            found: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "output holds 2 scores for a batch of 1 positions"
    );
}

/// A batch made for one input layout is refused by a network of another, never read out of
/// range or in the wrong buckets.
#[test]
fn a_batch_in_another_layout_is_refused() {
    let bucketed = Arc::new(random_bucketed(
        3,
        (16, 1),
        busy_king_buckets(),
        100,
        100,
        (255, 64, 400),
    ));
    let mut plain_batch = FeatureBatch::new();
    plain_batch.push_position(&Position::startpos());
    let err = CpuBatch::new(bucketed.clone())
        .evaluate_batch(&plain_batch, &mut [0])
        .unwrap_err();
    assert!(matches!(err, BackendError::Layout { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("the batch's king buckets 00000000/"),
        "{err}"
    );

    let mut kb_batch = FeatureBatch::for_network(&bucketed);
    kb_batch.push_position(&Position::startpos());
    let err = CpuBatch::new(Network::default_network())
        .evaluate_batch(&kb_batch, &mut [0])
        .unwrap_err();
    assert!(matches!(err, BackendError::Layout { .. }), "{err:?}");

    // Indices beyond the layout's inputs are refused when the lists are pushed.
    assert!(kb_batch.push_features(&[768 * 16], &[]).is_err());
    assert!(kb_batch.push_features(&[768 * 16 - 1], &[0]).is_ok());
    assert!(plain_batch.push_features(&[768], &[]).is_err());
    let mut out = [0; 2];
    CpuBatch::new(bucketed)
        .evaluate_batch(&kb_batch, &mut out)
        .unwrap();
}

#[test]
fn fast_and_general_output_paths_agree() {
    let mut rng = Rng::new(5);
    for (name, net) in networks() {
        let wide = net.clone().with_wide_output();
        for fen in START_FENS {
            let start = Position::from_fen(fen).unwrap();
            for (before, _) in playout(&mut rng, &start, 40) {
                assert_eq!(net.evaluate(&before), wide.evaluate(&before), "{name}");
            }
        }
    }
}

/// Every instruction set this CPU has gives the same accumulators and scores as the portable
/// kernels, move after move, for each kind of network.
#[test]
fn every_simd_path_evaluates_bit_for_bit_alike() {
    use chess_nn::Simd;
    let mut rng = Rng::new(77);
    let mut compared = 0;
    for (name, net) in networks() {
        let portable = net.clone().with_simd(Simd::Portable).unwrap();
        for simd in Simd::available() {
            let fast = net.clone().with_simd(simd).unwrap();
            assert_eq!(fast.simd(), simd);
            for fen in START_FENS {
                let start = Position::from_fen(fen).unwrap();
                let game = playout(&mut rng, &start, 80);
                let mut a = Accumulator::from_position(&fast, &start);
                let mut b = Accumulator::from_position(&portable, &start);
                for (before, m) in &game {
                    let after = before.play(*m).unwrap();
                    let mut next = a.clone();
                    let delta = MoveDelta::new(before, *m);
                    if delta.changes_king_bucket(fast.king_buckets()) {
                        next.refresh(&fast, &after);
                    } else {
                        next.update_from(&fast, &a, &delta);
                    }
                    a = next;
                    b.play(&portable, before, *m);
                    assert_eq!(a, b, "{name} {simd}: {} then {m}", before.fen());
                    assert_eq!(
                        fast.evaluate_accumulator(&a, after.turn()),
                        portable.evaluate_accumulator(&b, after.turn()),
                        "{name} {simd}: {}",
                        after.fen()
                    );
                    assert_eq!(fast.evaluate(&after), portable.evaluate(&after));
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 0);
}

#[test]
fn a_simd_path_the_cpu_lacks_is_refused() {
    use chess_nn::Simd;
    for simd in Simd::ALL {
        let r = Network::default_network().as_ref().clone().with_simd(simd);
        assert_eq!(r.is_ok(), simd.is_available(), "{simd}");
        if let Err(e) = r {
            assert!(e.to_string().contains("cannot run"), "{e}");
        }
    }
}
