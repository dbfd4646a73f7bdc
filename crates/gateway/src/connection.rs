//! One backend's HTTP/2 connection, made on the first call and again on the first call after
//! it failed, with nothing between a call and the connection.
//!
//! tonic's `Channel` hands every call to a buffer task, which hands it to hyper's connection
//! task, which starts a task of its own to wait for the answer and pass it back: three wake-ups
//! of tasks on the way of a forwarded call besides the call's own and the connection's. Here
//! the call's task opens the HTTP/2 stream and sends the request itself, and the connection's
//! task wakes it when the answer comes. The settings are the ones the gateway gave the
//! `Channel` and hyper's defaults: a connect timeout ([`Connector`]); PINGs on every
//! connection, idle or not, so that a backend whose host vanished without a reset fails its
//! calls within seconds; 2 MiB stream and 5 MiB connection windows; answers' headers up to
//! 16 KiB.
//!
//! Every call the gateway makes sends one request message (no method of the API streams from
//! the client), so a request's body is handed to HTTP/2 whole, which sends it as the backend's
//! flow-control window allows.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use h2::{Ping, RecvStream};
use http::Uri;
use http::uri::{Authority, Scheme};
use http_body::Frame;
use http_body_util::BodyExt;
use tonic::body::Body;

use crate::upstream::Connector;

type BoxError = Box<dyn StdError + Send + Sync>;

/// hyper's defaults for an HTTP/2 client, which tonic's `Channel` used.
const STREAM_WINDOW: u32 = 2 << 20;
const CONNECTION_WINDOW: u32 = 5 << 20;
const MAX_HEADER_LIST: u32 = 16 << 10;
const MAX_SEND_STREAMS: usize = 100;

/// A backend's connection, shared by every clone (every client built for the backend).
#[derive(Clone)]
pub(crate) struct Connection {
    shared: Arc<Shared>,
}

struct Shared {
    /// The backend's scheme and authority (`http`, `host:port`); `None` when its address has
    /// none, which every call is then refused for.
    origin: Option<(Scheme, Authority)>,
    uri: Uri,
    connector: Connector,
    keepalive: (Duration, Duration),
    /// The live connection, if one was made and has not ended.
    live: Mutex<Option<Live>>,
    /// Held while connecting, so that the calls arriving meanwhile share one connection.
    connecting: tokio::sync::Mutex<()>,
}

#[derive(Clone)]
struct Live {
    sender: SendRequest<Bytes>,
    /// Cleared by the connection's task when the connection ends.
    open: Arc<AtomicBool>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("uri", &self.shared.uri)
            .finish_non_exhaustive()
    }
}

/// The backend address was not `scheme://host:port`.
#[derive(Debug)]
pub(crate) struct NotAnOrigin(Uri);

impl std::fmt::Display for NotAnOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "backend address {} has no scheme or host", self.0)
    }
}

impl StdError for NotAnOrigin {}

/// The backend left a PING unanswered for the keepalive's timeout.
#[derive(Debug)]
struct PingTimeout(Duration);

impl std::fmt::Display for PingTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no answer to an HTTP/2 PING within {} s",
            self.0.as_secs()
        )
    }
}

impl StdError for PingTimeout {}

impl Connection {
    /// A connection to `uri` (`http://host:port`), made by `connector` on the first call, with
    /// a PING every `keepalive.0` that must be answered within `keepalive.1`.
    pub fn lazy(uri: &Uri, connector: Connector, keepalive: (Duration, Duration)) -> Connection {
        Connection {
            shared: Arc::new(Shared {
                origin: uri.scheme().cloned().zip(uri.authority().cloned()),
                uri: uri.clone(),
                connector,
                keepalive,
                live: Mutex::new(None),
                connecting: tokio::sync::Mutex::new(()),
            }),
        }
    }
}

impl Shared {
    /// The live connection's sender, if there is one.
    fn live(&self) -> Option<SendRequest<Bytes>> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.as_ref()
            .filter(|l| l.open.load(Ordering::Acquire))
            .map(|l| l.sender.clone())
    }

    /// The live connection's sender, connecting first if there is none.
    async fn sender(&self) -> Result<SendRequest<Bytes>, BoxError> {
        if let Some(sender) = self.live() {
            return Ok(sender);
        }
        let _connecting = self.connecting.lock().await;
        if let Some(sender) = self.live() {
            return Ok(sender);
        }
        let io = tower::Service::call(&mut self.connector.clone(), self.uri.clone())
            .await?
            .into_inner();
        let (sender, mut connection) = h2::client::Builder::new()
            .initial_max_send_streams(MAX_SEND_STREAMS)
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .max_header_list_size(MAX_HEADER_LIST)
            .enable_push(false)
            .handshake::<_, Bytes>(io)
            .await?;
        let open = Arc::new(AtomicBool::new(true));
        let mut ping = connection
            .ping_pong()
            .expect("a new connection's PING handle");
        let (interval, timeout) = self.keepalive;
        let uri = self.uri.clone();
        let closed = open.clone();
        tokio::spawn(async move {
            // The connection runs until it ends, or until a PING goes unanswered: dropping it
            // then fails every call on it.
            let keepalive = async {
                loop {
                    tokio::time::sleep(interval).await;
                    match tokio::time::timeout(timeout, ping.ping(Ping::opaque())).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(error)) => return BoxError::from(error),
                        Err(_) => return PingTimeout(timeout).into(),
                    }
                }
            };
            let error = tokio::select! {
                ended = &mut connection => ended.err().map(BoxError::from),
                error = keepalive => Some(error),
            };
            closed.store(false, Ordering::Release);
            if let Some(error) = error {
                tracing::debug!(backend = %uri, %error, "backend connection closed");
            }
        });
        *self.live.lock().unwrap_or_else(|e| e.into_inner()) = Some(Live {
            sender: sender.clone(),
            open,
        });
        Ok(sender)
    }

    /// `head`'s URI with the backend's scheme and authority (a gRPC client sends the path).
    fn address(&self, head: &mut http::request::Parts) -> Result<(), BoxError> {
        let (scheme, authority) = self
            .origin
            .clone()
            .ok_or_else(|| NotAnOrigin(self.uri.clone()))?;
        let mut parts = std::mem::take(&mut head.uri).into_parts();
        parts.scheme = Some(scheme);
        parts.authority = Some(authority);
        head.uri = Uri::from_parts(parts)?;
        Ok(())
    }
}

