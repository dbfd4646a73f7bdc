//! Staged move ordering.
//!
//! The hash move is looked up and checked on its own and handed out first; only when the node
//! goes on are the legal moves generated, once, and handed out in stages so that a cutoff early
//! on saves the scoring and sorting of the rest: captures and queen promotions by
//! MVV-LVA (most valuable victim, least valuable attacker) whose exchange does not lose material;
//! the two killers and the counter move; the remaining quiets by history, raised for a piece
//! leaving an attack by a cheaper one and lowered for one walking into it; and last the captures
//! that lose material by SEE.

use chess_rules::{
    Bitboard, Move, MoveList, Position, Role, bishop_attacks, king_attacks, knight_attacks,
    pawn_attacks, pawn_attacks_set, queen_attacks, rook_attacks,
};

use crate::history::{History, NO_PIECE_TO, Prev};
use crate::see::{SEE_VALUE, quiet_see_ge, see_ge};
use crate::tt::unpack_move;

/// Quiets picked one by one before the rest are sorted.
const SELECT_FIRST: usize = 8;
/// The score of a quiet already handed out (below every real score).
const TAKEN: i32 = i32::MIN;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TtMove,
    ScoreCaptures,
    GoodCaptures,
    Killer1,
    Killer2,
    Counter,
    ScoreQuiets,
    Quiets,
    BadCaptures,
    QuietChecks,
    Done,
}

/// True for captures (en passant included) and queen promotions.
#[inline]
pub(crate) fn is_tactical(pos: &Position, m: Move) -> bool {
    pos.by_color(!pos.turn()).contains(m.to())
        || m.is_en_passant()
        || m.promotion() == Some(Role::Queen)
}

/// The role a move captures, if any.
#[inline]
pub(crate) fn captured_role(pos: &Position, m: Move) -> Option<Role> {
    if m.is_en_passant() {
        Some(Role::Pawn)
    } else if pos.by_color(!pos.turn()).contains(m.to()) {
        pos.role_at(m.to())
    } else {
        None
    }
}

/// Squares from which a piece of the side to move would check the enemy king, by role.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckSquares([Bitboard; 6]);

impl CheckSquares {
    pub(crate) fn new(pos: &Position) -> CheckSquares {
        let them = !pos.turn();
        let ksq = pos.king_of(them);
        let occ = pos.occupied();
        let diag = bishop_attacks(ksq, occ);
        let orth = rook_attacks(ksq, occ);
        CheckSquares([
            pawn_attacks(them, ksq),
            knight_attacks(ksq),
            diag,
            orth,
            diag | orth,
            Bitboard::EMPTY,
        ])
    }

    /// True when `m` checks directly (discovered checks are not seen).
    #[inline]
    pub(crate) fn gives_check(&self, m: Move) -> bool {
        self.0[m.role_after().index()].contains(m.to())
    }
}

/// Squares the side not to move attacks with its pawns, with pieces worth at most a minor, with
/// pieces worth at most a rook (where a piece of ours would be attacked by a cheaper one), and
/// with anything.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Threats {
    by_pawn: Bitboard,
    by_minor: Bitboard,
    by_rook: Bitboard,
    /// Every square the enemy attacks.
    pub(crate) all: Bitboard,
}

impl Threats {
    pub(crate) fn new(pos: &Position) -> Threats {
        let them = !pos.turn();
        let occ = pos.occupied();
        let by_pawn = pawn_attacks_set(pos.pieces(them, Role::Pawn), them);
        let by_minor = pos
            .pieces(them, Role::Knight)
            .fold(by_pawn, |b, sq| b | knight_attacks(sq));
        let by_minor = pos
            .pieces(them, Role::Bishop)
            .fold(by_minor, |b, sq| b | bishop_attacks(sq, occ));
        let by_rook = pos
            .pieces(them, Role::Rook)
            .fold(by_minor, |b, sq| b | rook_attacks(sq, occ));
        let all = pos
            .pieces(them, Role::Queen)
            .fold(by_rook, |b, sq| b | queen_attacks(sq, occ))
            | king_attacks(pos.king_of(them));
        Threats {
            by_pawn,
            by_minor,
            by_rook,
            all,
        }
    }

