//! What the client prints: games (board, moves with times, clocks, fouls and touches,
//! results), the lines of a watched game, openings and scores. Shared by `chess game`,
//! `chess analyze`, `chess review` and `chess rules`; it only formats, it calls nothing.

use std::fmt::Write as _;

use chess_proto::v1::{self, GameEvent, GameState, Score, game_event::Kind, score};
use chess_rules::Position;
use chess_wire::TimeControl;

/// `+0.35`, `-1.20`, `#3`, `#-2`: from the side to move's point of view.
pub(crate) fn score_text(score: Option<&Score>) -> String {
    match score.and_then(|s| s.value) {
        Some(score::Value::Centipawns(cp)) => format!("{:+.2}", f64::from(cp) / 100.0),
        Some(score::Value::MateIn(n)) => format!("#{n}"),
        None => "?".to_owned(),
    }
}

pub(crate) fn mode_text(value: i32) -> &'static str {
    match v1::IllegalMoves::try_from(value) {
        Ok(v1::IllegalMoves::Fide) => "fide (a foul; 2 minutes to the opponent, the second loses)",
        Ok(v1::IllegalMoves::ThreeStrikes) => {
            "three-strikes (a king moved onto an attacked square is a foul; the third loses)"
        }
        _ => "reject",
    }
}

/// `foul 1 by black: e8e7 (king moved into check ...); penalty: two minutes added to ...`.
pub(crate) fn foul_line(f: &v1::Foul) -> String {
    format!(
        "foul {} by {}: {} ({}); penalty: {}",
        f.count,
        color_name(f.side),
        f.attempted,
        f.reason,
        f.penalty
    )
}

/// `white touched Ng1` or `white adjusted Ng1 (j'adoube)`.
pub(crate) fn touch_line(t: &v1::Touch) -> String {
    if t.adjust {
        format!("{} adjusted {} (j'adoube)", color_name(t.side), t.piece)
    } else {
        format!("{} touched {}", color_name(t.side), t.piece)
    }
}

/// `white took back 2 plies (its move and the reply), back to ply 4`.
pub(crate) fn takeback_line(t: &v1::TakenBack) -> String {
    let what = if t.plies == 1 {
        "1 ply (its move)".to_owned()
    } else {
        format!("{} plies (its move and the reply)", t.plies)
    };
    format!(
        "{} took back {what}, back to ply {}",
        color_name(t.side),
        t.ply
    )
}

/// `B20 Sicilian Defense  semi-open`, or `none`.
pub(crate) fn opening_text(o: Option<&v1::OpeningInfo>) -> String {
    match o {
        Some(o) if !o.eco.is_empty() => {
            let mut text = format!("{} {}", o.eco, o.name);
            if !o.class.is_empty() {
                write!(text, "  {}", o.class).ok();
            }
            if o.gambit {
                text.push_str(", gambit");
            }
            text
        }
        _ => "none".to_owned(),
    }
}

/// `label     value` lines, aligned.
pub(crate) fn label(out: &mut String, name: &str, value: &str) {
    writeln!(out, "{name:<11} {value}").ok();
}

pub(crate) fn player(name: &str) -> &str {
    if name.is_empty() { "?" } else { name }
}

pub(crate) fn color_name(value: i32) -> &'static str {
    match v1::Color::try_from(value) {
        Ok(v1::Color::White) => "white",
        Ok(v1::Color::Black) => "black",
        _ => "nobody",
    }
}

fn opponent(value: i32) -> &'static str {
    match v1::Color::try_from(value) {
        Ok(v1::Color::White) => "black",
        Ok(v1::Color::Black) => "white",
        _ => "nobody",
    }
}

