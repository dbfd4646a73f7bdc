//! Takebacks in casual games through the gateway: granted for the asking side's last move
//! (and the reply), recorded (state, PGN, watchers), safe to retry, refused with a reason
//! in other games.

use chess_integration_tests::games::{clients, mv};
use chess_integration_tests::{Stack, assert_field_error, runtime};
use chess_proto::v1::game_event::Kind;
use chess_proto::v1::{
    Color, CreateGameRequest, GetGameRequest, TakeBackRequest, WatchGameRequest,
};
use tokio_stream::StreamExt;
use tonic::Code;

fn take_back(id: &str, side: Color, key: &str) -> TakeBackRequest {
    TakeBackRequest {
        game_id: id.into(),
        side: side.into(),
        expected_ply: None,
        request_id: key.into(),
    }
}

#[test]
fn takebacks_in_casual_games() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (_, mut games) = clients(&stack).await;
        let created = games
            .create_game(CreateGameRequest {
                time_control_text: "5+3".into(),
                takebacks: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(created.takebacks);
        let id = created.game_id;
        let mut watch = games
            .watch_game(WatchGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        let first = watch.next().await.unwrap().unwrap();
        assert_eq!(first.kind, Kind::Snapshot as i32);
        for m in ["e4", "e5", "Nf3"] {
            games.make_move(mv(&id, m, None)).await.unwrap();
        }
        // Black, to move, takes back its e5 and white's reply Nf3.
        let s = games
            .take_back(take_back(&id, Color::Black, "tb-1"))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.ply, 1);
        assert_eq!(s.turn, Color::Black as i32);
        assert_eq!(s.moves.len(), 1);
        assert_eq!(s.taken_back.len(), 1);
        assert_eq!(s.taken_back[0].side, Color::Black as i32);
        assert_eq!((s.taken_back[0].plies, s.taken_back[0].ply), (2, 1));
        assert_eq!(
            s.fen,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        assert!(
            s.pgn
                .contains("{black took back its move and the reply (2 plies)}"),
            "{}",
            s.pgn
        );
        assert!(!s.pgn.contains("Nf3"), "{}", s.pgn);
        // The same call sent again (a retry) takes nothing more back.
        let again = games
            .take_back(take_back(&id, Color::Black, "tb-1"))
            .await
            .unwrap()
            .into_inner();
        assert_eq!((again.ply, again.taken_back.len()), (1, 1));
        // Watchers see the moves and then the takeback, with the state after it.
        let mut kinds = Vec::new();
        while kinds.last() != Some(&(Kind::TakeBack as i32)) {
            let ev = watch.next().await.unwrap().unwrap();
            kinds.push(ev.kind);
            if ev.kind == Kind::TakeBack as i32 {
                assert_eq!(ev.state.unwrap().ply, 1);
            }
        }
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        // A stale view is refused: black answered meanwhile, white's takeback at ply 1 would
        // take black's reply back unseen.
        games.make_move(mv(&id, "c5", None)).await.unwrap();
        let stale = TakeBackRequest {
            expected_ply: Some(1),
            ..take_back(&id, Color::White, "")
        };
        assert_field_error(
            games.take_back(stale).await,
            Code::FailedPrecondition,
            "expected_ply",
        );
        // Black has c5 to take back (white has not answered): one ply.
        let s = games
            .take_back(take_back(&id, Color::Black, ""))
            .await
            .unwrap()
            .into_inner();
        assert_eq!((s.ply, s.taken_back[1].plies), (1, 1));
        // White takes back e4: the start position, clocks stopped as before the first move.
        let s = games
            .take_back(TakeBackRequest {
                expected_ply: Some(1),
                ..take_back(&id, Color::White, "")
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.ply, 0);
        assert_eq!(s.clock.unwrap().running, Color::Unspecified as i32);
        // Nothing left to take back.
        assert_field_error(
            games.take_back(take_back(&id, Color::White, "")).await,
            Code::FailedPrecondition,
            "side",
        );
        let s = games
            .get_game(GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.taken_back.len(), 3);

        // A game created without takebacks (the default) refuses them, unchanged.
        let rated = games
            .create_game(CreateGameRequest::default())
            .await
            .unwrap()
            .into_inner()
            .game_id;
        games.make_move(mv(&rated, "d4", None)).await.unwrap();
        let refused = assert_field_error(
            games.take_back(take_back(&rated, Color::White, "")).await,
            Code::FailedPrecondition,
            "game_id",
        );
        assert!(
            refused.message().contains("without takebacks"),
            "{refused:?}"
        );
        // Bad input: no side, a bad id.
        assert_field_error(
            games
                .take_back(take_back(&rated, Color::Unspecified, ""))
                .await,
            Code::InvalidArgument,
            "side",
        );
        assert_field_error(
            games
                .take_back(take_back("not-an-id", Color::White, ""))
                .await,
            Code::InvalidArgument,
            "game_id",
        );
        let s = games
            .get_game(GetGameRequest { game_id: rated })
            .await
            .unwrap()
            .into_inner();
        assert_eq!((s.ply, s.taken_back.len()), (1, 0));
    });
}
