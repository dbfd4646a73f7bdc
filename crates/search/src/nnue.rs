//! The network as a search evaluator: [`NnueEval`] keeps a stack of accumulators in step with
//! the search through the [`Evaluator`] hooks, and [`EvalSource`] is what the `EvalFile`
//! option selects.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use chess_nn::{Accumulator, MoveDelta, Network, NetworkError, RefreshCache};
use chess_rules::{Move, Position};

use crate::eval::{Evaluator, HandEval};

/// The network's scores are clamped to this, as the hand-written evaluation's are, so that no
/// network (a corrupt-but-checksummed one included) can produce a mate-range score.
pub(crate) const EVAL_LIMIT: i32 = 20_000;

/// Counters shared by evaluators (tests and tools read them).
#[derive(Debug, Default)]
pub struct NnueStats {
    /// Evaluations answered from the incremental accumulator stack.
    pub incremental: AtomicU64,
    /// Evaluations that needed a full refresh (no stack, or a position the stack was not
    /// following).
    pub refreshed: AtomicU64,
}

struct Entry {
    acc: Accumulator,
    /// What the move into this entry's position changed (unused at the root).
    delta: MoveDelta,
    /// The Zobrist key of the position this entry follows.
    key: u64,
    /// `acc` is up to date (entries are filled lazily, when first evaluated).
    computed: bool,
}

/// NNUE evaluation for the search.
///
/// Incremental (the default): the search's hooks push and pop an accumulator entry per move;
/// an entry is computed from its parent only when its position is evaluated, so moves cut
/// off before their static evaluation cost nothing. A move that takes a king into another
/// king bucket (networks with king buckets) computes its entry at once instead, that side's
/// accumulator through a [`RefreshCache`]. An evaluation of a position that is not
/// the one on top of the stack (checked by Zobrist key) falls back to a full refresh, so the
/// answer is always right. [`NnueEval::full_refresh`] ignores the hooks and refreshes every
/// time: slower, the same numbers.
///
/// ```
/// use chess_nn::Network;
/// use chess_rules::Position;
/// use chess_search::{Evaluator, NnueEval};
/// let net = Network::default_network();
/// let mut eval = NnueEval::new(net.clone());
/// let pos = Position::startpos();
/// assert_eq!(eval.evaluate(&pos), net.evaluate(&pos));
/// ```
pub struct NnueEval {
    net: Arc<Network>,
    incremental: bool,
    stack: Vec<Entry>,
    /// Live entries: `stack[..len]`.
    len: usize,
    scratch: Accumulator,
    /// Each side's last accumulator per king bucket, for the moves that take a king into
    /// another bucket (never used by a network without king buckets).
    cache: RefreshCache,
    stats: Option<Arc<NnueStats>>,
}

impl fmt::Debug for NnueEval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NnueEval")
            .field("net", &self.net)
            .field("incremental", &self.incremental)
            .field("depth", &self.len)
            .finish_non_exhaustive()
    }
}

impl NnueEval {
    /// An incremental evaluator.
    pub fn new(net: Arc<Network>) -> NnueEval {
        NnueEval {
            scratch: Accumulator::new(&net),
            cache: RefreshCache::new(&net),
            net,
            incremental: true,
            stack: Vec::new(),
            len: 0,
            stats: None,
        }
    }

    /// An evaluator that refreshes both accumulators at every evaluation (the reference the
    /// incremental one is tested against).
    pub fn full_refresh(net: Arc<Network>) -> NnueEval {
        NnueEval {
            incremental: false,
            ..NnueEval::new(net)
        }
    }

    /// Counts evaluations into `stats`.
    pub fn with_stats(mut self, stats: Arc<NnueStats>) -> NnueEval {
        self.stats = Some(stats);
        self
    }

    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// Makes `stack[i]` exist (entries are allocated once and reused).
    fn slot(&mut self, i: usize) -> &mut Entry {
        if i == self.stack.len() {
            self.stack.push(Entry {
                acc: Accumulator::new(&self.net),
                delta: MoveDelta::NONE,
                key: 0,
                computed: false,
            });
        }
        &mut self.stack[i]
    }

    fn push(&mut self, delta: MoveDelta, key: u64) {
        let i = self.len;
        let e = self.slot(i);
        e.delta = delta;
        e.key = key;
        e.computed = false;
        self.len += 1;
    }

    fn set_root(&mut self, root: &Position) {
        let net = self.net.clone();
        let e = self.slot(0);
        e.acc.refresh(&net, root);
        e.key = root.zobrist();
        e.computed = true;
        self.len = 1;
    }

    /// Brings the top entry up to date from its nearest computed ancestor.
    fn materialise_top(&mut self) {
        self.materialise(self.len - 1);
    }

    /// Brings entry `top` up to date from its nearest computed ancestor.
    fn materialise(&mut self, top: usize) {
        let mut i = top;
        while !self.stack[i].computed {
            // The root entry is always computed, so this stops.
            i -= 1;
        }
        for j in i + 1..=top {
            let (below, above) = self.stack.split_at_mut(j);
            let (parent, child) = (&below[j - 1], &mut above[0]);
            child.acc.update_from(&self.net, &parent.acc, &child.delta);
            child.computed = true;
        }
    }

    fn count(&self, incremental: bool) {
        if let Some(s) = &self.stats {
            let c = if incremental {
                &s.incremental
            } else {
                &s.refreshed
            };
            c.fetch_add(1, Relaxed);
        }
    }
}

