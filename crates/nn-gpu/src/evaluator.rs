//! The GPU batch evaluator: one device, one pipeline, weights uploaded once, and a ring of
//! buffer sets so that several batches are in flight at once.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use chess_nn::{BackendError, BatchEvaluator, FeatureBatch, KingBuckets, Network};

use crate::GpuError;
use crate::device::{self, AdapterSummary, Needs};

/// Invocations per workgroup; one workgroup evaluates one position, each invocation a share
/// of the neuron pairs. A power of two (tree reduction) and at least `2 * MAX_ACTIVE` (one
/// invocation loads each active feature).
pub const WORKGROUP_SIZE: u32 = 128;
/// Most active features per perspective (one per piece), as chess-nn's batches guarantee.
const MAX_ACTIVE: u32 = chess_nn::MAX_ACTIVE as u32;

const _: () = assert!(WORKGROUP_SIZE.is_power_of_two());
const _: () = assert!(WORKGROUP_SIZE >= 2 * MAX_ACTIVE);
// A thread works on neuron pairs, so rows must hold whole pairs.
const _: () = assert!(chess_nn::HIDDEN_MULTIPLE.is_multiple_of(2));

// Feature indices are uploaded as the batch holds them: u16 pairs read as little-endian words.
const _: () = assert!(cfg!(target_endian = "little"));

/// Words of the `Params` uniform in evaluate.wgsl.
const PARAMS_WORDS: usize = 8;
/// Storage buffers bound by the shader: weights, head, input, scores.
const STORAGE_BUFFERS: u32 = 4;
/// Per position in a slot's input buffer: two bound words and up to `2 * MAX_ACTIVE` u16.
const INPUT_BYTES_PER_POSITION: u64 = 8 + 2 * 2 * MAX_ACTIVE as u64;

/// How the evaluator is set up.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Positions per dispatch; larger batches are split into chunks of this size. Lowered
    /// when the adapter's limits require it.
    pub max_batch: usize,
    /// Buffer sets in the ring, so batches in flight at once (at least 1).
    pub in_flight: usize,
    pub power_preference: wgpu::PowerPreference,
    /// The wgpu backends to look for adapters on (an empty set finds none: tests use it for
    /// the fallback path).
    pub backends: wgpu::Backends,
}

impl Default for GpuOptions {
    fn default() -> GpuOptions {
        GpuOptions {
            max_batch: 16_384,
            in_flight: 3,
            power_preference: wgpu::PowerPreference::HighPerformance,
            backends: wgpu::Backends::all(),
        }
    }
}

/// Identifies a batch handed to [`GpuBatch::submit`]; results come back in submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub u64);

/// Map states of a slot's staging buffer, set by the map callback.
const MAP_PENDING: u8 = 0;
const MAP_DONE: u8 = 1;
const MAP_FAILED: u8 = 2;

/// One buffer set of the ring: a batch's input, its scores and their CPU-readable copy.
struct Slot {
    input: wgpu::Buffer,
    params: wgpu::Buffer,
    scores: wgpu::Buffer,
    staging: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    map_state: Arc<AtomicU8>,
}

/// A submitted batch whose scores have not been read back yet.
struct Pending {
    ticket: Ticket,
    slot: usize,
    positions: usize,
    submission: Option<wgpu::SubmissionIndex>,
}

/// Evaluates batches of positions on the GPU with the WGSL shader in `shaders/evaluate.wgsl`,
/// returning exactly the CPU backend's scores.
///
/// Everything is created in [`GpuBatch::new`]: device, pipeline, the weight buffers (uploaded
/// once) and a ring of `in_flight` buffer sets sized for `max_batch` positions. A call only
/// writes the inputs, dispatches and reads back. While batch k runs, batch k + 1 is uploaded
/// and batch k - 1 is read back.
pub struct GpuBatch {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    pipeline: wgpu::ComputePipeline,
    slots: Vec<Slot>,
    /// The slot the next submission uses; slots are used round-robin and complete in order,
    /// so it is free whenever fewer than `slots.len()` batches are pending.
    next_slot: usize,
    pending: VecDeque<Pending>,
    /// Batches that `submit` had to read back early to free a slot, oldest first.
    done: VecDeque<(Ticket, Vec<i32>)>,
    next_ticket: u64,
    max_batch: usize,
    /// Constant part of the params uniform: half hidden, QA, the output ratio's denominator
    /// and numerator (`Network::output_ratio`), output buckets.
    half_hidden: u32,
    qa: i32,
    out_div: i32,
    out_mul: i32,
    buckets: u32,
    /// The network's input layout: batches in another are refused.
    layout: KingBuckets,
    device_errors: Arc<Mutex<Option<String>>>,
    /// `wgpu: <adapter>`, for logs.
    name: String,
    /// Reused upload buffer for the rebased bounds.
    scratch: Vec<u32>,
}