impl tower::Service<http::Request<Body>> for Connection {
    type Response = http::Response<Answer>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move {
            let (mut head, body) = request.into_parts();
            shared.address(&mut head)?;
            // The whole message first, so that the request goes as HEADERS and one DATA frame
            // that ends the stream, in one write: the backend's unary server waits for the
            // stream's end before it answers.
            let message = body.collect().await?.to_bytes();
            let sender = shared.sender().await?;
            let mut sender = sender.ready().await?;
            let request = http::Request::from_parts(head, ());
            let (answer, mut stream) = sender.send_request(request, message.is_empty())?;
            if !message.is_empty() {
                stream.send_data(message, true)?;
            }
            let answer = answer.await?;
            Ok(answer.map(|body| Answer {
                body,
                data_done: false,
                done: false,
            }))
        })
    }
}

/// A backend's answer: its messages, then its trailers. Dropped before its end, it resets the
/// stream, which cancels the call on the backend.
pub(crate) struct Answer {
    body: RecvStream,
    data_done: bool,
    done: bool,
}

impl http_body::Body for Answer {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if !this.data_done {
            match ready!(this.body.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.body.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(error)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(error)));
                }
                None => this.data_done = true,
            }
        }
        let trailers = ready!(this.body.poll_trailers(cx));
        this.done = true;
        Poll::Ready(trailers.transpose().map(|t| t.map(Frame::trailers)))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::net::TcpListener;
    use tokio::sync::oneshot;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;

    use super::*;
    use crate::upstream::UpstreamChannel;

    /// Serves gRPC health on `bind` (port 0: a free one) until the returned sender fires or is
    /// dropped, counting the connections taken in `accepted`; the address it listens on.
    async fn serve(bind: &str, accepted: Arc<AtomicUsize>) -> (SocketAddr, oneshot::Sender<()>) {
        let listener = TcpListener::bind(bind).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let (_, health) = tonic_health::server::health_reporter();
        let incoming = futures::stream::unfold(listener, move |listener| {
            let accepted = accepted.clone();
            async move {
                let taken = listener.accept().await.map(|(socket, _)| socket);
                accepted.fetch_add(1, Ordering::SeqCst);
                Some((taken, listener))
            }
        });
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(health)
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                }),
        );
        (addr, stop)
    }

    async fn check(backend: &UpstreamChannel) -> Result<(), tonic::Status> {
        let mut request = tonic::Request::new(HealthCheckRequest::default());
        request.set_timeout(Duration::from_secs(5));
        HealthClient::new(backend.connection.clone())
            .check(request)
            .await
            .map(|_| ())
    }

    fn backend(addr: SocketAddr) -> UpstreamChannel {
        UpstreamChannel::new("rules", &format!("http://{addr}").parse().unwrap())
    }

    #[tokio::test]
    async fn nothing_connects_before_the_first_call_and_calls_share_one_connection() {
        let accepted = Arc::new(AtomicUsize::new(0));
        let (addr, _stop) = serve("127.0.0.1:0", accepted.clone()).await;
        let backend = backend(addr);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
        // Calls that arrive together while nothing is connected wait for one connection.
        let calls: Vec<_> = (0..8).map(|_| check(&backend)).collect();
        for answer in futures::future::join_all(calls).await {
            answer.unwrap();
        }
        check(&backend).await.unwrap();
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_backend_that_restarted_is_connected_again() {
        let accepted = Arc::new(AtomicUsize::new(0));
        let (addr, stop) = serve("127.0.0.1:0", accepted.clone()).await;
        let backend = backend(addr);
        check(&backend).await.unwrap();
        stop.send(()).unwrap();
        // The server closes its connections (GOAWAY) and stops listening: calls fail as a
        // failed hop, with nothing left hanging.
        let mut failed = None;
        for _ in 0..100 {
            match check(&backend).await {
                Ok(()) => tokio::time::sleep(Duration::from_millis(20)).await,
                Err(status) => {
                    failed = Some(status);
                    break;
                }
            }
        }
        let failed = failed.expect("calls still answered after the server stopped");
        let mapped = backend.map_error(failed, None);
        assert_eq!(mapped.code(), tonic::Code::Unavailable, "{mapped:?}");
        assert!(mapped.message().contains(&addr.to_string()), "{mapped:?}");
        // Back on the same port: the next call connects again, once.
        let before = accepted.load(Ordering::SeqCst);
        let (_, _stop) = serve(&addr.to_string(), accepted.clone()).await;
        check(&backend).await.unwrap();
        check(&backend).await.unwrap();
        assert_eq!(accepted.load(Ordering::SeqCst), before + 1);
    }

    #[tokio::test]
    async fn an_address_without_a_host_fails_each_call_with_a_reason() {
        let backend = UpstreamChannel::new("rules", &"/no-host".parse().unwrap());
        let status = check(&backend).await.unwrap_err();
        let mapped = backend.map_error(status, None);
        assert_eq!(mapped.code(), tonic::Code::Unavailable, "{mapped:?}");
        assert!(mapped.message().contains("no scheme or host"), "{mapped:?}");
    }
}
