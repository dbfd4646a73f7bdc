//! Where the load goes: the target's address (loopback unless `--allow-remote`), its
//! connections, and a health check that says which services it serves.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Time allowed to connect, and to one health check.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// `http://host:port` or `host:port`, split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
    /// The path after the authority (`/metrics`), empty when none.
    pub path: String,
}

impl HostPort {
    pub fn parse(text: &str, what: &str) -> Result<HostPort, String> {
        let t = text.trim();
        let rest = match t.split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => {
                return Err(format!(
                    "{what} {t}: TLS is not supported; use http:// (plaintext gRPC, as the \
                     platform serves on its internal network)"
                ));
            }
            Some((scheme, _)) => {
                return Err(format!(
                    "{what} {t}: unsupported scheme {scheme:?}; use http://HOST:PORT"
                ));
            }
            None => t,
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
            let (h, p) = inner
                .split_once("]:")
                .ok_or_else(|| format!("{what} {t}: use http://[IPv6]:PORT"))?;
            (h, p)
        } else {
            authority
                .rsplit_once(':')
                .ok_or_else(|| format!("{what} {t}: missing port; use http://HOST:PORT"))?
        };
        if host.is_empty() {
            return Err(format!("{what} {t}: missing host; use http://HOST:PORT"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| format!("{what} {t}: {port:?} is not a port"))?;
        Ok(HostPort {
            host: host.to_owned(),
            port,
            path: path.to_owned(),
        })
    }

    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Resolves the host; refuses any address outside loopback unless `allow_remote`.
    pub async fn resolve(&self, what: &str, allow_remote: bool) -> Result<SocketAddr, String> {
        let addrs: Vec<SocketAddr> = match self.host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, self.port)],
            Err(_) => tokio::time::timeout(
                CONNECT_TIMEOUT,
                tokio::net::lookup_host((self.host.as_str(), self.port)),
            )
            .await
            .map_err(|_| format!("{what} {}: name lookup timed out", self.host))?
            .map_err(|e| format!("{what} {}: cannot resolve the name: {e}", self.host))?
            .collect(),
        };
        let Some(first) = addrs.first().copied() else {
            return Err(format!("{what} {}: the name has no address", self.host));
        };
        if !allow_remote && let Some(far) = addrs.iter().find(|a| !a.ip().is_loopback()) {
            return Err(format!(
                "{what} {} is not on this machine ({} is outside loopback): chess-loadgen \
                     only loads 127.0.0.0/8, ::1 and localhost unless you pass --allow-remote \
                     (load only servers you run)",
                self.authority(),
                far.ip()
            ));
        }
        Ok(first)
    }
}

/// Opens `count` connections (one HTTP/2 channel each) to `addr`.
pub async fn connect(addr: SocketAddr, count: u32) -> Result<Vec<Channel>, String> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad target address {addr}: {e}"))?
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true);
    let mut channels = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let channel = endpoint.connect().await.map_err(|e| {
            let mut text = format!("cannot reach the target {addr}: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        })?;
        channels.push(channel);
    }
    Ok(channels)
}

/// Whether the target serves `service`, from its gRPC health service.
pub async fn serves(channel: &Channel, service: &str) -> Result<bool, String> {
    let mut client = HealthClient::new(channel.clone());
    let mut request = tonic::Request::new(HealthCheckRequest {
        service: service.to_owned(),
    });
    request.set_timeout(CONNECT_TIMEOUT);
    match tokio::time::timeout(CONNECT_TIMEOUT, client.check(request)).await {
        Err(_) => Err("the target did not answer its health check in time".to_owned()),
        Ok(Ok(answer)) => Ok(answer.get_ref().status == i32::from(ServingStatus::Serving)),
        Ok(Err(status)) if status.code() == tonic::Code::NotFound => Ok(false),
        Ok(Err(status)) => Err(format!(
            "the target's health check failed: {:?}: {}",
            status.code(),
            status.message()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        let t = HostPort::parse("http://127.0.0.1:50051", "target").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 50051, "")
        );
        let m = HostPort::parse("localhost:9000/metrics", "metrics").unwrap();
        assert_eq!(
            (m.host.as_str(), m.port, m.path.as_str()),
            ("localhost", 9000, "/metrics")
        );
        let v6 = HostPort::parse("http://[::1]:80", "target").unwrap();
        assert_eq!(v6.authority(), "[::1]:80");
        assert!(HostPort::parse("https://127.0.0.1:1", "target").is_err());
        assert!(HostPort::parse("127.0.0.1", "target").is_err());
        assert!(HostPort::parse("grpc://127.0.0.1:1", "target").is_err());
        assert!(HostPort::parse("http://:1", "target").is_err());
    }

    #[tokio::test]
    async fn refuses_addresses_outside_loopback() {
        let far = HostPort::parse("http://192.0.2.1:50051", "target").unwrap();
        let err = far.resolve("target", false).await.unwrap_err();
        assert!(err.contains("--allow-remote"), "{err}");
        assert!(far.resolve("target", true).await.is_ok());
        let near = HostPort::parse("http://127.0.0.2:50051", "target").unwrap();
        assert!(near.resolve("target", false).await.is_ok());
        let v6 = HostPort::parse("http://[::1]:50051", "target").unwrap();
        assert!(v6.resolve("target", false).await.is_ok());
    }
}
