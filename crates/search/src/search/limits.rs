//! What to search and when to stop: the limits a `go` command gives.

use chess_rules::Move;

/// What to search and when to stop. Times are milliseconds. With no limit at all the search
/// runs until stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Stop when a mate in this many moves (or fewer) is found.
    pub mate: Option<u32>,
    pub movetime: Option<u64>,
    /// Search until stopped, and do not return before.
    pub infinite: bool,
    /// Search on the opponent's time until `ponderhit` (then the clock limits apply) or `stop`.
    pub ponder: bool,
    /// Only these root moves (all when empty).
    pub searchmoves: Vec<Move>,
}

impl SearchLimits {
    /// A search to a fixed depth.
    pub fn depth(depth: u32) -> SearchLimits {
        SearchLimits {
            depth: Some(depth),
            ..SearchLimits::default()
        }
    }

    /// A search of a fixed number of milliseconds.
    pub fn movetime(ms: u64) -> SearchLimits {
        SearchLimits {
            movetime: Some(ms),
            ..SearchLimits::default()
        }
    }

    /// A search of (about) a fixed number of nodes.
    pub fn nodes(nodes: u64) -> SearchLimits {
        SearchLimits {
            nodes: Some(nodes),
            ..SearchLimits::default()
        }
    }

    /// True when nothing but `stop` ends the search.
    pub(crate) fn unlimited(&self) -> bool {
        self.wtime.is_none()
            && self.btime.is_none()
            && self.depth.is_none()
            && self.nodes.is_none()
            && self.mate.is_none()
            && self.movetime.is_none()
    }
}
