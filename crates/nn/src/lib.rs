//! # chess-nn
//!
//! The evaluation network: its versioned file format (files named by their content hash), the
//! input features, quantised integer inference on the CPU with incremental accumulators, and
//! the batch interface that every backend (this crate's [`CpuBatch`], the GPU one in
//! `chess-nn-gpu`) implements with bit-identical results.
//!
//! ```text
//! features (768 per perspective, in the set of its king's bucket) -> FT 768K x H (i16)
//!     -> accumulators (stm, nstm)
//!     -> SCReLU: clamp(a, 0, QA)^2 -> output 2H x 1 of the position's bucket (by the number
//!     of pieces; one bucket in version-1 files) -> centipawns for the side to move
//! ```
//!
//! The exact arithmetic is on [`Network`]; the feature encoding on [`feature_index`]; the file
//! layout on [`Network::to_bytes`].
//!
//! ```
//! use chess_nn::{Accumulator, Network};
//! use chess_rules::Position;
//!
//! let net = Network::default_network();
//! let pos = Position::startpos();
//! let mut acc = Accumulator::from_position(&net, &pos);
//! let m = pos.parse_uci("g1f3").unwrap();
//! acc.play(&net, &pos, m);
//! let next = pos.play(m).unwrap();
//! assert_eq!(net.evaluate_accumulator(&acc, next.turn()), net.evaluate(&next));
//! ```
//!
//! The default network embedded here is trained by `chess-train` from our engine's self-play;
//! `docs/network.md` gives its data, training settings and match result.

// Unsafe code only where allowed by name: the run-time SIMD dispatch in simd.rs.
#![deny(unsafe_code)]

mod accumulator;
mod batch;
mod error;
mod features;
mod file;
mod inference;
mod kernels;
mod king_buckets;
mod network;
mod refresh_cache;
#[allow(unsafe_code)] // calls into the AVX2/AVX-512 copies of the kernels: see its SAFETY lines
mod simd;

pub use accumulator::{Accumulator, MoveDelta, PlacedPiece};
pub use batch::{BatchEvaluator, CpuBatch};
pub use error::{BackendError, FeatureError, NetworkError};
pub use features::{FeatureBatch, active_features, feature_index, for_each_feature};
pub use file::{CHECKSUM_BYTES, HEADER_BYTES, file_len, fnv1a64};
pub use king_buckets::KingBuckets;
pub use network::{
    DEFAULT_NETWORK_BYTES, DEFAULT_NETWORK_FILE, MAX_QUANT, Network, NetworkParts, output_bucket,
    output_ratio,
};
pub use refresh_cache::RefreshCache;
pub use simd::Simd;

/// Inputs per perspective: 2 colours x 6 roles x 64 squares.
pub const INPUTS: usize = 768;
/// The largest hidden size a file may have.
pub const MAX_HIDDEN: usize = 1024;
/// The hidden size must be a multiple of this (the vector width the kernels assume).
pub const HIDDEN_MULTIPLE: usize = 16;
/// Most active features per perspective (32 pieces).
pub const MAX_ACTIVE: usize = 32;
/// The newest file format version this crate reads and writes: version 2 adds output buckets
/// to version 1, which stays the format of a network with one bucket, and version 3 adds king
/// buckets (all three are read).
pub const FORMAT_VERSION: u32 = 3;
/// The most output buckets a network may have.
pub const MAX_BUCKETS: usize = 16;
/// The most king buckets (sets of 768 input features) a network may have.
pub const MAX_KING_BUCKETS: usize = 32;
/// The first four bytes of a network file.
pub const MAGIC: [u8; 4] = *b"CHNN";
/// The activation clamp of the networks this project writes (files state their own).
pub const DEFAULT_QA: i32 = 255;
/// The output weight scale of the networks this project writes.
pub const DEFAULT_QB: i32 = 64;
/// Centipawns per unit of unquantised output in the networks this project writes.
pub const DEFAULT_SCALE: i32 = 400;

const _: () = assert!(INPUTS == 2 * 6 * 64);
const _: () = assert!(MAX_HIDDEN.is_multiple_of(HIDDEN_MULTIPLE));
// Feature indices are u16.
const _: () = assert!(INPUTS * MAX_KING_BUCKETS <= u16::MAX as usize + 1);
const _: () = assert!(HIDDEN_MULTIPLE.is_multiple_of(kernels::CHUNK));
