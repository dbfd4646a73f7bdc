//! Engine settings: [`EngineOptions`], and the options that set them by text (as UCI
//! `setoption` does), each an [`EngineOption`] with the name, kind, default and range that
//! [`OPTIONS`] lists.

use std::fmt;

/// Engine settings. The names in [`OPTIONS`] set them by text (as UCI `setoption` does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Transposition table size in MiB.
    pub hash_mb: usize,
    /// Search threads (Lazy SMP: helpers share the hash table).
    pub threads: usize,
    /// Principal variations to report.
    pub multipv: usize,
    /// Milliseconds kept in hand per move for GUI and transport lag.
    pub move_overhead_ms: u64,
    /// Report win/draw/loss chances (UCI_ShowWDL).
    pub show_wdl: bool,
    /// The GUI may send `go ponder` (UCI Ponder); the engine only records it.
    pub ponder: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hash_mb: 16,
            threads: 1,
            multipv: 1,
            move_overhead_ms: 10,
            show_wdl: false,
            ponder: false,
        }
    }
}

/// An option the engine understands. [`Engine::set_option`](crate::Engine::set_option) matches
/// on it, one arm per option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineOption {
    /// `Hash`: [`EngineOptions::hash_mb`].
    Hash,
    /// `Threads`: [`EngineOptions::threads`].
    Threads,
    /// `MultiPV`: [`EngineOptions::multipv`].
    MultiPv,
    /// `Move Overhead`: [`EngineOptions::move_overhead_ms`].
    MoveOverhead,
    /// `UCI_ShowWDL`: [`EngineOptions::show_wdl`].
    ShowWdl,
    /// `Ponder`: [`EngineOptions::ponder`].
    Ponder,
    /// `EvalFile`: `default` (the embedded trained network), `hand` (the hand-written
    /// evaluation) or the path of a network file.
    EvalFile,
    /// `TablePath`: a folder of our endgame tables (`chess tb generate`), or `<empty>` for
    /// none.
    TablePath,
}

impl EngineOption {
    /// Every option, in the order UCI lists them.
    pub const ALL: [EngineOption; 8] = [
        EngineOption::Hash,
        EngineOption::Threads,
        EngineOption::MultiPv,
        EngineOption::MoveOverhead,
        EngineOption::ShowWdl,
        EngineOption::Ponder,
        EngineOption::EvalFile,
        EngineOption::TablePath,
    ];

    /// The option's UCI name, type, default and range.
    pub const fn spec(self) -> OptionSpec {
        let (name, kind) = match self {
            EngineOption::Hash => (
                "Hash",
                OptionKind::Spin {
                    default: 16,
                    min: 1,
                    max: 65_536,
                },
            ),
            EngineOption::Threads => (
                "Threads",
                OptionKind::Spin {
                    default: 1,
                    min: 1,
                    max: 256,
                },
            ),
            EngineOption::MultiPv => (
                "MultiPV",
                OptionKind::Spin {
                    default: 1,
                    min: 1,
                    max: 256,
                },
            ),
            EngineOption::MoveOverhead => (
                "Move Overhead",
                OptionKind::Spin {
                    default: 10,
                    min: 0,
                    max: 5_000,
                },
            ),
            EngineOption::ShowWdl => ("UCI_ShowWDL", OptionKind::Check { default: false }),
            EngineOption::Ponder => ("Ponder", OptionKind::Check { default: false }),
            EngineOption::EvalFile => ("EvalFile", OptionKind::String { default: "default" }),
            EngineOption::TablePath => ("TablePath", OptionKind::String { default: NO_TABLES }),
        };
        OptionSpec { name, kind }
    }

    /// The option called `name` (case-insensitive; blanks around it are ignored).
    pub fn from_name(name: &str) -> Option<EngineOption> {
        let name = name.trim();
        EngineOption::ALL
            .into_iter()
            .find(|o| o.spec().name.eq_ignore_ascii_case(name))
    }
}

/// `TablePath`'s value for "no tables" (as UCI engines write an empty path).
pub const NO_TABLES: &str = "<empty>";

/// The kind and range of an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Spin {
        default: i64,
        min: i64,
        max: i64,
    },
    Check {
        default: bool,
    },
    /// Free text (UCI `type string`).
    String {
        default: &'static str,
    },
}

