//! Playing strength: how an Elo level becomes a search budget and a controlled amount of
//! randomness in the choice of move, calibrated by matches against Stockfish's `UCI_Elo`.
//!
//! **The scale.** A *setting* `s` from 800 to 3000 is placed on a 0-to-1 scale
//! `t = (s - 800) / 2200`. Then:
//!
//! | | formula | 800 | 1500 | 2200 | 3000 |
//! |---|---|---|---|---|---|
//! | node budget | `400 * 2^(11 t)` | 400 | 4.5k | 51k | 819k |
//! | depth cap | `1 + round(13 t)` to 2600 (12), then 13 more per 100 | 1 | 5 | 9 | 64 |
//! | lines considered | 4; from 2850 to 3000 a growing share of moves 1 | 4 | 4 | 4 | 1 |
//! | temperature (cp) | `250 (1 - t)^1.5` | 250 | 141 | 55 | 0 |
//!
//! Below 800 the scale goes on to [`MIN_SETTING`] (400) with the search of 800 (depth 1, its
//! 100 nodes a line) and a wider, hotter draw: `u = (800 - s) / 400`, lines `4 + round(4 u)`
//! (8 at 400), temperature `250 + 150 u` cp (400 at 400).
//!
//! The engine searches the top lines within that budget, and the move is drawn among them
//! with probability proportional to `exp(-(best - score) / temperature)`: a weak setting often
//! plays a second- or third-best move, a strong one almost never, and a line that loses much
//! more than the best is all but never chosen. The draw uses a seeded generator, so the same
//! seed, position and level give the same move.
//!
//! **The top of the scale.** Four lines cost a search much of its depth: setting 2850 (four
//! lines) played about 350 Elo below setting 3000 (one line), far more than 1.7 times the
//! nodes is worth. A switch from four lines to one at a setting left a gap in the levels that
//! no setting played (about 2450 to 2700). So from
//! [`SINGLE_LINE_FROM`] to 3000 the share of moves searched as one line (the strongest
//! search, no draw) grows in a straight line from none to all ([`Level::single_line_share`]);
//! which moves, the seed of each move decides ([`Level::lines_for`]), so strength rises with
//! the setting without a step and a seeded level still repeats.
//!
//! **The calibration.** Settings were played against Stockfish 15.1 with `UCI_LimitStrength`
//! at 10 s + 0.1 s ([`MEASURED`]; docs/strength.md, "Levels"): a setting plays well below its
//! own number in the middle of the scale (setting 2200 lost 60 of 60 games to Stockfish at
//! 2200). A level `elo` uses the setting that played at `elo`: the measured points read
//! backwards, straight lines between them. The first point is the weakest setting (400) and
//! the last the strongest (3000), so every level between them plays near its number.
//! Stockfish's `UCI_Elo` starts at 1350, so the low points (400 to 1200) are one fit: each
//! setting's gap to setting 800 in matches of our engine against itself, shrunk by a factor
//! (self-play stretches gaps), added to setting 800's place; the place and the factor are
//! those that best explain every match of the low settings against Stockfish at 1350
//! (`tools/level_fit.py`).
//! No setting plays above the last point ([`STRONGEST_LEVEL`]) or below the first
//! ([`WEAKEST_LEVEL`], under [`MIN_ELO`], so every level the API takes is on the curve): a
//! level asked beyond them is played as that end of the scale, and [`Level::elo`] says so: the
//! level played, not the number asked for.

use chess_rules::Position;

use crate::{Line, Score, SearchLimits, SplitMix64};

pub const MIN_ELO: u32 = 800;
pub const MAX_ELO: u32 = 3000;

/// The weakest setting of the scale, below the weakest level asked for ([`MIN_ELO`]): from
/// setting 800 down to it a move draws among more lines with a hotter draw.
pub const MIN_SETTING: u32 = 400;
/// The lines added from setting 800 down to [`MIN_SETTING`].
const LOW_EXTRA_LINES: u32 = 4;
/// The temperature added from setting 800 down to [`MIN_SETTING`].
const LOW_EXTRA_TEMPERATURE_CP: f64 = 150.0;

/// From this setting up, a share of the moves (none here, all at [`MAX_ELO`]) is searched as
/// one line instead of four.
pub const SINGLE_LINE_FROM: u32 = 2850;

