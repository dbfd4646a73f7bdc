//! The search: iterative deepening with aspiration windows over a principal-variation search
//! (negamax alpha-beta) and a quiescence search.
//!
//! Node kinds are types ([`NodeKind`]), so the root/PV/non-PV distinctions compile into three
//! copies of the search instead of run-time flags. Pruning: mate distance, transposition-table
//! cutoffs, reverse futility, razoring, null move (verified at high depth), late-move reductions
//! and pruning, futility, history and SEE pruning; extensions: check and singular. Draws by
//! repetition (against the game history and the search path), the fifty-move rule and
//! insufficient material are recognised in the tree.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use chess_rules::{Move, Position, Role};

mod limits;
mod report;
mod timeman;

pub use limits::Limits;
pub use report::{Info, Line, SearchResult};
pub(crate) use timeman::TimeManager;

use crate::eval::Evaluator;
use crate::history::{History, NO_PIECE_TO, piece_to};
use crate::movepick::{CheckSquares, MovePicker, captured_role, is_tactical};
use crate::params::Params;
use crate::score::{DRAW, INFINITE, MATE, MATE_IN_MAX, MAX_PLY, NO_EVAL, Score, mate_in, mated_in};
use crate::see::{SEE_VALUE, see_ge};
use crate::tt::{Bound, TranspositionTable, TtEntry, pack_move, score_from_tt, score_to_tt};

/// Compile-time node kinds.
pub(crate) trait NodeKind {
    /// A node on the principal variation (searched with an open window).
    const PV: bool;
    /// The root node.
    const ROOT: bool;
}

pub(crate) struct Root;
pub(crate) struct Pv;
pub(crate) struct NonPv;

impl NodeKind for Root {
    const PV: bool = true;
    const ROOT: bool = true;
}
impl NodeKind for Pv {
    const PV: bool = true;
    const ROOT: bool = false;
}
impl NodeKind for NonPv {
    const PV: bool = false;
    const ROOT: bool = false;
}

/// What the outside can do to a running search.
#[derive(Debug)]
pub(crate) struct Control {
    pub(crate) stop: AtomicBool,
    pub(crate) pondering: AtomicBool,
    /// Milliseconds after the start at which `ponderhit` arrived (the clock starts then).
    pub(crate) clock_offset_ms: AtomicU64,
    pub(crate) start: Instant,
}

impl Control {
    pub(crate) fn new(pondering: bool) -> Control {
        Control {
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(pondering),
            clock_offset_ms: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    pub(crate) fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    pub(crate) fn ponderhit(&self) {
        self.clock_offset_ms.store(self.elapsed_ms(), Relaxed);
        self.pondering.store(false, Relaxed);
    }

    /// Milliseconds on our clock: from `go`, or from `ponderhit` when pondering.
    fn clock_ms(&self) -> Option<u64> {
        if self.pondering.load(Relaxed) {
            None
        } else {
            Some(
                self.elapsed_ms()
                    .saturating_sub(self.clock_offset_ms.load(Relaxed)),
            )
        }
    }
}

/// Everything the threads of one search share.
pub(crate) struct Shared {
    pub(crate) tt: Arc<TranspositionTable>,
    pub(crate) control: Arc<Control>,
    /// Node counts published by each thread.
    pub(crate) nodes: Vec<AtomicU64>,
    pub(crate) params: Params,
    pub(crate) limits: Limits,
    pub(crate) time: TimeManager,
    pub(crate) root: Position,
    /// Zobrist keys of the game's positions before the root, oldest first.
    pub(crate) history: Vec<u64>,
    pub(crate) multipv: usize,
}

impl Shared {
    fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|n| n.load(Relaxed)).sum()
    }
}

/// A search thread's state that lives across searches.
pub(crate) struct Worker {
    pub(crate) eval: Box<dyn Evaluator>,
    pub(crate) hist: History,
}