    /// Ordering bonus for a quiet move that takes a piece out of attack by a cheaper one, and
    /// the same as a malus for one that walks into such an attack.
    #[inline]
    fn escape(&self, m: Move) -> i32 {
        let (danger, worth) = match m.role() {
            Role::Queen => (self.by_rook, 32_768),
            Role::Rook => (self.by_minor, 16_384),
            Role::Knight | Role::Bishop => (self.by_pawn, 12_288),
            Role::Pawn | Role::King => return 0,
        };
        match (danger.contains(m.from()), danger.contains(m.to())) {
            (true, false) => worth,
            (false, true) => -worth,
            _ => 0,
        }
    }
}

/// The ordering score of a quiet move (not a promotion): its history; a direct check early
/// unless its exchange loses more than 75 cp (a check that hangs the checking piece is no
/// threat); a piece leaving an attack by a cheaper one early and one walking into it late.
#[inline]
fn quiet_order(
    pos: &Position,
    hist: &History,
    m: Move,
    checks: &CheckSquares,
    threats: &Threats,
    prev: Prev,
) -> i32 {
    let check = checks.gives_check(m) && quiet_see_ge(pos, m, threats.all, -75);
    hist.quiet(pos.turn(), m, threats.all, prev)
        + if check { 16_384 } else { 0 }
        + threats.escape(m)
}

pub(crate) struct MovePicker {
    /// Empty until the first stage after the hash move generates them.
    moves: MoveList,
    scores: [i32; MoveList::CAPACITY],
    stage: Stage,
    tt_packed: u16,
    /// Moves already handed out by a special stage (hash move, killers, counter).
    given: [Move; 4],
    n_given: usize,
    killers: [Move; 2],
    counter: Move,
    /// Tactical moves are `moves[..split]`, quiets `moves[split..]`.
    split: usize,
    next: usize,
    bad: [u8; MoveList::CAPACITY],
    n_bad: usize,
    next_bad: usize,
    /// Quiescence outside check: tactical moves only, no SEE split.
    captures_only: bool,
    /// Quiescence: also quiet moves that give direct check, after the captures.
    quiet_checks: bool,
    skip_quiets: bool,
    /// Quiets handed out by selection before the rest are sorted.
    picked: usize,
    /// End of the sorted quiets once they are sorted.
    end: usize,
    prev: Prev,
    /// The enemy's attacks, computed when the first quiet move needs them.
    threats: Option<Threats>,
    /// Where our pieces would give check, computed when first asked for.
    checks: Option<CheckSquares>,
}

impl MovePicker {
    /// A picker for the main search.
    pub(crate) fn new(tt_move: u16, killers: [Move; 2], counter: Move, prev: Prev) -> MovePicker {
        MovePicker::build(tt_move, killers, counter, prev)
    }

    /// The enemy's attacks in `pos` (the picker's position), computed once: nodes that end
    /// on the hash move or a capture never need them.
    #[inline]
    pub(crate) fn threats(&mut self, pos: &Position) -> Threats {
        *self.threats.get_or_insert_with(|| Threats::new(pos))
    }

    /// The squares from which our pieces would check the enemy king in `pos` (the picker's
    /// position), computed once a node for the ordering, the search's pruning and the
    /// quiescence search's quiet checks and delta pruning alike.
    #[inline]
    pub(crate) fn check_squares(&mut self, pos: &Position) -> CheckSquares {
        *self.checks.get_or_insert_with(|| CheckSquares::new(pos))
    }

    fn build(tt_move: u16, killers: [Move; 2], counter: Move, prev: Prev) -> MovePicker {
        MovePicker {
            moves: MoveList::new(),
            scores: [0; MoveList::CAPACITY],
            stage: Stage::TtMove,
            tt_packed: tt_move,
            given: [Move::NULL; 4],
            n_given: 0,
            killers,
            counter,
            split: 0,
            next: 0,
            bad: [0; MoveList::CAPACITY],
            n_bad: 0,
            next_bad: 0,
            captures_only: false,
            quiet_checks: false,
            skip_quiets: false,
            picked: 0,
            end: 0,
            prev,
            threats: None,
            checks: None,
        }
    }

