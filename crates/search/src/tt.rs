//! The transposition table, shared by all search threads without locks.
//!
//! The table is a power-of-two number of 64-byte buckets of four entries. An entry is two
//! `AtomicU64`s: the data word and the key xor the data word. A reader accepts an entry only when
//! the two words xor back to its key, so a write torn by another thread reads as a miss instead of
//! as a wrong entry. Relaxed ordering is enough: every entry is self-validating.
//!
//! Mate scores are stored relative to the node (distance to mate from there), and converted back
//! relative to the root when read, so a mate found through a transposition keeps its true distance.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

use chess_rules::{Move, Role, Square};

use crate::score::{NO_EVAL, TB_WIN_IN_MAX};

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is at most the score (the search failed low).
    Upper = 1,
    /// The true value is at least the score (the search failed high).
    Lower = 2,
    /// The score is exact.
    Exact = 3,
}

impl Bound {
    fn from_bits(b: u64) -> Option<Bound> {
        match b {
            1 => Some(Bound::Upper),
            2 => Some(Bound::Lower),
            3 => Some(Bound::Exact),
            _ => None,
        }
    }
}

/// A move packed into 16 bits: from (6), to (6), promotion (3; 0 = none). 0 means no move.
pub(crate) fn pack_move(m: Move) -> u16 {
    if m.is_null() {
        return 0;
    }
    let promo = match m.promotion() {
        None => 0,
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(_) => 4,
    };
    (m.from() as u16) | (m.to() as u16) << 6 | promo << 12
}

/// The squares and promotion of a packed move; `None` for no move (0) or a promotion code
/// that [`pack_move`] never writes.
#[inline]
pub(crate) fn unpack_move(packed: u16) -> Option<(Square, Square, Option<Role>)> {
    if packed == 0 {
        return None;
    }
    let promotion = match packed >> 12 {
        0 => None,
        1 => Some(Role::Knight),
        2 => Some(Role::Bishop),
        3 => Some(Role::Rook),
        4 => Some(Role::Queen),
        _ => return None,
    };
    let from = Square::new(u32::from(packed & 63));
    let to = Square::new(u32::from((packed >> 6) & 63));
    Some((from, to, promotion))
}

/// One entry as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    /// Best move, packed (0 = none); matched against the legal moves when used.
    pub mv: u16,
    /// Score as stored (node-relative for mates): convert with [`score_from_tt`].
    pub score: i32,
    /// Static evaluation, or the no-eval marker when the side to move was in check.
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
    /// The node was once on a principal variation.
    pub pv: bool,
}

const BUCKET_SLOTS: usize = 4;
const DEPTH_OFFSET: i32 = 8;
const GENERATION_MASK: u8 = 31;

#[derive(Debug, Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct Bucket {
    slots: [Slot; BUCKET_SLOTS],
}

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

/// A transposition table of a fixed size, shared between threads through `&self`.
///
/// ```
/// use chess_search::{Bound, TranspositionTable};
/// let tt = TranspositionTable::new(1);
/// tt.prefetch(0xdead_beef); // a hint only: the probe below answers the same either way
/// tt.store(0xdead_beef, 0, 17, 12, 5, Bound::Exact, true);
/// let e = tt.probe(0xdead_beef).unwrap();
/// assert_eq!((e.score, e.eval, e.depth), (17, 12, 5));
/// assert!(tt.probe(0xfeed).is_none());
/// ```
#[derive(Debug)]
pub struct TranspositionTable {
    buckets: Box<[Bucket]>,
    generation: AtomicU8,
}

