//! Levelled play over UCI: the options `UCI_LimitStrength` and `UCI_Elo`, played as the search
//! service's BestMove plays a level ([`Level`]): a small engine (1 MiB table) cleared before
//! every move, the level's node budget and depth cap, its top lines searched, and one of them
//! drawn with the level's temperature. The same level over UCI and over gRPC is the same
//! player, so matches over UCI measure the levels the API offers. `LevelSetting` (0, or
//! 400-3000) plays a setting of the uncalibrated scale instead, as the calibration matches do.

use chess_rules::{Move, Position};
use chess_search::{
    Engine, EngineOptions, EvalSource, Level, MAX_ELO, MIN_ELO, MIN_SETTING, SearchLimits,
    SearchResult, SplitMix64,
};

/// `UCI_Elo`'s default, as a GUI shows it before the user chooses.
const DEFAULT_ELO: u32 = 1500;

/// The table of the levelled engine, as the search service's.
const PLAY_HASH_MB: usize = 1;

/// The strength settings and the engine that plays a level.
pub struct Strength {
    limit: bool,
    elo: u32,
    /// `LevelSetting`: a setting on the uncalibrated scale, played instead of `UCI_Elo`'s
    /// calibrated one (for the calibration matches); `None` for 0.
    setting: Option<u32>,
    /// Seeds the draw of each move: a fresh seed per process, so games differ.
    rng: SplitMix64,
    /// Made at the first levelled move with the main engine's evaluation; dropped when that
    /// changes.
    play: Option<Engine>,
}

/// What setting one of the strength options did.
pub enum Set {
    /// Not a strength option: the engine's.
    NotMine,
    /// Set; the text describes the level now in force, if any.
    Done(Option<String>),
    Invalid(String),
}

impl Strength {
    pub fn new() -> Strength {
        Strength {
            limit: false,
            elo: DEFAULT_ELO,
            setting: None,
            rng: SplitMix64::new(SplitMix64::random_seed()),
            play: None,
        }
    }

    /// The `option` lines of `uci`.
    pub fn option_lines() -> [String; 3] {
        [
            "option name UCI_LimitStrength type check default false".to_owned(),
            format!(
                "option name UCI_Elo type spin default {DEFAULT_ELO} min {MIN_ELO} max {MAX_ELO}"
            ),
            format!("option name LevelSetting type spin default 0 min 0 max {MAX_ELO}"),
        ]
    }

    /// `setoption` of `name` (any case) to `value`.
    pub fn set_option(&mut self, name: &str, value: &str) -> Set {
        let name = name.trim();
        let value = value.trim();
        if name.eq_ignore_ascii_case("UCI_LimitStrength") {
            match value.to_ascii_lowercase().as_str() {
                "true" => self.limit = true,
                "false" => self.limit = false,
                _ => {
                    return Set::Invalid(format!(
                        "UCI_LimitStrength takes true or false, not {value:?}"
                    ));
                }
            }
        } else if name.eq_ignore_ascii_case("UCI_Elo") {
            match value.parse::<u32>() {
                Ok(elo) if (MIN_ELO..=MAX_ELO).contains(&elo) => self.elo = elo,
                _ => {
                    return Set::Invalid(format!(
                        "UCI_Elo takes a whole number from {MIN_ELO} to {MAX_ELO}, not {value:?}"
                    ));
                }
            }
        } else if name.eq_ignore_ascii_case("LevelSetting") {
            match value.parse::<u32>() {
                Ok(0) => self.setting = None,
                Ok(s) if (MIN_SETTING..=MAX_ELO).contains(&s) => self.setting = Some(s),
                _ => {
                    return Set::Invalid(format!(
                        "LevelSetting takes 0 (the calibrated level of UCI_Elo) or a whole \
                         number from {MIN_SETTING} to {MAX_ELO}, not {value:?}"
                    ));
                }
            }
        } else {
            return Set::NotMine;
        }
        Set::Done(self.level().map(|l| {
            let text = describe(&l);
            // A raw setting is what was asked; a calibrated level differs from `UCI_Elo` only
            // above the strongest level (every `UCI_Elo` from 800 up is above the weakest).
            if self.setting.is_none() && l.elo < self.elo {
                format!("{text} (UCI_Elo {} is above the strongest level)", self.elo)
            } else {
                text
            }
        }))
    }

    /// The level in force: `None` at full strength.
    pub fn level(&self) -> Option<Level> {
        self.limit.then(|| match self.setting {
            Some(setting) => Level::at_setting(setting),
            None => Level::new(self.elo),
        })
    }

    /// The main engine's evaluation changed: the levelled engine follows at its next move.
    pub fn evaluation_changed(&mut self) {
        self.play = None;
    }

    /// Readies a levelled move: the play engine (with `source`, the main engine's evaluation)
    /// cleared and set to the level's lines, the limits within the level, and the seed of the
    /// draw.
    pub fn prepare(
        &mut self,
        level: &Level,
        source: &EvalSource,
        limits: SearchLimits,
    ) -> (&mut Engine, SearchLimits, u64) {
        let seed = self.rng.next_u64();
        let engine = self.play.get_or_insert_with(|| {
            let options = EngineOptions {
                hash_mb: PLAY_HASH_MB,
                ..EngineOptions::default()
            };
            Engine::with_source(options, source.clone())
        });
        engine.new_game();
        // MultiPV's range is 1..=256 and a level searches at most 8 lines.
        let _ = engine.set_option("MultiPV", &level.lines_for(seed).to_string());
        (engine, level.limit(limits), seed)
    }
}