    /// A picker for quiescence: tactical moves only (and quiet checks when `checks`), or every
    /// evasion when in check.
    pub(crate) fn quiescence(tt_move: u16, in_check: bool, checks: bool) -> MovePicker {
        // Out of check and without quiet checks only the captures and promotions are wanted;
        // they come in the full list's order, so the search is the same either way.
        let mut p = MovePicker::build(tt_move, [Move::NULL; 2], Move::NULL, [NO_PIECE_TO; 3]);
        p.captures_only = !in_check;
        p.quiet_checks = !in_check && checks;
        p
    }

    /// Stop handing out quiet moves (late-move and futility pruning); killers included.
    pub(crate) fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    #[inline]
    fn was_given(&self, m: Move) -> bool {
        self.given[..self.n_given].contains(&m)
    }

    #[inline]
    fn give(&mut self, m: Move) -> Option<Move> {
        self.given[self.n_given] = m;
        self.n_given += 1;
        Some(m)
    }

    /// A quiet move from a killer or counter slot, if legal here and not given yet.
    fn special_quiet(&mut self, m: Move) -> Option<Move> {
        if m.is_null() || self.skip_quiets || self.was_given(m) {
            return None;
        }
        if self.moves[self.split..].contains(&m) {
            self.give(m)
        } else {
            None
        }
    }

    /// The next quiet move, best history first, ties in list order (the order of a stable
    /// sort). Pruning and cutoffs usually end the quiets after a few, so the first
    /// [`SELECT_FIRST`] are picked by selection (a taken one's score becomes `TAKEN`); only a
    /// node that goes on sorts the rest, which keeps the order a full sort would give.
    fn next_quiet(&mut self) -> Option<Move> {
        let len = self.moves.len();
        if self.picked < SELECT_FIRST {
            let mut best = None;
            let mut best_score = TAKEN;
            for i in self.split..len {
                if self.scores[i] > best_score {
                    best = Some(i);
                    best_score = self.scores[i];
                }
            }
            let i = best?;
            self.scores[i] = TAKEN;
            self.picked += 1;
            return Some(self.moves[i]);
        }
        if self.picked == SELECT_FIRST {
            // Close up the quiets not taken, in list order, then insertion-sort them (stable).
            let mut w = self.split;
            for i in self.split..len {
                if self.scores[i] != TAKEN {
                    self.scores[w] = self.scores[i];
                    self.moves.as_mut_slice()[w] = self.moves[i];
                    w += 1;
                }
            }
            for i in self.split + 1..w {
                let (m, s) = (self.moves[i], self.scores[i]);
                let mut j = i;
                while j > self.split && self.scores[j - 1] < s {
                    self.scores[j] = self.scores[j - 1];
                    self.moves.as_mut_slice()[j] = self.moves[j - 1];
                    j -= 1;
                }
                self.scores[j] = s;
                self.moves.as_mut_slice()[j] = m;
            }
            self.next = self.split;
            self.end = w;
            self.picked += 1;
        }
        if self.next >= self.end {
            return None;
        }
        let m = self.moves[self.next];
        self.next += 1;
        Some(m)
    }

