//! The GPU backend returns exactly the CPU backend's score for every position.
//!
//! Runs on whatever adapter wgpu finds; on machines without a GPU that is Mesa's lavapipe
//! (software Vulkan). Without any adapter the tests print a skip message, unless
//! `CHESS_REQUIRE_GPU=1` (CI) makes them fail.

mod support;

use std::sync::Arc;

use chess_nn::{BatchEvaluator, CpuBatch, FeatureBatch, Network};
use chess_nn_gpu::{GpuError, GpuOptions};
use support::{EXTREME, LARGE, REALISTIC};

const POSITIONS: usize = 100_000;

fn cpu_scores(net: &Arc<Network>, batch: &FeatureBatch) -> Vec<i32> {
    let mut out = vec![0; batch.len()];
    CpuBatch::new(Arc::clone(net))
        .evaluate_batch(batch, &mut out)
        .unwrap();
    out
}

/// Panics naming the first position that differs, and how many do.
fn assert_same(what: &str, gpu: &[i32], cpu: &[i32]) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: score count");
    let differ: Vec<usize> = (0..cpu.len()).filter(|&i| gpu[i] != cpu[i]).collect();
    if let Some(&i) = differ.first() {
        panic!(
            "{what}: {} of {} scores differ; first at position {i}: gpu {} cpu {}",
            differ.len(),
            cpu.len(),
            gpu[i],
            cpu[i]
        );
    }
}

/// How often the i16 accumulators and the i32 output sum wrap for these positions, computed
/// in i64 without wrapping: proves the large-weight tests take the wrapping paths.
fn wrap_counts(net: &Network, batch: &FeatureBatch, sample: usize) -> (usize, usize) {
    let h = net.hidden();
    let (mut acc_wraps, mut sum_wraps) = (0, 0);
    for i in 0..batch.len().min(sample) {
        let mut sum = 0i64;
        let mut wrapped_sum = 0i32;
        for (k, feats) in [batch.stm(i), batch.nstm(i)].into_iter().enumerate() {
            for j in 0..h {
                let exact: i64 = i64::from(net.ft_biases()[j])
                    + feats
                        .iter()
                        .map(|&f| i64::from(net.ft_weights()[usize::from(f) * h + j]))
                        .sum::<i64>();
                if exact != i64::from(exact as i16) {
                    acc_wraps += 1;
                }
                let c = i64::from((exact as i16).clamp(0, net.qa() as i16));
                let term = c * i64::from(net.out_weights()[k * h + j]) * c;
                sum += term;
                wrapped_sum = wrapped_sum.wrapping_add(term as i32);
            }
        }
        if sum != i64::from(wrapped_sum) {
            sum_wraps += 1;
        }
    }
    (acc_wraps, sum_wraps)
}

fn check_many(seed: u64, hidden: usize, ranges: support::Ranges, name: &str) {
    let net = support::network(seed, hidden, ranges);
    let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
        return;
    };
    let positions = support::positions(seed ^ 0x5EED, POSITIONS);
    let batch = support::batch_of(&positions);
    let cpu = cpu_scores(&net, &batch);

    // As a stream of full batches (the pipelined path) ...
    let chunks: Vec<FeatureBatch> = positions
        .chunks(gpu.max_batch())
        .map(support::batch_of)
        .collect();
    let mut streamed = Vec::with_capacity(POSITIONS);
    gpu.evaluate_stream(&chunks, |i, scores| {
        assert_eq!(i * gpu_max(&chunks), streamed.len());
        streamed.extend_from_slice(scores);
    })
    .unwrap();
    assert_same(name, &streamed, &cpu);

    let distinct = {
        let mut s = cpu.clone();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    assert!(distinct > 1000, "{name}: only {distinct} distinct scores");
    eprintln!(
        "{name}: {POSITIONS} positions, GPU == CPU on {} ({distinct} distinct scores)",
        gpu.adapter()
    );
}

/// Size of the stream's chunks (all but the last are full).
fn gpu_max(chunks: &[FeatureBatch]) -> usize {
    chunks[0].len()
}

#[test]
fn realistic_weights_100k_positions() {
    check_many(1, 256, REALISTIC, "realistic weights, H = 256");
}

#[test]
fn large_weights_wrap_like_the_cpu_100k_positions() {
    let net = support::network(2, 64, LARGE);
    let sample = support::batch_of(&support::positions(7, 200));
    let (acc_wraps, sum_wraps) = wrap_counts(&net, &sample, 200);
    assert!(
        acc_wraps > 1000,
        "accumulators wrapped only {acc_wraps} times"
    );
    assert!(sum_wraps > 20, "output sums wrapped only {sum_wraps} times");
    check_many(2, 64, LARGE, "full-range weights, H = 64");
}

