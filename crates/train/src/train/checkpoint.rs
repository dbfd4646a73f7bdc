//! Checkpoints: the trainer's whole state (weights, Adam's moments and step, epochs done) in a
//! file, written after each epoch and read to resume.

use std::path::Path;

use chess_nn::{INPUTS, KingBuckets, MAX_BUCKETS, MAX_HIDDEN};

use super::factor::Factor;
use super::model::FloatNet;
use super::optimiser::{Adam, Trainer};
use crate::Error;

const CKPT_MAGIC: [u8; 4] = *b"CHTC";
/// Version 2 adds the output bucket count, version 3 the king-bucket map, version 4 the
/// moments of the king buckets' shared factor; versions 1 (one output bucket), 2 (no king
/// buckets) and 3 (no factor) are still read and still written for such runs.
const CKPT_VERSION: u32 = 4;

impl Trainer {
    /// Checkpoint file: `CHTC`, version u32 (2, 3 with king buckets, 4 with their shared
    /// factor), hidden u32, output buckets u32, (versions 3 and 4) the 64 bytes of the
    /// king-bucket map, epochs done u32, Adam step u64, then the weights, Adam's first and
    /// second moments (each `ft_w, ft_b, out_w, out_b`), (version 4) the factor's first and
    /// second moments (`768 * H` each), all as little-endian f32. (Version 1 had no bucket
    /// count: one.)
    pub fn to_bytes(&self) -> Vec<u8> {
        let kb = self.net.king_buckets;
        let version: u32 = if self.adam.factor.is_some() {
            4
        } else if kb == KingBuckets::NONE {
            2
        } else {
            3
        };
        let mut out = CKPT_MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&(self.net.hidden as u32).to_le_bytes());
        out.extend_from_slice(&(self.net.buckets as u32).to_le_bytes());
        if version >= 3 {
            out.extend_from_slice(kb.map());
        }
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.adam.step.to_le_bytes());
        let nets = [&self.net, &self.adam.m, &self.adam.v].map(FloatNet::arrays);
        let factor = self.adam.factor.iter().flat_map(|f| [&f.m[..], &f.v[..]]);
        for arr in nets.into_iter().flatten().chain(factor) {
            arr.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
        out
    }

    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Trainer, Error> {
        let bad = |what: String| Error::Format {
            path: path.to_owned(),
            what,
        };
        if bytes.len() < 24 || bytes[..4] != CKPT_MAGIC {
            return Err(bad("not a chess-train checkpoint".into()));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let version = u32_at(4);
        if !(1..=CKPT_VERSION).contains(&version) {
            return Err(bad(format!(
                "checkpoint version {version}, expected 1 to {CKPT_VERSION}"
            )));
        }
        let hidden = (u32_at(8) as usize).min(MAX_HIDDEN);
        // Version 2 has the bucket count after the hidden size, version 3 the king-bucket
        // map after that.
        let (buckets, mut at) = if version == 1 {
            (1, 12)
        } else if bytes.len() < 28 {
            return Err(bad("checkpoint header cut short".into()));
        } else {
            ((u32_at(12) as usize).clamp(1, MAX_BUCKETS), 16)
        };
        let king_buckets = if version < 3 {
            KingBuckets::NONE
        } else if bytes.len() < at + 64 + 12 {
            return Err(bad("checkpoint header cut short".into()));
        } else {
            let map: [u8; 64] = bytes[at..at + 64].try_into().unwrap();
            at += 64;
            KingBuckets::from_map(map).map_err(|e| bad(format!("checkpoint: {e}")))?
        };
        let epoch = u32_at(at);
        let step = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap());
        let start = at + 12;
        let inputs = king_buckets.inputs();
        let per_net = inputs * hidden + hidden + buckets * (2 * hidden + 1);
        let factor_rows = if version == 4 { INPUTS * hidden } else { 0 };
        let expected = start + 3 * 4 * per_net + 2 * 4 * factor_rows;
        if bytes.len() != expected {
            return Err(bad(format!(
                "checkpoint of {} bytes, expected {expected} for hidden size {hidden}, {buckets} output buckets and {} king buckets{}",
                bytes.len(),
                king_buckets.count(),
                if version == 4 {
                    " with a shared factor"
                } else {
                    ""
                }
            )));
        }
        let mut floats = bytes[start..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()));
        let mut take = |n: usize| floats.by_ref().take(n).collect::<Vec<f32>>();
        let mut nets = Vec::new();
        for _ in 0..3 {
            nets.push(FloatNet {
                hidden,
                buckets,
                king_buckets,
                ft_w: take(inputs * hidden),
                ft_b: take(hidden),
                out_w: take(buckets * 2 * hidden),
                out_b: take(buckets),
            });
        }
        let factor = (version == 4).then(|| {
            let m = take(factor_rows);
            Factor::with_moments(m, take(factor_rows))
        });
        let v = nets.pop().unwrap();
        let m = nets.pop().unwrap();
        let net = nets.pop().unwrap();
        Ok(Trainer {
            net,
            adam: Adam { m, v, step, factor },
            epoch,
        })
    }
}