impl Worker {
    pub(crate) fn new(eval: Box<dyn Evaluator>) -> Worker {
        Worker {
            eval,
            hist: History::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.eval.clear();
        self.hist.clear();
    }
}

#[derive(Clone, Debug)]
struct RootMove {
    mv: Move,
    score: i32,
    prev_score: i32,
    avg_score: i32,
    depth: i32,
    seldepth: usize,
    pv: Vec<Move>,
}

#[derive(Clone, Copy)]
struct StackEntry {
    static_eval: i32,
    /// Piece-to of the move made at this ply (continuation history), or `NO_PIECE_TO`.
    piece_to: u16,
    mv: Move,
    excluded: Move,
    killers: [Move; 2],
    double_extensions: u8,
}

impl Default for StackEntry {
    fn default() -> Self {
        StackEntry {
            static_eval: NO_EVAL,
            piece_to: NO_PIECE_TO,
            mv: Move::NULL,
            excluded: Move::NULL,
            killers: [Move::NULL; 2],
            double_extensions: 0,
        }
    }
}

/// Stack entries below ply 0, so that `ply - 4` can be read at any ply.
const STACK_OFFSET: usize = 4;

pub(crate) struct Searcher<'a> {
    sh: &'a Shared,
    w: &'a mut Worker,
    id: usize,
    p: &'a Params,
    nodes: u64,
    seldepth: usize,
    root_depth: i32,
    completed_depth: i32,
    pv_idx: usize,
    root_moves: Vec<RootMove>,
    stack: Vec<StackEntry>,
    pv: Vec<[Move; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 2],
    keys: Vec<u64>,
    root_index: usize,
    nmp_min_ply: usize,
    stopped: bool,
    lmr: Vec<[i32; 64]>,
    best_move_changes: f64,
    single_thread: bool,
}

