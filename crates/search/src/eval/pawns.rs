//! The pawn structure: doubled, isolated, backward, connected and passed pawns, scored per
//! side, with a cache keyed by the pawns (the structure changes far less often than the
//! position).

use chess_rules::{Bitboard, Color, Position, Role, pawn_attacks, pawn_attacks_set};

use super::masks::{ADJACENT_FILES, MASKS, forward, rank_bb, relative_rank};
use crate::params::EvalParams;
use crate::score::S;

#[derive(Clone, Copy, Default)]
pub(super) struct PawnEntry {
    white: u64,
    black: u64,
    valid: bool,
    pub(super) score: S,
    pub(super) passed: [u64; 2],
}

const PAWN_CACHE_SIZE: usize = 1 << 14;

/// A small cache of pawn structures, keyed by the pawns of both sides.
#[derive(Clone)]
pub(super) struct PawnCache {
    entries: Vec<PawnEntry>,
}

impl PawnCache {
    pub(super) fn new() -> PawnCache {
        PawnCache {
            entries: vec![PawnEntry::default(); PAWN_CACHE_SIZE],
        }
    }

    /// Forgets every entry (a new game starts).
    pub(super) fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| e.valid = false);
    }

    /// The pawn structure of `pos`: from the cache, or computed and cached.
    pub(super) fn probe(&mut self, p: &EvalParams, pos: &Position) -> PawnEntry {
        let white = pos.pieces(Color::White, Role::Pawn).0;
        let black = pos.pieces(Color::Black, Role::Pawn).0;
        let h =
            white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let idx = (h >> 50) as usize & (PAWN_CACHE_SIZE - 1);
        let e = self.entries[idx];
        if e.valid && e.white == white && e.black == black {
            return e;
        }
        let (ws, wp) = pawn_structure(p, pos, Color::White);
        let (bs, bp) = pawn_structure(p, pos, Color::Black);
        let e = PawnEntry {
            white,
            black,
            valid: true,
            score: ws - bs,
            passed: [wp, bp],
        };
        self.entries[idx] = e;
        e
    }
}

/// Pawn-structure score for `us` (from its side) and its passed pawns.
fn pawn_structure(p: &EvalParams, pos: &Position, us: Color) -> (S, u64) {
    let ui = us.index();
    let ours = pos.pieces(us, Role::Pawn);
    let theirs = pos.pieces(!us, Role::Pawn);
    let their_att = pawn_attacks_set(theirs, !us);
    let mut s = S::ZERO;
    let mut passed = 0u64;
    for sq in ours {
        let i = sq.index();
        let f = sq.file().index();
        let r = relative_rank(us, sq);
        let adj = Bitboard(ADJACENT_FILES[f]);
        let ahead = Bitboard(MASKS.forward[ui][i]);
        let doubled = ours.intersects(ahead);
        if doubled {
            s += p.doubled;
        }
        let phalanx = ours & adj & Bitboard(rank_bb(sq.rank().index()));
        let supported = ours & pawn_attacks(!us, sq);
        if !ours.intersects(adj) {
            s += p.isolated;
        } else if !ours.intersects(Bitboard(MASKS.support_span[ui][i]))
            && forward(us, sq).is_some_and(|stop| their_att.contains(stop))
        {
            s += p.backward;
        }
        if phalanx.has_any() || supported.has_any() {
            let c = p.connected[r];
            s += if phalanx.has_any() {
                c + S::new(c.mg / 2, c.eg / 2)
            } else {
                c
            };
        }
        if !doubled && !theirs.intersects(Bitboard(MASKS.passed_span[ui][i])) {
            s += p.passed[r];
            passed |= 1 << i;
        }
    }
    (s, passed)
}
