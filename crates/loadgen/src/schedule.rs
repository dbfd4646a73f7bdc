//! Load shapes: a level (clients for the closed model, requests per second for the open one)
//! that is constant, steps up or down, or ramps linearly over the run; and, for the open model,
//! the intended send time of every request.

use std::time::Duration;

/// How the level runs over the measured run.
#[derive(Clone, Debug, PartialEq)]
pub enum LevelSpec {
    Const(f64),
    /// Each level for one step.
    Steps(Vec<f64>),
    /// Linear from the first to the second over the whole run.
    Ramp(f64, f64),
}

impl LevelSpec {
    fn parse(text: &str, what: &str, integer: bool) -> Result<LevelSpec, String> {
        let number = |s: &str| -> Result<f64, String> {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| format!("{s:?} is not a number of {what}"))?;
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{s:?}: {what} must be a non-negative number"));
            }
            if integer && v.fract() != 0.0 {
                return Err(format!("{s:?}: {what} must be a whole number"));
            }
            if v > 1_000_000.0 {
                return Err(format!("{s:?}: at most 1000000 {what}"));
            }
            Ok(v)
        };
        let t = text.trim();
        let spec = if let Some((a, b)) = t.split_once("..") {
            let (a, b) = (number(a)?, number(b)?);
            if a == 0.0 && b == 0.0 {
                return Err(format!("a ramp of {what} needs an end above 0"));
            }
            LevelSpec::Ramp(a, b)
        } else if t.contains(',') {
            let steps = t.split(',').map(number).collect::<Result<Vec<_>, _>>()?;
            if steps.contains(&0.0) {
                return Err(format!("every step needs at least 1 of {what}"));
            }
            LevelSpec::Steps(steps)
        } else {
            let v = number(t)?;
            if v == 0.0 {
                return Err(format!("at least 1 of {what}"));
            }
            LevelSpec::Const(v)
        };
        Ok(spec)
    }

    /// `N`, `N1,N2,...` or `A..B` whole clients.
    pub fn parse_clients(text: &str) -> Result<LevelSpec, String> {
        let spec = LevelSpec::parse(text, "clients", true)?;
        if spec.max() > 10_000.0 {
            return Err("at most 10000 clients".to_owned());
        }
        Ok(spec)
    }

    /// `R`, `R1,R2,...` or `A..B` requests per second.
    pub fn parse_rate(text: &str) -> Result<LevelSpec, String> {
        LevelSpec::parse(text, "requests per second", false)
    }

    pub fn max(&self) -> f64 {
        match self {
            LevelSpec::Const(v) => *v,
            LevelSpec::Steps(s) => s.iter().copied().fold(0.0, f64::max),
            LevelSpec::Ramp(a, b) => a.max(*b),
        }
    }

    pub fn first(&self) -> f64 {
        match self {
            LevelSpec::Const(v) | LevelSpec::Ramp(v, _) => *v,
            LevelSpec::Steps(s) => s.first().copied().unwrap_or(1.0),
        }
    }

    pub fn steps(&self) -> usize {
        match self {
            LevelSpec::Steps(s) => s.len(),
            _ => 1,
        }
    }

    /// As written on the command line.
    pub fn describe(&self) -> String {
        let n = |v: f64| {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        };
        match self {
            LevelSpec::Const(v) => n(*v),
            LevelSpec::Steps(s) => s.iter().map(|v| n(*v)).collect::<Vec<_>>().join(","),
            LevelSpec::Ramp(a, b) => format!("{}..{}", n(*a), n(*b)),
        }
    }
}

/// One step of a stepped schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub index: usize,
    pub level: f64,
    pub start: Duration,
    /// `None` for the last step: it lasts until the run ends.
    pub end: Option<Duration>,
}

/// A level over time.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub spec: LevelSpec,
    /// The ramp's length (and the time bound of the run).
    pub duration: Duration,
    pub step: Duration,
}

