//! Static evaluation.
//!
//! The search asks an [`Evaluator`] for a score; [`HandEval`] is the hand-written one: material
//! and piece-square tables tapered between middlegame and endgame by the phase, bishop pair, pawn
//! structure, mobility, king safety, rooks on files, threats, passed pawns and some endgame
//! knowledge. The terms are `hand.rs`, the pawn structure (and its cache) `pawns.rs`, the
//! endgame knowledge `endgame.rs`, the piece-square shapes `tables.rs` and the bitboard masks
//! `masks.rs`. A neural network plugs in by implementing the same trait (see
//! [`crate::NnueEval`]), using its incremental hooks to follow the search move by move.

mod endgame;
mod hand;
mod masks;
mod pawns;
mod tables;
#[cfg(test)]
mod tests;

use chess_rules::{Move, Position};

pub use self::hand::HandEval;

/// A static evaluation function.
///
/// Each search thread owns one, so implementations may keep caches (`&mut self`).
///
/// ```
/// use chess_rules::Position;
/// use chess_search::{Evaluator, HandEval};
/// let mut eval = HandEval::default();
/// let start = eval.evaluate(&Position::startpos());
/// assert!(start.abs() < 50);
/// ```
pub trait Evaluator: Send {
    /// The position's value in centipawns from the side to move's point of view. It must stay
    /// well inside ±30000 (mate scores live beyond that).
    fn evaluate(&mut self, pos: &Position) -> i32;

    /// Forgets cached state (a new game starts).
    fn clear(&mut self) {}

    // Incremental hooks. The search calls them around every move it makes in its tree, so an
    // evaluator can keep state in step with the position it will be asked about (NNUE
    // accumulators). Each `on_make`/`on_null_move` is matched by one `on_unmake`. The
    // defaults do nothing: a stateless evaluator ignores them.

    /// A search starts at `root`: rebuild any incremental state from it.
    fn on_search_start(&mut self, _root: &Position) {}

    /// The search plays `m` in `before`, reaching `after`.
    fn on_make(&mut self, _before: &Position, _m: Move, _after: &Position) {}

    /// The search passes (a null move) in `before`, reaching `after`.
    fn on_null_move(&mut self, _before: &Position, _after: &Position) {}

    /// The search takes back the latest `on_make` or `on_null_move`.
    fn on_unmake(&mut self) {}
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        (**self).evaluate(pos)
    }
    fn clear(&mut self) {
        (**self).clear();
    }
    fn on_search_start(&mut self, root: &Position) {
        (**self).on_search_start(root);
    }
    fn on_make(&mut self, before: &Position, m: Move, after: &Position) {
        (**self).on_make(before, m, after);
    }
    fn on_null_move(&mut self, before: &Position, after: &Position) {
        (**self).on_null_move(before, after);
    }
    fn on_unmake(&mut self) {
        (**self).on_unmake();
    }
}
