//! The PostgreSQL game store against a real server (tests/support/postgres.rs starts one; without
//! PostgreSQL these tests skip, with `CI=true` they fail): the store suite, moving games
//! between stores, and several rules-service replicas on one database: games created on one
//! replica and played on another, watched across replicas, racing moves, a replica killed
//! under load, and the database restarted under load.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chess_integration_tests::cli::{sorted_lines, store_export, store_import};
use chess_integration_tests::games::{Games, client, get, mv, new_game, two_moves, ucis, watch};
use chess_integration_tests::postgres::Postgres;
use chess_integration_tests::spawn::{self, rules_on_postgres as replica};
use chess_integration_tests::{TempDir, runtime};
use chess_proto::v1::game_event::Kind;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::outcome::{Result as R, Rule};
use chess_proto::v1::{GetGameRequest, WatchGameRequest};
use chess_rules::Position;
use chess_rules_service::store::{GameStore, PostgresOptions, PostgresStore, conformance};
use tokio_stream::StreamExt;
use tonic::Code;

#[test]
fn the_store_suite_passes_on_postgres_and_replicas_migrate_at_once() {
    let Some(mut pg) = Postgres::start("the_store_suite_passes_on_postgres") else {
        return;
    };
    let url = pg.create_database();
    let rt = runtime();
    // Four replicas start at once on an empty database: each migration is applied once.
    let stores: Vec<PostgresStore> = rt.block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(
                    async move { PostgresStore::connect(&PostgresOptions::new(url)).await },
                )
            })
            .collect();
        let mut stores = Vec::new();
        for t in tasks {
            stores.push(t.await.unwrap().expect("connect and migrate"));
        }
        stores
    });
    let db = url.rsplit('/').next().unwrap();
    assert_eq!(
        pg.sql(db, "SELECT count(*) FROM chess_schema_migrations"),
        "1"
    );
    // The suite the memory and redb stores pass (blocking calls: outside the runtime).
    conformance::run(&stores[0]);
    // Another replica's view is the same.
    assert_eq!(stores[1].count().unwrap(), stores[0].count().unwrap());
    drop(stores);
    drop(rt);
}

#[test]
fn games_move_from_redb_to_postgres_and_back() {
    let Some(mut pg) = Postgres::start("games_move_from_redb_to_postgres_and_back") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-transfer");
    let data = spawn::rules_data_dir(&dir);
    let rt = runtime();
    // Real games, played through a rules service on redb.
    let mut rules = spawn::rules(&dir, &[], &[]);
    rt.block_on(async {
        let mut games = client(&rules).await;
        for (i, moves) in [
            &["e4", "e5", "Nf3"][..],
            &["d4"][..],
            &["f3", "e5", "g4", "Qh4#"][..],
            &[][..],
        ]
        .iter()
        .enumerate()
        {
            let id = new_game(&mut games, "", if i % 2 == 0 { "5+3" } else { "" }).await;
            for m in *moves {
                games.make_move(mv(&id, m, None)).await.unwrap();
            }
        }
    });
    rules.terminate(Duration::from_secs(10));
    let redb_url = format!("redb:{}", data.join("games.redb").display());
    // Through the command line, as a user moves games: `chess store export|import`.
    let export = store_export;
    let import = |url: &str, input: &[u8]| -> String {
        let out = store_import(url, input);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "import into {url}: {said}");
        said
    };
    let first = export(&redb_url);
    assert_eq!(sorted_lines(&first).len(), 4);
    assert!(import(&url, &first).contains(": 4 game(s) written"));
    let from_pg = export(&url);
    assert_eq!(sorted_lines(&from_pg), sorted_lines(&first));
    let back = format!("redb:{}", dir.0.join("second.redb").display());
    assert!(import(&back, &from_pg).contains(": 4 game(s) written"));
    assert_eq!(sorted_lines(&export(&back)), sorted_lines(&first));
    // A bad line is refused with its number, and the store is unchanged.
    let mut bad = first.clone();
    bad.extend_from_slice(b"{\"game_id\": \"x\"}\n");
    let out = store_import(&url, &bad);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 5"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Importing again changes nothing.
    assert!(import(&url, &first).contains("4 already there (unchanged)"));
}

