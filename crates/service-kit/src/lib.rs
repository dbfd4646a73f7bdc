//! # chess-service-kit
//!
//! What every chess service shares: command-line/environment configuration, tracing, gRPC
//! health and reflection, Prometheus metrics on a separate port, graceful shutdown on
//! SIGTERM/SIGINT, the announcement line tests and `chess up` read to find the ports, the
//! listener that bounds what idle and hostile connections can hold (first-byte and idle
//! timeouts, keepalive PINGs, a cap per client address, an accept loop that waits when out
//! of descriptors), and `INVALID_ARGUMENT` for broken gRPC framing.

#![forbid(unsafe_code)]

mod compression;
mod config;
mod connections;
mod deadline;
mod error;
mod framing;
mod handover;
mod metrics;
mod server;
mod shutdown;
mod small_answers;
mod telemetry;

pub use compression::{GZIP_MIN_BYTES, gzip_if_large};
pub use config::{CommonArgs, LogFormat, defaults};
pub use connections::{
    Connection, ConnectionLimits, Incoming, OpenCallsLayer, OpenCallsService, Peer, grpc_server,
    remote_addr,
};
pub use deadline::{DeadlineLayer, parse_grpc_timeout};
pub use error::ServeError;
pub use framing::{FramingErrors, FramingErrorsLayer};
pub use handover::hand_over;
pub use metrics::{GrpcMetricsLayer, Metrics};
pub use server::{MESSAGE_SLACK_BYTES, Started, Startup, max_message_bytes};
pub use shutdown::{Shutdown, serve_until_stopped};
pub use telemetry::{LogFilterError, init_tracing};

/// For [`small_answers!`]: the calling crate's `tonic` need not be named in the macro.
#[doc(hidden)]
pub use tonic as __tonic;

pub use prometheus_client::metrics::counter::Counter as MetricCounter;
pub use prometheus_client::metrics::gauge::Gauge as MetricGauge;
pub use prometheus_client::metrics::histogram::Histogram as MetricHistogram;