/// The lines a move that is not searched as one line considers.
const LINES: usize = 4;

/// Settings on the scale and the Elo each played at against Stockfish 15.1 `UCI_Elo`
/// (10 s + 0.1 s, one thread, game pairs over a 50-opening book), both ascending.
/// Each point is a setting's own match against a `UCI_Elo` near it (its score as an Elo
/// difference), or two matches of the same setting read together (their means, weighted by
/// games). 2034 to 2453 were measured on 2026-12-05 with the default network
/// `chnn-2be98a017411` (docs/strength.md, "Recalibrated with the network of the evening"), in
/// matches of 60-100 games (2453: 40). 2549, 2654 and 2850 were measured again on 2026-12-06
/// with `chnn-377bd49fbec8` (40 games each: 2130, 2282 and 2395, where they were): the
/// networks since gain at one line, not at four with a draw. 2890, 2925 and 3000 are that
/// network's, 40 games each, 2890 and 2925 with a share of their moves searched as one line
/// ([`SINGLE_LINE_FROM`]; docs/strength.md, "Measured again with the network of the night").
/// 1460 and 1626 are that network's too (2026-12-07, 100 games each). Its three successors,
/// `chnn-86a2a76ee16b`, `chnn-09f5333bcb83` and the default since 2026-12-07
/// `chnn-7e616c9c4844`, are +13.2, +7.6 and +8.9 Elo over the one before each at 10,000 nodes
/// a move (docs/network.md, eighteenth to twentieth rounds); the curve is not measured with
/// them. 400 to 1200 are one fit to every match there against Stockfish's weakest, 1350
/// (settings 568, 634, 684, 725, 800, 1000 and 1200, 60-100 games each) and to the settings'
/// matches against setting 800 (400-800 games each): each point is setting 800's place plus
/// its self-play gap divided by 1.41, both fitted (`tools/level_fit.py`; docs/strength.md,
/// "Below 800").
pub const MEASURED: [(u32, u32); 20] = [
    (400, 608),
    (500, 731),
    (600, 808),
    (700, 905),
    (800, 1008),
    (1000, 1143),
    (1200, 1219),
    (1460, 1492),
    (1626, 1579),
    (2034, 1786),
    (2089, 1927),
    (2285, 1930),
    (2387, 2038),
    (2453, 2052),
    (2549, 2115),
    (2654, 2282),
    (2850, 2393),
    (2890, 2500),
    (2925, 2539),
    (3000, 2759),
];

/// The weakest level there is: what the weakest setting ([`MIN_SETTING`]) was measured to
/// play at, below [`MIN_ELO`]. A level asked below it is played, and reported, as this one.
pub const WEAKEST_LEVEL: u32 = MEASURED[0].1;

/// The strongest level there is: what the strongest setting (3000) was measured to play at.
/// A level asked above it is played, and reported, as this one.
pub const STRONGEST_LEVEL: u32 = MEASURED[MEASURED.len() - 1].1;

/// What a level means for the search and the choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// The level played: the one asked for, within `WEAKEST_LEVEL..=STRONGEST_LEVEL`.
    pub elo: u32,
    /// Its setting on the scale ([`MEASURED`]).
    pub setting: u32,
    pub nodes: u64,
    pub depth: u32,
    /// The lines a move searches and draws among, unless [`Level::lines_for`] makes it one.
    pub lines: usize,
    /// The share of moves searched as one line (the strongest search, no draw): 0 below
    /// [`SINGLE_LINE_FROM`], rising to 1 at [`MAX_ELO`].
    pub single_line_share: f64,
    pub temperature_cp: f64,
}

impl Level {
    /// The level for `elo` (clamped to `WEAKEST_LEVEL..=STRONGEST_LEVEL`): the setting
    /// measured to play at `elo`.
    pub fn new(elo: u32) -> Level {
        let elo = elo.clamp(WEAKEST_LEVEL, STRONGEST_LEVEL);
        Level {
            elo,
            ..Level::at_setting(setting_for(elo))
        }
    }

