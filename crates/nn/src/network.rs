//! The network: its weights, their validation, its file format and its name. Evaluation is in
//! `inference.rs`.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use crate::error::NetworkError;
use crate::{FORMAT_VERSION, HIDDEN_MULTIPLE, INPUTS, MAGIC, MAX_BUCKETS, MAX_HIDDEN, Simd};

/// Bytes of a version-1 header: magic, then six `u32` (version, inputs, hidden, qa, qb,
/// scale). A version-2 header has one `u32` more, the output bucket count.
pub const HEADER_BYTES: usize = 4 + 6 * 4;
/// Bytes of the trailing checksum.
pub const CHECKSUM_BYTES: usize = 8;
/// The largest `qa`, `qb` and `scale` a file may state: `qa` bounds an `i16` clamp and
/// `qa * qb` must fit an `i32`.
pub const MAX_QUANT: u32 = 32_767;

/// File name of the embedded default network (see [`Network::default_network`]).
pub const DEFAULT_NETWORK_FILE: &str = "chnn-2e3483dd54b2.nnue";

/// The embedded default network's file, byte for byte.
pub static DEFAULT_NETWORK_BYTES: &[u8] = include_bytes!("../networks/chnn-2e3483dd54b2.nnue");

/// The FNV-1a 64 hash of `bytes`: the file checksum.
///
/// ```
/// assert_eq!(chess_nn::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(chess_nn::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// ```
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The header's length in a file [`Network::to_bytes`] writes: version 1 for one output
/// bucket, version 2 (with the bucket count) for more.
const fn header_len(buckets: usize) -> usize {
    if buckets == 1 {
        HEADER_BYTES
    } else {
        HEADER_BYTES + 4
    }
}

/// The bytes after the header: weights, biases and the checksum.
const fn body_len(hidden: usize, buckets: usize) -> usize {
    2 * (INPUTS * hidden + hidden + buckets * 2 * hidden) + 4 * buckets + CHECKSUM_BYTES
}

/// The size in bytes of the file [`Network::to_bytes`] writes for hidden size `hidden` and
/// `buckets` output buckets (version 1 when `buckets` is 1, else version 2).
pub const fn file_len(hidden: usize, buckets: usize) -> usize {
    header_len(buckets) + body_len(hidden, buckets)
}

/// The output bucket of a position with `pieces` pieces on the board (kings included) in a
/// network of `buckets` buckets: `(pieces - 2) * buckets / 31`, with `pieces` taken within
/// 2..=32, so the buckets split the 2 to 32 pieces evenly, fewest pieces in bucket 0 (with
/// 8 buckets: 2-5 pieces, 6-9, ..., 30-32).
///
/// ```
/// use chess_nn::output_bucket;
/// assert_eq!(output_bucket(32, 1), 0);
/// assert_eq!((output_bucket(2, 8), output_bucket(5, 8), output_bucket(6, 8)), (0, 0, 1));
/// assert_eq!(output_bucket(32, 8), 7);
/// ```
#[inline]
pub const fn output_bucket(pieces: usize, buckets: usize) -> usize {
    let p = if pieces < 2 {
        2
    } else if pieces > 32 {
        32
    } else {
        pieces
    };
    (p - 2) * buckets / 31
}

/// A network's contents as plain arrays, for building one (a trainer, a generator, a test)
/// with [`Network::from_parts`]. The layouts are those of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkParts {
    /// Hidden size `H`: a multiple of 16 from 16 to 1024.
    pub hidden: usize,
    /// Activation clamp: `c = clamp(a, 0, qa)`.
    pub qa: i32,
    /// Output weight scale.
    pub qb: i32,
    /// Centipawns per unit of the unquantised output.
    pub scale: i32,
    /// `768 * H`, feature-major: feature `f`'s weight to neuron `j` at `f * H + j`.
    pub ft_weights: Vec<i16>,
    /// `H`.
    pub ft_biases: Vec<i16>,
    /// Output buckets: 1 to [`MAX_BUCKETS`]; a position uses bucket
    /// [`output_bucket`]`(pieces, buckets)`.
    pub buckets: usize,
    /// `buckets * 2 * H`, bucket-major: bucket `b`'s `2H` weights at `b * 2H`, of which the
    /// first `H` apply to the side to move's accumulator, the next `H` to the other side's.
    pub out_weights: Vec<i16>,
    /// `buckets`: one output bias per bucket.
    pub out_biases: Vec<i32>,
}

