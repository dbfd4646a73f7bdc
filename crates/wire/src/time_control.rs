//! Time controls: one or more periods, read from text the way FIDE and most servers write
//! them (base in minutes, increment in seconds).

use serde::{Deserialize, Serialize};

/// One period: `moves` to make (0 = the rest of the game) in `base_ms`, plus `increment_ms`
/// after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub moves: u32,
    pub base_ms: u64,
    pub increment_ms: u64,
}

/// A validated time control.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

/// At most this many periods.
pub const MAX_PERIODS: usize = 8;
/// No period longer than a day, no increment longer than an hour.
pub const MAX_BASE_MS: u64 = 24 * 3600 * 1000;
pub const MAX_INCREMENT_MS: u64 = 3600 * 1000;
/// The first period gives at least a second: less is over before a move can reach the
/// server, so the first side to move would lose on time with nothing it could do.
pub const MIN_FIRST_BASE_MS: u64 = 1000;

impl TimeControl {
    /// Reads `5+3`, `0.5+0`, `90+30`, `40/90+30:30+30` (minutes, then seconds).
    ///
    /// ```
    /// use chess_wire::TimeControl;
    /// let tc = TimeControl::parse("40/90+30:30+30").unwrap();
    /// assert_eq!(tc.periods.len(), 2);
    /// assert_eq!(tc.periods[0].moves, 40);
    /// assert_eq!(tc.periods[0].base_ms, 90 * 60_000);
    /// assert_eq!(tc.periods[1].increment_ms, 30_000);
    /// assert_eq!(tc.to_string(), "40/90+30:30+30");
    /// assert!(TimeControl::parse("5 minutes").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<TimeControl, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("empty time control".into());
        }
        let mut periods = Vec::new();
        for part in text.split(':') {
            let bad =
                || format!("cannot read {part:?} as [moves/]minutes+seconds, like 5+3 or 40/90+30");
            let (moves, rest) = match part.split_once('/') {
                Some((m, rest)) => (m.trim().parse::<u32>().map_err(|_| bad())?, rest),
                None => (0, part),
            };
            let (base, inc) = rest.split_once('+').unwrap_or((rest, "0"));
            let base_min: f64 = base.trim().parse().map_err(|_| bad())?;
            let inc_s: f64 = inc.trim().parse().map_err(|_| bad())?;
            if !base_min.is_finite() || !inc_s.is_finite() || base_min < 0.0 || inc_s < 0.0 {
                return Err(bad());
            }
            if base_min * 60_000.0 > MAX_BASE_MS as f64 || inc_s * 1000.0 > MAX_INCREMENT_MS as f64
            {
                return Err(format!(
                    "{part:?} is longer than a day or its increment longer than an hour"
                ));
            }
            periods.push(Period {
                moves,
                base_ms: (base_min * 60_000.0).round() as u64,
                increment_ms: (inc_s * 1000.0).round() as u64,
            });
        }
        TimeControl::new(periods)
    }

    /// Validates periods given one by one.
    pub fn new(periods: Vec<Period>) -> Result<TimeControl, String> {
        if periods.is_empty() {
            return Err("a time control needs at least one period".into());
        }
        if periods.len() > MAX_PERIODS {
            return Err(format!(
                "at most {MAX_PERIODS} periods, got {}",
                periods.len()
            ));
        }
        for (i, p) in periods.iter().enumerate() {
            if p.base_ms > MAX_BASE_MS || p.increment_ms > MAX_INCREMENT_MS {
                return Err(format!(
                    "period {} is longer than a day or its increment longer than an hour",
                    i + 1
                ));
            }
            if i == 0 && p.base_ms == 0 && p.increment_ms == 0 {
                return Err("the first period gives no time at all".into());
            }
            // The increment comes after a move, so with no base time the side to move would
            // start on 0 ms and lose on time at once.
            if i == 0 && p.base_ms == 0 {
                return Err(
                    "the first period has no base time, so the side to move would lose on time \
                     before its first increment: give some minutes, like 1+1 or 0.5+1"
                        .into(),
                );
            }
            if i == 0 && p.base_ms < MIN_FIRST_BASE_MS {
                return Err(format!(
                    "the first period gives {} ms, less than the minimum of {MIN_FIRST_BASE_MS} ms \
                     (1 second): such a game is lost on time before a move can arrive",
                    p.base_ms
                ));
            }
            if i + 1 < periods.len() && p.moves == 0 {
                return Err(format!(
                    "period {} covers the rest of the game, so nothing can follow it",
                    i + 1
                ));
            }
        }
        Ok(TimeControl { periods })
    }
}

