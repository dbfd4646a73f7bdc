//! The backend choice: the GPU when it can run, otherwise the CPU with one warning.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chess_nn::{BatchEvaluator, CpuBatch, Network};

use crate::{GpuBatch, GpuOptions};

static WARNED: AtomicBool = AtomicBool::new(false);

/// A GPU evaluator for `net`, or the CPU one when the GPU path cannot be set up (no adapter,
/// an adapter without what the shaders need, ...). The first fallback in the process is
/// logged with `tracing::warn!`, later ones at debug level. Both backends return the same
/// scores.
///
/// ```no_run
/// use chess_nn::{BatchEvaluator, FeatureBatch, Network};
/// use chess_rules::Position;
///
/// let mut eval = chess_nn_gpu::gpu_or_cpu(Network::default_network(), &Default::default());
/// let mut batch = FeatureBatch::new();
/// batch.push_position(&Position::startpos());
/// let mut scores = [0];
/// eval.evaluate_batch(&batch, &mut scores).unwrap();
/// println!("{}: {}", eval.name(), scores[0]);
/// ```
pub fn gpu_or_cpu(net: Arc<Network>, options: &GpuOptions) -> Box<dyn BatchEvaluator + Send> {
    match GpuBatch::new(&net, options) {
        Ok(gpu) => {
            tracing::info!(adapter = %gpu.adapter(), max_batch = gpu.max_batch(), "evaluating on the GPU");
            Box::new(gpu)
        }
        Err(error) => {
            if WARNED.swap(true, Ordering::Relaxed) {
                tracing::debug!(%error, "GPU backend unavailable, evaluating on the CPU");
            } else {
                tracing::warn!(%error, "GPU backend unavailable, evaluating on the CPU");
            }
            Box::new(CpuBatch::new(net))
        }
    }
}
