//! Game review: from the analysis of every position of a game to per-move judgements,
//! per-player accuracy and average centipawn loss, and an annotated PGN.
//!
//! For the move played from position *p* the review compares two values, both from the
//! mover's point of view: the best line's score at *p*, and the score of the move played (its
//! own line at *p* when the MultiPV search ranked it, otherwise the negated value of the
//! position it led to). Scores become an expected score (win 1, draw 1/2) through the
//! engine's win/draw/loss model ([`chess_search::Score::wdl`]), and the difference is the
//! move's **loss** Δ, from 0 to 1.
//!
//! | judgement | symbol | rule |
//! |---|---|---|
//! | blunder | `??` | Δ ≥ 0.30 |
//! | mistake | `?` | 0.15 ≤ Δ < 0.30 |
//! | inaccuracy | `?!` | 0.07 ≤ Δ < 0.15 |
//! | brilliant | `!!` | the only move (below), and it gives up material |
//! | good | `!` | the only move: the best, and the second-best is ≥ 0.25 worse, or it forces mate and the second-best does not |
//! | interesting | `!?` | gives up material, Δ < 0.03 |
//!
//! The second clause of "the only move" is there because expected scores saturate: a mate in 2
//! and a +4 line are both about 1, yet only the mate is a sure win (Morphy's 16.Qb8+!! in the
//! Opera game is such a move). A move that mates ends the game: its PGN comment carries no
//! `[%eval]` (there is no position left to value).
//!
//! "Gives up material" means the static exchange on the destination square loses at least a
//! pawn (SEE ≤ −100). A move's **accuracy** is `100 · exp(−4 Δ)` (about 89 at Δ = 0.03, 76 at
//! 0.07, 55 at 0.15, 30 at 0.30); a player's accuracy is the mean over their moves.
//! **Centipawn loss** compares the two scores clamped to ±1000 cp (a mate counts as 1000).

use chess_pgn::{Line as PgnLine, Node, PgnGame, nag_from_symbol};
use chess_proto::v1;
use chess_rules::{Color, Move, Position};
use chess_search::{Line, Score, see_ge};
use chess_wire::{color_to_proto, move_to_proto, opening_to_proto};

use crate::wire::{pv_to_proto, score_to_proto};

pub const BLUNDER: f64 = 0.30;
pub const MISTAKE: f64 = 0.15;
pub const INACCURACY: f64 = 0.07;
pub const ONLY_MOVE_MARGIN: f64 = 0.25;
pub const INTERESTING_MAX_LOSS: f64 = 0.03;
pub const SACRIFICE_SEE: i32 = -100;
/// Longest better line written into the annotated PGN, in plies.
const PGN_LINE_PLIES: usize = 8;

/// What the analysis of one position found.
#[derive(Clone, Debug, PartialEq)]
pub enum PositionValue {
    /// The search's lines, best first (MultiPV 2 where there were two moves).
    Lines(Vec<Line>),
    /// No legal move: checkmate (`Mate(0)`) or stalemate (`Cp(0)`).
    Terminal(Score),
}

impl PositionValue {
    /// The value for the side to move.
    pub fn score(&self) -> Score {
        match self {
            PositionValue::Lines(lines) => lines.first().map_or(Score::Cp(0), |l| l.score),
            PositionValue::Terminal(s) => *s,
        }
    }

    /// The value of a position without legal moves, if it is one.
    pub fn terminal(pos: &Position) -> Option<PositionValue> {
        if pos.has_legal_moves() {
            None
        } else if pos.is_check() {
            Some(PositionValue::Terminal(Score::Mate(0)))
        } else {
            Some(PositionValue::Terminal(Score::Cp(0)))
        }
    }
}

/// Expected score (win 1, draw 1/2) from the engine's win/draw/loss model.
fn expected_score(score: Score) -> f64 {
    let (w, d, _) = score.wdl();
    (f64::from(w) + f64::from(d) / 2.0) / 1000.0
}

/// The value before a move, from the mover's side, given the value after it for the opponent.
pub fn negate(score: Score) -> Score {
    match score {
        Score::Cp(cp) => Score::Cp(-cp),
        // The opponent mates in n: the mover is mated in n.
        Score::Mate(n) if n > 0 => Score::Mate(-n),
        // The opponent is mated in |n| of their moves: the mover mates in |n| + 1.
        Score::Mate(n) => Score::Mate(-n + 1),
    }
}