#[test]
fn replicas_share_games_and_watchers_see_moves_made_elsewhere() {
    let Some(mut pg) = Postgres::start("replicas_share_games") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-replicas");
    let a = replica(&url, &dir);
    let b = replica(&url, &dir);
    let gateway = spawn::rules_gateway(&dir, &[&a]);
    runtime().block_on(async {
        let mut via_gateway = GameServiceClient::new(gateway.channel().await);
        let mut on_a = client(&a).await;
        let mut on_b = client(&b).await;
        // Created through the gateway (replica A), played on B, watched on A.
        let id = new_game(&mut via_gateway, "", "").await;
        let mut watcher = watch(&mut on_a, &id).await;
        let line = [
            "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6",
        ];
        let mut latencies = Vec::new();
        for (ply, m) in line.iter().enumerate() {
            let acked = on_b
                .make_move(mv(&id, m, Some(ply as u32)))
                .await
                .unwrap()
                .into_inner();
            let at = Instant::now();
            assert_eq!(acked.ply, ply as u32 + 1);
            let ev = tokio::time::timeout(Duration::from_secs(5), watcher.next())
                .await
                .expect("the watcher on A sees B's move")
                .unwrap()
                .unwrap();
            latencies.push(at.elapsed());
            assert_eq!(ev.kind, Kind::Move as i32);
            assert_eq!(ucis(ev.state.as_ref().unwrap()), ucis(&acked));
            // A serves the game as B left it.
            let on_a_state = get(&mut on_a, &id).await;
            assert_eq!(ucis(&on_a_state), ucis(&acked));
        }
        // And through the gateway, A takes the next move.
        via_gateway
            .make_move(mv(&id, "e1g1", Some(8)))
            .await
            .unwrap();
        assert_eq!(get(&mut on_b, &id).await.ply, 9);
        latencies.sort();
        let median = latencies[latencies.len() / 2];
        let max = *latencies.last().unwrap();
        eprintln!(
            "cross-replica watch latency over {} moves: median {median:?}, max {max:?}",
            latencies.len()
        );
        assert!(
            median <= Duration::from_millis(100),
            "watchers on A see B's moves within 100 ms: median {median:?}"
        );
    });
}

#[test]
fn two_replicas_racing_for_one_ply_give_exactly_one_winner() {
    let Some(mut pg) = Postgres::start("two_replicas_racing") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-race");
    let a = replica(&url, &dir);
    let b = replica(&url, &dir);
    runtime().block_on(async {
        let on_a = client(&a).await;
        let on_b = client(&b).await;
        let mut setup = on_a.clone();
        let mut id = new_game(&mut setup, "", "").await;
        let mut state = get(&mut setup, &id).await;
        let mut winners: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let (mut a_won, mut b_won) = (0, 0);
        for round in 0..100usize {
            let pair = two_moves(&state.fen, round * 7);
            let (ma, mb) = match pair {
                Some(p) if state.outcome.is_none() && state.ply < 80 => p,
                _ => {
                    id = new_game(&mut setup, "", "").await;
                    state = get(&mut setup, &id).await;
                    two_moves(&state.fen, round * 7).unwrap()
                }
            };
            let ply = state.ply;
            let (mut ca, mut cb) = (on_a.clone(), on_b.clone());
            let (ida, idb) = (id.clone(), id.clone());
            let ta = tokio::spawn(async move { ca.make_move(mv(&ida, &ma, Some(ply))).await });
            let tb = tokio::spawn(async move { cb.make_move(mv(&idb, &mb, Some(ply))).await });
            let (ra, rb) = (ta.await.unwrap(), tb.await.unwrap());
            let mut won = None;
            for (name, r) in [("A", ra), ("B", rb)] {
                match r {
                    Ok(s) => {
                        assert!(won.is_none(), "round {round}: both replicas accepted ply {ply}");
                        won = Some((name, s.into_inner()));
                    }
                    Err(e) => assert_eq!(
                        e.code(),
                        Code::FailedPrecondition,
                        "round {round}: the loser gets FAILED_PRECONDITION: {e:?}"
                    ),
                }
            }
            let (name, s) = won.unwrap_or_else(|| panic!("round {round}: nobody won ply {ply}"));
            if name == "A" {
                a_won += 1;
            } else {
                b_won += 1;
            }
            assert_eq!(s.ply, ply + 1);
            winners
                .entry(id.clone())
                .or_default()
                .push(ucis(&s).last().unwrap().clone());
            state = s;
        }
        // Each game's log is exactly its winners, on both replicas.
        for (id, moves) in &winners {
            for c in [on_a.clone(), on_b.clone()] {
                let mut c = c;
                let s = get(&mut c, id).await;
                assert_eq!(&ucis(&s)[ucis(&s).len() - moves.len()..], &moves[..]);
            }
        }
        eprintln!(
            "100 rounds of racing MakeMove: exactly one winner each (replica A won {a_won}, B won {b_won}) over {} games",
            winners.len()
        );
    });
}

