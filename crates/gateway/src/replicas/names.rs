//! Names and addresses, apart from the pool: the resolver (replaceable so tests can play
//! DNS), what a name resolved to last, a fixed target's address, and the channel for one
//! resolved address. `resolve.rs` uses them to keep the pool's replicas in step.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::Uri;

use crate::target::uri_host;
use crate::upstream::UpstreamChannel;

/// How long one name's resolution may take.
pub(super) const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Resolves `host` and `port` to addresses; replaceable so tests can play DNS.
pub(crate) type Resolver =
    Arc<dyn Fn(String, u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> + Send + Sync>;

/// The system resolver (`tokio::net::lookup_host`: /etc/hosts, then DNS).
pub(super) fn system_resolver() -> Resolver {
    Arc::new(|host: String, port: u16| {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    })
}

/// What one name resolved to last.
#[derive(Debug, Default)]
pub(super) struct Resolution {
    /// The last successful answer, sorted; kept through failed lookups so a DNS hiccup does
    /// not empty the pool.
    pub(super) addrs: Vec<SocketAddr>,
    /// Why the last lookup failed, when it did.
    pub(super) error: Option<String>,
}

/// A fixed target's address (its host is an IP literal).
pub(super) fn fixed_addr(uri: &Uri) -> Option<SocketAddr> {
    let ip: IpAddr = uri_host(uri).parse().ok()?;
    Some(SocketAddr::new(ip, uri.port_u16().unwrap_or(80)))
}

/// A backend for one resolved address.
pub(super) fn backend_for(service: &'static str, addr: SocketAddr) -> UpstreamChannel {
    let uri: Uri = format!("http://{addr}")
        .parse()
        .unwrap_or_else(|_| Uri::from_static("http://127.0.0.1:0"));
    UpstreamChannel::new(service, &uri)
}