fn clamped_cp(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp.clamp(-1000, 1000),
        Score::Mate(n) if n > 0 => 1000,
        Score::Mate(_) => -1000,
    }
}

/// The exact result (1 win, 0 draw, -1 loss for the side to move) when the endgame tables
/// decided the position's best line, or the position is over.
fn table_result(value: &PositionValue) -> Option<i8> {
    let score = match value {
        PositionValue::Lines(lines) => lines.first().filter(|l| l.tablebase)?.score,
        PositionValue::Terminal(score) => *score,
    };
    Some(match score {
        Score::Mate(n) if n > 0 => 1,
        Score::Mate(_) => -1,
        Score::Cp(_) => 0,
    })
}

/// The exact result a move reached, for the side that made it.
fn table_result_after(after: &PositionValue) -> Option<i8> {
    table_result(after).map(|r| -r)
}

/// The judgement of one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    None,
    Brilliant,
    Good,
    Interesting,
    Inaccuracy,
    Mistake,
    Blunder,
}

impl Judgement {
    pub fn symbol(self) -> &'static str {
        match self {
            Judgement::None => "",
            Judgement::Brilliant => "!!",
            Judgement::Good => "!",
            Judgement::Interesting => "!?",
            Judgement::Inaccuracy => "?!",
            Judgement::Mistake => "?",
            Judgement::Blunder => "??",
        }
    }

    fn to_proto(self) -> v1::Judgement {
        match self {
            Judgement::None => v1::Judgement::Unspecified,
            Judgement::Brilliant => v1::Judgement::Brilliant,
            Judgement::Good => v1::Judgement::Good,
            Judgement::Interesting => v1::Judgement::Interesting,
            Judgement::Inaccuracy => v1::Judgement::Dubious,
            Judgement::Mistake => v1::Judgement::Mistake,
            Judgement::Blunder => v1::Judgement::Blunder,
        }
    }

    fn is_error(self) -> bool {
        matches!(
            self,
            Judgement::Inaccuracy | Judgement::Mistake | Judgement::Blunder
        )
    }
}

/// The verdict on one move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveVerdict {
    pub best_score: Score,
    pub played_score: Score,
    pub loss: f64,
    pub centipawn_loss: u32,
    pub judgement: Judgement,
    pub accuracy: f64,
    /// The best line, when the move played was not the best.
    pub better: Option<Vec<Move>>,
    /// The move ends the game (checkmate or stalemate): nothing to evaluate after it.
    pub ends_game: bool,
}

/// Judges move `m` played from `pos`, whose analysis is `before`; `after` is the analysis of
/// the position it led to.
pub fn judge(
    pos: &Position,
    m: Move,
    before: &PositionValue,
    after: &PositionValue,
) -> MoveVerdict {
    let lines: &[Line] = match before {
        PositionValue::Lines(l) => l,
        PositionValue::Terminal(_) => &[],
    };
    let best_score = before.score();
    let best_move = lines.first().and_then(|l| l.pv.first().copied());
    let own_line = lines.iter().find(|l| l.pv.first() == Some(&m));
    let played_score = if best_move == Some(m) {
        best_score
    } else if let Some(line) = own_line {
        line.score
    } else {
        negate(after.score())
    };
    let loss = (expected_score(best_score) - expected_score(played_score)).max(0.0);
    let centipawn_loss = (clamped_cp(best_score) - clamped_cp(played_score)).max(0) as u32;
    let sacrifice = !see_ge(pos, m, SACRIFICE_SEE + 1);
    let only_move = best_move == Some(m)
        && lines.get(1).is_some_and(|second| {
            expected_score(best_score) - expected_score(second.score) >= ONLY_MOVE_MARGIN
                || only_forced_mate(best_score, second.score)
        });
    // With tables, giving a table win away (or a table draw) is a blunder whatever the
    // score model makes of it.
    let table_drop = table_result(before)
        .zip(table_result_after(after))
        .is_some_and(|(was, now)| now < was);
    let judgement = if loss >= BLUNDER || table_drop {
        Judgement::Blunder
    } else if loss >= MISTAKE {
        Judgement::Mistake
    } else if loss >= INACCURACY {
        Judgement::Inaccuracy
    } else if only_move && sacrifice {
        Judgement::Brilliant
    } else if only_move {
        Judgement::Good
    } else if sacrifice && loss < INTERESTING_MAX_LOSS {
        Judgement::Interesting
    } else {
        Judgement::None
    };
    let better = match (best_move, lines.first()) {
        (Some(b), Some(line)) if b != m && loss > 0.0 => Some(line.pv.clone()),
        _ => None,
    };
    MoveVerdict {
        best_score,
        played_score,
        loss,
        centipawn_loss,
        judgement,
        accuracy: 100.0 * (-4.0 * loss).exp(),
        better,
        ends_game: matches!(after, PositionValue::Terminal(_)),
    }
}

