//! The input features and batches of them.
//!
//! Each perspective sees 768 features, one per (colour relative to the perspective, role,
//! square relative to the perspective):
//!
//! ```text
//! index = colour_rel * 384 + role * 64 + square_rel
//!   colour_rel  0 for the perspective's own pieces, 1 for the other side's
//!   role        pawn 0, knight 1, bishop 2, rook 3, queen 4, king 5
//!   square_rel  a1 = 0 .. h8 = 63 for white's perspective, square ^ 56 (the board flipped
//!               vertically) for black's
//! ```
//!
//! A network with king buckets (format version 3) has `K` such sets of 768 features, and a
//! perspective uses the set its own king's square selects ([`KingBuckets`]):
//! `index = bucket(king_rel) * 768 + colour_rel * 384 + role * 64 + square_rel`.

use chess_rules::{Color, Position, Role, Square};

use crate::MAX_ACTIVE;
use crate::error::{BackendError, FeatureError};
use crate::king_buckets::KingBuckets;

/// The feature index of a `color` `role` on `square`, seen from `perspective`.
///
/// ```
/// use chess_nn::feature_index;
/// use chess_rules::{Color, Role, Square};
/// // White's own king on e1, from white's side: 0 * 384 + 5 * 64 + 4.
/// assert_eq!(feature_index(Color::White, Color::White, Role::King, Square::E1), 324);
/// // The same king from black's side: an enemy piece, board flipped (e1 becomes e8 = 60).
/// assert_eq!(feature_index(Color::Black, Color::White, Role::King, Square::E1), 384 + 320 + 60);
/// ```
#[inline]
pub const fn feature_index(perspective: Color, color: Color, role: Role, square: Square) -> u16 {
    let colour_rel = if color as u8 == perspective as u8 {
        0
    } else {
        1
    };
    let square_rel = match perspective {
        Color::White => square.index(),
        Color::Black => square.index() ^ 56,
    };
    (colour_rel * 384 + role.index() * 64 + square_rel) as u16
}

/// Calls `f` with the index of every active feature of `pos` from `perspective`: the
/// perspective's own pieces first (pawns to king, squares ascending), then the other side's.
#[inline]
pub fn for_each_feature(pos: &Position, perspective: Color, mut f: impl FnMut(u16)) {
    for color in [perspective, !perspective] {
        for role in Role::ALL {
            for sq in pos.pieces(color, role) {
                f(feature_index(perspective, color, role, sq));
            }
        }
    }
}

/// The features of a network with king buckets.
impl KingBuckets {
    /// Calls `f` with every active feature of `pos` from `perspective` in this layout, in the
    /// order of [`for_each_feature`].
    #[inline]
    pub fn for_each_feature(&self, pos: &Position, perspective: Color, mut f: impl FnMut(u16)) {
        let offset = self.offset_in(pos, perspective);
        for_each_feature(pos, perspective, |i| f(offset + i));
    }

    /// The active features of `pos` from `perspective` in this layout.
    pub fn active_features(&self, pos: &Position, perspective: Color) -> Vec<u16> {
        let mut v = Vec::with_capacity(MAX_ACTIVE);
        self.for_each_feature(pos, perspective, |i| v.push(i));
        v
    }
}

/// The active features of `pos` from `perspective` (at most 32), in the order of
/// [`for_each_feature`].
///
/// ```
/// use chess_nn::active_features;
/// use chess_rules::{Color, Position};
/// assert_eq!(active_features(&Position::startpos(), Color::White).len(), 32);
/// ```
pub fn active_features(pos: &Position, perspective: Color) -> Vec<u16> {
    let mut v = Vec::with_capacity(MAX_ACTIVE);
    for_each_feature(pos, perspective, |i| v.push(i));
    v
}

/// The inputs of many positions, laid out flat for a backend to copy in one piece.
///
/// Position `i`'s side-to-move features are `features()[offsets()[2i]..offsets()[2i + 1]]`
/// and the other side's are `features()[offsets()[2i + 1]..offsets()[2i + 2]]`; `offsets()`
/// starts with 0 and has `2 * len() + 1` entries. Each perspective holds at most
/// [`MAX_ACTIVE`] indices below the layout's inputs (768 per king bucket). Their order
/// within a perspective does not matter (accumulation wraps, so it is order-independent); a
/// repeated index counts twice.
///
/// ```
/// use chess_nn::FeatureBatch;
/// use chess_rules::Position;
/// let mut batch = FeatureBatch::new();
/// batch.push_position(&Position::startpos());
/// assert_eq!(batch.len(), 1);
/// assert_eq!((batch.stm(0).len(), batch.nstm(0).len()), (32, 32));
/// assert_eq!(batch.offsets(), &[0, 32, 64]);
/// ```
///
/// A batch is in one network's input layout ([`FeatureBatch::for_network`]; [`FeatureBatch::new`]
/// is the layout without king buckets), and a backend refuses a batch of another layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureBatch {
    features: Vec<u16>,
    offsets: Vec<u32>,
    layout: KingBuckets,
}

impl Default for FeatureBatch {
    fn default() -> Self {
        FeatureBatch::new()
    }
}