/// An evaluation network (format version 1, or 2 with output buckets), validated and ready
/// to evaluate.
///
/// ```text
///  side to move's 768 inputs ──► FT (768 -> H, i16) ──► acc_stm ─┐
///                                                                ├─ SCReLU ─► out[b] (2H -> 1) ─► cp
///  other side's  768 inputs ──► FT (same weights)   ──► acc_nstm ┘
/// ```
///
/// The arithmetic, which every backend reproduces bit for bit:
///
/// * `acc[j] = ft_biases[j] + sum over active features f of ft_weights[f * H + j]`, in `i16`
///   with wrapping addition, for each perspective.
/// * The output bucket `b` = [`output_bucket`]`(pieces on the board, buckets)` (always 0 with
///   one bucket).
/// * For each of the `2H` values `a` of `acc_stm ++ acc_nstm` with its output weight `w` of
///   bucket `b`: `c = clamp(a as i32, 0, qa)`, `sum = sum + (c * w) * c` in `i32`, wrapping.
/// * `eval = (sum / qa + out_biases[b]) * (scale / g) / (qa * qb / g)` in `i32`, wrapping
///   multiplication and addition, division truncating toward zero, with
///   `g = gcd(scale, qa * qb)`; centipawns for the side to move. This is
///   `(sum / qa + out_biases[b]) * scale / (qa * qb)` with the fraction reduced (80 for the
///   default 400 / (255 * 64), so the factor is 5 / 204), which gives the same result
///   whenever that product fits an `i32` and leaves the output layer 80 times the room
///   (see [`Network::output_ratio`]).
///
/// ```
/// use chess_nn::Network;
/// use chess_rules::Position;
/// let net = Network::default_network();
/// assert!(net.evaluate(&Position::startpos()).abs() < 50);
/// // Black has no queen.
/// let pos = Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
/// assert!(net.evaluate(&pos) > 700);
/// ```
#[derive(Clone)]
pub struct Network {
    hidden: usize,
    qa: i32,
    qb: i32,
    scale: i32,
    ft_weights: Vec<i16>,
    ft_biases: Vec<i16>,
    buckets: usize,
    out_weights: Vec<i16>,
    out_biases: Vec<i32>,
    /// Every `|w| * qa <= 32767`: the output sum may multiply `c * w` in `i16`.
    small_out: bool,
    /// `scale / g` and `qa * qb / g`, `g = gcd(scale, qa * qb)`.
    output_ratio: (i32, i32),
    /// The vector instructions the kernels use: always one this CPU has.
    simd: Simd,
}

/// Two networks are equal when their weights and constants are: the instruction set they run
/// on changes no result.
impl PartialEq for Network {
    fn eq(&self, other: &Network) -> bool {
        self.hidden == other.hidden
            && self.qa == other.qa
            && self.qb == other.qb
            && self.scale == other.scale
            && self.buckets == other.buckets
            && self.out_biases == other.out_biases
            && self.ft_biases == other.ft_biases
            && self.out_weights == other.out_weights
            && self.ft_weights == other.ft_weights
    }
}

impl Eq for Network {}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("hidden", &self.hidden)
            .field("qa", &self.qa)
            .field("qb", &self.qb)
            .field("scale", &self.scale)
            .field("buckets", &self.buckets)
            .field("simd", &self.simd)
            .finish_non_exhaustive()
    }
}

fn check_hidden(hidden: u64) -> Result<usize, NetworkError> {
    let ok = hidden >= HIDDEN_MULTIPLE as u64
        && hidden <= MAX_HIDDEN as u64
        && hidden.is_multiple_of(HIDDEN_MULTIPLE as u64);
    if ok {
        Ok(hidden as usize)
    } else {
        Err(NetworkError::BadHidden {
            multiple: HIDDEN_MULTIPLE as u32,
            max: MAX_HIDDEN as u32,
            found: u32::try_from(hidden).unwrap_or(u32::MAX),
        })
    }
}

fn check_buckets(buckets: u64) -> Result<usize, NetworkError> {
    if (1..=MAX_BUCKETS as u64).contains(&buckets) {
        Ok(buckets as usize)
    } else {
        Err(NetworkError::BadBuckets {
            max: MAX_BUCKETS as u32,
            found: u32::try_from(buckets).unwrap_or(u32::MAX),
        })
    }
}