/// The move a level plays from a finished search, and the reply it expects.
pub fn levelled_move(
    level: &Level,
    position: &Position,
    result: &SearchResult,
    seed: u64,
) -> (Option<Move>, Option<Move>) {
    match level.pick(position, &result.lines, &mut SplitMix64::new(seed)) {
        Some(line) => (line.pv.first().copied(), line.pv.get(1).copied()),
        None => (result.best_move, result.ponder),
    }
}

/// `level 1500: setting 1626, 7003 nodes, depth 6, MultiPV 4, temperature 123 cp`; where a
/// share of the moves is searched as one line, `MultiPV 4 (1 for 50 % of moves)`.
fn describe(level: &Level) -> String {
    let share = level.single_line_share;
    let lines = if level.lines > 1 && share > 0.0 {
        format!("{} (1 for {:.0} % of moves)", level.lines, share * 100.0)
    } else {
        level.lines.to_string()
    };
    format!(
        "level {}: setting {}, {} nodes, depth {}, MultiPV {lines}, temperature {:.0} cp",
        level.elo, level.setting, level.nodes, level.depth, level.temperature_cp
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_search::{STRONGEST_LEVEL, WEAKEST_LEVEL};

    #[test]
    fn the_options_are_read_and_bad_values_refused() {
        let mut s = Strength::new();
        assert!(s.level().is_none());
        assert!(matches!(s.set_option("Hash", "16"), Set::NotMine));
        assert!(matches!(s.set_option("uci_elo", "1350"), Set::Done(None)));
        assert!(s.level().is_none(), "UCI_Elo alone does not limit");
        match s.set_option("UCI_LimitStrength", "TRUE") {
            Set::Done(Some(text)) => assert!(text.starts_with("level 1350: setting "), "{text}"),
            _ => panic!("not set"),
        }
        assert_eq!(s.level().map(|l| l.elo), Some(1350));
        for (name, value) in [
            ("UCI_Elo", "799"),
            ("UCI_Elo", "3001"),
            ("UCI_Elo", "strong"),
            ("UCI_LimitStrength", "yes"),
        ] {
            match s.set_option(name, value) {
                Set::Invalid(e) => assert!(e.contains(value), "{e}"),
                _ => panic!("{name} {value} accepted"),
            }
        }
        assert_eq!(
            s.level().map(|l| l.elo),
            Some(1350),
            "a refused value changes nothing"
        );
        // A raw setting, for the calibration matches, and back to the calibrated level.
        assert!(matches!(
            s.set_option("LevelSetting", "2700"),
            Set::Done(Some(_))
        ));
        assert_eq!(s.level(), Some(Level::at_setting(2700)));
        // A setting where half the moves search one line says so.
        match s.set_option("LevelSetting", "2925") {
            Set::Done(Some(text)) => {
                assert!(
                    text.contains(", MultiPV 4 (1 for 50 % of moves), "),
                    "{text}"
                )
            }
            _ => panic!("not set"),
        }
        assert!(
            matches!(s.set_option("LevelSetting", "5"), Set::Invalid(e) if e.contains("\"5\""))
        );
        assert!(matches!(
            s.set_option("LevelSetting", "0"),
            Set::Done(Some(_))
        ));
        assert_eq!(s.level(), Some(Level::new(1350)));
        // Above the strongest level: played as it, and said so.
        match s.set_option("UCI_Elo", "3000") {
            Set::Done(Some(text)) => assert!(
                text.starts_with(&format!("level {STRONGEST_LEVEL}: setting 3000,"))
                    && text.ends_with("(UCI_Elo 3000 is above the strongest level)"),
                "{text}"
            ),
            _ => panic!("3000 not set"),
        }
        // The weakest UCI_Elo is on the curve: a setting below 800, more lines, played as asked.
        match s.set_option("UCI_Elo", "800") {
            Set::Done(Some(text)) => assert!(
                text.starts_with("level 800: setting 5") && text.ends_with(" cp"),
                "{text}"
            ),
            _ => panic!("800 not set"),
        }
        assert!(
            s.level()
                .is_some_and(|l| l.lines > 4 && l.elo > WEAKEST_LEVEL)
        );
        // The raw settings reach below 800, down to the weakest.
        assert!(matches!(
            s.set_option("LevelSetting", &MIN_SETTING.to_string()),
            Set::Done(Some(_))
        ));
        assert_eq!(s.level(), Some(Level::at_setting(MIN_SETTING)));
        let below = (MIN_SETTING - 1).to_string();
        assert!(
            matches!(s.set_option("LevelSetting", &below), Set::Invalid(e) if e.contains(&below))
        );
        assert!(matches!(
            s.set_option("UCI_LimitStrength", "false"),
            Set::Done(None)
        ));
        assert!(s.level().is_none());
    }

    /// A weak level plays legal moves within its budget, and not always the same one; the
    /// same seed gives the same move.
    #[test]
    fn a_weak_level_varies_within_its_budget() {
        let mut s = Strength::new();
        let level = Level::new(800);
        let position = Position::startpos();
        let mut played = std::collections::BTreeSet::new();
        for _ in 0..12 {
            let (engine, limits, seed) =
                s.prepare(&level, &EvalSource::Hand, SearchLimits::default());
            assert_eq!(limits.nodes, Some(level.nodes));
            assert_eq!(limits.depth, Some(level.depth));
            let result = engine.go(&position, &[], limits, |_| {}).wait();
            assert!(result.lines.len() > 1, "a level searches several lines");
            let (best, _) = levelled_move(&level, &position, &result, seed);
            let best = best.expect("a move");
            assert!(position.is_legal(best));
            assert_eq!(
                levelled_move(&level, &position, &result, seed).0,
                Some(best)
            );
            played.insert(best.to_string());
        }
        assert!(played.len() > 1, "always {played:?}");
    }
}
