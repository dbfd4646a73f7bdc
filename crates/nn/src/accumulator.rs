//! Accumulators: the first layer's output for both perspectives, kept up to date move by move.

use std::fmt;

use chess_rules::{Color, Move, MoveKind, Position, Role, Square};

use crate::MAX_ACTIVE;
use crate::features::feature_index;
use crate::king_buckets::KingBuckets;
use crate::network::Network;
use crate::simd;

/// A piece on a square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlacedPiece {
    pub color: Color,
    pub role: Role,
    pub square: Square,
}

impl PlacedPiece {
    pub const fn new(color: Color, role: Role, square: Square) -> PlacedPiece {
        PlacedPiece {
            color,
            role,
            square,
        }
    }

    /// Its feature index from `perspective`, in the layout without king buckets (add the
    /// perspective's [`KingBuckets::offset`] for a network with them).
    #[inline]
    pub const fn feature(self, perspective: Color) -> u16 {
        feature_index(perspective, self.color, self.role, self.square)
    }
}

const NO_PIECE: PlacedPiece = PlacedPiece::new(Color::White, Role::Pawn, Square::A1);

/// What a move changes on the board: the pieces it lifts and the pieces it puts down (at most
/// two of each).
///
/// | move        | removed                   | added               |
/// |-------------|---------------------------|---------------------|
/// | quiet       | mover on from             | mover on to         |
/// | capture     | mover on from, victim     | mover on to         |
/// | en passant  | pawn on from, taken pawn  | pawn on to          |
/// | promotion   | pawn on from (, victim)   | new piece on to     |
/// | castling    | king, rook                | king, rook          |
/// | null move   | nothing                   | nothing             |
///
/// ```
/// use chess_nn::{MoveDelta, PlacedPiece};
/// use chess_rules::{Color, Position, Role, Square};
/// let pos = Position::from_fen("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1").unwrap();
/// let d = MoveDelta::new(&pos, pos.parse_uci("e1g1").unwrap());
/// assert_eq!(d.removed(), &[
///     PlacedPiece::new(Color::White, Role::King, Square::E1),
///     PlacedPiece::new(Color::White, Role::Rook, Square::H1),
/// ]);
/// assert_eq!(d.added()[1], PlacedPiece::new(Color::White, Role::Rook, Square::F1));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MoveDelta {
    removed: [PlacedPiece; 2],
    added: [PlacedPiece; 2],
    n_removed: u8,
    n_added: u8,
}

impl fmt::Debug for MoveDelta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MoveDelta")
            .field("removed", &self.removed())
            .field("added", &self.added())
            .finish()
    }
}

impl Default for MoveDelta {
    fn default() -> Self {
        MoveDelta::NONE
    }
}

impl MoveDelta {
    /// No change (a null move).
    pub const NONE: MoveDelta = MoveDelta {
        removed: [NO_PIECE; 2],
        added: [NO_PIECE; 2],
        n_removed: 0,
        n_added: 0,
    };

    /// The change `m` (legal in `before`) makes.
    pub fn new(before: &Position, m: Move) -> MoveDelta {
        let mut d = MoveDelta::NONE;
        if m.is_null() {
            return d;
        }
        let us = before.turn();
        let (from, to) = (m.from(), m.to());
        match m.kind() {
            MoveKind::Castle => {
                if let Some(side) = m.castling_side() {
                    let (_, king_to, rook_from, rook_to) = side.squares(us);
                    d.remove(PlacedPiece::new(us, Role::King, from));
                    d.remove(PlacedPiece::new(us, Role::Rook, rook_from));
                    d.add(PlacedPiece::new(us, Role::King, king_to));
                    d.add(PlacedPiece::new(us, Role::Rook, rook_to));
                }
            }
            MoveKind::EnPassant => {
                let taken = Square::from_coords(to.file(), from.rank());
                d.remove(PlacedPiece::new(us, Role::Pawn, from));
                d.remove(PlacedPiece::new(!us, Role::Pawn, taken));
                d.add(PlacedPiece::new(us, Role::Pawn, to));
            }
            _ => {
                d.remove(PlacedPiece::new(us, m.role(), from));
                if before.color_at(to) == Some(!us)
                    && let Some(victim) = before.role_at(to)
                {
                    d.remove(PlacedPiece::new(!us, victim, to));
                }
                d.add(PlacedPiece::new(us, m.role_after(), to));
            }
        }
        d
    }

