//! # chess-search
//!
//! A classical chess engine as a library: iterative-deepening principal-variation search with
//! a shared lock-free transposition table (Lazy SMP), staged move ordering, static exchange
//! evaluation, time management and a hand-written evaluation behind the [`Evaluator`] trait,
//! which the network evaluator [`NnueEval`] (incremental accumulators from `chess-nn`) also
//! implements. Pure library: threads from `std`, no async runtime, no I/O beyond reading the
//! network file an `EvalFile` option names. The [`batched`] module runs many searches as
//! coroutines on one thread and evaluates their leaves in batches (CPU or GPU backend).
//!
//! With one thread, a search to a fixed depth is deterministic.
//!
//! ```
//! use chess_rules::Position;
//! use chess_search::{Engine, EngineOptions, SearchLimits, Score};
//!
//! let mut engine = Engine::new(EngineOptions::default());
//! // Back-rank mate: Rd8#.
//! let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
//! let handle = engine.go(&pos, &[], SearchLimits::depth(4), |info| {
//!     let _ = (info.line.depth, info.line.score);
//! });
//! let result = handle.wait();
//! assert_eq!(result.best_move.unwrap().to_string(), "d1d8");
//! assert_eq!(result.lines[0].score, Score::Mate(1));
//! ```

// Unsafe code only where allowed by name: the coroutine yielder in batched.rs.
#![deny(unsafe_code)]

pub mod batched;
pub mod bench;
mod engine;
mod eval;
mod history;
mod level;
mod movepick;
mod nnue;
mod options;
mod params;
mod rng;
mod score;
mod search;
mod see;
mod tt;
mod tune;

pub use chess_nn::Simd;
pub use engine::{
    Engine, Info, Line, SearchHandle, SearchLimits, SearchResult, StopHandle, TaskRuntime,
};
pub use eval::{Evaluator, HandEval};
pub use level::{Level, MAX_ELO, MIN_ELO, MIN_SETTING, STRONGEST_LEVEL, WEAKEST_LEVEL, playable};
pub use nnue::{EvalSource, NnueEval, NnueStats};
pub use options::{EngineOption, EngineOptions, OPTIONS, OptionError, OptionKind, OptionSpec};
pub use params::{EvalParams, Params};
pub use rng::SplitMix64;
pub use score::{MAX_PLY, S, Score};
pub use see::{SEE_VALUE, see, see_ge};
pub use tt::{Bound, TranspositionTable, TtEntry, score_from_tt, score_to_tt};
