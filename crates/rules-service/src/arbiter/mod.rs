//! The arbiter's rules in a game: what an illegal move costs under each mode (FIDE 7.5.3:
//! two minutes to the opponent, the second loses; three strikes: the third loses), and
//! touch-move (FIDE 4.3: a touched piece must be moved or captured, j'adoube excepted).
//! An [`Arbiter`] value keeps a game's mode, fouls and touches; the session owns one, hands
//! it the position (and, for a foul, the clock) and is told the penalty or the outcome.

use chess_rules::{
    ByColor, CastlingSide, Color, DrawReason, Move, Outcome, Position, Role, Square, WinReason,
};
use serde::{Deserialize, Serialize};

use crate::session::{SessionError, TouchMove};

/// What happens to an illegal move in a game (chosen at creation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArbiterMode {
    /// Refused, the game unchanged.
    #[default]
    Reject,
    /// FIDE 7.5: a foul; the first adds two minutes to the opponent's clock, the second loses.
    Fide,
    /// A foul; the third loses.
    ThreeStrikes,
}

impl ArbiterMode {
    pub(crate) fn is_reject(&self) -> bool {
        *self == ArbiterMode::Reject
    }
}

/// At most this many touches (j'adoube included) during one move: each is a durable event
/// that every later state of the move carries, and a board has at most 32 pieces to touch.
pub const MAX_TOUCHES_PER_MOVE: usize = 32;

/// Time the opponent gets for a first illegal move under FIDE 7.5.3.
pub const FIDE_FOUL_BONUS_MS: i64 = 120_000;

/// The penalty a foul drew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Penalty {
    /// FIDE 7.5.3: two minutes added to the opponent's clock.
    TwoMinutes,
    /// FIDE 7.5.3 without a clock: a warning.
    Warning,
    /// Under three strikes: strike `n` of 3.
    Strike(u32),
    /// The game ended (lost, or drawn when the opponent could not mate).
    GameOver(Outcome),
}

/// A recorded foul.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoulRecord {
    pub side: Color,
    pub attempted: String,
    pub reason: String,
    pub penalty: Penalty,
    /// Moves played when it happened.
    pub ply: u32,
    /// The side's fouls so far, this one included.
    pub count: u32,
}

impl FoulRecord {
    /// `two minutes added to black's clock`, `strike 2 of 3`, `1-0 (white wins by illegal
    /// moves)`.
    pub fn penalty_text(&self) -> String {
        match self.penalty {
            Penalty::TwoMinutes => format!("two minutes added to {}'s clock", !self.side),
            Penalty::Warning => "warning (no clock to add two minutes to)".to_string(),
            Penalty::Strike(n) => format!("strike {n} of 3"),
            Penalty::GameOver(o) => o.to_string(),
        }
    }
}

/// A touch reported during the move in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TouchRecord {
    pub side: Color,
    pub square: Square,
    /// The touched piece as `Ng1`.
    pub piece: String,
    pub adjust: bool,
}

/// The arbiter of one game: its mode, the fouls so far and the touches of the move in
/// progress. It judges against the position it is handed and never changes the game itself:
/// the session applies the penalty or the outcome it returns.
#[derive(Clone, Debug, Default)]
pub struct Arbiter {
    mode: ArbiterMode,
    fouls: Vec<FoulRecord>,
    /// Touches of the move in progress (cleared by the move).
    touches: Vec<TouchRecord>,
}

impl Arbiter {
    pub fn new(mode: ArbiterMode) -> Arbiter {
        Arbiter {
            mode,
            ..Arbiter::default()
        }
    }

    pub fn mode(&self) -> ArbiterMode {
        self.mode
    }

    pub fn fouls(&self) -> &[FoulRecord] {
        &self.fouls
    }

    pub fn touches(&self) -> &[TouchRecord] {
        &self.touches
    }

    /// Touch-move (FIDE 4.3 and 4.4) for a new move `m` (or the move a draw claim declares)
    /// in `pos`. A stored event is not held to it again when the log is replayed (it was
    /// accepted under the rules of its day), so that these rules can grow without making old
    /// games unreadable.
    pub fn check_move(&self, pos: &Position, m: Move) -> Result<(), SessionError> {
        self.touch_violation(pos, m)
            .map_or(Ok(()), |why| Err(SessionError::TouchMove(why)))
    }

