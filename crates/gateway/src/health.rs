//! The gateway's gRPC health as its backends become known: readiness waits for a replica of
//! each configured backend.

use std::sync::Arc;

use chess_service_kit::Shutdown;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use crate::replicas::ReplicaPool;

const RULES: &str = "chess.v1.RulesService";
const GAMES: &str = "chess.v1.GameService";
const GATEWAY: &str = "chess.v1.GatewayService";
const ANALYSIS: &str = "chess.v1.AnalysisService";

/// The gateway's health at start and while its backends' names are not resolved yet.
/// Readiness (Kubernetes asks for `chess.v1.GatewayService`) waits for the backends: while a
/// configured backend has no replica known (its name not in DNS yet: its pods still
/// starting), its services and `chess.v1.GatewayService` report NOT_SERVING, and each turns
/// SERVING once a replica of its backend is known. From then on they stay SERVING: a backend
/// lost later fails its calls with UNAVAILABLE, while the gateway stays in its Service for the
/// other backend's calls. Without `--search-addr`, analysis is NOT_SERVING throughout.
pub(crate) struct BackendHealth {
    pub serving: Vec<&'static str>,
    pub not_serving: Vec<&'static str>,
    /// The backends without a replica yet, with their services.
    waiting: Vec<(Arc<ReplicaPool>, &'static [&'static str])>,
}

impl BackendHealth {
    pub fn at_start(rules: &Arc<ReplicaPool>, search: &Arc<ReplicaPool>) -> BackendHealth {
        let mut health = BackendHealth {
            serving: Vec::new(),
            not_serving: Vec::new(),
            waiting: Vec::new(),
        };
        // Each backend, its services, and whether they report SERVING when it is not
        // configured at all (the game and rules services have always done so; their calls then
        // fail with UNAVAILABLE saying which flag is missing).
        let backends: [(&Arc<ReplicaPool>, &'static [&'static str], bool); 2] =
            [(rules, &[RULES, GAMES], true), (search, &[ANALYSIS], false)];
        for (pool, services, serving_unconfigured) in backends {
            if pool.is_configured() && pool.replicas().is_empty() {
                health.not_serving.extend_from_slice(services);
                health.waiting.push((pool.clone(), services));
            } else if pool.is_configured() || serving_unconfigured {
                health.serving.extend_from_slice(services);
            } else {
                health.not_serving.extend_from_slice(services);
            }
        }
        if health.waiting.is_empty() {
            health.serving.push(GATEWAY);
        } else {
            health.not_serving.push(GATEWAY);
        }
        health
    }

    /// Turns the waiting services SERVING as their backends' first replicas become known, and
    /// `chess.v1.GatewayService` once every backend has one.
    pub fn follow(&self, reporter: &HealthReporter, shutdown: &Shutdown) {
        if self.waiting.is_empty() {
            return;
        }
        let each = self.waiting.iter().map(|(pool, services)| {
            let (pool, services, reporter) = (pool.clone(), *services, reporter.clone());
            async move {
                pool.first_replica().await;
                tracing::info!(
                    service = pool.service().name,
                    ?services,
                    "a replica is known: reporting SERVING"
                );
                for service in services {
                    reporter
                        .set_service_status(*service, ServingStatus::Serving)
                        .await;
                }
            }
        });
        let all = futures::future::join_all(each);
        let (reporter, shutdown) = (reporter.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = all => {
                    reporter.set_service_status(GATEWAY, ServingStatus::Serving).await;
                    tracing::info!("every backend has a replica: ready ({GATEWAY} SERVING)");
                }
                () = shutdown.wait() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chess_service_kit::Metrics;
    use tonic::Request;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_server::Health;
    use tonic_health::server::HealthService;

    use super::*;
    use crate::replicas::tests::{fake_dns, name};
    use crate::replicas::{RULES as RULES_BACKEND, SEARCH as SEARCH_BACKEND};
    use crate::target::Target;

    async fn status(health: &HealthService, service: &str) -> i32 {
        health
            .check(Request::new(HealthCheckRequest {
                service: service.into(),
            }))
            .await
            .unwrap()
            .into_inner()
            .status
    }

    #[tokio::test]
    async fn readiness_waits_for_a_replica_of_each_backend() {
        let (resolver, dns) = fake_dns();
        let metrics = Metrics::new("test");
        let rules = Arc::new(ReplicaPool::with_resolver(
            RULES_BACKEND,
            &[name("rules", 50052)],
            None,
            &metrics,
            resolver,
        ));
        let search = Arc::new(ReplicaPool::new(
            SEARCH_BACKEND,
            &[Target::Fixed("http://127.0.0.1:1".parse().unwrap())],
            None,
            &metrics,
        ));
        let health = BackendHealth::at_start(&rules, &search);
        assert_eq!(health.serving, [ANALYSIS]);
        assert_eq!(health.not_serving, [RULES, GAMES, GATEWAY]);

        let (reporter, _) = tonic_health::server::health_reporter();
        for (names, status) in [
            (&health.serving, ServingStatus::Serving),
            (&health.not_serving, ServingStatus::NotServing),
        ] {
            for name in names {
                reporter.set_service_status(*name, status).await;
            }
        }
        let shutdown = Shutdown::new();
        health.follow(&reporter, &shutdown);
        let service = HealthService::from_health_reporter(reporter);
        tokio::time::sleep(Duration::from_millis(100)).await;
        for name in [RULES, GAMES, GATEWAY] {
            assert_eq!(
                status(&service, name).await,
                ServingStatus::NotServing as i32,
                "{name}"
            );
        }

        // The rules service's name appears in DNS and is looked up: ready.
        dns.lock()
            .unwrap()
            .insert("rules".into(), vec!["10.0.0.5:50052".parse().unwrap()]);
        rules.resolve().await;
        let ready = async {
            while status(&service, GATEWAY).await != ServingStatus::Serving as i32 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), ready)
            .await
            .expect("GatewayService turns SERVING");
        for name in [RULES, GAMES, ANALYSIS] {
            assert_eq!(
                status(&service, name).await,
                ServingStatus::Serving as i32,
                "{name}"
            );
        }
        shutdown.trigger();
    }

    #[tokio::test]
    async fn without_search_analysis_is_not_serving_and_the_rest_is_ready() {
        let metrics = Metrics::new("test");
        let rules = Arc::new(ReplicaPool::new(
            RULES_BACKEND,
            &[Target::Fixed("http://127.0.0.1:1".parse().unwrap())],
            None,
            &metrics,
        ));
        let search = Arc::new(ReplicaPool::new(SEARCH_BACKEND, &[], None, &metrics));
        let health = BackendHealth::at_start(&rules, &search);
        assert_eq!(health.serving, [RULES, GAMES, GATEWAY]);
        assert_eq!(health.not_serving, [ANALYSIS]);
        assert!(health.waiting.is_empty());
    }
}
