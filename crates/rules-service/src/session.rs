//! A game session as a fold over its events. Every change to a game is an [`Event`]; the
//! store keeps the events, and replaying them (timestamps included) rebuilds exactly the
//! same state, clocks and all. [`Session::check`] decides whether an event may happen;
//! [`Session::apply`] makes it happen and cannot fail after a successful check.

use std::collections::HashSet;

use chess_knowledge::{Limits, Verdict, winnability};
use chess_rules::{ByColor, Color, DrawReason, Game, Move, Outcome, Position, Square, WinReason};
use serde::{Deserialize, Serialize};

use crate::arbiter::{ArbiterMode, FoulRecord, TouchRecord};
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

/// Everything that can happen to a game, with the server time (ms since the Unix epoch)
/// at which it was accepted. An event a caller asked for keeps the call's idempotency key
/// (`request_id`), so that the call sent again (a retry after an unknown outcome) finds its
/// event and makes no second one; logs written before keys read as keyless.
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
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    Move {
        uci: String,
        offer_draw: bool,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The move leaves a dead position (FIDE 5.2.2): neither side can mate by any series
        /// of legal moves, as the winnability analysis proved when the move was made; the
        /// reason. The decision is stored, not recomputed, so that a game replays as it was
        /// decided whatever the analysis later learns; absent in logs written before it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dead: Option<String>,
    },
    DrawAnswered {
        side: Side,
        accept: bool,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    Resigned {
        side: Side,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    DrawClaimed {
        side: Side,
        uci: Option<String>,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    FlagFell {
        side: Side,
        at_ms: u64,
        /// The opponent could not mate by any series of legal moves (FIDE 6.9), as the full
        /// winnability analysis proved when the flag fell: the reason, and the game is drawn.
        /// Absent when it could mate, when the analysis was undetermined (then material
        /// decides, as before), and in logs written before the analysis.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cannot_mate: Option<String>,
    },
    /// An illegal move under an arbiter mode: recorded, the position unchanged; the penalty
    /// follows from the mode and the side's earlier fouls.
    Foul {
        side: Side,
        attempted: String,
        reason: String,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// When this foul's penalty would lose the game: the reason the opponent cannot mate
        /// by any series of legal moves (a draw instead), as for [`Event::FlagFell`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cannot_mate: Option<String>,
    },
    /// The side to move touched a piece (touch-move), or adjusted it (`adjust`, j'adoube).
    Touched {
        side: Side,
        square: String,
        adjust: bool,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
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
    /// Why the game ended, beyond the rule's name: the winnability analysis's reason for a
    /// dead position or for an opponent who could not mate.
    pub outcome_detail: Option<String>,
    /// Events applied so far (the next event's sequence number).
    pub events: u32,
    pub mode: ArbiterMode,
    pub fouls: Vec<FoulRecord>,
    /// Touches of the move in progress (cleared by the move).
    pub touches: Vec<TouchRecord>,
    /// The idempotency keys of the calls whose events this game holds.
    pub request_ids: HashSet<String>,
}

/// The reason the position is dead (neither side can mate), by the quick analysis.
pub fn dead_reason(pos: &Position) -> Option<String> {
    winnability(pos, &Limits::quick()).dead_reason()
}

/// Longest player name, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// Whether a player name may be stored (by CreateGame or an import): at most
/// [`MAX_NAME_CHARS`] characters, none of them a control character (a line break would break
/// the PGN export).
pub fn check_player_name(name: &str) -> Result<(), String> {
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(format!(
            "player names are at most {MAX_NAME_CHARS} printable characters, not {}",
            chess_proto::quote(name)
        ));
    }
    Ok(())
}

impl Event {
    /// When the event was accepted (ms since the Unix epoch).
    pub fn at_ms(&self) -> u64 {
        match *self {
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

    /// The idempotency key of the call that made this event, if it had one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Event::Created { request_id, .. }
            | Event::Move { request_id, .. }
            | Event::DrawAnswered { request_id, .. }
            | Event::Resigned { request_id, .. }
            | Event::DrawClaimed { request_id, .. }
            | Event::Foul { request_id, .. }
            | Event::Touched { request_id, .. } => request_id.as_deref(),
            Event::FlagFell { .. } => None,
        }
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
            request_id,
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
        if time_control
            .as_ref()
            .is_some_and(|tc| tc.periods.is_empty())
        {
            return Err(SessionError::Corrupt(
                "a time control without periods".into(),
            ));
        }
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
            outcome_detail: None,
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
            request_ids: request_id.iter().cloned().collect(),
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

    /// Whether a new event `ev` may happen now: [`Session::check`] and the arbiter's rules
    /// ([`Session::check_arbiter`]).
    pub fn check_new(&self, ev: &Event) -> Result<(), SessionError> {
        self.check(ev)?;
        self.check_arbiter(ev)
    }

    /// Whether `ev` may happen now (the caller has already recorded any flag that fell
    /// before `ev`'s time). A stored event replayed passes this check; a new one passes
    /// [`Session::check_new`].
    pub fn check(&self, ev: &Event) -> Result<(), SessionError> {
        match ev {
            Event::Created { .. } => Err(SessionError::Corrupt("a second `created` event".into())),
            Event::Move {
                uci,
                offer_draw,
                at_ms,
                ..
            } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                let m = self.parse_uci(uci)?;
                if m.is_null() {
                    return Err(SessionError::IllegalMove(
                        "a null move cannot be played in a game".into(),
                    ));
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
            Event::DrawClaimed {
                side, uci, at_ms, ..
            } => {
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
            Event::FlagFell { side, at_ms, .. } => {
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

    /// An event at `at_ms` after the flag of the side to move fell is too late.
    fn check_time(&self, at_ms: u64) -> Result<(), SessionError> {
        if self.flag_fallen(at_ms).is_some() {
            return Err(SessionError::Clock("the flag has fallen"));
        }
        Ok(())
    }

    /// True when judging `ev` takes the full winnability analysis (up to about a second of
    /// work): run [`Session::judge`] off the async executor then.
    pub fn judges_at_length(&self, ev: &Event) -> bool {
        match ev {
            Event::FlagFell { .. } => true,
            Event::Foul { side, .. } => self.foul_ends_game(Color::from(*side)),
            _ => false,
        }
    }

    /// Fills in what the winnability analysis decides about a new event before it is stored
    /// (FIDE 5.2.2 and 6.9): whether a move leaves a dead position (quick mode, after every
    /// move), and whether the opponent of a side whose flag fell, or whose foul would lose,
    /// can still mate (full mode; an undetermined answer leaves it to material, as before,
    /// and is logged). The decision travels in the event, so replaying never recomputes it.
    pub fn judge(&self, mut ev: Event) -> Event {
        match &mut ev {
            Event::Move { uci, dead, .. } => {
                let after = self
                    .position()
                    .parse_uci(uci)
                    .ok()
                    .and_then(|m| self.position().play(m).ok());
                *dead = after.and_then(|p| dead_reason(&p));
            }
            Event::FlagFell {
                side, cannot_mate, ..
            } => *cannot_mate = self.cannot_mate(!Color::from(*side), "flag fall"),
            Event::Foul {
                side, cannot_mate, ..
            } => {
                *cannot_mate = if self.foul_ends_game(Color::from(*side)) {
                    self.cannot_mate(!Color::from(*side), "illegal moves")
                } else {
                    None
                };
            }
            _ => {}
        }
        ev
    }

    /// The reason `winner` cannot mate here, by the full analysis; `None` when it can or
    /// when the analysis is undetermined (logged: material then decides).
    fn cannot_mate(&self, winner: Color, what: &str) -> Option<String> {
        let a = chess_knowledge::winnable(self.position(), winner, &Limits::full());
        match a.verdict {
            Verdict::Unwinnable { reason } => Some(reason),
            Verdict::Winnable { .. } => None,
            Verdict::Undetermined => {
                tracing::warn!(
                    fen = %self.position().fen(),
                    %winner,
                    nodes = a.nodes,
                    what,
                    "winnability undetermined: scored by material"
                );
                None
            }
        }
    }

    /// Applies an event that passed [`Session::check`].
    pub fn apply(&mut self, ev: &Event) {
        self.events += 1;
        if let Some(key) = ev.request_id() {
            self.request_ids.insert(key.to_owned());
        }
        let at = ev.at_ms();
        match ev {
            Event::Created { .. } => {}
            Event::Move {
                uci,
                offer_draw,
                dead,
                ..
            } => {
                let Ok(m) = self.position().parse_uci(uci) else {
                    return;
                };
                self.play(m, *offer_draw, at);
                if let (Some(reason), None) = (dead, self.outcome) {
                    self.outcome_detail = Some(reason.clone());
                    self.finish(
                        Outcome::Draw {
                            reason: DrawReason::DeadPosition,
                        },
                        at,
                    );
                }
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
            Event::FlagFell {
                side, cannot_mate, ..
            } => {
                let side = Color::from(*side);
                if let Some(clock) = self.clock.as_mut() {
                    clock.remaining_ms[side] = 0;
                    clock.running_since_ms = None;
                }
                self.outcome_detail = cannot_mate.clone();
                let outcome = if cannot_mate.is_none() && self.position().can_possibly_mate(!side) {
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
                cannot_mate,
                ..
            } => self.record_foul(
                Color::from(*side),
                attempted,
                reason,
                cannot_mate.as_deref(),
                at,
            ),
            Event::Touched {
                side,
                square,
                adjust,
                ..
            } => self.record_touch(Color::from(*side), square, *adjust),
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

    pub(crate) fn finish(&mut self, outcome: Outcome, at: u64) {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn created(tc: Option<&str>) -> Event {
        Event::Created {
            start_fen: String::new(),
            time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
            white: "A".into(),
            black: "B".into(),
            at_ms: 1_000,
            illegal_moves: ArbiterMode::Reject,
            request_id: None,
        }
    }

    pub(crate) fn mv(uci: &str, at_ms: u64) -> Event {
        Event::Move {
            uci: uci.into(),
            offer_draw: false,
            at_ms,
            request_id: None,
            dead: None,
        }
    }

    fn offer(uci: &str, at_ms: u64) -> Event {
        Event::Move {
            uci: uci.into(),
            offer_draw: true,
            at_ms,
            request_id: None,
            dead: None,
        }
    }

    pub(crate) fn run(s: &mut Session, ev: Event) -> Result<(), SessionError> {
        s.check_new(&ev)?;
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
                cannot_mate: None,
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
            request_id: None,
        };
        let mut s = Session::create(&ev).unwrap();
        run(&mut s, mv("e8d7", 0)).unwrap();
        run(&mut s, mv("a1b1", 1_000)).unwrap();
        run(
            &mut s,
            Event::FlagFell {
                side: Side::Black,
                at_ms: 60_000,
                cannot_mate: None,
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
                at_ms: 2,
                request_id: None,
            }),
            Err(SessionError::NoDrawOffer(Color::White))
        );
        run(
            &mut s,
            Event::DrawAnswered {
                side: Side::Black,
                accept: false,
                at_ms: 2,
                request_id: None,
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
                request_id: None,
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
            request_id: None,
        };
        assert!(matches!(s.check(&claim), Err(SessionError::NoClaim(_))));
        // By declaring f6g8 black claims the third occurrence.
        let claim = Event::DrawClaimed {
            side: Side::Black,
            uci: Some("f6g8".into()),
            at_ms: t + 100,
            request_id: None,
        };
        assert!(matches!(
            s.check(&Event::DrawClaimed {
                side: Side::White,
                uci: None,
                at_ms: t,
                request_id: None,
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
                at_ms: t,
                request_id: None,
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
                request_id: None,
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

    fn from_fen(fen: &str, tc: Option<&str>, mode: ArbiterMode) -> Event {
        Event::Created {
            start_fen: fen.into(),
            time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: mode,
            request_id: None,
        }
    }

    /// A locked pawn wall; White's light-squared bishop is on the black king's side and can
    /// check but never mate. One white pawn move (h2-h3) is left before the wall closes.
    const ALMOST_LOCKED: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P2/7P/4K3 w - - 0 1";
    const LOCKED_BLACK_TO_MOVE: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 b - - 0 1";

    #[test]
    fn a_move_into_a_dead_position_ends_the_game_and_replays_as_decided() {
        let created = from_fen(ALMOST_LOCKED, None, ArbiterMode::Reject);
        let mut s = Session::create(&created).unwrap();
        // The old rule (material) sees nothing: two bishops' worth of pawns are on the board.
        assert!(s.position().can_possibly_mate(Color::White));
        let ev = s.judge(mv("h2h3", 10));
        let Event::Move {
            dead: Some(reason), ..
        } = &ev
        else {
            panic!("not judged dead: {ev:?}");
        };
        assert!(reason.contains("locked"), "{reason}");
        run(&mut s, ev.clone()).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::DeadPosition
            })
        );
        assert!(s.outcome_detail.as_deref().unwrap().contains("locked"));
        // Replaying the stored events gives the same result without judging again.
        let again = Session::replay(&[created.clone(), ev]).unwrap();
        assert_eq!(again.outcome, s.outcome);
        assert_eq!(again.outcome_detail, s.outcome_detail);
        // A log written before the analysis (no decision in the event) replays as it was
        // decided then: the game goes on.
        let mut old = Session::replay(&[created, mv("h2h3", 10)]).unwrap();
        assert_eq!(old.outcome, None);
        run(&mut old, mv("a8b8", 20)).unwrap();
    }

    #[test]
    fn a_flag_falls_against_a_side_that_cannot_mate_by_any_series_of_moves() {
        let mut s = Session::create(&from_fen(
            LOCKED_BLACK_TO_MOVE,
            Some("0.1+0"),
            ArbiterMode::Reject,
        ))
        .unwrap();
        run(&mut s, mv("a8b8", 0)).unwrap();
        run(&mut s, mv("e1d2", 1_000)).unwrap();
        // Material says White could mate; the analysis proves it cannot.
        assert!(s.position().can_possibly_mate(Color::White));
        let flag = Event::FlagFell {
            side: Side::Black,
            at_ms: 60_000,
            cannot_mate: None,
        };
        assert!(s.judges_at_length(&flag));
        let judged = s.judge(flag);
        run(&mut s, judged).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::TimeoutInsufficientMaterial
            })
        );
        assert!(s.outcome_detail.as_deref().unwrap().contains("never mate"));

        // Where the opponent can mate (with help), the flag still loses.
        let mut s = Session::create(&from_fen(
            "7k/8/5K2/8/8/8/P7/6N1 b - - 0 1",
            Some("0.1+0"),
            ArbiterMode::Reject,
        ))
        .unwrap();
        run(&mut s, mv("h8h7", 0)).unwrap();
        run(&mut s, mv("g1f3", 1_000)).unwrap();
        let judged = s.judge(Event::FlagFell {
            side: Side::Black,
            at_ms: 60_000,
            cannot_mate: None,
        });
        run(&mut s, judged).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Decisive {
                winner: Color::White,
                reason: WinReason::Timeout
            })
        );
    }

    #[test]
    fn a_losing_foul_draws_when_the_opponent_cannot_mate() {
        let mut s =
            Session::create(&from_fen(LOCKED_BLACK_TO_MOVE, None, ArbiterMode::Fide)).unwrap();
        let foul = |at_ms| Event::Foul {
            side: Side::Black,
            attempted: "a8a6".into(),
            reason: "no black piece can move there".into(),
            at_ms,
            cannot_mate: None,
            request_id: None,
        };
        let first = s.judge(foul(1));
        assert!(matches!(
            first,
            Event::Foul {
                cannot_mate: None,
                ..
            }
        ));
        run(&mut s, first).unwrap();
        assert_eq!(s.outcome, None);
        let second = s.judge(foul(2));
        run(&mut s, second).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::IllegalMovesInsufficientMaterial
            })
        );
    }
}
