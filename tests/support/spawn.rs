//! Each service binary started on a free loopback port: the one place that writes their
//! command lines. A test adds its own flags in `args` and environment in `envs`; nothing else
//! is implied (no rate limit is switched off, no worker count chosen) except where a function
//! says so.

use std::path::PathBuf;

use crate::postgres::database_addr;
use crate::proxy::CutProxy;
use crate::{Service, TempDir};

/// A free port on 127.0.0.1, as every service here listens.
const LOOPBACK: &str = "127.0.0.1:0";

/// The data directory [`rules`] gives the rules service: `data` under `dir`.
pub fn rules_data_dir(dir: &TempDir) -> PathBuf {
    dir.0.join("data")
}

/// `chess-rules-service` with its redb store in [`rules_data_dir`], logging to `dir`.
pub fn rules(dir: &TempDir, args: &[&str], envs: &[(&str, &str)]) -> Service {
    let data = rules_data_dir(dir);
    let mut all = vec!["--data-dir", data.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    start_rules(dir, &all, envs)
}

/// `chess-rules-service` as one replica on the PostgreSQL database at `url`, with a 2 s
/// database timeout.
pub fn rules_on_postgres(url: &str, dir: &TempDir) -> Service {
    start_rules(
        dir,
        &[
            "--store",
            "postgres",
            "--database-url",
            url,
            "--database-timeout-ms",
            "2000",
        ],
        &[],
    )
}

/// [`rules_on_postgres`] with its database connections through `proxy` (which forwards to
/// the server of `url`).
pub fn rules_on_postgres_via(proxy: &CutProxy, url: &str, dir: &TempDir) -> Service {
    let direct = database_addr(url);
    let through = url.replace(&direct.to_string(), &proxy.addr().to_string());
    rules_on_postgres(&through, dir)
}

fn start_rules(dir: &TempDir, args: &[&str], envs: &[(&str, &str)]) -> Service {
    let mut all = vec!["--listen", LOOPBACK];
    all.extend_from_slice(args);
    Service::start("chess-rules-service", &all, envs, &dir.0)
}

/// `chess-search-service` with `args` (workers, queue, hash size: the service's own defaults
/// unless given).
pub fn search(dir: &TempDir, args: &[&str], envs: &[(&str, &str)]) -> Service {
    search_on(LOOPBACK, dir, args, envs)
}

/// [`search`] on a given address (to restart a replica where it was).
pub fn search_on(listen: &str, dir: &TempDir, args: &[&str], envs: &[(&str, &str)]) -> Service {
    let mut all = vec!["--listen", listen];
    all.extend_from_slice(args);
    Service::start("chess-search-service", &all, envs, &dir.0)
}

/// The command line of a gateway in front of the rules replicas at `rules` (one address, or
/// several joined by commas) and the search replicas at `search`, then `args`.
pub fn gateway_args<'a>(rules: &'a str, search: &'a [String], args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--listen", LOOPBACK, "--rules-addr", rules];
    for addr in search {
        all.extend(["--search-addr", addr.as_str()]);
    }
    all.extend_from_slice(args);
    all
}

/// `chess-gateway` with [`gateway_args`].
pub fn gateway(
    dir: &TempDir,
    rules: &str,
    search: &[String],
    args: &[&str],
    envs: &[(&str, &str)],
) -> Service {
    Service::start(
        "chess-gateway",
        &gateway_args(rules, search, args),
        envs,
        &dir.0,
    )
}

/// A gateway in front of the rules `replicas` (`--rules-addr A,B`), with no search service and
/// no rate limit.
pub fn rules_gateway(dir: &TempDir, replicas: &[&Service]) -> Service {
    let addrs: Vec<String> = replicas.iter().map(|r| r.url()).collect();
    gateway(dir, &addrs.join(","), &[], &["--rate-limit", "0"], &[])
}
