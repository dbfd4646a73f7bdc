//! The network: its weights and their validation. Its file and name are `file.rs`; evaluation
//! is `inference.rs`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::error::NetworkError;
use crate::king_buckets::KingBuckets;
use crate::{HIDDEN_MULTIPLE, MAX_BUCKETS, MAX_HIDDEN, Simd};

/// The largest `qa`, `qb` and `scale` a file may state: `qa` bounds an `i16` clamp and
/// `qa * qb` must fit an `i32`.
pub const MAX_QUANT: u32 = 32_767;

/// File name of the embedded default network (see [`Network::default_network`]).
pub const DEFAULT_NETWORK_FILE: &str = "chnn-7e616c9c4844.nnue";

/// The embedded default network's file, byte for byte.
pub static DEFAULT_NETWORK_BYTES: &[u8] = include_bytes!("../networks/chnn-7e616c9c4844.nnue");

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
    /// The input layout: which set of 768 features each perspective uses, by its king's
    /// square ([`KingBuckets::NONE`] for one set).
    pub king_buckets: KingBuckets,
    /// `768 * K * H` for `K` king buckets, feature-major: feature `f`'s weight to neuron `j`
    /// at `f * H + j`.
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

/// An evaluation network (format version 1; 2 with output buckets; 3 with king buckets too),
/// validated and ready to evaluate.
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
///   with wrapping addition, for each perspective; the features are in the perspective's
///   king bucket ([`KingBuckets`], one bucket before version 3).
/// * The output bucket `b` = [`output_bucket`]`(pieces on the board, buckets)` (always 0 with
///   one bucket).
/// * For each of the `2H` values `a` of `acc_stm ++ acc_nstm` with its output weight `w` of
///   bucket `b`: `c = clamp(a as i32, 0, qa)`, `sum = sum + (c * w) * c` in `i32`, wrapping.
/// * `eval = (sum / qa + out_biases[b]) * (scale / g) / (qa * qb / g)` in `i32`, wrapping
///   multiplication and addition, division truncating toward zero, with
///   `g = gcd(scale, qa * qb)`; centipawns for the side to move. This is
///   `(sum / qa + out_biases[b]) * scale / (qa * qb)` with the fraction reduced (by 3 for
///   the default 381 / (255 * 64), so the factor is 127 / 5440), which gives the same result
///   whenever that product fits an `i32` and leaves the output layer `g` times the room
///   (see [`Network::output_ratio`]).
///
/// ```
/// use chess_nn::Network;
/// use chess_rules::Position;
/// let net = Network::default_network();
/// // About even: the side to move's edge (26 cp with the default network `chnn-7e616c9c4844`).
/// assert!(net.evaluate(&Position::startpos()).abs() < 100);
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
    king_buckets: KingBuckets,
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
            && self.king_buckets == other.king_buckets
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
            .field("king_buckets", &self.king_buckets.count())
            .field("simd", &self.simd)
            .finish_non_exhaustive()
    }
}

pub(crate) fn check_hidden(hidden: u64) -> Result<usize, NetworkError> {
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

pub(crate) fn check_buckets(buckets: u64) -> Result<usize, NetworkError> {
    if (1..=MAX_BUCKETS as u64).contains(&buckets) {
        Ok(buckets as usize)
    } else {
        Err(NetworkError::BadBuckets {
            max: MAX_BUCKETS as u32,
            found: u32::try_from(buckets).unwrap_or(u32::MAX),
        })
    }
}

pub(crate) fn check_quant(name: &'static str, v: i64) -> Result<i32, NetworkError> {
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
        let inputs = parts.king_buckets.inputs();
        for (part, found, expected) in [
            ("ft_weights", parts.ft_weights.len(), inputs * hidden),
            ("ft_biases", parts.ft_biases.len(), hidden),
            ("out_weights", parts.out_weights.len(), buckets * 2 * hidden),
            ("out_biases", parts.out_biases.len(), buckets),
        ] {
            if found != expected {
                return Err(NetworkError::BadParts {
                    part,
                    hidden,
                    buckets,
                    king_buckets: parts.king_buckets.count(),
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
            king_buckets: parts.king_buckets,
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
            king_buckets: self.king_buckets,
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
    /// // The default network's SCALE was matched to its predecessor's evaluations (trained
    /// // at 400, matched at 381).
    /// assert_eq!((net.scale(), net.qa() * net.qb()), (381, 255 * 64));
    /// // 381 / 16320 reduced: both are multiples of 3.
    /// assert_eq!(net.output_ratio(), (127, 5440));
    /// ```
    #[inline]
    pub fn output_ratio(&self) -> (i32, i32) {
        self.output_ratio
    }

    /// The input layout: which set of 768 features each perspective uses.
    #[inline]
    pub fn king_buckets(&self) -> &KingBuckets {
        &self.king_buckets
    }

    /// Inputs per perspective: `768 * K` for `K` king buckets.
    #[inline]
    pub fn inputs(&self) -> usize {
        self.king_buckets.inputs()
    }

    /// `768 * K * H`, feature-major.
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
