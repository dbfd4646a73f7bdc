//! The services as users meet them: real binaries on 127.0.0.1, real gRPC clients, every
//! call through the gateway unless a test is about one service alone. Each file is one
//! concern and takes its helpers from the support library (`tests/support/`), never from
//! another test file.

#![forbid(unsafe_code)]

mod arbiter;
mod auth;
mod batched;
mod connections;
mod crash;
mod database_stall;
mod discovery;
mod engine_move;
mod framing;
mod fuzz;
mod games;
mod hardening;
mod loadgen;
mod postgres;
mod review;
mod rules_api;
mod rules_replicas;
mod search;
mod store_import;
mod tables;
mod takeback;
mod unknown_outcome;
mod winnability;
