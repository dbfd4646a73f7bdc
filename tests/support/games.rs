//! Games through a GameService client: the requests the tests send, and what they read from
//! the answers.

use chess_proto::v1::game_event::Kind;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use chess_proto::v1::{
    CreateGameRequest, GameEvent, GameState, GetGameRequest, MakeMoveRequest, WatchGameRequest,
};
use chess_rules::Position;
use tokio_stream::StreamExt;
use tonic::Streaming;
use tonic::transport::Channel;

use crate::{Service, Stack};

/// A GameService client.
pub type Games = GameServiceClient<Channel>;

/// A GameService client of `service` (a gateway or a rules service).
pub async fn client(service: &Service) -> Games {
    GameServiceClient::new(service.channel().await)
}

/// RulesService and GameService clients of the stack's gateway, on one channel.
pub async fn clients(stack: &Stack) -> (RulesServiceClient<Channel>, Games) {
    let ch = stack.gateway.channel().await;
    (
        RulesServiceClient::new(ch.clone()),
        GameServiceClient::new(ch),
    )
}

/// A CreateGame request for Ann (White) against Bob (Black) from `fen` (`""`: the start) with
/// time control `tc` (`""`: none).
pub fn ann_v_bob(fen: &str, tc: &str) -> CreateGameRequest {
    CreateGameRequest {
        start_fen: fen.into(),
        time_control_text: tc.into(),
        white: "Ann".into(),
        black: "Bob".into(),
        ..Default::default()
    }
}

/// Creates the game `request` asks for; its id.
pub async fn create(games: &mut Games, request: CreateGameRequest) -> String {
    games
        .create_game(request)
        .await
        .unwrap()
        .into_inner()
        .game_id
}

/// Creates [`ann_v_bob`]`(fen, tc)`; its id.
pub async fn new_game(games: &mut Games, fen: &str, tc: &str) -> String {
    create(games, ann_v_bob(fen, tc)).await
}

/// Creates the game `request` asks for and plays `moves` in it, each with its expected ply;
/// its id.
pub async fn game_after(games: &mut Games, request: CreateGameRequest, moves: &[&str]) -> String {
    let id = create(games, request).await;
    for (ply, m) in moves.iter().enumerate() {
        games
            .make_move(mv(&id, m, Some(u32::try_from(ply).unwrap())))
            .await
            .unwrap_or_else(|e| panic!("{m}: {e:?}"));
    }
    id
}

/// A MakeMove request: `text` in game `id`, with the expected ply when given.
pub fn mv(id: &str, text: &str, ply: Option<u32>) -> MakeMoveRequest {
    MakeMoveRequest {
        game_id: id.into(),
        r#move: text.into(),
        expected_ply: ply,
        ..Default::default()
    }
}

/// Plays `moves` in game `id` (no expected ply), panicking on the first refused; the game
/// after the last.
pub async fn play(games: &mut Games, id: &str, moves: &[&str]) -> GameState {
    let mut last = None;
    for m in moves {
        last = Some(
            games
                .make_move(mv(id, m, None))
                .await
                .unwrap_or_else(|e| panic!("{m}: {e:?}"))
                .into_inner(),
        );
    }
    last.unwrap_or_else(|| panic!("no moves"))
}

pub async fn get(games: &mut Games, id: &str) -> GameState {
    games
        .get_game(GetGameRequest { game_id: id.into() })
        .await
        .unwrap()
        .into_inner()
}

/// Watches game `id`, past its first event (checked to be the snapshot).
pub async fn watch(games: &mut Games, id: &str) -> Streaming<GameEvent> {
    let mut w = games
        .watch_game(WatchGameRequest { game_id: id.into() })
        .await
        .unwrap()
        .into_inner();
    let first = w.next().await.unwrap().unwrap();
    assert_eq!(first.kind, Kind::Snapshot as i32);
    w
}

/// The game's moves in UCI.
pub fn ucis(state: &GameState) -> Vec<String> {
    state
        .moves
        .iter()
        .map(|m| m.r#move.as_ref().unwrap().uci.clone())
        .collect()
}

/// The finished game's (result, rule).
pub fn outcome(state: &GameState) -> (i32, i32) {
    let o = state.outcome.as_ref().expect("game over");
    (o.result, o.rule)
}

/// Two different legal moves in `fen`, chosen by `r` (a game that can no longer offer two is
/// replaced by the caller).
pub fn two_moves(fen: &str, r: usize) -> Option<(String, String)> {
    let pos = Position::from_fen(fen).unwrap();
    let list = pos.legal_moves();
    let n = list.len();
    if n < 2 {
        return None;
    }
    let a = list.as_slice()[r % n];
    let b = list.as_slice()[(r + 1 + r / n) % n];
    let b = if a == b {
        list.as_slice()[(r + 1) % n]
    } else {
        b
    };
    Some((a.to_string(), b.to_string()))
}