/// Whether the best line forces mate and the second-best does not (however large its score).
fn only_forced_mate(best: Score, second: Score) -> bool {
    matches!(best, Score::Mate(n) if n > 0) && !matches!(second, Score::Mate(n) if n > 0)
}

/// Everything a review returns, before it goes on the wire.
pub fn build_response(
    game: &PgnGame,
    positions: &[Position],
    values: &[PositionValue],
    nodes: u64,
    time_ms: u64,
) -> v1::ReviewGameResponse {
    let moves: Vec<Move> = game.mainline().collect();
    let mut reviewed = Vec::with_capacity(moves.len());
    let mut players = [
        PlayerTally::new(Color::White, game.tag("White")),
        PlayerTally::new(Color::Black, game.tag("Black")),
    ];
    let opening = chess_knowledge::classify(&game.start, &moves);
    let mut annotated = PgnGame::new(game.start.clone());
    annotated.tags = game.tags.clone();
    annotated.result = game.result;
    annotated.set_tag("Annotator", "chess-search-service");
    if let Some(o) = opening.opening {
        annotated.set_tag("ECO", o.eco);
        annotated.set_tag("Opening", o.name);
    }
    for (i, &m) in moves.iter().enumerate() {
        let pos = &positions[i];
        let v = judge(pos, m, &values[i], &values[i + 1]);
        let mover = pos.turn();
        players[usize::from(mover == Color::Black)].add(&v);
        let best = v.better.as_ref();
        reviewed.push(v1::ReviewedMove {
            ply: i as u32 + 1,
            color: color_to_proto(mover) as i32,
            r#move: Some(move_to_proto(pos, m)),
            best_score: Some(score_to_proto(v.best_score)),
            played_score: Some(score_to_proto(v.played_score)),
            centipawn_loss: v.centipawn_loss,
            expected_score_loss: v.loss,
            judgement: v.judgement.to_proto() as i32,
            symbol: v.judgement.symbol().to_owned(),
            best_move: best.and_then(|l| l.first()).map(|&b| move_to_proto(pos, b)),
            best_line: best.map(|l| pv_to_proto(pos, l)).unwrap_or_default(),
            accuracy: v.accuracy,
        });
        annotated.root.nodes.push(annotate(pos, m, &v));
    }
    v1::ReviewGameResponse {
        moves: reviewed,
        white: Some(players[0].finish()),
        black: Some(players[1].finish()),
        annotated_pgn: annotated.to_pgn().unwrap_or_default(),
        nodes,
        time_ms,
        opening: Some(opening_to_proto(&opening)),
    }
}

/// `+0.35`, `-1.20`, `#3`, `#-2`: a score from White's point of view, as PGN comments write it.
fn white_eval(score_for_mover: Score, mover: Color) -> String {
    let s = if mover == Color::White {
        score_for_mover
    } else {
        match score_for_mover {
            Score::Cp(cp) => Score::Cp(-cp),
            Score::Mate(n) => Score::Mate(-n),
        }
    };
    match s {
        Score::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
        Score::Mate(n) => format!("#{n}"),
    }
}

