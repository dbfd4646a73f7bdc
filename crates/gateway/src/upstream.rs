//! Backends and forwarding: lazily made connections, a call sent on within its deadline,
//! server streams passed through, metadata and errors passed back.

use std::error::Error as _;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use chess_service_kit::GZIP_MIN_BYTES;
use futures::Stream;
use http::{HeaderMap, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tonic::codec::Streaming;
use tonic::metadata::MetadataMap;
use tonic::{Code, Request, Response, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::coalesce::Coalesce;
use crate::connection::Connection;
use crate::target::uri_host;

/// How long a connection attempt to a backend may take: a backend on the cluster's network
/// answers a SYN in milliseconds; one that does not within this is gone (a vanished host or
/// a partition drops the SYN silently), and the call goes to another replica in time.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// HTTP/2 PINGs on every backend connection, idle or not, and how long one may go unanswered
/// before the connection (and every call and stream on it) fails: a backend whose host
/// vanished without a reset is noticed within their sum, not after TCP's minutes.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long ServerInfo waits for a backend's health answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest response accepted from a backend (a parsed PGN of many games is several times the
/// size of the text).
pub(crate) const MAX_BACKEND_MESSAGE: usize = 64 << 20;

/// A forwarded server stream.
pub(crate) type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// An admitted call: its metadata and the deadline to pass on.
#[derive(Debug)]
pub(crate) struct Call {
    pub metadata: MetadataMap,
    pub deadline: Option<Instant>,
    /// Who is calling (for per-caller limits).
    pub caller: crate::auth::Caller,
}

/// How one call to a backend is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Compression {
    /// Gzip answers accepted (the backend then gzips those of 1 KiB or more).
    pub accept: bool,
    /// The request gzipped.
    pub send: bool,
}

/// The compression of a call carrying `message`: none under `--backend-compression none` (the
/// default: on a cluster's network CPU is scarcer than bandwidth), and under `gzip` answers
/// accepted gzipped and the request gzipped when its encoded size is at least
/// [`GZIP_MIN_BYTES`] (1 KiB). A small message does not shrink (gzip's header and trailer alone
/// are 18 bytes), and setting up a compressor for it (a few hundred kilobytes of tables, zeroed
/// per message) cost more CPU than the rest of the gateway's hop together.
pub(crate) fn gzip_request(gzip: bool, message: &impl prost::Message) -> Compression {
    Compression {
        accept: gzip,
        send: gzip && message.encoded_len() >= GZIP_MIN_BYTES,
    }
}

/// A generated client of `$backend` with the gateway's settings for backend calls, compressed
/// as `$gzip` (a [`Compression`]; call sites pass [`gzip_request`]'s).
macro_rules! client {
    ($client:ident, $backend:expr, $gzip:expr) => {{
        let gzip: $crate::upstream::Compression = $gzip;
        let mut client = $client::new($backend.connection.clone())
            .max_decoding_message_size($crate::upstream::MAX_BACKEND_MESSAGE);
        if gzip.accept {
            client = client.accept_compressed(tonic::codec::CompressionEncoding::Gzip);
        }
        if gzip.send {
            client = client.send_compressed(tonic::codec::CompressionEncoding::Gzip);
        }
        client
    }};
}
pub(crate) use client;

/// One backend address and its connection.
#[derive(Clone, Debug)]
pub(crate) struct UpstreamChannel {
    /// `rules` or `search`.
    pub name: &'static str,
    /// As configured, e.g. `http://127.0.0.1:50052`.
    pub address: Arc<str>,
    pub connection: Connection,
}

impl UpstreamChannel {
    /// A backend reached over a lazily made connection: nothing connects until the first call,
    /// and a backend that is down makes calls fail, not the gateway's start.
    pub fn new(name: &'static str, uri: &Uri) -> UpstreamChannel {
        let address: Arc<str> = uri.to_string().trim_end_matches('/').into();
        let connector = Connector {
            name,
            address: address.clone(),
        };
        UpstreamChannel {
            name,
            address,
            connection: Connection::lazy(uri, connector, (KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT)),
        }
    }

    /// The backend's gRPC health (`""`, the whole server): `SERVING`, `NOT_SERVING` or
    /// `UNKNOWN` (also when it cannot be asked).
    pub async fn health(&self) -> &'static str {
        let mut client = HealthClient::new(self.connection.clone());
        let mut request = Request::new(HealthCheckRequest {
            service: String::new(),
        });
        request.set_timeout(HEALTH_TIMEOUT);
        let answer = tokio::time::timeout(HEALTH_TIMEOUT, client.check(request)).await;
        match answer {
            Ok(Ok(r)) => match ServingStatus::try_from(r.get_ref().status) {
                Ok(ServingStatus::Serving) => "SERVING",
                Ok(ServingStatus::NotServing) => "NOT_SERVING",
                _ => "UNKNOWN",
            },
            Ok(Err(status)) => {
                tracing::warn!(backend = self.name, address = %self.address, code = ?status.code(), message = status.message(), "health check failed");
                "UNKNOWN"
            }
            Err(_) => {
                tracing::warn!(backend = self.name, address = %self.address, "health check timed out");
                "UNKNOWN"
            }
        }
    }

    /// A health call with no deadline at all (for the keepalive's test): `Err` once the
    /// connection fails.
    #[cfg(test)]
    async fn health_unbounded(&self) -> Result<(), Status> {
        HealthClient::new(self.connection.clone())
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map(|_| ())
    }

    /// The caller sees the backend's own errors unchanged; failures of the hop itself name
    /// the backend.
    pub fn map_error(&self, status: Status, deadline: Option<Instant>) -> Status {
        let expired = deadline.is_some_and(|d| Instant::now() >= d);
        match status.code() {
            // tonic reports an expired deadline as CANCELLED (client side and server side).
            Code::Cancelled | Code::DeadlineExceeded if expired => self.deadline_exceeded(),
            // A failure of the hop (connection refused or lost, protocol error), not an answer
            // of the backend's: those carry no source. A connection lost with the call on it
            // (the backend died) comes as CANCELLED from hyper, though nobody cancelled; one
            // the backend's HTTP/2 server closed with GOAWAY ENHANCE_YOUR_CALM (a burst of
            // resets arriving when a partition heals) as RESOURCE_EXHAUSTED, which is not the
            // caller's quota either. Whatever its code, a failed hop is UNAVAILABLE.
            _ if status.source().is_some() => {
                // This call's stream refused here (an answer whose headers are over the
                // HTTP/2 limit, say): the call failed, not the backend, which stays in use.
                if let Some(reason) = refused_here(&status) {
                    tracing::warn!(backend = self.name, address = %self.address, %reason, "a backend answer could not be read");
                    return Status::internal(format!(
                        "the answer of the {} service at {} to this call could not be read \
                         (HTTP/2 stream reset here: {reason}); the service itself is up",
                        self.name, self.address
                    ));
                }
                tracing::warn!(backend = self.name, address = %self.address, error = %status.message(), "backend call failed");
                if status.message().contains(&*self.address) {
                    Status::unavailable(status.message())
                } else {
                    Status::unavailable(format!(
                        "the {} service at {} failed: {}",
                        self.name,
                        self.address,
                        status.message()
                    ))
                }
            }
            code => Status::with_details_and_metadata(
                code,
                status.message(),
                status.details().to_vec().into(),
                pass_metadata(status.metadata()),
            ),
        }
    }

    pub fn deadline_exceeded(&self) -> Status {
        Status::deadline_exceeded(format!(
            "deadline exceeded waiting for the {} service at {}",
            self.name, self.address
        ))
    }
}

