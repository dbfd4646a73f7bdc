//! Whole stacks: the three services on loopback, open auth, no rate limit. [`Stack`] has one
//! replica of each; [`Replicated`] two search replicas behind the gateway.

use crate::metrics::metric;
use crate::{Service, TempDir, spawn};

/// The search service's flags in a [`Stack`] unless a test replaces them: two workers, a
/// queue of eight, 16 MiB hash tables.
pub const STACK_SEARCH: &[&str] = &["--workers", "2", "--queue", "8", "--hash-mb", "16"];

/// The search replicas' flags in a [`Replicated`] stack: as [`STACK_SEARCH`] with 8 MiB tables.
pub const REPLICA_SEARCH: &[&str] = &["--workers", "2", "--queue", "8", "--hash-mb", "8"];

/// A rules service (redb store in a fresh temp dir), a search service and a gateway in front
/// of them.
#[derive(Debug)]
pub struct Stack {
    pub gateway: Service,
    pub rules: Service,
    pub search: Service,
    pub dir: TempDir,
}

impl Stack {
    /// Open auth (loopback), redb store in a fresh temp dir.
    pub fn start() -> Stack {
        Stack::start_with(&[], &[])
    }

    pub fn start_with(gateway_args: &[&str], gateway_env: &[(&str, &str)]) -> Stack {
        Stack::start_full(&[], gateway_args, gateway_env)
    }

    /// All three services; `search_args` are added to [`STACK_SEARCH`].
    pub fn start_full(
        search_args: &[&str],
        gateway_args: &[&str],
        gateway_env: &[(&str, &str)],
    ) -> Stack {
        let mut search = STACK_SEARCH.to_vec();
        search.extend_from_slice(search_args);
        Stack::start_all(&[], &search, gateway_args, gateway_env)
    }

    /// The stack with `rules_args` added to the rules service's (e.g. another store).
    pub fn start_with_rules(rules_args: &[&str]) -> Stack {
        Stack::start_all(rules_args, STACK_SEARCH, &[], &[])
    }

    /// The stack with a search service started with `search_args` instead of
    /// [`STACK_SEARCH`].
    pub fn start_with_search(search_args: &[&str]) -> Stack {
        Stack::start_all(&[], search_args, &[], &[])
    }

    fn start_all(
        rules_args: &[&str],
        search_args: &[&str],
        gateway_args: &[&str],
        gateway_env: &[(&str, &str)],
    ) -> Stack {
        let dir = TempDir::new("stack");
        let rules = spawn::rules(&dir, rules_args, &[]);
        let search = spawn::search(&dir, search_args, &[]);
        let mut args = vec!["--rate-limit", "0"];
        args.extend_from_slice(gateway_args);
        let gateway = spawn::gateway(&dir, &rules.url(), &[search.url()], &args, gateway_env);
        Stack {
            gateway,
            rules,
            search,
            dir,
        }
    }
}

/// A rules service, two search replicas and a gateway in front of them (open auth, no rate
/// limit unless `gateway_args` set one).
#[derive(Debug)]
pub struct Replicated {
    pub gateway: Service,
    pub rules: Service,
    pub searches: [Service; 2],
    /// Holds the logs and the store; removed on drop.
    pub _dir: TempDir,
}

impl Replicated {
    pub fn start(gateway_args: &[&str], gateway_env: &[(&str, &str)]) -> Replicated {
        let dir = TempDir::new("replicated");
        let rules = spawn::rules(&dir, &[], &[]);
        let searches = [
            spawn::search(&dir, REPLICA_SEARCH, &[]),
            spawn::search(&dir, REPLICA_SEARCH, &[]),
        ];
        let search_urls: Vec<String> = searches.iter().map(Service::url).collect();
        let mut args = vec!["--rate-limit", "0"];
        args.extend_from_slice(gateway_args);
        let gateway = spawn::gateway(&dir, &rules.url(), &search_urls, &args, gateway_env);
        Replicated {
            gateway,
            rules,
            searches,
            _dir: dir,
        }
    }

    /// Search replicas the gateway has in rotation, and ejections so far.
    pub fn rotation(&self) -> (f64, f64) {
        let text = self.gateway.scrape_metrics();
        (
            metric(&text, "chess_gateway_search_replicas_healthy", &[]),
            metric(&text, "chess_gateway_search_ejections_total", &[]),
        )
    }
}
