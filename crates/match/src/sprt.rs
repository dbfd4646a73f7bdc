//! The statistics of a match played in game pairs: pentanomial counts, the Elo estimate with its
//! error, and the sequential probability ratio test.
//!
//! Both games of a pair start from the same opening with colours swapped, so a pair's total
//! (0, ½, 1, 1½ or 2 points for the engine under test) is the unit of the statistics: an
//! unbalanced opening then costs no variance. The test is the generalised SPRT in its normal
//! approximation: with `s0` and `s1` the expected scores of the two hypotheses (logistic Elo
//! `elo0` and `elo1`), `N` pairs of mean score `m` (per game, 0 to 1) and variance `v` (of the
//! pair's mean score), the log-likelihood ratio is `N (s1 - s0) (2m - s0 - s1) / (2v)`. It stops
//! when the ratio leaves `[ln(β/(1-α)), ln((1-β)/α)]`: above, H1 (the change gains at least
//! `elo1`) is accepted; below, H0 (it gains at most `elo0`).

use serde::{Deserialize, Serialize};

/// Pairs by the engine under test's points in them: `[0, ½, 1, 1½, 2]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Adds a pair; `half_points` is the engine's points in it, doubled (0 to 4).
    pub fn add(&mut self, half_points: usize) {
        self.0[half_points.min(4)] += 1;
    }

    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Mean score per game (0 to 1) and the variance of one pair's mean score.
    fn moments(&self) -> Option<(f64, f64)> {
        let n = self.pairs() as f64;
        if n == 0.0 {
            return None;
        }
        let score = |i: usize| i as f64 / 4.0;
        let mean = (0..5).map(|i| self.0[i] as f64 * score(i)).sum::<f64>() / n;
        let var = (0..5)
            .map(|i| self.0[i] as f64 * (score(i) - mean).powi(2))
            .sum::<f64>()
            / n;
        Some((mean, var))
    }

    /// The Elo difference and its 95 % interval, from the pairs' mean score and its
    /// standard error. `None` before the first pair.
    pub fn elo(&self) -> Option<(f64, f64, f64)> {
        let (mean, var) = self.moments()?;
        let se = (var / self.pairs() as f64).sqrt();
        Some((
            elo(mean),
            elo(mean - 1.959_964 * se),
            elo(mean + 1.959_964 * se),
        ))
    }
}

/// The logistic Elo difference of a mean score (clamped away from 0 and 1).
pub fn elo(score: f64) -> f64 {
    let s = score.clamp(1e-4, 1.0 - 1e-4);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The expected score of a logistic Elo difference.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The hypotheses and error rates of a test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where a test stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// H1: the engine under test is at least `elo1` stronger.
    H1,
    /// H0: it is at most `elo0` stronger.
    H0,
    Continue,
}

impl Sprt {
    /// Parses `elo0,elo1[,alpha[,beta]]`, e.g. `0,5` or `0,5,0.05,0.05`.
    pub fn parse(text: &str) -> Result<Sprt, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let num = |i: usize, default: f64| -> Result<f64, String> {
            match parts.get(i) {
                None => Ok(default),
                Some(p) => p
                    .parse::<f64>()
                    .map_err(|_| format!("SPRT bound {p:?} in {text:?} is not a number")),
            }
        };
        if parts.len() < 2 || parts.len() > 4 {
            return Err(format!(
                "SPRT {text:?}: expected elo0,elo1[,alpha[,beta]] such as 0,5"
            ));
        }
        let sprt = Sprt {
            elo0: num(0, 0.0)?,
            elo1: num(1, 0.0)?,
            alpha: num(2, 0.05)?,
            beta: num(3, 0.05)?,
        };
        if sprt.elo0.partial_cmp(&sprt.elo1) != Some(std::cmp::Ordering::Less) {
            return Err(format!("SPRT {text:?}: elo0 must be below elo1"));
        }
        for (name, p) in [("alpha", sprt.alpha), ("beta", sprt.beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!("SPRT {text:?}: {name} must be between 0 and 0.5"));
            }
        }
        Ok(sprt)
    }

    /// The lower and upper bounds of the log-likelihood ratio.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 against H0 for these pairs (0 before any variance).
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        let Some((mean, var)) = p.moments() else {
            return 0.0;
        };
        if var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (expected_score(self.elo0), expected_score(self.elo1));
        p.pairs() as f64 * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }

    pub fn decide(&self, p: &Pentanomial) -> Decision {
        let (lo, hi) = self.bounds();
        let llr = self.llr(p);
        if llr >= hi {
            Decision::H1
        } else if llr <= lo {
            Decision::H0
        } else {
            Decision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_the_usual_ones() {
        let s = Sprt::parse("0,5").unwrap();
        let (lo, hi) = s.bounds();
        assert!((lo - -2.944).abs() < 1e-3 && (hi - 2.944).abs() < 1e-3);
        assert!(Sprt::parse("5,0").is_err());
        assert!(Sprt::parse("0").is_err());
        assert!(Sprt::parse("0,5,0.7").is_err());
        assert!(Sprt::parse("0,x").unwrap_err().contains("\"x\""));
    }

    #[test]
    fn elo_of_scores() {
        assert!(elo(0.5).abs() < 1e-9);
        assert!((elo(0.75) - 190.85).abs() < 0.01);
        assert!((expected_score(elo(0.6)) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn a_clearly_better_engine_accepts_h1_and_a_worse_one_h0() {
        let s = Sprt::parse("0,5").unwrap();
        // 60 % per game, spread over the pair outcomes.
        let better = Pentanomial([20, 150, 400, 250, 80]);
        assert_eq!(s.decide(&better), Decision::H1);
        let worse = Pentanomial([80, 250, 400, 150, 20]);
        assert_eq!(s.decide(&worse), Decision::H0);
        let few = Pentanomial([0, 1, 2, 1, 0]);
        assert_eq!(s.decide(&few), Decision::Continue);
        assert_eq!(s.llr(&Pentanomial::default()), 0.0);
        let (e, lo, hi) = better.elo().unwrap();
        assert!(lo < e && e < hi && lo > 0.0, "{lo} {e} {hi}");
    }

    #[test]
    fn the_llr_is_zero_midway_between_the_hypotheses() {
        let s = Sprt::parse("-10,10").unwrap();
        let even = Pentanomial([10, 40, 100, 40, 10]);
        assert!(s.llr(&even).abs() < 1e-9);
    }
}