/// The reason when `status` comes from this side resetting the call's HTTP/2 stream (h2
/// refuses a response it cannot take, e.g. headers over its header-list limit): a failure of
/// the one call, unlike a refused or lost connection or a reset sent by the backend.
fn refused_here(status: &Status) -> Option<h2::Reason> {
    let mut source = status.source();
    while let Some(error) = source {
        if let Some(h2) = error.downcast_ref::<h2::Error>() {
            return (h2.is_reset() && !h2.is_remote())
                .then(|| h2.reason())
                .flatten();
        }
        source = error.source();
    }
    None
}

/// Sends one call to `backend` and waits for its answer (for a server stream: its headers),
/// within the call's deadline. Dropping the returned future (the caller went away) drops the
/// backend call, which cancels it there.
pub(crate) async fn forward<C, Req, Resp, Fut>(
    backend: &UpstreamChannel,
    client: C,
    call: &Call,
    message: Req,
    send_with: impl FnOnce(C, Request<Req>) -> Fut,
) -> Result<Response<Resp>, Status>
where
    Fut: Future<Output = Result<Response<Resp>, Status>>,
{
    send(backend, client, call, message, send_with)
        .await
        .map_err(|failed| failed.status)
}

/// A call that failed: the status for the caller, and whether the backend may have received
/// the call.
#[derive(Debug)]
pub(crate) struct Failed {
    pub status: Status,
    pub maybe_received: bool,
}

