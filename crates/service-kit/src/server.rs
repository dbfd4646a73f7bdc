use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tonic::service::Routes;
use tonic::transport::server::Connected;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use crate::{
    ConnectionLimits, DeadlineLayer, FramingErrorsLayer, GrpcMetricsLayer, Incoming, Metrics,
    ServeError, Shutdown, grpc_server, serve_until_stopped,
};

/// Room above a service's largest field (its PGN limit) for the rest of a request message, so
/// that a PGN just over the limit gets the field violation naming it rather than the
/// transport's bare size error. One value for every service.
pub const MESSAGE_SLACK_BYTES: usize = 256 << 10;

/// The largest request message a service decodes when its largest field may hold
/// `largest_field` bytes: that plus [`MESSAGE_SLACK_BYTES`].
pub fn max_message_bytes(largest_field: usize) -> usize {
    largest_field.saturating_add(MESSAGE_SLACK_BYTES)
}

/// What a service serves and where: the start-up every service shares.
#[derive(Clone, Copy, Debug)]
pub struct Startup<'a> {
    /// The name on the announcement line: `rules`, `search`, `gateway`.
    pub service: &'static str,
    /// The gRPC address; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The metrics address; port 0 picks a free port.
    pub metrics_listen: SocketAddr,
    /// The gRPC services health reports SERVING.
    pub serving: &'a [&'a str],
    /// The gRPC services health reports NOT_SERVING (known, but not available here).
    pub not_serving: &'a [&'a str],
    /// Timeouts, keepalive and the per-address cap of the gRPC listener's connections.
    pub connections: ConnectionLimits,
}

/// A service after [`Startup::start`]: bound, metrics served, announced; gRPC not served yet.
#[derive(Debug)]
pub struct Started {
    /// The gRPC address actually bound (port 0 resolved).
    pub addr: SocketAddr,
    /// The metrics address actually bound.
    pub metrics_addr: SocketAddr,
    /// The gRPC listener's connections, with TCP_NODELAY (small gRPC frames must not wait for
    /// delayed ACKs), keepalive probes, and the limits of [`Startup::connections`]; serve them
    /// with a server from [`grpc_server`], which counts each connection's calls.
    pub incoming: Incoming,
    /// Changes the services' health from here on.
    pub health: HealthReporter,
    /// gRPC health and reflection, to which the service adds its own services.
    pub routes: Routes,
}

impl Startup<'_> {
    /// Sets up gRPC health (`serving` SERVING, `not_serving` NOT_SERVING, the whole server
    /// SERVING) and reflection, binds the gRPC listener, serves `GET /metrics` until
    /// `shutdown`, and prints the announcement line, `LISTENING service=<name> grpc=<addr>
    /// metrics=<addr>`, that tells supervisors (tests, `chess up`) where the service listens.
    pub async fn start(
        &self,
        metrics: &Metrics,
        shutdown: &Shutdown,
    ) -> Result<Started, ServeError> {
        let (health, routes) = health_and_reflection(self.serving, self.not_serving).await?;
        let incoming = Incoming::bind(self.listen, self.connections).await?;
        let addr = incoming.local_addr();
        let metrics_addr = serve_metrics(
            self.metrics_listen,
            self.connections,
            metrics.clone(),
            shutdown.clone(),
        )
        .await?;
        announce(self.service, addr, metrics_addr);
        Ok(Started {
            addr,
            metrics_addr,
            incoming,
            health,
            routes,
        })
    }

    /// The whole life of a plain gRPC service: [`Startup::start`], then health, reflection
    /// and the services `add` puts next to them served over HTTP/2 (with keepalive PINGs, and
    /// broken framing answered with INVALID_ARGUMENT) with gRPC metrics until `shutdown`
    /// fires; then no new calls, and the calls in flight get `grace` to finish (see
    /// [`serve_until_stopped`]). `health` gets the health reporter before the first call is
    /// served, for a service that changes its health later (the rules service reports
    /// NOT_SERVING when its store is damaged); the reporter lives as long as the server.
    pub async fn serve(
        &self,
        add: impl FnOnce(Routes) -> Routes,
        health: impl FnOnce(&HealthReporter),
        metrics: Metrics,
        shutdown: &Shutdown,
        grace: Duration,
    ) -> Result<(), ServeError> {
        let stop = shutdown.clone();
        let connections = self.connections;
        let layer_metrics = metrics.clone();
        let server = move |incoming: Incoming, routes: Routes| {
            grpc_server(&connections)
                .layer(GrpcMetricsLayer::new(layer_metrics))
                .layer(FramingErrorsLayer)
                .layer(DeadlineLayer)
                .add_routes(add(routes))
                .serve_with_incoming_shutdown(incoming, async move { stop.wait().await })
        };
        self.serve_with(server, health, &metrics, shutdown, grace)
            .await
    }

    /// The same life for a service that builds its own server (more listeners or other
    /// layers: the gateway, with gRPC-Web, CORS and the web app's listener): after
    /// [`Startup::start`] and the `health` hook, `server` makes the server's future from the
    /// bound listener and the health and reflection routes (it should stop taking calls when
    /// `shutdown` fires), which then runs as in [`Startup::serve`].
    pub async fn serve_with<F>(
        &self,
        server: impl FnOnce(Incoming, Routes) -> F,
        health: impl FnOnce(&HealthReporter),
        metrics: &Metrics,
        shutdown: &Shutdown,
        grace: Duration,
    ) -> Result<(), ServeError>
    where
        F: std::future::Future<Output = Result<(), tonic::transport::Error>>,
    {
        let started = self.start(metrics, shutdown).await?;
        health(&started.health);
        let served =
            serve_until_stopped(server(started.incoming, started.routes), shutdown, grace).await;
        drop(started.health);
        served
    }
}

