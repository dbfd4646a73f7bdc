//! Helpmate search: both sides play to help the intended winner mate. Any line it finds is a
//! proof of winnability; failing to find one proves nothing, so the search is free to be
//! greedy.
//!
//! Two passes share a node budget. The first is iterative deepening over every move, with a
//! transposition table of depths already searched in vain, so short mates (and
//! compositions where only one exact line works) are found whatever they look like. The
//! second is a deep, greedy depth-first walk that never expands a position twice and tries
//! first the moves that drive towards a mating pattern: the winner's pieces close in on the
//! losing king, the losing king heads for an edge and a corner near the winner's king, the
//! loser's own pieces gather round their king (mate by a minor piece needs them there as
//! blockers), pawns run to promote (under-promotions included).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use chess_rules::{Bitboard, Color, Move, MoveList, Position, Role, Square};

/// Zobrist keys are already uniformly random: hash them as they are.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Table = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

pub(super) struct Search {
    winner: Color,
    pub(super) nodes: u64,
    budget: u64,
    aborted: bool,
    /// Position key -> the most plies a search from it has failed to mate in.
    table: Table,
    /// The proof, last move first while it is being unwound.
    line: Vec<Move>,
    /// Cut off positions where material alone rules a mate out (off only to cross-check
    /// that rule).
    prune: bool,
}

pub(super) enum Found {
    Mate(Vec<Move>),
    /// No mate within the search.
    NoMate,
    /// Every reachable position was searched: no mate exists (`positions` of them).
    Exhausted {
        positions: u64,
    },
}

impl Search {
    pub(super) fn new(winner: Color, budget: u64) -> Search {
        Search {
            winner,
            nodes: 0,
            budget,
            aborted: false,
            table: Table::default(),
            line: Vec::new(),
            prune: true,
        }
    }

    pub(super) fn winner(&self) -> Color {
        self.winner
    }

    /// The same search without the material cut-offs.
    pub(super) fn without_pruning(mut self) -> Search {
        self.prune = false;
        self
    }

    /// Iterative deepening up to `max_plies`, stopping at `budget` nodes in all.
    pub(super) fn deepening(&mut self, pos: &Position, max_plies: u32, budget: u64) -> Found {
        let stop = self.nodes.saturating_add(budget).min(self.budget);
        let first = if pos.turn() == self.winner { 1 } else { 2 };
        let mut depth = first;
        while depth <= max_plies {
            self.aborted = false;
            if self.exhaustive(pos, depth, stop) {
                return Found::Mate(self.take_line());
            }
            if self.aborted {
                return Found::NoMate;
            }
            depth += 2;
        }
        Found::NoMate
    }

    /// A greedy walk up to `max_plies` deep that expands each position at most once.
    pub(super) fn greedy(&mut self, pos: &Position, max_plies: u32, budget: u64) -> Found {
        let stop = self.nodes.saturating_add(budget).min(self.budget);
        self.aborted = false;
        let mut seen = Table::default();
        if self.walk(pos, max_plies, stop, &mut seen) {
            return Found::Mate(self.take_line());
        }
        Found::NoMate
    }

    fn take_line(&mut self) -> Vec<Move> {
        let mut line = std::mem::take(&mut self.line);
        line.reverse();
        line
    }

    fn count(&mut self, stop: u64) -> bool {
        if self.nodes >= stop {
            self.aborted = true;
            return false;
        }
        self.nodes += 1;
        true
    }

    /// A mate in one for the winner, to be tried before anything else at every node.
    fn mate_in_one(&mut self, pos: &Position, moves: &MoveList, stop: u64) -> Option<Move> {
        for &m in moves.iter() {
            if !self.count(stop) {
                return None;
            }
            let mut next = pos.clone();
            next.play_unchecked(m);
            if next.is_checkmate() {
                return Some(m);
            }
        }
        None
    }