    /// Whether one more touch may be reported during this move.
    pub fn check_touch(&self) -> Result<(), SessionError> {
        if self.touches.len() >= MAX_TOUCHES_PER_MOVE {
            return Err(SessionError::TooManyTouches {
                limit: MAX_TOUCHES_PER_MOVE,
            });
        }
        Ok(())
    }

    /// Why `m` breaks touch-move, if it does. FIDE 4.3: a touched own piece that can move
    /// must be moved, a touched opponent's piece that can be captured must be captured, and
    /// with one of each the capture with the touched piece comes first. FIDE 4.4: the king
    /// and then a rook touched: castle on that side if legal, else another king move, else
    /// any move; a rook and then the king touched: no castling on that side.
    pub fn touch_violation(&self, pos: &Position, m: Move) -> Option<TouchMove> {
        if let Some(verdict) = self.castling_touch(pos, m) {
            return verdict;
        }
        if let Some(rook) = self.rook_touched_before_king(pos)
            && m.castling_side() == Some(side_of_rook(pos, rook))
        {
            return Some(TouchMove::NoCastling { rook });
        }
        let legal = pos.legal_moves();
        let us = pos.turn();
        let captures = |mv: &Move, target: Square| {
            mv.to() == target
                || (mv.is_en_passant()
                    && target.rank() == mv.from().rank()
                    && target.file() == mv.to().file())
        };
        let binding = self.touches.iter().filter(|t| !t.adjust);
        let own = binding.clone().find(|t| {
            t.side == us
                && pos.color_at(t.square) == Some(us)
                && legal.iter().any(|mv| mv.from() == t.square)
        });
        let theirs = binding.clone().find(|t| {
            pos.color_at(t.square) == Some(!us) && legal.iter().any(|mv| captures(mv, t.square))
        });
        match (own, theirs) {
            (None, None) => None,
            (Some(o), None) => (m.from() != o.square).then(|| TouchMove::MoveIt {
                role: pos.role_at(o.square),
                square: o.square,
            }),
            (None, Some(t)) => (!captures(&m, t.square)).then(|| TouchMove::CaptureIt {
                role: pos.role_at(t.square),
                square: t.square,
            }),
            (Some(o), Some(t)) => {
                if legal
                    .iter()
                    .any(|mv| mv.from() == o.square && captures(mv, t.square))
                {
                    (!(m.from() == o.square && captures(&m, t.square))).then(|| {
                        TouchMove::CaptureWithIt {
                            own_role: pos.role_at(o.square),
                            own: o.square,
                            their_role: pos.role_at(t.square),
                            theirs: t.square,
                        }
                    })
                } else {
                    // Otherwise the first touched of the two that can be moved or captured.
                    let first = self
                        .touches
                        .iter()
                        .find(|x| x.square == o.square || x.square == t.square)?;
                    if first.square == o.square {
                        (m.from() != o.square).then(|| TouchMove::MoveFirst {
                            role: pos.role_at(o.square),
                            square: o.square,
                        })
                    } else {
                        (!captures(&m, t.square)).then(|| TouchMove::CaptureFirst {
                            role: pos.role_at(t.square),
                            square: t.square,
                        })
                    }
                }
            }
        }
    }

    /// FIDE 4.4.1 and 4.4.3, when the side to move touched its king and then a rook: the
    /// verdict on `m` (`Some(None)`: allowed), or `None` when 4.4 does not apply.
    fn castling_touch(&self, pos: &Position, m: Move) -> Option<Option<TouchMove>> {
        let king = pos.king_of(pos.turn());
        let own: Vec<&TouchRecord> = self.own_binding_touches(pos).collect();
        let k = own.iter().position(|t| t.square == king)?;
        let rook = own[k + 1..]
            .iter()
            .find(|t| pos.role_at(t.square) == Some(Role::Rook))?
            .square;
        let side = side_of_rook(pos, rook);
        let legal = pos.legal_moves();
        if let Some(castle) = legal.iter().find(|mv| mv.castling_side() == Some(side)) {
            return Some((m != *castle).then_some(TouchMove::Castle { rook, side }));
        }
        if legal.iter().any(|mv| mv.from() == king) {
            return Some((m.from() != king).then_some(TouchMove::KingMove { rook, side }));
        }
        // The king has no legal move: any legal move may be made.
        Some(None)
    }