    fn remove(&mut self, p: PlacedPiece) {
        self.removed[usize::from(self.n_removed)] = p;
        self.n_removed += 1;
    }

    fn add(&mut self, p: PlacedPiece) {
        self.added[usize::from(self.n_added)] = p;
        self.n_added += 1;
    }

    pub fn removed(&self) -> &[PlacedPiece] {
        &self.removed[..usize::from(self.n_removed)]
    }

    pub fn added(&self) -> &[PlacedPiece] {
        &self.added[..usize::from(self.n_added)]
    }

    /// Whether the move takes a king into another bucket of `layout`: that side's
    /// accumulator must then be refreshed from the position, not updated.
    ///
    /// ```
    /// use chess_nn::{KingBuckets, MoveDelta};
    /// use chess_rules::Position;
    /// let kb: KingBuckets = "00001111/2".parse().unwrap();
    /// let pos = Position::from_fen("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1").unwrap();
    /// let d = |uci| MoveDelta::new(&pos, pos.parse_uci(uci).unwrap());
    /// assert!(!d("e1f1").changes_king_bucket(&kb)); // e1 and f1 are both bucket 1
    /// assert!(d("e1c1").changes_king_bucket(&kb)); // castling to bucket 0
    /// assert!(d("e1e2").changes_king_bucket(&kb));
    /// assert!(!d("a1a8").changes_king_bucket(&kb));
    /// assert!(!d("e1e2").changes_king_bucket(&KingBuckets::NONE));
    /// ```
    #[inline]
    pub fn changes_king_bucket(&self, layout: &KingBuckets) -> bool {
        self.king_bucket_change(layout).is_some()
    }

    /// The side whose king the move takes into another bucket of `layout`, if any.
    #[inline]
    pub fn king_bucket_change(&self, layout: &KingBuckets) -> Option<Color> {
        if layout.count() == 1 {
            return None;
        }
        let king = |pieces: &[PlacedPiece]| pieces.iter().find(|p| p.role == Role::King).copied();
        match (king(self.removed()), king(self.added())) {
            (Some(from), Some(to)) if layout.changes(from.color, from.square, to.square) => {
                Some(from.color)
            }
            _ => None,
        }
    }
}

/// The first layer's output for both perspectives (white's and black's), `H` values each,
/// and the number of pieces on the board (which chooses the output bucket).
///
/// An accumulator belongs to the network that built it (same hidden size, same weights).
///
/// With king buckets, each perspective keeps the bucket its king was in at the last
/// [`Accumulator::refresh`]: the incremental updates ([`Accumulator::apply`],
/// [`Accumulator::update_from`], adding and removing pieces) stay in that bucket, so a move
/// for which [`MoveDelta::changes_king_bucket`] holds needs a refresh instead
/// ([`Accumulator::play`] does that itself).
///
/// ```
/// use chess_nn::{Accumulator, Network};
/// use chess_rules::Position;
/// let net = Network::default_network();
/// let pos = Position::startpos();
/// let m = pos.parse_uci("e2e4").unwrap();
/// let mut acc = Accumulator::from_position(&net, &pos);
/// acc.play(&net, &pos, m);
/// let after = pos.play(m).unwrap();
/// assert_eq!(acc, Accumulator::from_position(&net, &after));
/// assert_eq!(net.evaluate_accumulator(&acc, after.turn()), net.evaluate(&after));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Accumulator {
    hidden: usize,
    /// White's perspective, then black's.
    values: Box<[i16]>,
    /// Pieces on the board, kings included.
    pieces: u8,
    /// Each perspective's first feature index (its king bucket's), white's then black's.
    offsets: [u16; 2],
}

