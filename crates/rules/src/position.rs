use std::fmt;

use crate::attacks::{
    aligned, between, bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use crate::{
    Bitboard, ByColor, CastlingRights, CastlingSide, Color, File, Move, MoveKind, Piece, Rank,
    Role, Setup, Square, zobrist,
};

/// The highest half-move clock accepted. A clock of 150 or more means the seventy-five-move
/// rule (FIDE 9.6.2) has already ended the game, which [`crate::Game::outcome`] reports; FEN
/// from tools that did not apply the rule may still carry larger clocks, so they are read.
pub const MAX_HALFMOVES: u32 = 65_535;
/// The highest full-move number accepted.
pub const MAX_FULLMOVES: u32 = 65_535;

/// Why a [`Setup`] is not a legal position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("no {0} king")]
    MissingKing(Color),
    #[error("{count} {color} kings (exactly one is required)")]
    TooManyKings { color: Color, count: u32 },
    #[error("{color} has {count} pieces (at most 16)")]
    TooManyPieces { color: Color, count: u32 },
    #[error("{color} has {count} pawns (at most 8)")]
    TooManyPawns { color: Color, count: u32 },
    #[error("pawn on {0}: pawns cannot stand on the first or last rank")]
    PawnOnBackRank(Square),
    #[error("the side not to move ({0}) is in check")]
    OppositeCheck(Color),
    #[error("{color} is in check from {count} pieces, which no legal move can produce")]
    ImpossibleCheck { color: Color, count: u32 },
    /// Two checkers that one move cannot produce: a double check is a discovered check by a
    /// line piece plus a check by the piece that moved.
    #[error(
        "{color} is in check from {checkers} at once, which no legal move can produce ({reason})"
    )]
    ImpossibleDoubleCheck {
        color: Color,
        /// The two checkers, e.g. `a black pawn on d5 and a black knight on f6`.
        checkers: String,
        reason: &'static str,
    },
    /// A check that the two-square pawn move the en-passant square records cannot have given.
    #[error(
        "the {checker} gives check, which the two-square pawn move to {pawn} (en-passant square \
         {square}) cannot have produced"
    )]
    CheckWithoutTwoSquarePush {
        /// The checker, e.g. `black knight on f6`.
        checker: String,
        pawn: Square,
        square: Square,
    },
    #[error("castling right '{right}' needs {needs}")]
    BadCastlingRights { right: char, needs: String },
    #[error("en-passant square {square} is impossible: {reason}")]
    BadEnPassant {
        square: Square,
        reason: &'static str,
    },
    #[error("{field} {value} is out of range ({min}..={max})")]
    CounterOutOfRange {
        field: &'static str,
        value: u64,
        min: u32,
        max: u32,
    },
}

/// Why a move cannot be played in a position. The position is left untouched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {uci} in {fen}")]
pub struct IllegalMoveError {
    pub uci: String,
    pub fen: String,
}

/// A legal chess position: placement, side to move, castling rights, en-passant square and
/// move counters, with its Zobrist key kept up to date as moves are played.
///
/// ```
/// use chess_rules::Position;
/// let pos = Position::startpos();
/// assert_eq!(pos.legal_moves().len(), 20);
/// let pos = pos.play(pos.parse_san("e4").unwrap()).unwrap();
/// assert_eq!(pos.fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
/// ```
///
/// `{:?}` draws the board, white at the bottom:
///
/// ```text
/// r n b q k b n r
/// p p p p p p p p
/// . . . . . . . .
/// . . . . . . . .
/// . . . . P . . .
/// . . . . . . . .
/// P P P P . P P P
/// R N B Q K B N R
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) by_role: [Bitboard; 6],
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) turn: Color,
    pub(crate) castling: CastlingRights,
    /// Set after every two-square pawn move (whether or not a capture there is possible).
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) hash: u64,
}

