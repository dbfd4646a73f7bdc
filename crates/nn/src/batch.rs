//! Batched evaluation: the backend trait and its CPU implementation, the reference every
//! other backend must match score for score.

use std::sync::Arc;

use crate::error::BackendError;
use crate::features::FeatureBatch;
use crate::network::Network;

/// Evaluates many positions in one call.
///
/// `out[i]` receives position `i`'s score in centipawns for its side to move, exactly the
/// value [`Network::evaluate`] gives for it. `out.len()` must equal `features.len()`
/// (otherwise [`BackendError::OutputLength`]) and the batch must be in the network's input
/// layout (otherwise [`BackendError::Layout`]). An empty batch is a no-op.
pub trait BatchEvaluator {
    fn evaluate_batch(
        &mut self,
        features: &FeatureBatch,
        out: &mut [i32],
    ) -> Result<(), BackendError>;

    /// A short name for logs and reports (`cpu`, `wgpu: <adapter>`).
    fn name(&self) -> &str;
}

/// The CPU backend: each position's accumulators built from its feature lists, then the
/// output layer, one position after another on the calling thread.
///
/// ```
/// use chess_nn::{BatchEvaluator, CpuBatch, FeatureBatch, Network};
/// use chess_rules::Position;
/// let net = Network::default_network();
/// let pos = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
/// let mut batch = FeatureBatch::for_network(&net);
/// batch.push_position(&Position::startpos());
/// batch.push_position(&pos);
/// let mut out = [0; 2];
/// CpuBatch::new(net.clone()).evaluate_batch(&batch, &mut out).unwrap();
/// assert_eq!(out, [net.evaluate(&Position::startpos()), net.evaluate(&pos)]);
/// ```
#[derive(Debug)]
pub struct CpuBatch {
    net: Arc<Network>,
    scratch: Vec<i16>,
}

impl CpuBatch {
    pub fn new(net: Arc<Network>) -> CpuBatch {
        CpuBatch {
            scratch: vec![0; 2 * net.hidden()],
            net,
        }
    }

    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }
}

impl BatchEvaluator for CpuBatch {
    fn evaluate_batch(
        &mut self,
        features: &FeatureBatch,
        out: &mut [i32],
    ) -> Result<(), BackendError> {
        BackendError::check_output(features, out)?;
        BackendError::check_layout(features, self.net.king_buckets())?;
        for (i, o) in out.iter_mut().enumerate() {
            *o = self
                .net
                .evaluate_features(features.stm(i), features.nstm(i), &mut self.scratch);
        }
        Ok(())
    }

    fn name(&self) -> &str {
        "cpu"
    }
}
