//! One search on a worker's engine, and the conversions of its lines to the wire.

use std::time::Instant;

use chess_proto::convert::move_to_proto;
use chess_proto::v1;
use chess_rules::Position;
use chess_search::batched;
use chess_search::{Engine, Limits, Line, Score, SearchResult, StopHandle};

use crate::pool::{Cancel, SearchMetrics};

/// A checked analysis request: what to search and how far.
#[derive(Clone, Debug)]
pub struct SearchJob {
    pub position: Position,
    /// Zobrist keys of the positions before `position`, oldest first.
    pub history: Vec<u64>,
    pub limits: Limits,
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

pub fn score_to_proto(score: Score) -> v1::Score {
    v1::Score {
        value: Some(match score {
            Score::Cp(cp) => v1::score::Value::Centipawns(cp),
            Score::Mate(n) => v1::score::Value::MateIn(n),
        }),
    }
}

pub fn wdl_to_proto((win, draw, loss): (u32, u32, u32)) -> v1::Wdl {
    v1::Wdl { win, draw, loss }
}

/// The moves of a principal variation in every notation, played out from `pos`. A PV move
/// that is not legal where it stands (which a sound search never produces) ends the line.
pub fn pv_to_proto(pos: &Position, pv: &[chess_rules::Move]) -> Vec<v1::Move> {
    let mut pos = pos.clone();
    let mut out = Vec::with_capacity(pv.len());
    for &m in pv {
        if !pos.is_legal(m) {
            break;
        }
        out.push(move_to_proto(&pos, m));
        pos.play_unchecked(m);
    }
    out
}

pub fn line_to_proto(pos: &Position, line: &Line) -> v1::AnalysisLine {
    v1::AnalysisLine {
        multipv: line.multipv as u32,
        score: Some(score_to_proto(line.score)),
        wdl: Some(wdl_to_proto(line.wdl)),
        depth: line.depth,
        seldepth: line.seldepth,
        pv: pv_to_proto(pos, &line.pv),
        nodes: line.nodes,
        nps: line.nps,
        time_ms: line.time_ms,
    }
}

/// One analysis message: the lines of a depth (`done` false) or the final result.
pub fn response(pos: &Position, fen: &str, lines: &[Line], done: bool) -> v1::AnalyzeResponse {
    let best = lines
        .first()
        .and_then(|l| l.pv.first())
        .filter(|m| pos.is_legal(**m))
        .map(|&m| move_to_proto(pos, m));
    v1::AnalyzeResponse {
        fen: fen.to_owned(),
        lines: lines.iter().map(|l| line_to_proto(pos, l)).collect(),
        best_move: best,
        done,
    }
}

/// A score as one number for comparisons: centipawns, with mates beyond any centipawn value
/// (a nearer mate is better, a farther mate against is better).
pub fn score_value(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => 100_000 - n,
        Score::Mate(n) => -100_000 - n,
    }
}

/// Expected score (win 1, draw 1/2) from the engine's win/draw/loss model.
pub fn expected_score(score: Score) -> f64 {
    let (w, d, _) = score.wdl();
    (f64::from(w) + f64::from(d) / 2.0) / 1000.0
}