/// Plays `plies` moves in game `id`, alternating between the replicas in `clients` (and
/// moving on to the next one when a replica is down); returns the acknowledged moves by ply.
async fn play_on(
    clients: Arc<Vec<Games>>,
    id: String,
    plies: u32,
    pause: Duration,
) -> Vec<(u32, String)> {
    let mut acked = Vec::new();
    let mut ply = 0u32;
    let mut turn = 0usize;
    let mut fails = 0;
    let mut fen = Position::startpos().fen();
    while ply < plies && fails < 200 {
        let mut c = clients[turn % clients.len()].clone();
        turn += 1;
        let Some((m, _)) = two_moves(&fen, ply as usize * 3 + 1) else {
            break;
        };
        match c.make_move(mv(&id, &m, Some(ply))).await {
            Ok(s) => {
                let s = s.into_inner();
                acked.push((ply, ucis(&s).last().unwrap().clone()));
                fen = s.fen;
                ply += 1;
                if s.outcome.is_some() {
                    break;
                }
            }
            Err(e) if e.code() == Code::FailedPrecondition => {
                // The move was stored although its answer was lost: read where the game is.
                for c in clients.iter() {
                    if let Ok(s) = c
                        .clone()
                        .get_game(GetGameRequest {
                            game_id: id.clone(),
                        })
                        .await
                    {
                        let s = s.into_inner();
                        fen = s.fen;
                        ply = s.ply;
                        break;
                    }
                }
            }
            Err(_) => fails += 1,
        }
        tokio::time::sleep(pause).await;
    }
    acked
}

