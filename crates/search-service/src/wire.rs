//! The search's results on the wire: scores, win/draw/loss, principal variations and analysis
//! lines as `chess.v1` messages (moves through [`chess_proto::convert`]).

use chess_proto::convert::move_to_proto;
use chess_proto::v1;
use chess_rules::Position;
use chess_search::{Line, Score};

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
    }
}
