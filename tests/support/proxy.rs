//! A TCP proxy on 127.0.0.1 that can break a connection right after the server behind it has
//! done what it was asked, before its answer gets back: the fault that makes a write's
//! outcome unknown to the client (a database connection reset after the commit).
//!
//! Armed with a byte pattern, the proxy passes on the client's bytes that hold it, holds back
//! everything the server sends from then on, waits for the server to act on them, and then
//! closes both sides. It fires once per arming. Threads and sockets end when it is dropped.
//!
//! Stalled, it stops passing bytes either way and leaves new connections waiting, with no
//! reset: what a client sees when the server's host vanishes from the network. Healed, it
//! passes on what it held.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How long the server gets to act on the bytes (commit) before the connection is cut.
const SETTLE: Duration = Duration::from_millis(300);

#[derive(Debug, Default)]
struct Shared {
    armed: Mutex<Option<Vec<u8>>>,
    fired: AtomicU32,
    stop: AtomicBool,
    stalled: AtomicBool,
}

/// The proxy; dropping it stops it.
#[derive(Debug)]
pub struct CutProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<thread::JoinHandle<()>>,
}

impl CutProxy {
    /// A proxy on a free port of 127.0.0.1 to `target` (a loopback address).
    pub fn start(target: SocketAddr) -> CutProxy {
        assert!(
            target.ip().is_loopback(),
            "the proxy only forwards to loopback"
        );
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("proxy address");
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let accept = thread::spawn(move || {
            while !s.stop.load(Ordering::SeqCst) {
                if s.stalled.load(Ordering::SeqCst) {
                    // New connections wait in the listen queue, as behind a dead link.
                    thread::sleep(Duration::from_millis(10));
                    continue;
                }
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        if let Ok(server) = TcpStream::connect(target) {
                            pipe(client, server, s.clone());
                        }
                    }
                    Err(_) => thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        CutProxy {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cuts the next connection whose client sends `pattern`, after the server has had
    /// [`SETTLE`] to act on it.
    pub fn arm(&self, pattern: &str) {
        *self.shared.armed.lock().unwrap() = Some(pattern.as_bytes().to_vec());
    }

    /// Forgets an arming that has not fired.
    pub fn disarm(&self) {
        *self.shared.armed.lock().unwrap() = None;
    }

    /// Stops passing bytes, both ways and on every connection, without closing anything.
    pub fn stall(&self) {
        self.shared.stalled.store(true, Ordering::SeqCst);
    }

    /// Passes bytes again, the held ones first.
    pub fn heal(&self) {
        self.shared.stalled.store(false, Ordering::SeqCst);
    }

    /// How many connections it has cut.
    pub fn fired(&self) -> u32 {
        self.shared.fired.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Copies bytes both ways between `client` and `server` on two threads, cutting the
/// connection when the client sends the armed pattern.
fn pipe(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    let held = Arc::new(AtomicBool::new(false));
    let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    // Server to client, unless held back.
    let h = held.clone();
    let stop = shared.clone();
    thread::spawn(move || {
        let (mut from, mut to) = (server2, client2);
        let _ = from.set_read_timeout(Some(Duration::from_millis(200)));
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    wait_while_stalled(&stop);
                    if !h.load(Ordering::SeqCst) && to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                Err(e) if is_timeout(&e) => {
                    if stop.stop.load(Ordering::SeqCst) {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
    // Client to server, watching for the pattern (across reads: the tail is kept).
    thread::spawn(move || {
        let (mut from, mut to) = (client, server);
        let _ = from.set_read_timeout(Some(Duration::from_millis(200)));
        let mut buf = [0u8; 16 * 1024];
        let mut tail: Vec<u8> = Vec::new();
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if is_timeout(&e) => {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    continue;
                }
                Err(_) => break,
            };
            let before = tail.len();
            tail.extend_from_slice(&buf[..n]);
            let cut = {
                let mut armed = shared.armed.lock().unwrap();
                // Only windows that take in the new bytes: what came before arming is past.
                let hit = armed.as_ref().is_some_and(|p| {
                    let from = before.saturating_sub(p.len().saturating_sub(1));
                    tail[from..].windows(p.len()).any(|w| w == p.as_slice())
                });
                if hit {
                    *armed = None;
                }
                hit
            };
            if cut {
                held.store(true, Ordering::SeqCst);
            }
            wait_while_stalled(&shared);
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
            if cut {
                thread::sleep(SETTLE);
                shared.fired.fetch_add(1, Ordering::SeqCst);
                break;
            }
            let keep = tail.len().saturating_sub(256);
            tail.drain(..keep);
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}

/// Holds the bytes just read while the proxy is stalled (and not stopping).
fn wait_while_stalled(shared: &Shared) {
    while shared.stalled.load(Ordering::SeqCst) && !shared.stop.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(5));
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