fn check_quant(name: &'static str, v: i64) -> Result<i32, NetworkError> {
    if (1..=i64::from(MAX_QUANT)).contains(&v) {
        Ok(v as i32)
    } else {
        Err(NetworkError::BadQuantisation {
            name,
            max: MAX_QUANT,
            found: v.max(0) as u64,
        })
    }
}

/// The header fields a file's length depends on, checked.
struct Header {
    hidden: usize,
    qa: i32,
    qb: i32,
    scale: i32,
    buckets: usize,
    /// Bytes of the header: 28 in version 1, 32 in version 2.
    len: usize,
}

impl Header {
    /// The length the whole file must have, checked against the `found` one.
    fn check_len(&self, found: usize) -> Result<usize, NetworkError> {
        let expected = self.len + body_len(self.hidden, self.buckets);
        if found == expected {
            Ok(expected)
        } else {
            Err(NetworkError::BadLength {
                hidden: self.hidden as u32,
                buckets: self.buckets as u32,
                expected,
                found,
            })
        }
    }

    /// Checks the first bytes of a file: length, magic, version, inputs, hidden size,
    /// quantisation and (version 2) output buckets, in that order.
    fn read(bytes: &[u8]) -> Result<Header, NetworkError> {
        let min = HEADER_BYTES + CHECKSUM_BYTES;
        if bytes.len() < min {
            return Err(NetworkError::TooShort {
                min,
                found: bytes.len(),
            });
        }
        let magic: [u8; 4] = bytes[..4].try_into().unwrap();
        if magic != MAGIC {
            return Err(NetworkError::BadMagic { found: magic });
        }
        let mut r = Reader { bytes, at: 4 };
        let version = r.u32();
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(NetworkError::UnsupportedVersion {
                expected: FORMAT_VERSION,
                found: version,
            });
        }
        let inputs = r.u32();
        if inputs != INPUTS as u32 {
            return Err(NetworkError::BadInputs {
                expected: INPUTS as u32,
                found: inputs,
            });
        }
        let hidden = check_hidden(u64::from(r.u32()))?;
        let qa = check_quant("qa", i64::from(r.u32()))?;
        let qb = check_quant("qb", i64::from(r.u32()))?;
        let scale = check_quant("scale", i64::from(r.u32()))?;
        debug_assert_eq!(r.at, HEADER_BYTES);
        // The shortest file (header and checksum) has room for the bucket count.
        let buckets = if version == 1 {
            1
        } else {
            check_buckets(u64::from(r.u32()))?
        };
        Ok(Header {
            hidden,
            qa,
            qb,
            scale,
            buckets,
            len: r.at,
        })
    }
}

/// Reads little-endian values from a byte slice whose length was checked beforehand.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u32(&mut self) -> u32 {
        let v = u32::from_le_bytes(self.bytes[self.at..self.at + 4].try_into().unwrap());
        self.at += 4;
        v
    }

    fn i32(&mut self) -> i32 {
        self.u32() as i32
    }

    fn i32s(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.i32()).collect()
    }

    fn i16s(&mut self, n: usize) -> Vec<i16> {
        let end = self.at + 2 * n;
        let v = self.bytes[self.at..end]
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        self.at = end;
        v
    }
}

/// `scale / (qa * qb)` reduced by their greatest common divisor (each is at least 1).
pub const fn output_ratio(qa: i32, qb: i32, scale: i32) -> (i32, i32) {
    let (num, den) = (scale, qa * qb);
    let (mut a, mut b) = (num, den);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    (num / a, den / a)
}

impl Network {
    /// Validates `parts` and builds the network.
    pub fn from_parts(parts: NetworkParts) -> Result<Network, NetworkError> {
        let hidden = check_hidden(parts.hidden as u64)?;
        let qa = check_quant("qa", i64::from(parts.qa))?;
        let qb = check_quant("qb", i64::from(parts.qb))?;
        let scale = check_quant("scale", i64::from(parts.scale))?;
        let buckets = check_buckets(parts.buckets as u64)?;
        for (part, found, expected) in [
            ("ft_weights", parts.ft_weights.len(), INPUTS * hidden),
            ("ft_biases", parts.ft_biases.len(), hidden),
            ("out_weights", parts.out_weights.len(), buckets * 2 * hidden),
            ("out_biases", parts.out_biases.len(), buckets),
        ] {
            if found != expected {
                return Err(NetworkError::BadParts {
                    part,
                    hidden,
                    buckets,
                    expected,
                    found,
                });
            }
        }
        let small_out = parts
            .out_weights
            .iter()
            .all(|&w| i32::from(w).abs() * qa <= i32::from(i16::MAX));
        Ok(Network {
            hidden,
            qa,
            qb,
            scale,
            ft_weights: parts.ft_weights,
            ft_biases: parts.ft_biases,
            buckets,
            out_weights: parts.out_weights,
            out_biases: parts.out_biases,
            small_out,
            output_ratio: output_ratio(qa, qb, scale),
            simd: Simd::detect(),
        })
    }

