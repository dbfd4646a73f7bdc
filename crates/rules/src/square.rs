use std::fmt;
use std::str::FromStr;

use crate::Color;

/// A file (column), `a` to `h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum File {
    A = 0,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
}

impl File {
    pub const ALL: [File; 8] = [
        File::A,
        File::B,
        File::C,
        File::D,
        File::E,
        File::F,
        File::G,
        File::H,
    ];

    /// The file with this index; the index is taken modulo 8.
    #[inline]
    pub const fn new(index: u32) -> File {
        File::ALL[(index & 7) as usize]
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn char(self) -> char {
        (b'a' + self as u8) as char
    }

    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='h' => Some(File::new(c as u32 - 'a' as u32)),
            _ => None,
        }
    }

    /// The file `delta` steps away, if it is on the board.
    #[inline]
    pub const fn offset(self, delta: i32) -> Option<File> {
        let i = self as i32 + delta;
        if i >= 0 && i < 8 {
            Some(File::new(i as u32))
        } else {
            None
        }
    }
}

impl fmt::Display for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// A rank (row), `1` to `8`, from white's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Rank {
    First = 0,
    Second,
    Third,
    Fourth,
    Fifth,
    Sixth,
    Seventh,
    Eighth,
}

impl Rank {
    pub const ALL: [Rank; 8] = [
        Rank::First,
        Rank::Second,
        Rank::Third,
        Rank::Fourth,
        Rank::Fifth,
        Rank::Sixth,
        Rank::Seventh,
        Rank::Eighth,
    ];

    /// The rank with this index; the index is taken modulo 8.
    #[inline]
    pub const fn new(index: u32) -> Rank {
        Rank::ALL[(index & 7) as usize]
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn char(self) -> char {
        (b'1' + self as u8) as char
    }

    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '1'..='8' => Some(Rank::new(c as u32 - '1' as u32)),
            _ => None,
        }
    }

    /// The same rank seen from `color`'s side: `Rank::First.relative(Black)` is the eighth.
    #[inline]
    pub const fn relative(self, color: Color) -> Rank {
        match color {
            Color::White => self,
            Color::Black => Rank::new(7 - self as u32),
        }
    }

    #[inline]
    pub const fn offset(self, delta: i32) -> Option<Rank> {
        let i = self as i32 + delta;
        if i >= 0 && i < 8 {
            Some(Rank::new(i as u32))
        } else {
            None
        }
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// A square of the board, `A1 = 0` to `H8 = 63`, rank by rank.
///
/// ```
/// use chess_rules::{File, Rank, Square};
/// let sq: Square = "e4".parse().unwrap();
/// assert_eq!(sq, Square::E4);
/// assert_eq!((sq.file(), sq.rank()), (File::E, Rank::Fourth));
/// assert_eq!(sq.to_string(), "e4");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[rustfmt::skip]
pub enum Square {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl Square {
    #[rustfmt::skip]
    pub const ALL: [Square; 64] = [
        Square::A1, Square::B1, Square::C1, Square::D1, Square::E1, Square::F1, Square::G1, Square::H1,
        Square::A2, Square::B2, Square::C2, Square::D2, Square::E2, Square::F2, Square::G2, Square::H2,
        Square::A3, Square::B3, Square::C3, Square::D3, Square::E3, Square::F3, Square::G3, Square::H3,
        Square::A4, Square::B4, Square::C4, Square::D4, Square::E4, Square::F4, Square::G4, Square::H4,
        Square::A5, Square::B5, Square::C5, Square::D5, Square::E5, Square::F5, Square::G5, Square::H5,
        Square::A6, Square::B6, Square::C6, Square::D6, Square::E6, Square::F6, Square::G6, Square::H6,
        Square::A7, Square::B7, Square::C7, Square::D7, Square::E7, Square::F7, Square::G7, Square::H7,
        Square::A8, Square::B8, Square::C8, Square::D8, Square::E8, Square::F8, Square::G8, Square::H8,
    ];

    /// The square with this index; the index is taken modulo 64.
    #[inline]
    pub const fn new(index: u32) -> Square {
        Square::ALL[(index & 63) as usize]
    }

    /// The square with this index, or `None` past `H8`.
    pub const fn try_new(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square::new(index))
        } else {
            None
        }
    }

    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square::new(rank as u32 * 8 + file as u32)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub const fn file(self) -> File {
        File::new(self as u32 & 7)
    }

    #[inline]
    pub const fn rank(self) -> Rank {
        Rank::new(self as u32 >> 3)
    }

    /// The square `df` files and `dr` ranks away, if it is on the board.
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        match (self.file().offset(df), self.rank().offset(dr)) {
            (Some(f), Some(r)) => Some(Square::from_coords(f, r)),
            _ => None,
        }
    }

    /// Mirror along the horizontal axis (`a1` <-> `a8`).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square::new(self as u32 ^ 56)
    }

    /// Light or dark: `true` for light squares such as `h1` and `a8`.
    pub const fn is_light(self) -> bool {
        (self.file() as u32 + self.rank() as u32) % 2 == 1
    }

    /// Chebyshev distance (king steps).
    pub const fn distance(self, other: Square) -> u32 {
        let df = (self.file() as i32 - other.file() as i32).unsigned_abs();
        let dr = (self.rank() as i32 - other.rank() as i32).unsigned_abs();
        if df > dr { df } else { dr }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

/// Error for text that does not name a square.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a square: {0:?} (expected a file a-h and a rank 1-8, like e4)")]
pub struct ParseSquareError(pub String);

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let mut chars = s.chars();
        match (
            chars.next().and_then(File::from_char),
            chars.next().and_then(Rank::from_char),
            chars.next(),
        ) {
            (Some(f), Some(r), None) => Ok(Square::from_coords(f, r)),
            _ => Err(ParseSquareError(s.to_owned())),
        }
    }
}