    /// The search of `setting` on the scale (clamped to `MIN_SETTING..=MAX_ELO`), uncalibrated:
    /// what the matches of [`MEASURED`] played.
    pub fn at_setting(setting: u32) -> Level {
        let setting = setting.clamp(MIN_SETTING, MAX_ELO);
        if setting < MIN_ELO {
            // Below the scale's start: the search of 800 (depth 1, its nodes per line), more
            // lines, a hotter draw.
            let u = f64::from(MIN_ELO - setting) / f64::from(MIN_ELO - MIN_SETTING);
            let start = Level::at_setting(MIN_ELO);
            let lines = LINES + (f64::from(LOW_EXTRA_LINES) * u).round() as usize;
            return Level {
                elo: setting,
                setting,
                nodes: start.nodes * lines as u64 / LINES as u64,
                lines,
                temperature_cp: start.temperature_cp + LOW_EXTRA_TEMPERATURE_CP * u,
                ..start
            };
        }
        let t = f64::from(setting - MIN_ELO) / f64::from(MAX_ELO - MIN_ELO);
        Level {
            elo: setting,
            setting,
            nodes: (400.0 * (11.0 * t).exp2()).round() as u64,
            depth: depth_cap(setting, t),
            lines: if setting < MAX_ELO { LINES } else { 1 },
            single_line_share: f64::from(setting.saturating_sub(SINGLE_LINE_FROM))
                / f64::from(MAX_ELO - SINGLE_LINE_FROM),
            temperature_cp: 250.0 * (1.0 - t).powf(1.5),
        }
    }

    /// The lines (MultiPV) of the move whose draw is seeded by `seed`: one for a share
    /// [`Level::single_line_share`] of seeds, [`Level::lines`] for the rest. The decision
    /// takes its own number from the seed, apart from the draw's.
    pub fn lines_for(&self, seed: u64) -> usize {
        // `next_f64` is below 1, so a share of 0 never makes a move one line, a share of 1 always.
        if SplitMix64::new(seed ^ LINES_SEED_MIX).next_f64() < self.single_line_share {
            1
        } else {
            self.lines
        }
    }

    /// `limits` within the level's node budget and depth cap.
    pub fn limit(&self, mut limits: SearchLimits) -> SearchLimits {
        limits.nodes = Some(limits.nodes.map_or(self.nodes, |n| n.min(self.nodes)));
        limits.depth = Some(limits.depth.map_or(self.depth, |d| d.min(self.depth)));
        limits
    }

    /// The line the level plays among a search's `lines` (best first; as many as
    /// [`Level::lines_for`] gives the move's seed): one whose first move is legal in
    /// `position`, drawn with [`Level::choose`]. `None` when no line has a legal first move.
    pub fn pick<'a>(
        &self,
        position: &Position,
        lines: &'a [Line],
        rng: &mut SplitMix64,
    ) -> Option<&'a Line> {
        let usable = playable(position, lines);
        let scores: Vec<Score> = usable.iter().map(|l| l.score).collect();
        usable.get(self.choose(&scores, rng)).copied()
    }

    /// Picks one of `scores` (the lines' scores, best first) with `rng`; returns its index.
    pub fn choose(&self, scores: &[Score], rng: &mut SplitMix64) -> usize {
        if scores.len() <= 1 || self.temperature_cp < 1.0 {
            return 0;
        }
        let best = score_value(scores[0]);
        let weights: Vec<f64> = scores
            .iter()
            .map(|&s| {
                let loss = f64::from(best.saturating_sub(score_value(s)).max(0));
                (-loss / self.temperature_cp).exp()
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut pick = rng.next_f64() * total;
        for (i, w) in weights.iter().enumerate() {
            if pick < *w {
                return i;
            }
            pick -= w;
        }
        0
    }
}

/// The lines of a search whose first move is legal in `position`, in their order.
pub fn playable<'a>(position: &Position, lines: &'a [Line]) -> Vec<&'a Line> {
    lines
        .iter()
        .filter(|l| l.pv.first().is_some_and(|m| position.is_legal(*m)))
        .collect()
}

/// Mixed into a move's seed for the choice of its lines, so that it is not the draw's first
/// number.
const LINES_SEED_MIX: u64 = 0x6c69_6e65_7320_6f66;

/// Settings up to this one are held by their depth cap `1 + round(13 t)` as measured; above it
/// the cap rises by 13 plies per 100 points (none to speak of by 2700), so that the node budget
/// decides the strongest settings and setting 3000 plays as the engine does with a clock.
const DEPTH_CAPPED_UP_TO: u32 = 2600;