/// Reads the checkpoint at `path`.
pub(super) fn load(path: &Path) -> Result<Trainer, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    Trainer::from_bytes(path, &bytes)
}

/// Writes `trainer` to `path`.
pub(super) fn save(path: &Path, trainer: &Trainer) -> Result<(), Error> {
    // Write beside and rename, so an interruption never leaves half a checkpoint.
    let tmp = path.with_extension("tmp");
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&tmp, trainer.to_bytes()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_round_trip() {
        let four: KingBuckets = "00011222/3".parse().unwrap();
        for (buckets, kb, factorised, version) in [
            (1, KingBuckets::NONE, false, 2),
            (8, KingBuckets::NONE, false, 2),
            (8, four, false, 3),
            (8, four, true, 4),
        ] {
            let mut t = Trainer::new(16, buckets, kb, 1);
            if factorised {
                t.factorise();
                let factor = t.adam.factor.as_mut().unwrap();
                (factor.m[3], factor.v[16 * 768 - 1]) = (0.25, 0.125);
            }
            t.adam.step = 7;
            t.adam.m.ft_w[5] = 0.5;
            let bytes = t.to_bytes();
            assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), version);
            let back = Trainer::from_bytes(Path::new("c"), &bytes).unwrap();
            assert_eq!(back.net, t.net);
            assert_eq!(back.net.king_buckets, kb);
            assert_eq!((back.epoch, back.adam.step), (t.epoch, 7));
            assert_eq!(back.adam.m, t.adam.m);
            assert_eq!(back.adam.factor, t.adam.factor);
            if factorised {
                // Cut short by one float: refused, saying what it expected.
                let e = Trainer::from_bytes(Path::new("c"), &bytes[..bytes.len() - 4])
                    .unwrap_err()
                    .to_string();
                assert!(e.contains("4 king buckets with a shared factor"), "{e}");
            }
        }
        // A version-3 checkpoint whose map leaves a bucket out is refused.
        let mut bytes = Trainer::new(16, 1, four, 1).to_bytes();
        bytes[16 + 9] = 7;
        let e = Trainer::from_bytes(Path::new("c"), &bytes).unwrap_err();
        assert!(
            e.to_string().contains("king bucket 4 is on no square"),
            "{e}"
        );
    }

    /// A version-1 checkpoint (no bucket count, one bucket) still resumes.
    #[test]
    fn version_one_checkpoints_are_read() {
        let t = Trainer::new(16, 1, KingBuckets::NONE, 1);
        let v2 = t.to_bytes();
        let mut v1 = v2[..4].to_vec();
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&v2[8..12]);
        v1.extend_from_slice(&v2[16..]);
        let back = Trainer::from_bytes(Path::new("c"), &v1).unwrap();
        assert_eq!(back.net, t.net);
        let e = Trainer::from_bytes(Path::new("c"), &v1[..v1.len() - 4]).unwrap_err();
        assert!(
            e.to_string()
                .contains("for hidden size 16, 1 output buckets and 1 king buckets"),
            "{e}"
        );
    }
}
