//! What a search reports: its principal variations while it runs and its result at the end.

use chess_rules::Move;

use crate::score::Score;
use crate::tt::Bound;

/// One principal variation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1 for the best line.
    pub multipv: usize,
    /// From the side to move's point of view.
    pub score: Score,
    /// Win/draw/loss per mille (see [`Score::wdl`]).
    pub wdl: (u32, u32, u32),
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub pv: Vec<Move>,
    /// The score is the endgame tables' exact verdict (a table win or loss is a mate in
    /// [`Score::Mate`] moves, a table draw `cp 0`), not the search's estimate.
    pub tablebase: bool,
    /// Endgame-table probes made by the search so far.
    pub tbhits: u64,
}

/// Progress reported during a search: one line, whether its score is only a bound (aspiration
/// window failed), and how full the hash table is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub line: Line,
    /// `None` for an exact score; `Some(Bound::Lower)` for a lower bound (fail high), and so on.
    pub bound: Option<Bound>,
    /// Per mille.
    pub hashfull: u32,
}

/// The outcome of a search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// `None` only when the side to move has no legal move.
    pub best_move: Option<Move>,
    /// The expected reply, when known.
    pub ponder: Option<Move>,
    /// The principal variations, best first.
    pub lines: Vec<Line>,
}

impl SearchResult {
    /// What a deterministic search must reproduce, as text: the best move, then each line's
    /// depth, score, node count and PV (not its time or speed). Two runs of a single-threaded
    /// fixed-depth search with the same evaluation give the same fingerprint.
    pub fn fingerprint(&self) -> String {
        let mut out = self
            .best_move
            .map_or_else(|| "(none)".to_owned(), |m| m.to_string());
        for l in &self.lines {
            out.push_str(&format!(
                " | depth {} score {:?} nodes {} pv",
                l.depth, l.score, l.nodes
            ));
            for m in &l.pv {
                out.push(' ');
                out.push_str(&m.to_string());
            }
        }
        out
    }
}
