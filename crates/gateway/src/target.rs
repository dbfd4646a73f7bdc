//! Backend addresses as operators write them (`--rules-addr`, `--search-addr`): a fixed
//! replica at an IP address, or a DNS name resolved to replicas.

use std::net::SocketAddr;

use http::Uri;

/// The host of `uri` as an address or a name: an IPv6 literal without its brackets; empty when
/// it has none.
pub(crate) fn uri_host(uri: &Uri) -> &str {
    uri.host()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
}

/// `http://host:port` (or `host:port`, read as http).
fn parse_backend(text: &str) -> Result<Uri, String> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let uri: Uri = with_scheme
        .parse()
        .map_err(|e| format!("not a backend address ({e})"))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") => {
            return Err(
                "https backends are not supported yet: use http:// on the internal network"
                    .to_owned(),
            );
        }
        Some(other) => {
            return Err(format!(
                "unsupported scheme {other:?}: use http://host:port"
            ));
        }
        None => return Err("missing scheme: use http://host:port".to_owned()),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err("missing host: use http://host:port".to_owned());
    }
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/") {
        return Err("a backend address takes no path: use http://host:port".to_owned());
    }
    Ok(uri)
}

/// The targets of a list flag; empty entries (an empty variable, a trailing comma) mean
/// nothing.
pub(crate) fn targets(flag: &str, entries: &[String]) -> Result<Vec<Target>, String> {
    let mut targets = Vec::new();
    for entry in entries {
        if !entry.trim().is_empty() {
            targets.push(parse_target(entry).map_err(|e| format!("{flag} {entry:?}: {e}"))?);
        }
    }
    Ok(targets)
}

/// One `--rules-addr` or `--search-addr` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// An IP address: one replica, as configured.
    Fixed(Uri),
    /// A DNS name, resolved periodically: one replica per address it resolves to.
    Name {
        host: String,
        port: u16,
        /// As the operator wrote it, normalised: `dns:///search:50053`, `http://search:50053`.
        shown: String,
    },
}

impl Target {
    /// As configured, for logs and ServerInfo.
    pub fn shown(&self) -> String {
        match self {
            Target::Fixed(uri) => uri.to_string().trim_end_matches('/').to_owned(),
            Target::Name { shown, .. } => shown.clone(),
        }
    }
}

/// `dns:///host:port` (gRPC's name syntax; no DNS server authority), or a backend address:
/// an IP literal is a fixed replica, any other host a name to resolve.
fn parse_target(text: &str) -> Result<Target, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("dns:") {
        let Some(target) = rest.strip_prefix("///") else {
            return Err(
                "use dns:///host:port (a DNS server in the address is not supported)".to_owned(),
            );
        };
        let uri: Uri = format!("http://{target}")
            .parse()
            .map_err(|e| format!("not a host:port after dns:/// ({e})"))?;
        if uri.host().is_none_or(str::is_empty)
            || uri.path_and_query().is_some_and(|p| p.as_str() != "/")
        {
            return Err("use dns:///host:port".to_owned());
        }
        let Some(port) = uri.port_u16() else {
            return Err("missing port: use dns:///host:port".to_owned());
        };
        let host = uri_host(&uri).to_owned();
        if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            let uri = format!("http://{}", SocketAddr::new(ip, port))
                .parse()
                .map_err(|e| format!("not an address ({e})"))?;
            return Ok(Target::Fixed(uri));
        }
        return Ok(Target::Name {
            shown: format!("dns:///{host}:{port}"),
            host,
            port,
        });
    }
    let uri = parse_backend(text)?;
    let host = uri_host(&uri).to_owned();
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(Target::Fixed(uri));
    }
    Ok(Target::Name {
        port: uri.port_u16().unwrap_or(80),
        shown: uri.to_string().trim_end_matches('/').to_owned(),
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_addresses() {
        assert_eq!(
            parse_backend("127.0.0.1:50052").unwrap().to_string(),
            "http://127.0.0.1:50052/"
        );
        assert!(parse_backend("http://rules:50052").is_ok());
        assert!(
            parse_backend("https://rules:50052")
                .unwrap_err()
                .contains("https")
        );
        assert!(parse_backend("http://rules:50052/x").is_err());
    }

    #[test]
    fn search_targets() {
        let fixed = |text: &str| match parse_target(text).unwrap() {
            Target::Fixed(uri) => uri.to_string(),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(fixed("10.0.0.1:50053"), "http://10.0.0.1:50053/");
        assert_eq!(fixed("http://[::1]:5"), "http://[::1]:5/");
        assert_eq!(fixed("dns:///127.0.0.1:7"), "http://127.0.0.1:7/");
        let name = |text: &str| match parse_target(text).unwrap() {
            Target::Name { host, port, shown } => (host, port, shown),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            name("dns:///search.chess.svc:50053"),
            (
                "search.chess.svc".to_owned(),
                50053,
                "dns:///search.chess.svc:50053".to_owned()
            )
        );
        assert_eq!(
            name(" search-0:50053 "),
            (
                "search-0".to_owned(),
                50053,
                "http://search-0:50053".to_owned()
            )
        );
        assert_eq!(name("http://localhost:1").0, "localhost");
        for bad in [
            "dns://8.8.8.8/search:1",
            "dns:///search",
            "dns:///:1",
            "dns:///search:1/x",
            "https://search:1",
        ] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }
}
