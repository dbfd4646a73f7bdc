//! How a command fails: the message for stderr and the process exit code.

use std::fmt;
use std::io;

/// Exit code for bad input, a failed check or an I/O failure.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a usage error (clap uses the same code for bad arguments).
pub const EXIT_USAGE: u8 = 2;

/// A failed command. `main` prints the message (if any) as `error: ...` and exits with the code.
#[derive(Debug)]
pub enum CliError {
    /// A problem to report in one line.
    Message { code: u8, text: String },
    /// Writing the output failed.
    Output(io::Error),
}

impl CliError {
    /// Invalid input or a failed check (exit 1).
    pub fn failure(text: impl Into<String>) -> CliError {
        CliError::Message {
            code: EXIT_FAILURE,
            text: text.into(),
        }
    }

    /// A usage error such as a malformed input file (exit 2).
    pub fn usage(text: impl Into<String>) -> CliError {
        CliError::Message {
            code: EXIT_USAGE,
            text: text.into(),
        }
    }

    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Message { code, .. } => *code,
            // Output cut short is not success (a C tool would die of SIGPIPE), but a closed
            // pipe (`chess moves | head -1`) is the reader's choice and needs no message.
            CliError::Output(_) => EXIT_FAILURE,
        }
    }

    /// The line to print on stderr, without the `error: ` prefix.
    pub fn message(&self) -> Option<String> {
        match self {
            CliError::Message { text, .. } => Some(text.clone()),
            CliError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => None,
            CliError::Output(e) => Some(format!("cannot write output: {e}")),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Some(m) => f.write_str(&m),
            None => write!(f, "exit code {}", self.exit_code()),
        }
    }
}

impl std::error::Error for CliError {}

/// Errors writing to stdout.
impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError::Output(e)
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;
