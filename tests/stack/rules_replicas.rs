//! Two rules-service replicas on one PostgreSQL database behind one gateway (`--rules-addr
//! A,B`): calls spread over both, and one replica killed with kill -9 under load while every
//! call goes through the gateway: no acknowledged move is lost, no call fails (MakeMove with
//! expected_ply is sent again to the other replica, and one whose move the dead replica had
//! already stored is answered with the game), watchers reconnect through the gateway.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use chess_integration_tests::games::{Games, get, mv, new_game, two_moves, ucis, watch};
use chess_integration_tests::metrics::metric;
use chess_integration_tests::postgres::Postgres;
use chess_integration_tests::spawn::{rules_gateway, rules_on_postgres as replica};
use chess_integration_tests::{Service, TempDir, runtime};
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::{GetGameRequest, WatchGameRequest};
use chess_rules::Position;
use tokio_stream::StreamExt;
use tonic::Code;

/// Games played at once, and plies in each.
const GAMES: usize = 4;
const PLIES: u32 = 60;

/// MakeMove calls a replica has answered, from its own metrics.
fn moves_served(replica: &Service) -> f64 {
    metric(
        &replica.scrape_metrics(),
        "chess_grpc_server_handled_total",
        &["GameService/MakeMove\""],
    )
}

/// Plays `PLIES` moves of game `id` through the gateway, each with its expected_ply; returns
/// the acknowledged moves by ply and every error met.
async fn play(
    mut games: Games,
    id: String,
    played: Arc<AtomicU32>,
) -> (Vec<(u32, String)>, Vec<tonic::Status>) {
    let mut acked = Vec::new();
    let mut errors = Vec::new();
    let mut fen = Position::startpos().fen();
    let mut ply = 0u32;
    while ply < PLIES && errors.len() < 20 {
        let Some((m, _)) = two_moves(&fen, ply as usize * 3 + 1) else {
            break;
        };
        match games.make_move(mv(&id, &m, Some(ply))).await {
            Ok(s) => {
                let s = s.into_inner();
                assert_eq!(
                    s.ply,
                    ply + 1,
                    "game {id}: the answer is the game after ply {ply}"
                );
                acked.push((ply, ucis(&s).last().unwrap().clone()));
                fen = s.fen;
                ply += 1;
                played.fetch_add(1, Ordering::SeqCst);
                if s.outcome.is_some() {
                    break;
                }
            }
            Err(e) => {
                errors.push(e);
                // Read where the game is, and go on from there.
                if let Ok(s) = games
                    .get_game(GetGameRequest {
                        game_id: id.clone(),
                    })
                    .await
                {
                    let s = s.into_inner();
                    fen = s.fen;
                    ply = s.ply;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (acked, errors)
}

#[test]
fn a_rules_replica_killed_behind_the_gateway_fails_no_call() {
    let Some(mut pg) = Postgres::start("rules_replica_killed_behind_the_gateway") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("rules-replicas");
    let mut a = replica(&url, &dir);
    let b = replica(&url, &dir);
    let gateway = rules_gateway(&dir, &[&a, &b]);
    runtime().block_on(async {
        let channel = gateway.channel().await;
        let mut games = GameServiceClient::new(channel.clone());
        let mut ids = Vec::new();
        for _ in 0..GAMES {
            ids.push(new_game(&mut games, "", "").await);
        }
        // Calls go to both replicas.
        let created = metric(
            &gateway.scrape_metrics(),
            "chess_gateway_rules_replicas_healthy",
            &[],
        );
        assert_eq!(created, 2.0, "both replicas take calls");
        // One watcher per game, through the gateway (on either replica).
        let mut watchers = Vec::new();
        for id in &ids {
            watchers.push(watch(&mut games.clone(), id).await);
        }
        let played = Arc::new(AtomicU32::new(0));
        let players: Vec<_> = ids
            .iter()
            .map(|id| tokio::spawn(play(games.clone(), id.clone(), played.clone())))
            .collect();
        // Kill A a third into the load, once it has served moves.
        let started = Instant::now();
        while played.load(Ordering::SeqCst) < GAMES as u32 * PLIES / 3 || moves_served(&a) < 1.0 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the load never got a third of the way: {} moves",
                played.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let served_by_a = moves_served(&a);
        a.kill_hard();
        let killed_at = played.load(Ordering::SeqCst);

        let mut acked_total = 0;
        let mut errors = Vec::new();
        for (id, p) in ids.iter().zip(players) {
            let (acked, e) = p.await.unwrap();
            errors.extend(e);
            let stored = ucis(&get(&mut games, id).await);
            for (ply, m) in &acked {
                assert_eq!(
                    stored.get(*ply as usize),
                    Some(m),
                    "game {id}: acknowledged move {m} at ply {ply} is stored"
                );
            }
            assert_eq!(
                stored.len(),
                acked.len(),
                "game {id}: every stored move was acknowledged"
            );
            acked_total += acked.len();
        }
        assert!(
            errors.is_empty(),
            "no call through the gateway failed: {errors:?}"
        );
        assert!(
            (killed_at as usize) < acked_total,
            "the games went on after the kill"
        );

        // The watchers on A saw their stream end with UNAVAILABLE naming the rules service;
        // watching again through the gateway reaches B, at the game as it stands.
        let mut ended_on_a = 0;
        for (w, id) in watchers.iter_mut().zip(&ids) {
            let end = tokio::time::timeout(Duration::from_secs(2), async {
                loop {
                    match w.next().await {
                        Some(Ok(_)) => continue,
                        Some(Err(status)) => return Some(status),
                        None => return None,
                    }
                }
            })
            .await;
            if let Ok(Some(status)) = end {
                assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                assert!(status.message().contains("rules"), "{status:?}");
                ended_on_a += 1;
                let mut again = games
                    .watch_game(WatchGameRequest {
                        game_id: id.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                let snap = again.next().await.unwrap().unwrap();
                assert_eq!(snap.state.unwrap().ply, get(&mut games, id).await.ply);
            }
        }
        let text = gateway.scrape_metrics();
        let retried = metric(&text, "chess_gateway_rules_retries_total", &[]);
        let ejections = metric(&text, "chess_gateway_rules_ejections_total", &[]);
        assert!(ejections >= 1.0, "the dead replica was ejected: {text}");
        eprintln!(
            "rules replica A killed after serving {served_by_a} moves, {killed_at} moves into \
             the load: {acked_total} moves acknowledged over {GAMES} games through the gateway, \
             all stored, 0 failed; {retried} calls retried on B, {ejections} ejections; \
             {ended_on_a} of {GAMES} watchers were on A and reconnected to B"
        );
    });
}
