//! Arbiter modes, touch-move, openings and the position report through the gateway: complete
//! games with clocks that end by each penalty for illegal moves, fouls seen by GetGame,
//! WatchGame and the PGN, and the touch-move rule refusing a move.

use chess_integration_tests::games::{Games, ann_v_bob, clients, create, outcome, play};
use chess_integration_tests::{Stack, assert_field_error, runtime};
use chess_proto::v1::game_event::Kind;
use chess_proto::v1::outcome::{Result as R, Rule};
use chess_proto::v1::{
    Color, CreateGameRequest, DescribePositionRequest, GetGameRequest, IllegalMoves,
    MakeMoveRequest, PositionStatusRequest, TouchPieceRequest, WatchGameRequest,
};
use tokio_stream::StreamExt;
use tonic::Code;

/// A game of Ann against Bob at 5+0 from `fen`, with illegal moves handled as `mode` says.
async fn game_in_mode(games: &mut Games, fen: &str, mode: IllegalMoves) -> String {
    let request = CreateGameRequest {
        illegal_moves: mode.into(),
        ..ann_v_bob(fen, "5+0")
    };
    create(games, request).await
}

#[test]
fn fide_mode_two_minutes_then_loss_seen_everywhere() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;
        let id = game_in_mode(&mut games, "", IllegalMoves::Fide).await;
        let mut watch = games
            .watch_game(WatchGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        play(&mut games, &id, &["e4"]).await;
        play(&mut games, &id, &["f6"]).await;
        play(&mut games, &id, &["Bc4"]).await;
        // Black's king steps onto the bishop's diagonal: a foul, the position stays, and
        // white gets two minutes.
        let s = play(&mut games, &id, &["Kf7"]).await;
        assert_eq!(s.ply, 3, "the illegal move is not played");
        assert_eq!(s.fouls.len(), 1);
        let f = &s.fouls[0];
        assert_eq!(f.side, Color::Black as i32);
        assert_eq!(f.attempted, "Kf7");
        assert_eq!(f.reason, "king moved into check (f7 is attacked by Bc4)");
        assert_eq!(f.penalty, "two minutes added to white's clock");
        let clock = s.clock.unwrap();
        assert!(clock.white_ms > 300_000 + 100_000, "{clock:?}");
        assert!(clock.black_ms <= 300_000);
        // GetGame shows it too, and the PGN carries it as a comment.
        let g = games
            .get_game(GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(g.fouls.len(), 1);
        assert_eq!(g.illegal_moves, IllegalMoves::Fide as i32);
        let flat = g.pgn.replace('\n', " ");
        assert!(
            flat.contains("{illegal move 1 by black: Kf7 (king moved into check"),
            "{}",
            g.pgn
        );
        assert!(g.pgn.contains("[IllegalMoves \"fide\"]"), "{}", g.pgn);
        // Garbage is still refused as bad input, not a foul.
        assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    game_id: id.clone(),
                    r#move: "zz9".into(),
                    ..Default::default()
                })
                .await,
            Code::InvalidArgument,
            "move",
        );
        play(&mut games, &id, &["Nh6"]).await;
        play(&mut games, &id, &["Nf3"]).await;
        // A second illegal move (the f8 bishop is blocked by e7) loses.
        let s = play(&mut games, &id, &["Bf8c5"]).await;
        assert_eq!(
            s.fouls[1].reason,
            "the bishop's path from f8 to c5 is blocked by Pe7"
        );
        assert_eq!(
            outcome(&s),
            (R::WhiteWins as i32, Rule::IllegalMoves as i32)
        );
        assert_eq!(s.fouls[1].count, 2);
        assert!(
            s.pgn.contains("[Termination \"rules infraction\"]"),
            "{}",
            s.pgn
        );
        assert!(s.pgn.ends_with("1-0\n") || s.pgn.trim_end().ends_with("1-0"));

        // The watcher saw the moves, both fouls and the end.
        let mut kinds = Vec::new();
        while let Some(ev) = watch.next().await {
            let ev = ev.unwrap();
            kinds.push(Kind::try_from(ev.kind).unwrap());
            if ev.kind == Kind::GameOver as i32 {
                break;
            }
        }
        assert_eq!(
            kinds.iter().filter(|k| **k == Kind::Foul).count(),
            2,
            "{kinds:?}"
        );
        assert_eq!(kinds.last(), Some(&Kind::GameOver));
    });
}

