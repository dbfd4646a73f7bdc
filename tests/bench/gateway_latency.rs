//! Request rate and latency through the gateway: LegalMoves and MakeMove, with N concurrent
//! clients for a fixed time each, against real release binaries on 127.0.0.1.
//!
//! ```text
//! cargo build --release --bins
//! cargo bench -p chess-integration-tests --bench gateway_latency
//! ```
//!
//! `CHESS_BENCH_CLIENTS` (default 8) and `CHESS_BENCH_SECS` (default 5) change the load.
//! Run without `--bench` (as `cargo test --benches` does) it makes a one-second smoke run.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use chess_integration_tests::Stack;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::{CreateGameRequest, LegalMovesRequest, MakeMoveRequest};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, clients: usize, elapsed: Duration, mut lat: Vec<Duration>, errors: usize) {
    lat.sort();
    let n = lat.len();
    println!(
        "{name:<11} clients={clients:<3} requests={n:<7} errors={errors:<4} rate={:>8.0}/s  p50={:>7.2}ms  p90={:>7.2}ms  p99={:>7.2}ms  max={:>7.2}ms",
        n as f64 / elapsed.as_secs_f64(),
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.90).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let clients: usize = std::env::var("CHESS_BENCH_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let secs: u64 = std::env::var("CHESS_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 5 } else { 1 });
    let stack = Stack::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let channel = stack.gateway.channel().await;
        // LegalMoves after a short opening: the rules service parses, plays and lists.
        let run_for = Duration::from_secs(secs);
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let mut rules = RulesServiceClient::new(channel.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut errors = 0;
                let moves: Vec<String> = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                while started.elapsed() < run_for {
                    let t = Instant::now();
                    match rules
                        .legal_moves(LegalMovesRequest {
                            fen: String::new(),
                            moves: moves.clone(),
                        })
                        .await
                    {
                        Ok(_) => lat.push(t.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (lat, errors)
            }));
        }
        let mut lat = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (l, e) = t.await.expect("task");
            lat.extend(l);
            errors += e;
        }
        report("LegalMoves", clients, started.elapsed(), lat, errors);

        // MakeMove: each client plays its own game (a durable write per move), starting a
        // new game when one ends.
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let mut games = GameServiceClient::new(channel.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut errors = 0;
                let mut seed = 0x2545_f491_4f6c_dd1du64 ^ c as u64;
                'games: while started.elapsed() < run_for {
                    let Ok(game) = games.create_game(CreateGameRequest::default()).await else {
                        errors += 1;
                        continue;
                    };
                    let id = game.into_inner().game_id;
                    let mut pos = chess_rules::Position::startpos();
                    while started.elapsed() < run_for {
                        let moves = pos.legal_moves();
                        if moves.is_empty()
                            || pos.is_insufficient_material()
                            || pos.halfmoves() >= 100
                        {
                            continue 'games;
                        }
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let m = moves[(seed % moves.len() as u64) as usize];
                        let t = Instant::now();
                        match games
                            .make_move(MakeMoveRequest {
                                game_id: id.clone(),
                                r#move: m.to_string(),
                                ..Default::default()
                            })
                            .await
                        {
                            Ok(_) => {
                                lat.push(t.elapsed());
                                pos.play_unchecked(m);
                            }
                            Err(_) => {
                                errors += 1;
                                continue 'games;
                            }
                        }
                    }
                }
                (lat, errors)
            }));
        }
        let mut lat = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (l, e) = t.await.expect("task");
            lat.extend(l);
            errors += e;
        }
        report("MakeMove", clients, started.elapsed(), lat, errors);
    });
}
