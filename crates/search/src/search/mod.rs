//! The search: iterative deepening with aspiration windows over a principal-variation search
//! (negamax alpha-beta) and a quiescence search.
//!
//! Node kinds are types (`node.rs`), so the root/PV/non-PV distinctions compile into three
//! copies of the search instead of run-time flags. Pruning: mate distance, transposition-table
//! cutoffs, reverse futility, razoring, null move (verified at high depth), late-move reductions
//! and pruning, futility, history and SEE pruning; extensions: check and singular. Draws by
//! repetition (against the game history and the search path), the fifty-move rule and
//! insufficient material are recognised in the tree.
//!
//! The parts, each calling only those below it:
//!
//! | file         | part                                                                 |
//! |--------------|----------------------------------------------------------------------|
//! | `root.rs`    | iterative deepening, aspiration windows, MultiPV, the reported lines |
//! | `negamax.rs` | the main search                                                      |
//! | `qsearch.rs` | the quiescence search                                                |
//! | `tables.rs`  | the endgame tables: exact root lines, interior win/draw/loss probes    |
//! | `thread.rs`  | thread state (shared, per thread, per search) and the common helpers |
//! | `node.rs`    | the node kinds                                                       |
//! | `timeman.rs` | time management                                                      |
//! | `limits.rs`  | what to search and when to stop                                      |
//! | `report.rs`  | what a search reports                                                |

mod limits;
mod negamax;
mod node;
mod qsearch;
mod report;
mod root;
mod tables;
mod thread;
mod timeman;

pub use limits::SearchLimits;
pub use report::{Info, Line, SearchResult};
pub(crate) use thread::{Control, Searcher, Shared, Worker};
pub(crate) use timeman::TimeManager;
