//! A naive, obviously-correct legal move generator over a 64-entry array: generate
//! pseudo-legal moves square by square, play each on a copy, keep those that leave the
//! mover's king unattacked. Castling follows FIDE 3.8.2 literally. Slow, and meant to be.

use chess_rules::{CastlingSide, Color, Piece, Role, Setup, Square};

use crate::MoveKey;

#[derive(Clone, Debug)]
pub struct Board {
    pub sq: [Option<Piece>; 64],
    pub turn: Color,
    pub rights: [[bool; 2]; 2],
    pub ep: Option<usize>,
}

const KNIGHT: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING: [(i32, i32); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];
const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn at(i: usize, df: i32, dr: i32) -> Option<usize> {
    let f = (i % 8) as i32 + df;
    let r = (i / 8) as i32 + dr;
    ((0..8).contains(&f) && (0..8).contains(&r)).then(|| (r * 8 + f) as usize)
}

fn forward(c: Color) -> i32 {
    if c == Color::White { 1 } else { -1 }
}

fn side_index(side: CastlingSide) -> usize {
    match side {
        CastlingSide::KingSide => 0,
        CastlingSide::QueenSide => 1,
    }
}

pub fn square_name(i: usize) -> String {
    format!("{}{}", (b'a' + (i % 8) as u8) as char, i / 8 + 1)
}

pub fn key_name((from, to, promo): MoveKey) -> String {
    let p = match promo {
        Some(r) => Role::ALL[r].char().to_string(),
        None => String::new(),
    };
    format!("{}{}{p}", square_name(from), square_name(to))
}

impl Board {
    pub fn from_setup(s: &Setup) -> Board {
        let mut rights = [[false; 2]; 2];
        for c in Color::ALL {
            for side in CastlingSide::ALL {
                rights[c.index()][side_index(side)] = s.castling.has(c, side);
            }
        }
        Board {
            sq: s.board,
            turn: s.turn,
            rights,
            ep: s.ep_square.map(Square::index),
        }
    }

    fn is(&self, i: usize, c: Color, r: Role) -> bool {
        self.sq[i] == Some(Piece::new(c, r))
    }

    fn king(&self, c: Color) -> Option<usize> {
        (0..64).find(|&i| self.is(i, c, Role::King))
    }

    /// Pieces of `by` attacking square `t`.
    pub fn attackers(&self, t: usize, by: Color) -> usize {
        let mut n = 0;
        for (df, dr) in KNIGHT {
            if at(t, df, dr).is_some_and(|i| self.is(i, by, Role::Knight)) {
                n += 1;
            }
        }
        for (df, dr) in KING {
            if at(t, df, dr).is_some_and(|i| self.is(i, by, Role::King)) {
                n += 1;
            }
        }
        // A pawn of `by` attacks t from one rank behind t (from by's point of view).
        for df in [-1, 1] {
            if at(t, df, -forward(by)).is_some_and(|i| self.is(i, by, Role::Pawn)) {
                n += 1;
            }
        }
        for (dirs, role) in [(ROOK_DIRS, Role::Rook), (BISHOP_DIRS, Role::Bishop)] {
            for (df, dr) in dirs {
                let mut cur = t;
                while let Some(i) = at(cur, df, dr) {
                    if let Some(p) = self.sq[i] {
                        if p.color == by && (p.role == role || p.role == Role::Queen) {
                            n += 1;
                        }
                        break;
                    }
                    cur = i;
                }
            }
        }
        n
    }

    pub fn checkers(&self, c: Color) -> usize {
        self.king(c).map_or(0, |k| self.attackers(k, !c))
    }

    pub fn in_check(&self, c: Color) -> bool {
        self.checkers(c) > 0
    }

