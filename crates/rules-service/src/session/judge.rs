//! What the winnability analysis decides about a new event before it is stored: a dead
//! position after a move (FIDE 5.2.2), an opponent who cannot mate after a flag fall or a
//! losing foul (FIDE 6.9). The decision travels in the event, so replaying never recomputes it.

use chess_knowledge::{Verdict, WinnableBudget, winnability};
use chess_rules::{Color, Position};

use super::Session;
use crate::event::Event;

/// The reason the position is dead (neither side can mate), by the quick analysis.
pub fn dead_reason(pos: &Position) -> Option<String> {
    winnability(pos, &WinnableBudget::quick()).dead_reason()
}

impl Session {
    /// True when judging `ev` takes the full winnability analysis (up to about a second of
    /// work): run [`Session::judge`] off the async executor then.
    pub fn judges_at_length(&self, ev: &Event) -> bool {
        match ev {
            Event::FlagFell { .. } => true,
            Event::Foul { side, .. } => self.arbiter.foul_ends_game(Color::from(*side)),
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
                *cannot_mate = if self.arbiter.foul_ends_game(Color::from(*side)) {
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
        let a = chess_knowledge::winnable(self.position(), winner, &WinnableBudget::full());
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
}
