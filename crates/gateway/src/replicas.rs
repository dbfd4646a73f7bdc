//! The replicas of one backend (the rules service or the search service): fixed addresses,
//! and names resolved at start and then periodically, one channel per address. Calls go
//! round-robin over the healthy replicas; a replica whose call fails with UNAVAILABLE is
//! ejected for a backoff that doubles with each failure, and comes back once a health check
//! passes; a call that fails that way before answering is retried once on another replica
//! where that is safe ([`Retry`]).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chess_service_kit::{Metrics, Shutdown};
use futures::future::BoxFuture;
use http::Uri;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tonic::codec::Streaming;
use tonic::{Code, Request, Response, Status};

use crate::config::Target;
use crate::upstream::{Backend, BoxStream, Call, Failed, StreamHooks, forward_stream, send};

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

/// One replica: an address and its channel.
#[derive(Debug)]
pub(crate) struct Replica {
    pub backend: Backend,
    pub addr: SocketAddr,
    /// The `--rules-addr` or `--search-addr` entry it came from.
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
pub(crate) struct Pool {
    service: Service,
    targets: Vec<Target>,
    state: RwLock<State>,
    next: AtomicUsize,
    resolve_every: Option<Duration>,
    resolver: Resolver,
    stats: PoolStats,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("service", &self.service.name)
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
fn backend_for(service: &'static str, addr: SocketAddr) -> Backend {
    let uri: Uri = format!("http://{addr}")
        .parse()
        .unwrap_or_else(|_| Uri::from_static("http://127.0.0.1:0"));
    Backend::new(service, &uri)
}

impl Pool {
    pub fn new(
        service: Service,
        targets: &[Target],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
    ) -> Pool {
        Pool::with_resolver(service, targets, resolve_every, metrics, system_resolver())
    }

