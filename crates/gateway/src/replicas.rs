//! The search replicas: fixed addresses, and names resolved at start and then periodically,
//! one channel per address. Calls go round-robin over the healthy replicas; a replica whose
//! call fails with UNAVAILABLE is ejected for a backoff that doubles with each failure, and
//! comes back once a health check passes; a call that fails that way before answering is
//! retried once on another replica.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_service_kit::{Metrics, Shutdown};
use futures::future::BoxFuture;
use http::Uri;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tonic::codec::Streaming;
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status};

use crate::config::SearchTarget;
use crate::upstream::{Backend, BoxStream, Call, StreamHooks, client, forward, forward_stream};

/// The first ejection's length; each further failure in a row doubles it, up to
/// [`EJECT_MAX`].
const EJECT_BASE: Duration = Duration::from_secs(1);
const EJECT_MAX: Duration = Duration::from_secs(30);
/// How long one name's resolution may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often ejected replicas whose backoff is over are health-checked.
const PROBE_TICK: Duration = Duration::from_secs(1);

/// Resolves `host` and `port` to addresses; replaceable so tests can play DNS.
pub(crate) type Resolver =
    Arc<dyn Fn(String, u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> + Send + Sync>;

/// The system resolver (`tokio::net::lookup_host`: /etc/hosts, then DNS).
fn system_resolver() -> Resolver {
    Arc::new(|host: String, port: u16| {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    })
}

/// One search replica: an address and its channel.
#[derive(Debug)]
pub(crate) struct Replica {
    pub backend: Backend,
    pub addr: SocketAddr,
    /// The `--search-addr` entry it came from.
    pub source: Arc<str>,
    ejection: Mutex<Ejection>,
}

/// Failures in a row and, while ejected, until when.
#[derive(Debug, Default)]
struct Ejection {
    failures: u32,
    until: Option<Instant>,
}

impl Replica {
    fn new(backend: Backend, addr: SocketAddr, source: Arc<str>) -> Replica {
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

    /// When an ejected replica may be tried again (`None` when healthy).
    fn ejected_until(&self) -> Option<Instant> {
        let e = self.ejection();
        (e.failures > 0).then(|| e.until.unwrap_or_else(Instant::now))
    }
}

/// What one name resolved to last.
#[derive(Debug, Default)]
struct Resolution {
    /// The last successful answer, sorted; kept through failed lookups so a DNS hiccup does
    /// not empty the pool.
    addrs: Vec<SocketAddr>,
    /// Why the last lookup failed, when it did.
    error: Option<String>,
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

/// The search replicas the gateway spreads analysis calls over.
pub(crate) struct SearchPool {
    targets: Vec<SearchTarget>,
    state: RwLock<State>,
    next: AtomicUsize,
    resolve_every: Option<Duration>,
    resolver: Resolver,
    stats: PoolStats,
}

impl std::fmt::Debug for SearchPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchPool")
            .field("targets", &self.targets)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// A fixed target's address (its host is an IP literal).
fn fixed_addr(uri: &Uri) -> Option<SocketAddr> {
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = host.parse().ok()?;
    Some(SocketAddr::new(ip, uri.port_u16().unwrap_or(80)))
}

/// A backend for one resolved address.
fn backend_for(addr: SocketAddr) -> Backend {
    let uri: Uri = format!("http://{addr}")
        .parse()
        .unwrap_or_else(|_| Uri::from_static("http://127.0.0.1:0"));
    Backend::new("search", &uri)
}

impl SearchPool {
    pub fn new(
        targets: &[SearchTarget],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
    ) -> SearchPool {
        SearchPool::with_resolver(targets, resolve_every, metrics, system_resolver())
    }

    pub fn with_resolver(
        targets: &[SearchTarget],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
        resolver: Resolver,
    ) -> SearchPool {
        let stats = PoolStats {
            replicas: metrics.gauge(
                "gateway_search_replicas",
                "Search replicas known (fixed addresses and resolved names)",
            ),
            healthy: metrics.gauge(
                "gateway_search_replicas_healthy",
                "Search replicas taking calls (not ejected)",
            ),
            ejections: metrics.counter(
                "gateway_search_ejections",
                "Times a search replica was ejected after failing with UNAVAILABLE",
            ),
            retries: metrics.counter(
                "gateway_search_retries",
                "Analysis calls retried on another search replica after UNAVAILABLE",
            ),
        };
        let resolutions = targets
            .iter()
            .map(|t| match t {
                SearchTarget::Fixed(_) => None,
                SearchTarget::Name { .. } => Some(Resolution::default()),
            })
            .collect();
        let pool = SearchPool {
            targets: targets.to_vec(),
            state: RwLock::new(State {
                resolutions,
                replicas: Arc::from(Vec::new()),
            }),
            next: AtomicUsize::new(0),
            resolve_every,
            resolver,
            stats,
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

    /// The `--search-addr` entries as configured.
    pub fn targets(&self) -> Vec<String> {
        self.targets.iter().map(SearchTarget::shown).collect()
    }

    fn has_names(&self) -> bool {
        self.targets
            .iter()
            .any(|t| matches!(t, SearchTarget::Name { .. }))
    }

    /// The replicas now known, in target order.
    pub fn replicas(&self) -> Arc<[Arc<Replica>]> {
        self.read().replicas.clone()
    }

    /// Names that resolve to no address at present, with the lookup error.
    pub fn unresolved(&self) -> Vec<(String, Option<String>)> {
        let state = self.read();
        self.targets
            .iter()
            .zip(&state.resolutions)
            .filter_map(|(t, r)| match r {
                Some(r) if r.addrs.is_empty() => Some((t.shown(), r.error.clone())),
                _ => None,
            })
            .collect()
    }

    /// Rebuilds the replica list from the targets and resolutions, keeping the replicas (and
    /// their channels and ejection state) whose address is still there.
    fn rebuild(&self, state: &mut State) {
        let old: HashMap<SocketAddr, Arc<Replica>> =
            state.replicas.iter().map(|r| (r.addr, r.clone())).collect();
        let mut replicas: Vec<Arc<Replica>> = Vec::new();
        for (target, resolution) in self.targets.iter().zip(&state.resolutions) {
            let source: Arc<str> = target.shown().into();
            let addrs: Vec<(SocketAddr, Option<&Uri>)> = match (target, resolution) {
                (SearchTarget::Fixed(uri), _) => fixed_addr(uri)
                    .map(|a| (a, Some(uri)))
                    .into_iter()
                    .collect(),
                (SearchTarget::Name { .. }, Some(r)) => {
                    r.addrs.iter().map(|&a| (a, None)).collect()
                }
                (SearchTarget::Name { .. }, None) => Vec::new(),
            };
            for (addr, uri) in addrs {
                if replicas.iter().any(|r| r.addr == addr) {
                    continue;
                }
                let replica = old.get(&addr).cloned().unwrap_or_else(|| {
                    let backend = match uri {
                        Some(uri) => Backend::new("search", uri),
                        None => backend_for(addr),
                    };
                    if uri.is_none() {
                        tracing::info!(address = %backend.address, source = %source, "search replica added");
                    }
                    Arc::new(Replica::new(backend, addr, source.clone()))
                });
                replicas.push(replica);
            }
        }
        for gone in state
            .replicas
            .iter()
            .filter(|r| !replicas.iter().any(|n| n.addr == r.addr))
        {
            tracing::info!(address = %gone.backend.address, source = %gone.source, "search replica removed (no longer in DNS)");
        }
        state.replicas = Arc::from(replicas);
        self.publish(&state.replicas);
    }

    fn publish(&self, replicas: &[Arc<Replica>]) {
        let healthy = replicas.iter().filter(|r| r.is_healthy()).count();
        self.stats
            .replicas
            .set(i64::try_from(replicas.len()).unwrap_or(i64::MAX));
        self.stats
            .healthy
            .set(i64::try_from(healthy).unwrap_or(i64::MAX));
    }

    /// Looks every name up again (concurrently, each within [`RESOLVE_TIMEOUT`]) and updates
    /// the replicas: new addresses join, vanished ones leave. A failed lookup keeps the
    /// name's previous addresses.
    pub async fn resolve(&self) {
        let lookups = self.targets.iter().map(|t| {
            let resolver = self.resolver.clone();
            async move {
                let SearchTarget::Name { host, port, .. } = t else {
                    return None;
                };
                let answer =
                    tokio::time::timeout(RESOLVE_TIMEOUT, resolver(host.clone(), *port)).await;
                Some(match answer {
                    Ok(Ok(addrs)) if !addrs.is_empty() => Ok(addrs),
                    Ok(Ok(_)) => Err("no addresses".to_owned()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!("no answer within {} s", RESOLVE_TIMEOUT.as_secs())),
                })
            }
        });
        let answers = futures::future::join_all(lookups).await;
        let mut state = self.write();
        let mut changed = false;
        for ((target, resolution), answer) in self
            .targets
            .iter()
            .zip(state.resolutions.iter_mut())
            .zip(answers)
        {
            let (Some(resolution), Some(answer)) = (resolution, answer) else {
                continue;
            };
            match answer {
                Ok(mut addrs) => {
                    addrs.sort();
                    addrs.dedup();
                    if resolution.error.take().is_some() {
                        tracing::info!(name = %target.shown(), "search name resolves again");
                    }
                    if addrs != resolution.addrs {
                        tracing::debug!(name = %target.shown(), ?addrs, "search name resolved");
                        resolution.addrs = addrs;
                        changed = true;
                    }
                }
                Err(e) => {
                    if resolution.error.as_deref() != Some(&e) {
                        tracing::warn!(
                            name = %target.shown(),
                            error = %e,
                            kept = resolution.addrs.len(),
                            "cannot resolve a search name; keeping its previous addresses"
                        );
                    }
                    resolution.error = Some(e);
                }
            }
        }
        if changed {
            self.rebuild(&mut state);
        }
    }

    /// Up to two replicas for one call, the second for a retry: the healthy ones in
    /// round-robin order first, then ejected ones (soonest due first) so that a call still
    /// has somewhere to go when every replica is ejected.
    pub fn candidates(&self) -> Result<Vec<Arc<Replica>>, Status> {
        if self.targets.is_empty() {
            return Err(Status::unavailable(
                "analysis is not available: this gateway has no search service configured; \
                 start chess-search-service and pass its address with --search-addr \
                 (CHESS_GATEWAY_SEARCH_ADDR)",
            ));
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
                "no search replica is known: {} resolved to no address{}",
                names.join(", "),
                match self.resolve_every {
                    Some(every) => format!("; resolving again every {} s", every.as_secs()),
                    None => String::new(),
                }
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
                tracing::debug!(address = %replica.backend.address, error = status.message(), "call failed on an ejected search replica");
                return;
            }
            e.failures = e.failures.saturating_add(1);
            let backoff = backoff(e.failures);
            e.until = Some(now + backoff);
            (e.failures, backoff)
        };
        self.stats.ejections.inc();
        tracing::warn!(
            address = %replica.backend.address,
            source = %replica.source,
            failures,
            backoff_ms = u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
            error = status.message(),
            "search replica ejected"
        );
        self.publish(&self.replicas());
    }

    /// A call on `replica` succeeded (or its health check passed): it takes calls again.
    pub fn succeeded(&self, replica: &Replica) {
        let was_ejected = {
            let mut e = replica.ejection();
            let was = e.failures > 0;
            *e = Ejection::default();
            was
        };
        if was_ejected {
            tracing::info!(address = %replica.backend.address, source = %replica.source, "search replica back");
            self.publish(&self.replicas());
        }
    }

    /// A call is being retried on another replica.
    pub fn retried(&self) {
        self.stats.retries.inc();
    }

    /// Forwards an idempotent analysis call to a search replica (round-robin over the healthy
    /// ones; `gzip` compresses the request). One that fails with UNAVAILABLE before answering
    /// is ejected and the call is retried once on another replica, within the same deadline.
    /// Also says which replica answered.
    pub async fn call<Req: Clone, Resp, Fut>(
        &self,
        call: &Call,
        message: Req,
        gzip: bool,
        send: impl Fn(AnalysisServiceClient<Channel>, Request<Req>) -> Fut,
    ) -> Result<(Arc<Replica>, Response<Resp>), Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let candidates = self.candidates()?;
        let mut failed: Vec<(Arc<str>, Status)> = Vec::new();
        for replica in candidates {
            let backend = &replica.backend;
            if call.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(backend.deadline_exceeded());
            }
            if !failed.is_empty() {
                self.retried();
                tracing::info!(address = %backend.address, "retrying the analysis call on another search replica");
            }
            let client = client!(AnalysisServiceClient, backend, gzip);
            match forward(backend, client, call, message.clone(), &send).await {
                Err(status) if status.code() == Code::Unavailable => {
                    self.failed(&replica, &status);
                    failed.push((backend.address.clone(), status));
                }
                Err(status) => return Err(status),
                Ok(response) => {
                    self.succeeded(&replica);
                    return Ok((replica, response));
                }
            }
        }
        match failed.len() {
            0 => Err(Status::unavailable("no search replica answered")),
            // The only replica there is: its own answer, details and all.
            1 => Err(failed
                .pop()
                .map(|(_, status)| status)
                .unwrap_or_else(|| Status::unavailable("no search replica answered"))),
            _ => {
                let tried: Vec<String> = failed
                    .iter()
                    .map(|(address, status)| {
                        if status.message().contains(&**address) {
                            status.message().to_owned()
                        } else {
                            format!("the search service at {address}: {}", status.message())
                        }
                    })
                    .collect();
                Err(Status::unavailable(format!(
                    "analysis failed on two search replicas, each UNAVAILABLE: {}",
                    tried.join("; ")
                )))
            }
        }
    }

    /// A stream from `replica` (as [`SearchPool::call`] answered) passed through; failing with
    /// UNAVAILABLE ejects the replica.
    pub fn stream<T: Send + 'static>(
        self: &Arc<Self>,
        response: Response<Streaming<T>>,
        replica: Arc<Replica>,
        deadline: Option<Instant>,
    ) -> Response<BoxStream<T>> {
        let backend = replica.backend.clone();
        let pool = self.clone();
        let hooks = StreamHooks {
            on_unavailable: Some(Box::new(move |status: &Status| {
                pool.failed(&replica, status);
            })),
            ..StreamHooks::default()
        };
        forward_stream(response, &backend, deadline, hooks)
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
    /// are configured with an interval, their periodic resolution.
    pub fn spawn_maintenance(self: &Arc<Self>, shutdown: Shutdown) {
        if self.targets.is_empty() {
            return;
        }
        let pool = self.clone();
        tokio::spawn(async move {
            let resolve_every = pool.resolve_every.filter(|_| pool.has_names());
            let mut next_resolve = resolve_every.map(|every| tokio::time::Instant::now() + every);
            loop {
                tokio::select! {
                    () = shutdown.wait() => return,
                    () = tokio::time::sleep(PROBE_TICK) => {}
                }
                pool.probe_due().await;
                if let (Some(every), Some(at)) = (resolve_every, next_resolve)
                    && tokio::time::Instant::now() >= at
                {
                    pool.resolve().await;
                    next_resolve = Some(tokio::time::Instant::now() + every);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn name(host: &str, port: u16) -> SearchTarget {
        SearchTarget::Name {
            host: host.to_owned(),
            port,
            shown: format!("dns:///{host}:{port}"),
        }
    }

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    /// A resolver answering from a table the test changes.
    type DnsTable = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

    fn fake_dns() -> (Resolver, DnsTable) {
        let table: DnsTable = Arc::default();
        let t = table.clone();
        let resolver: Resolver = Arc::new(move |host: String, _port: u16| {
            let answer = t.lock().unwrap().get(&host).cloned();
            Box::pin(async move {
                answer.ok_or_else(|| std::io::Error::other(format!("{host}: no such name")))
            })
        });
        (resolver, table)
    }

    fn addrs(pool: &SearchPool) -> Vec<SocketAddr> {
        pool.replicas().iter().map(|r| r.addr).collect()
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(4), Duration::from_secs(8));
        assert_eq!(backoff(6), EJECT_MAX);
        assert_eq!(backoff(u32::MAX), EJECT_MAX);
    }

    #[tokio::test]
    async fn names_resolve_to_one_replica_per_address_and_follow_dns() {
        let (resolver, dns) = fake_dns();
        let fixed = SearchTarget::Fixed("http://10.0.0.1:7".parse().unwrap());
        let metrics = Metrics::new("test");
        let pool = SearchPool::with_resolver(
            &[fixed, name("search", 50053)],
            Some(Duration::from_secs(5)),
            &metrics,
            resolver,
        );
        assert_eq!(addrs(&pool), [addr("10.0.0.1:7")]);
        // Unresolvable at start: the fixed replica only, and the name reported.
        pool.resolve().await;
        assert_eq!(addrs(&pool), [addr("10.0.0.1:7")]);
        let unresolved = pool.unresolved();
        assert_eq!(unresolved.len(), 1);
        assert_eq!(unresolved[0].0, "dns:///search:50053");
        assert!(unresolved[0].1.as_deref().unwrap().contains("no such name"));

        dns.lock().unwrap().insert(
            "search".into(),
            vec![addr("10.0.1.2:50053"), addr("10.0.1.1:50053")],
        );
        pool.resolve().await;
        assert_eq!(
            addrs(&pool),
            [
                addr("10.0.0.1:7"),
                addr("10.0.1.1:50053"),
                addr("10.0.1.2:50053")
            ]
        );
        assert!(pool.unresolved().is_empty());
        assert_eq!(
            pool.replicas()[1].backend.address.as_ref(),
            "http://10.0.1.1:50053"
        );
        let text = metrics.encode();
        assert!(
            text.contains("chess_gateway_search_replicas{service=\"test\"} 3"),
            "{text}"
        );

        // A replica that stays keeps its state; one that leaves DNS goes; a lookup failure
        // keeps the last answer.
        let kept = pool.replicas()[2].clone();
        pool.failed(&kept, &Status::unavailable("down"));
        dns.lock()
            .unwrap()
            .insert("search".into(), vec![addr("10.0.1.2:50053")]);
        pool.resolve().await;
        assert_eq!(addrs(&pool), [addr("10.0.0.1:7"), addr("10.0.1.2:50053")]);
        assert!(Arc::ptr_eq(&pool.replicas()[1], &kept) && !kept.is_healthy());
        dns.lock().unwrap().clear();
        pool.resolve().await;
        assert_eq!(addrs(&pool), [addr("10.0.0.1:7"), addr("10.0.1.2:50053")]);

        // An address that comes back is a fresh replica.
        dns.lock().unwrap().insert(
            "search".into(),
            vec![addr("10.0.1.1:50053"), addr("10.0.1.2:50053")],
        );
        pool.resolve().await;
        assert_eq!(addrs(&pool).len(), 3);
        assert!(pool.replicas()[1].is_healthy());
    }

    #[tokio::test]
    async fn round_robin_skips_ejected_replicas_but_never_leaves_a_call_nowhere() {
        let targets: Vec<SearchTarget> = (1..=3)
            .map(|i| SearchTarget::Fixed(format!("http://10.0.0.{i}:1").parse().unwrap()))
            .collect();
        let metrics = Metrics::new("test");
        let pool = SearchPool::new(&targets, None, &metrics);
        let first: Vec<SocketAddr> = (0..3).map(|_| pool.candidates().unwrap()[0].addr).collect();
        assert_eq!(first.len(), 3);
        assert_eq!(
            first.iter().collect::<std::collections::HashSet<_>>().len(),
            3
        );
        for c in (0..3).map(|_| pool.candidates().unwrap()) {
            assert_eq!(c.len(), 2);
            assert_ne!(c[0].addr, c[1].addr);
        }

        let dead = pool.replicas()[1].clone();
        pool.failed(&dead, &Status::unavailable("connection refused"));
        // Calls that were in flight with it fail too: still one ejection.
        pool.failed(&dead, &Status::unavailable("connection lost"));
        assert_eq!(dead.ejection().failures, 1);
        assert!(
            metrics
                .encode()
                .contains("chess_gateway_search_ejections_total{service=\"test\"} 1")
        );
        assert!(
            metrics
                .encode()
                .contains("chess_gateway_search_replicas_healthy{service=\"test\"} 2")
        );
        for _ in 0..6 {
            let c = pool.candidates().unwrap();
            assert!(c.iter().all(|r| r.addr != dead.addr), "{c:?}");
        }
        // All ejected: calls still go somewhere, soonest due first.
        pool.failed(&pool.replicas()[0], &Status::unavailable("x"));
        pool.failed(&pool.replicas()[2], &Status::unavailable("x"));
        let c = pool.candidates().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].addr, dead.addr);
        pool.succeeded(&dead);
        assert!(dead.is_healthy());
        assert_eq!(pool.candidates().unwrap()[0].addr, dead.addr);
    }

    #[tokio::test]
    async fn nothing_configured_or_resolved_is_unavailable_with_a_reason() {
        let metrics = Metrics::new("test");
        let pool = SearchPool::new(&[], None, &metrics);
        let e = pool.candidates().unwrap_err();
        assert!(e.message().contains("--search-addr"), "{e:?}");
        let (resolver, _) = fake_dns();
        let pool = SearchPool::with_resolver(
            &[name("search", 1)],
            Some(Duration::from_secs(5)),
            &metrics,
            resolver,
        );
        let e = pool.candidates().unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unavailable);
        assert!(
            e.message().contains("dns:///search:1") && e.message().contains("every 5 s"),
            "{e:?}"
        );
    }
}
