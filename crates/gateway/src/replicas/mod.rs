//! The replicas of one backend (the rules service or the search service): fixed addresses,
//! and names resolved at start and then periodically (every second while one resolves to no
//! address, and at once for a call that finds no replica known), one channel per address. Calls go
//! round-robin over the healthy replicas; a replica whose call fails with UNAVAILABLE is
//! ejected for a backoff that doubles with each failure, and comes back once a health check
//! passes (so is one on which a call timed out after [`HANG_MIN`] or more while it answered
//! nothing at all: hung, stopped or gone without a reset); a call that fails that way before answering is retried once on another replica
//! where that is safe ([`Retry`]). Names and their resolution are in `resolve.rs`, sending a
//! call and its retry in `call.rs`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chess_service_kit::{Metrics, Shutdown};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tonic::Status;

use crate::target::Target;
use crate::upstream::UpstreamChannel;

mod call;
mod names;
mod resolve;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use call::Refused;
pub(crate) use names::Resolver;
use names::{Resolution, system_resolver};

/// The first ejection's length; each further failure in a row doubles it, up to
/// [`EJECT_MAX`].
const EJECT_BASE: Duration = Duration::from_secs(1);
const EJECT_MAX: Duration = Duration::from_secs(30);
/// A call that ran this long and timed out on a replica that answered nothing meanwhile
/// ejects it (a hung or vanished replica, not only one that refuses); a shorter deadline says
/// too little.
const HANG_MIN: Duration = Duration::from_secs(1);
/// How often ejected replicas whose backoff is over are health-checked, and how often a name
/// that resolves to no address is looked up again (whatever the resolve interval).
const PROBE_TICK: Duration = Duration::from_secs(1);
/// The least time between two lookups made for calls that found no replica known.
const RESOLVE_AGAIN_MIN: Duration = Duration::from_millis(200);

/// One replica: an address and its channel.
#[derive(Debug)]
pub(crate) struct Replica {
    pub backend: UpstreamChannel,
    pub addr: SocketAddr,
    /// The `--rules-addr` or `--search-addr` entry it came from.
    pub source: Arc<str>,
    ejection: Mutex<Ejection>,
}

/// Failures in a row and, while ejected, until when; and when the replica last answered.
#[derive(Debug, Default)]
struct Ejection {
    failures: u32,
    until: Option<Instant>,
    answered: Option<Instant>,
}

impl Replica {
    fn new(backend: UpstreamChannel, addr: SocketAddr, source: Arc<str>) -> Replica {
        Replica {
            backend,
            addr,
            source,
            ejection: Mutex::new(Ejection::default()),
        }
    }

    fn ejection(&self) -> std::sync::MutexGuard<'_, Ejection> {
        self.ejection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes calls: no failure since the last success or passed health check.
    pub fn is_healthy(&self) -> bool {
        self.ejection().failures == 0
    }

    /// Whether the replica has answered any call since `since`.
    pub fn answered_since(&self, since: Instant) -> bool {
        self.ejection().answered.is_some_and(|at| at >= since)
    }

    /// When an ejected replica may be tried again (`None` when healthy).
    fn ejected_until(&self) -> Option<Instant> {
        let e = self.ejection();
        (e.failures > 0).then(|| e.until.unwrap_or_else(Instant::now))
    }
}

#[derive(Debug)]
struct State {
    /// Per target, in order: `None` for a fixed address.
    resolutions: Vec<Option<Resolution>>,
    replicas: Arc<[Arc<Replica>]>,
}

#[derive(Debug)]
struct PoolStats {
    replicas: Gauge,
    healthy: Gauge,
    ejections: Counter,
    retries: Counter,
}

/// Whether a call may go to a second replica after the first failed with UNAVAILABLE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Sending it twice does no harm: queries, analysis, GetGame, opening a watch, a MakeMove
    /// with `expected_ply` (a second copy of an applied move fails its ply check).
    Safe,
    /// Retried only when the first replica certainly never got it: the connection could not
    /// be made, or the replica refused the stream unopened. CreateGame, a MakeMove without
    /// `expected_ply`, resignations and draw calls.
    IfNotSent,
}

/// Which backend a pool serves, for metrics, logs and errors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Service {
    /// `rules` or `search`.
    pub name: &'static str,
    /// The flag that configures its addresses.
    pub flag: &'static str,
    /// The environment variable behind the flag.
    pub env: &'static str,
    /// What its calls are, in errors.
    pub calls: &'static str,
    /// The error's opening when none is configured.
    pub unconfigured: &'static str,
}

pub(crate) const RULES: Service = Service {
    name: "rules",
    flag: "--rules-addr",
    env: "CHESS_GATEWAY_RULES_ADDR",
    calls: "the call",
    unconfigured: "game and rules calls are not available",
};

