//! Dense position indexing with symmetry.
//!
//! ```text
//! index = side_to_move * half + ((king_pair * r1 + s1) * r2 + s2) ...
//! ```
//! The two kings come first, as one entry of a reduced king-pair table: without pawns the
//! white king stands in the a1-d1-d4 triangle (and, on its diagonal, the black king on or below
//! the a1-h8 diagonal), 462 pairs; with pawns the white king stands on files a-d, 1806 pairs.
//! Each other piece then takes 64 squares (48 for a pawn, ranks 2-7). Of the eight board
//! symmetries (four reflections, four rotations) a pawnless position may use all, a position
//! with pawns only the left-right mirror. A position's index is the smallest index over the
//! symmetries its material allows, with identical pieces sorted by square, so each class of
//! equivalent positions has exactly one index; the others hold 0 and are never read.

use chess_rules::{Color, Role};

use crate::board::Board;
use crate::material::Material;

const NONE: u16 = u16::MAX;

/// `SYM[t][sq]`: the square `sq` maps to under symmetry `t` (0 is the identity, 1 the
/// left-right mirror; 2..8 only without pawns).
const SYM: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut s = 0;
    while s < 8 {
        let mut sq = 0;
        while sq < 64 {
            let (mut x, mut y) = (sq % 8, sq / 8);
            if s & 1 != 0 {
                x = 7 - x;
            }
            if s & 2 != 0 {
                y = 7 - y;
            }
            if s & 4 != 0 {
                let tmp = x;
                x = y;
                y = tmp;
            }
            t[s][sq] = (y * 8 + x) as u8;
            sq += 1;
        }
        s += 1;
    }
    t
};
const _: () = assert!(SYM[1][0] == 7 && SYM[4][1] == 8 && SYM[2][0] == 56);

/// The index space of one ending.
#[derive(Clone, Debug)]
pub(crate) struct Indexer {
    material: Material,
    /// Non-king pieces in slot order.
    slots: Vec<(Color, Role)>,
    /// Runs of identical pieces, as (first slot, length), among the non-king slots.
    groups: Vec<(usize, usize)>,
    kpair_of: Vec<u16>,
    kpairs: Vec<(u8, u8)>,
    /// For each white-king square, the symmetries that bring it into the king-pair table's
    /// region (one, or two on a diagonal): only these can give an index.
    wk_syms: [([u8; 8], u8); 64],
    half: u64,
}

fn adjacent_or_same(a: u8, b: u8) -> bool {
    let (ax, ay) = (i32::from(a % 8), i32::from(a / 8));
    let (bx, by) = (i32::from(b % 8), i32::from(b / 8));
    (ax - bx).abs() <= 1 && (ay - by).abs() <= 1
}

impl Indexer {
    pub fn new(material: Material) -> Indexer {
        let slots = material.slots();
        let mut groups = Vec::new();
        let mut i = 0;
        while i < slots.len() {
            let mut j = i + 1;
            while j < slots.len() && slots[j] == slots[i] {
                j += 1;
            }
            if j - i > 1 {
                groups.push((i, j - i));
            }
            i = j;
        }
        let pawns = material.has_pawns();
        let mut kpair_of = vec![NONE; 64 * 64];
        let mut kpairs = Vec::new();
        for wk in 0..64u8 {
            let (x, y) = (wk % 8, wk / 8);
            let allowed = if pawns { x < 4 } else { x < 4 && y <= x };
            if !allowed {
                continue;
            }
            for bk in 0..64u8 {
                if adjacent_or_same(wk, bk) {
                    continue;
                }
                if !pawns && x == y && bk / 8 > bk % 8 {
                    continue;
                }
                kpair_of[usize::from(wk) * 64 + usize::from(bk)] = kpairs.len() as u16;
                kpairs.push((wk, bk));
            }
        }
        let mut wk_syms = [([0u8; 8], 0u8); 64];
        for (wk, entry) in wk_syms.iter_mut().enumerate() {
            for (t, sym) in SYM.iter().enumerate().take(if pawns { 2 } else { 8 }) {
                let to = usize::from(sym[wk]);
                if kpair_of[to * 64..to * 64 + 64].iter().any(|&k| k != NONE) {
                    entry.0[usize::from(entry.1)] = t as u8;
                    entry.1 += 1;
                }
            }
        }
        let mut half = kpairs.len() as u64;
        for &(_, role) in &slots {
            half *= if role == Role::Pawn { 48 } else { 64 };
        }
        Indexer {
            material,
            slots,
            groups,
            kpair_of,
            kpairs,
            wk_syms,
            half,
        }
    }

    pub fn material(&self) -> Material {
        self.material
    }

    /// Entries in the table (both sides to move).
    pub fn size(&self) -> u64 {
        2 * self.half
    }

    #[cfg(test)]
    pub fn king_pairs(&self) -> usize {
        self.kpairs.len()
    }

