//! Listeners bound ahead by a supervisor in the same process and handed to the services that
//! serve on them.
//!
//! `chess up` runs the three services in its own process and must tell the gateway the rules
//! and search services' addresses before any of them starts, so it resolves port 0 itself by
//! binding. Closing those listeners for the services to bind the same ports again left a
//! window in which another process could take a port (a test running another stack beside it
//! did: "cannot listen on 127.0.0.1:44967: Address already in use"). Handed over instead, a
//! port stays bound from the supervisor's bind to the service's accept loop.

use std::net::{SocketAddr, TcpListener};
use std::sync::Mutex;

static HANDED_OVER: Mutex<Vec<TcpListener>> = Mutex::new(Vec::new());

/// Hands `listener` to the service in this process that will listen on its address: the
/// next [`crate::Incoming::bind`] of exactly that address (its port resolved) takes it
/// instead of binding the address again.
pub fn hand_over(listener: TcpListener) {
    HANDED_OVER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(listener);
}

/// The listener handed over for `addr`, if any (never for port 0).
pub(crate) fn take(addr: SocketAddr) -> Option<TcpListener> {
    if addr.port() == 0 {
        return None;
    }
    let mut handed = HANDED_OVER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let i = handed
        .iter()
        .position(|l| l.local_addr().is_ok_and(|a| a == addr))?;
    Some(handed.swap_remove(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConnectionLimits, Incoming};

    #[tokio::test]
    async fn a_handed_over_port_stays_taken_until_the_service_takes_it() {
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = held.local_addr().unwrap();
        hand_over(held);
        // Nobody else can have the port meanwhile.
        assert_eq!(
            TcpListener::bind(addr).unwrap_err().kind(),
            std::io::ErrorKind::AddrInUse
        );
        // The service's bind takes the handed-over listener (a fresh bind would fail) and
        // accepts on it.
        let incoming = Incoming::bind(addr, ConnectionLimits::default())
            .await
            .expect("the handed-over listener");
        assert_eq!(incoming.local_addr(), addr);
        tokio::net::TcpStream::connect(addr).await.unwrap();
        // Taken once: a second bind of the address is a fresh one, and fails while the first
        // is open.
        assert!(take(addr).is_none());
        assert!(
            Incoming::bind(addr, ConnectionLimits::default())
                .await
                .is_err()
        );
    }
}