/// [`forward`], also saying whether a failed call may have reached the backend.
pub(crate) async fn send<C, Req, Resp, Fut>(
    backend: &UpstreamChannel,
    client: C,
    call: &Call,
    message: Req,
    send_with: impl FnOnce(C, Request<Req>) -> Fut,
) -> Result<Response<Resp>, Failed>
where
    Fut: Future<Output = Result<Response<Resp>, Status>>,
{
    let request = outgoing(message, &call.metadata, call.deadline);
    let result = match call.deadline {
        Some(deadline) => {
            let deadline = tokio::time::Instant::from_std(deadline);
            match tokio::time::timeout_at(deadline, send_with(client, request)).await {
                Ok(result) => result,
                Err(_) => {
                    return Err(Failed {
                        status: backend.deadline_exceeded(),
                        maybe_received: true,
                    });
                }
            }
        }
        None => send_with(client, request).await,
    };
    result.map(pass_response).map_err(|status| Failed {
        maybe_received: !never_received(&status),
        status: backend.map_error(status, call.deadline),
    })
}

/// Whether a failed call certainly never reached the backend: the connection could not be
/// made ([`ConnectFailed`]), or the backend refused the HTTP/2 stream unread (REFUSED_STREAM,
/// which promises the request was not processed).
fn never_received(status: &Status) -> bool {
    let mut source = status.source();
    while let Some(error) = source {
        if error.downcast_ref::<ConnectFailed>().is_some() {
            return true;
        }
        if let Some(h2) = error.downcast_ref::<h2::Error>() {
            return h2.is_remote() && h2.reason() == Some(h2::Reason::REFUSED_STREAM);
        }
        source = error.source();
    }
    false
}

/// A future whose completion ends a forwarded stream.
pub(crate) type StopSignal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Hears a forwarded stream's UNAVAILABLE failure.
pub(crate) type OnUnavailable = Box<dyn Fn(&Status) + Send>;

/// What a forwarded stream does besides passing the backend's messages on.
#[derive(Default)]
pub(crate) struct StreamHooks {
    /// Ends the stream with UNAVAILABLE once it resolves (the gateway shutting down).
    pub stop: Option<StopSignal>,
    /// Hears the stream's failure when it is UNAVAILABLE (a search replica to eject).
    pub on_unavailable: Option<OnUnavailable>,
    /// Held while the stream is open (a `--max-watchers` slot).
    pub hold: Option<Box<dyn Send>>,
}

/// A backend's server stream passed through, its errors mapped like unary ones (see
/// [`StreamHooks`] for the rest). Dropping it (the caller went away) drops the backend stream,
/// which cancels the call there.
pub(crate) fn forward_stream<T: Send + 'static>(
    response: Response<Streaming<T>>,
    backend: &UpstreamChannel,
    deadline: Option<Instant>,
    hooks: StreamHooks,
) -> Response<BoxStream<T>> {
    let (metadata, inner, extensions) = response.into_parts();
    let stream = Forwarded {
        inner,
        backend: backend.clone(),
        deadline,
        stop: hooks.stop,
        on_unavailable: hooks.on_unavailable,
        _hold: hooks.hold,
        done: false,
    };
    Response::from_parts(metadata, Box::pin(stream) as BoxStream<T>, extensions)
}

struct Forwarded<T> {
    inner: Streaming<T>,
    backend: UpstreamChannel,
    deadline: Option<Instant>,
    stop: Option<StopSignal>,
    on_unavailable: Option<OnUnavailable>,
    _hold: Option<Box<dyn Send>>,
    done: bool,
}

impl<T> Stream for Forwarded<T> {
    type Item = Result<T, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(stop) = &mut this.stop
            && stop.as_mut().poll(cx).is_ready()
        {
            this.done = true;
            return Poll::Ready(Some(Err(Status::unavailable(
                "the gateway is shutting down; watch again to resume",
            ))));
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Err(status))) => {
                this.done = true;
                let status = this.backend.map_error(status, this.deadline);
                if let Some(on_unavailable) = &this.on_unavailable
                    && status.code() == Code::Unavailable
                {
                    on_unavailable(&status);
                }
                Poll::Ready(Some(Err(status)))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            other => other,
        }
    }
}

