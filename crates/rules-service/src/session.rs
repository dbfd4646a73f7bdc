//! A game session as a fold over its events. Every change to a game is an [`Event`]; the
//! store keeps the events, and replaying them (timestamps included) rebuilds exactly the
//! same state, clocks and all. [`Session::check`] decides whether an event may happen;
//! [`Session::apply`] makes it happen and cannot fail after a successful check.

use chess_rules::{ByColor, Color, DrawReason, Game, Move, Outcome, Position, Square, WinReason};
use serde::{Deserialize, Serialize};

use crate::timecontrol::TimeControl;

/// A side, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    White,
    Black,
}

impl From<Side> for Color {
    fn from(s: Side) -> Color {
        match s {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

impl From<Color> for Side {
    fn from(c: Color) -> Side {
        match c {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }
}

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
    fn is_reject(&self) -> bool {
        *self == ArbiterMode::Reject
    }
}

/// Time the opponent gets for a first illegal move under FIDE 7.5.3.
pub const FIDE_FOUL_BONUS_MS: i64 = 120_000;

/// Everything that can happen to a game, with the server time (ms since the Unix epoch)
/// at which it was accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Created {
        start_fen: String,
        time_control: Option<TimeControl>,
        white: String,
        black: String,
        at_ms: u64,
        /// Absent in logs written before arbiter modes: those games refuse illegal moves.
        #[serde(default, skip_serializing_if = "ArbiterMode::is_reject")]
        illegal_moves: ArbiterMode,
    },
    Move {
        uci: String,
        offer_draw: bool,
        at_ms: u64,
    },
    DrawAnswered {
        side: Side,
        accept: bool,
        at_ms: u64,
    },
    Resigned {
        side: Side,
        at_ms: u64,
    },
    DrawClaimed {
        side: Side,
        uci: Option<String>,
        at_ms: u64,
    },
    FlagFell {
        side: Side,
        at_ms: u64,
    },
    /// An illegal move under an arbiter mode: recorded, the position unchanged; the penalty
    /// follows from the mode and the side's earlier fouls.
    Foul {
        side: Side,
        attempted: String,
        reason: String,
        at_ms: u64,
    },
    /// The side to move touched a piece (touch-move), or adjusted it (`adjust`, j'adoube).
    Touched {
        side: Side,
        square: String,
        adjust: bool,
        at_ms: u64,
    },
}

/// Why an event may not happen now. The session is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("the game is over: {0}")]
    GameOver(Outcome),
    #[error("it is {turn}'s turn, not {side}'s")]
    NotYourTurn { side: Color, turn: Color },
    #[error("expected ply {expected} but the game is at ply {actual}: reload the game and retry")]
    StalePly { expected: u32, actual: u32 },
    #[error("{0}")]
    IllegalMove(String),
    #[error("{0}")]
    DrawOffer(&'static str),
    #[error("there is no draw offer from {0}'s opponent to answer")]
    NoDrawOffer(Color),
    #[error("{0}")]
    NoClaim(String),
    #[error("{0}")]
    Clock(&'static str),
    #[error("{0}")]
    TouchMove(String),
    #[error("{0}")]
    Touch(String),
    #[error("illegal moves are refused in this game (it was created with illegal_moves: reject)")]
    NoArbiter,
    #[error("corrupt event log: {0}")]
    Corrupt(String),
}

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

/// One played move's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveRecord {
    pub time_used_ms: u64,
    pub draw_offered: bool,
}

/// Clock state. Times are kept as of the start of the current turn; [`Session::remaining`]
/// gives the live values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    pub remaining_ms: ByColor<i64>,
    /// When the side to move's clock started; `None` before white's first move (the clocks
    /// start when white has moved) and after the game ends.
    pub running_since_ms: Option<u64>,
    pub period: ByColor<usize>,
    pub moves_in_period: ByColor<u32>,
}

#[derive(Clone, Debug)]
pub struct Session {
    pub game: Game,
    pub start_fen: String,
    pub white: String,
    pub black: String,
    pub created_ms: u64,
    pub time_control: Option<TimeControl>,
    pub clock: Option<Clock>,
    pub records: Vec<MoveRecord>,
    /// The side whose draw offer awaits an answer.
    pub draw_offer: Option<Color>,
    /// A side whose offer was refused may not offer again until the opponent has offered.
    pub offer_blocked: ByColor<bool>,
    pub outcome: Option<Outcome>,
    /// Events applied so far (the next event's sequence number).
    pub events: u32,
    pub mode: ArbiterMode,
    pub fouls: Vec<FoulRecord>,
    /// Touches of the move in progress (cleared by the move).
    pub touches: Vec<TouchRecord>,
}

