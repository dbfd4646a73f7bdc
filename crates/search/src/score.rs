//! Scores: the search's internal integer scale, mate encoding and the win/draw/loss model, and
//! the middlegame/endgame pair [`S`] that the evaluation and its parameters are written in.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// The deepest ply the search reaches (extensions included).
pub const MAX_PLY: usize = 128;

/// Larger than any score.
pub(crate) const INFINITE: i32 = 32_001;
/// Mate at the root; a mate `n` plies away scores `MATE - n`.
pub(crate) const MATE: i32 = 32_000;
/// Scores at or above this are mates.
pub(crate) const MATE_IN_MAX: i32 = MATE - MAX_PLY as i32;
/// A position the endgame tables call won, `ply` plies from the root, scores `TB_WIN - ply`:
/// below every mate the search proves and above every evaluation (evaluators clamp to
/// ±20,000), so a proven mate is still preferred and no evaluation outranks a table win.
pub(crate) const TB_WIN: i32 = MATE_IN_MAX - 1;
/// Scores at or above this are table wins or mates ("decisive").
pub(crate) const TB_WIN_IN_MAX: i32 = TB_WIN - MAX_PLY as i32;
/// What a table win (not yet a mate the search has seen) is reported as, less its distance
/// from the root in plies: a centipawn score above any evaluation, as other engines show it.
const TB_WIN_CP: i32 = 25_000;
const _: () = assert!(TB_WIN_IN_MAX > 20_000 && TB_WIN_CP - (MAX_PLY as i32) > 20_000);
/// "No static evaluation" (in check); outside every real score and storable as `i16`.
pub(crate) const NO_EVAL: i32 = i16::MIN as i32;
pub(crate) const DRAW: i32 = 0;

/// The score of being mated `ply` plies from the root.
#[inline]
pub(crate) const fn mated_in(ply: usize) -> i32 {
    -MATE + ply as i32
}

/// The score of mating `ply` plies from the root.
#[inline]
pub(crate) const fn mate_in(ply: usize) -> i32 {
    MATE - ply as i32
}

/// A score for the outside world, from the side to move's point of view.
///
/// ```
/// use chess_search::Score;
/// assert_eq!(Score::Cp(35).to_string(), "cp 35");
/// assert_eq!(Score::Mate(-2).to_string(), "mate -2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (not plies); negative when the side to move is being mated.
    Mate(i32),
}

impl Score {
    /// Converts an internal search score. A table win or loss found inside the search (not a
    /// mate it has seen) becomes a centipawn score of ±(25,000 less its distance in plies).
    pub fn from_internal(v: i32) -> Score {
        if v >= MATE_IN_MAX {
            Score::Mate((MATE - v + 1) / 2)
        } else if v <= -MATE_IN_MAX {
            Score::Mate(-(MATE + v) / 2)
        } else if v >= TB_WIN_IN_MAX {
            Score::Cp(TB_WIN_CP - (TB_WIN - v))
        } else if v <= -TB_WIN_IN_MAX {
            Score::Cp(-TB_WIN_CP + (TB_WIN + v))
        } else {
            Score::Cp(v)
        }
    }

    /// Win, draw and loss chances in per mille, from a logistic model of the score.
    ///
    /// The model: `win = 1 / (1 + exp((A - cp) / B))`, `loss = 1 / (1 + exp((A + cp) / B))`,
    /// `draw = 1 - win - loss`, with `A = 150` (the advantage at which a win is as likely as
    /// not) and `B = 60` (how quickly the chances change). At 0 cp that gives 76/848/76; at
    /// +150 cp 500/493/7; at +300 cp 924/75/1. Mates are certain results.
    ///
    /// ```
    /// use chess_search::Score;
    /// let (w, d, l) = Score::Cp(0).wdl();
    /// assert_eq!(w, l);
    /// assert_eq!(w + d + l, 1000);
    /// assert_eq!(Score::Mate(3).wdl(), (1000, 0, 0));
    /// ```
    pub fn wdl(self) -> (u32, u32, u32) {
        const A: f64 = 150.0;
        const B: f64 = 60.0;
        match self {
            Score::Mate(n) if n > 0 => (1000, 0, 0),
            Score::Mate(_) => (0, 0, 1000),
            Score::Cp(cp) => {
                let cp = f64::from(cp);
                let win = (1000.0 / (1.0 + ((A - cp) / B).exp())).round() as u32;
                let loss = (1000.0 / (1.0 + ((A + cp) / B).exp())).round() as u32;
                let loss = loss.min(1000 - win);
                (win, 1000 - win - loss, loss)
            }
        }
    }
}

/// UCI form: `cp 35`, `mate -2`.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

/// A middlegame/endgame pair of scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct S {
    pub mg: i32,
    pub eg: i32,
}

impl S {
    pub const ZERO: S = S { mg: 0, eg: 0 };

    pub const fn new(mg: i32, eg: i32) -> S {
        S { mg, eg }
    }
}

impl Add for S {
    type Output = S;
    #[inline]
    fn add(self, o: S) -> S {
        S::new(self.mg + o.mg, self.eg + o.eg)
    }
}

impl Sub for S {
    type Output = S;
    #[inline]
    fn sub(self, o: S) -> S {
        S::new(self.mg - o.mg, self.eg - o.eg)
    }
}

impl AddAssign for S {
    #[inline]
    fn add_assign(&mut self, o: S) {
        *self = *self + o;
    }
}

impl SubAssign for S {
    #[inline]
    fn sub_assign(&mut self, o: S) {
        *self = *self - o;
    }
}

impl Neg for S {
    type Output = S;
    #[inline]
    fn neg(self) -> S {
        S::new(-self.mg, -self.eg)
    }
}

impl Mul<i32> for S {
    type Output = S;
    #[inline]
    fn mul(self, k: i32) -> S {
        S::new(self.mg * k, self.eg * k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_convert_to_moves() {
        assert_eq!(Score::from_internal(mate_in(1)), Score::Mate(1));
        assert_eq!(Score::from_internal(mate_in(3)), Score::Mate(2));
        assert_eq!(Score::from_internal(mated_in(0)), Score::Mate(0));
        assert_eq!(Score::from_internal(mated_in(2)), Score::Mate(-1));
        assert_eq!(Score::from_internal(mated_in(4)), Score::Mate(-2));
        assert_eq!(Score::from_internal(123), Score::Cp(123));
    }

    #[test]
    fn table_wins_rank_between_evaluations_and_mates() {
        assert!(TB_WIN - (MAX_PLY as i32) < mate_in(MAX_PLY));
        assert_eq!(Score::from_internal(TB_WIN - 3), Score::Cp(24_997));
        assert_eq!(Score::from_internal(-TB_WIN + 4), Score::Cp(-24_996));
        assert_eq!(Score::from_internal(20_000), Score::Cp(20_000));
    }

    #[test]
    fn wdl_is_symmetric_and_monotonic() {
        let mut last = 0;
        for cp in (-600..=600).step_by(25) {
            let (w, d, l) = Score::Cp(cp).wdl();
            assert_eq!(w + d + l, 1000);
            let (w2, _, l2) = Score::Cp(-cp).wdl();
            assert_eq!((w, l), (l2, w2));
            assert!(w >= last);
            last = w;
        }
    }
}