/// The deadline of an incoming call, from its `grpc-timeout` header.
pub(crate) fn incoming_timeout(metadata: &MetadataMap) -> Result<Option<Duration>, Status> {
    let Some(value) = metadata.get("grpc-timeout") else {
        return Ok(None);
    };
    let bad = || Status::invalid_argument(format!("malformed grpc-timeout header {value:?}"));
    let text = value.to_str().map_err(|_| bad())?;
    chess_service_kit::parse_grpc_timeout(text)
        .map(Some)
        .ok_or_else(bad)
}

/// Caller metadata that travels on to the backend (tracing and request ids); the caller's
/// key, deadline header and transport headers do not.
const FORWARDED_REQUEST_METADATA: [&str; 3] = ["x-request-id", "traceparent", "tracestate"];

/// A request for the backend: the message, the remaining deadline and the forwarded metadata.
pub(crate) fn outgoing<T>(message: T, from: &MetadataMap, deadline: Option<Instant>) -> Request<T> {
    let mut request = Request::new(message);
    for name in FORWARDED_REQUEST_METADATA {
        for value in from.get_all(name) {
            request.metadata_mut().append(name, value.clone());
        }
    }
    if let Some(deadline) = deadline {
        request.set_timeout(deadline.saturating_duration_since(Instant::now()));
    }
    request
}

/// The backend's response with its metadata passed through.
pub(crate) fn pass_response<T>(response: Response<T>) -> Response<T> {
    let (metadata, message, _) = response.into_parts();
    Response::from_parts(pass_metadata(&metadata), message, Default::default())
}

/// Response metadata worth passing on: what the backend set, not what HTTP/2 and gRPC framing
/// added (those are set afresh on the caller's side).
pub(crate) fn pass_metadata(from: &MetadataMap) -> MetadataMap {
    let mut headers: HeaderMap = from.clone().into_headers();
    let drop: Vec<_> = headers
        .keys()
        .filter(|k| !passes(k.as_str()))
        .cloned()
        .collect();
    for name in drop {
        headers.remove(name);
    }
    MetadataMap::from_headers(headers)
}

fn passes(name: &str) -> bool {
    !(name.starts_with("grpc-")
        || name.starts_with("access-control-")
        || matches!(
            name,
            "content-type"
                | "content-length"
                | "content-encoding"
                | "te"
                | "trailer"
                | "transfer-encoding"
                | "connection"
                | "keep-alive"
                | "upgrade"
                | "host"
                | "date"
                | "server"
                | "user-agent"
                | "vary"
        ))
}

/// Connects over TCP with a timeout; a failure names the backend so the caller's UNAVAILABLE
/// says which service is down.
#[derive(Clone, Debug)]
pub(crate) struct Connector {
    name: &'static str,
    address: Arc<str>,
}

/// A connection to a backend could not be made.
#[derive(Debug)]
pub(crate) struct ConnectFailed(String);