fn at_of(ev: &Event) -> u64 {
    match *ev {
        Event::Created { at_ms, .. }
        | Event::Move { at_ms, .. }
        | Event::DrawAnswered { at_ms, .. }
        | Event::Resigned { at_ms, .. }
        | Event::DrawClaimed { at_ms, .. }
        | Event::FlagFell { at_ms, .. }
        | Event::Foul { at_ms, .. }
        | Event::Touched { at_ms, .. } => at_ms,
    }
}

impl Session {
    /// A new session from its `Created` event.
    pub fn create(ev: &Event) -> Result<Session, SessionError> {
        let Event::Created {
            start_fen,
            time_control,
            white,
            black,
            at_ms,
            illegal_moves,
        } = ev
        else {
            return Err(SessionError::Corrupt(
                "the first event must be `created`".into(),
            ));
        };
        let start = if start_fen.is_empty() {
            Position::startpos()
        } else {
            Position::from_fen(start_fen).map_err(|e| SessionError::Corrupt(e.to_string()))?
        };
        let clock = time_control.as_ref().map(|tc| {
            let base = tc.periods[0].base_ms as i64;
            Clock {
                remaining_ms: ByColor {
                    white: base,
                    black: base,
                },
                running_since_ms: None,
                period: ByColor::default(),
                moves_in_period: ByColor::default(),
            }
        });
        let game = Game::new(start.clone());
        let mut s = Session {
            outcome: game.outcome(),
            game,
            start_fen: start.fen(),
            white: white.clone(),
            black: black.clone(),
            created_ms: *at_ms,
            time_control: time_control.clone(),
            clock,
            records: Vec::new(),
            draw_offer: None,
            offer_blocked: ByColor::default(),
            events: 1,
            mode: *illegal_moves,
            fouls: Vec::new(),
            touches: Vec::new(),
        };
        if s.outcome.is_some() {
            s.stop_clock();
        }
        Ok(s)
    }

    /// Rebuilds a session from its whole event log.
    pub fn replay(events: &[Event]) -> Result<Session, SessionError> {
        let (first, rest) = events
            .split_first()
            .ok_or_else(|| SessionError::Corrupt("no events".into()))?;
        let mut s = Session::create(first)?;
        for ev in rest {
            s.check(ev)
                .map_err(|e| SessionError::Corrupt(format!("event {}: {e}", s.events)))?;
            s.apply(ev);
        }
        Ok(s)
    }

    pub fn position(&self) -> &Position {
        self.game.position()
    }

    pub fn turn(&self) -> Color {
        self.game.turn()
    }

    pub fn ply(&self) -> u32 {
        self.game.ply() as u32
    }

    /// Live remaining times at `now_ms` (the running clock counted down, never negative).
    pub fn remaining(&self, now_ms: u64) -> Option<ByColor<i64>> {
        let clock = self.clock.as_ref()?;
        let mut r = clock.remaining_ms;
        if let Some(since) = clock.running_since_ms {
            let t = self.turn();
            r[t] -= now_ms.saturating_sub(since) as i64;
        }
        r.white = r.white.max(0);
        r.black = r.black.max(0);
        Some(r)
    }

    /// When the side to move's flag falls, if a clock is running.
    pub fn flag_deadline_ms(&self) -> Option<u64> {
        let clock = self.clock.as_ref()?;
        if self.outcome.is_some() {
            return None;
        }
        let since = clock.running_since_ms?;
        Some(since.saturating_add(clock.remaining_ms[self.turn()].max(0) as u64))
    }

    /// The side whose flag has fallen by `now_ms`, if any.
    pub fn flag_fallen(&self, now_ms: u64) -> Option<Color> {
        (self.flag_deadline_ms()? <= now_ms).then(|| self.turn())
    }

    /// A draw the side to move may claim now.
    pub fn claimable_draw(&self) -> Option<DrawReason> {
        if self.outcome.is_some() {
            None
        } else {
            self.game.claimable_draw()
        }
    }

    fn ensure_running(&self) -> Result<(), SessionError> {
        match self.outcome {
            Some(o) => Err(SessionError::GameOver(o)),
            None => Ok(()),
        }
    }

    fn ensure_turn(&self, side: Color) -> Result<(), SessionError> {
        let turn = self.turn();
        if side == turn {
            Ok(())
        } else {
            Err(SessionError::NotYourTurn { side, turn })
        }
    }

