//! The services as users meet them: real binaries on 127.0.0.1, real gRPC clients, every
//! call through the gateway unless a test is about one service alone.

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

use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use tonic::transport::Channel;

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

pub async fn clients(
    stack: &chess_integration_tests::Stack,
) -> (RulesServiceClient<Channel>, GameServiceClient<Channel>) {
    let ch = stack.gateway.channel().await;
    (
        RulesServiceClient::new(ch.clone()),
        GameServiceClient::new(ch),
    )
}