impl TranspositionTable {
    /// A table of at most `mb` mebibytes (at least one bucket), rounded down to a power of two.
    pub fn new(mb: usize) -> TranspositionTable {
        let bytes = mb.max(1).saturating_mul(1 << 20);
        let wanted = (bytes / std::mem::size_of::<Bucket>()).max(1);
        let count = if wanted.is_power_of_two() {
            wanted
        } else {
            wanted.next_power_of_two() / 2
        };
        let buckets = (0..count).map(|_| Bucket::default()).collect();
        TranspositionTable {
            buckets,
            generation: AtomicU8::new(0),
        }
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    /// Empties the table.
    pub fn clear(&self) {
        for b in self.buckets.iter() {
            for s in &b.slots {
                s.check.store(0, Relaxed);
                s.data.store(0, Relaxed);
            }
        }
        self.generation.store(0, Relaxed);
    }

    /// Starts a new search: older entries become cheaper to replace.
    pub fn new_search(&self) {
        let g = self.generation.load(Relaxed);
        self.generation
            .store(g.wrapping_add(1) & GENERATION_MASK, Relaxed);
    }

    #[inline]
    fn bucket(&self, key: u64) -> &Bucket {
        // The low bits pick the bucket; the full key is checked through the xor word.
        &self.buckets[key as usize & (self.buckets.len() - 1)]
    }

    /// Starts loading `key`'s bucket into the cache, so that the probe that follows a move
    /// (after the evaluation's update) does not wait for memory. A hint: nothing else changes.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let bucket: *const Bucket = self.bucket(key);
            // SAFETY: a prefetch is a hint to the cache that never faults and reads nothing
            // into the program; the pointer is that of a live bucket in any case.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(bucket.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry stored for `key`, if any.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        for s in &self.bucket(key).slots {
            let data = s.data.load(Relaxed);
            let check = s.check.load(Relaxed);
            if data != 0 && check ^ data == key {
                return Some(unpack(data));
            }
        }
        None
    }

    /// Stores a search result. `score` must already be node-relative ([`score_to_tt`]).
    /// A move of 0 keeps the move stored for the same position.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        mv: u16,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        pv: bool,
    ) {
        let generation = self.generation.load(Relaxed);
        let bucket = self.bucket(key);
        let mut victim = 0;
        let mut victim_worth = i32::MAX;
        for (i, s) in bucket.slots.iter().enumerate() {
            let data = s.data.load(Relaxed);
            let check = s.check.load(Relaxed);
            if data == 0 {
                if victim_worth > i32::MIN {
                    victim = i;
                    victim_worth = i32::MIN;
                }
                continue;
            }
            if check ^ data == key {
                let old = unpack(data);
                // Keep a deeper result of this search unless the new one is exact.
                let old_gen = (data >> 59) as u8;
                if bound != Bound::Exact && depth + 3 < old.depth && old_gen == generation {
                    return;
                }
                let mv = if mv == 0 { old.mv } else { mv };
                write(s, key, mv, score, eval, depth, bound, pv, generation);
                return;
            }
            let age = i32::from(generation.wrapping_sub((data >> 59) as u8) & GENERATION_MASK);
            let worth = unpack(data).depth - 8 * age;
            if worth < victim_worth {
                victim = i;
                victim_worth = worth;
            }
        }
        write(
            &bucket.slots[victim],
            key,
            mv,
            score,
            eval,
            depth,
            bound,
            pv,
            generation,
        );
    }

    /// Per-mille of sampled entries written during the current search.
    pub fn hashfull(&self) -> u32 {
        let generation = u64::from(self.generation.load(Relaxed));
        let buckets = self.buckets.len().min(250);
        let mut used = 0;
        for b in &self.buckets[..buckets] {
            for s in &b.slots {
                let d = s.data.load(Relaxed);
                if d != 0 && d >> 59 == generation {
                    used += 1;
                }
            }
        }
        (used * 1000 / (buckets * BUCKET_SLOTS)) as u32
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn write(
    s: &Slot,
    key: u64,
    mv: u16,
    score: i32,
    eval: i32,
    depth: i32,
    bound: Bound,
    pv: bool,
    generation: u8,
) {
    let score = score.clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16;
    let eval = eval.clamp(NO_EVAL, i32::from(i16::MAX)) as i16;
    let depth = (depth + DEPTH_OFFSET).clamp(1, 255) as u64;
    let data = u64::from(mv)
        | u64::from(score as u16) << 16
        | u64::from(eval as u16) << 32
        | depth << 48
        | (bound as u64) << 56
        | u64::from(pv) << 58
        | u64::from(generation & GENERATION_MASK) << 59;
    s.data.store(data, Relaxed);
    s.check.store(key ^ data, Relaxed);
}

#[inline]
fn unpack(data: u64) -> TtEntry {
    TtEntry {
        mv: data as u16,
        score: i32::from((data >> 16) as u16 as i16),
        eval: i32::from((data >> 32) as u16 as i16),
        depth: ((data >> 48) & 0xff) as i32 - DEPTH_OFFSET,
        bound: Bound::from_bits((data >> 56) & 3).unwrap_or(Bound::Upper),
        pv: (data >> 58) & 1 == 1,
    }
}

/// A root-relative score made node-relative for storing at `ply`.
///
/// ```
/// use chess_search::{score_from_tt, score_to_tt};
/// // Mate in 5 plies from the root, found 3 plies deep: mate in 2 plies from that node.
/// assert_eq!(score_to_tt(32_000 - 5, 3), 32_000 - 2);
/// assert_eq!(score_from_tt(32_000 - 2, 3), 32_000 - 5);
/// assert_eq!(score_to_tt(120, 3), 120);
/// ```
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    // Table wins count their distance from the root as mates do.
    if score >= TB_WIN_IN_MAX {
        score + ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        score - ply as i32
    } else {
        score
    }
}