impl fmt::Debug for GpuBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuBatch")
            .field("adapter", &self.adapter)
            .field("hidden", &(2 * self.half_hidden))
            .field("max_batch", &self.max_batch)
            .field("in_flight", &self.slots.len())
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// The shader with the constants it shares with this file prepended; `inputs` is the
/// network's input features per perspective (768 per king bucket).
fn shader_source(inputs: usize) -> String {
    format!(
        "const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;\n\
         const MAX_ACTIVE: u32 = {MAX_ACTIVE}u;\n\
         const NUM_FEATURES: u32 = {inputs}u;\n\n{}",
        include_str!("shaders/evaluate.wgsl")
    )
}

/// Packs i16 values two to a u32, the first of each pair in the low half.
fn pack_i16(values: &[i16]) -> Vec<u32> {
    values
        .chunks(2)
        .map(|pair| {
            let lo = u32::from(pair[0] as u16);
            let hi = pair.get(1).map_or(0, |&v| u32::from(v as u16));
            lo | (hi << 16)
        })
        .collect()
}

/// The shader's assumptions about the network, all of which chess-nn's validation implies;
/// checked again because a wrong one would read out of bounds or divide by zero.
fn check_network(net: &Network) -> Result<(), GpuError> {
    let h = net.hidden();
    if h == 0 || !h.is_multiple_of(2) || h > chess_nn::MAX_HIDDEN {
        return Err(GpuError::Network(format!("hidden size {h}")));
    }
    if net.qa() <= 0 || net.qb() <= 0 || net.qa().checked_mul(net.qb()).is_none() {
        return Err(GpuError::Network(format!(
            "QA = {} and QB = {} must be positive with a product that fits in i32",
            net.qa(),
            net.qb()
        )));
    }
    Ok(())
}