fn annotate(pos: &Position, m: Move, v: &MoveVerdict) -> Node {
    let mover = pos.turn();
    let mut node = Node::new(m, pos.san(m));
    if let Some(nag) = nag_from_symbol(v.judgement.symbol()) {
        node.nags.push(nag);
    }
    if !v.ends_game {
        node.comments_after
            .push(format!("[%eval {}]", white_eval(v.played_score, mover)));
    }
    if let (Some(line), true) = (&v.better, v.judgement.is_error()) {
        let mut p = pos.clone();
        let mut var = PgnLine::default();
        for &b in line.iter().take(PGN_LINE_PLIES) {
            if !p.is_legal(b) {
                break;
            }
            var.nodes.push(Node::new(b, p.san(b)));
            p.play_unchecked(b);
        }
        if let Some(first) = var.nodes.first_mut() {
            first
                .comments_after
                .push(format!("[%eval {}]", white_eval(v.best_score, mover)));
            node.variations.push(var);
        }
    }
    node
}

struct PlayerTally {
    color: Color,
    name: String,
    moves: u32,
    accuracy: f64,
    cp_loss: u64,
    counts: [u32; 6],
}

impl PlayerTally {
    fn new(color: Color, name: Option<&str>) -> PlayerTally {
        PlayerTally {
            color,
            name: name.unwrap_or("").to_owned(),
            moves: 0,
            accuracy: 0.0,
            cp_loss: 0,
            counts: [0; 6],
        }
    }

    fn add(&mut self, v: &MoveVerdict) {
        self.moves += 1;
        self.accuracy += v.accuracy;
        self.cp_loss += u64::from(v.centipawn_loss);
        let slot = match v.judgement {
            Judgement::None => return,
            Judgement::Brilliant => 0,
            Judgement::Good => 1,
            Judgement::Interesting => 2,
            Judgement::Inaccuracy => 3,
            Judgement::Mistake => 4,
            Judgement::Blunder => 5,
        };
        self.counts[slot] += 1;
    }

