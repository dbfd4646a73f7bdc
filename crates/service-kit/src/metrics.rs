use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use http_body::Frame;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tonic::body::Body;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    method: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
}

fn latency_histogram() -> Histogram {
    // 100 µs to ~100 s.
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.0001, 2.0, 21,
    ))
}

/// A service's Prometheus registry with the standard gRPC request metrics:
/// `grpc_server_handled_total{method,code}` and
/// `grpc_server_handling_seconds{method}` (a histogram).
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    handled: Family<CallLabels, Counter>,
    latency: Family<MethodLabels, Histogram, fn() -> Histogram>,
    in_flight: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry whose metrics carry the prefix `chess` and a `service` label.
    pub fn new(service: &str) -> Metrics {
        let mut registry = Registry::with_prefix_and_labels(
            "chess",
            [(
                std::borrow::Cow::Borrowed("service"),
                std::borrow::Cow::Owned(service.to_owned()),
            )]
            .into_iter(),
        );
        let handled = Family::<CallLabels, Counter>::default();
        let latency = Family::<MethodLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        let in_flight = Gauge::default();
        registry.register(
            "grpc_server_handled",
            "gRPC calls completed, by method and status code",
            handled.clone(),
        );
        registry.register(
            "grpc_server_handling_seconds",
            "gRPC call latency from request to the end of the response",
            latency.clone(),
        );
        registry.register(
            "grpc_server_in_flight",
            "gRPC calls in progress",
            in_flight.clone(),
        );
        Metrics {
            registry: Arc::new(Mutex::new(registry)),
            handled,
            latency,
            in_flight,
        }
    }

    /// Registers a gauge of the service's own (e.g. queue depth).
    pub fn gauge(&self, name: &str, help: &str) -> Gauge {
        let g = Gauge::default();
        if let Ok(mut r) = self.registry.lock() {
            r.register(name, help, g.clone());
        }
        g
    }

    /// Registers a counter of the service's own.
    pub fn counter(&self, name: &str, help: &str) -> Counter {
        let c = Counter::default();
        if let Ok(mut r) = self.registry.lock() {
            r.register(name, help, c.clone());
        }
        c
    }

    /// Registers a histogram of the service's own with the given bucket upper bounds.
    pub fn histogram(&self, name: &str, help: &str, buckets: &[f64]) -> Histogram {
        let h = Histogram::new(buckets.iter().copied());
        if let Ok(mut r) = self.registry.lock() {
            r.register(name, help, h.clone());
        }
        h
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Ok(r) = self.registry.lock() {
            let _ = prometheus_client::encoding::text::encode(&mut out, &r);
        }
        out
    }

    fn record(&self, method: &str, code: &str, started: Instant) {
        self.handled
            .get_or_create(&CallLabels {
                method: method.to_owned(),
                code: code.to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&MethodLabels {
                method: method.to_owned(),
            })
            .observe(started.elapsed().as_secs_f64());
        self.in_flight.dec();
    }
}

/// Tower layer that records every gRPC call in [`Metrics`]: the status code comes from the
/// response headers (trailers-only errors) or from the trailers at the end of the body.
#[derive(Clone, Debug)]
pub struct GrpcMetricsLayer {
    metrics: Metrics,
}

impl GrpcMetricsLayer {
    pub fn new(metrics: Metrics) -> Self {
        GrpcMetricsLayer { metrics }
    }
}

