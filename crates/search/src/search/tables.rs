//! The endgame tables in the search: exact lines at the root (distance to mate), and a
//! win/draw/loss probe at interior nodes that a capture or pawn move has just brought into the
//! tables.
//!
//! At the root a won or lost table position is not searched: every move's exact value comes
//! from the tables, the winner's line is the quickest mate and the loser's the longest defence,
//! so the engine mates within the table's distance whatever the defence. A drawn root is
//! searched among its drawing moves only (the search picks the one with the best practical
//! chances) and reported as the exact draw. Inside the tree a table win scores
//! `TB_WIN - ply`: below every mate the search proves, above every evaluation.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use chess_rules::{CastlingRights, Move, Position};
use chess_tablebase::{MoveValue, Tablebase, Value};

use super::report::{Info, Line, SearchResult};
use super::thread::Searcher;
use crate::score::{DRAW, MAX_PLY, Score, TB_WIN};
use crate::tt::Bound;

/// A table draw's win/draw/loss per mille: certain.
pub(super) const TABLE_DRAW_WDL: (u32, u32, u32) = (0, 1000, 0);

/// What the tables say about the root.
pub(super) enum RootTables {
    /// No tables, or the root is not in them: search as usual.
    Search,
    /// A table draw: search only these (drawing) moves.
    Draw(Vec<Move>),
    /// A table win or loss: the answer, every move valued, best first.
    Solved(Vec<MoveValue>),
}

impl Searcher<'_> {
    /// The root's moves (those in `legal`) valued by the tables, when the root is a table
    /// position and every move's successor can be looked up.
    pub(super) fn root_tables(&self, root: &Position, legal: &[Move]) -> RootTables {
        let Some(tb) = self.sh.tables.as_deref() else {
            return RootTables::Search;
        };
        if !in_tables(self.sh.tb_pieces, root) {
            return RootTables::Search;
        }
        let Ok(values) = tb.best_moves(root) else {
            return RootTables::Search;
        };
        self.sh.tb_hits.fetch_add(values.len() as u64, Relaxed);
        let values: Vec<MoveValue> = values
            .into_iter()
            .filter(|v| legal.contains(&v.mv))
            .collect();
        match values.first().map(|v| v.value) {
            None => RootTables::Search,
            Some(Value::Draw) => RootTables::Draw(
                values
                    .iter()
                    .filter(|v| v.value == Value::Draw)
                    .map(|v| v.mv)
                    .collect(),
            ),
            Some(_) => RootTables::Solved(values),
        }
    }

    /// The result of a won or lost table root: one line per move (MultiPV), each the move and
    /// the tables' best play after it.
    pub(super) fn table_result(
        &mut self,
        root: &Position,
        values: &[MoveValue],
        multipv: usize,
        on_info: &mut Option<&mut dyn FnMut(&Info)>,
    ) -> SearchResult {
        let tb = self.sh.tables.clone().expect("tables at a solved root");
        let mut lines = Vec::new();
        for (i, v) in values.iter().take(multipv.max(1)).enumerate() {
            let mut pv = vec![v.mv];
            let after = root.play(v.mv).expect("legal root move");
            pv.extend(table_pv(&tb, &after, &self.sh.tb_hits));
            let score = value_score(v.value);
            let time_ms = self.sh.control.elapsed_ms();
            lines.push(Line {
                multipv: i + 1,
                score,
                wdl: if v.value == Value::Draw {
                    TABLE_DRAW_WDL
                } else {
                    score.wdl()
                },
                depth: 1,
                seldepth: pv.len() as u32,
                nodes: 0,
                nps: 0,
                time_ms,
                pv,
                tablebase: true,
                tbhits: self.sh.tb_hits.load(Relaxed),
            });
        }
        if self.is_main() {
            self.report(lines.iter().cloned(), on_info);
            self.wait_while_pondering();
            self.sh.control.stop.store(true, Relaxed);
        } else {
            return SearchResult::default();
        }
        SearchResult {
            best_move: Some(values[0].mv),
            ponder: lines[0].pv.get(1).copied(),
            lines,
        }
    }

    /// An interior node's table value with the bound it is as a search score (a win is at
    /// least `TB_WIN - ply`, since the search may still find a mate; a draw is exact), when a
    /// capture or pawn move has just brought the position into the tables. A side already
    /// mated is left to the search, which scores the mate itself.
    pub(super) fn probe_tables(&mut self, pos: &Position, ply: usize) -> Option<(i32, Bound)> {
        if pos.halfmoves() != 0 || !in_tables(self.sh.tb_pieces, pos) {
            return None;
        }
        let tb = self.sh.tables.as_deref()?;
        let value = tb.probe_dtm(pos).ok()?;
        self.sh.tb_hits.fetch_add(1, Relaxed);
        match value {
            Value::Win(_) => Some((TB_WIN - ply as i32, Bound::Lower)),
            Value::Draw => Some((DRAW, Bound::Exact)),
            Value::Loss(0) => None,
            Value::Loss(_) => Some((-TB_WIN + ply as i32, Bound::Upper)),
        }
    }
}

/// Few enough pieces for the loaded tables (`max_pieces`: 0 without tables), and no castling
/// rights (the tables hold none).
fn in_tables(max_pieces: usize, pos: &Position) -> bool {
    pos.occupied().count() as usize <= max_pieces && pos.castling_rights() == CastlingRights::NONE
}

/// The tables' best play from `pos`: the winner's quickest mate against the loser's longest
/// defence (empty for a draw, whose moves the tables do not rank).
fn table_pv(tb: &Tablebase, pos: &Position, hits: &AtomicU64) -> Vec<Move> {
    let mut pv = Vec::new();
    let mut pos = pos.clone();
    while pv.len() < MAX_PLY {
        let Ok(moves) = tb.best_moves(&pos) else {
            break;
        };
        hits.fetch_add(moves.len() as u64, Relaxed);
        let Some(best) = moves.first() else {
            break;
        };
        if best.value == Value::Draw {
            break;
        }
        pv.push(best.mv);
        pos = pos.play(best.mv).expect("legal move");
    }
    pv
}

/// A table value for the side to move as a score: mate in moves (a win in `n` plies is a mate
/// in `(n + 1) / 2` moves, a loss in `n` plies a mate in `-n / 2`).
pub(super) fn value_score(value: Value) -> Score {
    match value {
        Value::Win(n) => Score::Mate((i32::from(n) + 1) / 2),
        Value::Draw => Score::Cp(0),
        Value::Loss(n) => Score::Mate(-i32::from(n) / 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values_become_mate_scores() {
        assert_eq!(value_score(Value::Win(1)), Score::Mate(1));
        assert_eq!(value_score(Value::Win(65)), Score::Mate(33));
        assert_eq!(value_score(Value::Loss(2)), Score::Mate(-1));
        assert_eq!(value_score(Value::Loss(64)), Score::Mate(-32));
        assert_eq!(value_score(Value::Draw), Score::Cp(0));
    }
}