impl Schedule {
    pub fn new(spec: LevelSpec, duration: Duration, step: Option<Duration>) -> Schedule {
        let steps = spec.steps() as u32;
        let step = step.unwrap_or_else(|| duration / steps.max(1));
        Schedule {
            spec,
            duration,
            step: step.max(Duration::from_millis(1)),
        }
    }

    /// A constant level (warm-up).
    pub fn constant(level: f64, duration: Duration) -> Schedule {
        Schedule::new(LevelSpec::Const(level), duration, None)
    }

    /// Steps in the schedule (1 when unstepped).
    pub fn steps_count(&self) -> usize {
        self.spec.steps()
    }

    /// Which step `t` falls in (0 for unstepped schedules).
    pub fn stage_at(&self, t: Duration) -> usize {
        match &self.spec {
            LevelSpec::Steps(s) => {
                let i = (t.as_secs_f64() / self.step.as_secs_f64()) as usize;
                i.min(s.len() - 1)
            }
            _ => 0,
        }
    }

    pub fn level_at(&self, t: Duration) -> f64 {
        match &self.spec {
            LevelSpec::Const(v) => *v,
            LevelSpec::Steps(s) => s[self.stage_at(t)],
            LevelSpec::Ramp(a, b) => {
                let d = self.duration.as_secs_f64();
                let x = if d > 0.0 {
                    (t.as_secs_f64() / d).min(1.0)
                } else {
                    1.0
                };
                a + (b - a) * x
            }
        }
    }

    /// Clients that should be running at `t`.
    pub fn clients_at(&self, t: Duration) -> usize {
        self.level_at(t).round() as usize
    }

    /// The steps, for per-step figures; one for unstepped schedules.
    pub fn stages(&self) -> Vec<Stage> {
        match &self.spec {
            LevelSpec::Steps(s) => s
                .iter()
                .enumerate()
                .map(|(i, &level)| Stage {
                    index: i,
                    level,
                    start: self.step * i as u32,
                    end: (i + 1 < s.len()).then(|| self.step * (i as u32 + 1)),
                })
                .collect(),
            other => vec![Stage {
                index: 0,
                level: other.first(),
                start: Duration::ZERO,
                end: None,
            }],
        }
    }

    /// Requests due by `t` at this rate schedule (the integral of the rate).
    fn cumulative(&self, t: f64) -> f64 {
        match &self.spec {
            LevelSpec::Const(r) => r * t,
            LevelSpec::Steps(s) => {
                let step = self.step.as_secs_f64();
                let mut total = 0.0;
                for (i, r) in s.iter().enumerate() {
                    let from = step * i as f64;
                    if t <= from {
                        break;
                    }
                    let to = if i + 1 == s.len() {
                        t
                    } else {
                        t.min(from + step)
                    };
                    total += r * (to - from);
                }
                total
            }
            LevelSpec::Ramp(a, b) => {
                let d = self.duration.as_secs_f64().max(1e-9);
                if t <= d {
                    a * t + (b - a) * t * t / (2.0 * d)
                } else {
                    (a + b) / 2.0 * d + b * (t - d)
                }
            }
        }
    }

