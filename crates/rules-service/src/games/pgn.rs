//! A game as PGN: the tags (date, time control, opening, arbiter mode, termination), the
//! moves, and each foul and each takeback as a comment after the move it followed.

use chess_rules::{Outcome, WinReason};

use crate::GameId;
use crate::arbiter::{ArbiterMode, FoulRecord};
use crate::session::Session;
use chess_wire::TimeControl;

/// `YYYY.MM.DD` of a Unix time in ms (PGN's date format).
fn pgn_date(ms: u64) -> String {
    // Civil-from-days (proleptic Gregorian), valid for any date after 1970.
    let days = (ms / 86_400_000) as i64 + 719_468;
    let era = days / 146_097;
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

/// PGN `TimeControl` tag (seconds, per the PGN standard): `40/5400+30:1800+30`.
fn pgn_time_control(tc: &TimeControl) -> String {
    tc.periods
        .iter()
        .map(|p| {
            let moves = if p.moves > 0 {
                format!("{}/", p.moves)
            } else {
                String::new()
            };
            let inc = if p.increment_ms > 0 {
                format!("+{}", p.increment_ms / 1000)
            } else {
                String::new()
            };
            format!("{moves}{}{inc}", p.base_ms / 1000)
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// A foul as a PGN comment: `foul 1 by black: e8e7 (king moved into check ...); two
/// minutes added to white's clock`.
fn foul_comment(f: &FoulRecord) -> String {
    format!(
        "illegal move {} by {}: {} ({}); penalty: {}",
        f.count,
        f.side,
        f.attempted,
        f.reason,
        f.penalty_text()
    )
}

/// A comment after the move that made ply `ply` (before the first move: on the game).
fn comment_at(pgn: &mut chess_pgn::PgnGame, ply: u32, text: String) {
    match (ply as usize).checked_sub(1) {
        Some(i) if i < pgn.root.nodes.len() => pgn.root.nodes[i].comments_after.push(text),
        _ => pgn.root.comments.push(text),
    }
}

pub(super) fn pgn_of(id: GameId, s: &Session) -> String {
    let mut pgn = chess_pgn::PgnGame::new(s.game.start().clone());
    pgn.set_tag("Event", "Casual game");
    pgn.set_tag("Site", format!("chess-rules-service game {id}"));
    pgn.set_tag("Date", pgn_date(s.created_ms));
    pgn.set_tag("Round", "-");
    pgn.set_tag("White", if s.white.is_empty() { "?" } else { &s.white });
    pgn.set_tag("Black", if s.black.is_empty() { "?" } else { &s.black });
    let result = s.outcome.map_or("*", |o| o.result());
    pgn.set_tag("Result", result);
    if let Some(tc) = &s.time_control {
        pgn.set_tag("TimeControl", pgn_time_control(tc));
    }
    let opening = chess_knowledge::classify(s.game.start(), s.game.moves());
    if let Some(o) = opening.opening {
        pgn.set_tag("ECO", o.eco);
        pgn.set_tag("Opening", o.name);
    }
    if s.arbiter.mode() != ArbiterMode::Reject {
        let mode = match s.arbiter.mode() {
            ArbiterMode::Fide => "fide",
            _ => "three-strikes",
        };
        pgn.set_tag("IllegalMoves", mode);
    }
    if let Some(o) = s.outcome {
        let termination = match o {
            Outcome::Decisive {
                reason: WinReason::Timeout,
                ..
            } => "time forfeit",
            Outcome::Draw {
                reason: chess_rules::DrawReason::TimeoutInsufficientMaterial,
            } => "time forfeit",
            Outcome::Decisive {
                reason: WinReason::IllegalMoves,
                ..
            }
            | Outcome::Draw {
                reason: chess_rules::DrawReason::IllegalMovesInsufficientMaterial,
            } => "rules infraction",
            _ => "normal",
        };
        pgn.set_tag("Termination", termination);
    }
    crate::rules_api::fill_moves(&mut pgn, &s.game);
    // Each foul as a comment after the move it followed (before the first move: on the game).
    for f in s.arbiter.fouls() {
        comment_at(&mut pgn, f.ply, foul_comment(f));
    }
    // Each takeback after the move the game went back to: the moves taken back are not in
    // the movetext (they were taken back), the comment says that some were.
    for t in &s.taken_back {
        let text = format!(
            "{} took back {}",
            t.side,
            if t.plies == 1 {
                "its move (1 ply)".to_owned()
            } else {
                format!("its move and the reply ({} plies)", t.plies)
            }
        );
        comment_at(&mut pgn, t.ply, text);
    }
    pgn.result = result.parse().ok();
    pgn.to_pgn().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_dates_and_time_controls() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(1_796_083_200_000), "2026.12.01");
        assert_eq!(
            pgn_time_control(&TimeControl::parse("40/90+30:30+30").unwrap()),
            "40/5400+30:1800+30"
        );
        assert_eq!(pgn_time_control(&TimeControl::parse("5+0").unwrap()), "300");
    }
}