impl fmt::Debug for Accumulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Accumulator")
            .field("hidden", &self.hidden)
            .field("pieces", &self.pieces)
            .finish_non_exhaustive()
    }
}

impl Accumulator {
    /// The accumulators of an empty board (the biases).
    pub fn new(net: &Network) -> Accumulator {
        let h = net.hidden();
        let mut values = vec![0i16; 2 * h].into_boxed_slice();
        values[..h].copy_from_slice(net.ft_biases());
        values[h..].copy_from_slice(net.ft_biases());
        Accumulator {
            hidden: h,
            values,
            pieces: 0,
            offsets: [0; 2],
        }
    }

    /// The accumulators of `pos`, computed from scratch.
    pub fn from_position(net: &Network, pos: &Position) -> Accumulator {
        let mut acc = Accumulator::new(net);
        acc.refresh(net, pos);
        acc
    }

    /// Recomputes both perspectives from scratch for `pos`.
    pub fn refresh(&mut self, net: &Network, pos: &Position) {
        for perspective in Color::ALL {
            self.refresh_perspective(net, pos, perspective);
        }
    }

    /// Recomputes one perspective (and the piece count) from scratch for `pos`.
    pub fn refresh_perspective(&mut self, net: &Network, pos: &Position, perspective: Color) {
        debug_assert_eq!(self.hidden, net.hidden());
        let layout = net.king_buckets();
        self.offsets[perspective as usize] = layout.offset_in(pos, perspective);
        let mut features = [0u16; MAX_ACTIVE];
        let mut n = 0;
        layout.for_each_feature(pos, perspective, |f| {
            features[n] = f;
            n += 1;
        });
        simd::accumulate(
            net.simd(),
            self.perspective_mut(perspective),
            net.ft_biases(),
            net.ft_weights(),
            net.hidden(),
            &features[..n],
        );
        self.pieces = n as u8;
    }

    /// Sets perspective `p` by `fill` (in the king bucket starting at feature `offset`) and
    /// the piece count to `pieces` (the refresh cache's answer).
    pub(crate) fn set_perspective_with(
        &mut self,
        p: Color,
        offset: u16,
        pieces: u8,
        fill: impl FnOnce(&mut [i16]),
    ) {
        fill(self.perspective_mut(p));
        self.offsets[p as usize] = offset;
        self.pieces = pieces;
    }

    /// Pieces on the board, kings included (what [`Network::bucket`] takes).
    #[inline]
    pub fn pieces(&self) -> usize {
        usize::from(self.pieces)
    }

    /// One perspective's `H` values.
    #[inline]
    pub fn perspective(&self, perspective: Color) -> &[i16] {
        let h = self.hidden;
        match perspective {
            Color::White => &self.values[..h],
            Color::Black => &self.values[h..],
        }
    }

    /// `piece`'s feature row index from perspective `p` in this accumulator's king buckets.
    #[inline]
    fn row(&self, piece: PlacedPiece, p: Color) -> usize {
        usize::from(self.offsets[p as usize] + piece.feature(p))
    }

    #[inline]
    fn perspective_mut(&mut self, perspective: Color) -> &mut [i16] {
        let h = self.hidden;
        match perspective {
            Color::White => &mut self.values[..h],
            Color::Black => &mut self.values[h..],
        }
    }

    /// Puts a piece on the board (its feature in both perspectives).
    pub fn add_piece(&mut self, net: &Network, piece: PlacedPiece) {
        for p in Color::ALL {
            let row = self.row(piece, p);
            simd::add_row(net.simd(), self.perspective_mut(p), net.ft_row(row));
        }
        self.pieces = self.pieces.wrapping_add(1);
    }

    /// Takes a piece off the board.
    pub fn remove_piece(&mut self, net: &Network, piece: PlacedPiece) {
        for p in Color::ALL {
            let row = self.row(piece, p);
            simd::sub_row(net.simd(), self.perspective_mut(p), net.ft_row(row));
        }
        self.pieces = self.pieces.wrapping_sub(1);
    }