pub(crate) const SEARCH: Service = Service {
    name: "search",
    flag: "--search-addr",
    env: "CHESS_GATEWAY_SEARCH_ADDR",
    calls: "analysis",
    unconfigured: "analysis is not available",
};

/// The replicas of one backend the gateway spreads calls over.
pub(crate) struct ReplicaPool {
    service: Service,
    targets: Vec<Target>,
    state: RwLock<State>,
    next: AtomicUsize,
    resolve_every: Option<Duration>,
    resolver: Resolver,
    stats: PoolStats,
    /// How many replicas are known, for those waiting for the first.
    known: tokio::sync::watch::Sender<usize>,
    /// When a call that found no replica last had the names looked up; held during the lookup,
    /// so that such calls wait for one lookup rather than each making its own.
    on_demand: tokio::sync::Mutex<Option<Instant>>,
}

impl std::fmt::Debug for ReplicaPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaPool")
            .field("service", &self.service.name)
            .field("targets", &self.targets)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl ReplicaPool {
    pub fn new(
        service: Service,
        targets: &[Target],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
    ) -> ReplicaPool {
        ReplicaPool::with_resolver(service, targets, resolve_every, metrics, system_resolver())
    }

    pub fn with_resolver(
        service: Service,
        targets: &[Target],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
        resolver: Resolver,
    ) -> ReplicaPool {
        let name = service.name;
        let stats = PoolStats {
            replicas: metrics.gauge(
                &format!("gateway_{name}_replicas"),
                &format!("{name} service replicas known (fixed addresses and resolved names)"),
            ),
            healthy: metrics.gauge(
                &format!("gateway_{name}_replicas_healthy"),
                &format!("{name} service replicas taking calls (not ejected)"),
            ),
            ejections: metrics.counter(
                &format!("gateway_{name}_ejections"),
                &format!(
                    "Times a {name} service replica was ejected after failing with UNAVAILABLE"
                ),
            ),
            retries: metrics.counter(
                &format!("gateway_{name}_retries"),
                &format!("Calls retried on another {name} service replica after UNAVAILABLE"),
            ),
        };
        let resolutions = targets
            .iter()
            .map(|t| match t {
                Target::Fixed(_) => None,
                Target::Name { .. } => Some(Resolution::default()),
            })
            .collect();
        let pool = ReplicaPool {
            service,
            targets: targets.to_vec(),
            state: RwLock::new(State {
                resolutions,
                replicas: Arc::from(Vec::new()),
            }),
            next: AtomicUsize::new(0),
            resolve_every,
            resolver,
            stats,
            known: tokio::sync::watch::Sender::new(0),
            on_demand: tokio::sync::Mutex::new(None),
        };
        pool.rebuild(&mut pool.write());
        pool
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether any replica is configured at all.
    pub fn is_configured(&self) -> bool {
        !self.targets.is_empty()
    }

    /// Which backend this pool serves.
    pub fn service(&self) -> Service {
        self.service
    }

    /// The address entries as configured.
    pub fn targets(&self) -> Vec<String> {
        self.targets.iter().map(Target::shown).collect()
    }

    /// The replicas now known, in target order.
    pub fn replicas(&self) -> Arc<[Arc<Replica>]> {
        self.read().replicas.clone()
    }

    /// Returns once at least one replica is known (at once for fixed addresses; for names,
    /// once one resolves to an address).
    pub async fn first_replica(&self) {
        let mut known = self.known.subscribe();
        // The sender lives as long as the pool, so the wait ends only with a replica.
        let _ = known.wait_for(|n| *n > 0).await;
    }

    fn publish(&self, replicas: &[Arc<Replica>]) {
        self.known
            .send_if_modified(|n| std::mem::replace(n, replicas.len()) != replicas.len());
        let healthy = replicas.iter().filter(|r| r.is_healthy()).count();
        self.stats
            .replicas
            .set(i64::try_from(replicas.len()).unwrap_or(i64::MAX));
        self.stats
            .healthy
            .set(i64::try_from(healthy).unwrap_or(i64::MAX));
    }

    /// Up to two replicas for one call, the second for a retry: the healthy ones in
    /// round-robin order first, then ejected ones (soonest due first) so that a call still
    /// has somewhere to go when every replica is ejected.
    pub fn candidates(&self) -> Result<Vec<Arc<Replica>>, Status> {
        if self.targets.is_empty() {
            let Service {
                name,
                flag,
                env,
                unconfigured,
                ..
            } = self.service;
            return Err(Status::unavailable(format!(
                "{unconfigured}: this gateway has no {name} service configured; \
                 start chess-{name}-service and pass its address with {flag} ({env})"
            )));
        }
        let replicas = self.replicas();
        if replicas.is_empty() {
            let names: Vec<String> = self
                .unresolved()
                .into_iter()
                .map(|(name, error)| match error {
                    Some(e) => format!("{name} ({e})"),
                    None => name,
                })
                .collect();
            return Err(Status::unavailable(format!(
                "no {} replica is known: {} resolved to no address; looked up again every \
                 second until it does",
                self.service.name,
                names.join(", "),
            )));
        }
        let n = replicas.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let rotated = (0..n).map(|i| &replicas[(start + i) % n]);
        let mut picked: Vec<Arc<Replica>> = rotated
            .filter(|r| r.is_healthy())
            .take(2)
            .cloned()
            .collect();
        if picked.len() < 2 {
            let mut ejected: Vec<(Instant, &Arc<Replica>)> = replicas
                .iter()
                .filter_map(|r| r.ejected_until().map(|until| (until, r)))
                .collect();
            ejected.sort_by_key(|(until, _)| *until);
            picked.extend(
                ejected
                    .into_iter()
                    .take(2 - picked.len())
                    .map(|(_, r)| r.clone()),
            );
        }
        Ok(picked)
    }

    /// A call on `replica` failed with UNAVAILABLE: eject it for a while. The other calls
    /// that were in flight on it fail with it; they do not lengthen the ejection.
    pub fn failed(&self, replica: &Replica, status: &Status) {
        let (failures, backoff) = {
            let mut e = replica.ejection();
            let now = Instant::now();
            if e.until.is_some_and(|until| until > now) {
                tracing::debug!(service = self.service.name, address = %replica.backend.address, error = status.message(), "call failed on an ejected replica");
                return;
            }
            e.failures = e.failures.saturating_add(1);
            let backoff = backoff(e.failures);
            e.until = Some(now + backoff);
            (e.failures, backoff)
        };
        self.stats.ejections.inc();
        tracing::warn!(
            service = self.service.name,
            address = %replica.backend.address,
            source = %replica.source,
            failures,
            backoff_ms = u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
            error = status.message(),
            "replica ejected"
        );
        self.publish(&self.replicas());
    }

    /// A call on `replica` succeeded (or its health check passed): it takes calls again.
    pub fn succeeded(&self, replica: &Replica) {
        let was_ejected = {
            let mut e = replica.ejection();
            let was = e.failures > 0;
            *e = Ejection {
                answered: Some(Instant::now()),
                ..Ejection::default()
            };
            was
        };
        if was_ejected {
            tracing::info!(service = self.service.name, address = %replica.backend.address, source = %replica.source, "replica back");
            self.publish(&self.replicas());
        }
    }

    /// A call is being retried on another replica.
    pub fn retried(&self) {
        self.stats.retries.inc();
    }

    /// Health-checks the ejected replicas whose backoff is over: SERVING brings one back,
    /// anything else ejects it again for longer.
    async fn probe_due(&self) {
        let now = Instant::now();
        let due: Vec<Arc<Replica>> = self
            .replicas()
            .iter()
            .filter(|r| r.ejected_until().is_some_and(|until| until <= now))
            .cloned()
            .collect();
        let checks = due
            .iter()
            .map(|r| async move { (r, r.backend.health().await) });
        for (replica, health) in futures::future::join_all(checks).await {
            if health == "SERVING" {
                self.succeeded(replica);
            } else {
                self.failed(
                    replica,
                    &Status::unavailable(format!("health check answered {health}")),
                );
            }
        }
    }

    /// Runs until `shutdown`: health checks of ejected replicas every second and, when names
    /// are configured with an interval, their periodic resolution; a name that resolves to no
    /// address is looked up every second until it does.
    pub fn spawn_maintenance(self: &Arc<Self>, shutdown: Shutdown) {
        if self.targets.is_empty() {
            return;
        }
        let pool = self.clone();
        tokio::spawn(async move {
            let has_names = pool.has_names();
            let resolve_every = pool.resolve_every.filter(|_| has_names);
            let mut next_resolve = resolve_every.map(|every| tokio::time::Instant::now() + every);
            loop {
                tokio::select! {
                    () = shutdown.wait() => return,
                    () = tokio::time::sleep(PROBE_TICK) => {}
                }
                pool.probe_due().await;
                let due = next_resolve.is_some_and(|at| tokio::time::Instant::now() >= at);
                // A name with no address yet (its pods still starting, or its DNS entry not
                // there yet) is looked up again every tick, so its replicas join within a
                // second of appearing rather than at the next interval.
                if due || (has_names && !pool.unresolved().is_empty()) {
                    pool.resolve().await;
                    next_resolve = resolve_every.map(|every| tokio::time::Instant::now() + every);
                }
            }
        });
    }
}

/// The ejection after `failures` failures in a row: 1 s, 2 s, 4 s ... up to 30 s.
fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    EJECT_BASE.saturating_mul(1 << doublings).min(EJECT_MAX)
}