    /// The rook the side to move touched before touching its king (FIDE 4.4.2), if any.
    fn rook_touched_before_king(&self, pos: &Position) -> Option<Square> {
        let king = pos.king_of(pos.turn());
        let own: Vec<&TouchRecord> = self.own_binding_touches(pos).collect();
        let k = own.iter().position(|t| t.square == king)?;
        own[..k]
            .iter()
            .find(|t| pos.role_at(t.square) == Some(Role::Rook))
            .map(|t| t.square)
    }

    /// The side to move's touches of its own pieces to move them (j'adoube aside), in order.
    fn own_binding_touches<'a>(
        &'a self,
        pos: &'a Position,
    ) -> impl Iterator<Item = &'a TouchRecord> {
        let us = pos.turn();
        self.touches
            .iter()
            .filter(move |t| !t.adjust && t.side == us && pos.color_at(t.square) == Some(us))
    }

    /// Whether one more foul by `side` ends the game (FIDE 7.5.5's second, or the third
    /// strike).
    pub fn foul_ends_game(&self, side: Color) -> bool {
        let count = self.fouls.iter().filter(|f| f.side == side).count() as u32 + 1;
        count >= self.foul_limit()
    }

    fn foul_limit(&self) -> u32 {
        match self.mode {
            ArbiterMode::Fide => 2,
            _ => 3,
        }
    }

    /// Records a foul by `side` (its mode allows fouls: checked) after `ply` moves, and
    /// returns its penalty: two minutes added to the opponent's `clock` (its remaining times)
    /// under FIDE 7.5.3 when there is one, a strike, or the outcome when the foul ends the
    /// game, which the session then records: a loss when the opponent `can_mate`, else a draw.
    pub fn foul(
        &mut self,
        side: Color,
        attempted: &str,
        reason: &str,
        can_mate: bool,
        ply: u32,
        clock: Option<&mut ByColor<i64>>,
    ) -> Penalty {
        let count = self.fouls.iter().filter(|f| f.side == side).count() as u32 + 1;
        let limit = self.foul_limit();
        let penalty = if count >= limit {
            let outcome = if can_mate {
                Outcome::Decisive {
                    winner: !side,
                    reason: WinReason::IllegalMoves,
                }
            } else {
                Outcome::Draw {
                    reason: DrawReason::IllegalMovesInsufficientMaterial,
                }
            };
            Penalty::GameOver(outcome)
        } else if self.mode == ArbiterMode::Fide {
            match clock {
                Some(remaining_ms) => {
                    remaining_ms[!side] += FIDE_FOUL_BONUS_MS;
                    Penalty::TwoMinutes
                }
                None => Penalty::Warning,
            }
        } else {
            Penalty::Strike(count)
        };
        self.fouls.push(FoulRecord {
            side,
            attempted: attempted.to_owned(),
            reason: reason.to_owned(),
            penalty,
            ply,
            count,
        });
        penalty
    }

    /// Records a touch of the piece on `square` of `pos` (checked) for the move in progress.
    pub fn touch(&mut self, side: Color, square: &str, adjust: bool, pos: &Position) {
        let Ok(sq) = square.parse::<Square>() else {
            return;
        };
        self.touches.push(TouchRecord {
            side,
            square: sq,
            piece: piece_label(pos, sq),
            adjust,
        });
    }

    /// A move was made: the touches of the move in progress are done with.
    pub fn moved(&mut self) {
        self.touches.clear();
    }
}

/// The castling side a rook on `rook` belongs to: the one towards its file from the king.
fn side_of_rook(pos: &Position, rook: Square) -> CastlingSide {
    if rook.file() > pos.king_of(pos.turn()).file() {
        CastlingSide::KingSide
    } else {
        CastlingSide::QueenSide
    }
}

/// The piece on `sq` as `Ng1` (`Pe2` for pawns).
fn piece_label(pos: &Position, sq: Square) -> String {
    match pos.role_at(sq) {
        Some(chess_rules::Role::Pawn) | None => format!("P{sq}"),
        Some(r) => format!("{}{sq}", r.upper_char()),
    }
}

#[cfg(test)]
mod tests;
