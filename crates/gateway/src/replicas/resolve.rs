//! The pool's addresses: fixed ones, and names resolved at start and then periodically (one
//! replica per address); the replica list rebuilt when an answer changes.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use http::Uri;

use super::names::{RESOLVE_TIMEOUT, backend_for, fixed_addr};
use super::{RESOLVE_AGAIN_MIN, Replica, ReplicaPool, State};
use crate::target::Target;
use crate::upstream::UpstreamChannel;

impl ReplicaPool {
    pub(super) fn has_names(&self) -> bool {
        self.targets
            .iter()
            .any(|t| matches!(t, Target::Name { .. }))
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
    pub(super) fn rebuild(&self, state: &mut State) {
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
                        Some(uri) => UpstreamChannel::new(self.service.name, uri),
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

    /// For a call that found no replica known: looks the names up now, within `deadline`.
    /// Calls that arrive meanwhile wait for that one lookup, and a call within
    /// [`RESOLVE_AGAIN_MIN`] of the last one makes none, so a burst of calls while DNS has
    /// nothing costs one lookup per name, not one per call.
    pub(super) async fn resolve_on_demand(&self, deadline: Option<Instant>) {
        let lookup = async {
            let mut last = self.on_demand.lock().await;
            if last.is_some_and(|at| at.elapsed() < RESOLVE_AGAIN_MIN) {
                return;
            }
            self.resolve().await;
            *last = Some(Instant::now());
        };
        match deadline {
            Some(deadline) => {
                // Past the deadline the call fails as it would have without the lookup.
                let _ = tokio::time::timeout_at(deadline.into(), lookup).await;
            }
            None => lookup.await,
        }
    }
}
