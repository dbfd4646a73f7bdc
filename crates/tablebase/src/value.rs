use std::cmp::Ordering;

/// Win, draw or loss for the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

impl Wdl {
    pub fn as_str(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
}

/// A position's exact value for the side to move, distances in plies (half-moves) to mate with
/// best play by both sides and the fifty-move rule ignored.
///
/// ```
/// use chess_tablebase::Value;
/// let mated = Value::Loss(0);
/// assert_eq!(mated.after_move(), Value::Win(1)); // the move before gave mate
/// assert_eq!(Value::Win(3).dtm_plies(), 3);
/// assert_eq!(Value::Loss(4).dtm_plies(), -4);
/// assert!(Value::Win(1).is_better_than(Value::Win(3)));
/// assert!(Value::Loss(8).is_better_than(Value::Loss(2)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Value {
    /// The side to move mates in this many plies (odd).
    Win(u16),
    Draw,
    /// The side to move is mated in this many plies (even; 0: it is mated now).
    Loss(u16),
}

impl Value {
    pub fn wdl(self) -> Wdl {
        match self {
            Value::Win(_) => Wdl::Win,
            Value::Draw => Wdl::Draw,
            Value::Loss(_) => Wdl::Loss,
        }
    }

    /// python-chess's Gaviota convention: plies to mate, positive when the side to move mates,
    /// negative when it is mated, 0 for a draw and for a position already mated.
    pub fn dtm_plies(self) -> i32 {
        match self {
            Value::Win(n) => i32::from(n),
            Value::Draw => 0,
            Value::Loss(n) => -i32::from(n),
        }
    }

    /// The value for the side that moved into a position of this value.
    pub fn after_move(self) -> Value {
        match self {
            Value::Win(n) => Value::Loss(n + 1),
            Value::Draw => Value::Draw,
            Value::Loss(n) => Value::Win(n + 1),
        }
    }

    /// Preference order for the side to move: shorter wins, then draws, then longer losses.
    fn rank(self) -> (i32, i32) {
        match self {
            Value::Win(n) => (2, -i32::from(n)),
            Value::Draw => (1, 0),
            Value::Loss(n) => (0, i32::from(n)),
        }
    }

    pub fn is_better_than(self, other: Value) -> bool {
        self.cmp_pref(other) == Ordering::Greater
    }

    pub fn cmp_pref(self, other: Value) -> Ordering {
        self.rank().cmp(&other.rank())
    }

    /// The one-byte encoding of the table files: 0 draw (or no position), an odd byte `n` a win
    /// in `n` plies, an even byte `n >= 2` a loss in `n - 2` plies.
    pub fn to_byte(self) -> Option<u8> {
        match self {
            Value::Draw => Some(0),
            Value::Win(n) => u8::try_from(n).ok().filter(|b| b % 2 == 1),
            Value::Loss(n) => u8::try_from(n + 2).ok().filter(|b| b.is_multiple_of(2)),
        }
    }

    pub fn from_byte(b: u8) -> Value {
        if b == 0 {
            Value::Draw
        } else if b % 2 == 1 {
            Value::Win(u16::from(b))
        } else {
            Value::Loss(u16::from(b) - 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_encoding_round_trips() {
        for b in 0..=255u8 {
            assert_eq!(Value::from_byte(b).to_byte(), Some(b));
        }
        assert_eq!(Value::Win(257).to_byte(), None);
        assert_eq!(Value::Loss(254).to_byte(), None);
    }
}
