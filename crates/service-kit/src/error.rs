use std::io;
use std::net::SocketAddr;

/// Why a service could not start or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The gRPC address cannot be bound (in use, not local, ...).
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: io::Error },
    #[error("cannot read bound address: {0}")]
    BoundAddr(#[source] io::Error),
    /// The metrics address cannot be bound.
    #[error("cannot listen for metrics on {addr}: {source}")]
    MetricsListen { addr: SocketAddr, source: io::Error },
    #[error("cannot read the bound metrics address: {0}")]
    MetricsBoundAddr(#[source] io::Error),
    #[error("reflection setup failed: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The gRPC server itself failed.
    #[error("gRPC server failed: {0}")]
    Server(#[source] tonic::transport::Error),
}