    /// Pseudo-legal moves (castling already fully checked), each with the board after it.
    fn pseudo(&self) -> Vec<(MoveKey, Board)> {
        let us = self.turn;
        let mut out = Vec::new();
        let mut push = |from: usize, to: usize, promo: Option<Role>, ep_capture: Option<usize>| {
            let mut b = self.clone();
            let mut p = b.sq[from].take().unwrap();
            if let Some(r) = promo {
                p = Piece::new(us, r);
            }
            if let Some(c) = ep_capture {
                b.sq[c] = None;
            }
            b.sq[to] = Some(p);
            b.turn = !us;
            b.ep = None;
            out.push(((from, to, promo.map(|r| r.index())), b));
        };
        for from in 0..64 {
            let Some(p) = self.sq[from] else { continue };
            if p.color != us {
                continue;
            }
            let free_or_enemy = |i: usize| self.sq[i].is_none_or(|q| q.color != us);
            match p.role {
                Role::Pawn => {
                    let fw = forward(us);
                    let last = if us == Color::White { 7 } else { 0 };
                    let start = if us == Color::White { 1 } else { 6 };
                    let mut targets = Vec::new();
                    if let Some(one) = at(from, 0, fw).filter(|&i| self.sq[i].is_none()) {
                        targets.push(one);
                        if from / 8 == start {
                            if let Some(two) = at(from, 0, 2 * fw).filter(|&i| self.sq[i].is_none())
                            {
                                targets.push(two);
                            }
                        }
                    }
                    for df in [-1, 1] {
                        if let Some(t) = at(from, df, fw) {
                            if self.sq[t].is_some_and(|q| q.color != us) {
                                targets.push(t);
                            } else if self.ep == Some(t) && self.sq[t].is_none() {
                                let victim = at(t, 0, -fw).unwrap();
                                if self.is(victim, !us, Role::Pawn) {
                                    push(from, t, None, Some(victim));
                                }
                            }
                        }
                    }
                    for t in targets {
                        if t / 8 == last {
                            for r in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                                push(from, t, Some(r), None);
                            }
                        } else {
                            push(from, t, None, None);
                        }
                    }
                }
                Role::Knight | Role::King => {
                    let offs = if p.role == Role::Knight { KNIGHT } else { KING };
                    for (df, dr) in offs {
                        if let Some(t) = at(from, df, dr).filter(|&t| free_or_enemy(t)) {
                            push(from, t, None, None);
                        }
                    }
                }
                Role::Bishop | Role::Rook | Role::Queen => {
                    let mut dirs = Vec::new();
                    if p.role != Role::Bishop {
                        dirs.extend(ROOK_DIRS);
                    }
                    if p.role != Role::Rook {
                        dirs.extend(BISHOP_DIRS);
                    }
                    for (df, dr) in dirs {
                        let mut cur = from;
                        while let Some(t) = at(cur, df, dr) {
                            if self.sq[t].is_some_and(|q| q.color == us) {
                                break;
                            }
                            push(from, t, None, None);
                            if self.sq[t].is_some() {
                                break;
                            }
                            cur = t;
                        }
                    }
                }
            }
        }
        // Castling (FIDE 3.8.2): rights kept, king and rook on their original squares, all
        // squares between them empty, king not in check and not crossing or landing on an
        // attacked square.
        let rank = if us == Color::White { 0 } else { 56 };
        let king = rank + 4;
        for side in CastlingSide::ALL {
            if !self.rights[us.index()][side_index(side)] {
                continue;
            }
            let (rook, king_to, rook_to) = match side {
                CastlingSide::KingSide => (rank + 7, rank + 6, rank + 5),
                CastlingSide::QueenSide => (rank, rank + 2, rank + 3),
            };
            if !self.is(king, us, Role::King) || !self.is(rook, us, Role::Rook) {
                continue;
            }
            let (lo, hi) = (king.min(rook), king.max(rook));
            if (lo + 1..hi).any(|i| self.sq[i].is_some()) {
                continue;
            }
            let (klo, khi) = (king.min(king_to), king.max(king_to));
            if (klo..=khi).any(|i| self.attackers(i, !us) > 0) {
                continue;
            }
            let mut b = self.clone();
            b.sq[king] = None;
            b.sq[rook] = None;
            b.sq[king_to] = Some(Piece::new(us, Role::King));
            b.sq[rook_to] = Some(Piece::new(us, Role::Rook));
            b.turn = !us;
            b.ep = None;
            out.push(((king, king_to, None), b));
        }
        out
    }

    pub fn legal_moves(&self) -> Vec<MoveKey> {
        let us = self.turn;
        self.pseudo()
            .into_iter()
            .filter(|(_, b)| !b.in_check(us))
            .map(|(k, _)| k)
            .collect()
    }
}