    /// Open model: the intended send time of request `k` (0-based), counted from the start;
    /// `None` when it falls after `horizon`.
    pub fn send_time(&self, k: u64, horizon: Duration) -> Option<Duration> {
        let target = k as f64;
        let h = horizon.as_secs_f64();
        if self.cumulative(h) <= target {
            return None;
        }
        // The cumulative count only grows: bisect for the first time it reaches `target`.
        let (mut lo, mut hi) = (0.0f64, h);
        for _ in 0..64 {
            let mid = (lo + hi) / 2.0;
            if self.cumulative(mid) >= target {
                hi = mid;
            } else {
                lo = mid;
            }
            if hi - lo < 1e-7 {
                break;
            }
        }
        Some(Duration::from_secs_f64(hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_shapes() {
        assert_eq!(
            LevelSpec::parse_clients("4").unwrap(),
            LevelSpec::Const(4.0)
        );
        assert_eq!(
            LevelSpec::parse_clients("1,2,4,8").unwrap(),
            LevelSpec::Steps(vec![1.0, 2.0, 4.0, 8.0])
        );
        assert_eq!(
            LevelSpec::parse_rate("10..100").unwrap(),
            LevelSpec::Ramp(10.0, 100.0)
        );
        assert_eq!(LevelSpec::parse_rate("2.5").unwrap(), LevelSpec::Const(2.5));
        assert!(LevelSpec::parse_clients("1.5").is_err());
        assert!(LevelSpec::parse_clients("0").is_err());
        assert!(LevelSpec::parse_clients("2,0").is_err());
        assert!(LevelSpec::parse_rate("fast").is_err());
        assert!(LevelSpec::parse_rate("0..0").is_err());
        assert_eq!(LevelSpec::parse_rate("1,2.5").unwrap().describe(), "1,2.5");
    }

    #[test]
    fn steps_split_the_run() {
        let s = Schedule::new(
            LevelSpec::Steps(vec![1.0, 2.0, 4.0]),
            Duration::from_secs(30),
            None,
        );
        assert_eq!(s.step, Duration::from_secs(10));
        assert_eq!(s.clients_at(Duration::from_secs(5)), 1);
        assert_eq!(s.clients_at(Duration::from_secs(15)), 2);
        assert_eq!(s.clients_at(Duration::from_secs(29)), 4);
        assert_eq!(s.clients_at(Duration::from_secs(99)), 4);
        let stages = s.stages();
        assert_eq!(stages.len(), 3);
        assert_eq!(stages[1].start, Duration::from_secs(10));
        assert_eq!(stages[2].end, None);
    }

    #[test]
    fn ramps_are_linear() {
        let s = Schedule::new(LevelSpec::Ramp(0.0, 10.0), Duration::from_secs(10), None);
        assert_eq!(s.clients_at(Duration::ZERO), 0);
        assert_eq!(s.clients_at(Duration::from_secs(5)), 5);
        assert_eq!(s.clients_at(Duration::from_secs(20)), 10);
    }

    #[test]
    fn constant_rate_sends_evenly() {
        let s = Schedule::constant(100.0, Duration::from_secs(1));
        let t = |k| {
            s.send_time(k, Duration::from_secs(1))
                .map(|d| d.as_secs_f64())
        };
        assert!((t(0).unwrap() - 0.0).abs() < 1e-6);
        assert!((t(1).unwrap() - 0.01).abs() < 1e-6);
        assert!((t(50).unwrap() - 0.5).abs() < 1e-6);
        assert!((t(99).unwrap() - 0.99).abs() < 1e-6);
        assert_eq!(t(100), None);
    }

    #[test]
    fn stepped_and_ramped_rates_send_the_integral() {
        let s = Schedule::new(
            LevelSpec::Steps(vec![10.0, 30.0]),
            Duration::from_secs(2),
            None,
        );
        let h = Duration::from_secs(2);
        let count = (0..).take_while(|&k| s.send_time(k, h).is_some()).count();
        assert_eq!(count, 40);
        // The eleventh request is the first of the second step.
        assert!((s.send_time(10, h).unwrap().as_secs_f64() - 1.0).abs() < 1e-6);

        let r = Schedule::new(LevelSpec::Ramp(0.0, 100.0), Duration::from_secs(2), None);
        let count = (0..).take_while(|&k| r.send_time(k, h).is_some()).count();
        assert_eq!(count, 100);
        // Half the requests come in the last 29% of a ramp from zero.
        let mid = r.send_time(50, h).unwrap().as_secs_f64();
        assert!((mid - 2.0 / 2f64.sqrt()).abs() < 1e-3, "{mid}");
    }
}
