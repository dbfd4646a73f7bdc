//! The refresh cache of a king-bucketed network: for each side and king bucket, the last
//! accumulator computed there and the board it was computed for, so that a king entering a
//! bucket costs the pieces that changed since that side's king was last in it, not a sum over
//! the whole board.

use std::fmt;

use chess_rules::{Color, Position, Role};

use crate::MAX_ACTIVE;
use crate::accumulator::{Accumulator, MoveDelta, PlacedPiece};
use crate::network::Network;
use crate::simd;

/// One side's accumulator in one king bucket, with the pieces it holds.
#[derive(Clone)]
struct Entry {
    values: Box<[i16]>,
    /// The pieces the values hold: a bitboard per colour and role.
    boards: [[u64; 6]; 2],
}

/// Accumulators kept per side and king bucket (see the module documentation). Belongs to one
/// network; every answer equals a refresh from scratch.
///
/// ```
/// use chess_nn::{Accumulator, KingBuckets, MoveDelta, Network, RefreshCache};
/// use chess_rules::Position;
/// let mut parts = Network::clone(&Network::default_network()).into_parts();
/// parts.king_buckets = "00001111/2".parse().unwrap();
/// parts.ft_weights = parts.ft_weights.repeat(3);
/// let net = Network::from_parts(parts).unwrap();
/// let mut cache = RefreshCache::new(&net);
/// let pos = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
/// let m = pos.parse_uci("e1d1").unwrap(); // bucket 1 to bucket 0
/// let after = pos.play(m).unwrap();
/// let parent = Accumulator::from_position(&net, &pos);
/// let mut acc = parent.clone();
/// cache.update(&net, &mut acc, &parent, &MoveDelta::new(&pos, m), &after);
/// assert_eq!(acc, Accumulator::from_position(&net, &after));
/// ```
pub struct RefreshCache {
    buckets: usize,
    /// White's buckets, then black's.
    entries: Vec<Entry>,
}

impl fmt::Debug for RefreshCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefreshCache")
            .field("buckets", &self.buckets)
            .finish_non_exhaustive()
    }
}

impl RefreshCache {
    /// Empty boards (the biases) in every bucket of `net`.
    pub fn new(net: &Network) -> RefreshCache {
        let buckets = net.king_buckets().count();
        let entry = Entry {
            values: net.ft_biases().to_vec().into_boxed_slice(),
            boards: [[0; 6]; 2],
        };
        RefreshCache {
            buckets,
            entries: vec![entry; 2 * buckets],
        }
    }

    /// Sets `acc` to the accumulators of `after`, the position `delta`'s move leads to from
    /// `parent`'s, as [`Accumulator::update_or_refresh`] does: the perspective of a king the
    /// move takes into another bucket from this cache, the other updated from `parent`.
    pub fn update(
        &mut self,
        net: &Network,
        acc: &mut Accumulator,
        parent: &Accumulator,
        delta: &MoveDelta,
        after: &Position,
    ) {
        acc.update_with(net, parent, delta, |acc, p| {
            self.refresh(net, acc, after, p)
        });
    }

    /// Sets `perspective`'s half of `acc` to `pos`'s: the cached accumulator of its king's
    /// bucket brought up to `pos` by the pieces that differ, then kept as that bucket's.
    pub fn refresh(
        &mut self,
        net: &Network,
        acc: &mut Accumulator,
        pos: &Position,
        perspective: Color,
    ) {
        debug_assert_eq!(self.buckets, net.king_buckets().count());
        let layout = net.king_buckets();
        let king = pos.king_of(perspective);
        let bucket = layout.bucket(perspective, king);
        let offset = layout.offset(perspective, king);
        let entry = &mut self.entries[perspective as usize * self.buckets + bucket];
        let (mut adds, mut subs) = ([0u16; 2 * MAX_ACTIVE], [0u16; 2 * MAX_ACTIVE]);
        let (mut n_adds, mut n_subs) = (0, 0);
        let mut pieces = 0u8;
        for color in Color::ALL {
            for role in Role::ALL {
                let now = pos.pieces(color, role).0;
                pieces += now.count_ones() as u8;
                let before = &mut entry.boards[color as usize][role.index()];
                let feature = |sq: u32| {
                    let sq = chess_rules::Square::new(sq);
                    offset + PlacedPiece::new(color, role, sq).feature(perspective)
                };
                let mut added = now & !*before;
                while added != 0 {
                    adds[n_adds] = feature(added.trailing_zeros());
                    n_adds += 1;
                    added &= added - 1;
                }
                let mut removed = *before & !now;
                while removed != 0 {
                    subs[n_subs] = feature(removed.trailing_zeros());
                    n_subs += 1;
                    removed &= removed - 1;
                }
                *before = now;
            }
        }
        let h = net.hidden();
        let mut values = std::mem::take(&mut entry.values);
        acc.set_perspective_with(perspective, offset, pieces, |out| {
            simd::accumulate_diff(
                net.simd(),
                out,
                &values,
                net.ft_weights(),
                h,
                &adds[..n_adds],
                &subs[..n_subs],
            );
        });
        values.copy_from_slice(acc.perspective(perspective));
        entry.values = values;
    }
}