#[test]
fn extreme_constants_wrap_like_the_cpu() {
    let net = support::network(3, 64, EXTREME);
    let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
        return;
    };
    let batch = support::batch_of(&support::positions(11, 20_000));
    let (_, sum_wraps) = wrap_counts(&net, &batch, 500);
    assert!(
        sum_wraps > 100,
        "output sums wrapped only {sum_wraps} times"
    );
    let mut out = vec![0; batch.len()];
    gpu.evaluate(&batch, &mut out).unwrap();
    assert_same("qa = qb = scale = 32767", &out, &cpu_scores(&net, &batch));
}

#[test]
fn every_batch_size_including_more_than_the_maximum() {
    let net = support::network(4, 32, REALISTIC);
    let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
        return;
    };
    assert_eq!(gpu.max_batch(), 16_384);
    let max = gpu.max_batch();
    let positions = support::positions(13, 2 * max + 123);
    for size in [0, 1, 7, 64, 1024, max, max + 1, 2 * max + 123] {
        let batch = support::batch_of(&positions[..size]);
        let mut out = vec![0; size];
        gpu.evaluate(&batch, &mut out).unwrap();
        assert_same(&format!("batch of {size}"), &out, &cpu_scores(&net, &batch));
    }
}

/// Output buckets (format version 2): each position takes the weights and bias of its piece
/// count's bucket on the GPU as on the CPU, for every bucket.
#[test]
fn output_buckets_like_the_cpu() {
    let positions = support::positions(21, 6000);
    let mut seen = [false; 16];
    for p in &positions {
        seen[chess_nn::output_bucket(p.occupied().count() as usize, 8)] = true;
    }
    assert!(seen[..8].iter().all(|&s| s), "buckets covered: {seen:?}");
    let batch = support::batch_of(&positions);
    for (seed, hidden, buckets, ranges) in [
        (31, 256, 8, REALISTIC),
        (32, 64, 16, LARGE),
        (33, 32, 3, EXTREME),
    ] {
        let net = support::network_with_buckets(seed, hidden, buckets, ranges);
        let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
            return;
        };
        let mut out = vec![0; batch.len()];
        gpu.evaluate(&batch, &mut out).unwrap();
        assert_same(
            &format!("H = {hidden}, {buckets} buckets"),
            &out,
            &cpu_scores(&net, &batch),
        );
    }
}

/// King buckets (format version 3): each perspective's features come from its king's bucket,
/// indices up to 768 times the bucket count, on the GPU as on the CPU; and a batch made in
/// another layout is refused.
#[test]
fn king_buckets_like_the_cpu() {
    let positions = support::positions(22, 6000);
    for (seed, hidden, buckets, map, ranges) in [
        (41, 256, 8, "00011222/3", REALISTIC),
        (42, 64, 1, "01234567/89abcdef/ghijklmn/opqrstuv/0", LARGE),
        (43, 32, 3, "00001111/2", EXTREME),
    ] {
        let layout: chess_nn::KingBuckets = map.parse().unwrap();
        let net = support::network_with_layout(seed, hidden, buckets, layout, ranges);
        let batch = support::batch_in(layout, &positions);
        let highest = batch.features().iter().max().copied().unwrap_or(0);
        assert!(
            usize::from(highest) >= 768 * (layout.count() - 1),
            "the last bucket is used ({highest})"
        );
        let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
            return;
        };
        let mut out = vec![0; batch.len()];
        gpu.evaluate(&batch, &mut out).unwrap();
        assert_same(
            &format!("H = {hidden}, {buckets} buckets, king buckets {map}"),
            &out,
            &cpu_scores(&net, &batch),
        );
        let plain = support::batch_of(&positions[..3]);
        let err = gpu.evaluate_batch(&plain, &mut [0; 3]).unwrap_err();
        assert!(
            matches!(err, chess_nn::BackendError::Layout { .. }),
            "{err:?}"
        );
        assert!(matches!(gpu.submit(&plain), Err(GpuError::InvalidBatch(_))));
    }
}

#[test]
fn hidden_sizes_from_16_to_1024() {
    for (seed, hidden) in [(5, 16), (6, 48), (7, 1024)] {
        let net = support::network(seed, hidden, LARGE);
        let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
            return;
        };
        let batch = support::batch_of(&support::positions(seed, 3000));
        let mut out = vec![0; batch.len()];
        gpu.evaluate(&batch, &mut out).unwrap();
        assert_same(&format!("H = {hidden}"), &out, &cpu_scores(&net, &batch));
    }
}