/// The draw rule a claim would invoke, or `None` for `RULE_UNSPECIFIED`.
pub(crate) fn claim_name(rule: i32) -> Option<&'static str> {
    use v1::outcome::Rule;
    match Rule::try_from(rule) {
        Ok(Rule::ThreefoldRepetition) => Some("threefold repetition"),
        Ok(Rule::FiftyMoves) => Some("the fifty-move rule"),
        Ok(Rule::Unspecified) | Err(_) => None,
        // Only the two claimable rules are expected here; name any other plainly.
        Ok(other) => Some(other.as_str_name()),
    }
}

/// `4:58.1` under an hour, `1:29:58` above.
fn clock_time(ms: i64) -> String {
    let ms = ms.max(0);
    let tenths = ms / 100;
    let (h, m, s, t) = (
        tenths / 36_000,
        tenths / 600 % 60,
        tenths / 10 % 60,
        tenths % 10,
    );
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}.{t}")
    }
}

/// Thinking time of one move: `2.1s`, or a clock reading past a minute.
fn used_time(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{}s", ms / 1000, ms % 1000 / 100)
    } else {
        clock_time(i64::try_from(ms).unwrap_or(i64::MAX))
    }
}

fn time_control_text(tc: &v1::TimeControl) -> String {
    let periods = TimeControl::periods_from_proto(tc);
    TimeControl { periods }.to_string()
}

/// `5+3: white 4:58.1, black 5:00.0 (black's clock is running)`, or `none`.
pub(crate) fn clock_summary(state: &GameState) -> String {
    let Some(tc) = &state.time_control else {
        return "none".to_owned();
    };
    let mut text = time_control_text(tc);
    if let Some(clock) = &state.clock {
        write!(
            text,
            ": white {}, black {}",
            clock_time(clock.white_ms),
            clock_time(clock.black_ms)
        )
        .ok();
        if clock.running != i32::from(v1::Color::Unspecified) {
            write!(text, " ({}'s clock is running)", color_name(clock.running)).ok();
        } else if state.outcome.is_none() {
            text.push_str(" (stopped: the clocks start after white's first move)");
        }
    }
    text
}

/// `12. Nf3` or `12... Nf6`: the move number and side come from the FEN before the move.
fn numbered(fen_before: &str, san: &str) -> String {
    let fields: Vec<&str> = fen_before.split_whitespace().collect();
    let number = fields.get(5).copied().unwrap_or("1");
    if fields.get(1) == Some(&"b") {
        format!("{number}... {san}")
    } else {
        format!("{number}. {san}")
    }
}

fn fen_before(state: &GameState, index: usize) -> &str {
    match index.checked_sub(1) {
        Some(prev) => &state.moves[prev].fen_after,
        None => &state.start_fen,
    }
}

/// The last move played: `1. e4 (e2e4)`.
pub(crate) fn last_move(state: &GameState) -> Option<String> {
    let index = state.moves.len().checked_sub(1)?;
    let played = &state.moves[index];
    let mv = played.r#move.as_ref()?;
    let mut text = format!(
        "{} ({})",
        numbered(fen_before(state, index), &mv.san),
        mv.uci
    );
    if played.draw_offered {
        text.push_str(", offering a draw");
    }
    Some(text)
}

/// What a changed game looks like now: the FEN, pending offer or claim, clock, result.
pub(crate) fn after_change(state: &GameState) -> String {
    let mut out = format!("fen: {}\n", state.fen);
    if let Some(outcome) = &state.outcome {
        writeln!(out, "game over: {}", outcome.description).ok();
        return out;
    }
    let draw_from = state.draw_offer_from;
    if draw_from != i32::from(v1::Color::Unspecified) {
        writeln!(
            out,
            "{} offers a draw: {} may accept or decline",
            color_name(draw_from),
            opponent(draw_from)
        )
        .ok();
    }
    if let Some(rule) = claim_name(state.claimable_draw) {
        writeln!(out, "{} may claim a draw by {rule}", color_name(state.turn)).ok();
    }
    if state.clock.is_some() {
        writeln!(out, "clock: {}", clock_summary(state)).ok();
    }
    out
}