/// The depth cap of `setting` at `t` on the 0-to-1 scale.
fn depth_cap(setting: u32, t: f64) -> u32 {
    let capped = |t: f64| 1 + (13.0 * t).round() as u32;
    if setting <= DEPTH_CAPPED_UP_TO {
        capped(t)
    } else {
        let top = f64::from(DEPTH_CAPPED_UP_TO - MIN_ELO) / f64::from(MAX_ELO - MIN_ELO);
        capped(top) + (setting - DEPTH_CAPPED_UP_TO) * 13 / 100
    }
}

/// The setting that plays at `elo`: [`MEASURED`] read backwards (see the module's text).
fn setting_for(elo: u32) -> u32 {
    let last = MEASURED.len() - 1;
    // The segment whose played range holds `elo` (`Level::new` keeps it within the curve's ends).
    let i = MEASURED[1..last]
        .iter()
        .take_while(|&&(_, played)| played < elo)
        .count();
    let ((s0, e0), (s1, e1)) = (MEASURED[i], MEASURED[i + 1]);
    let slope = f64::from(s1 - s0) / f64::from(e1 - e0);
    let setting = f64::from(s0) + (f64::from(elo) - f64::from(e0)) * slope;
    setting
        .round()
        .clamp(f64::from(MIN_SETTING), f64::from(MAX_ELO)) as u32
}

