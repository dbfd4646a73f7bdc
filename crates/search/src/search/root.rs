//! The root: iterative deepening, an aspiration window around each iteration's search, MultiPV,
//! the soft time limit between iterations, and the lines and result the search reports.

use std::sync::atomic::Ordering::Relaxed;

use chess_rules::{Move, Position};

use super::node::Root;
use super::report::{Info, Line, SearchResult};
use super::tables::{RootTables, TABLE_DRAW_WDL};
use super::thread::{RootMove, Searcher};
use crate::score::{INFINITE, MATE, MATE_IN_MAX, MAX_PLY, Score};
use crate::tt::{Bound, pack_move};

impl Searcher<'_> {
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
                tablebase: false,
                tbhits: 0,
            };
            self.report([line.clone()], &mut on_info);
            self.wait_while_pondering();
            return SearchResult {
                best_move: None,
                ponder: None,
                lines: vec![line],
            };
        }
        match self.root_tables(&root, &legal) {
            RootTables::Search => {}
            RootTables::Draw(drawing) => {
                legal = drawing;
                self.table_draw = true;
            }
            RootTables::Solved(values) => {
                let multipv = self.sh.multipv;
                return self.table_result(&root, &values, multipv, &mut on_info);
            }
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
            self.report((0..multipv).map(|i| self.line(i)), &mut on_info);
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
        // A search cut short inside an iteration (stop, node or time limit) last reported at
        // the iteration before: its lines now, with every node it searched.
        if self.stopped {
            self.report(lines.iter().cloned(), &mut on_info);
        }
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

    /// Reports `lines` (exact scores) to `on_info`, if there is one; without one the lines
    /// are never built.
    pub(super) fn report(
        &self,
        lines: impl IntoIterator<Item = Line>,
        on_info: &mut Option<&mut dyn FnMut(&Info)>,
    ) {
        if let Some(cb) = on_info.as_mut() {
            let hashfull = self.sh.tt.hashfull();
            for line in lines {
                cb(&Info {
                    line,
                    bound: None,
                    hashfull,
                });
            }
        }
    }

    /// `go infinite` and `go ponder` never return before `stop` (or `ponderhit`).
    pub(super) fn wait_while_pondering(&self) {
        let c = &self.sh.control;
        while !c.stop.load(Relaxed) && (self.sh.limits.infinite || c.pondering.load(Relaxed)) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    pub(super) fn ponder_from_tt(&self, root: &Position, best: Move) -> Option<Move> {
        let mut next = root.clone();
        next.play_unchecked(best);
        let e = self.sh.tt.probe(next.zobrist())?;
        next.legal_moves()
            .iter()
            .copied()
            .find(|&m| e.mv != 0 && pack_move(m) == e.mv)
    }

    pub(super) fn line(&self, i: usize) -> Line {
        let rm = &self.root_moves[i];
        let (v, depth) = if rm.score != -INFINITE {
            (rm.score, rm.depth)
        } else if rm.prev_score != -INFINITE {
            (rm.prev_score, self.completed_depth)
        } else {
            (0, 0)
        };
        // A table draw is exact whatever the search thinks of its practical chances.
        let score = if self.table_draw {
            Score::Cp(0)
        } else {
            Score::from_internal(v)
        };
        let time_ms = self.sh.control.elapsed_ms();
        let nodes = self.sh.total_nodes().max(self.nodes);
        Line {
            multipv: i + 1,
            score,
            wdl: if self.table_draw {
                TABLE_DRAW_WDL
            } else {
                score.wdl()
            },
            depth: depth.max(1) as u32,
            seldepth: rm.seldepth.max(1) as u32,
            nodes,
            nps: nodes * 1000 / time_ms.max(1),
            time_ms,
            pv: rm.pv.clone(),
            tablebase: self.table_draw,
            tbhits: self.sh.tb_hits.load(Relaxed),
        }
    }

    pub(super) fn aspiration(
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
}
