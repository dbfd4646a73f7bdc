use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::ParseError;

use crate::LogFormat;

/// Installs the global subscriber. Logs go to stderr so stdout stays free for the
/// machine-readable announcement line.
pub fn init_tracing(format: LogFormat, filter: &str) -> Result<(), LogFilterError> {
    let filter = EnvFilter::try_new(filter).map_err(|source| LogFilterError {
        filter: filter.to_owned(),
        source,
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A second init in one process (tests, `chess up`) keeps the first subscriber.
    let _ = result;
    Ok(())
}

/// `--log` is not a `tracing` filter.
#[derive(Debug, thiserror::Error)]
#[error("invalid log filter {filter:?}: {source}")]
pub struct LogFilterError {
    pub filter: String,
    pub source: ParseError,
}
