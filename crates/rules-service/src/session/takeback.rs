//! Takebacks in casual games: how many plies a side's takeback takes back, and what it does
//! to the game, the clocks, a pending draw offer and the touches.

use chess_rules::Color;

use super::{Session, SessionError};

/// A takeback granted in a casual game: who took back, how many plies, and the ply the game
/// went back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TakeBack {
    pub side: Color,
    pub plies: u32,
    pub ply: u32,
}

impl Session {
    /// How many plies a takeback by `side` takes back now: 1 when `side` moved last, 2 (its
    /// move and the reply) when it is to move; `None` when it has no move to take back.
    pub fn takeback_plies(&self, side: Color) -> Option<u32> {
        let plies = if side == self.turn() { 2 } else { 1 };
        (self.ply() >= plies).then_some(plies)
    }

    /// The plies a takeback by `side` may take back now, or why it may not: the game is not
    /// casual, or `side` has no move to take back. The one check, for a new call and for a
    /// stored event alike.
    pub fn takeback_due(&self, side: Color) -> Result<u32, SessionError> {
        if !self.takebacks {
            return Err(SessionError::NoTakebacks);
        }
        self.takeback_plies(side)
            .ok_or(SessionError::NothingToTakeBack(side))
    }

    /// Takes back `plies` plies at `at`. The clocks keep the times they show: the side to
    /// move is charged the time it has used so far, and the clock then runs for the side to
    /// move after the takeback (it stops at the start position, as before the first move).
    /// Time added by increments and periods stays; a move-count period counts the moves
    /// taken back as not played.
    pub(super) fn take_back(&mut self, side: Color, plies: u32, at: u64) {
        let turn = self.turn();
        if let Some(clock) = self.clock.as_mut()
            && let Some(since) = clock.running_since_ms
        {
            clock.remaining_ms[turn] -= at.saturating_sub(since) as i64;
            clock.running_since_ms = Some(at);
        }
        for _ in 0..plies {
            if self.game.undo().is_none() {
                break;
            }
            self.records.pop();
            let mover = self.turn();
            if let Some(clock) = self.clock.as_mut() {
                clock.moves_in_period[mover] = clock.moves_in_period[mover].saturating_sub(1);
            }
        }
        if self.game.ply() == 0 {
            self.stop_clock();
        }
        self.draw_offer = None;
        self.arbiter.moved();
        self.taken_back.push(TakeBack {
            side,
            plies,
            ply: self.ply(),
        });
    }
}
