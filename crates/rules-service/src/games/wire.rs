//! The game service's edge: wire types to domain types and back, in one place. Request
//! fields become domain values (bad input: `INVALID_ARGUMENT` naming the field), a session
//! becomes a `GameState`, and session and store errors become statuses.

use chess_proto::v1::{self, CreateGameRequest, GameState, game_event::Kind};
use chess_proto::{FieldViolation, game_uuid_from_text, request_id_from_text};
use chess_rules::{Color, Position};
use chess_wire::{
    TimeControl, color_from_proto, color_to_proto, draw_rule, move_to_proto, opening_to_proto,
    outcome_to_proto,
};
use tonic::{Code, Status};

use super::pgn::pgn_of;
use crate::GameId;
use crate::arbiter::ArbiterMode;
use crate::event::Event;
use crate::session::{Session, SessionError};
use crate::store::StoreError;

pub(super) fn session_status(e: SessionError) -> Status {
    let (field, code) = match &e {
        SessionError::GameOver(_) => ("game_id", Code::FailedPrecondition),
        SessionError::NotYourTurn { .. } => ("side", Code::FailedPrecondition),
        SessionError::StalePly { .. } => ("expected_ply", Code::FailedPrecondition),
        SessionError::IllegalMove(_) | SessionError::NullMove => ("move", Code::InvalidArgument),
        SessionError::OfferPending | SessionError::OfferBlocked => {
            ("offer_draw", Code::FailedPrecondition)
        }
        SessionError::NoDrawOffer(_) => ("side", Code::FailedPrecondition),
        SessionError::NoClaim { .. } | SessionError::NoClaimAfter { .. } => {
            ("move", Code::FailedPrecondition)
        }
        SessionError::FlagFallen | SessionError::FlagNotFallen => {
            ("game_id", Code::FailedPrecondition)
        }
        SessionError::TouchMove(_) => ("move", Code::FailedPrecondition),
        SessionError::NotASquare(_)
        | SessionError::NothingTouched(_)
        | SessionError::TooManyTouches { .. } => ("square", Code::InvalidArgument),
        SessionError::NoArbiter => ("move", Code::InvalidArgument),
        SessionError::NoTakebacks => ("game_id", Code::FailedPrecondition),
        SessionError::NothingToTakeBack(_) => ("side", Code::FailedPrecondition),
        SessionError::Corrupt(_) => return Status::data_loss(e.to_string()),
    };
    FieldViolation::new(field, e.to_string()).into_status_with(code)
}

pub(super) fn store_status(e: StoreError) -> Status {
    match e {
        StoreError::NotFound(id) => Status::not_found(format!("game {id} not found")),
        // Another replica wrote first: the caller must look at the game again.
        StoreError::Conflict { .. } => Status::failed_precondition(format!(
            "{e}: the game changed meanwhile (another replica?): reload it and retry"
        )),
        StoreError::Corrupt(_) | StoreError::Damaged(_) => Status::data_loss(e.to_string()),
        // Sent but not confirmed: saying it failed could be untrue.
        StoreError::Unconfirmed(_) => Status::unavailable(format!(
            "outcome unknown: {e}. The change may or may not have been recorded: GetGame shows \
             the game as it stands, and the same call with the same request_id is safe to send \
             again (the gateway adds a request_id when the call has none)"
        )),
        StoreError::Backend(_) | StoreError::Exists(_) => {
            Status::unavailable(format!("nothing was changed: {e}"))
        }
    }
}

/// The call's idempotency key.
pub(super) fn request_key(text: &str) -> Result<Option<String>, Status> {
    Ok(request_id_from_text("request_id", text)?)
}

pub(super) fn parse_id(text: &str) -> Result<GameId, Status> {
    game_uuid_from_text("game_id", text)
        .map(GameId)
        .map_err(FieldViolation::into_status)
}

pub(super) fn side_of(value: i32) -> Result<Option<Color>, Status> {
    Ok(color_from_proto("side", value)?)
}

pub(super) fn required_side(value: i32) -> Result<Color, Status> {
    side_of(value)?.ok_or_else(|| {
        FieldViolation::new("side", "say which side: COLOR_WHITE or COLOR_BLACK").into()
    })
}

pub(super) fn tc_from_request(req: &CreateGameRequest) -> Result<Option<TimeControl>, Status> {
    if let Some(tc) = &req.time_control {
        let periods = TimeControl::periods_from_proto(tc);
        return TimeControl::new(periods)
            .map(Some)
            .map_err(|e| FieldViolation::new("time_control", e).into());
    }
    if req.time_control_text.trim().is_empty() {
        return Ok(None);
    }
    TimeControl::parse(&req.time_control_text)
        .map(Some)
        .map_err(|e| FieldViolation::new("time_control_text", e).into())
}