#[test]
fn killing_a_replica_under_load_loses_no_acknowledged_move() {
    let Some(mut pg) = Postgres::start("killing_a_replica") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-kill");
    let mut a = replica(&url, &dir);
    let b = replica(&url, &dir);
    runtime().block_on(async {
        let clients = Arc::new(vec![client(&a).await, client(&b).await]);
        let mut ids = Vec::new();
        for _ in 0..4 {
            ids.push(new_game(&mut clients[0].clone(), "", "").await);
        }
        // One watcher per game on A (to be killed) and one on B.
        let mut watchers_a = Vec::new();
        for id in &ids {
            watchers_a.push(watch(&mut clients[0].clone(), id).await);
        }
        let players: Vec<_> = ids
            .iter()
            .map(|id| {
                tokio::spawn(play_on(
                    clients.clone(),
                    id.clone(),
                    60,
                    Duration::from_millis(10),
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(400)).await;
        a.kill_hard();
        let killed_at = Instant::now();
        let mut before_kill = 0;
        for id in &ids {
            before_kill += get(&mut clients[1].clone(), id).await.ply;
        }
        let mut acked_total = 0;
        for (id, p) in ids.iter().zip(players) {
            let acked = p.await.unwrap();
            let state = get(&mut clients[1].clone(), id).await;
            let stored = ucis(&state);
            for (ply, m) in &acked {
                assert_eq!(
                    stored.get(*ply as usize),
                    Some(m),
                    "game {id}: acknowledged move {m} at ply {ply} is stored"
                );
            }
            assert!(
                acked.len() >= 50,
                "game {id} went on through B: {} moves",
                acked.len()
            );
            acked_total += acked.len();
        }
        // The watchers on A saw their stream end; they reconnect to B and get the game.
        for (w, id) in watchers_a.iter_mut().zip(&ids) {
            let ended = tokio::time::timeout(Duration::from_secs(10), async {
                loop {
                    match w.next().await {
                        Some(Ok(_)) => continue,
                        _ => return,
                    }
                }
            })
            .await;
            assert!(ended.is_ok(), "the watch on the killed replica ends");
            let mut again = clients[1].clone();
            let mut w2 = again
                .watch_game(WatchGameRequest {
                    game_id: id.clone(),
                })
                .await
                .unwrap()
                .into_inner();
            let snap = w2.next().await.unwrap().unwrap();
            assert_eq!(
                snap.state.unwrap().ply,
                get(&mut clients[1].clone(), id).await.ply
            );
        }
        assert!(
            (before_kill as usize) < acked_total,
            "the games went on after the kill"
        );
        eprintln!(
            "replica A killed mid-game with {before_kill} moves stored; {acked_total} moves acknowledged over {} games, all {acked_total} found in the store ({:?} after the kill)",
            ids.len(),
            killed_at.elapsed()
        );
    });
}

#[test]
fn postgres_restarted_under_load_fails_unavailable_then_recovers() {
    let Some(mut pg) = Postgres::start("postgres_restarted_under_load") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-restart");
    let a = replica(&url, &dir);
    let b = replica(&url, &dir);
    let rt = runtime();
    let (id, mut acked) = rt.block_on(async {
        let mut on_a = client(&a).await;
        let id = new_game(&mut on_a, "", "").await;
        let acked = play_on(Arc::new(vec![on_a.clone()]), id.clone(), 6, Duration::ZERO).await;
        (id, acked)
    });
    assert_eq!(acked.len(), 6);
    pg.stop_server(true);
    // While the database is down every call fails UNAVAILABLE; none succeeds.
    let during = rt.block_on(async {
        let mut on_b = client(&b).await;
        let mut codes = Vec::new();
        for i in 0..10u32 {
            let r = on_b
                .make_move(mv(&id, if i % 2 == 0 { "a2a3" } else { "h2h3" }, None))
                .await;
            codes.push(r.map(|_| ()).map_err(|e| e.code()));
            let r = on_b
                .get_game(GetGameRequest {
                    game_id: id.clone(),
                })
                .await;
            codes.push(r.map(|_| ()).map_err(|e| e.code()));
        }
        codes
    });
    for c in &during {
        assert_eq!(
            *c,
            Err(Code::Unavailable),
            "while PostgreSQL is down: {during:?}"
        );
    }
    pg.start_server();
    // Service resumes by itself, and a watcher on A sees B's moves again.
    rt.block_on(async {
        let mut on_a = client(&a).await;
        let mut on_b = client(&b).await;
        let started = Instant::now();
        let state = loop {
            match on_b.get_game(GetGameRequest { game_id: id.clone() }).await {
                Ok(s) => break s.into_inner(),
                Err(e) => {
                    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
                    assert!(started.elapsed() < Duration::from_secs(20), "no recovery: {e:?}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let recovered = started.elapsed();
        let stored = ucis(&state);
        assert_eq!(stored.len(), acked.len(), "nothing was stored while down");
        for (ply, m) in &acked {
            assert_eq!(&stored[*ply as usize], m);
        }
        let mut watcher = watch(&mut on_a, &id).await;
        let (m, _) = two_moves(&state.fen, 0).unwrap();
        let s = on_b
            .make_move(mv(&id, &m, Some(state.ply)))
            .await
            .unwrap()
            .into_inner();
        acked.push((state.ply, m));
        let ev = tokio::time::timeout(Duration::from_secs(5), watcher.next())
            .await
            .expect("the watcher on A sees B's move after the restart")
            .unwrap()
            .unwrap();
        assert_eq!(ev.state.unwrap().ply, s.ply);
        eprintln!(
            "PostgreSQL restarted: {} calls failed UNAVAILABLE while down, service back {recovered:?} after the restart",
            during.len()
        );
    });
}

#[test]
fn a_flag_falls_on_time_after_the_replica_serving_the_game_died() {
    let Some(mut pg) = Postgres::start("a_flag_falls_on_time") else {
        return;
    };
    let url = pg.create_database();
    let db = url.rsplit('/').next().unwrap().to_owned();
    let dir = TempDir::new("pg-flag");
    let mut a = replica(&url, &dir);
    // Two survivors: both see the flag fall; exactly one records it.
    let b = replica(&url, &dir);
    let c = replica(&url, &dir);
    let id = runtime().block_on(async {
        let mut on_a = client(&a).await;
        // Three seconds each: white's clock runs once black has replied.
        let id = new_game(&mut on_a, "", "0.05+0").await;
        on_a.make_move(mv(&id, "e4", Some(0))).await.unwrap();
        on_a.make_move(mv(&id, "e5", Some(1))).await.unwrap();
        id
    });
    // Nobody serves or watches the game any more: only the survivors' sweep can flag it.
    a.kill_hard();
    let deadline: u64 = pg
        .sql(
            &db,
            &format!(
                "SELECT (body->>'at_ms')::bigint + 3000 FROM chess_events WHERE game = '{id}' AND seq = 2"
            ),
        )
        .parse()
        .unwrap();
    let flag = format!(
        "SELECT count(*), min((body->>'at_ms')::bigint) FROM chess_events WHERE game = '{id}' AND body->>'type' = 'flag_fell'"
    );
    let started = Instant::now();
    let (count, at) = loop {
        let row = pg.sql(&db, &flag);
        let (n, at) = row.split_once('|').unwrap();
        if n != "0" {
            break (n.to_owned(), at.parse::<u64>().unwrap());
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no replica recorded the flag fall"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // Give a second recorder the chance to (wrongly) write again.
    std::thread::sleep(Duration::from_secs(1));
    let (count_later, _) = pg
        .sql(&db, &flag)
        .split_once('|')
        .map(|(n, a)| (n.to_owned(), a.to_owned()))
        .unwrap();
    assert_eq!(count, "1");
    assert_eq!(count_later, "1", "the flag fall is recorded once");
    let late = at.saturating_sub(deadline);
    assert!(at >= deadline, "not before the deadline");
    assert!(late < 1_000, "recorded {late} ms after the deadline");
    runtime().block_on(async {
        for r in [&b, &c] {
            let s = get(&mut client(r).await, &id).await;
            let o = s.outcome.expect("the game is over");
            assert_eq!(o.result, R::BlackWins as i32, "{o:?}");
            assert_eq!(o.rule, Rule::Timeout as i32, "{o:?}");
        }
    });
    eprintln!(
        "flag fall of a game whose replica died: recorded once, {late} ms after the deadline"
    );
}