    /// The network's arrays.
    pub fn into_parts(self) -> NetworkParts {
        NetworkParts {
            hidden: self.hidden,
            qa: self.qa,
            qb: self.qb,
            scale: self.scale,
            ft_weights: self.ft_weights,
            ft_biases: self.ft_biases,
            buckets: self.buckets,
            out_weights: self.out_weights,
            out_biases: self.out_biases,
        }
    }

    /// The embedded default network (parsed once, then shared).
    pub fn default_network() -> Arc<Network> {
        static NET: OnceLock<Arc<Network>> = OnceLock::new();
        NET.get_or_init(|| {
            Arc::new(
                Network::from_bytes(DEFAULT_NETWORK_BYTES)
                    .expect("the embedded network is valid (the tests read it)"),
            )
        })
        .clone()
    }

    #[inline]
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    #[inline]
    pub fn qa(&self) -> i32 {
        self.qa
    }

    #[inline]
    pub fn qb(&self) -> i32 {
        self.qb
    }

    #[inline]
    pub fn scale(&self) -> i32 {
        self.scale
    }

    /// The output layer's last step, `scale / (qa * qb)` as a reduced fraction
    /// `(numerator, denominator)`: every backend multiplies by the first and divides by the
    /// second.
    ///
    /// ```
    /// let net = chess_nn::Network::default_network();
    /// assert_eq!((net.scale(), net.qa() * net.qb()), (400, 255 * 64));
    /// assert_eq!(net.output_ratio(), (5, 204));
    /// ```
    #[inline]
    pub fn output_ratio(&self) -> (i32, i32) {
        self.output_ratio
    }

    /// `768 * H`, feature-major.
    #[inline]
    pub fn ft_weights(&self) -> &[i16] {
        &self.ft_weights
    }

    #[inline]
    pub fn ft_biases(&self) -> &[i16] {
        &self.ft_biases
    }

    /// Output buckets (1 in a version-1 file).
    #[inline]
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The output bucket of a position with `pieces` pieces on the board.
    #[inline]
    pub fn bucket(&self, pieces: usize) -> usize {
        output_bucket(pieces, self.buckets)
    }

    /// `buckets * 2 * H`, bucket-major; in each bucket the side to move's half first.
    #[inline]
    pub fn out_weights(&self) -> &[i16] {
        &self.out_weights
    }

    /// Bucket `bucket`'s `2H` output weights, side to move's half first.
    #[inline]
    pub fn bucket_weights(&self, bucket: usize) -> &[i16] {
        let n = 2 * self.hidden;
        &self.out_weights[bucket * n..(bucket + 1) * n]
    }

    /// One output bias per bucket.
    #[inline]
    pub fn out_biases(&self) -> &[i32] {
        &self.out_biases
    }

    /// Feature `f`'s `H` weights.
    #[inline]
    pub fn ft_row(&self, feature: usize) -> &[i16] {
        &self.ft_weights[feature * self.hidden..(feature + 1) * self.hidden]
    }

    // ----- the file -----

