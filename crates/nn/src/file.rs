//! The network's file: its bytes (format versions 1 to 3), their reading and checks, loading
//! and saving, and the name a file goes by (its content hash).

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::NetworkError;
use crate::king_buckets::KingBuckets;
use crate::network::{Network, NetworkParts, check_buckets, check_hidden, check_quant};
use crate::{FORMAT_VERSION, INPUTS, MAGIC};

/// Bytes of a version-1 header: magic, then six `u32` (version, inputs, hidden, qa, qb,
/// scale). A version-2 header has one `u32` more, the output bucket count; a version-3
/// header has the 64 bytes of its king-bucket map after that.
pub const HEADER_BYTES: usize = 4 + 6 * 4;
/// Bytes of the longest header (version 3).
const MAX_HEADER_BYTES: usize = HEADER_BYTES + 4 + 64;
/// Bytes of the trailing checksum.
pub const CHECKSUM_BYTES: usize = 8;

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

/// The format version [`Network::to_bytes`] writes: 1 for one output bucket and no king
/// buckets, 2 for output buckets, 3 for king buckets.
const fn version_for(buckets: usize, king_buckets: usize) -> u32 {
    if king_buckets > 1 {
        3
    } else if buckets > 1 {
        2
    } else {
        1
    }
}

/// The header's length in a file of `version`.
const fn header_len(version: u32) -> usize {
    match version {
        1 => HEADER_BYTES,
        2 => HEADER_BYTES + 4,
        _ => MAX_HEADER_BYTES,
    }
}

/// The bytes after the header: weights, biases and the checksum.
const fn body_len(hidden: usize, buckets: usize, king_buckets: usize) -> usize {
    2 * (king_buckets * INPUTS * hidden + hidden + buckets * 2 * hidden)
        + 4 * buckets
        + CHECKSUM_BYTES
}

/// The size in bytes of the file [`Network::to_bytes`] writes for hidden size `hidden`,
/// `buckets` output buckets and `king_buckets` sets of input features (version 1 when both
/// are 1, version 2 with output buckets only, else version 3).
pub const fn file_len(hidden: usize, buckets: usize, king_buckets: usize) -> usize {
    header_len(version_for(buckets, king_buckets)) + body_len(hidden, buckets, king_buckets)
}

/// The header fields a file's length depends on, checked.
struct Header {
    hidden: usize,
    qa: i32,
    qb: i32,
    scale: i32,
    buckets: usize,
    king_buckets: KingBuckets,
    /// Bytes of the header: 28 in version 1, 32 in version 2, 96 in version 3.
    len: usize,
}

impl Header {
    /// The length the whole file must have, checked against the `found` one.
    fn check_len(&self, found: usize) -> Result<usize, NetworkError> {
        let expected = self.len + body_len(self.hidden, self.buckets, self.king_buckets.count());
        if found == expected {
            Ok(expected)
        } else {
            Err(NetworkError::BadLength {
                hidden: self.hidden as u32,
                buckets: self.buckets as u32,
                king_buckets: self.king_buckets.count() as u32,
                expected,
                found,
            })
        }
    }

    /// Checks the first bytes of a file: length, magic, version, hidden size, quantisation,
    /// (versions 2 and 3) output buckets, (version 3) the king-bucket map, and the inputs the
    /// map implies, in that order.
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
        let king_buckets = if version < 3 {
            KingBuckets::NONE
        } else {
            let min = MAX_HEADER_BYTES + CHECKSUM_BYTES;
            if bytes.len() < min {
                return Err(NetworkError::TooShort {
                    min,
                    found: bytes.len(),
                });
            }
            let map: [u8; 64] = bytes[r.at..r.at + 64].try_into().unwrap();
            r.at += 64;
            KingBuckets::from_map(map).map_err(NetworkError::KingBuckets)?
        };
        if inputs as usize != king_buckets.inputs() {
            return Err(NetworkError::BadInputs {
                expected: king_buckets.inputs() as u32,
                found: inputs,
            });
        }
        debug_assert_eq!(r.at, header_len(version));
        Ok(Header {
            hidden,
            qa,
            qb,
            scale,
            buckets,
            king_buckets,
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

impl Network {
    /// The file's bytes (little-endian): version 1 for a network of one output bucket and no
    /// king buckets, so that such a network keeps its file and its name; version 2 for
    /// output buckets; version 3 for king buckets.
    ///
    /// ```text
    /// offset  size        field
    ///      0  4           magic "CHNN"
    ///      4  4           u32 version (1, 2 or 3)
    ///      8  4           u32 inputs = 768 * K (K king buckets, 1 before version 3)
    ///     12  4           u32 hidden H
    ///     16  4           u32 qa
    ///     20  4           u32 qb
    ///     24  4           u32 scale
    ///    (28  4           u32 buckets B, versions 2 and 3; B = 1 in version 1)
    ///    (32  64          u8 king bucket of each relative king square, a1..h8, version 3)
    ///         2*768*K*H   i16 ft_weights, feature-major
    ///         2*H         i16 ft_biases
    ///         2*B*2H      i16 out_weights, bucket-major (each: side to move's H, the other's H)
    ///         4*B         i32 out_biases
    ///         8           u64 FNV-1a 64 of every byte before it
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let kb = self.king_buckets().count();
        let mut b = Vec::with_capacity(file_len(self.hidden(), self.buckets(), kb));
        b.extend_from_slice(&MAGIC);
        let version = version_for(self.buckets(), kb);
        for v in [
            version,
            self.inputs() as u32,
            self.hidden() as u32,
            self.qa() as u32,
            self.qb() as u32,
            self.scale() as u32,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        if version != 1 {
            b.extend_from_slice(&(self.buckets() as u32).to_le_bytes());
        }
        if version == 3 {
            b.extend_from_slice(self.king_buckets().map());
        }
        for part in [self.ft_weights(), self.ft_biases(), self.out_weights()] {
            for v in part.iter() {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        for v in self.out_biases() {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sum = fnv1a64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(b.len(), file_len(self.hidden(), self.buckets(), kb));
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
        let ft_weights = r.i16s(header.king_buckets.inputs() * hidden);
        let ft_biases = r.i16s(hidden);
        let out_weights = r.i16s(buckets * 2 * hidden);
        let out_biases = r.i32s(buckets);
        Network::from_parts(NetworkParts {
            hidden,
            qa: header.qa,
            qb: header.qb,
            scale: header.scale,
            king_buckets: header.king_buckets,
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
    /// [`file_len`]`(`[`MAX_HIDDEN`]`, `[`MAX_BUCKETS`]`, `[`crate::MAX_KING_BUCKETS`]`)` bytes.
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
        // Enough for the longest header; every valid file is longer.
        let head = (MAX_HEADER_BYTES + CHECKSUM_BYTES) as u64;
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
}
