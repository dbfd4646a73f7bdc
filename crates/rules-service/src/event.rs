//! What can happen to a game: the [`Event`]s of its log, as the store keeps them. A game's
//! state is a fold over its events ([`crate::session::Session`]).

use chess_rules::Color;
use serde::{Deserialize, Serialize};

use crate::arbiter::ArbiterMode;
use chess_wire::TimeControl;

/// Milliseconds since the Unix epoch: the time an event is stamped with.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

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
        /// A casual game: a side may take back its last move ([`Event::TakenBack`]). Absent
        /// (false) in logs written before takebacks.
        #[serde(default, skip_serializing_if = "is_false")]
        takebacks: bool,
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
    /// `side` took back its last move in a casual game: `plies` is 1 (its own move, not yet
    /// answered) or 2 (its move and the opponent's reply). The moves leave the game; the
    /// clocks keep the times they showed.
    TakenBack {
        side: Side,
        plies: u32,
        at_ms: u64,
        /// The caller's idempotency key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
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
            | Event::Touched { at_ms, .. }
            | Event::TakenBack { at_ms, .. } => at_ms,
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
            | Event::Touched { request_id, .. }
            | Event::TakenBack { request_id, .. } => request_id.as_deref(),
            Event::FlagFell { .. } => None,
        }
    }
}