impl<'a> Searcher<'a> {
    pub(crate) fn new(sh: &'a Shared, w: &'a mut Worker, id: usize) -> Searcher<'a> {
        let p = &sh.params;
        let mut lmr = vec![[0i32; 64]; 64];
        for (d, row) in lmr.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                let plies = p.lmr_base + (d as f64).ln() * (m as f64).ln() / p.lmr_divisor;
                *r = (plies * 1024.0) as i32;
            }
        }
        let mut keys = sh.history.clone();
        keys.push(sh.root.zobrist());
        Searcher {
            sh,
            w,
            id,
            p,
            nodes: 0,
            seldepth: 0,
            root_depth: 0,
            completed_depth: 0,
            pv_idx: 0,
            root_moves: Vec::new(),
            stack: vec![StackEntry::default(); MAX_PLY + STACK_OFFSET + 4],
            pv: vec![[Move::NULL; MAX_PLY + 1]; MAX_PLY + 2],
            pv_len: [0; MAX_PLY + 2],
            root_index: keys.len() - 1,
            keys,
            nmp_min_ply: 0,
            stopped: false,
            lmr,
            best_move_changes: 0.0,
            single_thread: sh.nodes.len() == 1,
        }
    }

    #[inline]
    fn is_main(&self) -> bool {
        self.id == 0
    }

    #[inline]
    fn ss(&self, ply: usize) -> &StackEntry {
        &self.stack[ply + STACK_OFFSET]
    }

    #[inline]
    fn ss_mut(&mut self, ply: usize) -> &mut StackEntry {
        &mut self.stack[ply + STACK_OFFSET]
    }

    /// Piece-to of the moves one and two plies back, for continuation history.
    #[inline]
    fn prev_piece_to(&self, ply: usize) -> [u16; 2] {
        [
            self.stack[ply + STACK_OFFSET - 1].piece_to,
            self.stack[ply + STACK_OFFSET - 2].piece_to,
        ]
    }

    /// The static evaluation (cached in the hash entry when there is one) and the same
    /// sharpened by the hash score when its bound allows: `(raw, adjusted)`.
    fn static_eval(&mut self, pos: &Position, tte: Option<TtEntry>, tt_score: i32) -> (i32, i32) {
        let raw = match tte {
            Some(e) if e.eval != NO_EVAL => e.eval,
            _ => self.evaluate(pos),
        };
        let sharpen = tte.is_some_and(|e| {
            tt_score.abs() < MATE_IN_MAX
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => tt_score > raw,
                    Bound::Upper => tt_score < raw,
                }
        });
        (raw, if sharpen { tt_score } else { raw })
    }

    fn evaluate(&mut self, pos: &Position) -> i32 {
        self.w
            .eval
            .evaluate(pos)
            .clamp(-MATE_IN_MAX + 1, MATE_IN_MAX - 1)
    }

    /// Reduction in 1/1024 plies.
    #[inline]
    fn reduction(&self, depth: i32, move_count: usize) -> i32 {
        self.lmr[(depth as usize).min(63)][move_count.min(63)]
    }

    fn stat_bonus(&self, depth: i32) -> i32 {
        (self.p.history_bonus_mul * depth - self.p.history_bonus_offset)
            .clamp(0, self.p.history_bonus_max)
    }

    /// Checks the limits; true when the search must unwind.
    #[inline]
    fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        // Depth 1 always completes so that there is a move to play.
        if self.is_main()
            && self.completed_depth >= 1
            && self.single_thread
            && let Some(limit) = self.sh.limits.nodes
            && self.nodes >= limit
        {
            self.stop_all();
            return true;
        }
        // A stop from outside is seen within 16 nodes: in the batched search a node can wait
        // for a whole round of other searches, so 1024 nodes could take seconds there.
        if self.nodes & 15 == 0
            && self.sh.control.stop.load(Relaxed)
            && (!self.is_main() || self.completed_depth >= 1)
        {
            self.stopped = true;
            return true;
        }
        if self.nodes & 1023 == 0 {
            self.sh.nodes[self.id].store(self.nodes, Relaxed);
            if self.sh.control.stop.load(Relaxed) {
                if !self.is_main() || self.completed_depth >= 1 {
                    self.stopped = true;
                }
            } else if self.is_main() && self.completed_depth >= 1 {
                let over_time = self
                    .sh
                    .control
                    .clock_ms()
                    .is_some_and(|t| self.sh.time.hard_stop(t));
                let over_nodes = self
                    .sh
                    .limits
                    .nodes
                    .is_some_and(|n| self.sh.total_nodes() >= n);
                if over_time || over_nodes {
                    self.stop_all();
                }
            }
        }
        self.stopped
    }

    fn stop_all(&mut self) {
        self.stopped = true;
        self.sh.control.stop.store(true, Relaxed);
    }

    /// Draw by the fifty-move rule, insufficient material or repetition. A position repeated
    /// inside the search counts at once (the side that can repeat can keep repeating); one
    /// repeated only from the game before the root needs two earlier occurrences (threefold).
    fn is_draw(&self, pos: &Position) -> bool {
        if pos.halfmoves() >= 100 {
            return !pos.is_check() || pos.has_legal_moves();
        }
        if pos.is_insufficient_material() {
            return true;
        }
        let n = self.keys.len();
        let key = self.keys[n - 1];
        let window = (pos.halfmoves() as usize).min(n - 1);
        let mut earlier = false;
        let mut back = 4;
        while back <= window {
            let i = n - 1 - back;
            if self.keys[i] == key {
                if i >= self.root_index || earlier {
                    return true;
                }
                earlier = true;
            }
            back += 2;
        }
        false
    }

    /// Iterative deepening. The main thread reports through `on_info` and returns the result;
    /// helpers return an empty one.
    pub(crate) fn iterate(&mut self, mut on_info: Option<&mut dyn FnMut(&Info)>) -> SearchResult {
        let root = self.sh.root.clone();
        self.w.eval.on_search_start(&root);
        let limits = &self.sh.limits;
        let mut legal: Vec<Move> = root.legal_moves().iter().copied().collect();
        if !limits.searchmoves.is_empty() {
            let wanted: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| limits.searchmoves.contains(m))
                .collect();
            if !wanted.is_empty() {
                legal = wanted;
            }
        }
        if legal.is_empty() {
            let score = if root.is_check() {
                Score::Mate(0)
            } else {
                Score::Cp(0)
            };
            let line = Line {
                multipv: 1,
                score,
                wdl: score.wdl(),
                depth: 0,
                seldepth: 0,
                nodes: 0,
                nps: 0,
                time_ms: self.sh.control.elapsed_ms(),
                pv: Vec::new(),
            };
            if let Some(cb) = on_info.as_mut() {
                cb(&Info {
                    line: line.clone(),
                    bound: None,
                    hashfull: self.sh.tt.hashfull(),
                });
            }
            self.wait_while_pondering();
            return SearchResult {
                best_move: None,
                ponder: None,
                lines: vec![line],
            };
        }
        self.root_moves = legal
            .into_iter()
            .map(|mv| RootMove {
                mv,
                score: -INFINITE,
                prev_score: -INFINITE,
                avg_score: -INFINITE,
                depth: 0,
                seldepth: 0,
                pv: vec![mv],
            })
            .collect();
        let multipv = self.sh.multipv.clamp(1, self.root_moves.len());
        let max_depth = limits.depth.map_or(MAX_PLY as i32 - 8, |d| {
            (d as i32).clamp(1, MAX_PLY as i32 - 8)
        });
        let mut last_best = Move::NULL;
        let mut stable_iterations = 0;
        let mut last_score = 0;

        for depth in 1..=max_depth {
            self.root_depth = depth;
            self.best_move_changes *= 0.5;
            for rm in &mut self.root_moves {
                rm.prev_score = rm.score;
            }
            for pv_idx in 0..multipv {
                self.pv_idx = pv_idx;
                self.seldepth = 0;
                self.aspiration(&root, depth, &mut on_info);
                self.root_moves[..=pv_idx]
                    .sort_by(|a, b| b.score.cmp(&a.score).then(b.prev_score.cmp(&a.prev_score)));
                if self.stopped {
                    break;
                }
            }
            if self.stopped {
                break;
            }
            self.completed_depth = depth;
            if !self.is_main() {
                continue;
            }
            if let Some(cb) = on_info.as_mut() {
                let hashfull = self.sh.tt.hashfull();
                for i in 0..multipv {
                    cb(&Info {
                        line: self.line(i),
                        bound: None,
                        hashfull,
                    });
                }
            }
            let best = &self.root_moves[0];
            if let Some(n) = limits.mate
                && best.score >= MATE_IN_MAX
                && (MATE - best.score + 1) / 2 <= n as i32
            {
                break;
            }
            if best.mv == last_best {
                stable_iterations += 1;
            } else {
                stable_iterations = 0;
            }
            last_best = best.mv;
            let score_drop = (last_score - best.score).clamp(0, 100);
            last_score = best.score;
            if let Some(t) = self.sh.control.clock_ms() {
                let mut scale = 1.0 + 1.5 * self.best_move_changes;
                scale *= 1.0 + f64::from(score_drop) / 200.0;
                if stable_iterations >= 4 {
                    scale *= 0.7;
                }
                if self.root_moves.len() == 1 {
                    scale *= 0.1;
                }
                if self.sh.time.soft_stop(t, scale.clamp(0.1, 3.0)) {
                    break;
                }
            }
        }

        self.sh.nodes[self.id].store(self.nodes, Relaxed);
        if !self.is_main() {
            return SearchResult::default();
        }
        self.wait_while_pondering();
        self.sh.control.stop.store(true, Relaxed);
        let lines: Vec<Line> = (0..multipv).map(|i| self.line(i)).collect();
        let best = self.root_moves[0].mv;
        let ponder = self.root_moves[0]
            .pv
            .get(1)
            .copied()
            .or_else(|| self.ponder_from_tt(&root, best));
        SearchResult {
            best_move: Some(best),
            ponder,
            lines,
        }
    }

    /// `go infinite` and `go ponder` never return before `stop` (or `ponderhit`).
    fn wait_while_pondering(&self) {
        let c = &self.sh.control;
        while !c.stop.load(Relaxed) && (self.sh.limits.infinite || c.pondering.load(Relaxed)) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn ponder_from_tt(&self, root: &Position, best: Move) -> Option<Move> {
        let mut next = root.clone();
        next.play_unchecked(best);
        let e = self.sh.tt.probe(next.zobrist())?;
        next.legal_moves()
            .iter()
            .copied()
            .find(|&m| e.mv != 0 && pack_move(m) == e.mv)
    }

    fn line(&self, i: usize) -> Line {
        let rm = &self.root_moves[i];
        let (v, depth) = if rm.score != -INFINITE {
            (rm.score, rm.depth)
        } else if rm.prev_score != -INFINITE {
            (rm.prev_score, self.completed_depth)
        } else {
            (0, 0)
        };
        let score = Score::from_internal(v);
        let time_ms = self.sh.control.elapsed_ms();
        let nodes = self.sh.total_nodes().max(self.nodes);
        Line {
            multipv: i + 1,
            score,
            wdl: score.wdl(),
            depth: depth.max(1) as u32,
            seldepth: rm.seldepth.max(1) as u32,
            nodes,
            nps: nodes * 1000 / time_ms.max(1),
            time_ms,
            pv: rm.pv.clone(),
        }
    }

    fn aspiration(
        &mut self,
        root: &Position,
        depth: i32,
        on_info: &mut Option<&mut dyn FnMut(&Info)>,
    ) {
        let prev = self.root_moves[self.pv_idx].avg_score;
        let mut delta = self.p.aspiration_delta;
        let (mut alpha, mut beta) = if depth >= self.p.aspiration_min_depth && prev != -INFINITE {
            ((prev - delta).max(-INFINITE), (prev + delta).min(INFINITE))
        } else {
            (-INFINITE, INFINITE)
        };
        loop {
            let score = self.negamax::<Root>(root, alpha, beta, depth, 0, false);
            self.root_moves[self.pv_idx..]
                .sort_by(|a, b| b.score.cmp(&a.score).then(b.prev_score.cmp(&a.prev_score)));
            if self.stopped {
                return;
            }
            let bound = if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITE);
                Some(Bound::Upper)
            } else if score >= beta {
                beta = (score + delta).min(INFINITE);
                Some(Bound::Lower)
            } else {
                return;
            };
            if self.is_main()
                && self.sh.control.elapsed_ms() > 3000
                && let Some(cb) = on_info.as_mut()
            {
                cb(&Info {
                    line: self.line(self.pv_idx),
                    bound,
                    hashfull: self.sh.tt.hashfull(),
                });
            }
            delta += delta / 2;
        }
    }

    /// Records a root move's result: its score and line when it is the first move or raised
    /// alpha, otherwise "below alpha" (ordered by the previous iteration's score).
    fn update_root_move(&mut self, m: Move, score: i32, alpha: i32, first: bool) {
        let Some(i) = self.root_moves.iter().position(|r| r.mv == m) else {
            return;
        };
        if !(first || score > alpha) {
            self.root_moves[i].score = -INFINITE;
            return;
        }
        let child_len = self.pv_len[1].max(1);
        let (seldepth, root_depth) = (self.seldepth, self.root_depth);
        let rm = &mut self.root_moves[i];
        rm.score = score;
        rm.depth = root_depth;
        rm.seldepth = seldepth;
        rm.avg_score = if rm.avg_score == -INFINITE {
            score
        } else {
            (2 * score + rm.avg_score) / 3
        };
        rm.pv.clear();
        rm.pv.push(m);
        rm.pv.extend_from_slice(&self.pv[1][1..child_len]);
        if !first && self.is_main() {
            self.best_move_changes += 1.0;
        }
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let row = &mut head[ply];
        row[ply] = m;
        row[ply + 1..child_len].copy_from_slice(&tail[0][ply + 1..child_len]);
        self.pv_len[ply] = child_len;
    }

    #[allow(clippy::too_many_lines)]
    fn negamax<N: NodeKind>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        if depth <= 0 {
            return self.qsearch::<N>(pos, alpha, beta, ply, 0);
        }
        if N::PV {
            self.pv_len[ply] = ply;
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply + 1);
        let in_check = pos.is_check();
        if !N::ROOT {
            if self.is_draw(pos) {
                return DRAW;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { DRAW } else { self.evaluate(pos) };
            }
            alpha = alpha.max(mated_in(ply));
            beta = beta.min(mate_in(ply + 1));
            if alpha >= beta {
                return alpha;
            }
        }

        let us = pos.turn();
        let excluded = self.ss(ply).excluded;
        let key = pos.zobrist();
        let tte = if excluded.is_null() {
            self.sh.tt.probe(key)
        } else {
            None
        };
        let tt_move = if N::ROOT {
            pack_move(self.root_moves[self.pv_idx].mv)
        } else {
            tte.map_or(0, |e| e.mv)
        };
        let tt_score = tte.map_or(NO_EVAL, |e| score_from_tt(e.score, ply));
        let tt_pv = N::PV || tte.is_some_and(|e| e.pv);
        if !N::PV
            && let Some(e) = tte
            && e.depth >= depth
            && pos.halfmoves() < 90
            && match e.bound {
                Bound::Exact => true,
                Bound::Lower => tt_score >= beta,
                Bound::Upper => tt_score <= alpha,
            }
        {
            return tt_score;
        }

        // Static evaluation, sharpened by the hash score when its bound allows.
        let (raw_eval, eval) = if in_check {
            (NO_EVAL, NO_EVAL)
        } else {
            self.static_eval(pos, tte, tt_score)
        };
        self.ss_mut(ply).static_eval = raw_eval;
        let improving = !in_check && {
            let two = self.stack[ply + STACK_OFFSET - 2].static_eval;
            let four = self.stack[ply + STACK_OFFSET - 4].static_eval;
            if two != NO_EVAL {
                raw_eval > two
            } else {
                four == NO_EVAL || raw_eval > four
            }
        };
        self.ss_mut(ply + 2).killers = [Move::NULL; 2];

        let p = self.p;
        if !N::PV && !in_check && excluded.is_null() {
            // Reverse futility: far enough above beta that a quiet move will not fall below.
            if depth <= p.rfp_max_depth
                && eval.abs() < MATE_IN_MAX
                && beta.abs() < MATE_IN_MAX
                && eval - p.rfp_margin * (depth - i32::from(improving)) >= beta
            {
                return (eval + beta) / 2;
            }
            // Razoring: hopelessly below alpha; let the quiescence search confirm.
            if depth <= p.razor_max_depth
                && alpha.abs() < MATE_IN_MAX
                && eval + p.razor_base + p.razor_margin * depth * depth < alpha
            {
                let v = self.qsearch::<NonPv>(pos, alpha, alpha + 1, ply, 0);
                if v <= alpha {
                    return v;
                }
            }
            // Null move: give the opponent a free move; still above beta means a cutoff.
            if depth >= p.nmp_min_depth
                && eval >= beta
                && ply >= self.nmp_min_ply
                && !self.stack[ply + STACK_OFFSET - 1].mv.is_null()
                && beta > -MATE_IN_MAX
                && has_pieces(pos)
            {
                let r = p.nmp_base_reduction
                    + depth / p.nmp_depth_divisor
                    + ((eval - beta) / p.nmp_eval_divisor).min(3);
                let mut next = pos.clone();
                next.play_unchecked(Move::NULL);
                {
                    let e = self.ss_mut(ply);
                    e.mv = Move::NULL;
                    e.piece_to = NO_PIECE_TO;
                }
                self.keys.push(next.zobrist());
                self.w.eval.on_null_move(pos, &next);
                let v =
                    -self.negamax::<NonPv>(&next, -beta, -beta + 1, depth - r, ply + 1, !cut_node);
                self.w.eval.on_unmake();
                self.keys.pop();
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    let v = if v >= MATE_IN_MAX { beta } else { v };
                    if self.nmp_min_ply != 0 || depth < p.nmp_verify_depth {
                        return v;
                    }
                    // Verification: the same reduced search without null moves for this side.
                    self.nmp_min_ply = ply + (3 * (depth - r) / 4).max(1) as usize;
                    let w = self.negamax::<NonPv>(pos, beta - 1, beta, depth - r, ply, false);
                    self.nmp_min_ply = 0;
                    if w >= beta {
                        return v;
                    }
                }
            }
        }

        // Internal iterative reduction: no hash move means this node was not expected to matter.
        if !N::ROOT && depth >= p.iir_min_depth && tt_move == 0 && (N::PV || cut_node) {
            depth -= 1;
        }

        let prev = self.prev_piece_to(ply);
        let killers = self.ss(ply).killers;
        let counter = self.w.hist.counter(prev[0]);
        let mut picker = MovePicker::new(pos, tt_move, killers, counter, prev);
        let mut best = -INFINITE;
        let mut best_move = Move::NULL;
        let mut move_count = 0usize;
        let mut quiets = [Move::NULL; 64];
        let mut n_quiets = 0;
        let mut captures = [Move::NULL; 32];
        let mut n_captures = 0;
        let has_pieces_us = has_pieces(pos);
        let checks = CheckSquares::new(pos);

        while let Some(m) = picker.next(pos, &self.w.hist) {
            if m == excluded {
                continue;
            }
            if N::ROOT && !self.root_moves[self.pv_idx..].iter().any(|r| r.mv == m) {
                continue;
            }
            move_count += 1;
            let tactical = is_tactical(pos, m);
            let quiet = !tactical;
            let hist = if quiet {
                self.w.hist.quiet(us, m, prev)
            } else {
                0
            };

            // Shallow-depth pruning, once a move has been searched without being mated. Direct
            // checks are kept: a quiet check is often the point of the position.
            if !N::ROOT && best > -MATE_IN_MAX && has_pieces_us && !checks.gives_check(m) {
                let lmr_depth = (depth - 1 - self.reduction(depth, move_count) / 1024).max(0);
                if quiet {
                    let lmp = (p.lmp_base + depth * depth) / (2 - i32::from(improving));
                    if move_count as i32 > lmp {
                        picker.skip_quiets();
                        continue;
                    }
                    // (Not when looking for a quicker mate: no static margin reaches one.)
                    if !in_check
                        && alpha < MATE_IN_MAX
                        && lmr_depth <= p.futility_max_depth
                        && eval + p.futility_base + p.futility_margin * lmr_depth <= alpha
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    if lmr_depth <= 3 && hist < -p.history_prune_margin * depth {
                        continue;
                    }
                    if lmr_depth <= p.see_prune_max_depth
                        && !see_ge(pos, m, -p.see_quiet_margin * lmr_depth * lmr_depth)
                    {
                        continue;
                    }
                } else if depth <= p.see_prune_max_depth
                    && !see_ge(pos, m, -p.see_capture_margin * depth)
                {
                    continue;
                }
            }

            // Extensions.
            let mut extension = 0;
            if !N::ROOT
                && depth >= p.singular_min_depth
                && pack_move(m) == tt_move
                && excluded.is_null()
                && (ply as i32) < 2 * self.root_depth
                && let Some(e) = tte
                && e.bound != Bound::Upper
                && e.depth >= depth - 3
                && tt_score.abs() < MATE_IN_MAX
            {
                let singular_beta = tt_score - p.singular_margin * depth;
                self.ss_mut(ply).excluded = m;
                let v = self.negamax::<NonPv>(
                    pos,
                    singular_beta - 1,
                    singular_beta,
                    (depth - 1) / 2,
                    ply,
                    cut_node,
                );
                self.ss_mut(ply).excluded = Move::NULL;
                if self.stopped {
                    return 0;
                }
                if v < singular_beta {
                    extension = 1;
                    if !N::PV
                        && v < singular_beta - p.double_extension_margin
                        && self.ss(ply).double_extensions < 6
                    {
                        extension = 2;
                    }
                } else if singular_beta >= beta {
                    // Multi-cut: even without the hash move this node fails high.
                    return singular_beta;
                } else if tt_score >= beta {
                    extension = -1;
                }
            }

            let mut next = pos.clone();
            next.play_unchecked(m);
            let gives_check = next.is_check();
            if gives_check && extension == 0 && (ply as i32) < 2 * self.root_depth {
                extension = 1;
            }
            self.ss_mut(ply + 1).double_extensions =
                self.ss(ply).double_extensions + u8::from(extension == 2);
            let new_depth = depth - 1 + extension;
            {
                let e = self.ss_mut(ply);
                e.mv = m;
                e.piece_to = piece_to(us, m);
            }
            self.keys.push(next.zobrist());
            self.w.eval.on_make(pos, m, &next);

            let mut score = -INFINITE;
            if depth >= 2 && move_count > 1 + usize::from(N::ROOT) && (quiet || !tt_pv) {
                let mut r = self.reduction(depth, move_count);
                if !tt_pv {
                    r += 1024;
                }
                if cut_node {
                    r += 1024;
                }
                if !improving {
                    r += 512;
                }
                if gives_check {
                    r -= 1024;
                }
                if m == killers[0] || m == killers[1] || m == counter {
                    r -= 1024;
                }
                if quiet {
                    r -= hist * 1024 / p.lmr_history_divisor;
                }
                let d = (new_depth - r / 1024).clamp(1, new_depth.max(1));
                score = -self.negamax::<NonPv>(&next, -alpha - 1, -alpha, d, ply + 1, true);
                if score > alpha && d < new_depth {
                    score = -self.negamax::<NonPv>(
                        &next,
                        -alpha - 1,
                        -alpha,
                        new_depth,
                        ply + 1,
                        !cut_node,
                    );
                }
            } else if !N::PV || move_count > 1 {
                score = -self.negamax::<NonPv>(
                    &next,
                    -alpha - 1,
                    -alpha,
                    new_depth,
                    ply + 1,
                    !cut_node,
                );
            }
            if N::PV && (move_count == 1 || score > alpha) {
                score = -self.negamax::<Pv>(&next, -beta, -alpha, new_depth, ply + 1, false);
            }
            self.w.eval.on_unmake();
            self.keys.pop();
            if self.stopped {
                return 0;
            }

            if N::ROOT {
                self.update_root_move(m, score, alpha, move_count == 1);
            }

            if score > best {
                best = score;
                if score > alpha {
                    best_move = m;
                    if N::PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
            if m != best_move {
                if quiet {
                    if n_quiets < quiets.len() {
                        quiets[n_quiets] = m;
                        n_quiets += 1;
                    }
                } else if n_captures < captures.len() {
                    captures[n_captures] = m;
                    n_captures += 1;
                }
            }
        }

        if move_count == 0 {
            return if !excluded.is_null() {
                alpha
            } else if in_check {
                mated_in(ply)
            } else {
                DRAW
            };
        }

        if best >= beta && !best_move.is_null() {
            let bonus = self.stat_bonus(depth);
            let hist = &mut self.w.hist;
            if !is_tactical(pos, best_move) {
                let e = &mut self.stack[ply + STACK_OFFSET];
                if e.killers[0] != best_move {
                    e.killers[1] = e.killers[0];
                    e.killers[0] = best_move;
                }
                hist.set_counter(prev[0], best_move);
                hist.update_quiet(us, best_move, prev, bonus);
                for &q in &quiets[..n_quiets] {
                    hist.update_quiet(us, q, prev, -bonus);
                }
            } else if let Some(v) = captured_role(pos, best_move) {
                hist.update_capture(us, best_move, v, bonus);
            }
            for &c in &captures[..n_captures] {
                if let Some(v) = captured_role(pos, c) {
                    hist.update_capture(us, c, v, -bonus);
                }
            }
        }

        if excluded.is_null() && !(N::ROOT && self.pv_idx > 0) {
            let bound = if best >= beta {
                Bound::Lower
            } else if N::PV && !best_move.is_null() {
                Bound::Exact
            } else {
                Bound::Upper
            };
            self.sh.tt.store(
                key,
                pack_move(best_move),
                score_to_tt(best, ply),
                raw_eval,
                depth,
                bound,
                tt_pv,
            );
        }
        best
    }

    /// Quiescence: captures and queen promotions until the position is quiet, all evasions when
    /// in check, and at its first ply also quiet checks (so that a mate threat shows).
    fn qsearch<N: NodeKind>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        depth: i32,
    ) -> i32 {
        if N::PV {
            self.pv_len[ply] = ply;
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply + 1);
        if self.is_draw(pos) {
            return DRAW;
        }
        let in_check = pos.is_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { DRAW } else { self.evaluate(pos) };
        }
        let key = pos.zobrist();
        let tte = self.sh.tt.probe(key);
        let tt_score = tte.map_or(NO_EVAL, |e| score_from_tt(e.score, ply));
        if !N::PV
            && let Some(e) = tte
            && match e.bound {
                Bound::Exact => true,
                Bound::Lower => tt_score >= beta,
                Bound::Upper => tt_score <= alpha,
            }
        {
            return tt_score;
        }
        let tt_pv = N::PV || tte.is_some_and(|e| e.pv);

        let (raw_eval, mut best, futility_base) = if in_check {
            (NO_EVAL, -INFINITE, -INFINITE)
        } else {
            let (raw, eval) = self.static_eval(pos, tte, tt_score);
            if eval >= beta {
                if tte.is_none() {
                    self.sh.tt.store(
                        key,
                        0,
                        score_to_tt(eval, ply),
                        raw,
                        depth,
                        Bound::Lower,
                        false,
                    );
                }
                return eval;
            }
            alpha = alpha.max(eval);
            (raw, eval, eval + self.p.qs_futility_margin)
        };

        let mut picker = MovePicker::quiescence(pos, tte.map_or(0, |e| e.mv), in_check, depth == 0);
        let us = pos.turn();
        let mut best_move = Move::NULL;
        while let Some(m) = picker.next(pos, &self.w.hist) {
            if !in_check {
                if !is_tactical(pos, m) {
                    // A quiet check: worth a look unless the checking piece just hangs.
                    if !see_ge(pos, m, 0) {
                        continue;
                    }
                } else {
                    let gain = captured_role(pos, m).map_or(0, |r| SEE_VALUE[r.index()]);
                    if m.promotion().is_none() && futility_base + gain <= alpha {
                        best = best.max(futility_base + gain);
                        continue;
                    }
                    if !see_ge(pos, m, self.p.qs_see_threshold) {
                        continue;
                    }
                }
            }
            let mut next = pos.clone();
            next.play_unchecked(m);
            {
                let e = self.ss_mut(ply);
                e.mv = m;
                e.piece_to = piece_to(us, m);
            }
            self.keys.push(next.zobrist());
            self.w.eval.on_make(pos, m, &next);
            let score = -self.qsearch::<N>(&next, -beta, -alpha, ply + 1, depth - 1);
            self.w.eval.on_unmake();
            self.keys.pop();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_move = m;
                    if N::PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        if in_check && picker.legal_count() == 0 {
            return mated_in(ply);
        }
        let bound = if best >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        self.sh.tt.store(
            key,
            pack_move(best_move),
            score_to_tt(best, ply),
            raw_eval,
            depth,
            bound,
            tt_pv,
        );
        best
    }
}

/// The side to move has a piece other than pawns and king (null move and pruning are unsafe
/// in pawn endings, where zugzwang is common).
#[inline]
fn has_pieces(pos: &Position) -> bool {
    let us = pos.by_color(pos.turn());
    (us & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King)).has_any()
}
