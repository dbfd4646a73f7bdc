//! The database's host vanishes: a proxy between a rules replica and PostgreSQL stops passing
//! bytes without closing anything (no reset, as when a link goes down). Calls that need the
//! database must fail with UNAVAILABLE within the database timeout, not hang for the whole
//! cut, and service must come back within seconds of the link (issue 28, item 5).

use std::time::{Duration, Instant};

use chess_integration_tests::games::{client, mv, new_game};
use chess_integration_tests::postgres::{Postgres, database_addr};
use chess_integration_tests::proxy::CutProxy;
use chess_integration_tests::spawn::rules_on_postgres_via;
use chess_integration_tests::{TempDir, runtime};
use chess_proto::v1::GetGameRequest;
use tonic::Code;

/// `--database-timeout-ms` of the replicas in these tests.
const TIMEOUT: Duration = Duration::from_millis(2000);

#[test]
fn a_stalled_database_fails_calls_within_its_timeout_and_service_resumes_on_healing() {
    let Some(mut pg) = Postgres::start("database_stall") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-stall");
    let proxy = CutProxy::start(database_addr(&url));
    let a = rules_on_postgres_via(&proxy, &url, &dir);
    runtime().block_on(async {
        let mut games = client(&a).await;
        let id = new_game(&mut games, "", "5+3").await;
        games.make_move(mv(&id, "e4", Some(0))).await.expect("e4");

        proxy.stall();
        let started = Instant::now();
        let e = games
            .make_move(mv(&id, "e5", Some(1)))
            .await
            .expect_err("a move while the database is unreachable");
        let took = started.elapsed();
        assert_eq!(e.code(), Code::Unavailable, "{e:?}");
        assert!(
            took < TIMEOUT * 3,
            "the move hung for {took:?} with a {TIMEOUT:?} database timeout"
        );
        // A second call, on a connection the stall left behind, fails as promptly.
        let started = Instant::now();
        let _ = games.make_move(mv(&id, "e5", Some(1))).await;
        assert!(started.elapsed() < TIMEOUT * 3, "{:?}", started.elapsed());

        proxy.heal();
        let healed = Instant::now();
        // The first move's outcome was unknown: it may or may not be stored. Either way the
        // game goes on from what the database holds, within seconds.
        let game = loop {
            match games
                .get_game(GetGameRequest {
                    game_id: id.clone(),
                })
                .await
            {
                Ok(g) => break g.into_inner(),
                Err(e) => {
                    assert!(
                        healed.elapsed() < Duration::from_secs(10),
                        "not back: {e:?}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let ply = game.ply;
        assert!(ply == 1 || ply == 2, "{game:?}");
        let next = if ply == 1 { "e5" } else { "Nf3" };
        games
            .make_move(mv(&id, next, Some(ply)))
            .await
            .expect("a move after healing");
        assert!(
            healed.elapsed() < Duration::from_secs(10),
            "service came back {:?} after the link",
            healed.elapsed()
        );
    });
}
