//! One search thread's state: what the threads of a search share ([`Shared`], with the
//! [`Control`] the outside stops it through), what a thread keeps across searches ([`Worker`]:
//! its evaluator and histories) and what it keeps during one ([`Searcher`]: the search stack,
//! the principal variation, the root moves), with the helpers every part of the search uses:
//! limits, draws, static evaluation, reductions and the record of a new best line.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use chess_rules::{Move, Position};
use chess_tablebase::Tablebase;

use super::limits::SearchLimits;
use super::timeman::TimeManager;
use crate::eval::Evaluator;
use crate::history::{History, NO_PIECE_TO, Prev};
use crate::params::Params;
use crate::score::{INFINITE, MAX_PLY, NO_EVAL, TB_WIN_IN_MAX};
use crate::tt::{Bound, TranspositionTable, TtEntry, pack_move, score_to_tt};

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
    pub(super) fn clock_ms(&self) -> Option<u64> {
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
    pub(crate) limits: SearchLimits,
    pub(crate) time: TimeManager,
    pub(crate) root: Position,
    /// Zobrist keys of the game's positions before the root, oldest first.
    pub(crate) history: Vec<u64>,
    pub(crate) multipv: usize,
    /// Endgame tables, when configured: probed at the root (exact lines) and inside the tree.
    pub(crate) tables: Option<Arc<Tablebase>>,
    /// The most pieces the loaded tables hold (0 without tables), looked up once per search.
    pub(crate) tb_pieces: usize,
    /// Table probes by every thread of this search.
    pub(crate) tb_hits: AtomicU64,
}

impl Shared {
    pub(super) fn total_nodes(&self) -> u64 {
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

/// A legal root move: its score in this iteration (`-INFINITE` while below alpha) and the
/// last, their running average (the centre of the next aspiration window), and its line.
#[derive(Clone, Debug)]
pub(super) struct RootMove {
    pub(super) mv: Move,
    pub(super) score: i32,
    pub(super) prev_score: i32,
    pub(super) avg_score: i32,
    pub(super) depth: i32,
    pub(super) seldepth: usize,
    pub(super) pv: Vec<Move>,
}

/// What the search remembers about one ply of the current line.
#[derive(Clone, Copy)]
pub(super) struct StackEntry {
    pub(super) static_eval: i32,
    /// Piece-to of the move made at this ply (continuation history), or `NO_PIECE_TO`.
    pub(super) piece_to: u16,
    pub(super) mv: Move,
    pub(super) excluded: Move,
    pub(super) killers: [Move; 2],
    pub(super) double_extensions: u8,
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
pub(super) const STACK_OFFSET: usize = 4;

/// One thread's search: the state of one `go` on one thread.
pub(crate) struct Searcher<'a> {
    pub(super) sh: &'a Shared,
    pub(super) w: &'a mut Worker,
    pub(super) id: usize,
    pub(super) p: &'a Params,
    pub(super) nodes: u64,
    pub(super) seldepth: usize,
    pub(super) root_depth: i32,
    pub(super) completed_depth: i32,
    pub(super) pv_idx: usize,
    pub(super) root_moves: Vec<RootMove>,
    pub(super) stack: Vec<StackEntry>,
    pub(super) pv: Vec<[Move; MAX_PLY + 1]>,
    pub(super) pv_len: [usize; MAX_PLY + 2],
    pub(super) keys: Vec<u64>,
    pub(super) root_index: usize,
    pub(super) nmp_min_ply: usize,
    pub(super) stopped: bool,
    pub(super) lmr: Vec<[i32; 64]>,
    pub(super) best_move_changes: f64,
    pub(super) single_thread: bool,
    /// The root is a table draw: the search only chooses among the drawing moves, and the
    /// lines report the exact draw.
    pub(super) table_draw: bool,
}

impl<'a> Searcher<'a> {
    pub(crate) fn new(sh: &'a Shared, w: &'a mut Worker, id: usize) -> Searcher<'a> {
        let p = &sh.params;
        // Each logarithm once, not once a cell: the table is made at every search.
        let ln: [f64; 64] = std::array::from_fn(|i| (i as f64).ln());
        let mut lmr = vec![[0i32; 64]; 64];
        for (d, row) in lmr.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                let plies = p.lmr_base + ln[d] * ln[m] / p.lmr_divisor;
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
            table_draw: false,
        }
    }

    #[inline]
    pub(super) fn is_main(&self) -> bool {
        self.id == 0
    }

