//! GatewayService.EngineMove against the fake backends: the game read from the rules service,
//! the move asked of a search replica, and (with `play`) made in the game.

mod common;

use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::*;
use common::*;
use tonic::Code;

async fn start() -> (FakeBackend, FakeBackend, Gateway) {
    let rules = start_rules().await;
    let search = start_search("s1").await;
    let search_addr = format!("http://{}", search.addr);
    let gateway = Gateway::start(rules.addr, &["--search-addr", &search_addr]).await;
    (rules, search, gateway)
}

fn request(game_id: &str, elo: u32, play: bool) -> EngineMoveRequest {
    EngineMoveRequest {
        game_id: game_id.to_owned(),
        strength: Some(Strength {
            elo,
            ..Default::default()
        }),
        limits: Some(SearchLimits {
            depth: 3,
            ..Default::default()
        }),
        play,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_move_suggests_or_plays_the_search_services_move() {
    let (rules, search, gateway) = start().await;
    let mut info = GatewayServiceClient::new(gateway.channel().await);

    let suggested = info
        .engine_move(request(GAME_IN_PROGRESS, 1500, false))
        .await
        .unwrap()
        .into_inner();
    let engine = suggested.engine.unwrap();
    assert_eq!(engine.best_move.unwrap().uci, "g1f3");
    assert_eq!(engine.elo, 1500);
    assert_eq!(suggested.game.unwrap().ply, 2, "the game as it stands");
    assert_eq!(
        search.recorder.events(),
        [
            "best_move fen=rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 \
          moves=e2e4,e7e5 elo=1500"
        ]
    );
    assert_eq!(
        rules.recorder.events(),
        [format!("get_game {GAME_IN_PROGRESS}")]
    );

    let played = info
        .engine_move(request(GAME_IN_PROGRESS, 0, true))
        .await
        .unwrap()
        .into_inner();
    let game = played.game.unwrap();
    assert_eq!(game.ply, 3);
    assert_eq!(
        game.moves.last().unwrap().r#move.as_ref().unwrap().uci,
        "g1f3"
    );
    // The move went to the rules service as the side to move, at the ply the engine saw.
    assert_eq!(
        rules.recorder.events().last().unwrap(),
        &format!(
            "make_move g1f3 side={} expected_ply=Some(2)",
            Color::White as i32
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_move_refusals() {
    let (rules, search, gateway) = start().await;
    let mut info = GatewayServiceClient::new(gateway.channel().await);

    let status = info
        .engine_move(request(GAME_OVER, 0, true))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains("is over") && status.message().contains("white resigned"),
        "{status:?}"
    );

    let unknown = "11111111-2222-4333-8444-555555555555";
    let status = info
        .engine_move(request(unknown, 0, false))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    for bad in ["", "g1", "67e55044-10b1-426f-9247-bb680e5fe0cz"] {
        let status = info.engine_move(request(bad, 0, false)).await.unwrap_err();
        let (field, description) = violation(&status);
        assert_eq!(field, "game_id");
        assert!(description.contains("not a game id"), "{description}");
    }
    assert!(
        !rules.recorder.events().iter().any(|e| e.contains("g1")),
        "a malformed id never reaches the rules service"
    );
    assert!(search.recorder.events().is_empty());

    // The search service's own validation comes through unchanged; nothing is played.
    let status = info
        .engine_move(request(GAME_IN_PROGRESS, 5000, true))
        .await
        .unwrap_err();
    let (field, _) = violation(&status);
    assert_eq!(field, "strength.elo");
    assert!(
        !rules
            .recorder
            .events()
            .iter()
            .any(|e| e.starts_with("make_move")),
        "{:?}",
        rules.recorder.events()
    );
}