impl TimeControl {
    /// The time control as the wire carries it.
    pub fn to_proto(&self) -> chess_proto::v1::TimeControl {
        chess_proto::v1::TimeControl {
            periods: self
                .periods
                .iter()
                .map(|p| chess_proto::v1::TimeControlPeriod {
                    moves: p.moves,
                    base_ms: p.base_ms,
                    increment_ms: p.increment_ms,
                })
                .collect(),
        }
    }

    /// The periods of a wire time control, unvalidated (see [`TimeControl::new`]).
    pub fn periods_from_proto(tc: &chess_proto::v1::TimeControl) -> Vec<Period> {
        tc.periods
            .iter()
            .map(|p| Period {
                moves: p.moves,
                base_ms: p.base_ms,
                increment_ms: p.increment_ms,
            })
            .collect()
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if p.moves > 0 {
                write!(f, "{}/", p.moves)?;
            }
            let min = p.base_ms as f64 / 60_000.0;
            let inc = p.increment_ms as f64 / 1000.0;
            write!(f, "{}+{}", trim_float(min), trim_float(inc))?;
        }
        Ok(())
    }
}

fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let tc = TimeControl::parse("5+3").unwrap();
        assert_eq!(
            tc.periods,
            [Period {
                moves: 0,
                base_ms: 300_000,
                increment_ms: 3_000
            }]
        );
        assert_eq!(
            TimeControl::parse("0.5+0").unwrap().periods[0].base_ms,
            30_000
        );
        assert_eq!(TimeControl::parse("10").unwrap().periods[0].increment_ms, 0);
        assert!(TimeControl::parse("0+0").is_err());
        assert!(TimeControl::parse("-1+0").is_err());
        assert!(
            TimeControl::parse("5+3:5+3").is_err(),
            "rest-of-game period must be last"
        );
        assert!(TimeControl::parse("100000+0").is_err());
        assert!(TimeControl::parse("x/5+3").is_err());
        assert_eq!(TimeControl::parse("0.5+0").unwrap().to_string(), "0.5+0");
    }

    /// With no base time the side to move has 0 ms on its clock before its first increment
    /// arrives, so it loses on time at once.
    #[test]
    fn first_period_needs_a_base_time() {
        for text in ["0+1", "0+30", "40/0+30:30+30", "0.0+1"] {
            let e = TimeControl::parse(text).unwrap_err();
            assert!(e.contains("no base time"), "{text}: {e}");
        }
        let e = TimeControl::new(vec![Period {
            moves: 0,
            base_ms: 0,
            increment_ms: 1_000,
        }])
        .unwrap_err();
        assert!(e.contains("no base time"), "{e}");
        // A later period may add only an increment: the clock carries over.
        assert!(TimeControl::parse("40/90+30:0+30").is_ok());
        assert!(TimeControl::parse("0.1+1").is_ok());
    }

    /// `0.0001+1` is 6 ms: black lost on time before its first move could arrive.
    #[test]
    fn first_period_gives_at_least_a_second() {
        for text in ["0.0001+1", "0.0001+0", "0.01+0", "40/0.016+30:30+30"] {
            let e = TimeControl::parse(text).unwrap_err();
            assert!(e.contains("minimum of 1000 ms"), "{text}: {e}");
        }
        let e = TimeControl::new(vec![Period {
            moves: 0,
            base_ms: 999,
            increment_ms: 0,
        }])
        .unwrap_err();
        assert!(e.contains("999 ms"), "{e}");
        assert!(TimeControl::parse("0.017+0").is_ok(), "1,020 ms is enough");
        // A later period may be short: the clock carries over.
        assert!(TimeControl::parse("40/1+0:0.001+0").is_ok());
    }
}