impl<S> tower::Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetricsService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        GrpcMetricsService {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct GrpcMetricsService<S> {
    inner: S,
    metrics: Metrics,
}

fn code_name(value: &[u8]) -> String {
    let n: i32 = std::str::from_utf8(value)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    format!("{:?}", tonic::Code::from_i32(n))
}

impl<S, ReqBody> tower::Service<http::Request<ReqBody>> for GrpcMetricsService<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<Body>> + Send,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let call = InFlight::start(&self.metrics, req.uri().path());
        let fut = self.inner.call(req);
        Box::pin(async move {
            match fut.await {
                Ok(resp) => {
                    if let Some(code) = resp.headers().get("grpc-status") {
                        call.finish(&code_name(code.as_bytes()));
                        return Ok(resp);
                    }
                    let (parts, body) = resp.into_parts();
                    let body = RecordingBody {
                        inner: body,
                        call: Some(call),
                    };
                    Ok(http::Response::from_parts(parts, Body::new(body)))
                }
                Err(e) => {
                    call.finish("Internal");
                    Err(e)
                }
            }
        })
    }
}

/// One call counted in `grpc_server_in_flight` from its start until it is recorded. Dropped
/// unrecorded (the handler's future dropped when the deadline passed or the client went away,
/// or the response body dropped before its trailers), it records the call as cancelled, so the
/// gauge comes back down on every path.
struct InFlight {
    metrics: Metrics,
    method: String,
    started: Instant,
    recorded: bool,
}

impl InFlight {
    fn start(metrics: &Metrics, method: &str) -> InFlight {
        metrics.in_flight.inc();
        InFlight {
            metrics: metrics.clone(),
            method: method.to_owned(),
            started: Instant::now(),
            recorded: false,
        }
    }

    fn finish(mut self, code: &str) {
        self.record(code);
    }

    fn record(&mut self, code: &str) {
        if !self.recorded {
            self.recorded = true;
            self.metrics.record(&self.method, code, self.started);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.record("Cancelled");
    }
}

pin_project_lite::pin_project! {
    /// A response body that records its call when the trailers pass (or, through
    /// [`InFlight`]'s drop, as cancelled when the client goes away first).
    struct RecordingBody {
        #[pin]
        inner: Body,
        call: Option<InFlight>,
    }
}

impl http_body::Body for RecordingBody {
    type Data = tonic::codegen::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        let code = match &polled {
            Poll::Ready(Some(Ok(frame))) => frame.trailers_ref().map(|trailers| {
                trailers
                    .get("grpc-status")
                    .map_or_else(|| "Ok".to_owned(), |v| code_name(v.as_bytes()))
            }),
            Poll::Ready(Some(Err(_))) => Some("Internal".to_owned()),
            Poll::Ready(None) => Some("Ok".to_owned()),
            Poll::Pending => None,
        };
        if let Some(code) = code
            && let Some(call) = this.call.take()
        {
            call.finish(&code);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::convert::Infallible;

    /// A service whose calls never finish, as a search that outlives its deadline.
    #[derive(Clone)]
    struct Never;

    impl tower::Service<http::Request<()>> for Never {
        type Response = http::Response<Body>;
        type Error = Infallible;
        type Future = std::future::Pending<Result<http::Response<Body>, Infallible>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: http::Request<()>) -> Self::Future {
            std::future::pending()
        }
    }

    fn in_flight(m: &Metrics) -> i64 {
        m.in_flight.get()
    }

    #[test]
    fn a_call_dropped_before_its_answer_leaves_nothing_in_flight() {
        let metrics = Metrics::new("test");
        let mut svc = tower::Layer::layer(&GrpcMetricsLayer::new(metrics.clone()), Never);
        let req = http::Request::builder()
            .uri("/chess.v1.AnalysisService/Analyze")
            .body(())
            .unwrap();
        let mut fut = tower::Service::call(&mut svc, req);
        assert_eq!(in_flight(&metrics), 1);
        let waker = std::task::Waker::noop();
        assert!(
            fut.as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending()
        );
        // The deadline passes, or the client goes away: the server drops the call's future.
        drop(fut);
        assert_eq!(in_flight(&metrics), 0);
        let text = metrics.encode();
        assert!(
            text.contains("method=\"/chess.v1.AnalysisService/Analyze\",code=\"Cancelled\""),
            "{text}"
        );
    }
}
