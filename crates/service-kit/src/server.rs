use std::convert::Infallible;
use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use crate::{Metrics, Shutdown};

/// A bound gRPC listener and its actual address (port 0 resolved).
#[derive(Debug)]
pub struct Bound {
    pub addr: SocketAddr,
    /// Accepted connections get TCP_NODELAY (small gRPC frames must not wait for delayed
    /// ACKs) and keepalive probes.
    pub incoming: TcpIncoming,
}

/// Binds a listener; a clear message on failure (address in use, not local, ...).
pub async fn bind(addr: SocketAddr) -> Result<Bound, String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read bound address: {e}"))?;
    let incoming = TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(std::time::Duration::from_secs(60)));
    Ok(Bound { addr, incoming })
}

/// Prints the one machine-readable line that tells supervisors where a service listens:
/// `LISTENING service=<name> grpc=<addr> metrics=<addr>`.
pub fn announce(service: &str, grpc: SocketAddr, metrics: SocketAddr) {
    println!("LISTENING service={service} grpc={grpc} metrics={metrics}");
    tracing::info!(service, %grpc, %metrics, "listening");
}

/// gRPC health (every named service set SERVING, plus the empty name for the whole server,
/// before this returns) and reflection (v1 and v1alpha, for older clients such as some grpcurl
/// builds) over the `chess.v1` descriptors and the health service's own.
pub async fn health_and_reflection(
    serving: &[&str],
) -> Result<
    (
        tonic_health::server::HealthReporter,
        tonic_health::pb::health_server::HealthServer<impl tonic_health::pb::health_server::Health>,
        tonic_reflection::server::v1::ServerReflectionServer<
            impl tonic_reflection::server::v1::ServerReflection,
        >,
        tonic_reflection::server::v1alpha::ServerReflectionServer<
            impl tonic_reflection::server::v1alpha::ServerReflection,
        >,
    ),
    String,
> {
    let (reporter, health) = tonic_health::server::health_reporter();
    for name in serving {
        reporter
            .set_service_status(*name, tonic_health::ServingStatus::Serving)
            .await;
    }
    reporter
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    let builder = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(chess_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection = builder()
        .build_v1()
        .map_err(|e| format!("reflection setup failed: {e}"))?;
    let reflection_alpha = builder()
        .build_v1alpha()
        .map_err(|e| format!("reflection setup failed: {e}"))?;
    Ok((reporter, health, reflection, reflection_alpha))
}

/// Serves `GET /metrics` in the Prometheus text format until shutdown; returns the bound
/// address.
pub async fn serve_metrics(
    addr: SocketAddr,
    metrics: Metrics,
    shutdown: Shutdown,
) -> Result<SocketAddr, String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = shutdown.wait() => break,
            };
            let Ok((stream, _)) = accepted else { continue };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let metrics = metrics.clone();
                        async move { Ok::<_, Infallible>(metrics_response(&req, &metrics)) }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(bound)
}

fn metrics_response<B>(req: &Request<B>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::new()));
    match req.uri().path() {
        "/metrics" => {
            *resp.body_mut() = Full::new(Bytes::from(metrics.encode()));
            resp.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
        }
        "/healthz" => *resp.body_mut() = Full::new(Bytes::from_static(b"ok\n")),
        _ => *resp.status_mut() = http::StatusCode::NOT_FOUND,
    }
    resp
}