    #[inline]
    pub(super) fn ss(&self, ply: usize) -> &StackEntry {
        &self.stack[ply + STACK_OFFSET]
    }

    #[inline]
    pub(super) fn ss_mut(&mut self, ply: usize) -> &mut StackEntry {
        &mut self.stack[ply + STACK_OFFSET]
    }

    /// Piece-to of the moves one, two and four plies back, for continuation history.
    #[inline]
    pub(super) fn prev_piece_to(&self, ply: usize) -> Prev {
        [
            self.stack[ply + STACK_OFFSET - 1].piece_to,
            self.stack[ply + STACK_OFFSET - 2].piece_to,
            self.stack[ply + STACK_OFFSET - 4].piece_to,
        ]
    }

    /// The static evaluation (cached in the hash entry when there is one) and the same
    /// sharpened by the hash score when its bound allows: `(raw, adjusted)`.
    pub(super) fn static_eval(
        &mut self,
        pos: &Position,
        tte: Option<TtEntry>,
        tt_score: i32,
    ) -> (i32, i32) {
        let raw = match tte {
            Some(e) if e.eval != NO_EVAL => e.eval,
            _ => self.evaluate(pos),
        };
        let sharpen = tte.is_some_and(|e| {
            tt_score.abs() < TB_WIN_IN_MAX
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => tt_score > raw,
                    Bound::Upper => tt_score < raw,
                }
        });
        (raw, if sharpen { tt_score } else { raw })
    }

    pub(super) fn evaluate(&mut self, pos: &Position) -> i32 {
        self.w
            .eval
            .evaluate(pos)
            .clamp(-TB_WIN_IN_MAX + 1, TB_WIN_IN_MAX - 1)
    }

    /// Reduction in 1/1024 plies.
    #[inline]
    pub(super) fn reduction(&self, depth: i32, move_count: usize) -> i32 {
        self.lmr[(depth as usize).min(63)][move_count.min(63)]
    }

    /// The history bonus of a search to `depth` for the move that cut off.
    pub(super) fn stat_bonus(&self, depth: i32) -> i32 {
        let p = self.p;
        by_depth(
            depth,
            p.history_bonus_mul,
            p.history_bonus_offset,
            p.history_bonus_max,
        )
    }

    /// The history penalty of a search to `depth` for a move that was searched before the
    /// one that cut off.
    pub(super) fn stat_malus(&self, depth: i32) -> i32 {
        let p = self.p;
        by_depth(
            depth,
            p.history_malus_mul,
            p.history_malus_offset,
            p.history_malus_max,
        )
    }

    /// Checks the limits; true when the search must unwind.
    #[inline]
    pub(super) fn should_stop(&mut self) -> bool {
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

    pub(super) fn stop_all(&mut self) {
        self.stopped = true;
        self.sh.control.stop.store(true, Relaxed);
    }

    /// Draw by the fifty-move rule, insufficient material or repetition. A position repeated
    /// inside the search counts at once (the side that can repeat can keep repeating); one
    /// repeated only from the game before the root needs two earlier occurrences (threefold).
    pub(super) fn is_draw(&self, pos: &Position) -> bool {
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

    /// Records a root move's result: its score and line when it is the first move or raised
    /// alpha, otherwise "below alpha" (ordered by the previous iteration's score).
    pub(super) fn update_root_move(&mut self, m: Move, score: i32, alpha: i32, first: bool) {
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

    /// Stores a node's result in the hash table: its best move (`Move::NULL`: none, which keeps
    /// the move already stored for the position), its score made relative to the node (mate
    /// distances from here, not from the root) with the bound it is, and the raw static
    /// evaluation (`NO_EVAL` in check).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tt_store(
        &self,
        key: u64,
        ply: usize,
        depth: i32,
        best_move: Move,
        score: i32,
        bound: Bound,
        raw_eval: i32,
        pv: bool,
    ) {
        self.sh.tt.store(
            key,
            pack_move(best_move),
            score_to_tt(score, ply),
            raw_eval,
            depth,
            bound,
            pv,
        );
    }

    pub(super) fn update_pv(&mut self, ply: usize, m: Move) {
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let row = &mut head[ply];
        row[ply] = m;
        row[ply + 1..child_len].copy_from_slice(&tail[0][ply + 1..child_len]);
        self.pv_len[ply] = child_len;
    }
}

/// A history update of a search to `depth`: `mul` per ply less `offset`, within `0..=max`.
fn by_depth(depth: i32, mul: i32, offset: i32, max: i32) -> i32 {
    (mul * depth - offset).clamp(0, max)
}
