use crate::{Bitboard, CastlingRights, Color, File, Piece, Rank, Role, Square};

/// Any arrangement of pieces with the other FEN fields, not yet checked for legality.
///
/// Text becomes a `Setup` first ([`Setup::from_fen`]); only
/// [`crate::Position::from_setup`] turns it into a playable position, explaining what is wrong
/// when it cannot.
///
/// ```
/// use chess_rules::{Color, Piece, Position, PositionError, Role, Setup, Square};
/// let mut setup = Setup::empty();
/// setup.put(Square::E1, Piece::new(Color::White, Role::King));
/// assert_eq!(Position::from_setup(&setup), Err(PositionError::MissingKing(Color::Black)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    /// The piece on each square, indexed by [`Square::index`].
    pub board: [Option<Piece>; 64],
    pub turn: Color,
    pub castling: CastlingRights,
    /// The square a pawn skipped with a two-square move on the previous move, if any.
    pub ep_square: Option<Square>,
    /// Half-moves since the last capture or pawn move (the fifty-move counter).
    pub halfmoves: u32,
    /// The number of the full move, starting at 1 and incremented after black's move.
    pub fullmoves: u32,
}

impl Setup {
    /// No pieces, white to move, no rights, counters 0 and 1.
    pub fn empty() -> Setup {
        Setup {
            board: [None; 64],
            turn: Color::White,
            castling: CastlingRights::NONE,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    /// The standard starting arrangement.
    pub fn startpos() -> Setup {
        let mut s = Setup::empty();
        let back = [
            Role::Rook,
            Role::Knight,
            Role::Bishop,
            Role::Queen,
            Role::King,
            Role::Bishop,
            Role::Knight,
            Role::Rook,
        ];
        for (i, file) in File::ALL.into_iter().enumerate() {
            for color in Color::ALL {
                s.put(
                    Square::from_coords(file, Rank::First.relative(color)),
                    Piece::new(color, back[i]),
                );
                s.put(
                    Square::from_coords(file, Rank::Second.relative(color)),
                    Piece::new(color, Role::Pawn),
                );
            }
        }
        s.castling = CastlingRights::ALL;
        s
    }

    pub fn put(&mut self, sq: Square, piece: Piece) {
        self.board[sq.index()] = Some(piece);
    }

    pub fn remove(&mut self, sq: Square) -> Option<Piece> {
        self.board[sq.index()].take()
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    /// The squares holding this piece.
    pub fn squares_of(&self, piece: Piece) -> Bitboard {
        Square::ALL
            .into_iter()
            .filter(|sq| self.board[sq.index()] == Some(piece))
            .collect()
    }
}

impl Default for Setup {
    fn default() -> Self {
        Setup::empty()
    }
}
