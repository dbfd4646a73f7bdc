//! # chess-train
//!
//! Self-play data generation with our own engine and a CPU trainer for the `chess-nn`
//! evaluation network (first version, issue 5).
//!
//! * [`datagen`]: games at a fixed node count per move from openings of random plies;
//!   quiet positions with their search scores and the game results go to a compact binary
//!   file ([`data`]), appended game by game and resumed on restart.
//! * [`train`]: float training of the exact `chess-nn` shape, sparse in the inputs, Adam,
//!   target a mix of score and result; checkpoints each epoch; quantised into a network file.
//! * [`rescale`]: a network's evaluation scale matched to another's (the search's margins are
//!   tuned on the default network's), by the file's `SCALE` alone.

// Unsafe code only where allowed by name: the run-time SIMD dispatch in train/simd.rs.
#![deny(unsafe_code)]

pub mod data;
pub mod datagen;
pub mod rescale;
pub mod rng;
pub mod train;

use std::path::PathBuf;

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {what}", path.display())]
    Format { path: PathBuf, what: String },
    #[error("{0}")]
    Network(chess_nn::NetworkError),
    #[error("{0}")]
    Usage(String),
}

/// The network an option names (`default` or a file), for `flag`'s errors; the hand-written
/// evaluation is refused with `hand`, what it lacks for the command at hand.
pub(crate) fn network_option(
    value: &str,
    flag: &str,
    hand: &str,
) -> Result<std::sync::Arc<chess_nn::Network>, Error> {
    match chess_search::EvalSource::from_option(value) {
        Ok(chess_search::EvalSource::Network(net)) => Ok(net),
        Ok(chess_search::EvalSource::Hand) => Err(Error::Usage(format!(
            "{flag} {value:?}: the hand-written evaluation {hand}"
        ))),
        Err(e) => Err(Error::Usage(format!("{flag} {value:?}: {e}"))),
    }
}