/// A stored node-relative score made root-relative again at `ply`.
pub fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_IN_MAX {
        score - ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::{MATE, mate_in, mated_in};

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let tt = TranspositionTable::new(1);
        // Found at ply 7: we mate at ply 11 (4 plies from this node).
        let key = 0x1234_5678_9abc_def0;
        tt.store(
            key,
            0,
            score_to_tt(mate_in(11), 7),
            0,
            6,
            Bound::Exact,
            false,
        );
        let e = tt.probe(key).unwrap();
        assert_eq!(e.score, MATE - 4);
        // Reached again through a transposition at ply 3: mate at ply 7 from the root.
        assert_eq!(score_from_tt(e.score, 3), mate_in(7));
        // And the mirror image for being mated.
        tt.store(
            key,
            0,
            score_to_tt(mated_in(10), 4),
            0,
            6,
            Bound::Exact,
            false,
        );
        let e = tt.probe(key).unwrap();
        assert_eq!(e.score, -MATE + 6);
        assert_eq!(score_from_tt(e.score, 2), mated_in(8));
    }

    #[test]
    fn store_and_probe_round_trip() {
        let tt = TranspositionTable::new(1);
        assert!(tt.size_bytes() <= 1 << 20 && tt.size_bytes().is_power_of_two());
        tt.store(42, 0x0fff, -1234, NO_EVAL, -1, Bound::Upper, true);
        let e = tt.probe(42).unwrap();
        assert_eq!(
            e,
            TtEntry {
                mv: 0x0fff,
                score: -1234,
                eval: NO_EVAL,
                depth: -1,
                bound: Bound::Upper,
                pv: true
            }
        );
        // Same bucket, different key: a miss.
        assert!(tt.probe(42 + (1 << 40)).is_none());
        // A move of 0 keeps the old move.
        tt.store(42, 0, 5, 5, 3, Bound::Lower, false);
        assert_eq!(tt.probe(42).unwrap().mv, 0x0fff);
    }

    #[test]
    fn replacement_prefers_old_and_shallow_entries() {
        let tt = TranspositionTable::new(1);
        let n = tt.buckets.len() as u64;
        // Fill one bucket with five keys: the shallowest goes.
        for (i, depth) in [(0u64, 9), (1, 2), (2, 7), (3, 8)] {
            tt.store(5 + i * n, 0, 0, 0, depth, Bound::Exact, false);
        }
        tt.store(5 + 4 * n, 0, 0, 0, 4, Bound::Exact, false);
        assert!(tt.probe(5 + n).is_none());
        assert!(tt.probe(5).is_some() && tt.probe(5 + 4 * n).is_some());
        // Entries from older searches are replaced before deeper current ones.
        for _ in 0..3 {
            tt.new_search();
        }
        tt.store(5 + 5 * n, 0, 0, 0, 1, Bound::Exact, false);
        assert!(tt.probe(5 + 5 * n).is_some());
        assert_eq!(tt.hashfull(), 1);
    }

    #[test]
    fn hashfull_counts_current_entries() {
        let tt = TranspositionTable::new(1);
        for k in 0..500u64 {
            tt.store(k, 0, 0, 0, 1, Bound::Exact, false);
        }
        // One entry in each of the 250 sampled buckets of four.
        assert_eq!(tt.hashfull(), 250);
        tt.clear();
        assert_eq!(tt.hashfull(), 0);
    }
}
