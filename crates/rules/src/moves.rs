use std::fmt;

use crate::{Color, File, Rank, Role, Square};

/// What kind of move a [`Move`] is, beyond its squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MoveKind {
    Normal,
    /// A pawn's two-square first move, which may allow an en-passant capture in reply.
    DoublePush,
    EnPassant,
    /// Castling; the move's `to` is the king's destination (`g1`, `c1`, `g8` or `c8`).
    Castle,
    PromoteKnight,
    PromoteBishop,
    PromoteRook,
    PromoteQueen,
    /// The null move of PGN analysis (`--`): the side to move passes.
    Null,
}

/// Castling towards the h-file or the a-file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastlingSide {
    KingSide,
    QueenSide,
}

impl CastlingSide {
    pub const ALL: [CastlingSide; 2] = [CastlingSide::KingSide, CastlingSide::QueenSide];

    /// The king's destination file.
    pub const fn king_to_file(self) -> File {
        match self {
            CastlingSide::KingSide => File::G,
            CastlingSide::QueenSide => File::C,
        }
    }

    /// The rook's destination file.
    pub const fn rook_to_file(self) -> File {
        match self {
            CastlingSide::KingSide => File::F,
            CastlingSide::QueenSide => File::D,
        }
    }

    /// The file the castling rook starts on.
    pub const fn rook_from_file(self) -> File {
        match self {
            CastlingSide::KingSide => File::H,
            CastlingSide::QueenSide => File::A,
        }
    }

    /// The squares of this castling for `color`: (king from, king to, rook from, rook to).
    pub const fn squares(self, color: Color) -> (Square, Square, Square, Square) {
        let rank = Rank::First.relative(color);
        (
            Square::from_coords(File::E, rank),
            Square::from_coords(self.king_to_file(), rank),
            Square::from_coords(self.rook_from_file(), rank),
            Square::from_coords(self.rook_to_file(), rank),
        )
    }
}

/// A move: four bytes holding origin, destination, the moving role and the kind.
///
/// Moves are made by the move generator ([`crate::Position::legal_moves`]) or read from text
/// ([`crate::Position::parse_uci`], [`crate::Position::parse_san`]); a `Move` only means
/// something together with the position it was generated in.
///
/// ```
/// use chess_rules::{Move, Position, Square};
/// let pos = Position::startpos();
/// let m = pos.parse_uci("g1f3").unwrap();
/// assert_eq!((m.from(), m.to()), (Square::G1, Square::F3));
/// assert_eq!(m.to_string(), "g1f3");
/// assert!(std::mem::size_of::<Move>() <= 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    from: Square,
    to: Square,
    role: Role,
    kind: MoveKind,
}

const _: () = assert!(std::mem::size_of::<Move>() == 4);

impl Move {
    /// The null move (`--` in PGN, `0000` in UCI).
    pub const NULL: Move = Move {
        from: Square::A1,
        to: Square::A1,
        role: Role::King,
        kind: MoveKind::Null,
    };

    #[inline]
    pub(crate) const fn new(from: Square, to: Square, role: Role, kind: MoveKind) -> Move {
        Move {
            from,
            to,
            role,
            kind,
        }
    }

    #[inline]
    pub const fn from(self) -> Square {
        self.from
    }

    #[inline]
    pub const fn to(self) -> Square {
        self.to
    }

    /// The role of the moving piece (a pawn for promotions).
    #[inline]
    pub const fn role(self) -> Role {
        self.role
    }

    #[inline]
    pub const fn kind(self) -> MoveKind {
        self.kind
    }

    /// The promotion role, if this is a promotion.
    #[inline]
    pub const fn promotion(self) -> Option<Role> {
        match self.kind {
            MoveKind::PromoteKnight => Some(Role::Knight),
            MoveKind::PromoteBishop => Some(Role::Bishop),
            MoveKind::PromoteRook => Some(Role::Rook),
            MoveKind::PromoteQueen => Some(Role::Queen),
            _ => None,
        }
    }

    pub(crate) const fn promote_kind(role: Role) -> MoveKind {
        match role {
            Role::Knight => MoveKind::PromoteKnight,
            Role::Bishop => MoveKind::PromoteBishop,
            Role::Rook => MoveKind::PromoteRook,
            _ => MoveKind::PromoteQueen,
        }
    }

    #[inline]
    pub const fn is_castle(self) -> bool {
        matches!(self.kind, MoveKind::Castle)
    }

    #[inline]
    pub const fn is_en_passant(self) -> bool {
        matches!(self.kind, MoveKind::EnPassant)
    }

    #[inline]
    pub const fn is_null(self) -> bool {
        matches!(self.kind, MoveKind::Null)
    }

    /// The castling side, if this is castling.
    pub fn castling_side(self) -> Option<CastlingSide> {
        if !self.is_castle() {
            None
        } else if self.to.file() == File::G {
            Some(CastlingSide::KingSide)
        } else {
            Some(CastlingSide::QueenSide)
        }
    }

    /// The piece the move puts on `to` (the promotion role for promotions).
    #[inline]
    pub fn role_after(self) -> Role {
        self.promotion().unwrap_or(self.role)
    }
}

/// UCI long algebraic form: `e2e4`, `e7e8q`, castling as the king's move `e1g1`, null `0000`.
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return f.write_str("0000");
        }
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion() {
            write!(f, "{}", p.char())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({self} {:?} {:?})", self.role, self.kind)
    }
}

/// A list of moves with room for the most any position has (218), kept on the stack.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MoveList::CAPACITY],
    len: usize,
}

impl MoveList {
    pub const CAPACITY: usize = 256;

    pub const fn new() -> MoveList {
        MoveList {
            moves: [Move::NULL; MoveList::CAPACITY],
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, m: Move) {
        debug_assert!(self.len < Self::CAPACITY);
        if let Some(slot) = self.moves.get_mut(self.len) {
            *slot = m;
            self.len += 1;
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Move) -> bool) {
        let mut w = 0;
        for r in 0..self.len {
            if keep(&self.moves[r]) {
                self.moves[w] = self.moves[r];
                w += 1;
            }
        }
        self.len = w;
    }

    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }

    pub fn contains(&self, m: &Move) -> bool {
        self.as_slice().contains(m)
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|m| m.to_string()))
            .finish()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for MoveList {
    type Item = Move;
    type IntoIter = std::iter::Take<std::array::IntoIter<Move, { MoveList::CAPACITY }>>;
    fn into_iter(self) -> Self::IntoIter {
        self.moves.into_iter().take(self.len)
    }
}
