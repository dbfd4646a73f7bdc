//! # chess-tablebase
//!
//! Our own endgame tables: a retrograde generator for any ending given as material (`KQvK`,
//! `KRPvKR`), a one-byte-per-position file format with a checksum, and memory-mapped probing
//! for win/draw/loss and distance to mate (DTM, in plies). A pure library: files, threads and
//! stderr progress, no async runtime.
//!
//! Table positions have no castling rights and no en-passant square, and the fifty-move rule
//! is ignored (pure DTM). A probed position with a legal en-passant capture weighs that capture
//! at the root; a position with castling rights is refused. See `docs/endgames.md`.
//!
//! ```no_run
//! use chess_rules::Position;
//! use chess_tablebase::{GenerateOptions, Material, Tablebase, Wdl, generate_endings};
//!
//! let dir = std::path::Path::new("tables");
//! generate_endings(&["KRvK".parse::<Material>()?], dir, &GenerateOptions::default())?;
//! let tb = Tablebase::open_dir(dir)?;
//! let pos = Position::from_fen("8/8/8/4k3/8/8/8/R3K3 w - - 0 1").unwrap();
//! assert_eq!(tb.probe_wdl(&pos)?, Wdl::Win);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Unsafe code only where allowed by name: the memory map of a table file in file.rs.
#![deny(unsafe_code)]

mod board;
mod file;
mod generate;
mod index;
mod material;
mod probe;
mod value;

use std::path::PathBuf;

pub use file::{EXTENSION, Table, TableStats, table_path};
pub use generate::{
    ConsistencyReport, GenerateOptions, GenerateReport, check_consistency, generate_endings,
    generate_named,
};
pub use material::Material;
pub use probe::{MoveValue, Tablebase};
pub use value::{Value, Wdl};

/// Reading, writing or generating tables failed.
#[derive(Debug, thiserror::Error)]
pub enum TbError {
    #[error("bad ending '{text}': {reason}")]
    BadEnding { text: String, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    BadFile { path: PathBuf, reason: String },
    #[error("generation: {0}")]
    Generate(String),
}

/// A position the loaded tables cannot answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("no table for {0}")]
    NoTable(String),
    #[error("castling rights are not in the tables")]
    Castling,
    #[error("not a table position: {0}")]
    Illegal(String),
}
