//! The settings of a run that a checkpoint records, and the check that a resumed run keeps
//! them.
//!
//! Two kinds: those that say *what* is learnt (the target's weight on the game result, which
//! positions are trained on and which are held out, the output weights' bound), which a
//! resumed run must keep, since a change would train the rest of the run towards another
//! target without a word; and those of the schedule (rate, batch, seed), which a resumed run
//! may change and is told it did.

use std::path::Path;

use super::TrainConfig;
use crate::Error;

/// The flags a resumed run must give as its checkpoint's run did.
const KEPT: [&str; 5] = [
    "--wdl",
    "--mirror",
    "--dedup",
    "--validation",
    "--output-weight-limit",
];

/// A run's settings as `(flag, value)` pairs, in a fixed order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RunSettings(Vec<(String, String)>);

impl RunSettings {
    /// The settings of a run of `cfg` whose output weights are bounded by `out_limit`.
    pub(super) fn of(cfg: &TrainConfig, out_limit: i32) -> RunSettings {
        // `{}` writes an f32 as the shortest text that reads back as the same value, so equal
        // values give equal text.
        let pairs = [
            ("--wdl", cfg.wdl.to_string()),
            ("--mirror", cfg.mirror.to_string()),
            ("--dedup", cfg.dedup.to_string()),
            ("--validation", cfg.validation.to_string()),
            ("--output-weight-limit", out_limit.to_string()),
            ("--lr", cfg.lr.to_string()),
            (
                "--lr-drop",
                cfg.lr_drop.map_or("none".into(), |e| e.to_string()),
            ),
            ("--batch", cfg.batch.to_string()),
            ("--seed", cfg.seed.to_string()),
        ];
        RunSettings(pairs.map(|(k, v)| (k.to_owned(), v)).into())
    }

    /// One `flag value` line each.
    pub(super) fn to_text(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }

    /// Reads [`to_text`](Self::to_text)'s lines back.
    pub(super) fn parse(text: &str) -> Result<RunSettings, String> {
        let pairs = text
            .lines()
            .map(|line| {
                line.split_once(' ')
                    .filter(|(k, v)| k.starts_with("--") && !v.is_empty())
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .ok_or_else(|| format!("settings line {line:?} is not `--flag value`"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RunSettings(pairs))
    }

    /// One line for a log: `--wdl 0, --mirror true, ...`.
    pub(super) fn one_line(&self) -> String {
        let pairs: Vec<String> = self.0.iter().map(|(k, v)| format!("{k} {v}")).collect();
        pairs.join(", ")
    }

    fn get(&self, flag: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == flag)
            .map(|(_, v)| v.as_str())
    }

    /// Checks a run given `self` against the settings its checkpoint `path` recorded:
    /// refuses a change of a kept setting, naming each one changed; returns a line for each
    /// change of the schedule, for the log.
    pub(super) fn check_resume(
        &self,
        recorded: &RunSettings,
        path: &Path,
    ) -> Result<Vec<String>, Error> {
        let mut refused = Vec::new();
        let mut notes = Vec::new();
        for (flag, now) in &self.0 {
            let Some(then) = recorded.get(flag) else {
                continue;
            };
            if then == now {
                continue;
            }
            if KEPT.contains(&flag.as_str()) {
                refused.push(format!("{flag} {then} (given: {now})"));
            } else {
                notes.push(format!(
                    "train: resuming with {flag} {now}; the run began with {then}"
                ));
            }
        }
        if refused.is_empty() {
            Ok(notes)
        } else {
            Err(Error::Usage(format!(
                "checkpoint {} was trained with {}: resume it with the same values, or start a new run",
                path.display(),
                refused.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        cfg: TrainConfig,
    }

    fn cfg(args: &[&str]) -> TrainConfig {
        let base = ["t", "--data", "d.bin", "--out", "o.nnue"];
        Cli::parse_from(base.iter().chain(args)).cfg
    }

    #[test]
    fn settings_round_trip_as_text() {
        let s = RunSettings::of(&cfg(&["--wdl", "0.3", "--mirror", "--lr-drop", "4"]), 20);
        let text = s.to_text();
        assert!(text.starts_with("--wdl 0.3\n--mirror true\n"), "{text}");
        assert!(text.contains("--lr-drop 4\n"), "{text}");
        assert_eq!(RunSettings::parse(&text).unwrap(), s);
        let e = RunSettings::parse("--wdl\n").unwrap_err();
        assert!(e.contains("\"--wdl\""), "{e}");
    }

    #[test]
    fn a_resume_keeps_the_target_and_may_change_the_schedule() {
        let path = Path::new("run.ckpt");
        let then = RunSettings::of(&cfg(&["--wdl", "0.3", "--dedup"]), 20);
        // The default weight changed since: a resume without --wdl is refused.
        let e = RunSettings::of(&cfg(&["--dedup"]), 20)
            .check_resume(&then, path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("run.ckpt was trained with --wdl 0.3 (given: 0)"),
            "{e}"
        );
        // Every kept setting changed is named.
        let e = RunSettings::of(&cfg(&["--wdl", "0.3", "--mirror"]), 10)
            .check_resume(&then, path)
            .unwrap_err()
            .to_string();
        for part in [
            "--mirror false (given: true)",
            "--dedup true (given: false)",
            "--output-weight-limit 20 (given: 10)",
        ] {
            assert!(e.contains(part), "{e}");
        }
        // The schedule may change, and the log says so.
        let notes = RunSettings::of(
            &cfg(&[
                "--wdl",
                "0.3",
                "--dedup",
                "--lr",
                "0.0005",
                "--lr-drop",
                "6",
            ]),
            20,
        )
        .check_resume(&then, path)
        .unwrap();
        assert_eq!(
            notes,
            [
                "train: resuming with --lr 0.0005; the run began with 0.001",
                "train: resuming with --lr-drop 6; the run began with none",
            ]
        );
        // A flag the checkpoint did not record is not checked.
        let old = RunSettings::parse("--wdl 0.3\n").unwrap();
        let notes = RunSettings::of(&cfg(&["--wdl", "0.3", "--mirror"]), 20)
            .check_resume(&old, path)
            .unwrap();
        assert!(notes.is_empty(), "{notes:?}");
    }
}
