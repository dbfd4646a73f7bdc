//! EngineMove, the one call the gateway composes itself: the game from the rules service, the
//! engine's move for it from the search service and, with `play`, that move made in the game;
//! all within the caller's deadline.

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::{
    BestMoveRequest, EngineMoveRequest, EngineMoveResponse, GetGameRequest, MakeMoveRequest,
};
use tonic::Status;

use crate::make_move::make_move;
use crate::replicas::{ReplicaPool, Retry};
use crate::upstream::{Call, client, gzip_request};

/// Where EngineMove's three calls go: the rules replicas, the search replicas, and whether
/// requests to them are gzipped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backends<'a> {
    pub rules: &'a ReplicaPool,
    pub search: &'a ReplicaPool,
    pub gzip: bool,
}

/// Runs one admitted EngineMove call.
pub(crate) async fn engine_move(
    to: Backends<'_>,
    call: &Call,
    message: EngineMoveRequest,
) -> Result<EngineMoveResponse, Status> {
    let game_id = chess_proto::game_id_from_text("game_id", &message.game_id)?;
    let gzip = to.gzip;
    let get = GetGameRequest {
        game_id: game_id.clone(),
    };
    let get_gzip = gzip_request(gzip, &get);
    let (_, game) = to
        .rules
        .call(
            call,
            get,
            Retry::Safe,
            |b| client!(GameServiceClient, b, get_gzip),
            |mut c, r| async move { c.get_game(r).await },
        )
        .await?;
    let game = game.into_inner();
    if let Some(outcome) = &game.outcome {
        let how = if outcome.description.is_empty() {
            &outcome.pgn_result
        } else {
            &outcome.description
        };
        return Err(Status::failed_precondition(format!(
            "game {game_id} is over ({how}): there is no move to make"
        )));
    }
    let search = BestMoveRequest {
        fen: game.start_fen.clone(),
        moves: game
            .moves
            .iter()
            .map(|played| {
                played
                    .r#move
                    .as_ref()
                    .map(|m| m.uci.clone())
                    .unwrap_or_default()
            })
            .collect(),
        strength: message.strength,
        limits: message.limits,
    };
    let search_gzip = gzip_request(gzip, &search);
    let (_, engine) = to
        .search
        .call(
            call,
            search,
            Retry::Safe,
            |b| client!(AnalysisServiceClient, b, search_gzip),
            |mut c, r| async move { c.best_move(r).await },
        )
        .await?;
    let engine = engine.into_inner();
    if !message.play {
        return Ok(EngineMoveResponse {
            engine: Some(engine),
            game: Some(game),
        });
    }
    let uci = engine
        .best_move
        .as_ref()
        .map(|m| m.uci.clone())
        .filter(|uci| !uci.is_empty())
        .ok_or_else(|| Status::internal("the search service answered BestMove without a move"))?;
    let play = MakeMoveRequest {
        game_id,
        r#move: uci,
        side: game.turn,
        expected_ply: Some(game.ply),
        offer_draw: false,
        // make_move gives it a key: safe on a second replica.
        request_id: String::new(),
    };
    let after = make_move(to.rules, gzip, call, play).await?.into_inner();
    Ok(EngineMoveResponse {
        engine: Some(engine),
        game: Some(after),
    })
}
