//! Perft: counting the leaf nodes of the legal move tree, the standard test of a move generator.

use crate::{Move, MoveList, Position};

/// Leaf nodes at `depth`, counting the last ply in bulk (legal moves are counted, not played).
///
/// ```
/// use chess_rules::{perft, Position};
/// assert_eq!(perft(&Position::startpos(), 3), 8902);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal(),
        _ => {
            let mut list = MoveList::new();
            pos.legal_moves_into(&mut list);
            let mut total = 0;
            for &m in list.iter() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                total += perft(&next, depth - 1);
            }
            total
        }
    }
}

/// Leaf nodes at `depth`, playing every move including the last ply (slower; exercises
/// move making and Zobrist updates at every node).
pub fn perft_make_all(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut list = MoveList::new();
    pos.legal_moves_into(&mut list);
    let mut total = 0;
    for &m in list.iter() {
        let mut next = pos.clone();
        next.play_unchecked(m);
        total += perft_make_all(&next, depth - 1);
    }
    total
}

/// Leaf nodes under each root move, in generation order.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut next = pos.clone();
            next.play_unchecked(m);
            (m, perft(&next, depth - 1))
        })
        .collect()
}
