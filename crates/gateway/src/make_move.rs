//! MakeMove over the rules replicas. Every MakeMove carries an idempotency key (the caller's,
//! or one the gateway gives it), so it is safe to send twice: a replica that finds the key's
//! event in the game answers the game without making a second one (a foul, which does not
//! advance the ply, included). So when a replica fails mid-call the move goes to another
//! replica. A replica that predates keys answers a copy of a move already made with
//! FAILED_PRECONDITION (its ply check): then the game is read back, and if it holds exactly
//! this move at `expected_ply` the caller gets the game as a success, not an error for a move
//! that was made.

use std::sync::Arc;

use bytes::Bytes;
use chess_proto::ensure_request_id;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::{GameState, GetGameRequest, MakeMoveRequest, PlayedMove};
use chess_service_kit::GZIP_MIN_BYTES;
use prost::Message;
use tonic::{Code, Response, Status};

use crate::passthrough::{MAKE_MOVE, RawClient};
use crate::replicas::{Refused, Replica, ReplicaPool, Retry};
use crate::upstream::{Call, Compression, UpstreamChannel, client, forward, gzip_request};

/// Sends one admitted MakeMove to the rules replicas.
pub(crate) async fn make_move(
    rules: &ReplicaPool,
    gzip: bool,
    call: &Call,
    mut message: MakeMoveRequest,
) -> Result<Response<GameState>, Status> {
    ensure_request_id(&mut message.request_id);
    let retry = Retry::Safe;
    let gzip = gzip_request(gzip, &message);
    let client = |b: &UpstreamChannel| client!(GameServiceClient, b, gzip);
    let send = |mut c: GameServiceClient<_>, r| async move { c.make_move(r).await };
    match rules
        .call_reporting(call, message.clone(), retry, client, send)
        .await
    {
        Ok((_, response)) => Ok(response),
        Err(Refused {
            status,
            by: Some(replica),
            after_maybe_received: true,
        }) if status.code() == Code::FailedPrecondition => {
            settle(&replica, gzip, call, &message, status).await
        }
        Err(refused) => Err(refused.status),
    }
}

/// [`make_move`] for a request passed through ([`crate::passthrough`]): `message`, which already
/// has its idempotency key, goes to the replicas as `bytes` (its encoding), and the answer comes
/// back as the replica's bytes. Only a retried move that failed its precondition is settled as
/// [`make_move`] settles it, with the game decoded.
pub(crate) async fn make_move_forwarded(
    rules: &ReplicaPool,
    gzip: bool,
    call: &Call,
    message: MakeMoveRequest,
    bytes: Bytes,
) -> Result<Response<Bytes>, Status> {
    let raw = Compression {
        accept: gzip,
        send: gzip && bytes.len() >= GZIP_MIN_BYTES,
    };
    let client = |b: &UpstreamChannel| client!(RawClient, b, raw);
    let send = |mut c: RawClient, r| async move { c.unary(&MAKE_MOVE, r).await };
    match rules
        .call_reporting(call, bytes, Retry::Safe, client, send)
        .await
    {
        Ok((_, response)) => Ok(response),
        Err(Refused {
            status,
            by: Some(replica),
            after_maybe_received: true,
        }) if status.code() == Code::FailedPrecondition => {
            let gzip = gzip_request(gzip, &message);
            let game = settle(&replica, gzip, call, &message, status).await?;
            let (metadata, game, extensions) = game.into_parts();
            Ok(Response::from_parts(
                metadata,
                Bytes::from(game.encode_to_vec()),
                extensions,
            ))
        }
        Err(refused) => Err(refused.status),
    }
}

/// The retry of a move that may already have been applied failed its precondition: the game
/// as it stands when it holds this very move at `expected_ply`, else `refused` (saying so).
async fn settle(
    replica: &Arc<Replica>,
    gzip: Compression,
    call: &Call,
    message: &MakeMoveRequest,
    refused: Status,
) -> Result<Response<GameState>, Status> {
    let backend = &replica.backend;
    let get = GetGameRequest {
        game_id: message.game_id.clone(),
    };
    let game = forward(
        backend,
        client!(GameServiceClient, backend, gzip),
        call,
        get,
        |mut c, r| async move { c.get_game(r).await },
    )
    .await;
    let Ok(game) = game else {
        return Err(refused);
    };
    if is_applied(message, game.get_ref()) {
        tracing::info!(game = %message.game_id, "a retried MakeMove found its move already made by the replica that failed");
        return Ok(game);
    }
    Err(Status::with_details_and_metadata(
        refused.code(),
        format!(
            "{} (this MakeMove was sent again after a rules replica failed mid-call; the move \
             is not in the game as the last move of ply {})",
            refused.message(),
            message.expected_ply.unwrap_or_default() + 1
        ),
        refused.details().to_vec().into(),
        refused.metadata().clone(),
    ))
}

/// Whether `game` ends with `message`'s move, played at its `expected_ply`.
fn is_applied(message: &MakeMoveRequest, game: &GameState) -> bool {
    let Some(ply) = message.expected_ply else {
        return false;
    };
    let ply = ply as usize;
    game.moves.len() == ply + 1
        && game.moves.get(ply).is_some_and(|played| {
            same_move(&message.r#move, played) && played.draw_offered == message.offer_draw
        })
}

/// Whether the move text names `played` (in UCI, SAN or coordinate notation; check marks and
/// annotation symbols aside).
fn same_move(text: &str, played: &PlayedMove) -> bool {
    let Some(m) = &played.r#move else {
        return false;
    };
    let bare = |s: &str| s.trim().trim_end_matches(['+', '#', '!', '?']).to_owned();
    let text = bare(text);
    !text.is_empty()
        && [&m.uci, &m.san, &m.coordinate]
            .into_iter()
            .any(|known| bare(known) == text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_proto::v1::Move;

    fn game(moves: &[(&str, &str)]) -> GameState {
        GameState {
            moves: moves
                .iter()
                .map(|(uci, san)| PlayedMove {
                    r#move: Some(Move {
                        uci: (*uci).to_owned(),
                        san: (*san).to_owned(),
                        coordinate: String::new(),
                    }),
                    ..PlayedMove::default()
                })
                .collect(),
            ..GameState::default()
        }
    }

    fn request(text: &str, ply: Option<u32>) -> MakeMoveRequest {
        MakeMoveRequest {
            game_id: "g".into(),
            r#move: text.into(),
            expected_ply: ply,
            ..MakeMoveRequest::default()
        }
    }

    #[test]
    fn a_move_counts_as_applied_only_as_the_last_move_of_its_ply() {
        let g = game(&[("e2e4", "e4"), ("d7d5", "d5"), ("e4d5", "exd5")]);
        assert!(is_applied(&request("e4d5", Some(2)), &g));
        assert!(is_applied(&request("exd5", Some(2)), &g));
        assert!(is_applied(&request(" exd5+ ", Some(2)), &g));
        // Another move, another ply, no ply at all, or a game that went on: not applied.
        assert!(!is_applied(&request("e4e5", Some(2)), &g));
        assert!(!is_applied(&request("d7d5", Some(1)), &g));
        assert!(!is_applied(&request("e4d5", None), &g));
        assert!(!is_applied(&request("", Some(2)), &g));
        assert!(!is_applied(&request("e2e4", Some(0)), &g));
        let mut offered = request("exd5", Some(2));
        offered.offer_draw = true;
        assert!(!is_applied(&offered, &g));
    }
}
