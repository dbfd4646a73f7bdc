//! Checkpoints: the trainer's whole state (weights, Adam's moments and step, epochs done) and
//! the run's settings in a file, written after each epoch and read to resume.

use std::path::Path;

use chess_nn::{INPUTS, KingBuckets, MAX_BUCKETS, MAX_HIDDEN};

use super::factor::Factor;
use super::model::FloatNet;
use super::optimiser::{Adam, Trainer};
use super::settings::RunSettings;
use crate::Error;

const CKPT_MAGIC: [u8; 4] = *b"CHTC";
/// Version 2 adds the output bucket count, version 3 the king-bucket map, version 4 the
/// moments of the king buckets' shared factor, version 5 the run's settings (and a flags
/// word for the two optional parts); versions 1 (one output bucket) to 4 are still read.
const CKPT_VERSION: u32 = 5;
/// Version 5's flags: the king-bucket map follows; the factor's moments follow the weights.
const HAS_KING_MAP: u32 = 1;
const HAS_FACTOR: u32 = 2;
/// The longest settings text read back.
const MAX_SETTINGS: usize = 4096;

/// What a checkpoint file holds.
pub(super) struct Checkpoint {
    pub trainer: Trainer,
    /// The settings of the run that wrote it (none before version 5).
    pub settings: Option<RunSettings>,
    pub version: u32,
}

