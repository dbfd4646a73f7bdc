use std::fmt;

use crate::{CastlingSide, Color};

/// Which castlings are still allowed in principle: the king and that rook have not moved.
///
/// Whether castling is possible right now (nothing between, no attacked squares) is the move
/// generator's question; these rights only record history.
///
/// ```
/// use chess_rules::{CastlingRights, CastlingSide, Color};
/// let r = CastlingRights::ALL.without(Color::White, CastlingSide::QueenSide);
/// assert_eq!(r.to_string(), "Kkq");
/// assert_eq!(CastlingRights::NONE.to_string(), "-");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CastlingRights(u8);

impl CastlingRights {
    pub const NONE: CastlingRights = CastlingRights(0);
    pub const ALL: CastlingRights = CastlingRights(0b1111);

    #[inline]
    const fn bit(color: Color, side: CastlingSide) -> u8 {
        let s = match side {
            CastlingSide::KingSide => 0,
            CastlingSide::QueenSide => 1,
        };
        1 << (color as u8 * 2 + s)
    }

    #[inline]
    pub const fn has(self, color: Color, side: CastlingSide) -> bool {
        self.0 & Self::bit(color, side) != 0
    }

    #[inline]
    pub const fn with(self, color: Color, side: CastlingSide) -> CastlingRights {
        CastlingRights(self.0 | Self::bit(color, side))
    }

    #[inline]
    pub const fn without(self, color: Color, side: CastlingSide) -> CastlingRights {
        CastlingRights(self.0 & !Self::bit(color, side))
    }

    /// Neither castling for this colour.
    #[inline]
    pub const fn without_color(self, color: Color) -> CastlingRights {
        CastlingRights(self.0 & !(0b11 << (color as u8 * 2)))
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The rights as a number 0..16 (for hashing tables).
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    #[inline]
    pub(crate) const fn from_bits(bits: u8) -> CastlingRights {
        CastlingRights(bits & 0b1111)
    }
}

impl fmt::Display for CastlingRights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (color, side, c) in [
            (Color::White, CastlingSide::KingSide, 'K'),
            (Color::White, CastlingSide::QueenSide, 'Q'),
            (Color::Black, CastlingSide::KingSide, 'k'),
            (Color::Black, CastlingSide::QueenSide, 'q'),
        ] {
            if self.has(color, side) {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CastlingRights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CastlingRights({self})")
    }
}