/// An option as UCI states it: its name and its kind, default and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
}

impl OptionSpec {
    /// `value` as this spin option's integer, within its range.
    pub(crate) fn spin(&self, value: &str) -> Result<i64, OptionError> {
        match self.kind {
            OptionKind::Spin { min, max, .. } => value
                .parse()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(|| self.invalid(value)),
            _ => Err(self.invalid(value)),
        }
    }

    /// `value` as this check option's `true` or `false` (case-insensitive).
    pub(crate) fn check(&self, value: &str) -> Result<bool, OptionError> {
        match (self.kind, value.to_ascii_lowercase().as_str()) {
            (OptionKind::Check { .. }, "true") => Ok(true),
            (OptionKind::Check { .. }, "false") => Ok(false),
            _ => Err(self.invalid(value)),
        }
    }

    fn invalid(&self, value: &str) -> OptionError {
        let expected = match self.kind {
            OptionKind::Spin { min, max, .. } => format!("an integer from {min} to {max}"),
            OptionKind::Check { .. } => "true or false".to_owned(),
            OptionKind::String { .. } => "text".to_owned(),
        };
        OptionError::Invalid {
            name: self.name,
            value: value.to_owned(),
            expected,
        }
    }
}

/// Every option, with the UCI name, type, default and range: [`EngineOption::spec`] of each
/// of [`EngineOption::ALL`].
pub const OPTIONS: &[OptionSpec] = &{
    let mut specs = [EngineOption::Hash.spec(); EngineOption::ALL.len()];
    let mut i = 0;
    while i < specs.len() {
        specs[i] = EngineOption::ALL[i].spec();
        i += 1;
    }
    specs
};

/// Why `set_option` refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    Unknown(String),
    Invalid {
        name: &'static str,
        value: String,
        expected: String,
    },
    /// `EvalFile` named a file that is not a usable network; the evaluation is unchanged.
    EvalFile {
        value: String,
        reason: String,
    },
    /// `TablePath` named a folder whose tables cannot be used; the tables are unchanged.
    TablePath {
        value: String,
        reason: String,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::Unknown(n) => write!(f, "unknown option {n:?}"),
            OptionError::Invalid {
                name,
                value,
                expected,
            } => write!(f, "invalid value {value:?} for {name}: expected {expected}"),
            OptionError::EvalFile { value, reason } => write!(
                f,
                "EvalFile {value:?} not loaded ({reason}); the evaluation is unchanged \
                 (expected hand, default or the path of a network file)"
            ),
            OptionError::TablePath { value, reason } => write!(
                f,
                "TablePath {value:?} not loaded ({reason}); the tables are unchanged \
                 (expected {NO_TABLES} or a folder of tables from `chess tb generate`)"
            ),
        }
    }
}

impl std::error::Error for OptionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_list_every_option_once_in_order() {
        assert_eq!(OPTIONS.len(), EngineOption::ALL.len());
        for (spec, option) in OPTIONS.iter().zip(EngineOption::ALL) {
            assert_eq!(*spec, option.spec());
            assert_eq!(EngineOption::from_name(spec.name), Some(option));
            let shouted = format!("  {}  ", spec.name.to_ascii_uppercase());
            assert_eq!(EngineOption::from_name(&shouted), Some(option));
        }
        assert_eq!(EngineOption::from_name("Hashes"), None);
        assert_eq!(EngineOption::from_name(""), None);
    }

    #[test]
    fn values_are_checked_against_the_kind() {
        let hash = EngineOption::Hash.spec();
        assert_eq!(hash.spin("64"), Ok(64));
        assert_eq!(
            hash.spin("0"),
            Err(OptionError::Invalid {
                name: "Hash",
                value: "0".into(),
                expected: "an integer from 1 to 65536".into(),
            })
        );
        assert!(hash.check("true").is_err());
        let wdl = EngineOption::ShowWdl.spec();
        assert_eq!(wdl.check("TRUE"), Ok(true));
        assert_eq!(wdl.check("false"), Ok(false));
        assert_eq!(
            wdl.check("yes"),
            Err(OptionError::Invalid {
                name: "UCI_ShowWDL",
                value: "yes".into(),
                expected: "true or false".into(),
            })
        );
        assert!(wdl.spin("1").is_err());
    }
}