    fn exhaustive(&mut self, pos: &Position, depth: u32, stop: u64) -> bool {
        if depth == 0 || !self.count(stop) {
            return false;
        }
        let us = pos.turn();
        if us != self.winner && depth < 2 {
            return false;
        }
        let key = pos.zobrist();
        if self.table.get(&key).is_some_and(|&d| d >= depth) {
            return false;
        }
        if self.prune && hopeless(pos, self.winner) {
            self.table.insert(key, u32::MAX);
            return false;
        }
        let moves = pos.legal_moves();
        if us == self.winner
            && let Some(m) = self.mate_in_one(pos, &moves, stop)
        {
            self.line.push(m);
            return true;
        }
        if self.aborted {
            return false;
        }
        if depth <= 2 {
            // The winner already had its one move, or the loser moves and the winner then
            // has only mate in one, which the child looks for.
            if us == self.winner {
                self.table.insert(key, depth);
                return false;
            }
        }
        let ordered = order(pos, self.winner, &moves);
        for m in ordered {
            let mut next = pos.clone();
            next.play_unchecked(m);
            if self.exhaustive(&next, depth - 1, stop) {
                self.line.push(m);
                return true;
            }
            if self.aborted {
                return false;
            }
        }
        self.table.insert(key, depth);
        false
    }

    fn walk(&mut self, pos: &Position, depth: u32, stop: u64, seen: &mut Table) -> bool {
        if depth == 0 || !self.count(stop) {
            return false;
        }
        let key = pos.zobrist();
        if seen.insert(key, depth).is_some() {
            return false;
        }
        if self.prune && hopeless(pos, self.winner) {
            return false;
        }
        let moves = pos.legal_moves();
        if pos.turn() == self.winner
            && let Some(m) = self.mate_in_one(pos, &moves, stop)
        {
            self.line.push(m);
            return true;
        }
        if self.aborted {
            return false;
        }
        for m in order(pos, self.winner, &moves) {
            let mut next = pos.clone();
            next.play_unchecked(m);
            if self.walk(&next, depth - 1, stop, seen) {
                self.line.push(m);
                return true;
            }
            if self.aborted {
                return false;
            }
        }
        false
    }
}

/// Positions from which the winner surely cannot mate, by material alone: a lone king; or a
/// single minor piece (or bishops all on one colour) against a king whose side has nothing
/// that could block an escape square.
pub(super) fn hopeless(pos: &Position, winner: Color) -> bool {
    let ours = pos.by_color(winner) & !pos.by_role(Role::King);
    if ours.is_empty() {
        return true;
    }
    let heavy = pos.by_role(Role::Pawn) | pos.by_role(Role::Rook) | pos.by_role(Role::Queen);
    if ours.intersects(heavy) {
        return false;
    }
    let theirs = pos.by_color(!winner) & !pos.by_role(Role::King);
    if ours.count() == 1 && theirs.is_empty() {
        return true;
    }
    if lone_bishop_against_heavy_pieces(pos, winner) {
        return true;
    }
    let knights = pos.by_role(Role::Knight);
    if ours.intersects(knights) || theirs.intersects(heavy | knights) {
        return false;
    }
    // Kings and bishops only, every bishop on squares of one colour.
    let bishops = pos.by_role(Role::Bishop);
    (bishops & Bitboard::LIGHT_SQUARES).is_empty() || (bishops & Bitboard::DARK_SQUARES).is_empty()
}

/// A single bishop (and the king) against rooks and queens only, no pawns anywhere. The check
/// comes along a diagonal through a square `d` next to the losing king (or from `d` itself).
/// Of the king's two orthogonal neighbours that touch `d`, the winning king cannot cover both
/// (the only squares next to both are the king's own and `d`) and the bishop neither, so a rook
/// or queen of the loser stands on one: it is next to `d` in a line, so it can always block the
/// check or take the bishop, and nothing can pin it (a bishop pins along diagonals only). No
/// pawn means no promotion, so the material only shrinks.
pub(super) fn lone_bishop_against_heavy_pieces(pos: &Position, winner: Color) -> bool {
    let ours = pos.by_color(winner) & !pos.by_role(Role::King);
    let theirs = pos.by_color(!winner) & !pos.by_role(Role::King);
    ours.count() == 1
        && ours.intersects(pos.by_role(Role::Bishop))
        && theirs.has_any()
        && (theirs & !(pos.by_role(Role::Rook) | pos.by_role(Role::Queen))).is_empty()
}