/// The moves, one numbered line per full move, with thinking times when there is a clock.
fn move_list(state: &GameState) -> String {
    let timed = state.time_control.is_some();
    let mut out = String::new();
    let mut line = String::new();
    for (i, played) in state.moves.iter().enumerate() {
        let Some(mv) = &played.r#move else { continue };
        let before = fen_before(state, i);
        let black = before.split_whitespace().nth(1) == Some("b");
        let mut notes = Vec::new();
        if timed {
            notes.push(used_time(played.time_used_ms));
        }
        if played.draw_offered {
            notes.push("draw offered".to_owned());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", notes.join(", "))
        };
        if black && !line.is_empty() {
            write!(line, "  {}{notes}", mv.san).ok();
        } else {
            if !line.is_empty() {
                writeln!(out, "  {line}").ok();
            }
            line = format!("{}{notes}", numbered(before, &mv.san));
        }
    }
    if !line.is_empty() {
        writeln!(out, "  {line}").ok();
    }
    out
}

/// The whole game for `chess game show`.
pub(crate) fn describe(state: &GameState) -> String {
    let mut out = String::new();
    label(&mut out, "game", &state.game_id);
    label(&mut out, "white", player(&state.white));
    label(&mut out, "black", player(&state.black));
    label(&mut out, "clock", &clock_summary(state));
    label(&mut out, "fen", &state.fen);
    if state.start_fen != Position::startpos().fen() {
        label(&mut out, "start fen", &state.start_fen);
    }
    out.push('\n');
    if let Ok(pos) = Position::from_fen(&state.fen) {
        out.push_str(&crate::fen::draw_board(&pos));
        out.push('\n');
    }
    if state.moves.is_empty() {
        label(&mut out, "moves", "none yet");
    } else {
        label(&mut out, "moves", &format!("{} plies", state.ply));
        out.push_str(&move_list(state));
    }
    let draw_from = state.draw_offer_from;
    let offer = if draw_from == i32::from(v1::Color::Unspecified) {
        "none".to_owned()
    } else {
        format!(
            "from {}: {} may accept or decline",
            color_name(draw_from),
            opponent(draw_from)
        )
    };
    label(&mut out, "draw offer", &offer);
    let claim = claim_name(state.claimable_draw).map_or_else(
        || "none".to_owned(),
        |rule| format!("{rule} ({} may claim)", color_name(state.turn)),
    );
    label(&mut out, "claimable", &claim);
    label(&mut out, "opening", &opening_text(state.opening.as_ref()));
    label(&mut out, "illegal", mode_text(state.illegal_moves));
    if state.fouls.is_empty() {
        label(&mut out, "fouls", "none");
    } else {
        label(&mut out, "fouls", &state.fouls.len().to_string());
        for f in &state.fouls {
            writeln!(out, "  at ply {}: {}", f.ply, foul_line(f)).ok();
        }
    }
    if !state.touches.is_empty() {
        let touches: Vec<String> = state.touches.iter().map(touch_line).collect();
        label(&mut out, "touched", &touches.join(", "));
    }
    let outcome = state.outcome.as_ref().map_or_else(
        || format!("in progress, {} to move", color_name(state.turn)),
        |o| o.description.clone(),
    );
    label(&mut out, "outcome", &outcome);
    out
}

