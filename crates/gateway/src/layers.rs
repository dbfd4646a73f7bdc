//! HTTP layers around the gRPC routes: oversize requests refused with RESOURCE_EXHAUSTED, and
//! CORS so browsers on other origins can use gRPC-Web.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::TryFutureExt;
use futures::future::MapOk;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use tonic::body::Body;

/// tonic refuses a message over the decoding limit with OUT_OF_RANGE and a terse message; gRPC
/// convention (and our callers) expect RESOURCE_EXHAUSTED saying what the limit is.
#[derive(Clone, Debug)]
pub(crate) struct OversizeLayer {
    message: Arc<HeaderValue>,
}

impl OversizeLayer {
    pub fn new(max_message_bytes: usize, max_pgn_bytes: u64) -> OversizeLayer {
        let text = format!(
            "request too large: this gateway accepts request messages up to {max_message_bytes} \
             bytes (ParsePgn text up to {max_pgn_bytes} bytes)"
        );
        let message =
            HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("request too large"));
        OversizeLayer {
            message: Arc::new(message),
        }
    }
}

impl<S> tower::Layer<S> for OversizeLayer {
    type Service = Oversize<S>;

    fn layer(&self, inner: S) -> Oversize<S> {
        Oversize {
            inner,
            message: self.message.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Oversize<S> {
    inner: S,
    message: Arc<HeaderValue>,
}

impl<S, B, RB> tower::Service<Request<B>> for Oversize<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
{
    type Response = Response<RB>;
    type Error = S::Error;
    type Future = MapOk<S::Future, Box<dyn FnOnce(Response<RB>) -> Response<RB> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let message = self.message.clone();
        self.inner
            .call(request)
            .map_ok(Box::new(move |mut response: Response<RB>| {
                let headers = response.headers_mut();
                let oversize = headers.get("grpc-status").is_some_and(|v| v == "11")
                    && headers.get("grpc-message").is_some_and(|m| {
                        let m = m.as_bytes();
                        contains(m, b"message length too large")
                            || contains(m, b"message%20length%20too%20large")
                    });
                if oversize {
                    headers.insert("grpc-status", HeaderValue::from_static("8"));
                    headers.insert("grpc-message", (*message).clone());
                }
                response
            }))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Answers CORS preflights and marks responses for the allowed origins (`*`: any).
#[derive(Clone, Debug)]
pub(crate) struct CorsLayer {
    origins: Arc<Vec<String>>,
}

impl CorsLayer {
    pub fn new(origins: Vec<String>) -> CorsLayer {
        CorsLayer {
            origins: Arc::new(origins),
        }
    }
}

impl<S> tower::Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors {
            inner,
            origins: self.origins.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Cors<S> {
    inner: S,
    origins: Arc<Vec<String>>,
}

const ALLOW_HEADERS: &str = "authorization, content-type, grpc-timeout, grpc-accept-encoding, \
                             grpc-encoding, x-grpc-web, x-user-agent, x-request-id";
const EXPOSE_HEADERS: &str = "grpc-status, grpc-message, grpc-status-details-bin, grpc-encoding";

impl<S> Cors<S> {
    /// The origin to echo back when the request's `Origin` is allowed.
    fn allowed<B>(&self, request: &Request<B>) -> Option<HeaderValue> {
        let origin = request.headers().get(header::ORIGIN)?;
        let text = origin.to_str().ok()?;
        self.origins
            .iter()
            .any(|o| o == "*" || o == text)
            .then(|| origin.clone())
    }
}

impl<S, B> tower::Service<Request<B>> for Cors<S>
where
    S: tower::Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let allowed = self.allowed(&request);
        if request.method() == Method::OPTIONS
            && request
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        {
            let mut response = Response::new(Body::empty());
            match allowed {
                Some(origin) => {
                    *response.status_mut() = StatusCode::NO_CONTENT;
                    let h = response.headers_mut();
                    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
                    h.insert(
                        header::ACCESS_CONTROL_ALLOW_METHODS,
                        HeaderValue::from_static("POST, OPTIONS"),
                    );
                    h.insert(
                        header::ACCESS_CONTROL_ALLOW_HEADERS,
                        HeaderValue::from_static(ALLOW_HEADERS),
                    );
                    h.insert(
                        header::ACCESS_CONTROL_MAX_AGE,
                        HeaderValue::from_static("86400"),
                    );
                    h.insert(header::VARY, HeaderValue::from_static("origin"));
                }
                None => *response.status_mut() = StatusCode::FORBIDDEN,
            }
            return Box::pin(std::future::ready(Ok(response)));
        }
        let future = self.inner.call(request);
        Box::pin(async move {
            let mut response = future.await?;
            if let Some(origin) = allowed {
                let h = response.headers_mut();
                h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
                h.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static(EXPOSE_HEADERS),
                );
                h.append(header::VARY, HeaderValue::from_static("origin"));
            }
            Ok(response)
        })
    }
}