    fn parse_uci(&self, uci: &str) -> Result<Move, SessionError> {
        self.position()
            .parse_uci(uci)
            .map_err(|e| SessionError::IllegalMove(e.to_string()))
    }

    /// Whether `ev` may happen now (the caller has already recorded any flag that fell
    /// before `ev`'s time).
    pub fn check(&self, ev: &Event) -> Result<(), SessionError> {
        match ev {
            Event::Created { .. } => Err(SessionError::Corrupt("a second `created` event".into())),
            Event::Move {
                uci,
                offer_draw,
                at_ms,
            } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                let m = self.parse_uci(uci)?;
                if m.is_null() {
                    return Err(SessionError::IllegalMove(
                        "a null move cannot be played in a game".into(),
                    ));
                }
                if let Some(why) = self.touch_violation(m) {
                    return Err(SessionError::TouchMove(why));
                }
                if *offer_draw {
                    let turn = self.turn();
                    if self.draw_offer == Some(!turn) {
                        return Err(SessionError::DrawOffer(
                            "your opponent's draw offer is pending: accept or decline it instead of offering",
                        ));
                    }
                    if self.offer_blocked[turn] {
                        return Err(SessionError::DrawOffer(
                            "your last draw offer was declined: you may offer again after your opponent has offered",
                        ));
                    }
                }
                Ok(())
            }
            Event::DrawAnswered { side, at_ms, .. } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                let side = Color::from(*side);
                if self.draw_offer != Some(!side) {
                    return Err(SessionError::NoDrawOffer(side));
                }
                self.ensure_turn(side)
            }
            Event::Resigned { .. } => self.ensure_running(),
            Event::DrawClaimed { side, uci, at_ms } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                self.ensure_turn(Color::from(*side))?;
                match uci {
                    Some(uci) => {
                        let m = self.parse_uci(uci)?;
                        self.game.claimable_draw_with_move(m).map(|_| ()).ok_or_else(|| {
                            SessionError::NoClaim(format!(
                                "after {} the position would not occur a third time and fifty moves would not be complete",
                                self.position().san(m)
                            ))
                        })
                    }
                    None => self.game.claimable_draw().map(|_| ()).ok_or_else(|| {
                        SessionError::NoClaim(format!(
                            "no draw to claim: this position has occurred {} time(s) and the fifty-move count is at {} half-moves",
                            self.game.repetition_count(),
                            self.position().halfmoves()
                        ))
                    }),
                }
            }
            Event::FlagFell { side, at_ms } => {
                self.ensure_running()?;
                match self.flag_fallen(*at_ms) {
                    Some(c) if c == Color::from(*side) => Ok(()),
                    _ => Err(SessionError::Clock("that flag has not fallen")),
                }
            }
            Event::Foul { side, at_ms, .. } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                if self.mode == ArbiterMode::Reject {
                    return Err(SessionError::NoArbiter);
                }
                self.ensure_turn(Color::from(*side))
            }
            Event::Touched {
                side,
                square,
                at_ms,
                ..
            } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                self.ensure_turn(Color::from(*side))?;
                let sq: Square = square
                    .parse()
                    .map_err(|_| SessionError::Touch(format!("{square:?} is not a square")))?;
                if self.position().piece_at(sq).is_none() {
                    return Err(SessionError::Touch(format!("there is no piece on {sq}")));
                }
                Ok(())
            }
        }
    }

    /// Why `m` breaks touch-move (FIDE 4.3), if it does: a touched own piece that can move
    /// must be moved, a touched opponent's piece that can be captured must be captured, and
    /// with one of each the capture with the touched piece comes first.
    pub fn touch_violation(&self, m: Move) -> Option<String> {
        let pos = self.position();
        let legal = pos.legal_moves();
        let us = self.turn();
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
            (Some(o), None) => (m.from() != o.square).then(|| {
                format!(
                    "touch-move (FIDE 4.3.1): you touched your {} on {}, which can move: move it",
                    role_name(pos, o.square),
                    o.square
                )
            }),
            (None, Some(t)) => (!captures(&m, t.square)).then(|| {
                format!(
                    "touch-move (FIDE 4.3.2): you touched the opponent's {} on {}, which can be captured: capture it",
                    role_name(pos, t.square),
                    t.square
                )
            }),
            (Some(o), Some(t)) => {
                if legal.iter().any(|mv| mv.from() == o.square && captures(mv, t.square)) {
                    (!(m.from() == o.square && captures(&m, t.square))).then(|| {
                        format!(
                            "touch-move (FIDE 4.3.3): you touched your {} on {} and the opponent's {} on {}: capture it with that piece",
                            role_name(pos, o.square),
                            o.square,
                            role_name(pos, t.square),
                            t.square
                        )
                    })
                } else {
                    // Otherwise the first touched of the two that can be moved or captured.
                    let first = self
                        .touches
                        .iter()
                        .find(|x| x.square == o.square || x.square == t.square)?;
                    if first.square == o.square {
                        (m.from() != o.square).then(|| {
                            format!(
                                "touch-move (FIDE 4.3.3): you touched your {} on {} first, which can move: move it",
                                role_name(pos, o.square),
                                o.square
                            )
                        })
                    } else {
                        (!captures(&m, t.square)).then(|| {
                            format!(
                                "touch-move (FIDE 4.3.3): you touched the opponent's {} on {} first, which can be captured: capture it",
                                role_name(pos, t.square),
                                t.square
                            )
                        })
                    }
                }
            }
        }
    }

    /// An event at `at_ms` after the flag of the side to move fell is too late.
    fn check_time(&self, at_ms: u64) -> Result<(), SessionError> {
        if self.flag_fallen(at_ms).is_some() {
            return Err(SessionError::Clock("the flag has fallen"));
        }
        Ok(())
    }

    /// Applies an event that passed [`Session::check`].
    pub fn apply(&mut self, ev: &Event) {
        self.events += 1;
        let at = at_of(ev);
        match ev {
            Event::Created { .. } => {}
            Event::Move {
                uci, offer_draw, ..
            } => {
                let Ok(m) = self.position().parse_uci(uci) else {
                    return;
                };
                self.play(m, *offer_draw, at);
            }
            Event::DrawAnswered { side, accept, .. } => {
                let side = Color::from(*side);
                self.draw_offer = None;
                if *accept {
                    self.finish(
                        Outcome::Draw {
                            reason: DrawReason::Agreement,
                        },
                        at,
                    );
                } else {
                    self.offer_blocked[!side] = true;
                }
            }
            Event::Resigned { side, .. } => {
                let winner = !Color::from(*side);
                self.finish(
                    Outcome::Decisive {
                        winner,
                        reason: WinReason::Resignation,
                    },
                    at,
                );
            }
            Event::DrawClaimed { uci, .. } => {
                let reason = match uci
                    .as_deref()
                    .and_then(|u| self.position().parse_uci(u).ok())
                {
                    Some(m) => {
                        let reason = self.game.claimable_draw_with_move(m);
                        self.play(m, false, at);
                        reason
                    }
                    None => self.game.claimable_draw(),
                };
                // A declared move that itself ends the game (mate, fivefold) keeps that result.
                if let (Some(reason), None) = (reason, self.outcome) {
                    self.finish(Outcome::Draw { reason }, at);
                }
            }
            Event::FlagFell { side, .. } => {
                let side = Color::from(*side);
                if let Some(clock) = self.clock.as_mut() {
                    clock.remaining_ms[side] = 0;
                    clock.running_since_ms = None;
                }
                let outcome = if self.position().can_possibly_mate(!side) {
                    Outcome::Decisive {
                        winner: !side,
                        reason: WinReason::Timeout,
                    }
                } else {
                    Outcome::Draw {
                        reason: DrawReason::TimeoutInsufficientMaterial,
                    }
                };
                self.finish(outcome, at);
            }
            Event::Foul {
                side,
                attempted,
                reason,
                ..
            } => {
                let side = Color::from(*side);
                let count = self.fouls.iter().filter(|f| f.side == side).count() as u32 + 1;
                let limit = match self.mode {
                    ArbiterMode::Fide => 2,
                    _ => 3,
                };
                let penalty = if count >= limit {
                    let outcome = if self.position().can_possibly_mate(!side) {
                        Outcome::Decisive {
                            winner: !side,
                            reason: WinReason::IllegalMoves,
                        }
                    } else {
                        Outcome::Draw {
                            reason: DrawReason::IllegalMovesInsufficientMaterial,
                        }
                    };
                    self.finish(outcome, at);
                    Penalty::GameOver(outcome)
                } else if self.mode == ArbiterMode::Fide {
                    match self.clock.as_mut() {
                        Some(clock) => {
                            clock.remaining_ms[!side] += FIDE_FOUL_BONUS_MS;
                            Penalty::TwoMinutes
                        }
                        None => Penalty::Warning,
                    }
                } else {
                    Penalty::Strike(count)
                };
                self.fouls.push(FoulRecord {
                    side,
                    attempted: attempted.clone(),
                    reason: reason.clone(),
                    penalty,
                    ply: self.ply(),
                    count,
                });
            }
            Event::Touched {
                side,
                square,
                adjust,
                ..
            } => {
                let Ok(sq) = square.parse::<Square>() else {
                    return;
                };
                self.touches.push(TouchRecord {
                    side: Color::from(*side),
                    square: sq,
                    piece: piece_label(self.position(), sq),
                    adjust: *adjust,
                });
            }
        }
    }

    fn play(&mut self, m: Move, offer_draw: bool, at: u64) {
        let mover = self.turn();
        let mut used = 0;
        if let (Some(clock), Some(tc)) = (self.clock.as_mut(), self.time_control.as_ref()) {
            if let Some(since) = clock.running_since_ms {
                used = at.saturating_sub(since);
            }
            clock.remaining_ms[mover] -= used as i64;
            let idx = clock.period[mover].min(tc.periods.len() - 1);
            let period = tc.periods[idx];
            clock.remaining_ms[mover] += period.increment_ms as i64;
            clock.moves_in_period[mover] += 1;
            if period.moves > 0 && clock.moves_in_period[mover] >= period.moves {
                // The next period, or the last one again when it has a move count.
                let next = (idx + 1).min(tc.periods.len() - 1);
                clock.period[mover] = next;
                clock.moves_in_period[mover] = 0;
                clock.remaining_ms[mover] += tc.periods[next].base_ms as i64;
            }
            clock.running_since_ms = Some(at);
        }
        if self.game.play(m).is_err() {
            return;
        }
        self.touches.clear();
        if self.draw_offer == Some(!mover) {
            // Moving on refuses the opponent's offer.
            self.draw_offer = None;
            self.offer_blocked[!mover] = true;
        }
        if offer_draw {
            self.draw_offer = Some(mover);
            self.offer_blocked[!mover] = false;
        }
        self.records.push(MoveRecord {
            time_used_ms: used,
            draw_offered: offer_draw,
        });
        if let Some(outcome) = self.game.outcome() {
            self.finish(outcome, at);
        }
    }

    fn finish(&mut self, outcome: Outcome, at: u64) {
        self.stop_clock_at(at);
        self.draw_offer = None;
        self.outcome = Some(outcome);
    }

    fn stop_clock_at(&mut self, at: u64) {
        let turn = self.turn();
        if let Some(clock) = self.clock.as_mut()
            && let Some(since) = clock.running_since_ms.take()
        {
            clock.remaining_ms[turn] -= at.saturating_sub(since) as i64;
            clock.remaining_ms[turn] = clock.remaining_ms[turn].max(0);
        }
    }

    fn stop_clock(&mut self) {
        if let Some(clock) = self.clock.as_mut() {
            clock.running_since_ms = None;
        }
    }
}

