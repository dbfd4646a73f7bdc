//! One move looked up by its squares and checked for legality, without listing the others: a
//! search tries its hash move before it generates the rest, and most of the time that move
//! ends the node.

use crate::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use crate::position::castle_paths;
use crate::{Bitboard, CastlingSide, Move, MoveKind, Position, Rank, Role, Square};

impl Position {
    /// The legal move from `from` to `to` (with `promotion` for a pawn reaching the last
    /// rank), as [`Position::legal_moves`] would list it; `None` when there is no such legal
    /// move. Castling is the king's move to its destination (`e1g1`).
    ///
    /// ```
    /// use chess_rules::{Position, Role, Square};
    /// let pos = Position::from_fen("4k3/1P6/8/8/8/8/8/4K2R w K - 0 1").unwrap();
    /// assert!(pos.find_move(Square::E1, Square::G1, None).unwrap().is_castle());
    /// assert!(pos.find_move(Square::B7, Square::B8, Some(Role::Knight)).is_some());
    /// assert!(pos.find_move(Square::B7, Square::B8, None).is_none());
    /// assert!(pos.find_move(Square::E1, Square::E2, None).is_some());
    /// assert!(pos.find_move(Square::E1, Square::E3, None).is_none());
    /// ```
    pub fn find_move(&self, from: Square, to: Square, promotion: Option<Role>) -> Option<Move> {
        let us = self.turn();
        let ours = self.by_color(us);
        if !ours.contains(from) || ours.contains(to) {
            return None;
        }
        let role = self.role_at(from)?;
        let last_rank = Rank::Eighth.relative(us);
        let promotes = role == Role::Pawn && to.rank() == last_rank;
        match promotion {
            None if promotes => return None,
            Some(_) if !promotes => return None,
            Some(Role::Pawn | Role::King) => return None,
            _ => {}
        }
        let theirs = self.by_color(!us);
        let occ = ours | theirs;
        let kind = match role {
            Role::King => return self.find_king_move(from, to, occ),
            Role::Knight if knight_attacks(from).contains(to) => MoveKind::Normal,
            Role::Bishop if bishop_attacks(from, occ).contains(to) => MoveKind::Normal,
            Role::Rook if rook_attacks(from, occ).contains(to) => MoveKind::Normal,
            Role::Queen if (bishop_attacks(from, occ) | rook_attacks(from, occ)).contains(to) => {
                MoveKind::Normal
            }
            Role::Pawn => self.pawn_kind(from, to, occ, promotion)?,
            _ => return None,
        };
        let m = Move::new(from, to, role, kind);
        self.leaves_king_safe(m, occ).then_some(m)
    }

    /// What kind of pawn move goes from `from` to `to`, if one does (legality aside).
    fn pawn_kind(
        &self,
        from: Square,
        to: Square,
        occ: Bitboard,
        promotion: Option<Role>,
    ) -> Option<MoveKind> {
        let us = self.turn();
        let up: i32 = if us.is_white() { 8 } else { -8 };
        let step = to as i32 - from as i32;
        let promoted = |kind| promotion.map_or(kind, Move::promote_kind);
        if pawn_attacks(us, from).contains(to) {
            if self.by_color(!us).contains(to) {
                return Some(promoted(MoveKind::Normal));
            }
            return (self.ep_square() == Some(to)).then_some(MoveKind::EnPassant);
        }
        if occ.contains(to) {
            return None;
        }
        if step == up {
            return Some(promoted(MoveKind::Normal));
        }
        let middle = Square::new((from as i32 + up) as u32);
        (step == 2 * up && from.rank() == Rank::Second.relative(us) && !occ.contains(middle))
            .then_some(MoveKind::DoublePush)
    }

