//! The search's results on the wire: scores, win/draw/loss, principal variations and analysis
//! lines as `chess.v1` messages (moves through `chess-wire`).

use chess_proto::v1;
use chess_rules::{Outcome, Position, WinReason};
use chess_search::{Line, Score};
use chess_wire::{move_to_proto, outcome_to_proto};

/// A score as the wire's centipawns or mate in N.
pub fn score_to_proto(score: Score) -> v1::Score {
    v1::Score {
        value: Some(match score {
            Score::Cp(cp) => v1::score::Value::Centipawns(cp),
            Score::Mate(n) => v1::score::Value::MateIn(n),
        }),
    }
}

/// Win/draw/loss per mille.
pub fn wdl_to_proto((win, draw, loss): (u32, u32, u32)) -> v1::Wdl {
    v1::Wdl { win, draw, loss }
}

/// The moves of a principal variation in every notation, played out from `pos`. A PV move
/// that is not legal where it stands (which a sound search never produces) ends the line.
pub fn pv_to_proto(pos: &Position, pv: &[chess_rules::Move]) -> Vec<v1::Move> {
    let mut pos = pos.clone();
    let mut out = Vec::with_capacity(pv.len());
    for &m in pv {
        if !pos.is_legal(m) {
            break;
        }
        out.push(move_to_proto(&pos, m));
        pos.play_unchecked(m);
    }
    out
}

/// One principal variation with its score, depth and counters.
pub fn line_to_proto(pos: &Position, line: &Line) -> v1::AnalysisLine {
    v1::AnalysisLine {
        multipv: line.multipv as u32,
        score: Some(score_to_proto(line.score)),
        wdl: Some(wdl_to_proto(line.wdl)),
        depth: line.depth,
        seldepth: line.seldepth,
        pv: pv_to_proto(pos, &line.pv),
        nodes: line.nodes,
        nps: line.nps,
        time_ms: line.time_ms,
        tablebase: line.tablebase,
        dtm_plies: line.tablebase.then(|| dtm_plies(line.score)).flatten(),
        tbhits: line.tbhits,
    }
}

/// A table line's mate in moves as half-moves to mate (a mate in `n` moves for the side to
/// move is `2n - 1` plies, a mate in `-n` is `2n` plies against it); `None` for a draw.
fn dtm_plies(score: Score) -> Option<i32> {
    match score {
        Score::Mate(n) if n > 0 => Some(2 * n - 1),
        Score::Mate(n) => Some(2 * n),
        Score::Cp(_) => None,
    }
}

/// One analysis message: the lines of a depth (`done` false) or the final result.
pub fn response(pos: &Position, fen: &str, lines: &[Line], done: bool) -> v1::AnalyzeResponse {
    let best = lines
        .first()
        .and_then(|l| l.pv.first())
        .filter(|m| pos.is_legal(**m))
        .map(|&m| move_to_proto(pos, m));
    v1::AnalyzeResponse {
        fen: fen.to_owned(),
        lines: lines.iter().map(|l| line_to_proto(pos, l)).collect(),
        best_move: best,
        done,
        outcome: None,
    }
}

/// The one message for a game already over: the outcome, and a line with the final score
/// (the side to move checkmated: mate in 0; a draw: 0 cp), no PV and no best move.
pub fn finished(fen: &str, outcome: Outcome) -> v1::AnalyzeResponse {
    let checkmated = matches!(
        outcome,
        Outcome::Decisive {
            reason: WinReason::Checkmate,
            ..
        }
    );
    let (score, wdl) = if checkmated {
        (v1::score::Value::MateIn(0), (0, 0, 1000))
    } else {
        (v1::score::Value::Centipawns(0), (0, 1000, 0))
    };
    v1::AnalyzeResponse {
        fen: fen.to_owned(),
        lines: vec![v1::AnalysisLine {
            multipv: 1,
            score: Some(v1::Score { value: Some(score) }),
            wdl: Some(wdl_to_proto(wdl)),
            ..v1::AnalysisLine::default()
        }],
        best_move: None,
        done: true,
        outcome: Some(outcome_to_proto(outcome)),
    }
}
