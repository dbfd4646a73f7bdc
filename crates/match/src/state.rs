//! The match's running totals and checkpoint: the counts after every pair, the SPRT's decision
//! once taken, and the lines that report them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::sprt::{Decision, Pentanomial, Sprt};

/// The SPRT's decision, fixed when the log-likelihood ratio first left its bounds. Pairs that
/// were in flight then still finish and count in the totals, but they cannot undo it: the test
/// decided on the pairs before them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decided {
    pub decision: Decision,
    /// Games played when it was decided.
    pub games: u64,
    pub llr: f64,
}

/// The checkpoint.
#[derive(Serialize, Deserialize, Default)]
pub struct State {
    /// What was being measured: a resumed match must be the same one.
    pub setup: String,
    pub penta: Pentanomial,
    /// Wins, losses, draws of the engine under test.
    pub wld: [u64; 3],
    /// Games lost on time or by an engine failure, by the engine under test and its opponent.
    pub forfeits: [u64; 2],
    /// Pair indices finished.
    pub done: BTreeSet<u64>,
    /// Absent in state files written before it existed.
    #[serde(default)]
    pub decided: Option<Decided>,
}

impl State {
    pub fn games(&self) -> u64 {
        self.wld.iter().sum()
    }

    /// Takes the SPRT's decision if there is none yet and the pairs so far reach a bound; true
    /// once the match is decided (no new pair should start).
    pub fn settle(&mut self, sprt: Option<&Sprt>) -> bool {
        if self.decided.is_none()
            && let Some(t) = sprt
        {
            let decision = t.decide(&self.penta);
            if decision != Decision::Continue {
                self.decided = Some(Decided {
                    decision,
                    games: self.games(),
                    llr: t.llr(&self.penta),
                });
            }
        }
        self.decided.is_some()
    }

    /// The counts, Elo and LLR after the pairs so far.
    pub fn summary(&self, sprt: Option<&Sprt>) -> String {
        let [w, l, d] = self.wld;
        let mut s = format!(
            "{} games (+{w} -{l} ={d}), pentanomial {:?}",
            w + l + d,
            self.penta.0
        );
        if let Some((e, lo, hi)) = self.penta.elo() {
            s.push_str(&format!(", Elo {e:+.1} (95% {lo:+.1} .. {hi:+.1})"));
        }
        if let Some(t) = sprt {
            let (lo, hi) = t.bounds();
            s.push_str(&format!(
                ", LLR {:.2} ({lo:.2}, {hi:.2})",
                t.llr(&self.penta)
            ));
        }
        s
    }

    /// The last line: the verdict, the totals, and where the decision fell when pairs in
    /// flight finished after it.
    pub fn verdict(&self, sprt: Option<&Sprt>, load: &str) -> String {
        let head = match sprt {
            Some(t) => {
                let what = match self.decided.map(|d| d.decision) {
                    Some(Decision::H1) => "H1 accepted",
                    Some(Decision::H0) => "H0 accepted",
                    Some(Decision::Continue) | None => "undecided",
                };
                format!("SPRT [{}, {}]: {what}", t.elo0, t.elo1)
            }
            None => "match".to_owned(),
        };
        let mut line = format!(
            "{head}: {}; forfeits {} by the engine, {} by the opponent",
            self.summary(sprt),
            self.forfeits[0],
            self.forfeits[1]
        );
        if let Some(d) = self.decided
            && d.games != self.games()
        {
            line.push_str(&format!(
                "; decided at {} games (LLR {:.2}), {} more finished in flight",
                d.games,
                d.llr,
                self.games() - d.games
            ));
        }
        line.push_str(&format!("; load average {load}"));
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with(pairs: [u64; 5]) -> State {
        let mut s = State::default();
        for (half_points, &n) in pairs.iter().enumerate() {
            for _ in 0..n {
                s.penta.add(half_points);
                s.wld[match half_points {
                    4 => 0,
                    0 => 1,
                    _ => 2,
                }] += 2;
            }
        }
        s
    }

    #[test]
    fn a_pair_finishing_after_the_decision_does_not_undo_it() {
        let t = Sprt::parse("0,5").unwrap();
        // Just past the upper bound, as in a real run (LLR 2.96 at 2,340 games).
        let mut s = state_with([82, 137, 645, 199, 107]);
        s.penta.add(3);
        assert_eq!(t.decide(&s.penta), Decision::H1);
        assert!(s.settle(Some(&t)));
        let at = s.games();
        // A pair in flight then loses, and the ratio falls back inside the bounds ...
        s.penta.add(0);
        s.wld[1] += 2;
        assert_eq!(t.decide(&s.penta), Decision::Continue);
        // ... but the decision stands, and the verdict says where it fell.
        assert!(s.settle(Some(&t)));
        assert_eq!(s.decided.unwrap().decision, Decision::H1);
        assert_eq!(s.decided.unwrap().games, at);
        let v = s.verdict(Some(&t), "1.00");
        assert!(v.starts_with("SPRT [0, 5]: H1 accepted: "), "{v}");
        assert!(
            v.contains(&format!("decided at {at} games (LLR 2.9")) && v.contains("2 more"),
            "{v}"
        );
    }

    #[test]
    fn undecided_and_h0_verdicts() {
        let t = Sprt::parse("0,5").unwrap();
        let mut s = state_with([10, 20, 40, 20, 10]);
        assert!(!s.settle(Some(&t)));
        assert!(
            s.verdict(Some(&t), "0.5")
                .starts_with("SPRT [0, 5]: undecided: 200 games")
        );
        let mut s = state_with([200, 200, 300, 100, 50]);
        assert!(s.settle(Some(&t)));
        let v = s.verdict(Some(&t), "0.5");
        assert!(
            v.starts_with("SPRT [0, 5]: H0 accepted: ") && !v.contains("decided at"),
            "{v}"
        );
        assert!(v.ends_with("load average 0.5"), "{v}");
        // Without a test nothing is decided, however lopsided the games.
        let mut plain = state_with([200, 200, 300, 100, 50]);
        assert!(!plain.settle(None) && plain.decided.is_none());
        let plain = state_with([1, 1, 1, 1, 1]);
        assert!(plain.verdict(None, "0").starts_with("match: 10 games"));
    }

    #[test]
    fn old_state_files_still_read() {
        let old =
            r#"{"setup":"x","penta":[1,2,3,4,5],"wld":[1,2,3],"forfeits":[0,0],"done":[0,1]}"#;
        let s: State = serde_json::from_str(old).unwrap();
        assert_eq!(s.decided, None);
        assert_eq!(s.penta.pairs(), 15);
    }
}
