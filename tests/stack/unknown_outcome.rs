//! A write whose outcome is unknown: a rules replica's connection to PostgreSQL is cut right
//! after the database committed an event and before the answer came back (a proxy between
//! the replica and PostgreSQL does it). The replica must not say the change failed, and the
//! call sent again, by the client or by the gateway on another replica, must not make a
//! second event: a FIDE foul counted twice would lose the game.

use chess_integration_tests::games::{Games, ann_v_bob, client, get, mv};
use chess_integration_tests::postgres::{Postgres, database_addr};
use chess_integration_tests::proxy::CutProxy;
use chess_integration_tests::spawn::{
    rules_gateway, rules_on_postgres as replica, rules_on_postgres_via as replica_behind,
};
use chess_integration_tests::{TempDir, runtime};
use chess_proto::v1::{
    Color, CreateGameRequest, GameState, IllegalMoves, MakeMoveRequest, ResignRequest,
    TouchPieceRequest,
};
use tonic::{Code, Status};

/// The call failed with an honest "unknown": UNAVAILABLE (retryable), saying so, and not
/// claiming that nothing was stored.
fn assert_unknown<T: std::fmt::Debug>(what: &str, r: Result<T, Status>) {
    let e = r.expect_err(what);
    assert_eq!(e.code(), Code::Unavailable, "{what}: {e:?}");
    assert!(e.message().contains("outcome unknown"), "{what}: {e:?}");
    for untrue in ["not stored", "nothing was changed"] {
        assert!(!e.message().contains(untrue), "{what}: {e:?}");
    }
}

fn fide_game(key: &str) -> CreateGameRequest {
    CreateGameRequest {
        illegal_moves: IllegalMoves::Fide.into(),
        request_id: key.into(),
        ..ann_v_bob("", "5+3")
    }
}

fn keyed_move(id: &str, text: &str, ply: u32, key: &str) -> MakeMoveRequest {
    MakeMoveRequest {
        request_id: key.into(),
        ..mv(id, text, Some(ply))
    }
}

#[test]
fn a_write_cut_after_its_commit_is_unknown_and_its_retry_makes_no_second_event() {
    let Some(mut pg) = Postgres::start("unknown_outcome") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-unknown");
    let proxy = CutProxy::start(database_addr(&url));
    let a = replica_behind(&proxy, &url, &dir);
    runtime().block_on(async {
        let mut games: Games = client(&a).await;
        // Arms the proxy; the number of cuts once it has fired.
        let cut = |proxy: &CutProxy, pattern: &str| {
            proxy.arm(pattern);
            proxy.fired() + 1
        };

        // CreateGame: unknown, then the same key answers the game it made.
        let n = cut(&proxy, r#""type":"created""#);
        let first = games.create_game(fide_game("create-1")).await;
        assert_eq!(proxy.fired(), n, "the proxy cut the create");
        assert_unknown("CreateGame", first);
        let game = games.create_game(fide_game("create-1")).await.unwrap();
        let game = game.into_inner();
        let again = games.create_game(fide_game("create-1")).await.unwrap();
        assert_eq!(again.into_inner().game_id, game.game_id, "one game per key");
        let id = game.game_id;

        // MakeMove: unknown, stored, and sent again it is not a second move.
        let n = cut(&proxy, r#""type":"move""#);
        assert_unknown(
            "MakeMove",
            games.make_move(keyed_move(&id, "e4", 0, "move-1")).await,
        );
        assert_eq!(proxy.fired(), n);
        assert_eq!(get(&mut games, &id).await.ply, 1, "the move was stored");
        let s = games
            .make_move(keyed_move(&id, "e4", 0, "move-1"))
            .await
            .expect("the same MakeMove again answers the game")
            .into_inner();
        assert_eq!(s.ply, 1);

        // A FIDE foul (it does not advance the ply): recorded once however often it is sent.
        let n = cut(&proxy, r#""type":"foul""#);
        assert_unknown(
            "the foul",
            games.make_move(keyed_move(&id, "e8e6", 1, "foul-1")).await,
        );
        assert_eq!(proxy.fired(), n);
        for _ in 0..2 {
            let s: GameState = games
                .make_move(keyed_move(&id, "e8e6", 1, "foul-1"))
                .await
                .expect("the foul sent again")
                .into_inner();
            assert_eq!(s.fouls.len(), 1, "one foul: {:?}", s.fouls);
            assert!(s.outcome.is_none(), "a foul counted twice lost the game");
        }

        // TouchPiece and Resign the same way.
        let touch = TouchPieceRequest {
            game_id: id.clone(),
            side: Color::Black.into(),
            square: "e7".into(),
            request_id: "touch-1".into(),
            ..Default::default()
        };
        let n = cut(&proxy, r#""type":"touched""#);
        assert_unknown("TouchPiece", games.touch_piece(touch.clone()).await);
        assert_eq!(proxy.fired(), n);
        let s = games.touch_piece(touch).await.unwrap().into_inner();
        assert_eq!(s.touches.len(), 1);
        let resign = ResignRequest {
            game_id: id.clone(),
            side: Color::Black.into(),
            request_id: "resign-1".into(),
        };
        let n = cut(&proxy, r#""type":"resigned""#);
        assert_unknown("Resign", games.resign(resign.clone()).await);
        assert_eq!(proxy.fired(), n);
        for _ in 0..2 {
            let s = games.resign(resign.clone()).await.expect("resign again");
            assert!(s.into_inner().outcome.is_some());
        }
        // Without a key a finished game refuses it, as before.
        let mut no_key = resign.clone();
        no_key.request_id.clear();
        let e = games.resign(no_key).await.unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition);
    });
    proxy.disarm();
}

#[test]
fn a_foul_the_gateway_sends_again_to_another_replica_counts_once() {
    let Some(mut pg) = Postgres::start("foul_retried") else {
        return;
    };
    let url = pg.create_database();
    let dir = TempDir::new("pg-foul-retry");
    let proxy = CutProxy::start(database_addr(&url));
    let a = replica_behind(&proxy, &url, &dir);
    let b = replica(&url, &dir);
    let gw = rules_gateway(&dir, &[&a, &b]);
    runtime().block_on(async {
        let mut games =
            chess_proto::v1::game_service_client::GameServiceClient::new(gw.channel().await);
        // The gateway spreads calls over both replicas: play until replica A took a foul and
        // lost its answer (bounded).
        for round in 0..12 {
            let id = games
                .create_game(fide_game(""))
                .await
                .unwrap()
                .into_inner()
                .game_id;
            games.make_move(keyed_move(&id, "e4", 0, "")).await.unwrap();
            let before = proxy.fired();
            proxy.arm(r#""type":"foul""#);
            // No key from the client: the gateway gives the call one.
            let s = games
                .make_move(keyed_move(&id, "e8e6", 1, ""))
                .await
                .unwrap_or_else(|e| panic!("round {round}: the foul: {e:?}"))
                .into_inner();
            assert_eq!(s.fouls.len(), 1, "round {round}: {:?}", s.fouls);
            assert!(s.outcome.is_none(), "round {round}: lost by one foul");
            if proxy.fired() > before {
                let s = get(&mut games, &id).await;
                assert_eq!(s.fouls.len(), 1, "as stored: {:?}", s.fouls);
                eprintln!("round {round}: replica A lost its answer; one foul recorded");
                return;
            }
            proxy.disarm();
        }
        panic!("replica A never took the foul in 12 rounds");
    });
}
