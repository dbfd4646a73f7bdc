//! The client speaks only to the harness's own hosts: addresses in 198.18.0.0/15 (set aside
//! for network benchmarks, RFC 2544) that the harness named.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Whether `ip` is in 198.18.0.0/15.
pub fn in_bench_range(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            a == 198 && (b == 18 || b == 19)
        }
        IpAddr::V6(_) => false,
    }
}

/// `target` if it is one of `hosts` and in the benchmark range; otherwise why not.
pub fn allowed(target: SocketAddr, hosts: &[Ipv4Addr]) -> Result<SocketAddr, String> {
    if !in_bench_range(target.ip()) {
        return Err(format!("{target} is outside 198.18.0.0/15: refused"));
    }
    if !hosts.iter().any(|h| IpAddr::V4(*h) == target.ip()) {
        return Err(format!(
            "{target} is not one of the harness's hosts: refused"
        ));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_own_hosts_in_the_range() {
        let hosts = [Ipv4Addr::new(198, 18, 0, 2)];
        assert!(allowed("198.18.0.2:50051".parse().unwrap(), &hosts).is_ok());
        assert!(allowed("198.18.0.3:50051".parse().unwrap(), &hosts).is_err());
        assert!(allowed("127.0.0.1:50051".parse().unwrap(), &hosts).is_err());
        let outside = [Ipv4Addr::new(10, 0, 0, 1)];
        assert!(allowed("10.0.0.1:1".parse().unwrap(), &outside).is_err());
        assert!(in_bench_range("198.19.255.1".parse().unwrap()));
        assert!(!in_bench_range("198.20.0.1".parse().unwrap()));
    }
}