/// Castling rights lost when a move touches a square (king or rook leaving or captured there).
static CASTLE_KEEP: [u8; 64] = {
    let mut t = [0b1111u8; 64];
    t[Square::E1 as usize] = 0b1100;
    t[Square::H1 as usize] = 0b1110;
    t[Square::A1 as usize] = 0b1101;
    t[Square::E8 as usize] = 0b0011;
    t[Square::H8 as usize] = 0b1011;
    t[Square::A8 as usize] = 0b0111;
    t
};

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        Position::from_setup(&Setup::startpos()).expect("the start position is legal")
    }

    /// Validates a setup. Every fault has its own [`PositionError`].
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let mut pos = Position {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            turn: setup.turn,
            castling: setup.castling,
            ep_square: setup.ep_square,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves,
            hash: 0,
        };
        for sq in Square::ALL {
            if let Some(p) = setup.board[sq.index()] {
                pos.by_role[p.role.index()] |= Bitboard::from_square(sq);
                pos.by_color[p.color.index()] |= Bitboard::from_square(sq);
            }
        }
        for color in Color::ALL {
            let kings = pos.pieces(color, Role::King).count();
            if kings == 0 {
                return Err(PositionError::MissingKing(color));
            }
            if kings > 1 {
                return Err(PositionError::TooManyKings {
                    color,
                    count: kings,
                });
            }
        }
        for color in Color::ALL {
            let count = pos.by_color(color).count();
            if count > 16 {
                return Err(PositionError::TooManyPieces { color, count });
            }
            let pawns = pos.pieces(color, Role::Pawn).count();
            if pawns > 8 {
                return Err(PositionError::TooManyPawns {
                    color,
                    count: pawns,
                });
            }
        }
        let back_ranks = Bitboard::rank(Rank::First) | Bitboard::rank(Rank::Eighth);
        if let Some(sq) = (pos.by_role(Role::Pawn) & back_ranks).first() {
            return Err(PositionError::PawnOnBackRank(sq));
        }
        if setup.halfmoves > MAX_HALFMOVES {
            return Err(PositionError::CounterOutOfRange {
                field: "halfmove clock",
                value: setup.halfmoves.into(),
                min: 0,
                max: MAX_HALFMOVES,
            });
        }
        if setup.fullmoves == 0 || setup.fullmoves > MAX_FULLMOVES {
            return Err(PositionError::CounterOutOfRange {
                field: "fullmove number",
                value: setup.fullmoves.into(),
                min: 1,
                max: MAX_FULLMOVES,
            });
        }
        for (color, side, right) in [
            (Color::White, CastlingSide::KingSide, 'K'),
            (Color::White, CastlingSide::QueenSide, 'Q'),
            (Color::Black, CastlingSide::KingSide, 'k'),
            (Color::Black, CastlingSide::QueenSide, 'q'),
        ] {
            if !pos.castling.has(color, side) {
                continue;
            }
            let (king, _, rook, _) = side.squares(color);
            if pos.piece_at(king) != Some(Piece::new(color, Role::King))
                || pos.piece_at(rook) != Some(Piece::new(color, Role::Rook))
            {
                return Err(PositionError::BadCastlingRights {
                    right,
                    needs: format!("a {color} king on {king} and a {color} rook on {rook}"),
                });
            }
        }
        if let Some(ep) = pos.ep_square {
            pos.check_ep_square(ep)?;
        }
        let them = !pos.turn;
        if pos
            .attackers_to(pos.king_of(them), pos.turn, pos.occupied())
            .has_any()
        {
            return Err(PositionError::OppositeCheck(them));
        }
        let checkers = pos.checkers().count();
        if checkers > 2 {
            return Err(PositionError::ImpossibleCheck {
                color: pos.turn,
                count: checkers,
            });
        }
        pos.check_checkers()?;
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// Checks that one legal move can have given the checks on the side to move (at most two,
    /// already checked). A double check is a discovered check by a line piece plus a check by
    /// the piece that moved: never two pawns or knights, never two pieces on one line through
    /// the king. After a two-square pawn move (an en-passant square) every checker is that
    /// pawn or a line piece it uncovered by leaving its square.
    fn check_checkers(&self) -> Result<(), PositionError> {
        let checkers = self.checkers();
        let king = self.king_of(self.turn);
        let lines =
            self.by_role(Role::Bishop) | self.by_role(Role::Rook) | self.by_role(Role::Queen);
        let name = |sq: Square| match self.piece_at(sq) {
            Some(p) => format!("{p} on {sq}"),
            None => format!("piece on {sq}"),
        };
        if let (2, Some(a), Some(b)) = (checkers.count(), checkers.first(), checkers.last()) {
            let reason = if (checkers & lines).is_empty() {
                Some("only a bishop, rook or queen can be uncovered by another piece's move")
            } else if aligned(a, king, b) {
                Some("two pieces on one line through the king cannot both have just begun to check")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(PositionError::ImpossibleDoubleCheck {
                    color: self.turn,
                    checkers: format!("a {} and a {}", name(a), name(b)),
                    reason,
                });
            }
        }
        if let Some(ep) = self.ep_square {
            let us = self.turn;
            let pawn = Square::from_coords(ep.file(), Rank::Fifth.relative(us));
            let origin = Square::from_coords(ep.file(), Rank::Seventh.relative(us));
            if let Some(c) = checkers
                .into_iter()
                .find(|&c| c != pawn && !(lines.contains(c) && between(c, king).contains(origin)))
            {
                return Err(PositionError::CheckWithoutTwoSquarePush {
                    checker: name(c),
                    pawn,
                    square: ep,
                });
            }
        }
        Ok(())
    }

    fn check_ep_square(&self, ep: Square) -> Result<(), PositionError> {
        let bad = |reason| Err(PositionError::BadEnPassant { square: ep, reason });
        let us = self.turn;
        if ep.rank() != Rank::Sixth.relative(us) {
            return bad(if us.is_white() {
                "with white to move it must be on rank 6"
            } else {
                "with black to move it must be on rank 3"
            });
        }
        let pusher = Square::from_coords(ep.file(), Rank::Fifth.relative(us));
        let origin = Square::from_coords(ep.file(), Rank::Seventh.relative(us));
        if self.piece_at(pusher) != Some(Piece::new(!us, Role::Pawn)) {
            return bad("no pawn stands in front of it that could have just moved two squares");
        }
        if self.occupied().contains(ep) || self.occupied().contains(origin) {
            return bad("the square it crossed or the square it came from is occupied");
        }
        Ok(())
    }

    /// Back to an unchecked [`Setup`].
    pub fn to_setup(&self) -> Setup {
        let mut s = Setup::empty();
        for sq in self.occupied() {
            if let Some(p) = self.piece_at(sq) {
                s.put(sq, p);
            }
        }
        s.turn = self.turn;
        s.castling = self.castling;
        s.ep_square = self.ep_square;
        s.halfmoves = self.halfmoves;
        s.fullmoves = self.fullmoves;
        s
    }

    pub(crate) fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for sq in self.occupied() {
            if let Some(p) = self.piece_at(sq) {
                h ^= zobrist::piece(p, sq);
            }
        }
        h ^= zobrist::castling(self.castling);
        if let Some(ep) = self.ep_square
            && self.ep_hashed(ep)
        {
            h ^= zobrist::en_passant(ep.file());
        }
        if self.turn == Color::Black {
            h ^= zobrist::black_to_move();
        }
        h
    }

    /// The en-passant file enters the key when a pawn of the side to move stands beside the
    /// pawn that just advanced two squares (a pseudo-legal capture exists).
    #[inline]
    fn ep_hashed(&self, ep: Square) -> bool {
        (pawn_attacks(!self.turn, ep) & self.pieces(self.turn, Role::Pawn)).has_any()
    }

    // ----- accessors -----

    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    #[inline]
    pub fn castling_rights(&self) -> CastlingRights {
        self.castling
    }

    /// The square skipped by a two-square pawn move just made, whether or not a capture
    /// there is legal. See [`Position::legal_ep_square`].
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// The Zobrist key, maintained incrementally by [`Position::play_unchecked`].
    #[inline]
    pub fn zobrist(&self) -> u64 {
        self.hash
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_color[color.index()] & self.by_role[role.index()]
    }

    #[inline]
    pub fn king_of(&self, color: Color) -> Square {
        // Every validated position has exactly one king per side.
        self.pieces(color, Role::King).first().unwrap_or(Square::A1)
    }

    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        let b = Bitboard::from_square(sq);
        if !self.occupied().intersects(b) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|r| self.by_role[r.index()].intersects(b))
    }

    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].contains(sq) {
            Some(Color::White)
        } else if self.by_color[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Some(Piece::new(self.color_at(sq)?, self.role_at(sq)?))
    }

    /// Material by side and role, e.g. for evaluation.
    pub fn material(&self) -> ByColor<[u32; 6]> {
        ByColor::new_with(|c| Role::ALL.map(|r| self.pieces(c, r).count()))
    }

    /// Pieces of `by` attacking `sq` with the board occupied as `occupied`.
    #[inline]
    pub fn attackers_to(&self, sq: Square, by: Color, occupied: Bitboard) -> Bitboard {
        let them = self.by_color(by);
        let diag = self.by_role(Role::Bishop) | self.by_role(Role::Queen);
        let orth = self.by_role(Role::Rook) | self.by_role(Role::Queen);
        them & ((pawn_attacks(!by, sq) & self.by_role(Role::Pawn))
            | (knight_attacks(sq) & self.by_role(Role::Knight))
            | (king_attacks(sq) & self.by_role(Role::King))
            | (bishop_attacks(sq, occupied) & diag)
            | (rook_attacks(sq, occupied) & orth))
    }

    /// Enemy pieces giving check.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.attackers_to(self.king_of(self.turn), !self.turn, self.occupied())
    }

    #[inline]
    pub fn is_check(&self) -> bool {
        self.checkers().has_any()
    }

    /// The en-passant square if an en-passant capture is legal right now (what FEN writes and
    /// what counts for repetition).
    pub fn legal_ep_square(&self) -> Option<Square> {
        let ep = self.ep_square?;
        if !self.ep_hashed(ep) {
            return None;
        }
        let mut list = crate::MoveList::new();
        self.legal_moves_into(&mut list);
        list.iter().any(|m| m.is_en_passant()).then_some(ep)
    }

    /// The key used for repetition: equal keys mean the same placement, side to move, castling
    /// rights and en-passant possibility (FIDE 9.2.3). Unlike [`Position::zobrist`], an
    /// en-passant square counts only when a capture there is legal.
    pub fn repetition_key(&self) -> u64 {
        match self.ep_square {
            Some(ep) if self.ep_hashed(ep) && self.legal_ep_square().is_none() => {
                self.hash ^ zobrist::en_passant(ep.file())
            }
            _ => self.hash,
        }
    }

    // ----- making moves -----

    #[inline]
    fn toggle(&mut self, color: Color, role: Role, sq: Square) {
        let b = Bitboard::from_square(sq);
        self.by_color[color.index()] ^= b;
        self.by_role[role.index()] ^= b;
        self.hash ^= zobrist::piece(Piece::new(color, role), sq);
    }

    /// Plays a move known to be legal in this position (from the move generator or a parser).
    /// A move from another position leaves the board meaningless; use [`Position::play`] for
    /// moves of unknown origin.
    pub fn play_unchecked(&mut self, m: Move) {
        let us = self.turn;
        let them = !us;
        if let Some(ep) = self.ep_square.take()
            && self.ep_hashed(ep)
        {
            self.hash ^= zobrist::en_passant(ep.file());
        }
        // Counters saturate at the largest values FEN reading accepts, so every position's
        // FEN reads back (a game ends long before: the 75-move rule stops it at 150).
        self.halfmoves = (self.halfmoves + 1).min(MAX_HALFMOVES);
        if us == Color::Black {
            self.fullmoves = (self.fullmoves + 1).min(MAX_FULLMOVES);
        }
        self.turn = them;
        self.hash ^= zobrist::black_to_move();
        if m.is_null() {
            return;
        }
        let (from, to, role) = (m.from(), m.to(), m.role());
        match m.kind() {
            MoveKind::Castle => {
                let side = if to.file() == File::G {
                    CastlingSide::KingSide
                } else {
                    CastlingSide::QueenSide
                };
                let (_, _, rook_from, rook_to) = side.squares(us);
                self.toggle(us, Role::King, from);
                self.toggle(us, Role::King, to);
                self.toggle(us, Role::Rook, rook_from);
                self.toggle(us, Role::Rook, rook_to);
            }
            MoveKind::EnPassant => {
                let captured = Square::from_coords(to.file(), from.rank());
                self.toggle(them, Role::Pawn, captured);
                self.toggle(us, Role::Pawn, from);
                self.toggle(us, Role::Pawn, to);
                self.halfmoves = 0;
            }
            kind => {
                if self.by_color(them).contains(to) {
                    if let Some(captured) = self.role_at(to) {
                        self.toggle(them, captured, to);
                    }
                    self.halfmoves = 0;
                }
                self.toggle(us, role, from);
                self.toggle(us, m.role_after(), to);
                if role == Role::Pawn {
                    self.halfmoves = 0;
                    if kind == MoveKind::DoublePush {
                        let ep = Square::from_coords(from.file(), Rank::Third.relative(us));
                        self.ep_square = Some(ep);
                        if self.ep_hashed(ep) {
                            self.hash ^= zobrist::en_passant(ep.file());
                        }
                    }
                }
            }
        }
        let keep = CASTLE_KEEP[from as usize] & CASTLE_KEEP[to as usize];
        if keep != 0b1111 {
            let new = CastlingRights::from_bits(self.castling.bits() & keep);
            self.hash ^= zobrist::castling(self.castling) ^ zobrist::castling(new);
            self.castling = new;
        }
    }

    /// Plays a move if it is legal here, returning the new position; otherwise the reason,
    /// and `self` is untouched. The null move is legal when the side to move is not in check.
    pub fn play(&self, m: Move) -> Result<Position, IllegalMoveError> {
        if self.is_legal(m) {
            let mut next = self.clone();
            next.play_unchecked(m);
            Ok(next)
        } else {
            Err(IllegalMoveError {
                uci: m.to_string(),
                fen: self.fen(),
            })
        }
    }

    /// True when `m` is one of this position's legal moves (or a null move when not in check).
    pub fn is_legal(&self, m: Move) -> bool {
        if m.is_null() {
            return !self.is_check();
        }
        let mut list = crate::MoveList::new();
        self.legal_moves_into(&mut list);
        list.contains(&m)
    }

    /// The position after a null move: the other side to move, no en-passant square.
    pub fn null_move(&self) -> Option<Position> {
        self.play(Move::NULL).ok()
    }

    // ----- status -----

    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_moves()
    }

    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_moves()
    }

    /// Mirror the position: colours swapped, board flipped top to bottom.
    pub fn mirrored(&self) -> Position {
        let mut s = Setup::empty();
        for sq in self.occupied() {
            if let Some(p) = self.piece_at(sq) {
                s.put(sq.flip_vertical(), Piece::new(!p.color, p.role));
            }
        }
        s.turn = !self.turn;
        let mut rights = CastlingRights::NONE;
        for c in Color::ALL {
            for side in CastlingSide::ALL {
                if self.castling.has(c, side) {
                    rights = rights.with(!c, side);
                }
            }
        }
        s.castling = rights;
        s.ep_square = self.ep_square.map(Square::flip_vertical);
        s.halfmoves = self.halfmoves;
        s.fullmoves = self.fullmoves;
        Position::from_setup(&s).expect("mirroring keeps a position legal")
    }
}

impl Default for Position {
    fn default() -> Self {
        Position::startpos()
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.fen())?;
        for rank in Rank::ALL.iter().rev() {
            for file in File::ALL {
                let c = self
                    .piece_at(Square::from_coords(file, *rank))
                    .map_or('.', Piece::fen_char);
                write!(f, "{c}{}", if file == File::H { "\n" } else { " " })?;
            }
        }
        Ok(())
    }
}

/// Squares between the king and its destination plus the rook's path, used by castling.
pub(crate) fn castle_paths(color: Color, side: CastlingSide) -> (Bitboard, Bitboard) {
    let (king_from, king_to, rook_from, rook_to) = side.squares(color);
    // Must be empty: everything the king and rook cross or land on, except themselves.
    let empty = (between(king_from, rook_from)
        | Bitboard::from_square(king_to)
        | Bitboard::from_square(rook_to))
        & !Bitboard::from_square(king_from)
        & !Bitboard::from_square(rook_from);
    // Must not be attacked: the squares the king crosses and lands on.
    let safe = between(king_from, king_to) | Bitboard::from_square(king_to);
    (empty, safe)
}
