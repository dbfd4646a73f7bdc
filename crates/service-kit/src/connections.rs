//! The listener every service serves from, with what keeps a hostile or vanished client from
//! holding connections (and file descriptors) for ever:
//!
//! - a first-byte deadline: a connection that sends nothing within the handshake timeout is
//!   closed before the HTTP server sees it;
//! - an idle timeout: a connection with no call in progress for that long is closed (a call is
//!   in progress from its request until its response body is done, so a long WatchGame or
//!   AnalyzeStream keeps its connection busy however quiet it is);
//! - HTTP/2 keepalive PINGs (set on the server by [`grpc_server`]): a peer that stops
//!   answering them is dropped, streams and all;
//! - a cap on the connections one client address may hold on one listener;
//! - an accept loop that, when accepting fails for want of descriptors or memory (EMFILE,
//!   ENFILE, ENOBUFS, ENOMEM), waits 50 ms, then twice as long each time up to 1 s, instead
//!   of trying again at once for ever (which is how a full process spins a core).

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use http::{Request, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tonic::transport::Server;
use tonic::transport::server::Connected;
use tower::layer::util::{Identity, Stack};

use crate::ServeError;

/// The first wait after accepting failed for want of resources; doubled each time after.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// TCP keepalive probes on idle sockets (HTTP/1.1 connections have no PINGs).
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// How long connections may wait and idle, how they are kept alive, how many one address may
/// hold. From the common flags ([`crate::CommonArgs::connection_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A new connection's time to send its first byte.
    pub handshake_timeout: Duration,
    /// How long a connection with no call in progress stays open.
    pub idle_timeout: Duration,
    /// Time between HTTP/2 PINGs; `None`: no PINGs.
    pub keepalive_interval: Option<Duration>,
    /// How long a PING may go unanswered before the connection is closed.
    pub keepalive_timeout: Duration,
    /// Connections one client address may hold on one listener; `None`: no limit.
    pub max_per_ip: Option<usize>,
}

impl Default for ConnectionLimits {
    /// The flags' defaults.
    fn default() -> Self {
        ConnectionLimits {
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            keepalive_interval: Some(Duration::from_secs(30)),
            keepalive_timeout: Duration::from_secs(20),
            max_per_ip: Some(256),
        }
    }
}

/// A tonic server builder for `limits`: HTTP/2 keepalive PINGs, and each connection's calls
/// counted so that the idle timeout of [`Incoming`] spares busy connections. Serve it with
/// `serve_with_incoming_shutdown` from an [`Incoming`].
pub fn grpc_server(limits: &ConnectionLimits) -> Server<Stack<OpenCallsLayer, Identity>> {
    Server::builder()
        .http2_keepalive_interval(limits.keepalive_interval)
        .http2_keepalive_timeout(Some(limits.keepalive_timeout))
        .layer(OpenCallsLayer)
}

/// The connections of one listener, admitted as the module's header says, as a stream for
/// tonic's `serve_with_incoming_shutdown`. Dropping it closes the listening socket.
#[derive(Debug)]
pub struct Incoming {
    listener: TcpListener,
    local: SocketAddr,
    limits: ConnectionLimits,
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
    /// Connections waiting for their first byte.
    waiting: FuturesUnordered<FirstByte>,
    /// While accepting is paused after a failure for want of resources.
    backoff: Option<Pin<Box<Sleep>>>,
    next_backoff: Duration,
}

type FirstByte = Pin<Box<dyn Future<Output = Option<Connection>> + Send>>;