/// Prints the one machine-readable line that tells supervisors where a service listens:
/// `LISTENING service=<name> grpc=<addr> metrics=<addr>`.
fn announce(service: &str, grpc: SocketAddr, metrics: SocketAddr) {
    println!("LISTENING service={service} grpc={grpc} metrics={metrics}");
    tracing::info!(service, %grpc, %metrics, "listening");
}

/// gRPC health (the named services SERVING or NOT_SERVING, and SERVING for the empty name,
/// the whole server, before this returns) and reflection (v1 and v1alpha, for older clients
/// such as some grpcurl builds) over the `chess.v1` descriptors and the health service's own.
async fn health_and_reflection(
    serving: &[&str],
    not_serving: &[&str],
) -> Result<(HealthReporter, Routes), ServeError> {
    let (reporter, health) = tonic_health::server::health_reporter();
    for name in serving {
        reporter
            .set_service_status(*name, ServingStatus::Serving)
            .await;
    }
    for name in not_serving {
        reporter
            .set_service_status(*name, ServingStatus::NotServing)
            .await;
    }
    reporter
        .set_service_status("", ServingStatus::Serving)
        .await;
    let builder = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(chess_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection = builder().build_v1()?;
    let reflection_alpha = builder().build_v1alpha()?;
    let routes = Routes::new(health)
        .add_service(reflection)
        .add_service(reflection_alpha);
    Ok((reporter, routes))
}

/// Serves `GET /metrics` in the Prometheus text format until shutdown, from a listener with
/// the same connection limits as the gRPC one (a scraper is a client like any other, and a
/// process out of descriptors must not spin here either); returns the bound address.
async fn serve_metrics(
    addr: SocketAddr,
    limits: ConnectionLimits,
    metrics: Metrics,
    shutdown: Shutdown,
) -> Result<SocketAddr, ServeError> {
    let mut incoming = Incoming::bind(addr, limits).await.map_err(|e| match e {
        ServeError::Listen { addr, source } => ServeError::MetricsListen { addr, source },
        ServeError::BoundAddr(source) => ServeError::MetricsBoundAddr(source),
        other => other,
    })?;
    let bound = incoming.local_addr();
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                a = incoming.next() => a,
                _ = shutdown.wait() => break,
            };
            let connection = match accepted {
                Some(Ok(connection)) => connection,
                Some(Err(_)) => continue,
                None => break,
            };
            let metrics = metrics.clone();
            let peer = connection.connect_info();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let response = metrics_response(&req, &metrics).map(|b| peer.answer(b));
                        async move { Ok::<_, Infallible>(response) }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(connection), service)
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
