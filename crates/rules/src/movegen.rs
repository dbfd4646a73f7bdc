//! Legal move generation. Pins and check evasions are resolved while generating: a pinned
//! piece only gets targets on its pin line, and in check every non-king move must capture the
//! checker or block it. Only en passant, whose capture empties two squares of one rank, is
//! verified by looking at the position after the capture.
//!
//! Moves come out in groups (one piece and a set of targets, or a set of pawn moves sharing a
//! direction) through [`Sink`], so counting at the last perft ply is a popcount per group.

use crate::attacks::{
    NOT_FILE_A, NOT_FILE_H, between, bishop_attacks, king_attacks, knight_attacks, line,
    pawn_attacks, rook_attacks,
};
use crate::position::castle_paths;
use crate::{
    Bitboard, CastlingSide, Color, Move, MoveKind, MoveList, Position, Rank, Role, Square,
};

pub(crate) trait Sink {
    /// False when the sink keeps only captures and promotions: the generator then skips the
    /// king's quiet targets (each needs an attack test) and castling.
    const QUIETS: bool = true;
    /// Moves of a piece (not a pawn) from `from` to every square in `targets`.
    fn piece(&mut self, role: Role, from: Square, targets: Bitboard);
    /// Pawn moves landing on `targets`, each from `to - delta`; no promotions.
    fn pawns(&mut self, targets: Bitboard, delta: i32, kind: MoveKind);
    /// Promotions landing on `targets`, each from `to - delta`, four moves each.
    fn promotions(&mut self, targets: Bitboard, delta: i32);
    /// One move of a special kind (castling, en passant).
    fn single(&mut self, m: Move);
}

impl Sink for MoveList {
    #[inline]
    fn piece(&mut self, role: Role, from: Square, targets: Bitboard) {
        for to in targets {
            self.push(Move::new(from, to, role, MoveKind::Normal));
        }
    }

    #[inline]
    fn pawns(&mut self, targets: Bitboard, delta: i32, kind: MoveKind) {
        for to in targets {
            let from = Square::new((to as i32 - delta) as u32);
            self.push(Move::new(from, to, Role::Pawn, kind));
        }
    }

    #[inline]
    fn promotions(&mut self, targets: Bitboard, delta: i32) {
        for to in targets {
            let from = Square::new((to as i32 - delta) as u32);
            for role in Role::PROMOTIONS {
                self.push(Move::new(from, to, Role::Pawn, Move::promote_kind(role)));
            }
        }
    }

    #[inline]
    fn single(&mut self, m: Move) {
        self.push(m);
    }
}

/// Counts moves without listing them.
pub(crate) struct Counter(pub(crate) u64);

impl Sink for Counter {
    #[inline(always)]
    fn piece(&mut self, _: Role, _: Square, targets: Bitboard) {
        self.0 += u64::from(targets.count());
    }
    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, _: i32, _: MoveKind) {
        self.0 += u64::from(targets.count());
    }
    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, _: i32) {
        self.0 += 4 * u64::from(targets.count());
    }
    #[inline(always)]
    fn single(&mut self, _: Move) {
        self.0 += 1;
    }
}

/// Lists only the moves that capture or promote: targets are masked to the enemy's pieces,
/// promotions and en passant pass whole, castling is dropped. The moves kept come out in the
/// same order as in the full list.
struct Tactical<'a> {
    list: &'a mut MoveList,
    theirs: Bitboard,
}

impl Sink for Tactical<'_> {
    const QUIETS: bool = false;

    #[inline]
    fn piece(&mut self, role: Role, from: Square, targets: Bitboard) {
        self.list.piece(role, from, targets & self.theirs);
    }

    #[inline]
    fn pawns(&mut self, targets: Bitboard, delta: i32, kind: MoveKind) {
        self.list.pawns(targets & self.theirs, delta, kind);
    }

    #[inline]
    fn promotions(&mut self, targets: Bitboard, delta: i32) {
        self.list.promotions(targets, delta);
    }

    #[inline]
    fn single(&mut self, m: Move) {
        if m.is_en_passant() {
            self.list.push(m);
        }
    }
}

/// Stops at the first move found.
pub(crate) struct Any(pub(crate) bool);

impl Sink for Any {
    #[inline(always)]
    fn piece(&mut self, _: Role, _: Square, targets: Bitboard) {
        self.0 |= targets.has_any();
    }
    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, _: i32, _: MoveKind) {
        self.0 |= targets.has_any();
    }
    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, _: i32) {
        self.0 |= targets.has_any();
    }
    #[inline(always)]
    fn single(&mut self, _: Move) {
        self.0 = true;
    }
}