impl FeatureBatch {
    /// An empty batch in the layout without king buckets.
    pub fn new() -> FeatureBatch {
        FeatureBatch::with_layout(KingBuckets::NONE)
    }

    /// An empty batch in `net`'s input layout.
    pub fn for_network(net: &crate::Network) -> FeatureBatch {
        FeatureBatch::with_layout(*net.king_buckets())
    }

    /// An empty batch in `layout`.
    pub fn with_layout(layout: KingBuckets) -> FeatureBatch {
        FeatureBatch {
            features: Vec::new(),
            offsets: vec![0],
            layout,
        }
    }

    /// An empty batch with room for `positions` positions of 32 pieces.
    pub fn with_capacity(layout: KingBuckets, positions: usize) -> FeatureBatch {
        let mut offsets = Vec::with_capacity(2 * positions + 1);
        offsets.push(0);
        FeatureBatch {
            features: Vec::with_capacity(2 * MAX_ACTIVE * positions),
            offsets,
            layout,
        }
    }

    /// The input layout the features are in.
    pub fn layout(&self) -> &KingBuckets {
        &self.layout
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        (self.offsets.len() - 1) / 2
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.features.clear();
        self.offsets.truncate(1);
    }

    /// Appends a position: its side to move's features, then the other side's.
    pub fn push_position(&mut self, pos: &Position) {
        let stm = pos.turn();
        for perspective in [stm, !stm] {
            let features = &mut self.features;
            self.layout
                .for_each_feature(pos, perspective, |i| features.push(i));
            self.offsets.push(self.features.len() as u32);
        }
    }

    /// Appends a position given by its feature lists (side to move first).
    pub fn push_features(&mut self, stm: &[u16], nstm: &[u16]) -> Result<(), FeatureError> {
        for list in [stm, nstm] {
            if list.len() > MAX_ACTIVE {
                return Err(FeatureError::TooMany {
                    max: MAX_ACTIVE,
                    found: list.len(),
                });
            }
            let inputs = self.layout.inputs();
            if let Some(&bad) = list.iter().find(|&&i| usize::from(i) >= inputs) {
                return Err(FeatureError::OutOfRange { inputs, found: bad });
            }
        }
        for list in [stm, nstm] {
            self.features.extend_from_slice(list);
            self.offsets.push(self.features.len() as u32);
        }
        Ok(())
    }

    /// Position `i`'s side-to-move features.
    pub fn stm(&self, i: usize) -> &[u16] {
        &self.features[self.offsets[2 * i] as usize..self.offsets[2 * i + 1] as usize]
    }

    /// Position `i`'s other-side features.
    pub fn nstm(&self, i: usize) -> &[u16] {
        &self.features[self.offsets[2 * i + 1] as usize..self.offsets[2 * i + 2] as usize]
    }

    /// All feature indices, position after position.
    pub fn features(&self) -> &[u16] {
        &self.features
    }

    /// Where each position's perspectives start and end in [`FeatureBatch::features`].
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }
}

impl BackendError {
    /// The check every backend makes first: `out` has one slot per position of `features`.
    pub fn check_output(features: &FeatureBatch, out: &[i32]) -> Result<(), BackendError> {
        if out.len() == features.len() {
            Ok(())
        } else {
            Err(BackendError::OutputLength {
                expected: features.len(),
                found: out.len(),
            })
        }
    }

    /// The check every backend makes too: the batch is in the network's input layout
    /// (`network`, from [`crate::Network::king_buckets`]).
    pub fn check_layout(
        features: &FeatureBatch,
        network: &KingBuckets,
    ) -> Result<(), BackendError> {
        if features.layout() == network {
            Ok(())
        } else {
            Err(BackendError::Layout {
                network: network.to_string(),
                batch: features.layout().to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_the_definition() {
        for perspective in Color::ALL {
            for color in Color::ALL {
                for role in Role::ALL {
                    for sq in Square::ALL {
                        let rel = usize::from(color != perspective);
                        let s = if perspective.is_white() {
                            sq.index()
                        } else {
                            sq.index() ^ 56
                        };
                        let want = rel * 384 + role.index() * 64 + s;
                        assert_eq!(
                            usize::from(feature_index(perspective, color, role, sq)),
                            want
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn mirrored_positions_swap_perspectives() {
        let pos = Position::from_fen(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        )
        .unwrap();
        let m = pos.mirrored();
        let mut a = active_features(&pos, Color::White);
        let mut b = active_features(&m, Color::Black);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_feature_lists_are_refused() {
        let mut b = FeatureBatch::new();
        assert_eq!(
            b.push_features(&[0; 33], &[]),
            Err(FeatureError::TooMany { max: 32, found: 33 })
        );
        assert_eq!(
            b.push_features(&[1], &[768]),
            Err(FeatureError::OutOfRange {
                inputs: 768,
                found: 768
            })
        );
        assert!(b.is_empty());
        b.push_features(&[1, 2], &[3]).unwrap();
        assert_eq!((b.stm(0), b.nstm(0)), (&[1, 2][..], &[3][..]));
    }
}