/// Small chunks and a short ring: chunks of one batch spread over every slot, the ring wraps
/// many times, and submit/receive interleave with streams.
#[test]
fn pipelining_keeps_order() {
    let net = support::network(8, 32, REALISTIC);
    let options = GpuOptions {
        max_batch: 100,
        in_flight: 2,
        ..GpuOptions::default()
    };
    let Some(mut gpu) = support::gpu(&net, &options) else {
        return;
    };
    let positions = support::positions(17, 5000);
    let sizes = [0, 1, 100, 101, 250, 0, 3, 999, 46];
    let mut batches = Vec::new();
    let mut at = 0;
    for size in sizes {
        batches.push(support::batch_of(&positions[at..at + size]));
        at += size;
    }

    let mut seen = Vec::new();
    gpu.evaluate_stream(&batches, |i, scores| {
        assert_same(
            &format!("stream batch {i}"),
            scores,
            &cpu_scores(&net, &batches[i]),
        );
        seen.push(i);
    })
    .unwrap();
    assert_eq!(seen, (0..sizes.len()).collect::<Vec<_>>());

    // submit/receive: more submissions than slots, results in order; a stream in between
    // leaves the earlier submissions' results for receive.
    let small: Vec<&FeatureBatch> = batches.iter().filter(|b| b.len() <= 100).collect();
    let mut tickets = Vec::new();
    for b in &small {
        tickets.push(gpu.submit(b).unwrap());
    }
    gpu.evaluate_stream(&batches[2..3], |_, scores| {
        assert_same(
            "stream between submissions",
            scores,
            &cpu_scores(&net, &batches[2]),
        );
    })
    .unwrap();
    assert_eq!(gpu.outstanding(), small.len());
    for (b, ticket) in small.iter().zip(tickets) {
        let mut out = Vec::new();
        assert_eq!(gpu.receive(&mut out).unwrap(), Some(ticket));
        assert_same("submit/receive", &out, &cpu_scores(&net, b));
    }
    assert_eq!(gpu.receive(&mut Vec::new()).unwrap(), None);

    let too_big = support::batch_of(&positions[..101]);
    assert!(matches!(
        gpu.submit(&too_big),
        Err(GpuError::InvalidBatch(_))
    ));
}

#[test]
fn the_trait_checks_the_output_length() {
    let net = support::network(9, 16, REALISTIC);
    let Some(mut gpu) = support::gpu(&net, &GpuOptions::default()) else {
        return;
    };
    let batch = support::batch_of(&support::positions(1, 3));
    let err = gpu.evaluate_batch(&batch, &mut [0; 2]).unwrap_err();
    assert_eq!(
        err,
        chess_nn::BackendError::OutputLength {
            expected: 3,
            found: 2
        }
    );
    let mut out = [0; 3];
    gpu.evaluate_batch(&batch, &mut out).unwrap();
    assert_same("trait", &out, &cpu_scores(&net, &batch));
    assert!(gpu.name().starts_with("wgpu: "), "{}", gpu.name());
}

#[test]
fn default_network_through_gpu_or_cpu() {
    let net = Network::default_network();
    let mut eval = chess_nn_gpu::gpu_or_cpu(Arc::clone(&net), &GpuOptions::default());
    if std::env::var("CHESS_REQUIRE_GPU").as_deref() == Ok("1") {
        assert!(
            eval.name().starts_with("wgpu: "),
            "CHESS_REQUIRE_GPU=1 but gpu_or_cpu fell back to {}",
            eval.name()
        );
    }
    let positions = support::positions(21, 2000);
    let batch = support::batch_of(&positions);
    let mut out = vec![0; batch.len()];
    eval.evaluate_batch(&batch, &mut out).unwrap();
    for (pos, &score) in positions.iter().zip(&out) {
        assert_eq!(score, net.evaluate(pos), "{}", eval.name());
    }
}

#[test]
fn no_adapter_is_a_typed_error_and_the_cpu_takes_over() {
    let net = support::network(10, 16, REALISTIC);
    let nowhere = GpuOptions {
        backends: chess_nn_gpu::Backends::empty(),
        ..GpuOptions::default()
    };
    let err = chess_nn_gpu::GpuBatch::new(&net, &nowhere).unwrap_err();
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
    assert!(err.to_string().starts_with("no GPU adapter found"), "{err}");

    let mut eval = chess_nn_gpu::gpu_or_cpu(Arc::clone(&net), &nowhere);
    assert_eq!(eval.name(), "cpu");
    let batch = support::batch_of(&support::positions(3, 50));
    let mut out = vec![0; batch.len()];
    eval.evaluate_batch(&batch, &mut out).unwrap();
    assert_same("fallback", &out, &cpu_scores(&net, &batch));
}
