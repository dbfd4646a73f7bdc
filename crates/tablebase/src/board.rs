//! A small piece-list position for the generator: no castling, no en-passant square, no
//! counters; its own move and unmove generation on top of chess-rules' attack tables.

use chess_rules::{Bitboard, Color, Role, Square, attacks, pawn_attacks};

/// The most pieces a table position holds (kings included).
pub(crate) const MAX_PIECES: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Piece {
    pub color: Color,
    pub role: Role,
    pub sq: u8,
}

/// Pieces in a fixed slot order (the table's, for positions of the ending being generated) and
/// the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Board {
    pub pieces: [Piece; MAX_PIECES],
    pub len: usize,
    pub turn: Color,
}

/// What a move leads to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Child {
    pub board: Board,
    /// A capture or a promotion: the result belongs to another ending.
    pub exit: bool,
    /// The square a two-square pawn move passed over, when an en-passant capture of that pawn
    /// would then be legal (the result is then not exactly a table position).
    pub ep_square: Option<u8>,
}

fn sq(i: u8) -> Square {
    Square::new(u32::from(i))
}

/// Whether a slider on `from` could reach `to` on an empty board (always true for the other
/// pieces, whose attack tables are cheap): most slider attacks need no lookup at all.
fn on_a_line(role: Role, from: u8, to: u8) -> bool {
    let dx = (i32::from(from % 8) - i32::from(to % 8)).abs();
    let dy = (i32::from(from / 8) - i32::from(to / 8)).abs();
    match role {
        Role::Rook => dx == 0 || dy == 0,
        Role::Bishop => dx == dy,
        Role::Queen => dx == 0 || dy == 0 || dx == dy,
        _ => true,
    }
}

fn bb(i: u8) -> Bitboard {
    Bitboard::from_square(sq(i))
}

impl Board {
    pub fn new(turn: Color) -> Board {
        let blank = Piece {
            color: Color::White,
            role: Role::King,
            sq: 0,
        };
        Board {
            pieces: [blank; MAX_PIECES],
            len: 0,
            turn,
        }
    }

    pub fn push(&mut self, color: Color, role: Role, sq: u8) {
        self.pieces[self.len] = Piece { color, role, sq };
        self.len += 1;
    }

    pub fn list(&self) -> &[Piece] {
        &self.pieces[..self.len]
    }

    fn remove(&mut self, i: usize) {
        self.pieces.copy_within(i + 1..self.len, i);
        self.len -= 1;
    }

    pub fn occupied(&self) -> Bitboard {
        self.list()
            .iter()
            .fold(Bitboard(0), |acc, p| acc | bb(p.sq))
    }

    fn king(&self, color: Color) -> u8 {
        self.list()
            .iter()
            .find(|p| p.color == color && p.role == Role::King)
            .map(|p| p.sq)
            .unwrap_or(64)
    }

    /// Whether a piece of `by` attacks `target` with the board's occupancy.
    fn attacked(&self, target: u8, by: Color, occ: Bitboard) -> bool {
        self.list().iter().any(|p| {
            p.color == by
                && p.sq != target
                && on_a_line(p.role, p.sq, target)
                && attacks(p.role, p.color, sq(p.sq), occ).contains(sq(target))
        })
    }

    pub fn in_check(&self, color: Color) -> bool {
        let k = self.king(color);
        k < 64 && self.attacked(k, color.other(), self.occupied())
    }

    /// A position the tables hold: distinct squares, pawns off the back ranks, the side not to
    /// move not in check (which also keeps the kings apart).
    pub fn is_legal(&self) -> bool {
        let mut occ = 0u64;
        for p in self.list() {
            if occ & (1 << p.sq) != 0 {
                return false;
            }
            occ |= 1 << p.sq;
            if p.role == Role::Pawn && (p.sq < 8 || p.sq >= 56) {
                return false;
            }
        }
        !self.in_check(self.turn.other())
    }

    /// Every legal move's result, for the side to move.
    pub fn children(&self, out: &mut Vec<Child>) {
        out.clear();
        let us = self.turn;
        let occ = self.occupied();
        let ours = self
            .list()
            .iter()
            .filter(|p| p.color == us)
            .fold(Bitboard(0), |a, p| a | bb(p.sq));
        let theirs = occ & !ours;
        for i in 0..self.len {
            let p = self.pieces[i];
            if p.color != us {
                continue;
            }
            if p.role == Role::Pawn {
                let forward: i32 = if us == Color::White { 8 } else { -8 };
                let one = (i32::from(p.sq) + forward) as u8;
                let last_rank = if us == Color::White {
                    one >= 56
                } else {
                    one < 8
                };
                if !occ.contains(sq(one)) {
                    self.pawn_to(i, one, None, last_rank, out);
                    let start = if us == Color::White {
                        p.sq / 8 == 1
                    } else {
                        p.sq / 8 == 6
                    };
                    let two = (i32::from(one) + forward) as u8;
                    if start && !occ.contains(sq(two)) {
                        self.pawn_to(i, two, None, false, out);
                        // Mark the passed-over square when the enemy could take en passant.
                        if let Some(last) = out.last_mut()
                            && last.board.pieces[i].sq == two
                            && last.board.ep_capture_possible(one)
                        {
                            last.ep_square = Some(one);
                        }
                    }
                }
                for to in pawn_attacks(us, sq(p.sq)) & theirs {
                    let to = to as u8;
                    let victim = self.list().iter().position(|q| q.sq == to);
                    if let Some(v) = victim
                        && self.pieces[v].role != Role::King
                    {
                        self.pawn_to(i, to, Some(v), last_rank, out);
                    }
                }
                continue;
            }
            for to in attacks(p.role, us, sq(p.sq), occ) & !ours {
                let to = to as u8;
                let victim = self.list().iter().position(|q| q.sq == to);
                if let Some(v) = victim
                    && self.pieces[v].role == Role::King
                {
                    continue;
                }
                let mut b = *self;
                b.pieces[i].sq = to;
                if let Some(v) = victim {
                    b.remove(v);
                }
                b.turn = us.other();
                if !b.in_check(us) {
                    out.push(Child {
                        board: b,
                        exit: victim.is_some(),
                        ep_square: None,
                    });
                }
            }
        }
    }