pub(super) fn mode_to_proto(m: ArbiterMode) -> v1::IllegalMoves {
    match m {
        ArbiterMode::Reject => v1::IllegalMoves::Reject,
        ArbiterMode::Fide => v1::IllegalMoves::Fide,
        ArbiterMode::ThreeStrikes => v1::IllegalMoves::ThreeStrikes,
    }
}

pub(super) fn mode_from_proto(value: i32) -> Result<ArbiterMode, Status> {
    match v1::IllegalMoves::try_from(value) {
        Ok(v1::IllegalMoves::Reject) => Ok(ArbiterMode::Reject),
        Ok(v1::IllegalMoves::Fide) => Ok(ArbiterMode::Fide),
        Ok(v1::IllegalMoves::ThreeStrikes) => Ok(ArbiterMode::ThreeStrikes),
        Err(_) => Err(FieldViolation::new(
            "illegal_moves",
            format!("unknown value {value}: ILLEGAL_MOVES_REJECT, _FIDE or _THREE_STRIKES"),
        )
        .into()),
    }
}

pub(super) fn state_of(id: GameId, s: &Session, now: u64) -> GameState {
    let mut moves = Vec::with_capacity(s.records.len());
    let mut pos: Position = s.game.start().clone();
    for (m, rec) in s.game.moves().iter().zip(&s.records) {
        let mv = move_to_proto(&pos, *m);
        pos.play_unchecked(*m);
        moves.push(v1::PlayedMove {
            r#move: Some(mv),
            time_used_ms: rec.time_used_ms,
            draw_offered: rec.draw_offered,
            fen_after: pos.fen(),
        });
    }
    let clock = s.remaining(now).map(|r| v1::Clock {
        white_ms: r.white,
        black_ms: r.black,
        running: match s.clock.as_ref().and_then(|c| c.running_since_ms) {
            Some(_) => color_to_proto(s.turn()).into(),
            None => v1::Color::Unspecified.into(),
        },
    });
    let pos = s.position();
    GameState {
        game_id: id.to_string(),
        start_fen: s.start_fen.clone(),
        fen: pos.fen(),
        turn: color_to_proto(pos.turn()).into(),
        moves,
        ply: s.ply(),
        time_control: s.time_control.as_ref().map(TimeControl::to_proto),
        clock,
        draw_offer_from: s
            .draw_offer
            .map_or(v1::Color::Unspecified, color_to_proto)
            .into(),
        outcome: s.outcome.map(|o| {
            let mut out = outcome_to_proto(o);
            if let Some(detail) = &s.outcome_detail {
                out.description = format!("{}: {detail}", out.description);
            }
            out
        }),
        claimable_draw: s
            .claimable_draw()
            .map_or(v1::outcome::Rule::Unspecified, draw_rule)
            .into(),
        check: pos.is_check(),
        white: s.white.clone(),
        black: s.black.clone(),
        pgn: pgn_of(id, s),
        opening: Some(opening_to_proto(&chess_knowledge::classify(
            s.game.start(),
            s.game.moves(),
        ))),
        illegal_moves: mode_to_proto(s.arbiter.mode()).into(),
        fouls: s
            .arbiter
            .fouls()
            .iter()
            .map(|f| v1::Foul {
                side: color_to_proto(f.side).into(),
                attempted: f.attempted.clone(),
                reason: f.reason.clone(),
                penalty: f.penalty_text(),
                ply: f.ply,
                count: f.count,
            })
            .collect(),
        touches: s
            .arbiter
            .touches()
            .iter()
            .map(|t| v1::Touch {
                side: color_to_proto(t.side).into(),
                square: t.square.to_string(),
                piece: t.piece.clone(),
                adjust: t.adjust,
            })
            .collect(),
        takebacks: s.takebacks,
        taken_back: s
            .taken_back
            .iter()
            .map(|t| v1::TakenBack {
                side: color_to_proto(t.side).into(),
                plies: t.plies,
                ply: t.ply,
            })
            .collect(),
    }
}

/// The watchers' kind of event for a stored event (events another replica stored are
/// announced the way the replica that stored them announced them).
pub(super) fn kind_of(ev: &Event) -> Kind {
    match ev {
        Event::Created { .. } => Kind::Snapshot,
        Event::Move {
            offer_draw: true, ..
        } => Kind::DrawOffered,
        Event::Move { .. } => Kind::Move,
        Event::DrawAnswered { accept: false, .. } => Kind::DrawDeclined,
        Event::DrawAnswered { .. }
        | Event::Resigned { .. }
        | Event::DrawClaimed { .. }
        | Event::FlagFell { .. } => Kind::GameOver,
        Event::Foul { .. } => Kind::Foul,
        Event::Touched { .. } => Kind::Touch,
        Event::TakenBack { .. } => Kind::TakeBack,
    }
}