    fn finish(&self) -> v1::PlayerReview {
        let n = f64::from(self.moves.max(1));
        v1::PlayerReview {
            color: color_to_proto(self.color) as i32,
            name: self.name.clone(),
            accuracy: if self.moves == 0 {
                100.0
            } else {
                self.accuracy / n
            },
            average_centipawn_loss: self.cp_loss as f64 / n,
            moves: self.moves,
            brilliant: self.counts[0],
            good: self.counts[1],
            interesting: self.counts[2],
            inaccuracies: self.counts[3],
            mistakes: self.counts[4],
            blunders: self.counts[5],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mv: Move, score: Score) -> Line {
        Line {
            multipv: 1,
            score,
            wdl: score.wdl(),
            depth: 10,
            seldepth: 12,
            nodes: 1000,
            nps: 1_000_000,
            time_ms: 1,
            pv: vec![mv],
            tablebase: false,
            tbhits: 0,
        }
    }

    fn table_line(mv: Move, score: Score) -> Line {
        Line {
            tablebase: true,
            ..line(mv, score)
        }
    }

    #[test]
    fn a_move_that_gives_a_table_win_or_draw_away_is_a_blunder() {
        // The values are given here, not searched: the rule is what is tested.
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/R3K3 w - - 0 1").unwrap();
        let best = pos.parse_san("Ra5+").unwrap();
        let played = pos.parse_san("Kd2").unwrap();
        let reply = Position::from_fen("8/8/8/4k3/8/8/3K4/R7 b - - 1 1")
            .unwrap()
            .parse_san("Kd4")
            .unwrap();
        let win = PositionValue::Lines(vec![table_line(best, Score::Mate(8))]);
        let drawn = PositionValue::Lines(vec![table_line(reply, Score::Cp(0))]);
        let v = judge(&pos, played, &win, &drawn);
        assert_eq!(v.judgement, Judgement::Blunder);
        // A slower table win is no error.
        let slower = PositionValue::Lines(vec![table_line(reply, Score::Mate(-9))]);
        let v = judge(&pos, played, &win, &slower);
        assert_eq!(v.judgement, Judgement::None);
        // A table draw into a table loss.
        let draw = PositionValue::Lines(vec![table_line(best, Score::Cp(0))]);
        let lost = PositionValue::Lines(vec![table_line(reply, Score::Mate(12))]);
        assert_eq!(
            judge(&pos, played, &draw, &lost).judgement,
            Judgement::Blunder
        );
        // Stalemating from a table win is a blunder too.
        let stalemate = PositionValue::Terminal(Score::Cp(0));
        assert_eq!(
            judge(&pos, played, &win, &stalemate).judgement,
            Judgement::Blunder
        );
        // Small drops are no error, from the search or the tables.
        let est = PositionValue::Lines(vec![line(best, Score::Cp(40))]);
        let est_after = PositionValue::Lines(vec![line(reply, Score::Cp(-20))]);
        assert_eq!(
            judge(&pos, played, &est, &est_after).judgement,
            Judgement::None
        );
        let tb_small = PositionValue::Lines(vec![table_line(best, Score::Cp(0))]);
        let tb_small_after = PositionValue::Lines(vec![table_line(reply, Score::Cp(0))]);
        assert_eq!(
            judge(&pos, played, &tb_small, &tb_small_after).judgement,
            Judgement::None
        );
    }

    #[test]
    fn negation_counts_mate_distance_from_the_mover() {
        assert_eq!(negate(Score::Mate(0)), Score::Mate(1));
        assert_eq!(negate(Score::Mate(-2)), Score::Mate(3));
        assert_eq!(negate(Score::Mate(2)), Score::Mate(-2));
        assert_eq!(negate(Score::Cp(35)), Score::Cp(-35));
    }

    #[test]
    fn a_move_that_throws_away_a_won_position_is_a_blunder() {
        let pos = Position::startpos();
        let best = pos.parse_san("e4").unwrap();
        let played = pos.parse_san("f3").unwrap();
        let before = PositionValue::Lines(vec![line(best, Score::Cp(300))]);
        let after = PositionValue::Lines(vec![line(
            Position::startpos().parse_san("e4").unwrap(),
            Score::Cp(100),
        )]);
        let v = judge(&pos, played, &before, &after);
        assert_eq!(v.played_score, Score::Cp(-100));
        assert_eq!(v.centipawn_loss, 400);
        assert_eq!(v.judgement, Judgement::Blunder);
        assert!(v.accuracy < 30.0);
        assert_eq!(v.better.as_deref(), Some(&[best][..]));
    }

    #[test]
    fn thresholds_separate_the_judgements() {
        let pos = Position::startpos();
        let best = pos.parse_san("e4").unwrap();
        let played = pos.parse_san("a3").unwrap();
        let before = PositionValue::Lines(vec![line(best, Score::Cp(0))]);
        let judged = |after_cp: i32| {
            judge(
                &pos,
                played,
                &before,
                &PositionValue::Lines(vec![line(best, Score::Cp(after_cp))]),
            )
        };
        // Small losses: nothing to say.
        assert_eq!(judged(10).judgement, Judgement::None);
        let mut last = 0.0;
        let mut seen = Vec::new();
        for cp in (0..=600).step_by(10) {
            let v = judged(cp);
            assert!(v.loss >= last, "loss grows with the opponent's gain");
            last = v.loss;
            if seen.last() != Some(&v.judgement) {
                seen.push(v.judgement);
            }
        }
        assert_eq!(
            seen,
            [
                Judgement::None,
                Judgement::Inaccuracy,
                Judgement::Mistake,
                Judgement::Blunder
            ]
        );
    }

    #[test]
    fn the_only_good_move_is_marked_and_a_sacrifice_makes_it_brilliant() {
        // Rd8# is the only move that wins; everything else is level.
        let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
        let mate = pos.parse_san("Rd8#").unwrap();
        let other = pos.parse_san("Kf1").unwrap();
        let mut second = line(other, Score::Cp(0));
        second.multipv = 2;
        let before = PositionValue::Lines(vec![line(mate, Score::Mate(1)), second]);
        let after = PositionValue::Terminal(Score::Mate(0));
        let v = judge(&pos, mate, &before, &after);
        assert_eq!(v.judgement, Judgement::Good);
        assert_eq!(v.played_score, Score::Mate(1));

        // Bxh7+ gives a bishop for a pawn on a defended square: a sacrifice.
        let pos = Position::from_fen(
            "r1bq1rk1/pppn1ppp/4pn2/3p4/1b1P4/2NBPN2/PPP2PPP/R1BQK2R w KQ - 0 1",
        )
        .unwrap();
        let sac = pos.parse_san("Bxh7+").unwrap();
        let quiet = pos.parse_san("a3").unwrap();
        let mut second = line(quiet, Score::Cp(-200));
        second.multipv = 2;
        let before = PositionValue::Lines(vec![line(sac, Score::Cp(250)), second]);
        let v = judge(&pos, sac, &before, &PositionValue::Terminal(Score::Cp(0)));
        assert_eq!(v.judgement, Judgement::Brilliant);
        // Not the only move (the second is as good): merely interesting.
        let mut second = line(quiet, Score::Cp(240));
        second.multipv = 2;
        let before = PositionValue::Lines(vec![line(sac, Score::Cp(250)), second]);
        let v = judge(&pos, sac, &before, &PositionValue::Terminal(Score::Cp(0)));
        assert_eq!(v.judgement, Judgement::Interesting);
    }

    #[test]
    fn a_sacrifice_that_alone_forces_mate_is_brilliant() {
        // The Opera game (Morphy - Duke of Brunswick and Count Isouard, Paris 1858) before
        // 16.Qb8+: the queen is given for a knight, and only it mates (17.Rd8#); the engine's
        // second line wins too, but by a score, not by force.
        let pos =
            Position::from_fen("4kb1r/p2n1ppp/4q3/4p1B1/4P3/1Q6/PPP2PPP/2KR4 w k - 1 16").unwrap();
        let sac = pos.parse_san("Qb8+").unwrap();
        let other = pos.parse_san("Qb5").unwrap();
        let judged = |second_score: Score| {
            let mut second = line(other, second_score);
            second.multipv = 2;
            let before = PositionValue::Lines(vec![line(sac, Score::Mate(2)), second]);
            let after = PositionValue::Lines(vec![line(sac, Score::Mate(-1))]);
            judge(&pos, sac, &before, &after).judgement
        };
        assert_eq!(judged(Score::Cp(450)), Judgement::Brilliant);
        assert_eq!(judged(Score::Cp(2000)), Judgement::Brilliant);
        // Another move mates as well (if more slowly): not the only one, merely interesting.
        assert_eq!(judged(Score::Mate(3)), Judgement::Interesting);
        // A quiet move that alone forces mate is the only move, without the sacrifice's `!!`.
        let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
        let mate = pos.parse_san("Rd8#").unwrap();
        let mut second = line(pos.parse_san("Kf1").unwrap(), Score::Cp(700));
        second.multipv = 2;
        let before = PositionValue::Lines(vec![line(mate, Score::Mate(1)), second]);
        let v = judge(
            &pos,
            mate,
            &before,
            &PositionValue::Terminal(Score::Mate(0)),
        );
        assert_eq!(v.judgement, Judgement::Good);
    }

    #[test]
    fn a_move_that_mates_has_no_evaluation_after_it() {
        let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
        let mate = pos.parse_san("Rd8#").unwrap();
        let before = PositionValue::Lines(vec![line(mate, Score::Mate(1))]);
        let v = judge(
            &pos,
            mate,
            &before,
            &PositionValue::Terminal(Score::Mate(0)),
        );
        assert!(v.ends_game);
        let node = annotate(&pos, mate, &v);
        assert!(
            node.comments_after.iter().all(|c| !c.contains("%eval")),
            "{:?}",
            node.comments_after
        );
        // A move after which the game goes on keeps its evaluation.
        let quiet = pos.parse_san("Kf1").unwrap();
        let v = judge(
            &pos,
            quiet,
            &PositionValue::Lines(vec![line(mate, Score::Mate(1))]),
            &PositionValue::Lines(vec![line(mate, Score::Cp(0))]),
        );
        assert!(!v.ends_game);
        assert!(annotate(&pos, quiet, &v).comments_after[0].contains("[%eval +0.00]"));
    }

    #[test]
    fn evaluations_are_written_from_whites_side() {
        assert_eq!(white_eval(Score::Cp(35), Color::White), "+0.35");
        assert_eq!(white_eval(Score::Cp(35), Color::Black), "-0.35");
        assert_eq!(white_eval(Score::Mate(2), Color::Black), "#-2");
        assert_eq!(white_eval(Score::Mate(1), Color::White), "#1");
    }
}
