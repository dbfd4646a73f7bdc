//! Typed errors: reading a network, feeding a batch, running a backend.

use std::fmt;
use std::path::PathBuf;

/// Why a network could not be read, written or built. The messages name what was expected
/// and what was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkError {
    /// The file could not be read or written.
    #[error("network file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The path names a device, pipe, socket or directory: only regular files are read, so
    /// that `/dev/zero` or a pipe cannot make a load read forever.
    #[error(
        "network file {} is not a regular file (a device, pipe, socket or directory)",
        path.display()
    )]
    NotAFile { path: PathBuf },
    /// Fewer bytes than a header and a checksum.
    #[error(
        "not a network file: {found} bytes, fewer than the {min} of an empty header and checksum"
    )]
    TooShort { min: usize, found: usize },
    /// The first four bytes are not `CHNN`.
    #[error("not a network file: magic {} where \"CHNN\" was expected", Magic(*found))]
    BadMagic { found: [u8; 4] },
    /// A format version this build does not read.
    #[error(
        "network format version {found} is not supported: this build reads versions 1 to {expected}"
    )]
    UnsupportedVersion { expected: u32, found: u32 },
    /// The header's input count is not the 768 per king bucket of the feature set.
    #[error("network has {found} inputs where its king buckets make {expected}")]
    BadInputs { expected: u32, found: u32 },
    /// The hidden size is not a multiple of 16 from 16 to 1024.
    #[error(
        "network hidden size {found} is not supported: expected a multiple of {multiple} from {multiple} to {max}"
    )]
    BadHidden { multiple: u32, max: u32, found: u32 },
    /// A quantisation constant (`qa`, `qb`, `scale`) outside 1..=32767.
    #[error("network quantisation constant {name} = {found} is out of range: expected 1 to {max}")]
    BadQuantisation {
        name: &'static str,
        max: u32,
        found: u64,
    },
    /// A version-2 header's output bucket count outside 1..=16.
    #[error("network has {found} output buckets: expected 1 to {max}")]
    BadBuckets { max: u32, found: u32 },
    /// A version-3 header's king-bucket map is not one.
    #[error("network file: {0}")]
    KingBuckets(#[source] FeatureError),
    /// A vector instruction set this CPU does not have was asked for.
    #[error("this CPU cannot run the {simd} kernels (it has: {available})")]
    SimdUnavailable {
        simd: crate::Simd,
        available: String,
    },
    /// The file's length does not match its header.
    #[error(
        "network file is {found} bytes long; its header (hidden size {hidden}, {buckets} output buckets, {king_buckets} king buckets) needs exactly {expected}"
    )]
    BadLength {
        hidden: u32,
        buckets: u32,
        king_buckets: u32,
        expected: usize,
        found: usize,
    },
    /// The trailing FNV-1a 64 checksum does not match the bytes before it.
    #[error(
        "network checksum mismatch: the file says {expected:#018x}, its contents hash to {found:#018x} (corrupt file)"
    )]
    BadChecksum { expected: u64, found: u64 },
    /// [`crate::NetworkParts`] whose arrays do not have the sizes the hidden size and the
    /// bucket counts imply.
    #[error(
        "network part {part} has {found} values where hidden size {hidden} with {buckets} output buckets and {king_buckets} king buckets needs {expected}"
    )]
    BadParts {
        part: &'static str,
        hidden: usize,
        buckets: usize,
        king_buckets: usize,
        expected: usize,
        found: usize,
    },
}

/// Four magic bytes shown as text with escapes, e.g. `"PK\x03\x04"`.
struct Magic([u8; 4]);

impl fmt::Display for Magic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for b in self.0 {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        f.write_str("\"")
    }
}

/// Why a feature list was refused by [`crate::FeatureBatch::push_features`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureError {
    /// More than [`crate::MAX_ACTIVE`] features for one perspective.
    #[error("{found} active features for one perspective, at most {max} are allowed")]
    TooMany { max: usize, found: usize },
    /// A feature index of the layout's inputs (768 per king bucket) or more.
    #[error("feature index {found} is out of range: expected below {inputs}")]
    OutOfRange { inputs: usize, found: u16 },
    /// A king-bucket map that is not one (see [`crate::KingBuckets`]).
    #[error("bad king-bucket map: {0}")]
    KingBuckets(String),
}

/// `s` cut to its first 40 characters (with `...`) for an error message.
pub(crate) fn cut(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    }
}

/// Why a [`crate::BatchEvaluator`] could not evaluate a batch.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The output slice's length is not the batch's.
    #[error("output holds {found} scores for a batch of {expected} positions")]
    OutputLength { expected: usize, found: usize },
    /// More positions than the backend can take in one call.
    #[error("a batch of {found} positions exceeds this backend's limit of {max}")]
    BatchTooLarge { max: usize, found: usize },
    /// The backend cannot run here (for a GPU backend: no adapter, or one lacking features).
    #[error("evaluation backend unavailable: {0}")]
    Unavailable(String),
    /// The batch's features are in another input layout than the network's (king buckets).
    #[error("the batch's king buckets {batch} are not the network's {network}")]
    Layout { network: String, batch: String },
    /// The backend failed while evaluating (a device error, a lost device).
    #[error("evaluation backend failed: {0}")]
    Device(String),
}
