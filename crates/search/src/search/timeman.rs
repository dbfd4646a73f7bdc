//! Time management: how long to think about one move.
//!
//! A search has a soft limit, checked between iterations (do not start what cannot finish), and a
//! hard limit, checked during the search (stop now). With a clock the soft limit is the remaining
//! time shared over the moves to go plus most of the increment; the hard limit is a few times
//! that, capped at a share of the remaining time. The move overhead (GUI and transport lag) is
//! taken off first. A fixed `movetime` is both limits.

use chess_rules::Color;

use super::limits::SearchLimits;
use crate::params::Params;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TimeManager {
    /// Milliseconds after which no new iteration starts (scaled by how settled the search is).
    pub(crate) soft_ms: Option<u64>,
    /// Milliseconds after which the search stops at once.
    pub(crate) hard_ms: Option<u64>,
}

impl TimeManager {
    pub(crate) fn new(
        limits: &SearchLimits,
        us: Color,
        overhead_ms: u64,
        p: &Params,
    ) -> TimeManager {
        if let Some(mt) = limits.movetime {
            let t = mt.saturating_sub(overhead_ms).max(1);
            return TimeManager {
                soft_ms: Some(t),
                hard_ms: Some(t),
            };
        }
        let (time, inc) = match us {
            Color::White => (limits.wtime, limits.winc),
            Color::Black => (limits.btime, limits.binc),
        };
        let Some(time) = time else {
            return TimeManager::default();
        };
        let available = time.saturating_sub(overhead_ms).max(1);
        let moves_to_go = u64::from(limits.movestogo.unwrap_or(p.tm_moves_to_go).clamp(1, 50));
        let inc = inc.unwrap_or(0);
        let cap = if moves_to_go == 1 {
            available * 9 / 10
        } else {
            available * p.tm_hard_max_percent / 100
        }
        .max(1);
        let soft = (available / moves_to_go + inc * p.tm_increment_percent / 100).clamp(1, cap);
        let hard = (soft * p.tm_hard_factor).min(cap).max(soft);
        TimeManager {
            soft_ms: Some(soft),
            hard_ms: Some(hard),
        }
    }

    /// True when the next iteration should not start. `scale` grows when the best move keeps
    /// changing and shrinks when it is settled.
    pub(crate) fn soft_stop(&self, elapsed_ms: u64, scale: f64) -> bool {
        match (self.soft_ms, self.hard_ms) {
            (Some(soft), Some(hard)) => {
                let limit = ((soft as f64 * scale) as u64).min(hard);
                elapsed_ms >= limit
            }
            _ => false,
        }
    }

    pub(crate) fn hard_stop(&self, elapsed_ms: u64) -> bool {
        self.hard_ms.is_some_and(|h| elapsed_ms >= h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tm(limits: SearchLimits, us: Color) -> TimeManager {
        TimeManager::new(&limits, us, 10, &Params::default())
    }

    #[test]
    fn movetime_is_both_limits() {
        let t = tm(
            SearchLimits {
                movetime: Some(500),
                ..SearchLimits::default()
            },
            Color::White,
        );
        assert_eq!((t.soft_ms, t.hard_ms), (Some(490), Some(490)));
    }

    #[test]
    fn clock_uses_a_share_of_the_remaining_time() {
        let limits = SearchLimits {
            wtime: Some(10_000),
            btime: Some(60_000),
            winc: Some(100),
            binc: Some(1_000),
            ..SearchLimits::default()
        };
        let w = tm(limits.clone(), Color::White);
        let b = tm(limits, Color::Black);
        let (ws, wh) = (w.soft_ms.unwrap(), w.hard_ms.unwrap());
        assert!(ws > 300 && ws < 600, "{ws}");
        assert!(wh > ws && wh <= 3_000, "{wh}");
        assert!(b.soft_ms.unwrap() > 2 * ws);
    }

    #[test]
    fn never_more_than_is_left() {
        let t = tm(
            SearchLimits {
                btime: Some(50),
                binc: Some(5_000),
                movestogo: Some(1),
                ..SearchLimits::default()
            },
            Color::Black,
        );
        assert!(t.hard_ms.unwrap() < 50 && t.soft_ms.unwrap() <= t.hard_ms.unwrap());
        let t = tm(
            SearchLimits {
                wtime: Some(3),
                ..SearchLimits::default()
            },
            Color::White,
        );
        assert_eq!(t.hard_ms, Some(1));
    }

    #[test]
    fn no_clock_no_limits() {
        let t = tm(
            SearchLimits {
                depth: Some(5),
                ..SearchLimits::default()
            },
            Color::White,
        );
        assert_eq!(t, TimeManager::default());
        assert!(!t.soft_stop(1 << 40, 1.0) && !t.hard_stop(1 << 40));
    }
}
