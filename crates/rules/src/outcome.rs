//! How games end, and the material rules for dead positions.

use std::fmt;

use crate::{Bitboard, Color, Position, Role};

/// Why a game was won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    Checkmate,
    Resignation,
    /// The loser's flag fell while the winner could still mate (FIDE 6.9).
    Timeout,
    /// The loser's illegal moves, under an arbiter's rules (FIDE 7.5.5).
    IllegalMoves,
}

/// Why a game was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    Stalemate,
    /// No sequence of legal moves can lead to mate (FIDE 5.2.2, 9.6); recognised by material.
    DeadPosition,
    Agreement,
    /// Claimed: the same position for the third time (FIDE 9.2).
    ThreefoldRepetition,
    /// Automatic: the same position for the fifth time (FIDE 9.6.1).
    FivefoldRepetition,
    /// Claimed: fifty moves by each side without capture or pawn move (FIDE 9.3).
    FiftyMoves,
    /// Automatic: seventy-five moves by each side without capture or pawn move (FIDE 9.6.2).
    SeventyFiveMoves,
    /// A flag fell but the opponent cannot mate by any legal sequence (FIDE 6.9).
    TimeoutInsufficientMaterial,
    /// Illegal moves would lose, but the opponent cannot mate by any legal sequence (FIDE
    /// 7.5.5).
    IllegalMovesInsufficientMaterial,
}

impl DrawReason {
    /// True for draws that happen without a claim or agreement.
    pub fn is_automatic(self) -> bool {
        !matches!(
            self,
            DrawReason::Agreement | DrawReason::ThreefoldRepetition | DrawReason::FiftyMoves
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            DrawReason::Stalemate => "stalemate",
            DrawReason::DeadPosition => "dead position",
            DrawReason::Agreement => "agreement",
            DrawReason::ThreefoldRepetition => "threefold repetition",
            DrawReason::FivefoldRepetition => "fivefold repetition",
            DrawReason::FiftyMoves => "fifty-move rule",
            DrawReason::SeventyFiveMoves => "seventy-five-move rule",
            DrawReason::TimeoutInsufficientMaterial => "timeout vs insufficient material",
            DrawReason::IllegalMovesInsufficientMaterial => {
                "illegal moves vs insufficient material"
            }
        }
    }
}

impl WinReason {
    pub fn name(self) -> &'static str {
        match self {
            WinReason::Checkmate => "checkmate",
            WinReason::Resignation => "resignation",
            WinReason::Timeout => "timeout",
            WinReason::IllegalMoves => "illegal moves",
        }
    }
}

/// The result of a finished game and the rule that decided it.
///
/// ```
/// use chess_rules::{Color, Outcome, WinReason};
/// let o = Outcome::Decisive { winner: Color::Black, reason: WinReason::Checkmate };
/// assert_eq!(o.result(), "0-1");
/// assert_eq!(o.to_string(), "0-1 (black wins by checkmate)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Decisive { winner: Color, reason: WinReason },
    Draw { reason: DrawReason },
}

impl Outcome {
    /// The PGN result: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result(self) -> &'static str {
        match self {
            Outcome::Decisive {
                winner: Color::White,
                ..
            } => "1-0",
            Outcome::Decisive {
                winner: Color::Black,
                ..
            } => "0-1",
            Outcome::Draw { .. } => "1/2-1/2",
        }
    }

    pub fn winner(self) -> Option<Color> {
        match self {
            Outcome::Decisive { winner, .. } => Some(winner),
            Outcome::Draw { .. } => None,
        }
    }

    /// The rule's name, e.g. `checkmate` or `threefold repetition`.
    pub fn reason_name(self) -> &'static str {
        match self {
            Outcome::Decisive { reason, .. } => reason.name(),
            Outcome::Draw { reason } => reason.name(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Decisive { winner, reason } => {
                write!(f, "{} ({winner} wins by {})", self.result(), reason.name())
            }
            Outcome::Draw { reason } => write!(f, "{} (draw by {})", self.result(), reason.name()),
        }
    }
}

impl Position {
    /// True when neither side can ever mate, judged by material: K v K, K+B v K, K+N v K, and
    /// kings with any number of bishops all on squares of one colour. (Blocked pawn walls and
    /// other dead positions that need search are not recognised.)
    ///
    /// ```
    /// use chess_rules::Position;
    /// assert!(Position::from_fen("8/8/8/2k5/8/8/3KB3/8 w - - 0 1").unwrap().is_insufficient_material());
    /// assert!(!Position::from_fen("8/8/8/2k5/8/8/3KN3/3N4 w - - 0 1").unwrap().is_insufficient_material());
    /// ```
    pub fn is_insufficient_material(&self) -> bool {
        let heavy = self.by_role(Role::Pawn) | self.by_role(Role::Rook) | self.by_role(Role::Queen);
        if heavy.has_any() {
            return false;
        }
        let knights = self.by_role(Role::Knight);
        let bishops = self.by_role(Role::Bishop);
        let minors = knights | bishops;
        if minors.count() <= 1 {
            return true;
        }
        knights.is_empty()
            && ((bishops & Bitboard::DARK_SQUARES).is_empty()
                || (bishops & Bitboard::LIGHT_SQUARES).is_empty())
    }

    /// False when `color` cannot checkmate by any sequence of legal moves, whatever the
    /// opponent does: a lone king; king and one knight or bishop against a lone king; or kings
    /// and bishops only, all on one square colour. This decides a flag fall (FIDE 6.9).
    ///
    /// ```
    /// use chess_rules::{Color, Position};
    /// // White has king and knight, black a queen: white could still mate with help.
    /// let pos = Position::from_fen("7k/8/8/8/8/8/3q4/K6N w - - 0 1").unwrap();
    /// assert!(pos.can_possibly_mate(Color::White));
    /// let pos = Position::from_fen("7k/8/8/8/8/8/8/K6N w - - 0 1").unwrap();
    /// assert!(!pos.can_possibly_mate(Color::White));
    /// ```
    pub fn can_possibly_mate(&self, color: Color) -> bool {
        let ours = self.by_color(color);
        let theirs = self.by_color(!color);
        let our_pieces = ours & !self.by_role(Role::King);
        if our_pieces.is_empty() {
            return false;
        }
        if (our_pieces
            & (self.by_role(Role::Pawn) | self.by_role(Role::Rook) | self.by_role(Role::Queen)))
        .has_any()
        {
            return true;
        }
        let their_pieces = theirs & !self.by_role(Role::King);
        // A single minor piece mates only against a king with material to block its escape.
        if our_pieces.count() == 1 && their_pieces.is_empty() {
            return false;
        }
        // Bishops only, all on one colour: mate needs the opponent to block on the other colour
        // (or a knight or pawn of theirs to do so).
        let our_knights = our_pieces & self.by_role(Role::Knight);
        if our_knights.is_empty() {
            let all_bishops = self.by_role(Role::Bishop);
            let one_colour = (all_bishops & Bitboard::DARK_SQUARES).is_empty()
                || (all_bishops & Bitboard::LIGHT_SQUARES).is_empty();
            let their_only_bishops = (their_pieces & !self.by_role(Role::Bishop)).is_empty();
            if one_colour && their_only_bishops {
                return false;
            }
        }
        true
    }
}
