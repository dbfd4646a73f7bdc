//! Quiescence search: captures and queen promotions until the position is quiet, all evasions
//! when in check, and at its first ply also quiet checks (so that a mate threat shows).

use chess_rules::{Move, Position};

use super::node::NodeKind;
use super::thread::Searcher;
use crate::history::piece_to;
use crate::movepick::{MovePicker, captured_role, is_tactical};
use crate::score::{DRAW, INFINITE, MAX_PLY, NO_EVAL, mated_in};
use crate::see::{SEE_VALUE, see_ge};
use crate::tt::{Bound, score_from_tt};

impl Searcher<'_> {
    /// Quiescence: captures and queen promotions until the position is quiet, all evasions when
    /// in check, and at its first ply also quiet checks (so that a mate threat shows).
    pub(super) fn qsearch<N: NodeKind>(
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
                    self.tt_store(key, ply, depth, Move::NULL, eval, Bound::Lower, raw, false);
                }
                return eval;
            }
            alpha = alpha.max(eval);
            (raw, eval, eval + self.p.qs_futility_margin)
        };

        let mut picker = MovePicker::quiescence(tte.map_or(0, |e| e.mv), in_check, depth == 0);
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
                    // Delta pruning: a capture that cannot lift the score to alpha, unless it
                    // checks (a mate is worth more than any margin).
                    let gain = captured_role(pos, m).map_or(0, |r| SEE_VALUE[r.index()]);
                    if m.promotion().is_none()
                        && futility_base + gain <= alpha
                        && !picker.check_squares(pos).gives_check(m)
                    {
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
            self.sh.tt.prefetch(next.zobrist());
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
        // In check every evasion is searched, so nothing searched means there is none.
        if in_check && best == -INFINITE {
            return mated_in(ply);
        }
        let bound = if best >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        self.tt_store(key, ply, depth, best_move, best, bound, raw_eval, tt_pv);
        best
    }
}