    pub(crate) fn next(&mut self, pos: &Position, hist: &History) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::ScoreCaptures;
                    if let Some((from, to, promotion)) = unpack_move(self.tt_packed)
                        && let Some(m) = pos.find_move(from, to, promotion)
                        && (!self.captures_only || is_tactical(pos, m))
                    {
                        return self.give(m);
                    }
                }
                Stage::ScoreCaptures => {
                    // Only captures and promotions are wanted in quiescence out of check
                    // without quiet checks.
                    if self.captures_only && !self.quiet_checks {
                        self.moves = pos.legal_tactical_moves();
                    } else {
                        pos.legal_moves_into(&mut self.moves);
                    }
                    // Partition: tactical moves to the front.
                    let list = self.moves.as_mut_slice();
                    let mut split = 0;
                    for i in 0..list.len() {
                        if is_tactical(pos, list[i]) {
                            list.swap(i, split);
                            split += 1;
                        }
                    }
                    self.split = split;
                    let us = pos.turn();
                    for i in 0..split {
                        let m = self.moves[i];
                        let victim = captured_role(pos, m);
                        let mut s = victim.map_or(0, |v| {
                            SEE_VALUE[v.index()] * 8 + hist.capture(us, m, v) / 64
                        });
                        if m.promotion() == Some(Role::Queen) {
                            s += SEE_VALUE[Role::Queen.index()] * 8;
                        }
                        self.scores[i] = s - m.role().index() as i32;
                    }
                    self.next = 0;
                    self.stage = Stage::GoodCaptures;
                }
                Stage::GoodCaptures => {
                    if self.next >= self.split {
                        self.stage = if self.quiet_checks {
                            self.next = self.split;
                            Stage::QuietChecks
                        } else if self.captures_only {
                            Stage::Done
                        } else {
                            Stage::Killer1
                        };
                        continue;
                    }
                    // Selection sort: captures are few and a cutoff usually comes early.
                    let mut best = self.next;
                    for i in self.next + 1..self.split {
                        if self.scores[i] > self.scores[best] {
                            best = i;
                        }
                    }
                    self.moves.as_mut_slice().swap(self.next, best);
                    self.scores.swap(self.next, best);
                    let i = self.next;
                    let m = self.moves[i];
                    self.next += 1;
                    if self.was_given(m) {
                        continue;
                    }
                    if !self.captures_only && !see_ge(pos, m, 0) {
                        self.bad[self.n_bad] = i as u8;
                        self.n_bad += 1;
                        continue;
                    }
                    return Some(m);
                }
                Stage::Killer1 => {
                    self.stage = Stage::Killer2;
                    if let Some(m) = self.special_quiet(self.killers[0]) {
                        return Some(m);
                    }
                }
                Stage::Killer2 => {
                    self.stage = Stage::Counter;
                    if let Some(m) = self.special_quiet(self.killers[1]) {
                        return Some(m);
                    }
                }
                Stage::Counter => {
                    self.stage = Stage::ScoreQuiets;
                    if let Some(m) = self.special_quiet(self.counter) {
                        return Some(m);
                    }
                }
                Stage::ScoreQuiets => {
                    self.stage = Stage::Quiets;
                    if self.skip_quiets {
                        continue;
                    }
                    let len = self.moves.len();
                    let checks = self.check_squares(pos);
                    let threats = self.threats(pos);
                    for i in self.split..len {
                        let m = self.moves[i];
                        // Underpromotions last.
                        self.scores[i] = if m.promotion().is_some() {
                            -1_000_000
                        } else {
                            quiet_order(pos, hist, m, &checks, &threats, self.prev)
                        };
                    }
                }
                Stage::Quiets => {
                    if self.skip_quiets {
                        self.stage = Stage::BadCaptures;
                        continue;
                    }
                    let Some(m) = self.next_quiet() else {
                        self.stage = Stage::BadCaptures;
                        continue;
                    };
                    if !self.was_given(m) {
                        return Some(m);
                    }
                }
                Stage::BadCaptures => {
                    if self.next_bad >= self.n_bad {
                        self.stage = Stage::Done;
                        continue;
                    }
                    let i = self.bad[self.next_bad] as usize;
                    self.next_bad += 1;
                    return Some(self.moves[i]);
                }
                Stage::QuietChecks => {
                    let checks = self.check_squares(pos);
                    while self.next < self.moves.len() {
                        let m = self.moves[self.next];
                        self.next += 1;
                        if m.promotion().is_none() && checks.gives_check(m) && !self.was_given(m) {
                            return Some(m);
                        }
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tt::pack_move;

    fn all_moves(pos: &Position, tt: u16, killers: [Move; 2]) -> Vec<Move> {
        let hist = History::new();
        let mut p = MovePicker::new(tt, killers, Move::NULL, [NO_PIECE_TO; 3]);
        let mut out = Vec::new();
        while let Some(m) = p.next(pos, &hist) {
            out.push(m);
        }
        out
    }

    #[test]
    fn every_legal_move_exactly_once() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ];
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            let legal = pos.legal_moves();
            let quiet = legal
                .iter()
                .copied()
                .find(|&m| !is_tactical(&pos, m))
                .unwrap();
            let tt = pack_move(legal[legal.len() / 2]);
            let mut got = all_moves(&pos, tt, [quiet, Move::NULL]);
            assert_eq!(got[0], legal[legal.len() / 2], "{fen}");
            got.sort_by_key(|m| pack_move(*m));
            let mut want: Vec<Move> = legal.iter().copied().collect();
            want.sort_by_key(|m| pack_move(*m));
            assert_eq!(got, want, "{fen}");
        }
    }

    #[test]
    fn good_captures_before_quiets_before_bad_captures() {
        // The queen can take an undefended rook (good) or a pawn defended by a pawn (bad).
        let pos = Position::from_fen("4k3/8/2p5/3p4/5r2/8/3Q4/4K3 w - - 0 1").unwrap();
        let moves = all_moves(&pos, 0, [Move::NULL; 2]);
        assert_eq!(moves[0].to_string(), "d2f4");
        assert_eq!(
            moves.last().unwrap().to_string(),
            "d2d5",
            "the losing capture comes last"
        );
    }

    #[test]
    fn quiescence_yields_captures_only() {
        let pos = Position::from_fen("4k3/8/2p5/3p4/5r2/8/3Q4/4K3 w - - 0 1").unwrap();
        let hist = History::new();
        let mut p = MovePicker::quiescence(0, false, false);
        let mut got = Vec::new();
        while let Some(m) = p.next(&pos, &hist) {
            got.push(m.to_string());
        }
        assert_eq!(got, ["d2f4", "d2d5"]);
    }

    #[test]
    fn quiets_come_best_history_first_past_the_selected_ones() {
        // Kiwipete: about 40 quiet moves, far more than are picked by selection.
        let pos = Position::from_fen(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        )
        .unwrap();
        let us = pos.turn();
        let prev = [NO_PIECE_TO; 3];
        let quiets: Vec<Move> = pos
            .legal_moves()
            .iter()
            .copied()
            .filter(|&m| !is_tactical(&pos, m) && m.promotion().is_none())
            .collect();
        assert!(quiets.len() > 3 * SELECT_FIRST);
        let checks = CheckSquares::new(&pos);
        let threats = Threats::new(&pos);
        let score = |hist: &History, m: Move| quiet_order(&pos, hist, m, &checks, &threats, prev);
        // Scores in a few groups, so that ties fall before, across and after the switch.
        let mut hist = History::new();
        for (i, &m) in quiets.iter().enumerate() {
            hist.update_quiet(us, m, threats.all, prev, [900, -400, 0, 1500, 300][i % 5]);
        }
        let mut p = MovePicker::new(0, [Move::NULL; 2], Move::NULL, prev);
        let mut got = Vec::new();
        while let Some(m) = p.next(&pos, &hist) {
            if quiets.contains(&m) {
                got.push(m);
            }
        }
        assert_eq!(got.len(), quiets.len(), "each quiet once");
        for w in got.windows(2) {
            assert!(
                score(&hist, w[0]) >= score(&hist, w[1]),
                "{} ({}) before {} ({})",
                w[0],
                score(&hist, w[0]),
                w[1],
                score(&hist, w[1])
            );
        }
    }

    #[test]
    fn quiets_out_of_attack_first_into_attack_last() {
        // The knight on e4 is attacked by the pawn on d5: its eight moves escape and come
        // first. The rook's moves to a5 and a7 walk into the black knight's attack and come
        // last. (No move gives check, there is nothing to capture, the history is empty.)
        let pos = Position::from_fen("8/8/2n4k/3p4/4N3/8/8/R3K3 w - - 0 1").unwrap();
        let quiets: Vec<String> = all_moves(&pos, 0, [Move::NULL; 2])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(quiets.len(), 8 + 10 + 5, "{quiets:?}");
        assert!(
            quiets[..8].iter().all(|m| m.starts_with("e4")),
            "{quiets:?}"
        );
        let mut last: Vec<&str> = quiets[21..].iter().map(String::as_str).collect();
        last.sort_unstable();
        assert_eq!(last, ["a1a5", "a1a7"], "{quiets:?}");
    }
}
