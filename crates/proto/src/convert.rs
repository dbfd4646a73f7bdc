//! Conversions between wire types and `chess-rules` types, and the one place where bad
//! input becomes `INVALID_ARGUMENT` with a `google.rpc.BadRequest` field violation.

use chess_rules::{Color, DrawReason, Move, Outcome, Position, WinReason};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::v1;

/// Bad input in one request field: becomes `INVALID_ARGUMENT` with a `BadRequest` detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldViolation {
    /// The field path, e.g. `fen` or `moves[3]`.
    pub field: String,
    pub description: String,
}

impl FieldViolation {
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> FieldViolation {
        FieldViolation {
            field: field.into(),
            description: description.into(),
        }
    }

    /// `INVALID_ARGUMENT` whose message names the field and whose details carry it.
    pub fn into_status(self) -> Status {
        self.into_status_with(Code::InvalidArgument)
    }

    /// The same with another code, e.g. `FAILED_PRECONDITION` for a move out of turn.
    pub fn into_status_with(self, code: Code) -> Status {
        let message = format!("{}: {}", self.field, self.description);
        let details = ErrorDetails::with_bad_request_violation(self.field, self.description);
        Status::with_error_details(code, message, details)
    }
}

impl From<FieldViolation> for Status {
    fn from(v: FieldViolation) -> Status {
        v.into_status()
    }
}

/// Longest FEN accepted (the longest legal FEN is under 100 bytes).
pub const MAX_FEN_BYTES: usize = 128;

/// Reads a FEN field; empty means the standard start position.
pub fn position_from_fen(field: &str, fen: &str) -> Result<Position, FieldViolation> {
    let fen = fen.trim();
    if fen.is_empty() {
        return Ok(Position::startpos());
    }
    if fen.len() > MAX_FEN_BYTES {
        return Err(FieldViolation::new(
            field,
            format!(
                "FEN of {} bytes is longer than the {MAX_FEN_BYTES}-byte limit",
                fen.len()
            ),
        ));
    }
    Position::from_fen(fen)
        .map_err(|e| FieldViolation::new(field, format!("invalid FEN {fen:?}: {e}")))
}

/// Reads one move in any accepted notation.
pub fn move_from_text(
    field: &str,
    pos: &Position,
    text: &str,
    strict: bool,
) -> Result<Move, FieldViolation> {
    let result = if strict {
        pos.parse_uci(text.trim())
            .or_else(|_| pos.parse_san_with(text, chess_rules::SanStrictness::Strict))
    } else {
        pos.parse_move(text)
    };
    result.map_err(|e| FieldViolation::new(field, format!("{e} (position {})", pos.fen())))
}

/// A move in every notation, as the wire carries it.
pub fn move_to_proto(pos: &Position, m: Move) -> v1::Move {
    v1::Move {
        uci: m.to_string(),
        san: pos.san(m),
        coordinate: pos.coordinate(m),
    }
}

pub fn color_to_proto(c: Color) -> v1::Color {
    match c {
        Color::White => v1::Color::White,
        Color::Black => v1::Color::Black,
    }
}

/// `None` for `COLOR_UNSPECIFIED`; an error for numbers outside the enum.
pub fn color_from_proto(field: &str, value: i32) -> Result<Option<Color>, FieldViolation> {
    match v1::Color::try_from(value) {
        Ok(v1::Color::Unspecified) => Ok(None),
        Ok(v1::Color::White) => Ok(Some(Color::White)),
        Ok(v1::Color::Black) => Ok(Some(Color::Black)),
        Err(_) => Err(FieldViolation::new(
            field,
            format!("unknown colour value {value}"),
        )),
    }
}

pub fn draw_rule(reason: DrawReason) -> v1::outcome::Rule {
    use v1::outcome::Rule;
    match reason {
        DrawReason::Stalemate => Rule::Stalemate,
        DrawReason::DeadPosition => Rule::DeadPosition,
        DrawReason::Agreement => Rule::Agreement,
        DrawReason::ThreefoldRepetition => Rule::ThreefoldRepetition,
        DrawReason::FivefoldRepetition => Rule::FivefoldRepetition,
        DrawReason::FiftyMoves => Rule::FiftyMoves,
        DrawReason::SeventyFiveMoves => Rule::SeventyFiveMoves,
        DrawReason::TimeoutInsufficientMaterial => Rule::TimeoutVsInsufficientMaterial,
        DrawReason::IllegalMovesInsufficientMaterial => Rule::IllegalMovesVsInsufficientMaterial,
    }
}

pub fn outcome_to_proto(o: Outcome) -> v1::Outcome {
    use v1::outcome::{Result as R, Rule};
    let (result, rule) = match o {
        Outcome::Decisive { winner, reason } => (
            if winner == Color::White {
                R::WhiteWins
            } else {
                R::BlackWins
            },
            match reason {
                WinReason::Checkmate => Rule::Checkmate,
                WinReason::Resignation => Rule::Resignation,
                WinReason::Timeout => Rule::Timeout,
                WinReason::IllegalMoves => Rule::IllegalMoves,
            },
        ),
        Outcome::Draw { reason } => (R::Draw, draw_rule(reason)),
    };
    v1::Outcome {
        result: result.into(),
        rule: rule.into(),
        pgn_result: o.result().to_owned(),
        description: o.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_carry_details() {
        let status = FieldViolation::new("fen", "bad").into_status();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(status.message(), "fen: bad");
        let details = status.get_error_details();
        let v = &details.bad_request().unwrap().field_violations[0];
        assert_eq!((v.field.as_str(), v.description.as_str()), ("fen", "bad"));
    }

    #[test]
    fn fen_and_moves() {
        assert_eq!(position_from_fen("fen", "").unwrap(), Position::startpos());
        let e = position_from_fen("fen", "8/8 w").unwrap_err();
        assert_eq!(e.field, "fen");
        assert!(e.description.contains("invalid FEN"));
        let pos = Position::startpos();
        let m = move_from_text("moves[0]", &pos, "Nf3", false).unwrap();
        assert_eq!(move_to_proto(&pos, m).coordinate, "Ng1-f3");
        assert!(move_from_text("moves[0]", &pos, "0-0", true).is_err());
        assert!(color_from_proto("side", 7).is_err());
    }
}
