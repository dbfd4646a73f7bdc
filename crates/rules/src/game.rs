//! A game: a start position and the moves played, with repetition counting and outcomes.

use crate::{Color, DrawReason, Move, Outcome, Position, SanError, WinReason};

/// Why a move could not be added to a [`Game`]. The game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error(transparent)]
    San(#[from] SanError),
    #[error("illegal move {uci} in {fen}")]
    Illegal { uci: String, fen: String },
    #[error("the game is over: {0}")]
    Over(Outcome),
}

/// A game from any legal start position: the moves played, every position reached and its
/// repetition key, so that repetitions are counted the FIDE way (same placement, side to move,
/// castling rights, and an en-passant square only when the capture is legal).
///
/// ```
/// use chess_rules::{DrawReason, Game, Outcome, Position};
/// let mut game = Game::new(Position::startpos());
/// for _ in 0..2 {
///     for san in ["Nf3", "Nf6", "Ng1", "Ng8"] {
///         game.play_san(san).unwrap();
///     }
/// }
/// assert_eq!(game.repetition_count(), 3);
/// assert_eq!(game.claimable_draw(), Some(DrawReason::ThreefoldRepetition));
/// assert_eq!(game.outcome(), None); // threefold must be claimed
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    positions: Vec<Position>,
    keys: Vec<u64>,
    moves: Vec<Move>,
}

impl Game {
    pub fn new(start: Position) -> Game {
        let key = start.repetition_key();
        Game {
            positions: vec![start],
            keys: vec![key],
            moves: Vec::new(),
        }
    }

    pub fn from_fen(fen: &str) -> Result<Game, crate::FenError> {
        Ok(Game::new(Position::from_fen(fen)?))
    }

    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions.last().unwrap_or(&self.positions[0])
    }

    /// The position after `ply` moves (0 is the start).
    pub fn position_at(&self, ply: usize) -> Option<&Position> {
        self.positions.get(ply)
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Moves played so far.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// Plays a legal move. Rejected, with the game unchanged, when the move is illegal or an
    /// automatic rule (mate, stalemate, dead position, fivefold, seventy-five moves) has
    /// already ended the game.
    pub fn play(&mut self, m: Move) -> Result<(), GameError> {
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Over(outcome));
        }
        let next = self.position().play(m).map_err(|e| GameError::Illegal {
            uci: e.uci,
            fen: e.fen,
        })?;
        self.keys.push(next.repetition_key());
        self.positions.push(next);
        self.moves.push(m);
        Ok(())
    }

    /// Reads a move in any accepted notation (UCI, SAN, coordinate) and plays it.
    pub fn play_san(&mut self, text: &str) -> Result<Move, GameError> {
        let m = self.position().parse_move(text)?;
        self.play(m)?;
        Ok(m)
    }

    /// Takes back the last move.
    pub fn undo(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.positions.pop();
        self.keys.pop();
        Some(m)
    }

    /// The moves in SAN, each in the position it was played from.
    pub fn san_moves(&self) -> Vec<String> {
        self.moves
            .iter()
            .zip(&self.positions)
            .map(|(m, p)| p.san(*m))
            .collect()
    }

    /// How many times the current position has occurred, this time included.
    pub fn repetition_count(&self) -> usize {
        self.repetition_count_at(self.ply())
    }

    /// Occurrences of the position after `ply` moves, up to and including that ply.
    pub fn repetition_count_at(&self, ply: usize) -> usize {
        let Some(&key) = self.keys.get(ply) else {
            return 0;
        };
        // Positions before the last capture or pawn move cannot repeat, but counters of a
        // set-up start position say nothing about earlier plies, so scan the whole game.
        self.keys[..=ply].iter().filter(|&&k| k == key).count()
    }

    /// The result if the game is over by a rule that applies without a claim: checkmate,
    /// stalemate, dead position, fivefold repetition or the seventy-five-move rule.
    pub fn outcome(&self) -> Option<Outcome> {
        let pos = self.position();
        if !pos.has_legal_moves() {
            return Some(if pos.is_check() {
                Outcome::Decisive {
                    winner: !pos.turn(),
                    reason: WinReason::Checkmate,
                }
            } else {
                Outcome::Draw {
                    reason: DrawReason::Stalemate,
                }
            });
        }
        if pos.is_insufficient_material() {
            return Some(Outcome::Draw {
                reason: DrawReason::DeadPosition,
            });
        }
        if self.repetition_count() >= 5 {
            return Some(Outcome::Draw {
                reason: DrawReason::FivefoldRepetition,
            });
        }
        // FIDE 9.6.2: 75 moves each; a mate on the last move stands (handled above).
        if pos.halfmoves() >= 150 {
            return Some(Outcome::Draw {
                reason: DrawReason::SeventyFiveMoves,
            });
        }
        None
    }

    /// A draw the side to move may claim now: threefold repetition or the fifty-move rule.
    pub fn claimable_draw(&self) -> Option<DrawReason> {
        if self.repetition_count() >= 3 {
            Some(DrawReason::ThreefoldRepetition)
        } else if self.position().halfmoves() >= 100 {
            Some(DrawReason::FiftyMoves)
        } else {
            None
        }
    }

    /// A draw the side to move may claim by declaring `m` as its next move (FIDE 9.2.1.1 and
    /// 9.3.1): the position after `m` would occur a third time, or `m` completes fifty moves.
    pub fn claimable_draw_with_move(&self, m: Move) -> Option<DrawReason> {
        let next = self.position().play(m).ok()?;
        let key = next.repetition_key();
        if self.keys.iter().filter(|&&k| k == key).count() + 1 >= 3 {
            Some(DrawReason::ThreefoldRepetition)
        } else if next.halfmoves() >= 100 {
            Some(DrawReason::FiftyMoves)
        } else {
            None
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.position().turn()
    }
}
