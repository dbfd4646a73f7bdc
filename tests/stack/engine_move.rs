//! chess.v1.GatewayService/EngineMove on the real stack: the gateway reads the game from the
//! rules service, asks the search service for a move at a strength and, with `play`, makes it.

use chess_integration_tests::games::game_after;
use chess_integration_tests::{Stack, assert_field_error, runtime};
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::{
    CreateGameRequest, EngineMoveRequest, EngineMoveResponse, GetGameRequest, LegalMovesRequest,
    SearchLimits, Strength,
};
use tonic::Code;
use tonic::transport::Channel;

fn engine(game_id: &str, elo: u32, play: bool) -> EngineMoveRequest {
    EngineMoveRequest {
        game_id: game_id.to_owned(),
        strength: Some(Strength {
            elo,
            seed: 7,
            ..Strength::default()
        }),
        limits: Some(SearchLimits {
            depth: 4,
            ..SearchLimits::default()
        }),
        play,
    }
}

/// The engine's move, checked to be one of the legal moves after `moves`.
async fn legal_engine_move(
    rules: &mut RulesServiceClient<Channel>,
    moves: &[&str],
    answer: &EngineMoveResponse,
) -> String {
    let uci = answer
        .engine
        .as_ref()
        .and_then(|e| e.best_move.as_ref())
        .map(|m| m.uci.clone())
        .expect("a move");
    let legal = rules
        .legal_moves(LegalMovesRequest {
            fen: String::new(),
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        legal.moves.iter().any(|m| m.uci == uci),
        "{uci} is not legal after {moves:?}"
    );
    uci
}

#[test]
fn engine_move_suggests_and_plays_a_legal_move() {
    let stack = Stack::start();
    runtime().block_on(async {
        let channel = stack.gateway.channel().await;
        let mut games = GameServiceClient::new(channel.clone());
        let mut rules = RulesServiceClient::new(channel.clone());
        let mut gateway = GatewayServiceClient::new(channel);
        let id = game_after(&mut games, CreateGameRequest::default(), &["e4"]).await;

        // Suggested only: the game stays as it was.
        let suggested = gateway
            .engine_move(engine(&id, 1500, false))
            .await
            .unwrap()
            .into_inner();
        legal_engine_move(&mut rules, &["e4"], &suggested).await;
        assert_eq!(suggested.engine.as_ref().unwrap().elo, 1500);
        assert_eq!(suggested.game.as_ref().unwrap().ply, 1);
        let now = games
            .get_game(GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(now.ply, 1);

        // Played: the game advances one ply by the engine's (legal) move.
        let played = gateway
            .engine_move(engine(&id, 0, true))
            .await
            .unwrap()
            .into_inner();
        let uci = legal_engine_move(&mut rules, &["e4"], &played).await;
        let game = played.game.unwrap();
        assert_eq!(game.ply, 2);
        assert_eq!(game.moves.last().unwrap().r#move.as_ref().unwrap().uci, uci);
        let stored = games
            .get_game(GetGameRequest { game_id: id })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(stored.ply, 2, "the move is in the stored game");
    });
}

#[test]
fn engine_move_refusals() {
    let stack = Stack::start();
    runtime().block_on(async {
        let channel = stack.gateway.channel().await;
        let mut games = GameServiceClient::new(channel.clone());
        let mut gateway = GatewayServiceClient::new(channel);

        // A finished game (fool's mate): no move to make.
        let over = game_after(
            &mut games,
            CreateGameRequest::default(),
            &["f3", "e5", "g4", "Qh4#"],
        )
        .await;
        let status = gateway
            .engine_move(engine(&over, 0, true))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
        assert!(status.message().contains("over"), "{status:?}");

        let unknown = "0b7d3f0a-4a4e-4c8e-9a51-7f4f3b0e2c11";
        let status = gateway
            .engine_move(engine(unknown, 0, false))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::NotFound, "{status:?}");

        assert_field_error(
            gateway.engine_move(engine("not-a-game", 0, false)).await,
            Code::InvalidArgument,
            "game_id",
        );

        // The search service's check of the level comes through; nothing is played.
        let id = game_after(&mut games, CreateGameRequest::default(), &[]).await;
        for elo in [500, 3001] {
            assert_field_error(
                gateway.engine_move(engine(&id, elo, true)).await,
                Code::InvalidArgument,
                "strength.elo",
            );
        }
        let game = games
            .get_game(GetGameRequest { game_id: id })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(game.ply, 0);
    });
}
