//! One write where HTTP/2 would make two or three.
//!
//! A forwarded call's frames are produced by different tasks: the backend request's HEADERS by
//! the client connection's task and its DATA by the body's task a moment later; the caller's
//! answer's DATA by the call's task and, after h2 has flushed that, the trailers. Each flush
//! is a system call and a packet, and on the receiving side often a wake-up of its own. This
//! wrapper of a connection's socket puts a flush off once, until the tasks that are ready to
//! run have run (the flushing task is woken at once, behind them), and then writes everything
//! they produced together: the request's HEADERS and DATA, the answer and its trailers, each in
//! one `writev`. A flush is put off by at most one round of the runtime's ready tasks, never for
//! a timer, and never when nothing waits to be written.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// Bytes held back before a write goes out regardless of flushes (h2 writes large DATA frames
/// in pieces of its own; holding more than this would only copy them).
const HOLD_MAX: usize = 64 << 10;
/// The held buffer's capacity kept once it is written out (a connection that once held a
/// large answer gives the rest back).
const HOLD_KEEP: usize = 16 << 10;

/// A socket whose flushes are put off by one round of ready tasks (see the module's header).
#[derive(Debug)]
pub(crate) struct Coalesce<T> {
    inner: T,
    /// Written by the connection, not yet to the socket.
    held: Vec<u8>,
    /// The flush was put off once already: the next one writes.
    put_off: bool,
}

impl<T> Coalesce<T> {
    pub fn new(inner: T) -> Coalesce<T> {
        Coalesce {
            inner,
            held: Vec::new(),
            put_off: false,
        }
    }
}

impl<T: AsyncWrite + Unpin> Coalesce<T> {
    /// Writes what is held to the socket.
    fn poll_write_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.held.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.held))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.held.drain(..n);
        }
        if self.held.capacity() > HOLD_KEEP {
            self.held = Vec::new();
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Coalesce<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.held.len() + buf.len() > HOLD_MAX {
            ready!(this.poll_write_held(cx))?;
            if buf.len() > HOLD_MAX {
                return Pin::new(&mut this.inner).poll_write(cx, buf);
            }
        }
        this.held.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        if this.held.len() + len > HOLD_MAX {
            ready!(this.poll_write_held(cx))?;
            if len > HOLD_MAX {
                return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
            }
        }
        for b in bufs {
            this.held.extend_from_slice(b);
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.held.is_empty() && !this.put_off {
            // Let the other ready tasks add their frames first; this task runs again behind
            // them.
            this.put_off = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(this.poll_write_held(cx))?;
        this.put_off = false;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_write_held(cx))?;
        this.put_off = false;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<T: Connected> Connected for Coalesce<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> T::ConnectInfo {
        self.inner.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// Records each write that reaches the socket.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl AsyncWrite for Writes {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.0.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn writes_between_flushes_go_out_together_after_one_round() {
        let mut io = Coalesce::new(Writes::default());
        io.write_all(b"headers").await.unwrap();
        io.write_all(b"data").await.unwrap();
        assert!(io.inner.0.is_empty(), "nothing written before a flush");
        // The first flush is put off once (the task is woken at once), then writes.
        io.flush().await.unwrap();
        assert_eq!(io.inner.0, vec![b"headersdata".to_vec()]);
        // A flush with nothing held writes nothing.
        io.flush().await.unwrap();
        assert_eq!(io.inner.0.len(), 1);
        // A write larger than what is held back goes straight through, after what is held.
        io.write_all(b"x").await.unwrap();
        let large = vec![7u8; HOLD_MAX + 1];
        io.write_all(&large).await.unwrap();
        assert_eq!(io.inner.0[1], b"x".to_vec());
        assert_eq!(io.inner.0[2], large);
        // Shutting down writes what is held.
        io.write_all(b"goaway").await.unwrap();
        io.shutdown().await.unwrap();
        assert_eq!(io.inner.0.last().unwrap(), &b"goaway".to_vec());
    }
}
