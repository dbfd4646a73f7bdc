//! One search on a worker's engine.

use std::time::Instant;

use chess_rules::Position;
use chess_search::batched;
use chess_search::{Engine, Line, SearchLimits, SearchResult, StopHandle};

use crate::pool::{Cancel, SearchMetrics};

/// A checked analysis request: what to search and how far.
#[derive(Clone, Debug)]
pub struct SearchJob {
    pub position: Position,
    /// Zobrist keys of the positions before `position`, oldest first.
    pub history: Vec<u64>,
    pub limits: SearchLimits,
    pub multipv: usize,
}

/// How a search ended.
#[derive(Debug)]
pub struct Searched {
    pub result: SearchResult,
    /// The call was cancelled; the result is whatever the search had found by then.
    pub cancelled: bool,
}

/// Runs `job` on `engine` until its limits or `cancel` stop it. `on_depth` hears the lines of
/// every completed depth, best first, on the search thread.
pub fn run_search<F>(
    engine: &mut Engine,
    job: &SearchJob,
    cancel: &Cancel,
    metrics: &SearchMetrics,
    on_depth: F,
) -> Searched
where
    F: FnMut(Vec<Line>) + Send + 'static,
{
    if cancel.is_cancelled() {
        return Searched {
            result: SearchResult::default(),
            cancelled: true,
        };
    }
    // MultiPV is 1..=16 after validation, inside the engine's own range.
    let _ = engine.set_option("MultiPV", &job.multipv.to_string());
    let per_depth = job.multipv.min(job.position.count_legal() as usize).max(1);
    let mut pending: Vec<Line> = Vec::with_capacity(per_depth);
    let mut on_depth = on_depth;
    metrics.active.inc();
    let on_info = move |info: &chess_search::Info| {
        if info.bound.is_some() {
            return;
        }
        pending.push(info.line.clone());
        if info.line.multipv >= per_depth {
            on_depth(std::mem::take(&mut pending));
        }
    };
    let (result, token) = if batched::in_task() {
        // A batched backend: the search runs here, as a task of the worker's scheduler.
        let stop = StopHandle::new();
        let token = cancel.register(stop.clone());
        let result = engine.search_inline(
            &job.position,
            &job.history,
            job.limits.clone(),
            &stop,
            on_info,
            &batched::Tasks,
        );
        (result, token)
    } else {
        let handle = engine.go(&job.position, &job.history, job.limits.clone(), on_info);
        let token = cancel.register(handle.stopper());
        (handle.wait(), token)
    };
    cancel.release(token);
    metrics.active.dec();
    metrics.searches.inc();
    let nodes = result.lines.first().map_or(0, |l| l.nodes);
    metrics.nodes.inc_by(nodes);
    let cancelled = cancel.is_cancelled();
    if cancelled {
        metrics.cancelled.inc();
        if let Some(at) = cancel.cancelled_at() {
            metrics
                .cancel_stop
                .observe(Instant::now().duration_since(at).as_secs_f64());
        }
    }
    Searched { result, cancelled }
}
