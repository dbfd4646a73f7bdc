//! chess.v1.GameService through the gateway: games to every ending, bad input that leaves the
//! game as it was, watching, and concurrent clients that must not fork a game; on the redb
//! store, and the same suite on PostgreSQL.

use std::time::Duration;

use chess_integration_tests::games::{clients, get, mv, new_game, outcome, play};
use chess_integration_tests::postgres::Postgres;
use chess_integration_tests::{Stack, assert_field_error, runtime};
use chess_proto::v1::game_event::Kind;
use chess_proto::v1::outcome::{Result as R, Rule};
use chess_proto::v1::{
    ClaimDrawRequest, Color, CreateGameRequest, GetGameRequest, MakeMoveRequest, ResignRequest,
    RespondToDrawRequest, WatchGameRequest,
};
use tokio_stream::StreamExt;
use tonic::Code;

#[test]
fn games_reach_every_ending() {
    games_reach_every_ending_on(Stack::start());
}

/// Also run on the PostgreSQL store.
fn games_reach_every_ending_on(stack: Stack) {
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;

        // Checkmate, and nothing can be played after it.
        let id = new_game(&mut games, "", "").await;
        let s = play(&mut games, &id, &["f3", "e5", "g4", "Qh4#"]).await;
        assert_eq!(outcome(&s), (R::BlackWins as i32, Rule::Checkmate as i32));
        assert!(s.pgn.contains("2. g4 Qh4# 0-1"), "{}", s.pgn);
        assert_field_error(
            games.make_move(mv(&id, "a3", None)).await,
            Code::FailedPrecondition,
            "game_id",
        );

        // Stalemate.
        let id = new_game(&mut games, "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "").await;
        let s = play(&mut games, &id, &["Qf7"]).await;
        assert_eq!(outcome(&s), (R::Draw as i32, Rule::Stalemate as i32));

        // Dead position after the last pawn falls.
        let id = new_game(&mut games, "8/8/4k3/8/4p3/3K4/8/8 w - - 0 1", "").await;
        let s = play(&mut games, &id, &["Kxe4"]).await;
        assert_eq!(outcome(&s), (R::Draw as i32, Rule::DeadPosition as i32));

        // Threefold: claimed, with the declared move; not automatic.
        let id = new_game(&mut games, "", "").await;
        let s = play(
            &mut games,
            &id,
            &["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"],
        )
        .await;
        assert!(s.outcome.is_none());
        let early = games
            .claim_draw(ClaimDrawRequest {
                game_id: id.clone(),
                side: Color::Black as i32,
                r#move: String::new(),
                request_id: String::new(),
            })
            .await;
        assert_field_error(early, Code::FailedPrecondition, "move");
        let s = games
            .claim_draw(ClaimDrawRequest {
                game_id: id.clone(),
                side: Color::Black as i32,
                r#move: "Ng8".into(),
                request_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            outcome(&s),
            (R::Draw as i32, Rule::ThreefoldRepetition as i32)
        );
        assert_eq!(s.ply, 8, "the declared move is recorded");

        // Fivefold: automatic.
        let id = new_game(&mut games, "", "").await;
        let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8"];
        let mut s = None;
        for _ in 0..4 {
            s = Some(play(&mut games, &id, &shuffle).await);
        }
        assert_eq!(
            outcome(&s.unwrap()),
            (R::Draw as i32, Rule::FivefoldRepetition as i32)
        );

        // Fifty moves claimed; seventy-five automatic.
        let id = new_game(&mut games, "8/8/3k4/8/8/3KR3/8/8 w - - 99 80", "").await;
        let s = play(&mut games, &id, &["Rf3"]).await;
        assert_eq!(s.claimable_draw, Rule::FiftyMoves as i32);
        let s = games
            .claim_draw(ClaimDrawRequest {
                game_id: id.clone(),
                side: Color::Black as i32,
                r#move: String::new(),
                request_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(outcome(&s), (R::Draw as i32, Rule::FiftyMoves as i32));
        let id = new_game(&mut games, "8/8/3k4/8/8/3KR3/8/8 w - - 149 80", "").await;
        let s = play(&mut games, &id, &["Rf3"]).await;
        assert_eq!(outcome(&s), (R::Draw as i32, Rule::SeventyFiveMoves as i32));

        // Agreement: offered with a move, accepted by the opponent.
        let id = new_game(&mut games, "", "").await;
        let s = games
            .make_move(MakeMoveRequest {
                game_id: id.clone(),
                r#move: "e4".into(),
                offer_draw: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.draw_offer_from, Color::White as i32);
        // White cannot accept its own offer.
        assert_field_error(
            games
                .respond_to_draw(RespondToDrawRequest {
                    game_id: id.clone(),
                    side: Color::White as i32,
                    accept: true,
                    request_id: String::new(),
                })
                .await,
            Code::FailedPrecondition,
            "side",
        );
        let s = games
            .respond_to_draw(RespondToDrawRequest {
                game_id: id.clone(),
                side: Color::Black as i32,
                accept: true,
                request_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(outcome(&s), (R::Draw as i32, Rule::Agreement as i32));

        // Declined offers block a repeat until the opponent has offered.
        let id = new_game(&mut games, "", "").await;
        games
            .make_move(MakeMoveRequest {
                game_id: id.clone(),
                r#move: "e4".into(),
                offer_draw: true,
                ..Default::default()
            })
            .await
            .unwrap();
        games
            .respond_to_draw(RespondToDrawRequest {
                game_id: id.clone(),
                side: Color::Black as i32,
                accept: false,
                request_id: String::new(),
            })
            .await
            .unwrap();
        play(&mut games, &id, &["e5"]).await;
        let again = games
            .make_move(MakeMoveRequest {
                game_id: id.clone(),
                r#move: "Nf3".into(),
                offer_draw: true,
                ..Default::default()
            })
            .await;
        assert_field_error(again, Code::FailedPrecondition, "offer_draw");
        assert_eq!(
            get(&mut games, &id).await.ply,
            2,
            "the refused call changed nothing"
        );

        // Resignation.
        let id = new_game(&mut games, "", "").await;
        let s = games
            .resign(ResignRequest {
                game_id: id.clone(),
                side: Color::White as i32,
                request_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(outcome(&s), (R::BlackWins as i32, Rule::Resignation as i32));

        // Flag fall, seen by a watcher without any call: white to move with 1.2 s.
        let id = new_game(&mut games, "", "0.02+0").await;
        play(&mut games, &id, &["e4", "e5"]).await;
        let mut watch = games
            .watch_game(WatchGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        let first = watch.next().await.unwrap().unwrap();
        assert_eq!(first.kind, Kind::Snapshot as i32);
        let ended = tokio::time::timeout(Duration::from_secs(10), watch.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(ended.kind, Kind::GameOver as i32);
        assert_eq!(
            outcome(ended.state.as_ref().unwrap()),
            (R::BlackWins as i32, Rule::Timeout as i32)
        );
        assert_eq!(ended.state.unwrap().clock.unwrap().white_ms, 0);

        // Flag fall against a lone king is a draw.
        let id = new_game(&mut games, "4k3/8/8/8/8/8/4p3/K7 b - - 0 1", "0.02+0").await;
        play(&mut games, &id, &["Kd7", "Kb1"]).await;
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let s = get(&mut games, &id).await;
        assert_eq!(
            outcome(&s),
            (R::Draw as i32, Rule::TimeoutVsInsufficientMaterial as i32)
        );
    });
}

#[test]
fn bad_input_leaves_the_game_unchanged() {
    bad_input_leaves_the_game_unchanged_on(Stack::start());
}

/// Also run on the PostgreSQL store.
fn bad_input_leaves_the_game_unchanged_on(stack: Stack) {
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;
        assert_field_error(
            games
                .create_game(CreateGameRequest {
                    start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1".into(),
                    ..Default::default()
                })
                .await,
            Code::InvalidArgument,
            "start_fen",
        );
        assert_field_error(
            games
                .create_game(CreateGameRequest {
                    time_control_text: "five minutes".into(),
                    ..Default::default()
                })
                .await,
            Code::InvalidArgument,
            "time_control_text",
        );
        // No base time: Black would lose on time at once (issue 15).
        let s = assert_field_error(
            games
                .create_game(CreateGameRequest {
                    time_control_text: "0+1".into(),
                    ..Default::default()
                })
                .await,
            Code::InvalidArgument,
            "time_control_text",
        );
        assert!(s.message().contains("no base time"), "{}", s.message());
        let id = new_game(&mut games, "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "5+3").await;
        let before = get(&mut games, &id).await;

        let s = assert_field_error(
            games.make_move(mv(&id, "Nf4", None)).await,
            Code::InvalidArgument,
            "move",
        );
        assert!(s.message().contains("Nf4"), "{}", s.message());
        let s = assert_field_error(
            games.make_move(mv(&id, "Nd2", None)).await,
            Code::InvalidArgument,
            "move",
        );
        assert!(s.message().contains("ambiguous"), "{}", s.message());
        assert_field_error(
            games.make_move(mv(&id, "Zz9", None)).await,
            Code::InvalidArgument,
            "move",
        );
        assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    side: Color::Black as i32,
                    ..mv(&id, "Kd7", None)
                })
                .await,
            Code::FailedPrecondition,
            "side",
        );
        assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    expected_ply: Some(5),
                    ..mv(&id, "Kd1", None)
                })
                .await,
            Code::FailedPrecondition,
            "expected_ply",
        );
        assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    side: 9,
                    ..mv(&id, "Kd1", None)
                })
                .await,
            Code::InvalidArgument,
            "side",
        );
        assert_field_error(
            games
                .get_game(GetGameRequest {
                    game_id: "not-a-uuid".into(),
                })
                .await,
            Code::InvalidArgument,
            "game_id",
        );
        let missing = games
            .get_game(GetGameRequest {
                game_id: "67e55044-10b1-426f-9247-bb680e5fe0c8".into(),
            })
            .await;
        assert_eq!(missing.unwrap_err().code(), Code::NotFound);
        assert_field_error(
            games
                .resign(ResignRequest {
                    game_id: id.clone(),
                    side: 0,
                    request_id: String::new(),
                })
                .await,
            Code::InvalidArgument,
            "side",
        );

        let after = get(&mut games, &id).await;
        assert_eq!(
            (after.ply, after.fen.clone(), after.outcome.clone()),
            (before.ply, before.fen, before.outcome)
        );
        // And the game still plays.
        let s = games
            .make_move(MakeMoveRequest {
                expected_ply: Some(0),
                side: Color::White as i32,
                ..mv(&id, "Nbd2", None)
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.ply, 1);
        assert_eq!(s.moves[0].r#move.as_ref().unwrap().san, "Nbd2");
    });
}

#[test]
fn watchers_see_every_move_and_concurrent_clients_never_fork() {
    watchers_see_every_move_and_concurrent_clients_never_fork_on(Stack::start());
}

/// Also run on the PostgreSQL store.
fn watchers_see_every_move_and_concurrent_clients_never_fork_on(stack: Stack) {
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;
        let id = new_game(&mut games, "", "").await;
        let mut watch = games
            .watch_game(WatchGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            watch.next().await.unwrap().unwrap().kind,
            Kind::Snapshot as i32
        );

        // Eight clients race to play the next move, each naming the ply it expects; per ply
        // exactly one wins and the others fail cleanly.
        let candidates = [
            ["e4", "d4", "c4", "Nf3", "g3", "b3", "f4", "Nc3"],
            ["e5", "d5", "c5", "Nf6", "g6", "b6", "f5", "Nc6"],
        ];
        let mut winners = Vec::new();
        for ply in 0..6u32 {
            let row = &candidates[(ply % 2) as usize];
            let mut tasks = Vec::new();
            for (i, text) in row.iter().enumerate() {
                let mut client = games.clone();
                let req = MakeMoveRequest {
                    expected_ply: Some(ply),
                    ..mv(&id, text, None)
                };
                tasks.push(tokio::spawn(
                    async move { (i, client.make_move(req).await) },
                ));
            }
            let mut won = 0;
            for t in tasks {
                let (_, result) = t.await.unwrap();
                match result {
                    Ok(state) => {
                        let state = state.into_inner();
                        won += 1;
                        assert_eq!(state.ply, ply + 1);
                        winners.push(
                            state
                                .moves
                                .last()
                                .unwrap()
                                .r#move
                                .as_ref()
                                .unwrap()
                                .uci
                                .clone(),
                        );
                    }
                    Err(s) => assert!(
                        matches!(s.code(), Code::FailedPrecondition | Code::InvalidArgument),
                        "{s:?}"
                    ),
                }
            }
            assert_eq!(won, 1, "ply {ply}: exactly one move wins");
        }
        let state = get(&mut games, &id).await;
        let played: Vec<String> = state
            .moves
            .iter()
            .map(|m| m.r#move.as_ref().unwrap().uci.clone())
            .collect();
        assert_eq!(played, winners);

        // The watcher saw the same six moves in order.
        let mut seen = Vec::new();
        while seen.len() < 6 {
            let ev = tokio::time::timeout(Duration::from_secs(5), watch.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if ev.kind == Kind::Move as i32 {
                seen.push(
                    ev.state
                        .unwrap()
                        .moves
                        .last()
                        .unwrap()
                        .r#move
                        .as_ref()
                        .unwrap()
                        .uci
                        .clone(),
                );
            }
        }
        assert_eq!(seen, winners);
    });
}

/// The game suite the redb store passes (every ending, bad input, watchers and racing
/// clients), on PostgreSQL (tests/support/postgres.rs starts one; without PostgreSQL this test
/// skips, with `CI=true` it fails).
#[test]
fn the_game_suite_passes_on_postgres() {
    let Some(mut pg) = Postgres::start("the_game_suite_passes_on_postgres") else {
        return;
    };
    let url = pg.create_database();
    let on_postgres = || Stack::start_with_rules(&["--store", "postgres", "--database-url", &url]);
    games_reach_every_ending_on(on_postgres());
    bad_input_leaves_the_game_unchanged_on(on_postgres());
    watchers_see_every_move_and_concurrent_clients_never_fork_on(on_postgres());
}