/// One line per event (two when a snapshot shows a finished game).
pub(crate) fn event_lines(event: &GameEvent) -> String {
    let Some(state) = &event.state else {
        return "event without a state\n".to_owned();
    };
    let clock = state
        .clock
        .as_ref()
        .map(|c| {
            format!(
                ", clock white {} black {}",
                clock_time(c.white_ms),
                clock_time(c.black_ms)
            )
        })
        .unwrap_or_default();
    let over = state
        .outcome
        .as_ref()
        .map(|o| format!("game over: {}\n", o.description));
    match Kind::try_from(event.kind) {
        Ok(Kind::Snapshot) => {
            let mut text = format!(
                "snapshot: ply {}, {} to move, fen {}{clock}\n",
                state.ply,
                color_name(state.turn),
                state.fen
            );
            text.push_str(over.as_deref().unwrap_or(""));
            text
        }
        Ok(Kind::Move | Kind::DrawOffered) => format!(
            "move: {}, fen {}{clock}\n",
            last_move(state).unwrap_or_default(),
            state.fen
        ),
        Ok(Kind::DrawDeclined) => format!(
            "draw declined by {}, {} to move\n",
            color_name(state.turn),
            color_name(state.turn)
        ),
        Ok(Kind::GameOver) => over.unwrap_or_else(|| "game over\n".to_owned()),
        Ok(Kind::Foul) => {
            let mut text = state
                .fouls
                .last()
                .map_or_else(|| "foul".to_owned(), foul_line);
            text.push_str(&clock);
            text.push('\n');
            text
        }
        Ok(Kind::Touch) => state
            .touches
            .last()
            .map_or_else(|| "touch\n".to_owned(), |t| format!("{}\n", touch_line(t))),
        Ok(Kind::TakeBack) => {
            let mut text = state
                .taken_back
                .last()
                .map_or_else(|| "takeback".to_owned(), takeback_line);
            write!(text, ", fen {}{clock}", state.fen).ok();
            text.push('\n');
            text
        }
        Ok(Kind::Unspecified) | Err(_) => format!("event {}: ply {}\n", event.kind, state.ply),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn played(san: &str, uci: &str, fen_after: &str, ms: u64) -> v1::PlayedMove {
        v1::PlayedMove {
            r#move: Some(v1::Move {
                uci: uci.into(),
                san: san.into(),
                coordinate: String::new(),
            }),
            time_used_ms: ms,
            draw_offered: false,
            fen_after: fen_after.into(),
        }
    }

    #[test]
    fn clocks_and_times() {
        assert_eq!(clock_time(300_000), "5:00.0");
        assert_eq!(clock_time(298_150), "4:58.1");
        assert_eq!(clock_time(5_400_000), "1:30:00");
        assert_eq!(clock_time(-5), "0:00.0");
        assert_eq!(used_time(2_150), "2.1s");
        assert_eq!(used_time(65_000), "1:05.0");
    }

    #[test]
    fn move_numbers_follow_the_fen() {
        assert_eq!(numbered(START, "e4"), "1. e4");
        assert_eq!(
            numbered(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                "e5"
            ),
            "1... e5"
        );
    }

    #[test]
    fn move_list_pairs_moves() {
        let after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let after_e5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
        let after_nf3 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2";
        let state = GameState {
            start_fen: START.into(),
            moves: vec![
                played("e4", "e2e4", after_e4, 0),
                played("e5", "e7e5", after_e5, 1_200),
                played("Nf3", "g1f3", after_nf3, 3_000),
            ],
            time_control: Some(v1::TimeControl {
                periods: vec![v1::TimeControlPeriod {
                    moves: 0,
                    base_ms: 300_000,
                    increment_ms: 3_000,
                }],
            }),
            ..GameState::default()
        };
        assert_eq!(
            move_list(&state),
            "  1. e4 {0.0s}  e5 {1.2s}\n  2. Nf3 {3.0s}\n"
        );
        assert_eq!(last_move(&state).unwrap(), "2. Nf3 (g1f3)");
        assert_eq!(
            time_control_text(state.time_control.as_ref().unwrap()),
            "5+3"
        );
        // A game from a position with black to move starts with `N...`.
        let state = GameState {
            start_fen: after_e4.into(),
            moves: vec![played("e5", "e7e5", after_e5, 0)],
            ..GameState::default()
        };
        assert_eq!(move_list(&state), "  1... e5\n");
    }
}
