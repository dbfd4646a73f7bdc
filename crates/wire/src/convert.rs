//! Conversions between wire types and `chess-rules` types: positions, moves, sides and
//! outcomes, each bad field a [`FieldViolation`].

use chess_proto::{FieldViolation, quote, v1};
use chess_rules::{Color, DrawReason, Move, Outcome, Position, WinReason};

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
        .map_err(|e| FieldViolation::new(field, format!("invalid FEN {}: {e}", quote(fen))))
}

/// Longest move text read (the longest notation, with check marks and annotations, is far
/// shorter).
pub const MAX_MOVE_BYTES: usize = 32;

/// Reads one move in any accepted notation.
pub fn move_from_text(
    field: &str,
    pos: &Position,
    text: &str,
    strict: bool,
) -> Result<Move, FieldViolation> {
    if text.len() > MAX_MOVE_BYTES {
        return Err(FieldViolation::new(
            field,
            format!(
                "{} is not a move: a move is at most {MAX_MOVE_BYTES} bytes in any notation",
                quote(text)
            ),
        ));
    }
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
    fn long_moves_are_quoted_cut_short() {
        let long = "N".repeat(4234);
        let e = move_from_text("moves[0]", &Position::startpos(), &long, false).unwrap_err();
        assert!(e.description.contains("4234 bytes"), "{}", e.description);
        assert!(e.description.len() < 200, "{}", e.description);
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
