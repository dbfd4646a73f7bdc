//! Batched evaluation of the network on the GPU through wgpu compute shaders.
//!
//! [`GpuBatch`] implements chess-nn's [`chess_nn::BatchEvaluator`]: it scores batches of
//! positions (their active features from both perspectives, a [`chess_nn::FeatureBatch`])
//! and returns for every position exactly the score of the CPU backend
//! ([`chess_nn::CpuBatch`]). [`gpu_or_cpu`] picks the GPU when an adapter can run the shader
//! and falls back to the CPU otherwise, with one warning in the log.
//!
//! # Shader
//!
//! `src/shaders/evaluate.wgsl`, integer only (i32/u32, no extensions). One workgroup of
//! [`WORKGROUP_SIZE`] invocations per position:
//!
//! 1. the invocations copy the position's active features (at most 32 per perspective) into
//!    workgroup memory; the indices are the CPU's, already in the perspective's king bucket
//!    for a network with king buckets (the shader only bounds them by the network's `768 K`
//!    inputs, and the batch must be in the network's layout);
//! 2. each invocation takes a share of the neuron pairs: the i16 weights are packed two per
//!    u32 (neuron 2k in the low half of word k of a feature row), so one coalesced load feeds
//!    two neurons. It sums bias and rows exactly in i32, wraps to i16 (the CPU's wrapping i16
//!    additions give the same, wrapping addition being associative), clamps to `0..=QA` and
//!    accumulates `(c * w) * c` with i32 wrapping, for both perspectives;
//! 3. a tree reduction in workgroup memory adds the partial sums (wrapping, so in any order)
//!    and invocation 0 writes `(sum / QA + out_bias) * M / D`, with truncating division as
//!    in Rust, where `M / D` is `SCALE / (QA * QB)` reduced (`Network::output_ratio`). QA,
//!    M, D and the bucket count come from the network, in a uniform; the output weights and bias are those of the position's output bucket
//!    (`chess_nn::output_bucket` of its piece count, the length of its side-to-move feature
//!    list; one bucket in a version-1 network).
//!
//! # Buffers and pipelining
//!
//! Device, pipeline and the weight buffers (feature transformer; biases and output weights)
//! are created once in [`GpuBatch::new`]. A ring of [`GpuOptions::in_flight`] buffer sets
//! (input, params, scores, staging), each sized for [`GpuOptions::max_batch`] positions
//! (16384 by default), is reused: the batch's u16 feature indices are uploaded as they are,
//! with the per-position bounds rebased in front of them. While one batch runs the next is
//! uploaded and the previous one read back. Three ways in:
//!
//! - [`GpuBatch::evaluate`] (and the trait's `evaluate_batch`): one batch of any size; more
//!   than `max_batch` positions are split and the chunks pipelined;
//! - [`GpuBatch::evaluate_stream`]: a sequence of batches, results handed to a closure in
//!   order;
//! - [`GpuBatch::submit`] / [`GpuBatch::receive`]: the caller interleaves its own work.
//!
//! The adapter's limits (storage binding and buffer size, workgroup size and memory,
//! dispatch size, storage buffers per stage) and compute support are checked before the
//! device is opened; a missing or unsuitable adapter is a [`GpuError::NoAdapter`] or
//! [`GpuError::Unsupported`] naming what is missing.
//!
//! # Tests and bench
//!
//! `tests/gpu_matches_cpu.rs` holds the GPU to the CPU on 100,000 positions from random
//! playouts per network, with realistic and with full-range weights (i16 accumulator and
//! i32 output wrapping), batch sizes from 1 to beyond the maximum and hidden sizes 16 to
//! 1024. Without a GPU they run on Mesa's lavapipe (Debian `mesa-vulkan-drivers`); without
//! any adapter they print a skip message, or fail when `CHESS_REQUIRE_GPU=1` (as in CI).
//! `cargo bench -p chess-nn-gpu --bench throughput` (or `crates/nn-gpu/bench-gpu.sh`, which
//! writes a report file) measures evaluations per second of both backends.
//!
//! ```no_run
//! use chess_nn::{FeatureBatch, Network};
//! use chess_nn_gpu::{GpuBatch, GpuOptions};
//! use chess_rules::Position;
//!
//! let net = Network::default_network();
//! let mut gpu = GpuBatch::new(&net, &GpuOptions::default())?;
//! println!("running on {}", gpu.adapter());
//! let mut batch = FeatureBatch::new();
//! batch.push_position(&Position::startpos());
//! let mut scores = vec![0; batch.len()];
//! gpu.evaluate(&batch, &mut scores)?;
//! assert_eq!(scores[0], net.evaluate(&Position::startpos()));
//! # Ok::<(), chess_nn_gpu::GpuError>(())
//! ```

#![forbid(unsafe_code)]

mod device;
mod error;
mod evaluator;
mod fallback;

pub use device::AdapterSummary;
pub use error::GpuError;
pub use evaluator::{GpuBatch, GpuOptions, Ticket, WORKGROUP_SIZE};
pub use fallback::gpu_or_cpu;
/// wgpu's backend set, for [`GpuOptions::backends`].
pub use wgpu::{Backends, PowerPreference};