    /// A king's step to a square no enemy piece attacks once the king has left its own, or
    /// castling with all of its conditions.
    fn find_king_move(&self, from: Square, to: Square, occ: Bitboard) -> Option<Move> {
        let us = self.turn();
        if king_attacks(from).contains(to) {
            return (!self.attacked_by(!us, to, occ.without(from)))
                .then(|| Move::new(from, to, Role::King, MoveKind::Normal));
        }
        let side = CastlingSide::ALL
            .into_iter()
            .find(|&side| self.castling_rights().has(us, side) && side.squares(us).1 == to)?;
        if side.squares(us).0 != from || self.is_check() {
            return None;
        }
        let (empty, safe) = castle_paths(us, side);
        if (occ & empty).has_any() || safe.into_iter().any(|sq| self.attacked_by(!us, sq, occ)) {
            return None;
        }
        Some(Move::new(from, to, Role::King, MoveKind::Castle))
    }

    /// True when our king is not attacked once `m` (not a king move) is played: the board after
    /// it, with the captured piece (en passant included) gone, seen from the king's square.
    /// The generator's test of en passant too.
    #[inline]
    pub(crate) fn leaves_king_safe(&self, m: Move, occ: Bitboard) -> bool {
        let us = self.turn();
        let ksq = self.king_of(us);
        let captured = if m.is_en_passant() {
            Square::from_coords(m.to().file(), Rank::Fifth.relative(us))
        } else {
            m.to()
        };
        let theirs = self.by_color(!us).without(captured);
        let after = (occ.without(m.from()).without(captured)) | Bitboard::from_square(m.to());
        let diag = self.by_role(Role::Bishop) | self.by_role(Role::Queen);
        let orth = self.by_role(Role::Rook) | self.by_role(Role::Queen);
        let attackers = (bishop_attacks(ksq, after) & diag)
            | (rook_attacks(ksq, after) & orth)
            | (knight_attacks(ksq) & self.by_role(Role::Knight))
            | (pawn_attacks(us, ksq) & self.by_role(Role::Pawn));
        (attackers & theirs).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Move, Position, Role, Square};

    /// Every (from, to, promotion) of the board asked of `find_move`: what it finds is exactly
    /// the list of legal moves, each move as the list has it.
    fn agree(pos: &Position) {
        let legal = pos.legal_moves();
        let promotions = [
            None,
            Some(Role::Knight),
            Some(Role::Bishop),
            Some(Role::Rook),
            Some(Role::Queen),
            Some(Role::Pawn),
            Some(Role::King),
        ];
        let mut found = 0;
        for from in 0..64 {
            for to in 0..64 {
                let (from, to) = (Square::new(from), Square::new(to));
                for promotion in promotions {
                    if let Some(m) = pos.find_move(from, to, promotion) {
                        assert!(legal.contains(&m), "{} {m:?} is not legal", pos.fen());
                        assert_eq!((m.from(), m.to(), m.promotion()), (from, to, promotion));
                        found += 1;
                    }
                }
            }
        }
        assert_eq!(found, legal.len(), "{}", pos.fen());
    }

    #[test]
    fn agrees_with_the_move_list_on_hand_picked_positions() {
        for fen in [
            crate::STARTPOS_FEN,
            // Castling both ways, through attacked and occupied squares.
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/6b1/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/8/R2QK1NR w KQkq - 0 1",
            "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1",
            // En passant: legal, pinned along the rank, and discovering a check.
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "8/8/8/KPp4r/8/8/8/7k w - c6 0 1",
            "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",
            "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1",
            // In check: evasions only; double check: king moves only.
            "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",
            "4k3/8/8/8/1b6/8/8/r3K1N1 w - - 0 1",
            // Promotions, with captures, and a pinned pawn.
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
            "1r2k3/P7/8/8/8/8/8/K7 w - - 0 1",
            "4k3/8/8/8/8/8/4P3/4K2r w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ] {
            agree(&Position::from_fen(fen).unwrap());
        }
    }

    #[test]
    fn agrees_with_the_move_list_along_random_games() {
        // A small deterministic generator: the games are the same on every run.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut positions = 0;
        for _ in 0..40 {
            let mut pos = Position::startpos();
            for _ in 0..120 {
                agree(&pos);
                positions += 1;
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m: Move = moves[(next() % moves.len() as u64) as usize];
                pos.play_unchecked(m);
            }
        }
        assert!(positions > 2_000, "{positions}");
    }
}
