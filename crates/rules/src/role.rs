use std::fmt;

use crate::Color;

/// A kind of piece, without its colour.
///
/// ```
/// use chess_rules::Role;
/// assert_eq!(Role::from_char('N'), Some(Role::Knight));
/// assert_eq!(Role::Queen.upper_char(), 'Q');
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Role {
    Pawn = 0,
    Knight = 1,
    Bishop = 2,
    Rook = 3,
    Queen = 4,
    King = 5,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];

    /// The roles a pawn may promote to (FIDE 3.7.e), strongest first.
    pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case English letter (`p n b r q k`), as UCI writes promotions.
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
        }
    }

    /// Upper-case English letter, as SAN writes pieces.
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// Either case of an English piece letter.
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }

    /// The white figurine (`♔♕♖♗♘♙`), used by SAN's figurine form for both colours.
    pub const fn figurine(self) -> char {
        match self {
            Role::Pawn => '♙',
            Role::Knight => '♘',
            Role::Bishop => '♗',
            Role::Rook => '♖',
            Role::Queen => '♕',
            Role::King => '♔',
        }
    }

    /// Reads a figurine of either colour.
    pub const fn from_figurine(c: char) -> Option<Role> {
        match c {
            '♙' | '♟' => Some(Role::Pawn),
            '♘' | '♞' => Some(Role::Knight),
            '♗' | '♝' => Some(Role::Bishop),
            '♖' | '♜' => Some(Role::Rook),
            '♕' | '♛' => Some(Role::Queen),
            '♔' | '♚' => Some(Role::King),
            _ => None,
        }
    }

    /// The Chinese piece name (traditional characters): 王 后 車 象 馬 兵.
    pub const fn chinese(self) -> char {
        match self {
            Role::Pawn => '兵',
            Role::Knight => '馬',
            Role::Bishop => '象',
            Role::Rook => '車',
            Role::Queen => '后',
            Role::King => '王',
        }
    }

    /// Reads a Chinese piece name, traditional or simplified (车 马).
    pub const fn from_chinese(c: char) -> Option<Role> {
        match c {
            '兵' => Some(Role::Pawn),
            '馬' | '马' => Some(Role::Knight),
            '象' => Some(Role::Bishop),
            '車' | '车' => Some(Role::Rook),
            '后' => Some(Role::Queen),
            '王' => Some(Role::King),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Role::Pawn => "pawn",
            Role::Knight => "knight",
            Role::Bishop => "bishop",
            Role::Rook => "rook",
            Role::Queen => "queen",
            Role::King => "king",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A piece: a role and a colour.
///
/// ```
/// use chess_rules::{Color, Piece, Role};
/// let p = Piece::from_fen_char('n').unwrap();
/// assert_eq!(p, Piece { color: Color::Black, role: Role::Knight });
/// assert_eq!(p.fen_char(), 'n');
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    #[inline]
    pub const fn new(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }

    /// FEN letter: upper case for white, lower case for black.
    pub const fn fen_char(self) -> char {
        match self.color {
            Color::White => self.role.upper_char(),
            Color::Black => self.role.char(),
        }
    }

    pub const fn from_fen_char(c: char) -> Option<Piece> {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        match Role::from_char(c) {
            Some(role) => Some(Piece { color, role }),
            None => None,
        }
    }

    /// Index 0..12, white pieces first.
    #[inline]
    pub const fn index(self) -> usize {
        self.color as usize * 6 + self.role as usize
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.color, self.role)
    }
}