impl fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConnectFailed {}

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<Coalesce<TcpStream>>;
    type Error = ConnectFailed;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectFailed>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectFailed>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let what = format!("the {} service at {}", self.name, self.address);
        Box::pin(async move {
            let host = uri_host(&uri);
            let port = uri.port_u16().unwrap_or(80);
            let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port)))
                .await
                .map_err(|_| {
                    ConnectFailed(format!(
                        "{what} cannot be reached: no connection within {} s",
                        CONNECT_TIMEOUT.as_secs()
                    ))
                })?
                .map_err(|e| ConnectFailed(format!("{what} cannot be reached: {e}")))?;
            let _ = stream.set_nodelay(true);
            // A request's HEADERS and DATA in one write (coalesce.rs).
            Ok(TokioIo::new(Coalesce::new(stream)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_header() {
        let mut md = MetadataMap::new();
        assert_eq!(incoming_timeout(&md).unwrap(), None);
        for (text, want) in [
            ("5S", Duration::from_secs(5)),
            ("250m", Duration::from_millis(250)),
            ("4999999u", Duration::from_micros(4_999_999)),
            ("2M", Duration::from_secs(120)),
            ("1H", Duration::from_secs(3600)),
            ("7n", Duration::from_nanos(7)),
        ] {
            md.insert("grpc-timeout", text.parse().unwrap());
            assert_eq!(incoming_timeout(&md).unwrap(), Some(want), "{text}");
        }
        for bad in ["", "S", "5", "5x", "123456789S", "-1S"] {
            md.insert("grpc-timeout", bad.parse().unwrap());
            assert!(incoming_timeout(&md).is_err(), "{bad:?}");
        }
    }

    /// Found by tests/hosts (vanish-rules, cut-gateway-rules): when a partition healed, the
    /// rules replica's HTTP/2 server closed the gateway's connection with GOAWAY
    /// ENHANCE_YOUR_CALM, and the calls on it reached the client as RESOURCE_EXHAUSTED, an
    /// answer that promises nothing was done, instead of UNAVAILABLE.
    #[tokio::test]
    async fn a_failed_hop_is_unavailable_whatever_its_code() {
        let backend = UpstreamChannel::new("rules", &"http://198.18.0.11:50052".parse().unwrap());
        let calm = Status::from_error(Box::new(h2::Error::from(h2::Reason::ENHANCE_YOUR_CALM)));
        assert_eq!(calm.code(), Code::ResourceExhausted, "{calm:?}");
        let mapped = backend.map_error(calm, None);
        assert_eq!(mapped.code(), Code::Unavailable, "{mapped:?}");
        assert!(mapped.message().contains("198.18.0.11"), "{mapped:?}");
        // The backend's own RESOURCE_EXHAUSTED (no source: an answer) passes as it is.
        let own = backend.map_error(Status::resource_exhausted("too many games"), None);
        assert_eq!(own.code(), Code::ResourceExhausted);
        assert_eq!(own.message(), "too many games");
    }

    /// Found by tests/hosts (vanish-rules, cut-gateway-rules): with PINGs every 30 s and 10 s
    /// to answer, a call or watch on a backend whose host vanished without a reset waited up
    /// to 40 s for the connection to be declared dead. A backend that takes the connection and
    /// then answers nothing (not even the HTTP/2 handshake) now fails the call in seconds.
    #[tokio::test]
    async fn a_backend_that_stops_answering_is_noticed_in_seconds() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket); // read nothing, answer nothing, never close
            }
        });
        let backend = UpstreamChannel::new("rules", &format!("http://{addr}").parse().unwrap());
        let started = Instant::now();
        // No deadline: only the keepalive can end this call.
        let answer =
            tokio::time::timeout(Duration::from_secs(20), backend.health_unbounded()).await;
        let waited = started.elapsed();
        assert!(answer.is_ok(), "still waiting after {waited:?}");
        assert!(
            waited <= KEEPALIVE_INTERVAL + KEEPALIVE_TIMEOUT + Duration::from_secs(2),
            "{waited:?}"
        );
    }

    #[test]
    fn only_large_requests_are_gzipped() {
        let small = chess_proto::v1::ValidateFenRequest {
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
        };
        assert_eq!(
            gzip_request(true, &small),
            Compression {
                accept: true,
                send: false
            }
        );
        let pgn = chess_proto::v1::ParsePgnRequest {
            pgn: "1. e4 e5 2. Nf3 Nc6 ".repeat(60),
        };
        assert!(pgn.pgn.len() >= GZIP_MIN_BYTES);
        assert!(gzip_request(true, &pgn).send);
        // --backend-compression none: nothing is gzipped, either way.
        assert_eq!(
            gzip_request(false, &pgn),
            Compression {
                accept: false,
                send: false
            }
        );
    }

    #[test]
    fn metadata_filters() {
        let mut md = MetadataMap::new();
        md.insert("content-type", "application/grpc".parse().unwrap());
        md.insert("grpc-encoding", "gzip".parse().unwrap());
        md.insert("x-received-timeout", "5S".parse().unwrap());
        md.insert_bin(
            "x-trace-bin",
            tonic::metadata::MetadataValue::from_bytes(b"\x01\x02"),
        );
        let out = pass_metadata(&md);
        assert!(out.get("content-type").is_none() && out.get("grpc-encoding").is_none());
        assert_eq!(out.get("x-received-timeout").unwrap(), "5S");
        assert!(out.get_bin("x-trace-bin").is_some());

        let mut incoming = MetadataMap::new();
        incoming.insert("authorization", "Bearer k".parse().unwrap());
        incoming.insert("x-request-id", "abc".parse().unwrap());
        let deadline = Instant::now() + Duration::from_secs(5);
        let r = outgoing((), &incoming, Some(deadline));
        assert!(r.metadata().get("authorization").is_none());
        assert_eq!(r.metadata().get("x-request-id").unwrap(), "abc");
        let t = incoming_timeout(r.metadata()).unwrap().unwrap();
        assert!(
            t <= Duration::from_secs(5) && t > Duration::from_secs(4),
            "{t:?}"
        );
    }
}
