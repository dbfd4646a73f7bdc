//! The workspace integration tests' one support library: every test file under `tests/`
//! takes its helpers from here and from nowhere else.
//!
//! - [`process`]: a service binary as a child process ([`Service`]), [`TempDir`], [`bin`];
//! - [`spawn`]: each service's command line, in one place (`rules`, `rules_on_postgres`,
//!   `search`, `gateway`);
//! - [`stack`]: whole stacks ([`Stack`], and [`Replicated`] with two search replicas);
//! - [`up`]: `chess up` ([`up::Up`]); [`postgres`]: a private PostgreSQL server;
//!   [`proxy`]: a TCP proxy that cuts or stalls a connection;
//! - [`games`], [`analysis`]: requests and answers of the game and analysis services;
//! - [`metrics`]: the Prometheus page, read and waited on; [`status`]: field violations,
//!   header sizes, API keys; [`raw`]: bodies as raw bytes;
//! - [`loadgen`], [`cli`]: the `chess-loadgen` and `chess` command lines;
//! - [`rng`]: the one seeded generator, and [`runtime`].

#![forbid(unsafe_code)]

pub mod analysis;
pub mod cli;
pub mod games;
pub mod loadgen;
pub mod metrics;
pub mod postgres;
pub mod process;
pub mod proxy;
pub mod raw;
pub mod rng;
pub mod spawn;
pub mod stack;
pub mod status;
pub mod up;

pub use process::{Service, TempDir, bin, bin_dir};
pub use stack::{Replicated, Stack};
pub use status::assert_field_error;

/// The runtime the tests' async code runs on: two worker threads.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}
