//! API keys and per-caller rate limits.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tonic::metadata::MetadataMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::config::Auth;

/// Who is calling, for rate limiting and logs: a key (by its short hash) or a client IP.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Caller {
    Key(String),
    Ip(String),
}

impl Caller {
    /// A label safe to log: never the key itself.
    pub fn label(&self) -> String {
        match self {
            Caller::Key(key) => format!("key:{}", short_hash(key)),
            Caller::Ip(ip) => format!("ip:{ip}"),
        }
    }
}

/// Eight hex digits of FNV-1a: enough to tell keys apart in logs, too few to recover a key.
pub(crate) fn short_hash(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", h >> 32)
}

#[derive(Debug)]
pub(crate) struct Authenticator {
    auth: Auth,
    limiter: Option<RateLimiter>,
}

impl Authenticator {
    pub fn new(auth: Auth, rate: Option<(u32, u32)>) -> Authenticator {
        Authenticator {
            auth,
            limiter: rate.map(|(rate, burst)| RateLimiter::new(rate, burst)),
        }
    }

    pub fn required(&self) -> bool {
        matches!(self.auth, Auth::Keys(_))
    }

    /// Checks the key (in keys mode) and takes one token from the caller's bucket.
    pub fn admit(
        &self,
        metadata: &MetadataMap,
        peer: Option<SocketAddr>,
    ) -> Result<Caller, Status> {
        let caller = match &self.auth {
            Auth::Open => {
                Caller::Ip(peer.map_or_else(|| "unknown".to_owned(), |p| p.ip().to_string()))
            }
            Auth::Keys(keys) => Caller::Key(check_key(keys, metadata, peer)?),
        };
        if let Some(limiter) = &self.limiter
            && let Err(wait) = limiter.take(&caller)
        {
            tracing::debug!(caller = %caller.label(), "rate limited");
            let who = match caller {
                Caller::Key(_) => "this API key",
                Caller::Ip(_) => "this client address",
            };
            let message = format!(
                "rate limit exceeded: {} requests per second (burst {}) allowed for {who}; \
                     retry in {} ms",
                limiter.rate,
                limiter.burst,
                wait.as_millis().max(1)
            );
            let details = ErrorDetails::with_retry_info(Some(wait));
            return Err(Status::with_error_details(
                Code::ResourceExhausted,
                message,
                details,
            ));
        }
        Ok(caller)
    }
}

fn check_key(
    keys: &HashSet<String>,
    metadata: &MetadataMap,
    peer: Option<SocketAddr>,
) -> Result<String, Status> {
    let Some(value) = metadata.get("authorization") else {
        tracing::info!(peer = ?peer, "rejected a call without an API key");
        return Err(Status::unauthenticated(
            "missing API key: send the metadata `authorization: Bearer <key>`",
        ));
    };
    let key = value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, key) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
        })
        .ok_or_else(|| {
            tracing::info!(peer = ?peer, "rejected a malformed authorization header");
            Status::unauthenticated("malformed authorization metadata: expected `Bearer <key>`")
        })?;
    if keys.contains(key) {
        Ok(key.to_owned())
    } else {
        tracing::warn!(peer = ?peer, key_hash = %short_hash(key), "rejected an unknown API key");
        Err(Status::unauthenticated(format!(
            "API key not recognised (hash {}); check the key you were given",
            short_hash(key)
        )))
    }
}

/// Token buckets, one per caller.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    rate: u32,
    burst: u32,
    buckets: Mutex<HashMap<Caller, Bucket>>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Above this many callers, full (idle) buckets are dropped so the map cannot grow forever.
const PRUNE_ABOVE: usize = 10_000;

impl RateLimiter {
    pub fn new(rate: u32, burst: u32) -> RateLimiter {
        RateLimiter {
            rate,
            burst: burst.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token, or says how long until one is available.
    pub fn take(&self, caller: &Caller) -> Result<(), Duration> {
        self.take_at(caller, Instant::now())
    }

    fn take_at(&self, caller: &Caller, now: Instant) -> Result<(), Duration> {
        let rate = f64::from(self.rate);
        let burst = f64::from(self.burst);
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > PRUNE_ABOVE {
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = buckets.entry(caller.clone()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let refill = now.saturating_duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = (bucket.tokens + refill).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bucket() {
        let limiter = RateLimiter::new(10, 3);
        let me = Caller::Ip("127.0.0.1".into());
        let other = Caller::Ip("127.0.0.2".into());
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limiter.take_at(&me, t0).is_ok());
        }
        let wait = limiter.take_at(&me, t0).unwrap_err();
        assert!(
            wait <= Duration::from_millis(100) && wait > Duration::from_millis(90),
            "{wait:?}"
        );
        assert!(
            limiter.take_at(&other, t0).is_ok(),
            "buckets are per caller"
        );
        assert!(
            limiter
                .take_at(&me, t0 + Duration::from_millis(100))
                .is_ok()
        );
        assert!(
            limiter
                .take_at(&me, t0 + Duration::from_millis(100))
                .is_err()
        );
    }

    #[test]
    fn keys_and_hashes() {
        let keys: HashSet<String> = ["secret".to_owned()].into();
        let mut md = MetadataMap::new();
        let e = check_key(&keys, &md, None).unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
        assert!(e.message().contains("missing API key"));
        md.insert("authorization", "Bearer wrong".parse().unwrap());
        let e = check_key(&keys, &md, None).unwrap_err();
        assert!(e.message().contains("not recognised") && !e.message().contains("wrong"));
        md.insert("authorization", "bearer secret".parse().unwrap());
        assert_eq!(check_key(&keys, &md, None).unwrap(), "secret");
        md.insert("authorization", "secret".parse().unwrap());
        assert!(
            check_key(&keys, &md, None)
                .unwrap_err()
                .message()
                .contains("malformed")
        );
        assert_eq!(short_hash("secret").len(), 8);
        assert_ne!(short_hash("secret"), short_hash("secret2"));
    }
}
