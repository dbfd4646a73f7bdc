//! King buckets: which of a network's sets of 768 input features each side uses, chosen by
//! its own king's square (format version 3), and the map's text form.

use std::fmt;

use chess_rules::{Color, Position, Square};

use crate::error::FeatureError;
use crate::{INPUTS, MAX_KING_BUCKETS};

/// Which of a network's sets of 768 input features each perspective uses: one per square of
/// that perspective's own king, squares seen from the perspective (a1 = 0 .. h8 = 63 for
/// white, flipped vertically for black, as the features are). [`KingBuckets::NONE`], one set
/// for every square, is the layout of format versions 1 and 2.
///
/// A map is written (and parsed) as 64 bucket symbols, `0`-`9` then `a`-`v`, rank by rank
/// from the perspective's own back rank (a1 to h1, then a2 to h2, ...), with `/` between
/// ranks; a rank of one symbol puts its eight squares in that bucket, and fewer than eight
/// ranks repeat the last one given. Every bucket from 0 to the largest must be used.
///
/// ```
/// use chess_nn::KingBuckets;
/// use chess_rules::{Color, Square};
/// // Four buckets: the back rank split a-c, d-e, f-h; any square further up.
/// let kb: KingBuckets = "00011222/3".parse().unwrap();
/// assert_eq!(kb.count(), 4);
/// assert_eq!(kb.bucket(Color::White, Square::G1), 2);
/// assert_eq!(kb.bucket(Color::Black, Square::G8), 2); // g8 is black's g1
/// assert_eq!(kb.bucket(Color::White, Square::G8), 3);
/// assert_eq!(kb.to_string(), "00011222/33333333/33333333/33333333/33333333/33333333/33333333/33333333");
/// assert!("00000002".parse::<KingBuckets>().is_err()); // buckets 1 unused
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KingBuckets {
    map: [u8; 64],
    count: u8,
}

impl Default for KingBuckets {
    fn default() -> Self {
        KingBuckets::NONE
    }
}

impl KingBuckets {
    /// One set of features whatever the king's square.
    pub const NONE: KingBuckets = KingBuckets {
        map: [0; 64],
        count: 1,
    };

    /// The layout of `map` (bucket per relative king square); every bucket from 0 to the
    /// largest must appear, and there may be at most [`MAX_KING_BUCKETS`].
    pub fn from_map(map: [u8; 64]) -> Result<KingBuckets, FeatureError> {
        let count = usize::from(*map.iter().max().unwrap_or(&0)) + 1;
        if count > MAX_KING_BUCKETS {
            return Err(FeatureError::KingBuckets(format!(
                "{count} king buckets, at most {MAX_KING_BUCKETS} are allowed"
            )));
        }
        if let Some(missing) = (0..count as u8).find(|b| !map.contains(b)) {
            return Err(FeatureError::KingBuckets(format!(
                "king bucket {missing} is on no square (buckets 0 to {} must all be used)",
                count - 1
            )));
        }
        Ok(KingBuckets {
            map,
            count: count as u8,
        })
    }

    /// Number of buckets (sets of 768 features).
    #[inline]
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    /// The bucket of each relative king square.
    pub fn map(&self) -> &[u8; 64] {
        &self.map
    }

    /// Inputs per perspective: `768 * count`.
    #[inline]
    pub fn inputs(&self) -> usize {
        INPUTS * self.count()
    }

    /// The bucket `perspective` uses with its king on `king`.
    #[inline]
    pub fn bucket(&self, perspective: Color, king: Square) -> usize {
        let rel = match perspective {
            Color::White => king.index(),
            Color::Black => king.index() ^ 56,
        };
        usize::from(self.map[rel])
    }

    /// The first feature index of `perspective`'s set with its king on `king`.
    #[inline]
    pub fn offset(&self, perspective: Color, king: Square) -> u16 {
        (self.bucket(perspective, king) * INPUTS) as u16
    }

    /// The offset `perspective` uses in `pos`.
    #[inline]
    pub fn offset_in(&self, pos: &Position, perspective: Color) -> u16 {
        if self.count == 1 {
            return 0;
        }
        self.offset(perspective, pos.king_of(perspective))
    }

    /// Whether `perspective`'s king going from `from` to `to` changes its bucket (so its
    /// accumulator must be refreshed rather than updated).
    #[inline]
    pub fn changes(&self, perspective: Color, from: Square, to: Square) -> bool {
        self.count != 1 && self.bucket(perspective, from) != self.bucket(perspective, to)
    }
}