fn edge_distance(sq: Square) -> i32 {
    let f = sq.file() as i32;
    let r = sq.rank() as i32;
    f.min(7 - f).min(r).min(7 - r)
}

fn distance(a: Square, b: Square) -> i32 {
    a.distance(b) as i32
}

/// The moves, most promising first for a helpmate by `winner`.
fn order(pos: &Position, winner: Color, moves: &MoveList) -> Vec<Move> {
    let us = pos.turn();
    let their_king = pos.king_of(!winner);
    let our_king = pos.king_of(winner);
    let mut scored: Vec<(i32, Move)> = moves
        .iter()
        .map(|&m| {
            let from = m.from();
            let to = m.to();
            let captured = if m.is_en_passant() {
                Some(Role::Pawn)
            } else {
                pos.role_at(to).filter(|_| pos.color_at(to) == Some(!us))
            };
            let mut s = 0;
            if us == winner {
                match m.role() {
                    Role::King => {
                        s += 4 * (distance(from, their_king) - distance(to, their_king));
                    }
                    Role::Pawn => {
                        s += 12;
                        s += match m.promotion() {
                            Some(Role::Queen) => 400,
                            Some(Role::Rook) => 300,
                            Some(Role::Knight) => 250,
                            Some(Role::Bishop) => 200,
                            _ => 0,
                        };
                    }
                    _ => {
                        s += 10 * (distance(from, their_king) - distance(to, their_king));
                        if m.role() == Role::Knight {
                            // A knight mates from two squares away, not next to the king.
                            s -= 6 * i32::from(distance(to, their_king) == 1);
                        }
                    }
                }
                // The loser's men are its king's future blockers; keep them on the board.
                s -= match captured {
                    Some(Role::Pawn) => 4,
                    Some(_) => 15,
                    None => 0,
                };
            } else {
                match m.role() {
                    Role::King => {
                        s += 8 * (edge_distance(from) - edge_distance(to));
                        s += 3 * (distance(from, our_king) - distance(to, our_king));
                    }
                    Role::Pawn => {
                        s += 10;
                        s += match m.promotion() {
                            Some(Role::Queen) => 100,
                            Some(Role::Knight) => 90,
                            Some(Role::Rook) => 80,
                            Some(Role::Bishop) => 70,
                            _ => 0,
                        };
                    }
                    _ => {
                        let k = their_king;
                        s += 6 * (distance(from, k) - distance(to, k));
                        if distance(to, k) == 1 {
                            s += 10;
                        }
                    }
                }
                // The winner's men are the mating material.
                s -= match captured {
                    Some(Role::Pawn) => 20,
                    Some(_) => 60,
                    None => 0,
                };
            }
            (s, m)
        })
        .collect();
    scored.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
    scored.into_iter().map(|(_, m)| m).collect()
}

/// One position met by the best-first search: how it was reached.
struct Node {
    parent: u32,
    mv: Move,
    depth: u16,
}