    fn pawn_to(
        &self,
        i: usize,
        to: u8,
        victim: Option<usize>,
        promote: bool,
        out: &mut Vec<Child>,
    ) {
        let us = self.turn;
        let mut b = *self;
        b.pieces[i].sq = to;
        let mut moved = i;
        if let Some(v) = victim {
            b.remove(v);
            if v < i {
                moved -= 1;
            }
        }
        b.turn = us.other();
        if b.in_check(us) {
            return;
        }
        if promote {
            for role in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                let mut c = b;
                c.pieces[moved].role = role;
                out.push(Child {
                    board: c,
                    exit: true,
                    ep_square: None,
                });
            }
        } else {
            out.push(Child {
                board: b,
                exit: victim.is_some(),
                ep_square: None,
            });
        }
    }

    /// Whether the side to move could legally capture en passant onto `ep` (the square a pawn of
    /// the other side has just passed over).
    pub fn ep_capture_possible(&self, ep: u8) -> bool {
        let mut list = Vec::new();
        self.ep_children(ep, &mut list);
        !list.is_empty()
    }

    /// The legal en-passant captures onto `ep` for the side to move.
    pub fn ep_children(&self, ep: u8, out: &mut Vec<Child>) {
        out.clear();
        let us = self.turn;
        let victim_sq = if us == Color::White { ep - 8 } else { ep + 8 };
        let Some(v) = self
            .list()
            .iter()
            .position(|q| q.sq == victim_sq && q.role == Role::Pawn && q.color != us)
        else {
            return;
        };
        for i in 0..self.len {
            let p = self.pieces[i];
            if p.color == us && p.role == Role::Pawn && pawn_attacks(us, sq(p.sq)).contains(sq(ep))
            {
                let mut b = *self;
                b.pieces[i].sq = ep;
                b.remove(v);
                b.turn = us.other();
                if !b.in_check(us) {
                    out.push(Child {
                        board: b,
                        exit: true,
                        ep_square: None,
                    });
                }
            }
        }
    }

    /// The positions one non-capturing, non-promoting move of the side that just moved leads
    /// from; the flag marks a two-square pawn move.
    pub fn parents(&self, out: &mut Vec<(Board, bool)>) {
        out.clear();
        let them = self.turn.other();
        let occ = self.occupied();
        for i in 0..self.len {
            let p = self.pieces[i];
            if p.color != them {
                continue;
            }
            if p.role == Role::Pawn {
                let back: i32 = if them == Color::White { -8 } else { 8 };
                let one = (i32::from(p.sq) + back) as u8;
                let rel_rank = if them == Color::White {
                    p.sq / 8
                } else {
                    7 - p.sq / 8
                };
                // A pawn on its third rank or higher came from at least its second.
                if rel_rank >= 2 && !occ.contains(sq(one)) {
                    self.unmove_to(i, one, false, out);
                    let two = (i32::from(one) + back) as u8;
                    if rel_rank == 3 && !occ.contains(sq(two)) {
                        self.unmove_to(i, two, true, out);
                    }
                }
                continue;
            }
            // Every role but the pawn moves as it attacks, and the moves are reversible.
            for from in attacks(p.role, them, sq(p.sq), occ) & !occ {
                self.unmove_to(i, from as u8, false, out);
            }
        }
    }

    fn unmove_to(&self, i: usize, from: u8, double: bool, out: &mut Vec<(Board, bool)>) {
        let mut b = *self;
        b.pieces[i].sq = from;
        b.turn = self.turn.other();
        // The side that did not move must not have been left in check.
        if !b.in_check(self.turn) {
            out.push((b, double));
        }
    }

    /// The board with the colours exchanged and the ranks mirrored.
    pub fn color_flipped(&self) -> Board {
        let mut b = *self;
        for p in &mut b.pieces[..b.len] {
            p.color = p.color.other();
            p.sq ^= 56;
        }
        b.turn = self.turn.other();
        b
    }

    /// FEN of the position (no castling, no en passant, counters 0 1).
    pub fn fen(&self) -> String {
        let mut grid = [None; 64];
        for p in self.list() {
            grid[usize::from(p.sq)] = Some(*p);
        }
        let mut s = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match grid[rank * 8 + file] {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            s.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        let c = p.role.upper_char();
                        s.push(if p.color == Color::White {
                            c
                        } else {
                            c.to_ascii_lowercase()
                        });
                    }
                }
            }
            if empty > 0 {
                s.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s.push_str(if self.turn == Color::White {
            " w - - 0 1"
        } else {
            " b - - 0 1"
        });
        s
    }
}
