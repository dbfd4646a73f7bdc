//! The main search: principal-variation negamax alpha-beta. Pruning: mate distance,
//! transposition-table cutoffs, reverse futility, razoring, null move (verified at high depth),
//! late-move reductions and pruning, futility, history and SEE pruning; extensions: check and
//! singular (with multi-cut). A cutoff updates the killer, counter-move and history tables.

use chess_rules::{Bitboard, Move, Position, Role};

use super::node::{NodeKind, NonPv, Pv};
use super::thread::{STACK_OFFSET, Searcher};
use crate::history::{NO_PIECE_TO, piece_to};
use crate::movepick::{MovePicker, captured_role, is_tactical};
use crate::score::{DRAW, INFINITE, MAX_PLY, NO_EVAL, TB_WIN_IN_MAX, mate_in, mated_in};
use crate::see::{quiet_see_ge, see_ge};
use crate::tt::{Bound, pack_move, score_from_tt};

impl Searcher<'_> {
    #[allow(clippy::too_many_lines)]
    pub(super) fn negamax<N: NodeKind>(
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

        // Endgame tables: exact win, draw or loss once a capture or pawn move has brought the
        // position into them; a bound that cuts ends the node, and at a PV node a table win is
        // a floor (a loss a ceiling) for what the moves below find.
        let mut best = -INFINITE;
        let mut ceiling = INFINITE;
        if !N::ROOT
            && excluded.is_null()
            && let Some((v, bound)) = self.probe_tables(pos, ply)
        {
            let cuts = match bound {
                Bound::Exact => true,
                Bound::Lower => v >= beta,
                Bound::Upper => v <= alpha,
            };
            if cuts {
                let d = (depth + 6).min(MAX_PLY as i32 - 1);
                self.tt_store(key, ply, d, Move::NULL, v, bound, NO_EVAL, tt_pv);
                return v;
            }
            if N::PV {
                if bound == Bound::Lower {
                    best = v;
                    alpha = alpha.max(v);
                } else {
                    ceiling = v;
                }
            }
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
                && eval.abs() < TB_WIN_IN_MAX
                && beta.abs() < TB_WIN_IN_MAX
                && eval - p.rfp_margin * depth + p.rfp_improving * i32::from(improving) >= beta
            {
                return (eval + beta) / 2;
            }
            // Razoring: hopelessly below alpha; let the quiescence search confirm.
            if depth <= p.razor_max_depth
                && alpha.abs() < TB_WIN_IN_MAX
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
                && beta > -TB_WIN_IN_MAX
                && has_pieces(pos)
            {
                let r = p.nmp_base_reduction
                    + depth / p.nmp_depth_divisor
                    + ((eval - beta) / p.nmp_eval_divisor).min(3);
                let mut next = pos.clone();
                next.play_unchecked(Move::NULL);
                self.sh.tt.prefetch(next.zobrist());
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
                    let v = if v >= TB_WIN_IN_MAX { beta } else { v };
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
        let mut picker = MovePicker::new(tt_move, killers, counter, prev);
        let mut best_move = Move::NULL;
        let mut move_count = 0usize;
        let mut quiets = [Move::NULL; 64];
        let mut n_quiets = 0;
        let mut captures = [Move::NULL; 32];
        let mut n_captures = 0;
        let has_pieces_us = has_pieces(pos);

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
            // The enemy's attacks (for a quiet move's history and exchange) and the history.
            let (attacked, hist) = if quiet {
                let attacked = picker.threats(pos).all;
                (attacked, self.w.hist.quiet(us, m, attacked, prev))
            } else {
                (Bitboard::EMPTY, 0)
            };

            // Shallow-depth pruning, once a move has been searched without being mated. Direct
            // checks are kept: a quiet check is often the point of the position.
            if !N::ROOT
                && best > -TB_WIN_IN_MAX
                && has_pieces_us
                && !picker.check_squares(pos).gives_check(m)
            {
                let lmr_depth = (depth - 1 - self.reduction(depth, move_count) / 1024).max(0);
                if quiet {
                    let lmp = (p.lmp_base + depth * depth) / (2 - i32::from(improving));
                    if move_count as i32 > lmp {
                        picker.skip_quiets();
                        continue;
                    }
                    // (Not when looking for a quicker mate: no static margin reaches one.)
                    if !in_check
                        && alpha < TB_WIN_IN_MAX
                        && lmr_depth <= p.futility_max_depth
                        && eval
                            + p.futility_base
                            + p.futility_margin * lmr_depth
                            + p.futility_improving * i32::from(improving)
                            <= alpha
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    if lmr_depth <= 3 && hist < -p.history_prune_margin * depth {
                        continue;
                    }
                    if lmr_depth <= p.see_prune_max_depth
                        && !quiet_see_ge(
                            pos,
                            m,
                            attacked,
                            -p.see_quiet_margin * lmr_depth * lmr_depth,
                        )
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
                && tt_score.abs() < TB_WIN_IN_MAX
            {
                let singular_beta = tt_score - p.singular_margin * depth / 64;
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
            self.sh.tt.prefetch(next.zobrist());
            let gives_check = next.is_check();
            if gives_check
                && extension == 0
                && (ply as i32) < 2 * self.root_depth
                && see_ge(pos, m, 0)
            {
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
                    r += p.lmr_non_pv;
                }
                if cut_node {
                    r += p.lmr_cut_node;
                }
                if !improving {
                    r += p.lmr_not_improving;
                }
                if gives_check {
                    r -= p.lmr_gives_check;
                }
                if m == killers[0] || m == killers[1] || m == counter {
                    r -= p.lmr_refutation;
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
            let malus = self.stat_malus(depth);
            let hist = &mut self.w.hist;
            if !is_tactical(pos, best_move) {
                let e = &mut self.stack[ply + STACK_OFFSET];
                if e.killers[0] != best_move {
                    e.killers[1] = e.killers[0];
                    e.killers[0] = best_move;
                }
                hist.set_counter(prev[0], best_move);
                // A quiet was searched, so the picker has the threats already.
                let attacked = picker.threats(pos).all;
                hist.update_quiet(us, best_move, attacked, prev, bonus);
                for &q in &quiets[..n_quiets] {
                    hist.update_quiet(us, q, attacked, prev, -malus);
                }
            } else if let Some(v) = captured_role(pos, best_move) {
                hist.update_capture(us, best_move, v, bonus);
            }
            for &c in &captures[..n_captures] {
                if let Some(v) = captured_role(pos, c) {
                    hist.update_capture(us, c, v, -malus);
                }
            }
        }

        if N::PV {
            best = best.min(ceiling);
        }
        if excluded.is_null() && !(N::ROOT && self.pv_idx > 0) {
            let bound = if best >= beta {
                Bound::Lower
            } else if N::PV && !best_move.is_null() {
                Bound::Exact
            } else {
                Bound::Upper
            };
            self.tt_store(key, ply, depth, best_move, best, bound, raw_eval, tt_pv);
        }
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