impl Evaluator for NnueEval {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        let v = if self.incremental && self.len > 0 && self.stack[self.len - 1].key == pos.zobrist()
        {
            self.materialise_top();
            self.count(true);
            self.net
                .evaluate_accumulator(&self.stack[self.len - 1].acc, pos.turn())
        } else {
            self.scratch.refresh(&self.net, pos);
            self.count(false);
            self.net.evaluate_accumulator(&self.scratch, pos.turn())
        };
        v.clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn on_search_start(&mut self, root: &Position) {
        if self.incremental {
            self.set_root(root);
        }
    }

    fn on_make(&mut self, before: &Position, m: Move, after: &Position) {
        if !self.incremental {
            return;
        }
        if self.len == 0 {
            // Hooks without a search start: follow from here.
            self.set_root(before);
        }
        let delta = MoveDelta::new(before, m);
        self.push(delta, after.zobrist());
        if delta.changes_king_bucket(self.net.king_buckets()) {
            // A king changed bucket: no update from the parent reaches this side's
            // perspective, so the entry is computed now (the only time the hooks see the
            // position), that side's perspective from the board.
            self.materialise(self.len - 2);
            let top = self.len - 1;
            let (below, above) = self.stack.split_at_mut(top);
            let (parent, entry) = (&below[top - 1].acc, &mut above[0]);
            self.cache
                .update(&self.net, &mut entry.acc, parent, &delta, after);
            entry.computed = true;
        }
    }

    fn on_null_move(&mut self, before: &Position, after: &Position) {
        if !self.incremental {
            return;
        }
        if self.len == 0 {
            self.set_root(before);
        }
        self.push(MoveDelta::NONE, after.zobrist());
    }

    fn on_unmake(&mut self) {
        // The root stays: a search never takes back more than it made.
        if self.len > 1 {
            self.len -= 1;
        }
    }
}

/// What evaluates positions: the hand-written evaluation or a network. The `EvalFile` option
/// reads one from text with [`EvalSource::from_option`].
#[derive(Clone, Debug)]
pub enum EvalSource {
    Hand,
    Network(Arc<Network>),
}

/// The default evaluation: the embedded network (`EvalFile` `default`).
impl Default for EvalSource {
    fn default() -> EvalSource {
        EvalSource::Network(Network::default_network())
    }
}

impl EvalSource {
    /// `hand` (the hand-written evaluation), `default` (the embedded network), or the path of
    /// a network file; case-insensitive for the two words.
    pub fn from_option(value: &str) -> Result<EvalSource, NetworkError> {
        let value = value.trim();
        if value.eq_ignore_ascii_case("hand") {
            Ok(EvalSource::Hand)
        } else if value.eq_ignore_ascii_case("default") || value.eq_ignore_ascii_case("<default>") {
            Ok(EvalSource::default())
        } else {
            Ok(EvalSource::Network(Arc::new(Network::load(value)?)))
        }
    }

    /// A new evaluator for one search thread.
    pub fn make(&self) -> Box<dyn Evaluator> {
        match self {
            EvalSource::Hand => Box::new(HandEval::default()),
            EvalSource::Network(net) => Box::new(NnueEval::new(net.clone())),
        }
    }

    /// A factory of evaluators from this source, one per search thread.
    pub(crate) fn factory(&self) -> impl Fn() -> Box<dyn Evaluator> + Send + Sync + 'static {
        let source = self.clone();
        move || source.make()
    }

    /// For logs: `hand-written evaluation` or `network chnn-<hash>.nnue (hidden 256)`.
    pub fn describe(&self) -> String {
        match self {
            EvalSource::Hand => "hand-written evaluation".to_owned(),
            EvalSource::Network(net) => {
                format!("network {} (hidden {})", net.file_name(), net.hidden())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FENS: &[&str] = &[
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
        "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    ];

    #[test]
    fn hooks_follow_moves_and_a_stray_position_is_refreshed() {
        let net = Network::default_network();
        let mut eval = NnueEval::new(net.clone());
        let root = Position::from_fen(FENS[1]).unwrap();
        eval.on_search_start(&root);
        let mut path = vec![root.clone()];
        for uci in ["e1g1", "h3g2", "f3f6"] {
            let before = path.last().unwrap().clone();
            let m = before.parse_uci(uci).unwrap();
            let after = before.play(m).unwrap();
            eval.on_make(&before, m, &after);
            assert_eq!(eval.evaluate(&after), net.evaluate(&after), "{uci}");
            path.push(after);
        }
        let before = path.last().unwrap().clone();
        let passed = before.null_move().unwrap();
        eval.on_null_move(&before, &passed);
        assert_eq!(eval.evaluate(&passed), net.evaluate(&passed));
        eval.on_unmake();
        eval.on_unmake();
        // Back one move; evaluate without the entry in between having been computed.
        assert_eq!(eval.evaluate(&path[2]), net.evaluate(&path[2]));
        // Not the position on top of the stack: answered by a refresh, still right.
        let other = Position::from_fen(FENS[3]).unwrap();
        assert_eq!(eval.evaluate(&other), net.evaluate(&other));
    }

    #[test]
    fn eval_file_values() {
        assert!(matches!(
            EvalSource::from_option("hand"),
            Ok(EvalSource::Hand)
        ));
        assert!(matches!(
            EvalSource::from_option(" Default "),
            Ok(EvalSource::Network(_))
        ));
        let e = EvalSource::from_option("/no/such/file.nnue").unwrap_err();
        assert!(matches!(e, NetworkError::Io { .. }), "{e}");
        let d = EvalSource::from_option("default").unwrap().describe();
        assert_eq!(
            d,
            format!("network {} (hidden 256)", chess_nn::DEFAULT_NETWORK_FILE)
        );
    }
}
