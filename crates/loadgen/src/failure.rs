//! Why the program stopped early, and the exit status that says so.

/// Exit status of a run that could not be done (target unreachable, file unreadable, ...).
const EXIT_FAILURE: u8 = 1;
/// Exit status of bad flags (clap uses the same).
const EXIT_USAGE: u8 = 2;

/// Why the program stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Bad flags or input files: exit 2.
    Usage(String),
    /// The run could not be done: exit 1.
    Run(String),
}

impl Failure {
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Run(_) => EXIT_FAILURE,
        }
    }
}
