//! Move-ordering statistics that a search thread keeps across searches of one game: butterfly
//! history (side, whether the enemy attacks the origin and the destination, from, to),
//! continuation history (piece-to of the moves one, two and four plies back, this piece-to),
//! capture history (piece-to, captured role) and counter moves.

use chess_rules::{Bitboard, Color, Move, Role};

/// Histories saturate at this magnitude: each update moves an entry part of the way towards
/// ±`HISTORY_MAX` (gravity), so old information fades instead of overflowing.
pub(crate) const HISTORY_MAX: i32 = 16_384;

/// Piece-to index: (colour, role, destination) in `0..768`.
pub(crate) const PIECE_TO: usize = 12 * 64;
/// Marks "no previous move" (root, or after a null move).
pub(crate) const NO_PIECE_TO: u16 = u16::MAX;

/// Piece-to of the earlier moves that continuation history follows: one, two and four plies
/// back (the last move, our own last move, our move before that).
pub(crate) type Prev = [u16; 3];

#[inline]
pub(crate) fn piece_to(color: Color, m: Move) -> u16 {
    ((color.index() * 6 + m.role().index()) * 64 + m.to().index()) as u16
}

#[inline]
fn apply(entry: &mut i16, bonus: i32) {
    let v = i32::from(*entry);
    let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    *entry = (v + bonus - v * bonus.abs() / HISTORY_MAX) as i16;
}

pub(crate) struct History {
    butterfly: Vec<i16>,
    capture: Vec<i16>,
    cont: Vec<i16>,
    counter: Vec<Move>,
}

impl History {
    pub(crate) fn new() -> History {
        History {
            butterfly: vec![0; 2 * 2 * 2 * 64 * 64],
            capture: vec![0; PIECE_TO * 6],
            cont: vec![0; PIECE_TO * PIECE_TO],
            counter: vec![Move::NULL; PIECE_TO],
        }
    }

    pub(crate) fn clear(&mut self) {
        self.butterfly.fill(0);
        self.capture.fill(0);
        self.cont.fill(0);
        self.counter.fill(Move::NULL);
    }

    /// `attacked`: the squares the enemy attacks. A move out of attack and one into it are
    /// different moves to this table.
    #[inline]
    fn butterfly_index(color: Color, m: Move, attacked: Bitboard) -> usize {
        let from_attacked = usize::from(attacked.contains(m.from()));
        let to_attacked = usize::from(attacked.contains(m.to()));
        (((color.index() * 2 + from_attacked) * 2 + to_attacked) * 64 + m.from().index()) * 64
            + m.to().index()
    }

    /// Ordering score of a quiet move given the squares the enemy attacks and the piece-to of
    /// the earlier moves.
    #[inline]
    pub(crate) fn quiet(&self, color: Color, m: Move, attacked: Bitboard, prev: Prev) -> i32 {
        let pt = piece_to(color, m) as usize;
        let mut s = i32::from(self.butterfly[Self::butterfly_index(color, m, attacked)]);
        for p in prev {
            if p != NO_PIECE_TO {
                s += i32::from(self.cont[p as usize * PIECE_TO + pt]);
            }
        }
        s
    }

    pub(crate) fn update_quiet(
        &mut self,
        color: Color,
        m: Move,
        attacked: Bitboard,
        prev: Prev,
        bonus: i32,
    ) {
        apply(
            &mut self.butterfly[Self::butterfly_index(color, m, attacked)],
            bonus,
        );
        let pt = piece_to(color, m) as usize;
        for p in prev {
            if p != NO_PIECE_TO {
                apply(&mut self.cont[p as usize * PIECE_TO + pt], bonus);
            }
        }
    }

    #[inline]
    pub(crate) fn capture(&self, color: Color, m: Move, captured: Role) -> i32 {
        i32::from(self.capture[piece_to(color, m) as usize * 6 + captured.index()])
    }

    pub(crate) fn update_capture(&mut self, color: Color, m: Move, captured: Role, bonus: i32) {
        apply(
            &mut self.capture[piece_to(color, m) as usize * 6 + captured.index()],
            bonus,
        );
    }

    #[inline]
    pub(crate) fn counter(&self, prev: u16) -> Move {
        if prev == NO_PIECE_TO {
            Move::NULL
        } else {
            self.counter[prev as usize]
        }
    }

    pub(crate) fn set_counter(&mut self, prev: u16, m: Move) {
        if prev != NO_PIECE_TO {
            self.counter[prev as usize] = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gravity_keeps_entries_bounded() {
        let mut e = 0i16;
        for _ in 0..1000 {
            apply(&mut e, 2000);
        }
        assert!(i32::from(e) <= HISTORY_MAX && e > 15_000);
        for _ in 0..1000 {
            apply(&mut e, -2000);
        }
        assert!(i32::from(e) >= -HISTORY_MAX && e < -15_000);
    }

    #[test]
    fn a_move_out_of_attack_is_not_the_same_move_into_quiet() {
        let pos = chess_rules::Position::default();
        let m = pos.parse_uci("g1f3").unwrap();
        let none = [NO_PIECE_TO; 3];
        let from: Bitboard = m.from().into();
        let to: Bitboard = m.to().into();
        let mut h = History::new();
        h.update_quiet(Color::White, m, from, none, 1000);
        assert!(h.quiet(Color::White, m, from, none) > 0);
        assert_eq!(h.quiet(Color::White, m, Bitboard::EMPTY, none), 0);
        assert_eq!(h.quiet(Color::White, m, to, none), 0);
        assert_eq!(h.quiet(Color::White, m, from | to, none), 0);
        // Squares other than the move's own do not matter.
        let elsewhere: Bitboard = pos.parse_uci("e2e4").unwrap().to().into();
        assert!(h.quiet(Color::White, m, from | elsewhere, none) > 0);
    }
}