    /// The index of squares given in slot order (kings first), under no symmetry.
    fn raw(&self, sqs: &[u8], turn: Color) -> Option<u64> {
        let kp = self.kpair_of[usize::from(sqs[0]) * 64 + usize::from(sqs[1])];
        if kp == NONE {
            return None;
        }
        let mut idx = u64::from(kp);
        for (k, &(_, role)) in self.slots.iter().enumerate() {
            let s = sqs[k + 2];
            idx = if role == Role::Pawn {
                idx * 48 + u64::from(s - 8)
            } else {
                idx * 64 + u64::from(s)
            };
        }
        Some(idx + if turn == Color::White { 0 } else { self.half })
    }

    /// The canonical index of a board whose pieces are in slot order (white king, black king,
    /// then the material's slots). Illegal placements may still get an index; callers check.
    pub fn index(&self, board: &Board) -> Option<u64> {
        let n = board.len;
        debug_assert_eq!(n, self.slots.len() + 2);
        let (syms, count) = &self.wk_syms[usize::from(board.pieces[0].sq)];
        let mut best: Option<u64> = None;
        let mut sqs = [0u8; crate::board::MAX_PIECES];
        for &t in &syms[..usize::from(*count)] {
            let sym = &SYM[usize::from(t)];
            for (k, p) in board.list().iter().enumerate() {
                sqs[k] = sym[usize::from(p.sq)];
            }
            for &(start, len) in &self.groups {
                sqs[start + 2..start + 2 + len].sort_unstable();
            }
            if let Some(i) = self.raw(&sqs[..n], board.turn) {
                best = Some(best.map_or(i, |b| b.min(i)));
            }
        }
        best
    }

    /// The board an index stands for (pieces in slot order). Not every index is a legal or
    /// canonical position.
    pub fn board(&self, mut idx: u64) -> Board {
        let turn = if idx >= self.half {
            Color::Black
        } else {
            Color::White
        };
        idx %= self.half;
        let mut sqs = [0u8; crate::board::MAX_PIECES];
        for (k, &(_, role)) in self.slots.iter().enumerate().rev() {
            sqs[k + 2] = if role == Role::Pawn {
                let s = (idx % 48) as u8 + 8;
                idx /= 48;
                s
            } else {
                let s = (idx % 64) as u8;
                idx /= 64;
                s
            };
        }
        let (wk, bk) = self.kpairs[idx as usize];
        let mut b = Board::new(turn);
        b.push(Color::White, Role::King, wk);
        b.push(Color::Black, Role::King, bk);
        for (k, &(color, role)) in self.slots.iter().enumerate() {
            b.push(color, role, sqs[k + 2]);
        }
        b
    }

    /// The board of `idx` when it is a legal position and the canonical index of its class.
    pub fn canonical_board(&self, idx: u64) -> Option<Board> {
        let b = self.board(idx);
        (b.is_legal() && self.index(&b) == Some(idx)).then_some(b)
    }

    /// Puts a board of this ending's material (any piece order) into slot order.
    pub fn arrange(&self, board: &Board) -> Board {
        let mut out = Board::new(board.turn);
        let mut used = [false; crate::board::MAX_PIECES];
        let order = [(Color::White, Role::King), (Color::Black, Role::King)];
        for &(color, role) in order.iter().chain(self.slots.iter()) {
            let k = (0..board.len)
                .find(|&k| {
                    !used[k] && board.pieces[k].color == color && board.pieces[k].role == role
                })
                .expect("board has the indexer's material");
            used[k] = true;
            out.push(color, role, board.pieces[k].sq);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn king_pair_tables_have_the_classic_sizes() {
        assert_eq!(Indexer::new("KQvK".parse().unwrap()).king_pairs(), 462);
        assert_eq!(Indexer::new("KPvK".parse().unwrap()).king_pairs(), 1806);
    }

    #[test]
    fn every_symmetric_image_gets_the_same_index_and_decodes_back() {
        for name in ["KBBvK", "KPvKP", "KRvKN"] {
            let ix = Indexer::new(name.parse().unwrap());
            let mut checked = 0;
            for idx in (0..ix.size()).step_by(997) {
                let Some(b) = ix.canonical_board(idx) else {
                    continue;
                };
                checked += 1;
                let syms = if ix.material().has_pawns() { 2 } else { 8 };
                for sym in SYM.iter().take(syms) {
                    let mut t = b;
                    for p in &mut t.pieces[..t.len] {
                        p.sq = sym[usize::from(p.sq)];
                    }
                    // Identical pieces given in the other order too.
                    t.pieces[2..t.len].reverse();
                    let t = ix.arrange(&t);
                    assert_eq!(ix.index(&t), Some(idx), "{name} {}", t.fen());
                }
            }
            assert!(checked > 100, "{name}: {checked}");
        }
    }
}
