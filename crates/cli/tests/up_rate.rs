//! `chess up` does not rate-limit its only caller: a burst of calls well above the gateway's
//! usual per-caller limit (100 requests/s, burst 100) all get answers, while `--rate-limit N`
//! still turns the limit on for whoever wants to try it.

#![cfg(unix)]

mod common;

use chess_proto::v1::LegalMovesRequest;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use common::{Stack, TempDir};
use tonic::Code;
use tonic::transport::Endpoint;

/// Calls sent at once: three times the gateway's default burst.
const BURST: usize = 300;

/// Sends `BURST` LegalMoves calls through the gateway at `addr` all at once and counts the
/// answers by status code.
fn burst(addr: &str) -> std::collections::BTreeMap<String, usize> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .connect_timeout(std::time::Duration::from_secs(5))
            .timeout(std::time::Duration::from_secs(60))
            .connect()
            .await
            .expect("connect to the gateway");
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..BURST {
            let mut client = RulesServiceClient::new(channel.clone());
            calls.spawn(async move {
                client
                    .legal_moves(LegalMovesRequest::default())
                    .await
                    .map_or_else(|s| s.code(), |_| Code::Ok)
            });
        }
        let mut codes = std::collections::BTreeMap::new();
        while let Some(code) = calls.join_next().await {
            *codes
                .entry(format!("{:?}", code.expect("call task")))
                .or_default() += 1;
        }
        codes
    })
}

#[test]
fn up_does_not_rate_limit_its_only_caller() {
    let dir = TempDir::new("up-rate");
    let stack = Stack::start(dir.path(), &["--memory"]);
    let codes = burst(&stack.gateway);
    assert_eq!(codes.get("Ok"), Some(&BURST), "{codes:?}");
    drop(stack);

    // Asked for a limit, the gateway keeps it: most of the burst is refused.
    let stack = Stack::start(dir.path(), &["--memory", "--rate-limit", "5"]);
    let codes = burst(&stack.gateway);
    let refused = codes.get("ResourceExhausted").copied().unwrap_or(0);
    assert!(refused >= BURST - 100, "{codes:?}");
    assert_eq!(codes.values().sum::<usize>(), BURST, "{codes:?}");
}