    /// The file's bytes (little-endian): version 1 for a network of one output bucket, so
    /// that such a network keeps its file and its name, version 2 for more.
    ///
    /// ```text
    /// offset  size        field
    ///      0  4           magic "CHNN"
    ///      4  4           u32 version (1 or 2)
    ///      8  4           u32 inputs = 768
    ///     12  4           u32 hidden H
    ///     16  4           u32 qa
    ///     20  4           u32 qb
    ///     24  4           u32 scale
    ///    (28  4           u32 buckets B, version 2 only; B = 1 in version 1)
    ///         2*768*H     i16 ft_weights, feature-major
    ///         2*H         i16 ft_biases
    ///         2*B*2H      i16 out_weights, bucket-major (each: side to move's H, the other's H)
    ///         4*B         i32 out_biases
    ///         8           u64 FNV-1a 64 of every byte before it
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(file_len(self.hidden, self.buckets));
        b.extend_from_slice(&MAGIC);
        let version = if self.buckets == 1 { 1 } else { FORMAT_VERSION };
        for v in [
            version,
            INPUTS as u32,
            self.hidden as u32,
            self.qa as u32,
            self.qb as u32,
            self.scale as u32,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        if version != 1 {
            b.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        }
        for part in [&self.ft_weights, &self.ft_biases, &self.out_weights] {
            for v in part.iter() {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        for v in &self.out_biases {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sum = fnv1a64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(b.len(), file_len(self.hidden, self.buckets));
        b
    }

    /// Reads a file's bytes, checking magic, version, shape, quantisation, length and
    /// checksum in that order.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        let header = Header::read(bytes)?;
        let expected = header.check_len(bytes.len())?;
        let (hidden, buckets) = (header.hidden, header.buckets);
        let mut r = Reader {
            bytes,
            at: header.len,
        };
        let body = &bytes[..expected - CHECKSUM_BYTES];
        let stored = u64::from_le_bytes(bytes[expected - CHECKSUM_BYTES..].try_into().unwrap());
        let computed = fnv1a64(body);
        if stored != computed {
            return Err(NetworkError::BadChecksum {
                expected: stored,
                found: computed,
            });
        }
        let ft_weights = r.i16s(INPUTS * hidden);
        let ft_biases = r.i16s(hidden);
        let out_weights = r.i16s(buckets * 2 * hidden);
        let out_biases = r.i32s(buckets);
        Network::from_parts(NetworkParts {
            hidden,
            qa: header.qa,
            qb: header.qb,
            scale: header.scale,
            ft_weights,
            ft_biases,
            buckets,
            out_weights,
            out_biases,
        })
    }

    /// Reads a network file. Only a regular file is opened (a device such as `/dev/zero` or
    /// a pipe could be read forever), and its length is checked against its header before
    /// the rest is read, so a load reads at most
    /// [`file_len`]`(`[`MAX_HIDDEN`]`, `[`MAX_BUCKETS`]`)` bytes.
    pub fn load(path: impl AsRef<Path>) -> Result<Network, NetworkError> {
        let path = path.as_ref();
        let io = |source| NetworkError::Io {
            path: path.to_owned(),
            source,
        };
        let not_a_file = || NetworkError::NotAFile {
            path: path.to_owned(),
        };
        // Checked before opening: opening a pipe for reading waits for a writer.
        if !std::fs::metadata(path).map_err(io)?.is_file() {
            return Err(not_a_file());
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(not_a_file());
        }
        let found = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        let mut bytes = Vec::new();
        let head = (HEADER_BYTES + CHECKSUM_BYTES) as u64;
        (&file).take(head).read_to_end(&mut bytes).map_err(io)?;
        let header = Header::read(&bytes)?;
        let expected = header.check_len(found)?;
        // One byte more than expected shows a file that grew since its length was taken.
        bytes.reserve_exact(expected - bytes.len());
        (&file)
            .take(expected as u64 + 1 - head)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Network::from_bytes(&bytes)
    }

    /// Writes the network to `path` (conventionally a folder joined with
    /// [`Network::file_name`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), NetworkError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()).map_err(|source| NetworkError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// The first 12 hex digits of the SHA-256 of the file's bytes.
    pub fn content_hash(&self) -> String {
        let digest = Sha256::digest(self.to_bytes());
        digest[..6].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The name the file goes by: `chnn-<content hash>.nnue`.
    pub fn file_name(&self) -> String {
        format!("chnn-{}.nnue", self.content_hash())
    }

    /// Whether every `|w| * qa` of the output weights fits an `i16` (the output sum's fast path).
    #[inline]
    pub(crate) fn small_out(&self) -> bool {
        self.small_out
    }

    /// The vector instructions the kernels use (the widest this CPU has, unless
    /// [`Network::with_simd`] or `CHESS_NN_SIMD` chose another).
    #[inline]
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// The same network evaluated with another instruction set: bit for bit the same results,
    /// at another speed. Refuses one this CPU lacks.
    pub fn with_simd(mut self, simd: Simd) -> Result<Network, NetworkError> {
        if !simd.is_available() {
            let available = Simd::available()
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(NetworkError::SimdUnavailable { simd, available });
        }
        self.simd = simd;
        Ok(self)
    }

    /// Forces the general `i32` output path (tests compare it with the `i16` fast path).
    #[doc(hidden)]
    pub fn with_wide_output(mut self) -> Network {
        self.small_out = false;
        self
    }
}