#[test]
fn three_strikes_and_the_insufficient_material_draw() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;
        // Three strikes counts the king moved onto an attacked square (送王): the third loses.
        let id = game_in_mode(
            &mut games,
            "4k3/8/8/8/8/8/r6P/R3K3 w - - 0 1",
            IllegalMoves::ThreeStrikes,
        )
        .await;
        let s = play(&mut games, &id, &["Ke2"]).await;
        assert_eq!(s.fouls[0].penalty, "strike 1 of 3");
        assert_eq!(
            s.fouls[0].reason,
            "king moved into check (e2 is attacked by Ra2)"
        );
        // Other illegal moves are refused, as without an arbiter, and count for nothing.
        for slip in ["h2h5", "e1e3", "a1a5", "Rb1xb8"] {
            let e = games
                .make_move(MakeMoveRequest {
                    game_id: id.clone(),
                    r#move: slip.into(),
                    ..Default::default()
                })
                .await
                .expect_err(slip);
            assert_eq!(e.code(), Code::InvalidArgument, "{slip}: {e:?}");
        }
        let s = play(&mut games, &id, &["Kf1"]).await;
        assert_eq!(s.fouls.len(), 1, "pawn and rook slips are no strikes");
        play(&mut games, &id, &["Ke7"]).await;
        let s = play(&mut games, &id, &["Kf2"]).await;
        assert_eq!(s.fouls[1].penalty, "strike 2 of 3");
        // No time is given under three strikes.
        assert!(s.clock.unwrap().black_ms <= 300_000);
        play(&mut games, &id, &["Kg1"]).await;
        play(&mut games, &id, &["Ke8"]).await;
        let s = play(&mut games, &id, &["Kg2"]).await;
        assert_eq!(
            outcome(&s),
            (R::BlackWins as i32, Rule::IllegalMoves as i32)
        );
        assert_eq!(s.fouls.len(), 3);

        // FIDE mode, black's second foul, white has a bare king: a draw.
        let id = game_in_mode(
            &mut games,
            "4k3/8/8/8/8/8/4p3/K7 b - - 0 1",
            IllegalMoves::Fide,
        )
        .await;
        play(&mut games, &id, &["e8e6"]).await;
        let s = play(&mut games, &id, &["e2e4"]).await;
        assert_eq!(
            outcome(&s),
            (
                R::Draw as i32,
                Rule::IllegalMovesVsInsufficientMaterial as i32
            )
        );

        // A reject-mode game refuses illegal moves as before.
        let id = game_in_mode(&mut games, "", IllegalMoves::Reject).await;
        assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    game_id: id.clone(),
                    r#move: "e1e2".into(),
                    ..Default::default()
                })
                .await,
            Code::InvalidArgument,
            "move",
        );
    });
}

#[test]
fn touch_move_and_knowledge_through_the_gateway() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (mut rules, mut games) = clients(&stack).await;
        let id = game_in_mode(&mut games, "", IllegalMoves::Reject).await;
        let s = games
            .touch_piece(TouchPieceRequest {
                game_id: id.clone(),
                side: Color::White.into(),
                square: "g1".into(),
                adjust: false,
                request_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.touches[0].piece, "Ng1");
        let refused = assert_field_error(
            games
                .make_move(MakeMoveRequest {
                    game_id: id.clone(),
                    r#move: "e4".into(),
                    ..Default::default()
                })
                .await,
            Code::FailedPrecondition,
            "move",
        );
        assert!(refused.message().contains("touch-move"), "{refused:?}");
        let s = play(&mut games, &id, &["Nf3"]).await;
        assert!(s.touches.is_empty());
        // J'adoube binds nothing; touching out of turn or an empty square is refused.
        games
            .touch_piece(TouchPieceRequest {
                game_id: id.clone(),
                side: Color::Black.into(),
                square: "b8".into(),
                adjust: true,
                request_id: String::new(),
            })
            .await
            .unwrap();
        assert_field_error(
            games
                .touch_piece(TouchPieceRequest {
                    game_id: id.clone(),
                    side: Color::Black.into(),
                    square: "e5".into(),
                    adjust: false,
                    request_id: String::new(),
                })
                .await,
            Code::InvalidArgument,
            "square",
        );
        assert_field_error(
            games
                .touch_piece(TouchPieceRequest {
                    game_id: id.clone(),
                    side: Color::Black.into(),
                    square: "k9".into(),
                    adjust: false,
                    request_id: String::new(),
                })
                .await,
            Code::InvalidArgument,
            "square",
        );
        let s = play(&mut games, &id, &["c5"]).await;
        let o = s.opening.unwrap();
        assert_eq!(
            (o.eco.as_str(), o.name.as_str(), o.class.as_str()),
            ("A04", "Zukertort Opening: Sicilian Invitation", "closed")
        );
        assert!(s.pgn.contains("[ECO \"A04\"]"), "{}", s.pgn);

        // PositionStatus and DescribePosition.
        let st = rules
            .position_status(PositionStatusRequest {
                fen: String::new(),
                moves: vec!["e4".into(), "c5".into()],
            })
            .await
            .unwrap()
            .into_inner();
        let o = st.opening.unwrap();
        assert_eq!(
            (o.eco.as_str(), o.name.as_str(), o.class.as_str()),
            ("B20", "Sicilian Defense", "semi-open")
        );
        let r = rules
            .describe_position(DescribePositionRequest {
                fen: "4k3/p4p1p/8/4P3/2P2P2/2P5/P7/4K3 w - - 0 1".into(),
                moves: vec![],
            })
            .await
            .unwrap()
            .into_inner();
        let w = r.white_pawns.unwrap();
        assert_eq!(w.doubled, ["c3", "c4"]);
        assert_eq!(w.isolated, ["a2", "c3", "c4"]);
        assert_eq!(w.passed, ["c3", "c4"]);
        assert_eq!(r.endgame, "pawn_endgame");
        assert!(r.items.iter().any(|i| i.zh == "白方叠兵：c3 c4"));
        assert_field_error(
            rules
                .describe_position(DescribePositionRequest {
                    fen: "not a fen".into(),
                    moves: vec![],
                })
                .await,
            Code::InvalidArgument,
            "fen",
        );
    });
}
