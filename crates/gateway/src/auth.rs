//! API keys and per-caller rate limits.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
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
    /// Failed authentications allowed per client address and minute (also the burst).
    failures: Option<FailureLimiter>,
}

impl Authenticator {
    pub fn new(
        auth: Auth,
        rate: Option<(u32, u32)>,
        failures_per_minute: Option<u32>,
    ) -> Authenticator {
        Authenticator {
            auth,
            limiter: rate.map(|(rate, burst)| RateLimiter::new(rate, burst)),
            failures: failures_per_minute.map(FailureLimiter::new),
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
            Auth::Keys(keys) => {
                let ip = peer.map(|p| p.ip());
                if let (Some(failures), Some(ip)) = (&self.failures, ip) {
                    failures.check(ip)?;
                }
                match check_key(keys, metadata, peer) {
                    Ok(key) => Caller::Key(key),
                    Err(status) => {
                        if let (Some(failures), Some(ip)) = (&self.failures, ip) {
                            failures.failed(ip);
                        }
                        return Err(status);
                    }
                }
            }
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
        tracing::debug!(peer = ?peer, "rejected a call without an API key");
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
            tracing::debug!(peer = ?peer, "rejected a malformed authorization header");
            Status::unauthenticated("malformed authorization metadata: expected `Bearer <key>`")
        })?;
    if keys.contains(key) {
        Ok(key.to_owned())
    } else {
        // Logged at WARN by FailureLimiter, once per address and episode, not per call.
        tracing::debug!(peer = ?peer, key_hash = %short_hash(key), "rejected an unknown API key");
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

/// Failed authentications per client address: a token bucket of `per_minute` failures
/// (refilled at that rate). An address with no failure left in its bucket has every call
/// refused (RESOURCE_EXHAUSTED with RetryInfo), whatever key it sends, until a failure's worth
/// has refilled: guessing keys stops there. The log gets one WARN line when an address first
/// fails and one when it is limited, with the count of calls refused since, not a line per
/// call.
#[derive(Debug)]
pub(crate) struct FailureLimiter {
    per_minute: u32,
    addresses: Mutex<HashMap<IpAddr, Failures>>,
}

#[derive(Clone, Copy, Debug)]
struct Failures {
    /// Failures still allowed now.
    tokens: f64,
    at: Instant,
    /// Calls refused while limited, not logged one by one.
    refused: u64,
    limited: bool,
}

impl FailureLimiter {
    pub fn new(per_minute: u32) -> FailureLimiter {
        FailureLimiter {
            per_minute: per_minute.max(1),
            addresses: Mutex::new(HashMap::new()),
        }
    }

    fn rate(&self) -> f64 {
        f64::from(self.per_minute) / 60.0
    }

    /// The address's entry, refilled to `now`.
    fn entry<'a>(
        &self,
        map: &'a mut HashMap<IpAddr, Failures>,
        ip: IpAddr,
        now: Instant,
    ) -> &'a mut Failures {
        let (rate, burst) = (self.rate(), f64::from(self.per_minute));
        if map.len() > PRUNE_ABOVE {
            map.retain(|_, f| f.tokens + now.duration_since(f.at).as_secs_f64() * rate < burst);
        }
        let f = map.entry(ip).or_insert(Failures {
            tokens: burst,
            at: now,
            refused: 0,
            limited: false,
        });
        f.tokens = (f.tokens + now.saturating_duration_since(f.at).as_secs_f64() * rate).min(burst);
        f.at = now;
        f
    }

    /// Refuses a call from an address with no failure left.
    pub fn check(&self, ip: IpAddr) -> Result<(), Status> {
        self.check_at(ip, Instant::now())
    }

    fn check_at(&self, ip: IpAddr, now: Instant) -> Result<(), Status> {
        let rate = self.rate();
        let mut map = self.addresses.lock().unwrap_or_else(|p| p.into_inner());
        let f = self.entry(&mut map, ip, now);
        if f.tokens >= 1.0 {
            if f.limited {
                f.limited = false;
                tracing::info!(%ip, refused = f.refused, "failed-authentication limit lifted");
                f.refused = 0;
            }
            return Ok(());
        }
        f.refused += 1;
        let wait = Duration::from_secs_f64((1.0 - f.tokens) / rate);
        Err(Status::with_error_details(
            Code::ResourceExhausted,
            format!(
                "too many failed authentications from this address ({} a minute allowed); \
                 every call from it is refused for {} s",
                self.per_minute,
                wait.as_secs().max(1)
            ),
            ErrorDetails::with_retry_info(Some(wait)),
        ))
    }

    /// Counts a failed authentication.
    pub fn failed(&self, ip: IpAddr) {
        self.failed_at(ip, Instant::now());
    }

    fn failed_at(&self, ip: IpAddr, now: Instant) {
        let burst = f64::from(self.per_minute);
        let mut map = self.addresses.lock().unwrap_or_else(|p| p.into_inner());
        let f = self.entry(&mut map, ip, now);
        if f.tokens >= burst - 1e-9 {
            tracing::warn!(%ip, "failed authentication (missing, malformed or unknown API key)");
        }
        f.tokens = (f.tokens - 1.0).max(0.0);
        if f.tokens < 1.0 && !f.limited {
            f.limited = true;
            tracing::warn!(
                %ip,
                per_minute = self.per_minute,
                "too many failed authentications: calls from this address are refused for a while"
            );
        }
    }
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
    fn failures_are_limited_per_address() {
        let limiter = FailureLimiter::new(6);
        let (me, other): (IpAddr, IpAddr) =
            ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        for _ in 0..6 {
            assert!(limiter.check_at(me, t0).is_ok());
            limiter.failed_at(me, t0);
        }
        let e = limiter.check_at(me, t0).unwrap_err();
        assert_eq!(e.code(), Code::ResourceExhausted);
        let wait = e
            .get_error_details()
            .retry_info()
            .unwrap()
            .retry_delay
            .unwrap();
        assert!(
            wait > Duration::from_secs(9) && wait <= Duration::from_secs(10),
            "{wait:?}"
        );
        assert!(limiter.check_at(other, t0).is_ok(), "per address");
        // One failure's worth refills in ten seconds (six a minute).
        assert!(limiter.check_at(me, t0 + Duration::from_secs(10)).is_ok());
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
