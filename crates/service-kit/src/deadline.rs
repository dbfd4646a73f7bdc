//! The caller's deadline (`grpc-timeout`) over the whole call, streams included. tonic ends a
//! handler that has not answered by then, but a server stream already under way (WatchGame,
//! which never ends by itself) ran on past it. [`DeadlineLayer`] ends such a response with
//! `DEADLINE_EXCEEDED` trailers when the deadline passes, and drops the stream, which stops
//! its producer.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use http_body::Frame;
use tonic::body::Body;

/// Tower layer that bounds every response body by the request's `grpc-timeout`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeadlineLayer;

impl<S> tower::Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;
    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline { inner }
    }
}

#[derive(Clone, Debug)]
pub struct Deadline<S> {
    inner: S,
}

/// A `grpc-timeout` header value (`100m`, `5S`...), as the gRPC HTTP/2 protocol writes it.
pub fn parse_grpc_timeout(text: &str) -> Option<Duration> {
    if text.len() < 2 || text.len() > 9 {
        return None;
    }
    let (digits, unit) = text.split_at(text.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

impl<S, ReqBody> tower::Service<http::Request<ReqBody>> for Deadline<S>
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
        let timeout = req
            .headers()
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_grpc_timeout);
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            let Some(deadline) = deadline else {
                return Ok(resp);
            };
            // A trailers-only answer (an error) is complete already.
            if resp.headers().contains_key("grpc-status") {
                return Ok(resp);
            }
            let (parts, body) = resp.into_parts();
            let body = DeadlineBody {
                inner: Some(body),
                sleep: Box::pin(tokio::time::sleep_until(deadline)),
            };
            Ok(http::Response::from_parts(parts, Body::new(body)))
        })
    }
}

/// A response body ended with `DEADLINE_EXCEEDED` trailers when the deadline passes first.
struct DeadlineBody {
    /// `None` once ended here (the stream dropped).
    inner: Option<Body>,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for DeadlineBody {
    type Data = tonic::codegen::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(inner).poll_frame(cx) {
            Poll::Pending => {}
            ready => return ready,
        }
        if self.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.inner = None;
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static("4"));
        trailers.insert(
            "grpc-message",
            HeaderValue::from_static("deadline%20exceeded%20while%20streaming"),
        );
        Poll::Ready(Some(Ok(Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.as_ref().map_or_else(
            || http_body::SizeHint::with_exact(0),
            http_body::Body::size_hint,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts() {
        assert_eq!(parse_grpc_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_grpc_timeout("5S"), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_grpc_timeout("99999999H"),
            Some(Duration::from_secs(99_999_999 * 3600))
        );
        for bad in ["", "5", "5x", "-5S", "1234567890S"] {
            assert_eq!(parse_grpc_timeout(bad), None, "{bad}");
        }
    }
}
