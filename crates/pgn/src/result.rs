//! The game termination marker.

use std::fmt;
use std::str::FromStr;

use chess_rules::{Color, Outcome};

/// A game termination marker: `1-0`, `0-1`, `1/2-1/2` or `*`.
///
/// ```
/// use chess_pgn::GameResult;
/// let r: GameResult = "1/2-1/2".parse().unwrap();
/// assert_eq!(r, GameResult::Draw);
/// assert_eq!(GameResult::WhiteWins.to_string(), "1-0");
/// assert!("2-0".parse::<GameResult>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// `1-0`
    WhiteWins,
    /// `0-1`
    BlackWins,
    /// `1/2-1/2`
    Draw,
    /// `*`: unknown, unfinished or abandoned.
    Unknown,
}

impl GameResult {
    /// The PGN token.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unknown => "*",
        }
    }

    /// Reads a termination token; `½-½` is taken for a draw.
    pub(crate) fn from_bytes(token: &[u8]) -> Option<GameResult> {
        match token {
            b"1-0" => Some(GameResult::WhiteWins),
            b"0-1" => Some(GameResult::BlackWins),
            b"1/2-1/2" | b"\xc2\xbd-\xc2\xbd" => Some(GameResult::Draw),
            b"*" => Some(GameResult::Unknown),
            _ => None,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not a game termination marker.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a game result (expected 1-0, 0-1, 1/2-1/2 or *)")]
pub struct ParseResultError(pub String);

impl FromStr for GameResult {
    type Err = ParseResultError;
    fn from_str(s: &str) -> Result<GameResult, ParseResultError> {
        GameResult::from_bytes(s.trim().as_bytes()).ok_or_else(|| ParseResultError(s.to_owned()))
    }
}

/// ```
/// use chess_pgn::GameResult;
/// use chess_rules::{Color, Outcome, WinReason};
/// let o = Outcome::Decisive { winner: Color::Black, reason: WinReason::Checkmate };
/// assert_eq!(GameResult::from(o), GameResult::BlackWins);
/// ```
impl From<Outcome> for GameResult {
    fn from(o: Outcome) -> GameResult {
        match o.winner() {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }
}