    /// Moves a piece from `piece.square` to `to`.
    pub fn move_piece(&mut self, net: &Network, piece: PlacedPiece, to: Square) {
        self.remove_piece(net, piece);
        self.add_piece(
            net,
            PlacedPiece {
                square: to,
                ..piece
            },
        );
    }

    /// Applies a move's change in place (one that keeps both kings in their buckets: see
    /// the type's documentation).
    pub fn apply(&mut self, net: &Network, delta: &MoveDelta) {
        debug_assert!(!delta.changes_king_bucket(net.king_buckets()));
        for &p in delta.removed() {
            self.remove_piece(net, p);
        }
        for &p in delta.added() {
            self.add_piece(net, p);
        }
    }

    /// Plays `m` (legal in `before`) on these accumulators: an update, or a refresh from the
    /// position after it when a king changes bucket.
    pub fn play(&mut self, net: &Network, before: &Position, m: Move) {
        let delta = MoveDelta::new(before, m);
        if delta.changes_king_bucket(net.king_buckets())
            && let Ok(after) = before.play(m)
        {
            let parent = self.clone();
            self.update_or_refresh(net, &parent, &delta, &after);
        } else {
            self.apply(net, &delta);
        }
    }

    /// Sets `self` to `parent` changed by `delta`, reading `parent` once and writing `self`
    /// once per perspective (the usual step of a search's accumulator stack). The move must
    /// keep both kings in their buckets (see the type's documentation).
    pub fn update_from(&mut self, net: &Network, parent: &Accumulator, delta: &MoveDelta) {
        debug_assert!(!delta.changes_king_bucket(net.king_buckets()));
        for p in Color::ALL {
            self.update_perspective(net, parent, delta, p);
        }
    }

    /// Sets `self` to the accumulators of `after`, the position `delta`'s move leads to from
    /// `parent`'s: like [`Accumulator::update_from`], except that the perspective of a king
    /// the move takes into another bucket is computed from `after` (the other one is still
    /// updated from `parent`). Any move may be given.
    pub fn update_or_refresh(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        delta: &MoveDelta,
        after: &Position,
    ) {
        self.update_with(net, parent, delta, |acc, p| {
            acc.refresh_perspective(net, after, p);
        });
    }

    /// [`Accumulator::update_from`] for each perspective but that of a king the move takes
    /// into another bucket, which `refresh` computes.
    pub(crate) fn update_with(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        delta: &MoveDelta,
        refresh: impl FnOnce(&mut Accumulator, Color),
    ) {
        let moved = delta.king_bucket_change(net.king_buckets());
        for p in Color::ALL {
            if moved != Some(p) {
                self.update_perspective(net, parent, delta, p);
            }
        }
        if let Some(p) = moved {
            refresh(self, p);
        }
    }

    /// Perspective `p` of `self` set to `parent`'s changed by `delta` (in `parent`'s king
    /// bucket), and the piece count to `parent`'s changed by it.
    fn update_perspective(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        delta: &MoveDelta,
        p: Color,
    ) {
        debug_assert_eq!(self.hidden, parent.hidden);
        self.offsets[p as usize] = parent.offsets[p as usize];
        let mut adds: [&[i16]; 2] = [&[], &[]];
        let mut subs: [&[i16]; 2] = [&[], &[]];
        for (slot, &piece) in adds.iter_mut().zip(delta.added()) {
            *slot = net.ft_row(parent.row(piece, p));
        }
        for (slot, &piece) in subs.iter_mut().zip(delta.removed()) {
            *slot = net.ft_row(parent.row(piece, p));
        }
        simd::copy_update(
            net.simd(),
            self.perspective_mut(p),
            parent.perspective(p),
            &adds[..delta.added().len()],
            &subs[..delta.removed().len()],
        );
        self.pieces = parent
            .pieces
            .wrapping_add(delta.n_added)
            .wrapping_sub(delta.n_removed);
    }
}
