//! A game session as a fold over its events. Every change to a game is an [`Event`]; the
//! store keeps the events, and replaying them (timestamps included) rebuilds exactly the
//! same state, clocks and all. [`Session::check`] decides whether an event may happen;
//! [`Session::apply`] makes it happen and cannot fail after a successful check.

mod error;
mod judge;
mod takeback;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::HashSet;

use chess_rules::{ByColor, Color, DrawReason, Game, Move, Outcome, Position, Square, WinReason};

pub use self::error::{SessionError, TouchMove};
pub use self::judge::dead_reason;
pub use self::takeback::TakeBack;
use crate::arbiter::{Arbiter, ArbiterMode, Penalty};
use crate::event::Event;
use chess_wire::TimeControl;

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
    /// The arbiter's mode, fouls and touches.
    pub arbiter: Arbiter,
    /// The idempotency keys of the calls whose events this game holds.
    pub request_ids: HashSet<String>,
    /// A casual game: a side may take back its last move.
    pub takebacks: bool,
    /// The takebacks granted so far, in order.
    pub taken_back: Vec<TakeBack>,
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
            takebacks,
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
            arbiter: Arbiter::new(*illegal_moves),
            request_ids: request_id.iter().cloned().collect(),
            takebacks: *takebacks,
            taken_back: Vec::new(),
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

    /// Whether a call made for `side` (when it names one) at ply `ply` (when it expects one)
    /// may go on: the game is running, it is that side's turn and the game is at that ply.
    /// The one check of turn and ply a call makes before its event is built.
    pub fn expect(&self, side: Option<Color>, ply: Option<u32>) -> Result<(), SessionError> {
        self.ensure_running()?;
        if let Some(side) = side {
            self.ensure_turn(side)?;
        }
        match ply {
            Some(expected) if expected != self.ply() => Err(SessionError::StalePly {
                expected,
                actual: self.ply(),
            }),
            _ => Ok(()),
        }
    }

    fn parse_uci(&self, uci: &str) -> Result<Move, SessionError> {
        self.position()
            .parse_uci(uci)
            .map_err(|e| SessionError::IllegalMove(e.to_string()))
    }

    /// Whether a new event `ev` may happen now: [`Session::check`] and the arbiter's rules
    /// ([`Arbiter::check_move`], [`Arbiter::check_touch`]).
    pub fn check_new(&self, ev: &Event) -> Result<(), SessionError> {
        self.check(ev)?;
        match ev {
            Event::Move { uci, .. } | Event::DrawClaimed { uci: Some(uci), .. } => {
                match self.position().parse_uci(uci) {
                    Ok(m) => self.arbiter.check_move(self.position(), m),
                    // Session::check refuses it.
                    Err(_) => Ok(()),
                }
            }
            Event::Touched { .. } => self.arbiter.check_touch(),
            _ => Ok(()),
        }
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
                    return Err(SessionError::NullMove);
                }
                if *offer_draw {
                    let turn = self.turn();
                    if self.draw_offer == Some(!turn) {
                        return Err(SessionError::OfferPending);
                    }
                    if self.offer_blocked[turn] {
                        return Err(SessionError::OfferBlocked);
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
                        self.game
                            .claimable_draw_with_move(m)
                            .map(|_| ())
                            .ok_or_else(|| SessionError::NoClaimAfter {
                                san: self.position().san(m),
                            })
                    }
                    None => self.game.claimable_draw().map(|_| ()).ok_or_else(|| {
                        SessionError::NoClaim {
                            repetitions: self.game.repetition_count(),
                            halfmoves: self.position().halfmoves(),
                        }
                    }),
                }
            }
            Event::FlagFell { side, at_ms, .. } => {
                self.ensure_running()?;
                match self.flag_fallen(*at_ms) {
                    Some(c) if c == Color::from(*side) => Ok(()),
                    _ => Err(SessionError::FlagNotFallen),
                }
            }
            Event::Foul { side, at_ms, .. } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                if self.arbiter.mode() == ArbiterMode::Reject {
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
                    .map_err(|_| SessionError::NotASquare(square.clone()))?;
                if self.position().piece_at(sq).is_none() {
                    return Err(SessionError::NothingTouched(sq));
                }
                Ok(())
            }
            Event::TakenBack {
                side, plies, at_ms, ..
            } => {
                self.ensure_running()?;
                self.check_time(*at_ms)?;
                let side = Color::from(*side);
                let due = self.takeback_due(side)?;
                if *plies != due {
                    return Err(SessionError::Corrupt(format!(
                        "a takeback of {plies} plies by {side} where {due} are due"
                    )));
                }
                Ok(())
            }
        }
    }

    /// An event at `at_ms` after the flag of the side to move fell is too late.
    fn check_time(&self, at_ms: u64) -> Result<(), SessionError> {
        if self.flag_fallen(at_ms).is_some() {
            return Err(SessionError::FlagFallen);
        }
        Ok(())
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
            } => {
                let side = Color::from(*side);
                // `cannot_mate` is the stored reason the opponent cannot mate, when the
                // analysis proved it (see `Session::judge`); otherwise material decides.
                let can_mate = cannot_mate.is_none() && self.position().can_possibly_mate(!side);
                let penalty = self.arbiter.foul(
                    side,
                    attempted,
                    reason,
                    can_mate,
                    self.game.ply() as u32,
                    self.clock.as_mut().map(|c| &mut c.remaining_ms),
                );
                if let Penalty::GameOver(outcome) = penalty {
                    self.outcome_detail = cannot_mate.clone();
                    self.finish(outcome, at);
                }
            }
            Event::Touched {
                side,
                square,
                adjust,
                ..
            } => self
                .arbiter
                .touch(Color::from(*side), square, *adjust, self.game.position()),
            Event::TakenBack { side, plies, .. } => self.take_back(Color::from(*side), *plies, at),
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
        self.arbiter.moved();
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
