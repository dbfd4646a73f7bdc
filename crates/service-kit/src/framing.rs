//! A request whose gRPC framing is broken is the caller's mistake, and the README promises
//! `INVALID_ARGUMENT` for it. tonic finds these mistakes before any codec of ours sees the
//! message and answers `INTERNAL`: a compressed-flag byte other than 0 or 1, a compressed
//! message that does not decompress, a body that ends inside a message, and (tonic-web) a
//! grpc-web-text body that is not base64. [`FramingErrorsLayer`] turns those answers into
//! `INVALID_ARGUMENT` with a message that says what was wrong.
//!
//! (A message with the compressed flag set and no `grpc-encoding` stays `INTERNAL`: the gRPC
//! specification says so in as many words.)
//!
//! These errors come before the handler, so their answers are trailers-only: the status is in
//! the response headers, where this layer looks.

use std::pin::Pin;
use std::task::{Context, Poll};

use http::header::HeaderValue;
use http::{Request, Response};

/// tonic's messages for broken framing (as sent: spaces may be percent-encoded), and ours.
const REWRITES: &[(&str, &str)] = &[
    (
        "invalid compression flag",
        "malformed request: a gRPC message's compressed flag must be 0 or 1",
    ),
    (
        "Error decompressing",
        "malformed request: a compressed gRPC message does not decompress with its grpc-encoding",
    ),
    (
        "Unexpected EOF decoding stream",
        "malformed request: the request body ends inside a gRPC message",
    ),
    (
        "tonic-web:",
        "malformed gRPC-Web request: the body of an application/grpc-web-text request must be base64",
    ),
];

/// Answers broken gRPC framing with `INVALID_ARGUMENT` (see the module's header). Put it inside
/// the metrics layer, so that the metrics count the code the caller gets.
#[derive(Clone, Copy, Debug, Default)]
pub struct FramingErrorsLayer;

impl<S> tower::Layer<S> for FramingErrorsLayer {
    type Service = FramingErrors<S>;

    fn layer(&self, inner: S) -> FramingErrors<S> {
        FramingErrors { inner }
    }
}

#[derive(Clone, Debug)]
pub struct FramingErrors<S> {
    inner: S,
}

impl<S, B, RB> tower::Service<Request<B>> for FramingErrors<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = Response<RB>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<RB>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            rewrite(response.headers_mut());
            Ok(response)
        })
    }
}

fn rewrite(headers: &mut http::HeaderMap) {
    if headers.get("grpc-status").is_none_or(|code| code != "13") {
        return;
    }
    let Some(message) = headers.get("grpc-message") else {
        return;
    };
    let message = message.as_bytes();
    let ours = REWRITES.iter().find_map(|(theirs, ours)| {
        let encoded = theirs.replace(' ', "%20");
        (contains(message, theirs.as_bytes()) || contains(message, encoded.as_bytes()))
            .then_some(*ours)
    });
    if let Some(ours) = ours {
        headers.insert("grpc-status", HeaderValue::from_static("3"));
        headers.insert("grpc-message", HeaderValue::from_static(ours));
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: &str, message: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert("grpc-status", HeaderValue::from_str(code).unwrap());
        headers.insert("grpc-message", HeaderValue::from_str(message).unwrap());
        headers
    }

    #[test]
    fn only_tonics_framing_errors_become_invalid_argument() {
        let mut flag = status(
            "13",
            "protocol%20error:%20received%20message%20with%20invalid%20compression%20flag:%207",
        );
        rewrite(&mut flag);
        assert_eq!(flag["grpc-status"], "3");
        assert!(
            flag["grpc-message"]
                .to_str()
                .unwrap()
                .contains("must be 0 or 1")
        );
        let mut web = status("13", "tonic-web: Invalid symbol 33, offset 0.");
        rewrite(&mut web);
        assert_eq!(web["grpc-status"], "3");
        for (code, message) in [
            ("13", "the store failed"),
            ("14", "Error decompressing"),
            ("11", "invalid compression flag"),
        ] {
            let mut other = status(code, message);
            rewrite(&mut other);
            assert_eq!(other, status(code, message));
        }
    }
}