impl GpuBatch {
    /// Opens the best adapter, checks its limits, compiles the shader and uploads `net`.
    ///
    /// Fails with [`GpuError::NoAdapter`] or [`GpuError::Unsupported`] where the GPU path cannot
    /// run; the caller then uses the CPU backend (see [`crate::gpu_or_cpu`]).
    pub fn new(net: &Network, options: &GpuOptions) -> Result<GpuBatch, GpuError> {
        check_network(net)?;
        let needs = Needs {
            ft_bytes: (net.ft_weights().len() * 2) as u64,
            input_bytes_per_position: INPUT_BYTES_PER_POSITION,
            max_batch: options.max_batch.clamp(1, u32::MAX as usize) as u32,
            workgroup_size: WORKGROUP_SIZE,
            workgroup_storage_bytes: (2 * MAX_ACTIVE + WORKGROUP_SIZE) * 4,
            storage_buffers: STORAGE_BUFFERS,
        };
        let opened = device::open(options.backends, options.power_preference, needs)?;
        let device = opened.device;
        let max_batch = opened.max_batch as usize;

        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("evaluate.wgsl"),
            source: wgpu::ShaderSource::Wgsl(Cow::Owned(shader_source(net.inputs()))),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("evaluate"),
            layout: None,
            module: &module,
            entry_point: Some("evaluate"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[],
                // Every workgroup variable is written before it is read.
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);

        let ft_weights = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("ft_weights"),
            contents: bytemuck::cast_slice(&pack_i16(net.ft_weights())),
            usage: wgpu::BufferUsages::STORAGE,
        });
        // Biases, then each bucket's output weights (H words: 2H values), then the buckets'
        // output biases, one i32 a word.
        let mut head = pack_i16(net.ft_biases());
        head.extend(pack_i16(net.out_weights()));
        head.extend(net.out_biases().iter().map(|&b| b as u32));
        let head = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("head"),
            contents: bytemuck::cast_slice(&head),
            usage: wgpu::BufferUsages::STORAGE,
        });

        let input_bytes = device::input_bytes(INPUT_BYTES_PER_POSITION, max_batch as u32);
        let score_bytes = 4 * max_batch as u64;
        let slots = (0..options.in_flight.max(1))
            .map(|_| {
                let buffer = |label, size, usage| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(label),
                        size,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                use wgpu::BufferUsages as U;
                let input = buffer("input", input_bytes, U::STORAGE | U::COPY_DST);
                let params = buffer("params", 4 * PARAMS_WORDS as u64, U::UNIFORM | U::COPY_DST);
                let scores = buffer("scores", score_bytes, U::STORAGE | U::COPY_SRC);
                let staging = buffer("staging", score_bytes, U::MAP_READ | U::COPY_DST);
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("evaluate"),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: ft_weights.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: head.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: input.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: params.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 4,
                            resource: scores.as_entire_binding(),
                        },
                    ],
                });
                Slot {
                    input,
                    params,
                    scores,
                    staging,
                    bind_group,
                    map_state: Arc::new(AtomicU8::new(MAP_PENDING)),
                }
            })
            .collect();

        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Shader(e.to_string()));
        }

        let (out_mul, out_div) = net.output_ratio();
        Ok(GpuBatch {
            device,
            queue: opened.queue,
            adapter: opened.adapter.clone(),
            pipeline,
            slots,
            next_slot: 0,
            pending: VecDeque::new(),
            done: VecDeque::new(),
            next_ticket: 0,
            max_batch,
            half_hidden: (net.hidden() / 2) as u32,
            qa: net.qa(),
            out_div,
            out_mul,
            buckets: net.buckets() as u32,
            layout: *net.king_buckets(),
            device_errors: opened.errors,
            name: format!("wgpu: {}", opened.adapter),
            scratch: Vec::new(),
        })
    }

    /// The adapter the evaluator runs on.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    /// Positions per dispatch (after the adapter's limits); larger batches are chunked.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Batches that can be in flight at once.
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Scores every position of `batch` into `out` (one score per position), in order.
    /// Batches larger than [`GpuBatch::max_batch`] are split, and their chunks pipelined.
    /// The same as [`BatchEvaluator::evaluate_batch`] with this crate's error type.
    pub fn evaluate(&mut self, batch: &FeatureBatch, out: &mut [i32]) -> Result<(), GpuError> {
        if out.len() != batch.len() {
            return Err(GpuError::InvalidBatch(format!(
                "output holds {} scores for a batch of {} positions",
                out.len(),
                batch.len()
            )));
        }
        self.evaluate_stream(std::iter::once(batch), |_, scores| {
            out.copy_from_slice(scores)
        })
    }

    /// Scores a stream of batches with up to [`GpuBatch::in_flight`] of them on the device
    /// at once: `sink(i, scores)` gets the scores of the i-th batch, in order.
    pub fn evaluate_stream<'b, I, F>(&mut self, batches: I, mut sink: F) -> Result<(), GpuError>
    where
        I: IntoIterator<Item = &'b FeatureBatch>,
        F: FnMut(usize, &[i32]),
    {
        // Batches from `submit` keep their results for `receive`; the stream needs the ring.
        self.settle()?;
        let mut order: VecDeque<(usize, usize)> = VecDeque::new();
        let mut scores = Vec::new();
        let deliver =
            |order: &mut VecDeque<(usize, usize)>, scores: &mut Vec<i32>, sink: &mut F| {
                while let Some(&(index, len)) = order.front() {
                    if scores.len() < len {
                        break;
                    }
                    sink(index, &scores[..len]);
                    scores.drain(..len);
                    order.pop_front();
                }
            };
        for (index, batch) in batches.into_iter().enumerate() {
            order.push_back((index, batch.len()));
            let mut start = 0;
            while start < batch.len() {
                let end = (start + self.max_batch).min(batch.len());
                if self.pending.len() == self.slots.len() {
                    self.complete_oldest(&mut scores)?;
                    deliver(&mut order, &mut scores, &mut sink);
                }
                self.launch(batch, start..end)?;
                start = end;
            }
            deliver(&mut order, &mut scores, &mut sink);
        }
        while !self.pending.is_empty() {
            self.complete_oldest(&mut scores)?;
            deliver(&mut order, &mut scores, &mut sink);
        }
        Ok(())
    }

    /// Starts evaluating `batch` (at most [`GpuBatch::max_batch`] positions) and returns at
    /// once; [`GpuBatch::receive`] hands back the scores in submission order. When all buffer
    /// sets are busy this first waits for the oldest batch and keeps its scores for `receive`.
    pub fn submit(&mut self, batch: &FeatureBatch) -> Result<Ticket, GpuError> {
        if batch.len() > self.max_batch {
            return Err(GpuError::InvalidBatch(format!(
                "{} positions in one submission, at most {} (evaluate_batch splits larger ones)",
                batch.len(),
                self.max_batch
            )));
        }
        if self.pending.len() == self.slots.len() {
            let mut scores = Vec::new();
            let ticket = self.complete_oldest(&mut scores)?;
            self.done.push_back((ticket, scores));
        }
        self.launch(batch, 0..batch.len())
    }

    /// Waits for the oldest submitted batch and appends its scores to `out`; `None` when
    /// nothing is pending.
    pub fn receive(&mut self, out: &mut Vec<i32>) -> Result<Option<Ticket>, GpuError> {
        if let Some((ticket, scores)) = self.done.pop_front() {
            out.extend_from_slice(&scores);
            return Ok(Some(ticket));
        }
        if self.pending.is_empty() {
            return Ok(None);
        }
        self.complete_oldest(out).map(Some)
    }

    /// Batches submitted and not yet received.
    pub fn outstanding(&self) -> usize {
        self.done.len() + self.pending.len()
    }

    /// Reads back every pending batch into `done`.
    fn settle(&mut self) -> Result<(), GpuError> {
        while !self.pending.is_empty() {
            let mut scores = Vec::new();
            let ticket = self.complete_oldest(&mut scores)?;
            self.done.push_back((ticket, scores));
        }
        Ok(())
    }

    fn check_device(&self) -> Result<(), GpuError> {
        let errors = self.device_errors.lock().unwrap_or_else(|p| p.into_inner());
        match errors.as_ref() {
            Some(e) => Err(GpuError::Device(e.clone())),
            None => Ok(()),
        }
    }

    /// Uploads positions `range` of `batch` into the next slot, dispatches and queues the
    /// read-back. The caller has made sure the slot is free.
    fn launch(&mut self, batch: &FeatureBatch, range: Range<usize>) -> Result<Ticket, GpuError> {
        debug_assert!(self.pending.len() < self.slots.len());
        debug_assert!(range.len() <= self.max_batch);
        self.check_device()?;
        let ticket = Ticket(self.next_ticket);
        let slot_index = self.next_slot;
        let positions = range.len();

        let submission = if positions == 0 {
            None
        } else {
            let features_base = self.upload(slot_index, batch, range)?;
            let slot = &self.slots[slot_index];
            let params: [u32; PARAMS_WORDS] = [
                positions as u32,
                self.half_hidden,
                features_base,
                self.qa as u32,
                self.out_div as u32,
                self.out_mul as u32,
                self.buckets,
                0,
            ];
            self.queue
                .write_buffer(&slot.params, 0, bytemuck::cast_slice(&params));

            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("evaluate"),
                });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("evaluate"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &slot.bind_group, &[]);
                pass.dispatch_workgroups(positions as u32, 1, 1);
            }
            let bytes = 4 * positions as u64;
            encoder.copy_buffer_to_buffer(&slot.scores, 0, &slot.staging, 0, bytes);
            let submission = self.queue.submit([encoder.finish()]);

            slot.map_state.store(MAP_PENDING, Ordering::Release);
            let state = Arc::clone(&slot.map_state);
            slot.staging
                .slice(0..bytes)
                .map_async(wgpu::MapMode::Read, move |result| {
                    let value = if result.is_ok() { MAP_DONE } else { MAP_FAILED };
                    state.store(value, Ordering::Release);
                });
            Some(submission)
        };

        self.pending.push_back(Pending {
            ticket,
            slot: slot_index,
            positions,
            submission,
        });
        self.next_slot = (self.next_slot + 1) % self.slots.len();
        self.next_ticket += 1;
        Ok(ticket)
    }

    /// Writes positions `range` of `batch` into `slot`'s input buffer: the bounds, rebased
    /// to the chunk, then the feature indices straight from the batch (they are already u16
    /// pairs in little-endian words). Returns the word offset of the features.
    fn upload(
        &mut self,
        slot: usize,
        batch: &FeatureBatch,
        range: Range<usize>,
    ) -> Result<u32, GpuError> {
        if batch.layout() != &self.layout {
            return Err(GpuError::InvalidBatch(format!(
                "the batch's king buckets {} are not the network's {}",
                batch.layout(),
                self.layout
            )));
        }
        let offsets = &batch.offsets()[2 * range.start..=2 * range.end];
        let features = batch.features();
        // Start on an even index so that the u16 pairs keep their word alignment.
        let base = offsets[0] & !1;
        let last = offsets[offsets.len() - 1] as usize;
        self.scratch.clear();
        self.scratch.push(offsets[0] - base);
        for pair in offsets.windows(2) {
            if pair[1] - pair[0] > MAX_ACTIVE {
                // chess-nn's batches never hold more; the buffers are sized for no more.
                return Err(GpuError::InvalidBatch(format!(
                    "{} active features in one perspective, at most {MAX_ACTIVE}",
                    pair[1] - pair[0]
                )));
            }
            self.scratch.push(pair[1] - base);
        }
        let features_base = self.scratch.len() as u32;

        let input = &self.slots[slot].input;
        self.queue
            .write_buffer(input, 0, bytemuck::cast_slice(&self.scratch));
        // Buffer writes are whole words: an odd count leaves one index for a padded word.
        let feats = &features[base as usize..last];
        let (pairs, tail) = feats.split_at(feats.len() & !1);
        let at = 4 * u64::from(features_base);
        if !pairs.is_empty() {
            self.queue
                .write_buffer(input, at, bytemuck::cast_slice(pairs));
        }
        if let [last] = tail {
            let word = u32::from(*last).to_le_bytes();
            self.queue
                .write_buffer(input, at + 2 * pairs.len() as u64, &word);
        }
        Ok(features_base)
    }

    /// Waits for the oldest pending batch, appends its scores to `out` and frees its slot.
    fn complete_oldest(&mut self, out: &mut Vec<i32>) -> Result<Ticket, GpuError> {
        let Some(pending) = self.pending.pop_front() else {
            return Err(GpuError::Device("no batch pending".to_owned()));
        };
        let Some(submission) = pending.submission else {
            return Ok(pending.ticket);
        };
        let slot = &self.slots[pending.slot];
        // A wait returns once the submission is done and its map callback has run, so one
        // poll should do; a few more guard against a spurious early return.
        for polls in 0.. {
            match slot.map_state.load(Ordering::Acquire) {
                MAP_DONE => break,
                MAP_FAILED => {
                    self.check_device()?;
                    return Err(GpuError::Device(
                        "reading back the scores failed".to_owned(),
                    ));
                }
                _ if polls == 4 => {
                    return Err(GpuError::Device(
                        "the scores never became readable".to_owned(),
                    ));
                }
                _ => {
                    self.device
                        .poll(wgpu::PollType::Wait {
                            submission_index: Some(submission.clone()),
                            timeout: None,
                        })
                        .map_err(|e| GpuError::Device(e.to_string()))?;
                    self.check_device()?;
                }
            }
        }
        let bytes = 4 * pending.positions as u64;
        let read = slot.staging.get_mapped_range(0..bytes).map(|view| {
            out.extend(
                view.chunks_exact(4)
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        });
        // Unmapped on failure too, or the slot's next map_async would find it still mapped.
        slot.staging.unmap();
        read.map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(pending.ticket)
    }
}

