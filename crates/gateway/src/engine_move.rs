//! EngineMove, the one call the gateway composes itself: the game from the rules service, the
//! engine's move for it from the search service and, with `play`, that move made in the game;
//! all within the caller's deadline.

use chess_proto::FieldViolation;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::{
    BestMoveRequest, EngineMoveRequest, EngineMoveResponse, GetGameRequest, MakeMoveRequest,
};
use tonic::Status;

use crate::replicas::SearchPool;
use crate::upstream::{Backend, Call, client, forward};

/// Where EngineMove's three calls go: the rules service, the search replicas, and whether
/// requests to them are gzipped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backends<'a> {
    pub rules: &'a Backend,
    pub search: &'a SearchPool,
    pub gzip: bool,
}

/// Runs one admitted EngineMove call.
pub(crate) async fn engine_move(
    to: Backends<'_>,
    call: &Call,
    message: EngineMoveRequest,
) -> Result<EngineMoveResponse, Status> {
    let game_id = check_game_id(&message.game_id)?.to_owned();
    let client = client!(GameServiceClient, to.rules, to.gzip);
    let get = GetGameRequest {
        game_id: game_id.clone(),
    };
    let game = forward(to.rules, client, call, get, |mut c, r| async move {
        c.get_game(r).await
    })
    .await?
    .into_inner();
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
    let (_, engine) = to
        .search
        .call(call, search, to.gzip, |mut c, r| async move {
            c.best_move(r).await
        })
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
    };
    let client = client!(GameServiceClient, to.rules, to.gzip);
    let after = forward(to.rules, client, call, play, |mut c, r| async move {
        c.make_move(r).await
    })
    .await?
    .into_inner();
    Ok(EngineMoveResponse {
        engine: Some(engine),
        game: Some(after),
    })
}

/// Checks that `text` has the shape of a game id (a UUID, hyphenated or as 32 hex digits) so
/// a mistyped id fails here with the field named rather than after a trip to the rules service.
fn check_game_id(text: &str) -> Result<&str, Status> {
    let id = text.trim();
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
    let groups: Vec<&str> = id.split('-').collect();
    let shaped = match groups.as_slice() {
        [simple] => simple.len() == 32 && hex(simple),
        [a, b, c, d, e] => {
            [a.len(), b.len(), c.len(), d.len(), e.len()] == [8, 4, 4, 4, 12]
                && groups.iter().all(|g| hex(g))
        }
        _ => false,
    };
    if shaped {
        Ok(id)
    } else {
        Err(FieldViolation::new(
            "game_id",
            format!("{text:?} is not a game id (a UUID like 67e55044-10b1-426f-9247-bb680e5fe0c8)"),
        )
        .into())
    }
}