    pub fn with_resolver(
        service: Service,
        targets: &[Target],
        resolve_every: Option<Duration>,
        metrics: &Metrics,
        resolver: Resolver,
    ) -> Pool {
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
        let pool = Pool {
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

    fn has_names(&self) -> bool {
        self.targets
            .iter()
            .any(|t| matches!(t, Target::Name { .. }))
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
                (Target::Fixed(uri), _) => fixed_addr(uri)
                    .map(|a| (a, Some(uri)))
                    .into_iter()
                    .collect(),
                (Target::Name { .. }, Some(r)) => r.addrs.iter().map(|&a| (a, None)).collect(),
                (Target::Name { .. }, None) => Vec::new(),
            };
            for (addr, uri) in addrs {
                if replicas.iter().any(|r| r.addr == addr) {
                    continue;
                }
                let replica = old.get(&addr).cloned().unwrap_or_else(|| {
                    let backend = match uri {
                        Some(uri) => Backend::new(self.service.name, uri),
                        None => backend_for(self.service.name, addr),
                    };
                    if uri.is_none() {
                        tracing::info!(service = self.service.name, address = %backend.address, source = %source, "replica added");
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
            tracing::info!(service = self.service.name, address = %gone.backend.address, source = %gone.source, "replica removed (no longer in DNS)");
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
                let Target::Name { host, port, .. } = t else {
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
                        tracing::info!(service = self.service.name, name = %target.shown(), "name resolves again");
                    }
                    if addrs != resolution.addrs {
                        tracing::debug!(service = self.service.name, name = %target.shown(), ?addrs, "name resolved");
                        resolution.addrs = addrs;
                        changed = true;
                    }
                }
                Err(e) => {
                    if resolution.error.as_deref() != Some(&e) {
                        tracing::warn!(
                            service = self.service.name,
                            name = %target.shown(),
                            error = %e,
                            kept = resolution.addrs.len(),
                            "cannot resolve a name; keeping its previous addresses"
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
                "no {} replica is known: {} resolved to no address{}",
                self.service.name,
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
            *e = Ejection::default();
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

    /// Forwards a call to a replica (round-robin over the healthy ones), `client` making the
    /// generated client for a replica's channel. One that fails with UNAVAILABLE before
    /// answering is ejected and, where `retry` allows, the call is sent once more to another
    /// replica within the same deadline. Also says which replica answered.
    pub async fn call<C, Req: Clone, Resp, Fut>(
        &self,
        call: &Call,
        message: Req,
        retry: Retry,
        client: impl Fn(&Backend) -> C,
        send_with: impl Fn(C, Request<Req>) -> Fut,
    ) -> Result<(Arc<Replica>, Response<Resp>), Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let mut failed: Vec<Tried> = Vec::new();
        for replica in self.candidates()? {
            match self
                .attempt(
                    &replica,
                    &failed,
                    retry,
                    call,
                    message.clone(),
                    &client,
                    &send_with,
                )
                .await
            {
                Attempt::Answered(response) => return Ok((replica, response)),
                Attempt::Refused(status) => return Err(status),
                Attempt::Unavailable(tried) => failed.push(tried),
                Attempt::NotRetried => break,
            }
        }
        Err(self.all_failed(failed))
    }

    /// One try of a call on `replica`, after the tries that `failed` before it.
    #[allow(clippy::too_many_arguments)]
    pub async fn attempt<C, Req, Resp, Fut>(
        &self,
        replica: &Arc<Replica>,
        failed: &[Tried],
        retry: Retry,
        call: &Call,
        message: Req,
        client: &impl Fn(&Backend) -> C,
        send_with: &impl Fn(C, Request<Req>) -> Fut,
    ) -> Attempt<Resp>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let backend = &replica.backend;
        if call.deadline.is_some_and(|d| Instant::now() >= d) {
            return Attempt::Refused(backend.deadline_exceeded());
        }
        if let Some(last) = failed.last() {
            if retry == Retry::IfNotSent && last.maybe_received {
                return Attempt::NotRetried;
            }
            self.retried();
            tracing::info!(service = self.service.name, address = %backend.address, "retrying the call on another replica");
        }
        match send(backend, client(backend), call, message, send_with).await {
            Err(Failed {
                status,
                maybe_received,
            }) if status.code() == Code::Unavailable => {
                self.failed(replica, &status);
                Attempt::Unavailable(Tried {
                    address: backend.address.clone(),
                    status,
                    maybe_received,
                })
            }
            Err(failed) => Attempt::Refused(failed.status),
            Ok(response) => {
                self.succeeded(replica);
                Attempt::Answered(response)
            }
        }
    }

    /// The error for a call that no replica answered: the only failure as it was, or both.
    pub fn all_failed(&self, mut failed: Vec<Tried>) -> Status {
        let name = self.service.name;
        match failed.len() {
            0 => Status::unavailable(format!("no {name} replica answered")),
            // The only replica there is, or a call not retried: its own answer, details and all.
            1 => failed
                .pop()
                .map(|tried| tried.status)
                .unwrap_or_else(|| Status::unavailable(format!("no {name} replica answered"))),
            _ => {
                let tried: Vec<String> = failed
                    .iter()
                    .map(
                        |Tried {
                             address, status, ..
                         }| {
                            if status.message().contains(&**address) {
                                status.message().to_owned()
                            } else {
                                format!("the {name} service at {address}: {}", status.message())
                            }
                        },
                    )
                    .collect();
                Status::unavailable(format!(
                    "{} failed on two {name} replicas, each UNAVAILABLE: {}",
                    self.service.calls,
                    tried.join("; ")
                ))
            }
        }
    }

    /// A stream from `replica` (as [`Pool::call`] answered) passed through with `hooks`;
    /// failing with UNAVAILABLE ejects the replica.
    pub fn stream<T: Send + 'static>(
        self: &Arc<Self>,
        response: Response<Streaming<T>>,
        replica: Arc<Replica>,
        deadline: Option<Instant>,
        hooks: StreamHooks,
    ) -> Response<BoxStream<T>> {
        let backend = replica.backend.clone();
        let pool = self.clone();
        let hooks = StreamHooks {
            on_unavailable: Some(Box::new(move |status: &Status| {
                pool.failed(&replica, status);
            })),
            ..hooks
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

/// How one try of a call ended.
pub(crate) enum Attempt<Resp> {
    /// The replica answered.
    Answered(Response<Resp>),
    /// It failed with UNAVAILABLE (and was ejected).
    Unavailable(Tried),
    /// Any other failure: the call's answer, not to be retried.
    Refused(Status),
    /// Not sent: the previous try may have reached its replica and the call is not safe to
    /// send twice.
    NotRetried,
}

/// A try that failed with UNAVAILABLE.
#[derive(Debug)]
pub(crate) struct Tried {
    /// The replica's address.
    pub address: Arc<str>,
    pub status: Status,
    /// Whether the replica may have received the call (and acted on it).
    pub maybe_received: bool,
}

/// The ejection after `failures` failures in a row: 1 s, 2 s, 4 s ... up to 30 s.
fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    EJECT_BASE.saturating_mul(1 << doublings).min(EJECT_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(host: &str, port: u16) -> Target {
        Target::Name {
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

    fn addrs(pool: &Pool) -> Vec<SocketAddr> {
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
        let fixed = Target::Fixed("http://10.0.0.1:7".parse().unwrap());
        let metrics = Metrics::new("test");
        let pool = Pool::with_resolver(
            SEARCH,
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
        let targets: Vec<Target> = (1..=3)
            .map(|i| Target::Fixed(format!("http://10.0.0.{i}:1").parse().unwrap()))
            .collect();
        let metrics = Metrics::new("test");
        let pool = Pool::new(SEARCH, &targets, None, &metrics);
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
        let pool = Pool::new(SEARCH, &[], None, &metrics);
        let e = pool.candidates().unwrap_err();
        assert!(e.message().contains("--search-addr"), "{e:?}");
        let (resolver, _) = fake_dns();
        let pool = Pool::with_resolver(
            SEARCH,
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

    /// A health service on a free loopback port, for calls that must be answered.
    async fn live_server() -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (_, health) = tonic_health::server::health_reporter();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(health)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        addr
    }

    /// A port that takes connections, reads what comes and hangs up: a replica that dies
    /// with the call on it.
    async fn dying_server() -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = [0; 4096];
                    let _ = tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf))
                        .await;
                });
            }
        });
        addr
    }

    /// A loopback port nobody listens on.
    fn closed_port() -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    }

    /// One health call through `pool` with `retry`: the replica that answered, or the error.
    async fn health_call(pool: &Pool, retry: Retry) -> Result<SocketAddr, Status> {
        use tonic_health::pb::HealthCheckRequest;
        use tonic_health::pb::health_client::HealthClient;
        let call = Call {
            metadata: tonic::metadata::MetadataMap::new(),
            deadline: Some(Instant::now() + Duration::from_secs(10)),
            caller: crate::auth::Caller::Ip("test".into()),
        };
        pool.call(
            &call,
            HealthCheckRequest::default(),
            retry,
            |b| HealthClient::new(b.channel.clone()),
            |mut c, r| async move { c.check(r).await },
        )
        .await
        .map(|(replica, _)| replica.addr)
    }

    fn fixed(addrs: &[SocketAddr]) -> Vec<Target> {
        addrs
            .iter()
            .map(|a| Target::Fixed(format!("http://{a}").parse().unwrap()))
            .collect()
    }

    #[tokio::test]
    async fn a_call_the_replica_never_got_is_retried_whatever_it_is() {
        let live = live_server().await;
        let dead = closed_port();
        let metrics = Metrics::new("test");
        let pool = Pool::new(RULES, &fixed(&[dead, live]), None, &metrics);
        // The first call starts at the dead replica: refused connection, so even a call that
        // is not safe to send twice goes on to the live one.
        assert_eq!(health_call(&pool, Retry::IfNotSent).await.unwrap(), live);
        let text = metrics.encode();
        assert!(
            text.contains("chess_gateway_rules_retries_total{service=\"test\"} 1")
                && text.contains("chess_gateway_rules_ejections_total{service=\"test\"} 1"),
            "{text}"
        );
        // Ejected now: calls go to the live one only.
        for _ in 0..4 {
            assert_eq!(health_call(&pool, Retry::IfNotSent).await.unwrap(), live);
        }
    }

    #[tokio::test]
    async fn a_call_that_may_have_arrived_is_retried_only_when_safe() {
        let live = live_server().await;
        let dying = dying_server().await;
        let metrics = Metrics::new("test");
        let pool = Pool::new(RULES, &fixed(&[dying, live]), None, &metrics);
        // Not safe to send twice: the dying replica's failure is the answer, not a retry.
        let e = health_call(&pool, Retry::IfNotSent).await.unwrap_err();
        assert_eq!(e.code(), Code::Unavailable, "{e:?}");
        assert!(
            e.message().contains("rules service") && e.message().contains(&dying.to_string()),
            "{e:?}"
        );
        assert!(
            !metrics
                .encode()
                .contains("retries_total{service=\"test\"} 1"),
            "{}",
            metrics.encode()
        );
        // Safe: sent again to the live replica. (The dying one is ejected by now, so bring it
        // back to be tried first.)
        pool.succeeded(&pool.replicas()[0]);
        pool.next.store(0, Ordering::Relaxed);
        assert_eq!(health_call(&pool, Retry::Safe).await.unwrap(), live);
        assert!(
            metrics
                .encode()
                .contains("chess_gateway_rules_retries_total{service=\"test\"} 1")
        );
    }
}
