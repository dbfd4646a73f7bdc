//! The history of one run: every call with its invocation and completion on the client's
//! clock (ms since the Unix epoch), every watcher's events, the games that lose on time, and
//! the final games read after healing. Written by `load`, read by `check`.

use serde::{Deserialize, Serialize};
use tonic::{Code, Status};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct History {
    pub started_ms: u64,
    /// When the load stopped (the watchers and the final reads come after).
    pub load_ended_ms: u64,
    pub calls: Vec<Call>,
    pub watches: Vec<WatchLog>,
    pub flags: Vec<FlagGame>,
    pub finals: Vec<Final>,
}

/// How a call ended, as the client can know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    /// An error that promises nothing changed.
    Failed,
    /// A timeout, a lost connection, an error that does not say: it may have happened.
    Unknown,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Call {
    /// The client task that made it (a mover, the reader, the analyst, the flag maker).
    pub worker: String,
    pub op: String,
    #[serde(default)]
    pub game: Option<String>,
    /// The idempotency key (one per intended change; a retry sends the same key again).
    #[serde(default)]
    pub key: Option<String>,
    /// A move's `expected_ply` and the move (UCI).
    #[serde(default)]
    pub ply: Option<u32>,
    #[serde(default)]
    pub mv: Option<String>,
    pub start_ms: u64,
    pub end_ms: u64,
    pub outcome: Outcome,
    #[serde(default)]
    pub error: Option<String>,
    /// The ply of the game in the answer (calls answered with a game).
    #[serde(default)]
    pub answer_ply: Option<u32>,
}

/// One watcher's events on one game, across its reconnections.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WatchLog {
    pub game: String,
    pub events: Vec<Seen>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Seen {
    pub at_ms: u64,
    /// `GameEvent.Kind` as a number; -1 for a failed or ended stream (the watcher reconnects).
    pub kind: i32,
    pub ply: u32,
    /// The game's moves (UCI) in the event's state.
    pub moves: Vec<String>,
    pub over: bool,
}

/// A game made to lose on time: white moves once and black never does.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlagGame {
    pub game: String,
    /// When black's flag falls at the latest (the ack of white's move plus black's time).
    pub due_ms: u64,
    /// When a read through the gateway first showed the game over.
    #[serde(default)]
    pub polled_over_ms: Option<u64>,
}

/// A game as read after healing (None: it could not be read).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Final {
    pub game: String,
    pub moves: Option<Vec<String>>,
    pub over: bool,
    /// `Outcome.Rule` when over.
    pub rule: i32,
}

/// What a failed call tells about its effect. Only errors that promise nothing changed are
/// definite: a refusal of the request itself, or the service's own "nothing was changed".
pub fn classify(status: &Status) -> Outcome {
    match status.code() {
        Code::InvalidArgument
        | Code::FailedPrecondition
        | Code::NotFound
        | Code::AlreadyExists
        | Code::PermissionDenied
        | Code::Unauthenticated
        | Code::OutOfRange
        | Code::Unimplemented
        | Code::ResourceExhausted => Outcome::Failed,
        Code::Unavailable if status.message().contains("nothing was changed") => Outcome::Failed,
        // This client could not connect to the gateway at all: the call never left.
        Code::Unavailable if status.message().contains("tcp connect error") => Outcome::Failed,
        _ => Outcome::Unknown,
    }
}

/// Milliseconds since the Unix epoch on this machine's clock (the same in every namespace).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_promises_are_definite() {
        assert_eq!(
            classify(&Status::failed_precondition("stale")),
            Outcome::Failed
        );
        assert_eq!(
            classify(&Status::unavailable(
                "the store failed; nothing was changed"
            )),
            Outcome::Failed
        );
        assert_eq!(
            classify(&Status::unavailable("outcome unknown: the commit")),
            Outcome::Unknown
        );
        assert_eq!(
            classify(&Status::deadline_exceeded("late")),
            Outcome::Unknown
        );
        assert_eq!(classify(&Status::cancelled("gone")), Outcome::Unknown);
    }
}