/// A score as one number for comparisons: centipawns, with mates beyond any centipawn value
/// (a nearer mate is better, a farther mate against is better).
fn score_value(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => 100_000 - n,
        Score::Mate(n) => -100_000 - n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grow_with_elo() {
        let low = Level::at_setting(MIN_ELO);
        let high = Level::new(3000);
        assert_eq!((low.nodes, low.depth, low.lines), (400, 1, 4));
        assert_eq!((high.nodes, high.depth, high.lines), (819_200, 64, 1));
        assert_eq!(high.single_line_share, 1.0);
        assert_eq!(
            Level::at_setting(2600).depth,
            12,
            "the measured settings keep their cap"
        );
        assert!(high.temperature_cp < 1.0 && low.temperature_cp > 249.0);
        // Below 800: the search of 800, its nodes for each line, more lines, a hotter draw.
        let lowest = Level::at_setting(MIN_SETTING);
        assert_eq!((lowest.nodes, lowest.depth, lowest.lines), (800, 1, 8));
        assert!((lowest.temperature_cp - 400.0).abs() < 1e-9);
        assert_eq!(Level::at_setting(0), lowest);
        let mut last = lowest;
        for setting in (MIN_SETTING + 1..=3000).step_by(7) {
            let l = Level::at_setting(setting);
            assert!(l.temperature_cp < last.temperature_cp || l.temperature_cp < 1.0);
            assert!(l.depth >= last.depth && l.single_line_share >= last.single_line_share);
            if setting <= MIN_ELO {
                assert!(l.lines <= last.lines && l.nodes == l.lines as u64 * 100);
            } else {
                assert!(l.nodes >= last.nodes);
            }
            last = l;
        }
    }

    #[test]
    fn a_level_uses_the_setting_measured_to_play_at_it() {
        for (setting, played) in MEASURED {
            assert_eq!(Level::new(played).setting, setting, "{played}");
            assert_eq!(Level::new(played).elo, played);
        }
        // Between two points, on the straight line between them.
        let ((s0, e0), (s1, e1)) = (MEASURED[0], MEASURED[1]);
        let middle = Level::new((e0 + e1) / 2).setting;
        assert!(middle.abs_diff((s0 + s1) / 2) <= 2, "{middle}");
        // The curve spans the scale: its ends are the weakest and the strongest setting.
        const { assert!(MEASURED[0].0 == MIN_SETTING && MEASURED[MEASURED.len() - 1].0 == MAX_ELO) };
        // Every level the API takes is on the curve: the weakest, 800, too.
        const { assert!(WEAKEST_LEVEL < MIN_ELO) };
        let level = Level::new(MIN_ELO);
        assert_eq!(level.elo, MIN_ELO);
        assert!((MEASURED[1].0..MEASURED[2].0).contains(&level.setting));
        // Below the weakest level (only a caller of this crate can ask), the weakest, and said so.
        for elo in [0, WEAKEST_LEVEL - 1, WEAKEST_LEVEL] {
            let level = Level::new(elo);
            assert_eq!(
                (level.elo, level.setting),
                (WEAKEST_LEVEL, MIN_SETTING),
                "{elo}"
            );
        }
        assert_eq!(Level::new(WEAKEST_LEVEL + 1).elo, WEAKEST_LEVEL + 1);
        assert!(Level::new(WEAKEST_LEVEL + 1).setting > MIN_SETTING);
        // Above the strongest level, the strongest, and said so.
        const { assert!(STRONGEST_LEVEL > 2000 && STRONGEST_LEVEL < MAX_ELO) };
        for elo in [STRONGEST_LEVEL, STRONGEST_LEVEL + 1, MAX_ELO] {
            let level = Level::new(elo);
            assert_eq!(
                (level.elo, level.setting),
                (STRONGEST_LEVEL, MAX_ELO),
                "{elo}"
            );
        }
        assert_eq!(Level::new(STRONGEST_LEVEL - 1).elo, STRONGEST_LEVEL - 1);
        let mut last = 0;
        for elo in MIN_ELO..=MAX_ELO {
            let setting = Level::new(elo).setting;
            assert!(setting >= last, "{elo}: {setting} < {last}");
            last = setting;
        }
        assert!(
            MEASURED
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
        );
    }

    #[test]
    fn weak_levels_vary_and_strong_levels_do_not() {
        let scores = [
            Score::Cp(50),
            Score::Cp(30),
            Score::Cp(-20),
            Score::Cp(-400),
        ];
        let mut rng = SplitMix64::new(7);
        let weak = Level::new(800);
        let mut seen = [0u32; 4];
        for _ in 0..2000 {
            seen[weak.choose(&scores, &mut rng)] += 1;
        }
        assert!(seen[0] > seen[1] && seen[1] > seen[2] && seen[2] > seen[3]);
        assert!(seen[1] > 200, "{seen:?}");
        let strong = Level::new(2950);
        for _ in 0..200 {
            assert_eq!(strong.choose(&scores, &mut rng), 0);
        }
    }

    #[test]
    fn a_growing_share_of_the_top_settings_moves_is_searched_as_one_line() {
        let share = |setting: u32| {
            let level = Level::at_setting(setting);
            let single = (0..4000u64)
                .filter(|&seed| level.lines_for(seed) == 1)
                .count();
            assert!((0..4000u64).all(|seed| [1, LINES].contains(&level.lines_for(seed))));
            single as f64 / 4000.0
        };
        assert_eq!(share(MIN_ELO), 0.0);
        assert_eq!(share(SINGLE_LINE_FROM), 0.0);
        assert_eq!(Level::at_setting(SINGLE_LINE_FROM).single_line_share, 0.0);
        assert_eq!(share(MAX_ELO), 1.0);
        let middle = Level::at_setting(2925);
        assert!((middle.single_line_share - 0.5).abs() < 1e-9);
        assert!((share(2925) - 0.5).abs() < 0.03, "{}", share(2925));
        assert!((share(2880) - 0.2).abs() < 0.03, "{}", share(2880));
        // The seed decides, so a level repeats; and not by the draw's own first number.
        assert_eq!(middle.lines_for(99), middle.lines_for(99));
        let agree = (0..4000u64)
            .filter(|&seed| {
                (middle.lines_for(seed) == 1) == (SplitMix64::new(seed).next_f64() < 0.5)
            })
            .count();
        assert!((1800..2200).contains(&agree), "{agree}");
    }

    #[test]
    fn a_line_to_mate_against_is_never_chosen_over_a_sound_one() {
        let scores = [Score::Cp(0), Score::Mate(-3)];
        let mut rng = SplitMix64::new(1);
        let weak = Level::new(800);
        assert!((0..1000).all(|_| weak.choose(&scores, &mut rng) == 0));
    }

    #[test]
    fn the_generator_is_reproducible() {
        let a: Vec<u64> = {
            let mut r = SplitMix64::new(42);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = SplitMix64::new(42);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        let mut r = SplitMix64::new(3);
        assert!(
            (0..1000)
                .map(|_| r.next_f64())
                .all(|x| (0.0..1.0).contains(&x))
        );
    }
}