impl From<GpuError> for BackendError {
    fn from(e: GpuError) -> BackendError {
        match e {
            GpuError::NoAdapter { .. }
            | GpuError::Unsupported { .. }
            | GpuError::RequestDevice { .. }
            | GpuError::Network(_) => BackendError::Unavailable(e.to_string()),
            GpuError::Shader(_) | GpuError::InvalidBatch(_) | GpuError::Device(_) => {
                BackendError::Device(e.to_string())
            }
        }
    }
}

impl BatchEvaluator for GpuBatch {
    fn evaluate_batch(
        &mut self,
        features: &FeatureBatch,
        out: &mut [i32],
    ) -> Result<(), BackendError> {
        BackendError::check_output(features, out)?;
        BackendError::check_layout(features, &self.layout)?;
        self.evaluate(features, out).map_err(BackendError::from)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i16_pairs_pack_low_half_first() {
        let words = pack_i16(&[1, -1, i16::MIN, i16::MAX, -2]);
        assert_eq!(words, [0xFFFF_0001, 0x7FFF_8000, 0x0000_FFFE]);
        // What the shader's low_i16/high_i16 do: sign-extend each half.
        let low = |w: u32| ((w << 16) as i32) >> 16;
        let high = |w: u32| (w as i32) >> 16;
        assert_eq!((low(words[0]), high(words[0])), (1, -1));
        assert_eq!((low(words[1]), high(words[1])), (-32768, 32767));
    }

    #[test]
    fn the_shader_gets_the_host_constants() {
        let src = shader_source(768);
        assert!(src.starts_with("const WORKGROUP_SIZE: u32 = 128u;"));
        assert!(src.contains("const MAX_ACTIVE: u32 = 32u;"));
        assert!(src.contains("const NUM_FEATURES: u32 = 768u;"));
        assert!(src.contains("@workgroup_size(WORKGROUP_SIZE)"));
    }
}