impl Incoming {
    /// Binds `addr` (port 0 picks a free port), or takes the listener handed over for it
    /// ([`crate::hand_over`]).
    pub async fn bind(addr: SocketAddr, limits: ConnectionLimits) -> Result<Incoming, ServeError> {
        // A listener a supervisor in this process bound for this address (`chess up`) is
        // taken as it is, so its port was never free in between (handover.rs).
        let listener = match crate::handover::take(addr) {
            Some(held) => held
                .set_nonblocking(true)
                .and_then(|()| TcpListener::from_std(held)),
            None => TcpListener::bind(addr).await,
        }
        .map_err(|source| ServeError::Listen { addr, source })?;
        let local = listener.local_addr().map_err(ServeError::BoundAddr)?;
        Ok(Incoming {
            listener,
            local,
            limits,
            peers: Arc::default(),
            waiting: FuturesUnordered::new(),
            backoff: None,
            next_backoff: FIRST_BACKOFF,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Accepts what the listener has, until it has nothing or accepting must wait.
    fn accept_ready(&mut self, cx: &mut Context<'_>) {
        loop {
            if let Some(backoff) = &mut self.backoff {
                if backoff.as_mut().poll(cx).is_pending() {
                    return;
                }
                self.backoff = None;
            }
            match self.listener.poll_accept(cx) {
                Poll::Pending => return,
                Poll::Ready(Ok((stream, remote))) => {
                    self.next_backoff = FIRST_BACKOFF;
                    self.admit(stream, remote);
                }
                Poll::Ready(Err(e)) if is_one_connections_error(&e) => {
                    tracing::debug!(error = %e, "accept failed for one connection");
                }
                Poll::Ready(Err(e)) => {
                    // Out of descriptors or memory: trying again at once would fail again.
                    if self.next_backoff == FIRST_BACKOFF {
                        tracing::warn!(
                            addr = %self.local,
                            error = %e,
                            "cannot accept connections; waiting for resources"
                        );
                    }
                    let wait = self.next_backoff;
                    self.next_backoff = (wait * 2).min(MAX_BACKOFF);
                    self.backoff = Some(Box::pin(tokio::time::sleep(wait)));
                }
            }
        }
    }

    /// Takes a place for the peer's address, or closes the connection when it has none.
    fn admit(&mut self, stream: TcpStream, remote: SocketAddr) {
        let Some(place) = Place::take(&self.peers, remote.ip(), self.limits.max_per_ip) else {
            tracing::debug!(%remote, "connection refused: too many from this address");
            return;
        };
        let _ = stream.set_nodelay(true);
        let keepalive = socket2::TcpKeepalive::new().with_time(TCP_KEEPALIVE);
        let _ = socket2::SockRef::from(&stream).set_tcp_keepalive(&keepalive);
        let local = self.local;
        let limits = self.limits;
        self.waiting.push(Box::pin(async move {
            // A peek, not a wait for readiness: readiness may be reported before any byte
            // has come.
            let mut first = [0u8; 1];
            match tokio::time::timeout(limits.handshake_timeout, stream.peek(&mut first)).await {
                Ok(Ok(1..)) => Some(Connection::new(stream, remote, local, limits, place)),
                Ok(Ok(0) | Err(_)) => None,
                Err(_) => {
                    tracing::debug!(%remote, "connection closed: nothing sent in time");
                    None
                }
            }
        }));
    }
}

/// Errors of accept that concern one connection only: the next accept may well succeed.
fn is_one_connections_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

impl Stream for Incoming {
    type Item = Result<Connection, io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        this.accept_ready(cx);
        while let Poll::Ready(Some(first)) = this.waiting.poll_next_unpin(cx) {
            if let Some(connection) = first {
                return Poll::Ready(Some(Ok(connection)));
            }
        }
        Poll::Pending
    }
}

/// One of the connections an address may hold; given back when dropped.
#[derive(Debug)]
struct Place {
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
}

impl Place {
    fn take(
        peers: &Arc<Mutex<HashMap<IpAddr, usize>>>,
        ip: IpAddr,
        max: Option<usize>,
    ) -> Option<Place> {
        let mut held = peers.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(ip).or_insert(0);
        if max.is_some_and(|max| *count >= max) {
            return None;
        }
        *count += 1;
        Some(Place {
            peers: peers.clone(),
            ip,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut held = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

/// An accepted connection: its socket, and the idle timeout, which ends the connection by
/// reporting the end of its input once it has had no call in progress for that long.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    peer: Peer,
    idle_timeout: Duration,
    idle_check: Pin<Box<Sleep>>,
    closed: bool,
    _place: Place,
}

impl Connection {
    fn new(
        stream: TcpStream,
        remote: SocketAddr,
        local: SocketAddr,
        limits: ConnectionLimits,
        place: Place,
    ) -> Connection {
        Connection {
            stream,
            peer: Peer {
                remote,
                local,
                calls: Arc::new(OpenCalls::new()),
            },
            idle_timeout: limits.idle_timeout,
            idle_check: Box::pin(tokio::time::sleep(limits.idle_timeout)),
            closed: false,
            _place: place,
        }
    }

    /// Whether the connection has been idle for the idle timeout; otherwise sets the timer to
    /// the next moment it could be.
    fn idle_over(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.idle_check.as_mut().poll(cx).is_pending() {
                return false;
            }
            let next = match self.peer.calls.idle_since() {
                None => Instant::now() + self.idle_timeout,
                Some(since) if since + self.idle_timeout <= Instant::now() => return true,
                Some(since) => since + self.idle_timeout,
            };
            self.idle_check.as_mut().reset(next);
        }
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.closed {
            return Poll::Ready(Ok(()));
        }
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Pending if this.idle_over(cx) => {
                tracing::debug!(remote = %this.peer.remote, "closing an idle connection");
                this.closed = true;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Connected for Connection {
    type ConnectInfo = Peer;

    fn connect_info(&self) -> Peer {
        self.peer.clone()
    }
}

/// What a request knows of its connection (in its extensions): the addresses, and the count
/// of calls in progress that the idle timeout reads. See [`remote_addr`].
#[derive(Clone, Debug)]
pub struct Peer {
    remote: SocketAddr,
    local: SocketAddr,
    calls: Arc<OpenCalls>,
}

impl Peer {
    pub fn remote_addr(&self) -> SocketAddr {
        self.remote
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// `body` as the body of an answer on this connection: the call is in progress, and the
    /// connection busy, until the body is dropped. (For servers other than [`grpc_server`]'s,
    /// which does this itself.)
    pub(crate) fn answer<B>(&self, body: B) -> CallBody<B> {
        CallBody {
            inner: body,
            _call: Some(self.calls.begin()),
        }
    }
}

/// The caller's address: from [`Peer`] for a connection from an [`Incoming`], or from tonic's
/// own connection info (a server fed by tonic's `TcpIncoming`, as in some tests).
pub fn remote_addr<T>(request: &tonic::Request<T>) -> Option<SocketAddr> {
    request
        .extensions()
        .get::<Peer>()
        .map(Peer::remote_addr)
        .or_else(|| request.remote_addr())
}

/// A connection's calls in progress, and when the last one ended.
#[derive(Debug)]
struct OpenCalls {
    open: AtomicUsize,
    last_end: Mutex<Instant>,
}

impl OpenCalls {
    fn new() -> OpenCalls {
        OpenCalls {
            open: AtomicUsize::new(0),
            last_end: Mutex::new(Instant::now()),
        }
    }

    /// Since when the connection has had no call in progress; `None` while it has one.
    fn idle_since(&self) -> Option<Instant> {
        let last_end = *self.last_end.lock().unwrap_or_else(|e| e.into_inner());
        (self.open.load(Ordering::Acquire) == 0).then_some(last_end)
    }

    fn begin(self: &Arc<Self>) -> CallInProgress {
        self.open.fetch_add(1, Ordering::AcqRel);
        CallInProgress(self.clone())
    }
}

/// One call in progress; it ends when dropped (with the response body, or with the call's
/// future when it never answered).
#[derive(Debug)]
struct CallInProgress(Arc<OpenCalls>);

impl Drop for CallInProgress {
    fn drop(&mut self) {
        // The time first, so that a connection is never seen idle since before this call.
        *self.0.last_end.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts each connection's calls in progress (see [`grpc_server`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenCallsLayer;

impl<S> tower::Layer<S> for OpenCallsLayer {
    type Service = OpenCallsService<S>;

    fn layer(&self, inner: S) -> OpenCallsService<S> {
        OpenCallsService { inner }
    }
}

#[derive(Clone, Debug)]
pub struct OpenCallsService<S> {
    inner: S,
}

impl<S, B, RB> tower::Service<Request<B>> for OpenCallsService<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
    RB: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    RB::Error: Into<tonic::codegen::StdError>,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let call = request
            .extensions()
            .get::<Peer>()
            .map(|peer| peer.calls.begin());
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| {
                tonic::body::Body::new(CallBody {
                    inner: body,
                    _call: call,
                })
            }))
        })
    }
}

pin_project_lite::pin_project! {
    /// A response body that holds its call in progress until it is dropped.
    pub(crate) struct CallBody<B> {
        #[pin]
        inner: B,
        _call: Option<CallInProgress>,
    }
}

impl<B: http_body::Body> http_body::Body for CallBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        self.project().inner.poll_frame(cx)
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

    #[test]
    fn an_address_holds_at_most_its_places_and_gets_them_back() {
        let peers = Arc::default();
        let ip: IpAddr = [127, 0, 0, 1].into();
        let other: IpAddr = [127, 0, 0, 2].into();
        let first = Place::take(&peers, ip, Some(2)).expect("first");
        let second = Place::take(&peers, ip, Some(2)).expect("second");
        assert!(Place::take(&peers, ip, Some(2)).is_none());
        assert!(Place::take(&peers, other, Some(2)).is_some());
        drop(first);
        let third = Place::take(&peers, ip, Some(2)).expect("a place given back");
        drop((second, third));
        assert!(peers.lock().unwrap().is_empty(), "{peers:?}");
        assert!(Place::take(&peers, ip, None).is_some());
    }

    #[test]
    fn a_connection_is_idle_only_with_no_call_in_progress() {
        let calls = Arc::new(OpenCalls::new());
        let opened = calls.idle_since().expect("idle when new");
        let call = calls.begin();
        let second = calls.begin();
        assert_eq!(calls.idle_since(), None);
        drop(call);
        assert_eq!(calls.idle_since(), None, "one call still in progress");
        let before_end = Instant::now();
        drop(second);
        let since = calls.idle_since().expect("idle after its calls");
        assert!(since >= before_end && since >= opened);
    }
}