impl Search {
    /// Best-first search: always expand the generated position that looks closest to a mate
    /// (see [`closeness`]), whatever its depth. Positions are kept as the move that reached
    /// them and replayed from the root when expanded, so memory stays small.
    pub(super) fn best_first(&mut self, root: &Position, max_plies: u16, budget: u64) -> Found {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;

        let stop = self.nodes.saturating_add(budget).min(self.budget);
        let winner = self.winner;
        let material = (root.by_color(winner) & !root.by_role(Role::King)).count() as i32;
        let mut nodes = vec![Node {
            parent: u32::MAX,
            mv: Move::NULL,
            depth: 0,
        }];
        let mut seen = Table::default();
        seen.insert(root.zobrist(), 0);
        let mut heap = BinaryHeap::new();
        heap.push((Reverse(0i32), 0u32));
        let mut path = Vec::new();
        while let Some((_, idx)) = heap.pop() {
            // Rebuild the position from the root.
            path.clear();
            let mut i = idx;
            while i != 0 {
                let n = &nodes[i as usize];
                path.push(n.mv);
                i = n.parent;
            }
            let mut pos = root.clone();
            for &m in path.iter().rev() {
                pos.play_unchecked(m);
            }
            let depth = nodes[idx as usize].depth;
            if depth >= max_plies || (self.prune && hopeless(&pos, winner)) {
                continue;
            }
            let moves = pos.legal_moves();
            for &m in moves.iter() {
                if !self.count(stop) {
                    return Found::NoMate;
                }
                let mut next = pos.clone();
                next.play_unchecked(m);
                if pos.turn() == winner && next.is_checkmate() {
                    let mut line: Vec<Move> = path.iter().rev().copied().collect();
                    line.push(m);
                    return Found::Mate(line);
                }
                let key = next.zobrist();
                if seen.insert(key, 0).is_some() {
                    continue;
                }
                let child = nodes.len() as u32;
                nodes.push(Node {
                    parent: idx,
                    mv: m,
                    depth: depth + 1,
                });
                let f = 3 * closeness(&next, winner, material) + i32::from(depth) + 1;
                heap.push((Reverse(f), child));
            }
        }
        Found::NoMate
    }
}

const CORNERS: [Square; 4] = [Square::A1, Square::H1, Square::A8, Square::H8];

/// How far a position looks from a mate by `winner`, smaller is closer: the losing king near
/// an edge and a corner, the winner's pieces near it (a knight two squares off), the loser's
/// men next to their king as blockers, pawns near promotion, and the winner's material kept
/// (`material` is what it started with).
fn closeness(pos: &Position, winner: Color, material: i32) -> i32 {
    let loser = !winner;
    let lk = pos.king_of(loser);
    let wk = pos.king_of(winner);
    // Bishops alone (with the king) mate only in a corner of their colour.
    let ours_all = pos.by_color(winner) & !pos.by_role(Role::King);
    let bishops = ours_all & pos.by_role(Role::Bishop);
    let corners = if bishops.has_any() && bishops == ours_all {
        if (bishops & Bitboard::DARK_SQUARES).is_empty() {
            &[Square::H1, Square::A8][..]
        } else if (bishops & Bitboard::LIGHT_SQUARES).is_empty() {
            &[Square::A1, Square::H8][..]
        } else {
            &CORNERS[..]
        }
    } else {
        &CORNERS[..]
    };
    let corner = corners.iter().map(|&c| distance(lk, c)).min().unwrap_or(0);
    let mut h = 4 * edge_distance(lk) + 2 * corner;
    h += (distance(wk, lk) - 2).abs();
    let ours = pos.by_color(winner) & !pos.by_role(Role::King);
    h += 30 * (material - ours.count() as i32).max(0);
    // Without a rook or queen the winner mostly mates with a new one: push the pawns harder.
    let heavy = ours & (pos.by_role(Role::Rook) | pos.by_role(Role::Queen));
    let pawn_weight = if heavy.is_empty() { 8 } else { 3 };
    for sq in ours {
        match pos.role_at(sq) {
            Some(Role::Pawn) => {
                let to_go = 7 - sq.rank().relative(winner) as i32;
                h += pawn_weight * to_go;
            }
            Some(Role::Knight) => h += 2 * (distance(sq, lk) - 2).abs(),
            _ => h += 2 * distance(sq, lk),
        }
    }
    let theirs = pos.by_color(loser) & !pos.by_role(Role::King);
    for sq in theirs {
        match pos.role_at(sq) {
            Some(Role::Pawn) => {
                let to_go = 7 - sq.rank().relative(loser) as i32;
                h += to_go.min(distance(sq, lk));
            }
            _ => h += distance(sq, lk) - 1,
        }
    }
    if pos.is_check() && pos.turn() == loser {
        h -= 3;
    }
    h
}