impl Position {
    /// All legal moves.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
    /// assert_eq!(pos.legal_moves().len(), 26);
    /// ```
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// Appends the legal moves to `list` (after clearing it).
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        list.clear();
        self.generate(list);
    }

    /// The legal moves that capture (en passant included) or promote, in the order
    /// [`Position::legal_moves`] lists them: what a quiescence search looks at, without the
    /// cost of listing the quiet moves.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::from_fen("4k3/1P6/8/3pP3/8/8/8/4K2R w K d6 0 1").unwrap();
    /// let moves: Vec<String> = pos.legal_tactical_moves().iter().map(|m| m.to_string()).collect();
    /// assert_eq!(moves, ["b7b8q", "b7b8r", "b7b8b", "b7b8n", "e5d6"]);
    /// ```
    pub fn legal_tactical_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        let theirs = self.by_color(!self.turn);
        self.generate(&mut Tactical {
            list: &mut list,
            theirs,
        });
        list
    }

    /// The number of legal moves, counted without listing them.
    #[inline]
    pub fn count_legal(&self) -> u64 {
        let mut c = Counter(0);
        self.generate(&mut c);
        c.0
    }

    /// True when the side to move has a legal move.
    pub fn has_legal_moves(&self) -> bool {
        let mut any = Any(false);
        self.generate(&mut any);
        any.0
    }

    /// Legal moves of pieces standing on `from_mask` and landing on `to_mask`.
    pub fn legal_moves_filtered(&self, from_mask: Bitboard, to_mask: Bitboard) -> MoveList {
        let mut list = self.legal_moves();
        list.retain(|m| from_mask.contains(m.from()) && to_mask.contains(m.to()));
        list
    }

    #[inline]
    pub(crate) fn generate<S: Sink>(&self, sink: &mut S) {
        match self.turn {
            Color::White => self.gen_for::<true, S>(sink),
            Color::Black => self.gen_for::<false, S>(sink),
        }
    }

    #[inline(always)]
    fn gen_for<const WHITE: bool, S: Sink>(&self, sink: &mut S) {
        let us = if WHITE { Color::White } else { Color::Black };
        let them = !us;
        let ours = self.by_color(us);
        let theirs = self.by_color(them);
        let occ = ours | theirs;
        let ksq = self.king_of(us);

        let their_diag = theirs & (self.by_role(Role::Bishop) | self.by_role(Role::Queen));
        let their_orth = theirs & (self.by_role(Role::Rook) | self.by_role(Role::Queen));

        // Checkers and pins from one pass over the enemy sliders that see the king on an
        // empty board.
        let mut checkers = theirs
            & ((knight_attacks(ksq) & self.by_role(Role::Knight))
                | (pawn_attacks(us, ksq) & self.by_role(Role::Pawn)));
        let mut pinned = Bitboard::EMPTY;
        let snipers = (rook_attacks(ksq, Bitboard::EMPTY) & their_orth)
            | (bishop_attacks(ksq, Bitboard::EMPTY) & their_diag);
        for s in snipers {
            let blockers = between(ksq, s) & occ;
            if blockers.is_empty() {
                checkers |= Bitboard::from_square(s);
            } else if !blockers.more_than_one() {
                pinned |= blockers & ours;
            }
        }

        // King moves: every target must be safe with the king gone from its square, so a
        // slider's ray continues through it.
        let occ_no_king = occ.without(ksq);
        let mut king_targets = Bitboard::EMPTY;
        let king_reach = if S::QUIETS { !ours } else { theirs };
        for to in king_attacks(ksq) & king_reach {
            if !self.attacked_by(them, to, occ_no_king) {
                king_targets |= Bitboard::from_square(to);
            }
        }
        sink.piece(Role::King, ksq, king_targets);

        if checkers.more_than_one() {
            return;
        }

        let target = match checkers.first() {
            Some(c) => between(ksq, c) | checkers,
            None => !ours,
        } & !ours;

        if S::QUIETS && checkers.is_empty() {
            self.gen_castling(us, occ, sink);
        }

        // Knights: a pinned knight never moves.
        for from in self.pieces(us, Role::Knight) & !pinned {
            sink.piece(Role::Knight, from, knight_attacks(from) & target);
        }
        let in_check = checkers.has_any();
        for role in [Role::Bishop, Role::Rook, Role::Queen] {
            for from in self.pieces(us, role) {
                let mut att = match role {
                    Role::Bishop => bishop_attacks(from, occ),
                    Role::Rook => rook_attacks(from, occ),
                    _ => bishop_attacks(from, occ) | rook_attacks(from, occ),
                } & target;
                if pinned.contains(from) {
                    if in_check {
                        continue;
                    }
                    att &= line(ksq, from);
                }
                sink.piece(role, from, att);
            }
        }

        // Pawns, set-wise for those not pinned.
        let pawns = self.pieces(us, Role::Pawn);
        let empty = !occ;
        let promo_rank = Bitboard::rank(if WHITE { Rank::Eighth } else { Rank::First });
        let double_rank = Bitboard::rank(if WHITE { Rank::Fourth } else { Rank::Fifth });
        let (up, up_left, up_right) = if WHITE { (8, 7, 9) } else { (-8, -9, -7) };
        let shift = |b: u64, d: i32| -> Bitboard { Bitboard(if d > 0 { b << d } else { b >> -d }) };
        let free = pawns & !pinned;
        let single = shift(free.0, up) & empty;
        let double = shift(single.0, up) & empty & double_rank & target;
        let single = single & target;
        sink.pawns(single & !promo_rank, up, MoveKind::Normal);
        sink.promotions(single & promo_rank, up);
        sink.pawns(double, 2 * up, MoveKind::DoublePush);
        let left = shift(free.0 & NOT_FILE_A, up_left) & theirs & target;
        let right = shift(free.0 & NOT_FILE_H, up_right) & theirs & target;
        sink.pawns(left & !promo_rank, up_left, MoveKind::Normal);
        sink.promotions(left & promo_rank, up_left);
        sink.pawns(right & !promo_rank, up_right, MoveKind::Normal);
        sink.promotions(right & promo_rank, up_right);

        // Pinned pawns move only along their pin line, and never while in check.
        if !in_check {
            for from in pawns & pinned {
                let pin = line(ksq, from);
                let fb = Bitboard::from_square(from);
                let one = shift(fb.0, up) & empty & pin;
                let two = shift(one.0, up) & empty & double_rank & pin;
                let caps = pawn_attacks(us, from) & theirs & pin;
                for (set, delta) in [(one, up), (two, 2 * up)] {
                    if set.has_any() {
                        let kind = if delta == up {
                            MoveKind::Normal
                        } else {
                            MoveKind::DoublePush
                        };
                        sink.pawns(set & !promo_rank, delta, kind);
                        sink.promotions(set & promo_rank, delta);
                    }
                }
                for to in caps {
                    let d = to as i32 - from as i32;
                    let b = Bitboard::from_square(to);
                    sink.pawns(b & !promo_rank, d, MoveKind::Normal);
                    sink.promotions(b & promo_rank, d);
                }
            }
        }

        if let Some(ep) = self.ep_square {
            let candidates = pawn_attacks(them, ep) & pawns;
            if candidates.has_any() {
                for from in candidates {
                    // Verify on the board after the capture: it empties `from` and the
                    // captured pawn's square and fills `ep`, which can expose the king
                    // along a rank.
                    let m = Move::new(from, ep, Role::Pawn, MoveKind::EnPassant);
                    if self.leaves_king_safe(m, occ) {
                        sink.single(m);
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn gen_castling<S: Sink>(&self, us: Color, occ: Bitboard, sink: &mut S) {
        if self.castling.without_color(!us) == crate::CastlingRights::NONE {
            return;
        }
        for side in CastlingSide::ALL {
            if !self.castling.has(us, side) {
                continue;
            }
            let (empty, safe) = castle_paths(us, side);
            if (occ & empty).has_any() {
                continue;
            }
            if safe.into_iter().any(|sq| self.attacked_by(!us, sq, occ)) {
                continue;
            }
            let (king_from, king_to, _, _) = side.squares(us);
            sink.single(Move::new(king_from, king_to, Role::King, MoveKind::Castle));
        }
    }

    /// True when a piece of `by` attacks `sq` with the board occupied as `occ`.
    #[inline(always)]
    pub(crate) fn attacked_by(&self, by: Color, sq: Square, occ: Bitboard) -> bool {
        let them = self.by_color(by);
        ((knight_attacks(sq) & self.by_role(Role::Knight))
            | (pawn_attacks(!by, sq) & self.by_role(Role::Pawn))
            | (king_attacks(sq) & self.by_role(Role::King)))
        .intersects(them)
            || (bishop_attacks(sq, occ) & (self.by_role(Role::Bishop) | self.by_role(Role::Queen)))
                .intersects(them)
            || (rook_attacks(sq, occ) & (self.by_role(Role::Rook) | self.by_role(Role::Queen)))
                .intersects(them)
    }
}