impl Trainer {
    /// Checkpoint file (version 5): `CHTC`, version u32, hidden u32, output buckets u32, flags
    /// u32 ([`HAS_KING_MAP`], [`HAS_FACTOR`]), the 64 bytes of the king-bucket map when
    /// flagged, the length u32 and UTF-8 text of `settings` (a `--flag value` line each),
    /// epochs done u32, Adam step u64, then the weights, Adam's first and second moments
    /// (each `ft_w, ft_b, out_w, out_b`), the factor's first and second moments (`768 * H`
    /// each) when flagged, all as little-endian f32. (Versions 2-4 had no flags and no
    /// settings, the map from version 3, the factor in version 4; version 1 no bucket count.)
    pub(super) fn to_bytes(&self, settings: &RunSettings) -> Vec<u8> {
        let kb = self.net.king_buckets;
        let mut flags = 0;
        if kb != KingBuckets::NONE {
            flags |= HAS_KING_MAP;
        }
        if self.adam.factor.is_some() {
            flags |= HAS_FACTOR;
        }
        let mut out = CKPT_MAGIC.to_vec();
        for word in [
            CKPT_VERSION,
            self.net.hidden as u32,
            self.net.buckets as u32,
            flags,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        if flags & HAS_KING_MAP != 0 {
            out.extend_from_slice(kb.map());
        }
        let text = settings.to_text();
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
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
}

/// Reads a checkpoint file's bytes (`path` for the errors).
pub(super) fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Checkpoint, Error> {
    let bad = |what: String| Error::Format {
        path: path.to_owned(),
        what,
    };
    let mut rest = bytes;
    let mut take = |n: usize| -> Result<&[u8], Error> {
        if rest.len() < n {
            return Err(bad("checkpoint header cut short".into()));
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    let word = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap());
    if take(4).ok() != Some(&CKPT_MAGIC[..]) {
        return Err(bad("not a chess-train checkpoint".into()));
    }
    let version = word(take(4)?);
    if !(1..=CKPT_VERSION).contains(&version) {
        return Err(bad(format!(
            "checkpoint version {version}, expected 1 to {CKPT_VERSION}"
        )));
    }
    let hidden = (word(take(4)?) as usize).min(MAX_HIDDEN);
    let buckets = if version == 1 {
        1
    } else {
        (word(take(4)?) as usize).clamp(1, MAX_BUCKETS)
    };
    let flags = match version {
        5 => word(take(4)?),
        4 => HAS_KING_MAP | HAS_FACTOR,
        3 => HAS_KING_MAP,
        _ => 0,
    };
    if flags & !(HAS_KING_MAP | HAS_FACTOR) != 0 {
        return Err(bad(format!("checkpoint flags {flags:#x} not known")));
    }
    let king_buckets = if flags & HAS_KING_MAP == 0 {
        KingBuckets::NONE
    } else {
        let map: [u8; 64] = take(64)?.try_into().unwrap();
        KingBuckets::from_map(map).map_err(|e| bad(format!("checkpoint: {e}")))?
    };
    let settings = if version == 5 {
        let len = word(take(4)?) as usize;
        if len > MAX_SETTINGS {
            return Err(bad(format!(
                "checkpoint settings of {len} bytes, at most {MAX_SETTINGS}"
            )));
        }
        let text = std::str::from_utf8(take(len)?)
            .map_err(|_| bad("checkpoint settings are not UTF-8".into()))?;
        Some(RunSettings::parse(text).map_err(|e| bad(format!("checkpoint: {e}")))?)
    } else {
        None
    };
    let epoch = word(take(4)?);
    let step = u64::from_le_bytes(take(8)?.try_into().unwrap());
    let inputs = king_buckets.inputs();
    let per_net = inputs * hidden + hidden + buckets * (2 * hidden + 1);
    let has_factor = flags & HAS_FACTOR != 0;
    let factor_rows = if has_factor { INPUTS * hidden } else { 0 };
    let expected = 3 * 4 * per_net + 2 * 4 * factor_rows;
    if rest.len() != expected {
        return Err(bad(format!(
            "checkpoint of {} bytes, expected {} for hidden size {hidden}, {buckets} output buckets and {} king buckets{}",
            bytes.len(),
            bytes.len() - rest.len() + expected,
            king_buckets.count(),
            if has_factor {
                " with a shared factor"
            } else {
                ""
            }
        )));
    }
    let mut floats = rest
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
    let factor = has_factor.then(|| {
        let m = take(factor_rows);
        Factor::with_moments(m, take(factor_rows))
    });
    let v = nets.pop().unwrap();
    let m = nets.pop().unwrap();
    let net = nets.pop().unwrap();
    Ok(Checkpoint {
        trainer: Trainer {
            net,
            adam: Adam { m, v, step, factor },
            epoch,
        },
        settings,
        version,
    })
}

/// Reads the checkpoint at `path`.
pub(super) fn load(path: &Path) -> Result<Checkpoint, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    from_bytes(path, &bytes)
}

/// Writes `trainer` with its run's `settings` to `path`.
pub(super) fn save(path: &Path, trainer: &Trainer, settings: &RunSettings) -> Result<(), Error> {
    // Write beside and rename, so an interruption never leaves half a checkpoint.
    let tmp = path.with_extension("tmp");
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&tmp, trainer.to_bytes(settings)).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RunSettings {
        RunSettings::parse("--wdl 0.1\n--mirror true\n").unwrap()
    }

    #[test]
    fn checkpoint_round_trip() {
        let four: KingBuckets = "00011222/3".parse().unwrap();
        for (buckets, kb, factorised, flags) in [
            (1, KingBuckets::NONE, false, 0),
            (8, KingBuckets::NONE, false, 0),
            (8, four, false, HAS_KING_MAP),
            (8, four, true, HAS_KING_MAP | HAS_FACTOR),
        ] {
            let mut t = Trainer::new(16, buckets, kb, 1);
            if factorised {
                t.factorise();
                let factor = t.adam.factor.as_mut().unwrap();
                (factor.m[3], factor.v[16 * 768 - 1]) = (0.25, 0.125);
            }
            t.adam.step = 7;
            t.adam.m.ft_w[5] = 0.5;
            let bytes = t.to_bytes(&settings());
            assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 5);
            assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), flags);
            let back = from_bytes(Path::new("c"), &bytes).unwrap();
            assert_eq!((back.version, back.settings), (5, Some(settings())));
            let back = back.trainer;
            assert_eq!(back.net, t.net);
            assert_eq!(back.net.king_buckets, kb);
            assert_eq!((back.epoch, back.adam.step), (t.epoch, 7));
            assert_eq!(back.adam.m, t.adam.m);
            assert_eq!(back.adam.factor, t.adam.factor);
            if factorised {
                // Cut short by one float: refused, saying what it expected.
                let e = from_bytes(Path::new("c"), &bytes[..bytes.len() - 4])
                    .err()
                    .unwrap()
                    .to_string();
                assert!(e.contains("4 king buckets with a shared factor"), "{e}");
            }
            // Cut anywhere in the header: refused, never a panic.
            for len in 0..(20 + 64 + 40).min(bytes.len()) {
                assert!(from_bytes(Path::new("c"), &bytes[..len]).is_err(), "{len}");
            }
        }
        // A checkpoint whose map leaves a bucket out is refused.
        let mut bytes = Trainer::new(16, 1, four, 1).to_bytes(&settings());
        bytes[20 + 9] = 7;
        let e = from_bytes(Path::new("c"), &bytes).err().unwrap();
        assert!(
            e.to_string().contains("king bucket 4 is on no square"),
            "{e}"
        );
        // Settings that are not `--flag value` lines are refused.
        let mut bytes = Trainer::new(16, 1, KingBuckets::NONE, 1).to_bytes(&settings());
        bytes[24] = b'x';
        let e = from_bytes(Path::new("c"), &bytes).err().unwrap();
        assert!(e.to_string().contains("is not `--flag value`"), "{e}");
    }

    /// The version before the settings: the header of version 2 (no flags, no settings),
    /// 3 (the map) and 4 (the map and the factor) with version 5's weights.
    fn older(bytes: &[u8], version: u32) -> Vec<u8> {
        let flags = u32::from_le_bytes(bytes[16..20].try_into().unwrap());
        let map = if flags & HAS_KING_MAP != 0 { 64 } else { 0 };
        let len_at = 20 + map;
        let len = u32::from_le_bytes(bytes[len_at..len_at + 4].try_into().unwrap()) as usize;
        let mut out = bytes[..4].to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&bytes[8..16]);
        out.extend_from_slice(&bytes[20..len_at]);
        out.extend_from_slice(&bytes[len_at + 4 + len..]);
        out
    }

    /// Checkpoints of versions 1 to 4 still resume, without settings.
    #[test]
    fn older_checkpoints_are_read() {
        let four: KingBuckets = "00011222/3".parse().unwrap();
        let mut factorised = Trainer::new(16, 8, four, 1);
        factorised.factorise();
        for (t, version) in [
            (Trainer::new(16, 8, KingBuckets::NONE, 1), 2),
            (Trainer::new(16, 8, four, 1), 3),
            (factorised, 4),
        ] {
            let bytes = older(&t.to_bytes(&settings()), version);
            let back = from_bytes(Path::new("c"), &bytes).unwrap();
            assert_eq!((back.version, back.settings), (version, None));
            assert_eq!(back.trainer.net, t.net);
            assert_eq!(back.trainer.adam.factor, t.adam.factor);
        }
        // Version 1 had no bucket count either: one bucket.
        let t = Trainer::new(16, 1, KingBuckets::NONE, 1);
        let v2 = older(&t.to_bytes(&settings()), 2);
        let mut v1 = v2[..4].to_vec();
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&v2[8..12]);
        v1.extend_from_slice(&v2[16..]);
        let back = from_bytes(Path::new("c"), &v1).unwrap();
        assert_eq!(back.trainer.net, t.net);
        let e = from_bytes(Path::new("c"), &v1[..v1.len() - 4])
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("for hidden size 16, 1 output buckets and 1 king buckets"),
            "{e}"
        );
    }
}