impl std::str::FromStr for KingBuckets {
    type Err = FeatureError;

    fn from_str(s: &str) -> Result<KingBuckets, FeatureError> {
        let bad = |why: String| FeatureError::KingBuckets(why);
        let ranks: Vec<&str> = s.trim().split('/').collect();
        if ranks.len() > 8 {
            return Err(bad(format!("{} ranks, at most 8", ranks.len())));
        }
        let mut map = [0u8; 64];
        for r in 0..8 {
            let rank = ranks[r.min(ranks.len() - 1)];
            let mut symbols: Vec<char> = rank.chars().collect();
            if symbols.len() == 1 {
                symbols = vec![symbols[0]; 8];
            }
            if symbols.len() != 8 {
                return Err(bad(format!(
                    "rank {} {:?} has {} symbols, 8 (or 1 for the whole rank) are needed",
                    r + 1,
                    crate::error::cut(rank),
                    symbols.len()
                )));
            }
            for (file, c) in symbols.into_iter().enumerate() {
                let b = c
                    .to_digit(32)
                    .filter(|_| !c.is_ascii_uppercase())
                    .ok_or_else(|| {
                        bad(format!(
                            "{c:?} in rank {} is not a bucket (0-9, a-v)",
                            r + 1
                        ))
                    })?;
                map[8 * r + file] = b as u8;
            }
        }
        KingBuckets::from_map(map)
    }
}

impl fmt::Display for KingBuckets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in 0..8 {
            if r > 0 {
                f.write_str("/")?;
            }
            for &b in &self.map[8 * r..8 * r + 8] {
                let c = char::from_digit(u32::from(b), 32).unwrap_or('?');
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for KingBuckets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KingBuckets({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::active_features;

    #[test]
    fn king_bucket_maps_parse_and_print() {
        let kb: KingBuckets = "01234567/89abcdef/ghijklmn/opqrstuv/0".parse().unwrap();
        assert_eq!(kb.count(), 32);
        assert_eq!(kb.to_string().parse::<KingBuckets>().unwrap(), kb);
        assert_eq!(kb.bucket(Color::White, Square::H4), 31);
        assert_eq!(kb.bucket(Color::White, Square::B4), 25);
        assert_eq!(kb.bucket(Color::Black, Square::B5), 25);
        assert_eq!(kb.bucket(Color::Black, Square::H8), 7);
        assert_eq!(kb.inputs(), 32 * 768);
        // Every relative square maps as written, for both sides.
        for sq in Square::ALL {
            assert_eq!(
                kb.bucket(Color::Black, sq),
                kb.bucket(Color::White, Square::new((sq.index() ^ 56) as u32))
            );
        }
        assert_eq!("0".parse::<KingBuckets>().unwrap(), KingBuckets::NONE);
        let err = |s: &str| s.parse::<KingBuckets>().unwrap_err().to_string();
        assert_eq!(
            err("0000000A"),
            "bad king-bucket map: 'A' in rank 1 is not a bucket (0-9, a-v)"
        );
        assert_eq!(
            err("0000000w"),
            "bad king-bucket map: 'w' in rank 1 is not a bucket (0-9, a-v)"
        );
        assert_eq!(
            err("0/0/0/0/0/0/0/0/0"),
            "bad king-bucket map: 9 ranks, at most 8"
        );
        assert_eq!(
            err("0/00"),
            "bad king-bucket map: rank 2 \"00\" has 2 symbols, 8 (or 1 for the whole rank) are needed"
        );
        assert!(err(&"0".repeat(500)).len() < 150);
        assert_eq!(
            err("1"),
            "bad king-bucket map: king bucket 0 is on no square (buckets 0 to 1 must all be used)"
        );
    }

    #[test]
    fn bucketed_features_add_the_kings_offset() {
        let kb: KingBuckets = "00001111/2".parse().unwrap();
        // White's king on e1 (bucket 1), black's on e8, which black sees as e1 (bucket 1).
        let pos = Position::startpos();
        for p in Color::ALL {
            let plain = active_features(&pos, p);
            let bucketed = kb.active_features(&pos, p);
            assert_eq!(bucketed, plain.iter().map(|f| f + 768).collect::<Vec<_>>());
        }
        let pos = Position::from_fen("8/8/8/8/4k3/8/8/K7 w - - 0 1").unwrap();
        assert_eq!(kb.offset_in(&pos, Color::White), 0);
        assert_eq!(kb.offset_in(&pos, Color::Black), 2 * 768);
        assert_eq!(KingBuckets::NONE.offset_in(&pos, Color::Black), 0);
    }
}