/// `knight`, `bishop`, ... of the piece on `sq`.
fn role_name(pos: &Position, sq: Square) -> &'static str {
    pos.role_at(sq).map_or("piece", |r| r.name())
}

/// The piece on `sq` as `Ng1` (`Pe2` for pawns).
fn piece_label(pos: &Position, sq: Square) -> String {
    match pos.role_at(sq) {
        Some(chess_rules::Role::Pawn) | None => format!("P{sq}"),
        Some(r) => format!("{}{sq}", r.upper_char()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(tc: Option<&str>) -> Event {
        Event::Created {
            start_fen: String::new(),
            time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
            white: "A".into(),
            black: "B".into(),
            at_ms: 1_000,
            illegal_moves: ArbiterMode::Reject,
        }
    }

    fn mv(uci: &str, at_ms: u64) -> Event {
        Event::Move {
            uci: uci.into(),
            offer_draw: false,
            at_ms,
        }
    }

    fn offer(uci: &str, at_ms: u64) -> Event {
        Event::Move {
            uci: uci.into(),
            offer_draw: true,
            at_ms,
        }
    }

    fn run(s: &mut Session, ev: Event) -> Result<(), SessionError> {
        s.check(&ev)?;
        s.apply(&ev);
        Ok(())
    }

    #[test]
    fn clocks_count_down_with_increment_and_periods() {
        let mut s = Session::create(&created(Some("2/1+1:1+0"))).unwrap();
        // White's first move starts black's clock and costs white nothing.
        run(&mut s, mv("e2e4", 5_000)).unwrap();
        assert_eq!(s.records[0].time_used_ms, 0);
        assert_eq!(s.clock.as_ref().unwrap().remaining_ms.white, 61_000);
        run(&mut s, mv("e7e5", 15_000)).unwrap();
        assert_eq!(s.records[1].time_used_ms, 10_000);
        assert_eq!(s.remaining(15_000).unwrap().black, 51_000);
        assert_eq!(s.remaining(20_000).unwrap().white, 56_000);
        // White's second move completes period one: the second period's minute is added.
        run(&mut s, mv("g1f3", 25_000)).unwrap();
        assert_eq!(
            s.clock.as_ref().unwrap().remaining_ms.white,
            61_000 - 10_000 + 1_000 + 60_000
        );
        assert_eq!(s.clock.as_ref().unwrap().period.white, 1);
    }

    #[test]
    fn flag_fall_loses_or_draws() {
        let mut s = Session::create(&created(Some("0.1+0"))).unwrap();
        run(&mut s, mv("e2e4", 0)).unwrap();
        assert_eq!(s.flag_deadline_ms(), Some(6_000));
        assert_eq!(s.flag_fallen(5_999), None);
        assert_eq!(s.flag_fallen(6_000), Some(Color::Black));
        // A move after the flag fell is refused.
        assert_eq!(
            s.check(&mv("e7e5", 7_000)),
            Err(SessionError::Clock("the flag has fallen"))
        );
        run(
            &mut s,
            Event::FlagFell {
                side: Side::Black,
                at_ms: 7_000,
            },
        )
        .unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Decisive {
                winner: Color::White,
                reason: WinReason::Timeout
            })
        );

        // White has only a king: black's flag falling is a draw.
        let ev = Event::Created {
            start_fen: "4k3/8/8/8/8/8/4p3/K7 b - - 0 1".into(),
            time_control: Some(TimeControl::parse("0.1+0").unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: ArbiterMode::Reject,
        };
        let mut s = Session::create(&ev).unwrap();
        run(&mut s, mv("e8d7", 0)).unwrap();
        run(&mut s, mv("a1b1", 1_000)).unwrap();
        run(
            &mut s,
            Event::FlagFell {
                side: Side::Black,
                at_ms: 60_000,
            },
        )
        .unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::TimeoutInsufficientMaterial
            })
        );
    }

    #[test]
    fn draw_offer_etiquette() {
        let mut s = Session::create(&created(None)).unwrap();
        // White offers with its move; black declines by answering.
        run(&mut s, offer("e2e4", 1)).unwrap();
        assert_eq!(s.draw_offer, Some(Color::White));
        // White cannot answer its own offer.
        assert_eq!(
            s.check(&Event::DrawAnswered {
                side: Side::White,
                accept: true,
                at_ms: 2
            }),
            Err(SessionError::NoDrawOffer(Color::White))
        );
        run(
            &mut s,
            Event::DrawAnswered {
                side: Side::Black,
                accept: false,
                at_ms: 2,
            },
        )
        .unwrap();
        assert_eq!(s.draw_offer, None);
        run(&mut s, mv("e7e5", 3)).unwrap();
        // Refused: white may not offer again...
        assert!(matches!(
            s.check(&offer("g1f3", 4)),
            Err(SessionError::DrawOffer(_))
        ));
        run(&mut s, mv("g1f3", 4)).unwrap();
        // ...until black has offered.
        run(&mut s, offer("b8c6", 5)).unwrap();
        assert_eq!(s.draw_offer, Some(Color::Black));
        // White moves on instead of answering: that refuses black's offer.
        run(&mut s, mv("f1c4", 6)).unwrap();
        assert_eq!(s.draw_offer, None);
        assert!(s.offer_blocked.black);
        run(&mut s, mv("g8f6", 7)).unwrap();
        // White may offer again now, and black accepts.
        run(&mut s, offer("d2d3", 8)).unwrap();
        assert!(!s.offer_blocked.black, "white's offer lifts black's block");
        run(
            &mut s,
            Event::DrawAnswered {
                side: Side::Black,
                accept: true,
                at_ms: 9,
            },
        )
        .unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::Agreement
            })
        );
    }

    #[test]
    fn claims_resignation_and_replay() {
        let mut events = vec![created(Some("5+3"))];
        let mut s = Session::create(&events[0]).unwrap();
        let mut t = 1_000;
        for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
            t += 500;
            let ev = mv(uci, t);
            run(&mut s, ev.clone()).unwrap();
            events.push(ev);
        }
        // Black to move; no claim yet.
        let claim = Event::DrawClaimed {
            side: Side::Black,
            uci: None,
            at_ms: t,
        };
        assert!(matches!(s.check(&claim), Err(SessionError::NoClaim(_))));
        // By declaring f6g8 black claims the third occurrence.
        let claim = Event::DrawClaimed {
            side: Side::Black,
            uci: Some("f6g8".into()),
            at_ms: t + 100,
        };
        assert!(matches!(
            s.check(&Event::DrawClaimed {
                side: Side::White,
                uci: None,
                at_ms: t
            }),
            Err(SessionError::NotYourTurn { .. })
        ));
        run(&mut s, claim.clone()).unwrap();
        events.push(claim);
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::ThreefoldRepetition
            })
        );
        assert!(matches!(
            s.check(&Event::Resigned {
                side: Side::White,
                at_ms: t
            }),
            Err(SessionError::GameOver(_))
        ));

        let again = Session::replay(&events).unwrap();
        assert_eq!(again.outcome, s.outcome);
        assert_eq!(again.clock, s.clock);
        assert_eq!(again.game.moves(), s.game.moves());
        assert_eq!(again.events, events.len() as u32);
    }

    #[test]
    fn resignation_any_time_and_illegal_moves() {
        let mut s = Session::create(&created(None)).unwrap();
        assert!(matches!(
            s.check(&mv("e2e5", 1)),
            Err(SessionError::IllegalMove(_))
        ));
        run(
            &mut s,
            Event::Resigned {
                side: Side::Black,
                at_ms: 1,
            },
        )
        .unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Decisive {
                winner: Color::White,
                reason: WinReason::Resignation
            })
        );
    }

    fn arbiter_game(mode: ArbiterMode, fen: &str, tc: Option<&str>) -> Session {
        Session::create(&Event::Created {
            start_fen: fen.into(),
            time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: mode,
        })
        .unwrap()
    }

    fn foul(side: Side, attempted: &str, at_ms: u64) -> Event {
        Event::Foul {
            side,
            attempted: attempted.into(),
            reason: "king moved into check".into(),
            at_ms,
        }
    }

    fn touch(side: Side, square: &str, adjust: bool) -> Event {
        Event::Touched {
            side,
            square: square.into(),
            adjust,
            at_ms: 10,
        }
    }

    #[test]
    fn old_logs_without_a_mode_still_load_and_reject() {
        let json = r#"{"type":"created","start_fen":"","time_control":null,"white":"A","black":"B","at_ms":1}"#;
        let ev: Event = serde_json::from_str(json).unwrap();
        let s = Session::create(&ev).unwrap();
        assert_eq!(s.mode, ArbiterMode::Reject);
        assert_eq!(
            s.check(&foul(Side::White, "e1e2", 2)),
            Err(SessionError::NoArbiter)
        );
        // A reject-mode game writes no mode, so its log reads as before.
        assert!(
            !serde_json::to_string(&ev)
                .unwrap()
                .contains("illegal_moves")
        );
        let fide = Event::Created {
            start_fen: String::new(),
            time_control: None,
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: ArbiterMode::ThreeStrikes,
        };
        let text = serde_json::to_string(&fide).unwrap();
        assert!(
            text.contains(r#""illegal_moves":"three_strikes""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), fide);
    }

    #[test]
    fn fide_first_foul_gives_two_minutes_second_loses() {
        let mut s = arbiter_game(ArbiterMode::Fide, "", Some("5+0"));
        run(&mut s, mv("e2e4", 1_000)).unwrap();
        // Black's first illegal move: white gets two minutes; the position stays.
        run(&mut s, foul(Side::Black, "e8e7", 3_000)).unwrap();
        assert_eq!(s.fouls[0].penalty, Penalty::TwoMinutes);
        assert_eq!(
            s.fouls[0].penalty_text(),
            "two minutes added to white's clock"
        );
        assert_eq!(
            s.clock.as_ref().unwrap().remaining_ms.white,
            300_000 + 120_000
        );
        assert_eq!(s.ply(), 1);
        assert_eq!(s.turn(), Color::Black);
        // White cannot commit a foul on black's move.
        assert!(matches!(
            s.check(&foul(Side::White, "e1e2", 3_500)),
            Err(SessionError::NotYourTurn { .. })
        ));
        run(&mut s, mv("e7e5", 4_000)).unwrap();
        run(&mut s, mv("g1f3", 5_000)).unwrap();
        run(&mut s, foul(Side::Black, "e8e6", 6_000)).unwrap();
        let lost = Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::IllegalMoves,
        };
        assert_eq!(s.outcome, Some(lost));
        assert_eq!(s.fouls[1].penalty, Penalty::GameOver(lost));
        assert_eq!(s.fouls[1].count, 2);
        assert_eq!(lost.to_string(), "1-0 (white wins by illegal moves)");
    }

    #[test]
    fn second_fide_foul_draws_when_the_opponent_cannot_mate() {
        // White has a bare king: black's second foul draws.
        let mut s = arbiter_game(ArbiterMode::Fide, "4k3/8/8/8/8/8/4p3/K7 b - - 0 1", None);
        run(&mut s, foul(Side::Black, "e8e6", 1)).unwrap();
        assert_eq!(s.fouls[0].penalty, Penalty::Warning);
        run(&mut s, foul(Side::Black, "e2e4", 2)).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::IllegalMovesInsufficientMaterial
            })
        );
    }

    #[test]
    fn three_strikes_third_foul_loses_and_replays() {
        let mut events = vec![Event::Created {
            start_fen: String::new(),
            time_control: Some(TimeControl::parse("1+0").unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: ArbiterMode::ThreeStrikes,
        }];
        let mut s = Session::create(&events[0]).unwrap();
        for ev in [
            foul(Side::White, "e1e2", 1),
            mv("e2e4", 2),
            mv("e7e5", 3),
            foul(Side::White, "e1e3", 4),
            mv("g1f3", 5),
            foul(Side::Black, "e8e6", 6),
            mv("b8c6", 7),
        ] {
            run(&mut s, ev.clone()).unwrap();
            events.push(ev);
        }
        assert_eq!(s.fouls[1].penalty, Penalty::Strike(2));
        assert_eq!(s.fouls[2].penalty, Penalty::Strike(1));
        assert_eq!(s.outcome, None);
        let third = foul(Side::White, "e1e2", 8);
        run(&mut s, third.clone()).unwrap();
        events.push(third);
        assert_eq!(
            s.outcome,
            Some(Outcome::Decisive {
                winner: Color::Black,
                reason: WinReason::IllegalMoves
            })
        );
        // No clock bonus under three strikes.
        assert_eq!(s.clock.as_ref().unwrap().remaining_ms.black, 60_000 - 3);
        let again = Session::replay(&events).unwrap();
        assert_eq!(again.fouls, s.fouls);
        assert_eq!(again.outcome, s.outcome);
    }

    #[test]
    fn touch_move_rules() {
        // Touching the g1 knight: it must move.
        let mut s = arbiter_game(ArbiterMode::Reject, "", None);
        run(&mut s, touch(Side::White, "g1", false)).unwrap();
        let err = s.check(&mv("e2e4", 20)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.1") && m.contains("knight on g1")),
            "{err}"
        );
        run(&mut s, mv("g1f3", 20)).unwrap();
        // The move clears the touches.
        assert!(s.touches.is_empty());
        // Black touches a piece that cannot move (the a8 rook): no obligation.
        run(&mut s, touch(Side::Black, "a8", false)).unwrap();
        run(&mut s, mv("e7e5", 30)).unwrap();
        // J'adoube binds nothing.
        run(&mut s, touch(Side::White, "b1", true)).unwrap();
        assert!(s.touches[0].adjust);
        run(&mut s, mv("d2d4", 40)).unwrap();
        // Black touches white's d4 pawn, which e5 can capture: it must be captured.
        run(&mut s, touch(Side::Black, "d4", false)).unwrap();
        let err = s.check(&mv("b8c6", 50)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.2")),
            "{err}"
        );
        run(&mut s, mv("e5d4", 50)).unwrap();
        // Touching out of turn, or an empty square, is refused.
        assert!(matches!(
            s.check(&touch(Side::Black, "d4", false)),
            Err(SessionError::NotYourTurn { .. })
        ));
        assert!(matches!(
            s.check(&touch(Side::White, "e4", false)),
            Err(SessionError::Touch(_))
        ));
        // Own piece and opponent's piece: capture it with that piece when possible.
        run(&mut s, touch(Side::White, "f3", false)).unwrap();
        run(&mut s, touch(Side::White, "d4", false)).unwrap();
        let err = s.check(&mv("f3g5", 60)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.3")),
            "{err}"
        );
        assert!(matches!(
            s.check(&mv("d1d4", 60)),
            Err(SessionError::TouchMove(_))
        ));
        run(&mut s, mv("f3d4", 60)).unwrap();
    }
}
