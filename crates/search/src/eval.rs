//! Static evaluation.
//!
//! The search asks an [`Evaluator`] for a score; [`HandEval`] is the hand-written one: material
//! and piece-square tables tapered between middlegame and endgame by the phase, bishop pair, pawn
//! structure, mobility, king safety, rooks on files, threats, passed pawns and some endgame
//! knowledge. A neural network plugs in by implementing the same trait (see
//! [`crate::NnueEval`]), using its incremental hooks to follow the search move by move.

use chess_rules::{
    Bitboard, Color, Move, Position, Role, Square, bishop_attacks, king_attacks, knight_attacks,
    pawn_attacks, rook_attacks,
};

use crate::params::EvalParams;
use crate::score::S;

/// A static evaluation function.
///
/// Each search thread owns one, so implementations may keep caches (`&mut self`).
///
/// ```
/// use chess_rules::Position;
/// use chess_search::{Evaluator, HandEval};
/// let mut eval = HandEval::default();
/// let start = eval.evaluate(&Position::startpos());
/// assert!(start.abs() < 50);
/// ```
pub trait Evaluator: Send {
    /// The position's value in centipawns from the side to move's point of view. It must stay
    /// well inside ±30000 (mate scores live beyond that).
    fn evaluate(&mut self, pos: &Position) -> i32;

    /// Forgets cached state (a new game starts).
    fn clear(&mut self) {}

    // Incremental hooks. The search calls them around every move it makes in its tree, so an
    // evaluator can keep state in step with the position it will be asked about (NNUE
    // accumulators). Each `on_make`/`on_null_move` is matched by one `on_unmake`. The
    // defaults do nothing: a stateless evaluator ignores them.

    /// A search starts at `root`: rebuild any incremental state from it.
    fn on_search_start(&mut self, _root: &Position) {}

    /// The search plays `m` in `before`, reaching `after`.
    fn on_make(&mut self, _before: &Position, _m: Move, _after: &Position) {}

    /// The search passes (a null move) in `before`, reaching `after`.
    fn on_null_move(&mut self, _before: &Position, _after: &Position) {}

    /// The search takes back the latest `on_make` or `on_null_move`.
    fn on_unmake(&mut self) {}
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        (**self).evaluate(pos)
    }
    fn clear(&mut self) {
        (**self).clear();
    }
    fn on_search_start(&mut self, root: &Position) {
        (**self).on_search_start(root);
    }
    fn on_make(&mut self, before: &Position, m: Move, after: &Position) {
        (**self).on_make(before, m, after);
    }
    fn on_null_move(&mut self, before: &Position, after: &Position) {
        (**self).on_null_move(before, after);
    }
    fn on_unmake(&mut self) {
        (**self).on_unmake();
    }
}

// ----- piece-square shapes -----
//
// Drawn as a board from white's side: the first row is the eighth rank. A white piece on `sq`
// reads entry `sq ^ 56`, a black piece entry `sq` (the board seen from black's side).

#[rustfmt::skip]
const PAWN_MG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     30,  40,  45,  50,  50,  45,  40,  30,
     10,  15,  20,  30,  30,  20,  15,  10,
      0,   5,  10,  22,  22,  10,   5,   0,
     -5,   0,   8,  18,  18,   5,   0,  -5,
     -5,   0,   0,   5,   5,  -5,   5,  -5,
     -5,   0,  -2, -12, -12,  10,  10,  -5,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const PAWN_EG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     50,  50,  45,  40,  40,  45,  50,  50,
     30,  30,  25,  20,  20,  25,  30,  30,
     12,  12,   8,   4,   4,   8,  12,  12,
      4,   4,   0,  -4,  -4,   0,   4,   4,
      0,   0,  -4,  -4,  -4,  -4,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const KNIGHT_MG: [i32; 64] = [
    -60, -25, -15, -10, -10, -15, -25, -60,
    -20, -10,  10,  15,  15,  10, -10, -20,
    -10,  15,  25,  30,  30,  25,  15, -10,
     -5,  10,  20,  30,  30,  20,  10,  -5,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -20,   0,  10,  12,  12,  10,   0, -20,
    -30, -15,  -5,   5,   5,  -5, -15, -30,
    -60, -25, -20, -15, -15, -20, -25, -60,
];
#[rustfmt::skip]
const KNIGHT_EG: [i32; 64] = [
    -40, -25, -15, -10, -10, -15, -25, -40,
    -25, -10,   0,   5,   5,   0, -10, -25,
    -15,   0,  10,  15,  15,  10,   0, -15,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -10,   5,  15,  20,  20,  15,   5, -10,
    -15,   0,  10,  15,  15,  10,   0, -15,
    -25, -10,   0,   5,   5,   0, -10, -25,
    -40, -25, -15, -10, -10, -15, -25, -40,
];
#[rustfmt::skip]
const BISHOP_MG: [i32; 64] = [
    -20, -10, -10, -10, -10, -10, -10, -20,
    -10,   0,   0,   0,   0,   0,   0, -10,
     -5,   5,  10,  10,  10,  10,   5,  -5,
     -5,  10,  10,  15,  15,  10,  10,  -5,
     -5,   5,  15,  15,  15,  15,   5,  -5,
      0,  10,  10,  10,  10,  10,  10,   0,
      0,  15,   5,   5,   5,   5,  15,   0,
    -15, -10, -12, -10, -10, -12, -10, -15,
];
#[rustfmt::skip]
const BISHOP_EG: [i32; 64] = [
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
    -10,  -3,   0,   2,   2,   0,  -3, -10,
     -8,   0,   5,   5,   5,   5,   0,  -8,
     -5,   2,   5,  10,  10,   5,   2,  -5,
     -5,   2,   5,  10,  10,   5,   2,  -5,
     -8,   0,   5,   5,   5,   5,   0,  -8,
    -10,  -3,   0,   2,   2,   0,  -3, -10,
    -15, -10,  -8,  -5,  -5,  -8, -10, -15,
];
#[rustfmt::skip]
const ROOK_MG: [i32; 64] = [
      5,  10,  10,  15,  15,  10,  10,   5,
     15,  20,  20,  25,  25,  20,  20,  15,
      0,   5,   5,  10,  10,   5,   5,   0,
     -5,   0,   0,   5,   5,   0,   0,  -5,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -15,  -5,  -5,   0,   0,  -5,  -5, -15,
    -20, -10,  -5,   0,   0,  -5, -10, -20,
     -8,  -5,   0,  10,  10,   5,  -5,  -8,
];
#[rustfmt::skip]
const ROOK_EG: [i32; 64] = [
     10,  10,  10,  10,  10,  10,  10,  10,
     15,  15,  15,  15,  15,  15,  15,  15,
      5,   5,   5,   5,   5,   5,   5,   5,
      0,   0,   0,   0,   0,   0,   0,   0,
     -2,  -2,  -2,  -2,  -2,  -2,  -2,  -2,
     -5,  -5,  -5,  -5,  -5,  -5,  -5,  -5,
     -8,  -8,  -5,  -5,  -5,  -5,  -8,  -8,
    -10,  -5,  -3,   0,   0,  -3,  -5, -10,
];
#[rustfmt::skip]
const QUEEN_MG: [i32; 64] = [
    -20, -10, -10,  -5,  -5, -10, -10, -20,
    -10,  -5,   0,   0,   0,   0,  -5, -10,
    -10,   0,   5,   5,   5,   5,   0, -10,
     -5,   0,   5,   5,   5,   5,   0,  -5,
     -5,   0,   5,   5,   5,   5,   0,  -5,
    -10,   0,   5,   5,   5,   5,   0, -10,
    -10,  -5,   5,   5,   5,   0,  -5, -10,
    -20, -15, -10,   0,  -5, -10, -15, -20,
];
#[rustfmt::skip]
const QUEEN_EG: [i32; 64] = [
    -25, -15, -10,  -5,  -5, -10, -15, -25,
    -15,  -5,   0,   5,   5,   0,  -5, -15,
    -10,   0,  10,  12,  12,  10,   0, -10,
     -5,   5,  12,  18,  18,  12,   5,  -5,
     -5,   5,  12,  18,  18,  12,   5,  -5,
    -10,   0,  10,  12,  12,  10,   0, -10,
    -15,  -5,   0,   5,   5,   0,  -5, -15,
    -25, -15, -10,  -5,  -5, -10, -15, -25,
];
#[rustfmt::skip]
const KING_MG: [i32; 64] = [
    -60, -60, -60, -70, -70, -60, -60, -60,
    -50, -50, -55, -65, -65, -55, -50, -50,
    -45, -45, -50, -60, -60, -50, -45, -45,
    -40, -40, -45, -55, -55, -45, -40, -40,
    -30, -35, -40, -50, -50, -40, -35, -30,
    -15, -20, -25, -35, -35, -25, -20, -15,
     15,  10,  -5, -20, -20,  -5,  10,  15,
     20,  35,  15, -15,   0, -10,  35,  25,
];
#[rustfmt::skip]
const KING_EG: [i32; 64] = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -30, -10,   0,   5,   5,   0, -10, -30,
    -20,   5,  15,  20,  20,  15,   5, -20,
    -15,  10,  20,  30,  30,  20,  10, -15,
    -15,   5,  20,  25,  25,  20,   5, -15,
    -20,   0,  10,  15,  15,  10,   0, -20,
    -30, -10,   0,   5,   5,   0, -10, -30,
    -50, -35, -25, -20, -20, -25, -35, -50,
];

const SHAPES: [(&[i32; 64], &[i32; 64]); 6] = [
    (&PAWN_MG, &PAWN_EG),
    (&KNIGHT_MG, &KNIGHT_EG),
    (&BISHOP_MG, &BISHOP_EG),
    (&ROOK_MG, &ROOK_EG),
    (&QUEEN_MG, &QUEEN_EG),
    (&KING_MG, &KING_EG),
];

// ----- masks -----

const FILE_A: u64 = 0x0101_0101_0101_0101;
const NOT_FILE_A: u64 = !FILE_A;
const NOT_FILE_H: u64 = !(FILE_A << 7);

/// Dark squares (`a1`, `c1`, ..., `h8`). Built here because chess-rules'
/// `Bitboard::LIGHT_SQUARES`/`DARK_SQUARES` are swapped (bit 0, `a1`, sits in `LIGHT_SQUARES`).
const DARK: u64 = {
    let mut b = 0u64;
    let mut sq = 0;
    while sq < 64 {
        if (sq % 8 + sq / 8) % 2 == 0 {
            b |= 1 << sq;
        }
        sq += 1;
    }
    b
};
const LIGHT: u64 = !DARK;
const _: () = assert!(DARK & 1 == 1 && LIGHT & (1 << 7) != 0);

const fn file_bb(file: usize) -> u64 {
    FILE_A << file
}

const fn rank_bb(rank: usize) -> u64 {
    0xff << (8 * rank)
}

const ADJACENT_FILES: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        if f > 0 {
            t[f] |= file_bb(f - 1);
        }
        if f < 7 {
            t[f] |= file_bb(f + 1);
        }
        f += 1;
    }
    t
};

/// Ranks strictly in front of `rank` from `color`'s side.
const fn ranks_ahead(color: usize, rank: usize) -> u64 {
    let mut b = 0;
    let mut r = 0;
    while r < 8 {
        if (color == 0 && r > rank) || (color == 1 && r < rank) {
            b |= rank_bb(r);
        }
        r += 1;
    }
    b
}

struct Masks {
    /// Squares ahead on the same file.
    forward: [[u64; 64]; 2],
    /// Squares ahead on the same and neighbouring files (where enemy pawns stop a passer).
    passed_span: [[u64; 64]; 2],
    /// Neighbouring-file squares level with or behind (where supporting pawns come from).
    support_span: [[u64; 64]; 2],
}

const MASKS: Masks = {
    let mut m = Masks {
        forward: [[0; 64]; 2],
        passed_span: [[0; 64]; 2],
        support_span: [[0; 64]; 2],
    };
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let (f, r) = (sq % 8, sq / 8);
            let ahead = ranks_ahead(c, r);
            m.forward[c][sq] = ahead & file_bb(f);
            m.passed_span[c][sq] = ahead & (file_bb(f) | ADJACENT_FILES[f]);
            m.support_span[c][sq] = !ahead & ADJACENT_FILES[f];
            sq += 1;
        }
        c += 1;
    }
    m
};

const _: () = assert!(MASKS.forward[0][0] == FILE_A & !1);
const _: () = assert!(MASKS.passed_span[1][63] == ((FILE_A << 6) | (FILE_A << 7)) & !rank_bb(7));

#[inline]
fn pawn_attacks_set(pawns: Bitboard, color: Color) -> Bitboard {
    let p = pawns.0;
    Bitboard(match color {
        Color::White => ((p & NOT_FILE_A) << 7) | ((p & NOT_FILE_H) << 9),
        Color::Black => ((p & NOT_FILE_A) >> 9) | ((p & NOT_FILE_H) >> 7),
    })
}

/// Rank index from `color`'s side (0 = its first rank).
#[inline]
fn relative_rank(color: Color, sq: Square) -> usize {
    match color {
        Color::White => sq.rank().index(),
        Color::Black => 7 - sq.rank().index(),
    }
}

#[inline]
fn forward(color: Color, sq: Square) -> Option<Square> {
    sq.offset(0, if color.is_white() { 1 } else { -1 })
}

/// Steps from the four centre squares (0 in the centre, 6 in a corner).
#[inline]
fn centre_distance(sq: Square) -> i32 {
    let f = sq.file().index() as i32;
    let r = sq.rank().index() as i32;
    let df = if f < 4 { 3 - f } else { f - 4 };
    let dr = if r < 4 { 3 - r } else { r - 4 };
    df + dr
}

#[inline]
fn manhattan(a: Square, b: Square) -> i32 {
    (a.file().index() as i32 - b.file().index() as i32).abs()
        + (a.rank().index() as i32 - b.rank().index() as i32).abs()
}

/// Values for endgame material decisions (same scale as SEE).
const SIMPLE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 0];

#[derive(Clone, Copy, Default)]
struct PawnEntry {
    white: u64,
    black: u64,
    valid: bool,
    score: S,
    passed: [u64; 2],
}

const PAWN_CACHE_SIZE: usize = 1 << 14;

/// The hand-written evaluation. Cheap to create; keeps a small pawn-structure cache.
#[derive(Clone)]
pub struct HandEval {
    p: EvalParams,
    /// Material plus piece-square value by colour, role and square, from the owner's side.
    psqt: Box<[[[S; 64]; 6]; 2]>,
    pawns: Vec<PawnEntry>,
}

impl std::fmt::Debug for HandEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandEval").finish_non_exhaustive()
    }
}

impl Default for HandEval {
    fn default() -> Self {
        HandEval::new(EvalParams::default())
    }
}

impl Evaluator for HandEval {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        let white = self.white_score(pos);
        let v = if pos.turn().is_white() { white } else { -white };
        v.clamp(-20_000, 20_000)
    }

    fn clear(&mut self) {
        self.pawns.iter_mut().for_each(|e| e.valid = false);
    }
}

/// What the piece loop learns about one side.
#[derive(Clone, Copy, Default)]
struct SideInfo {
    /// Squares this side attacks.
    attacks: Bitboard,
    /// Squares this side attacks twice or more.
    attacks2: Bitboard,
    /// Squares attacked by this side's pieces of each role.
    by_role: [Bitboard; 6],
    /// Pieces of this side attacking the enemy king ring, and their danger units.
    king_attackers: i32,
    king_attack_units: i32,
}

impl HandEval {
    pub fn new(p: EvalParams) -> HandEval {
        let mut psqt = Box::new([[[S::ZERO; 64]; 6]; 2]);
        for color in Color::ALL {
            for role in Role::ALL {
                let (mg, eg) = SHAPES[role.index()];
                for sq in Square::ALL {
                    let i = match color {
                        Color::White => sq.index() ^ 56,
                        Color::Black => sq.index(),
                    };
                    psqt[color.index()][role.index()][sq.index()] =
                        p.piece_value[role.index()] + S::new(mg[i], eg[i]);
                }
            }
        }
        HandEval {
            p,
            psqt,
            pawns: vec![PawnEntry::default(); PAWN_CACHE_SIZE],
        }
    }

    /// Material plus piece-square value of a `color` `role` on `sq` (from that side's point
    /// of view), the table the evaluation itself reads.
    pub fn material_psqt(&self, color: Color, role: Role, sq: Square) -> S {
        self.psqt[color.index()][role.index()][sq.index()]
    }

    pub fn params(&self) -> &EvalParams {
        &self.p
    }

    /// The evaluation from white's point of view, without the tempo bonus.
    fn white_score(&mut self, pos: &Position) -> i32 {
        if pos.is_insufficient_material() {
            return 0;
        }
        if let Some(v) = self.special_endgame(pos) {
            return v;
        }
        let p = &self.p;
        let occ = pos.occupied();
        let mut score = S::ZERO;
        let mut phase = 0;

        for color in Color::ALL {
            let table = &self.psqt[color.index()];
            let mut side = S::ZERO;
            for role in Role::ALL {
                let pieces = pos.pieces(color, role);
                phase += p.phase_weight[role.index()] * pieces.count() as i32;
                for sq in pieces {
                    side += table[role.index()][sq.index()];
                }
            }
            score += if color.is_white() { side } else { -side };
        }

        let pawn = self.pawn_entry(pos);
        let p = &self.p;
        score += pawn.score;

        let kings = [pos.king_of(Color::White), pos.king_of(Color::Black)];
        let rings = kings.map(|k| king_attacks(k).with(k));
        let pawn_att = [
            pawn_attacks_set(pos.pieces(Color::White, Role::Pawn), Color::White),
            pawn_attacks_set(pos.pieces(Color::Black, Role::Pawn), Color::Black),
        ];
        let mut info = [SideInfo::default(); 2];
        for c in Color::ALL {
            let i = c.index();
            let k = king_attacks(kings[i]);
            info[i].attacks2 = pawn_att[i] & k;
            info[i].attacks = pawn_att[i] | k;
            info[i].by_role[Role::Pawn.index()] = pawn_att[i];
            info[i].by_role[Role::King.index()] = k;
        }

        for us in Color::ALL {
            let them = !us;
            let (ui, ti) = (us.index(), them.index());
            let sign = if us.is_white() { 1 } else { -1 };
            let mut s = S::ZERO;
            let own_pawns = pos.pieces(us, Role::Pawn);
            let all_pawns = pos.by_role(Role::Pawn);
            let mobility_area = !(own_pawns | pos.pieces(us, Role::King)) & !pawn_att[ti];
            for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                let r = role.index();
                for sq in pos.pieces(us, role) {
                    let a = match role {
                        Role::Knight => knight_attacks(sq),
                        Role::Bishop => bishop_attacks(sq, occ),
                        Role::Rook => rook_attacks(sq, occ),
                        _ => bishop_attacks(sq, occ) | rook_attacks(sq, occ),
                    };
                    let side = &mut info[ui];
                    side.attacks2 |= side.attacks & a;
                    side.attacks |= a;
                    side.by_role[r] |= a;
                    let mob = (a & mobility_area).count() as i32;
                    s += p.mobility[r] * (mob - p.mobility_base[r]);
                    if a.intersects(rings[ti]) {
                        side.king_attackers += 1;
                        side.king_attack_units +=
                            p.king_attack_weight[r] + (a & king_attacks(kings[ti])).count() as i32;
                    }
                    if role == Role::Rook {
                        let file = Bitboard(file_bb(sq.file().index()));
                        if !file.intersects(all_pawns) {
                            s += p.rook_open_file;
                        } else if !file.intersects(own_pawns) {
                            s += p.rook_half_open_file;
                        }
                        if relative_rank(us, sq) == 6 && relative_rank(us, kings[ti]) == 7 {
                            s += p.rook_seventh;
                        }
                    }
                }
            }
            if pos.pieces(us, Role::Bishop).more_than_one() {
                s += p.bishop_pair;
            }
            score += s * sign;
        }

        for us in Color::ALL {
            let them = !us;
            let (ui, ti) = (us.index(), them.index());
            let sign = if us.is_white() { 1 } else { -1 };
            let mut s = S::ZERO;

            // Threats against their pieces.
            let their_pieces =
                pos.by_color(them) & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King);
            s += p.threat_by_pawn * (pawn_att[ui] & their_pieces).count() as i32;
            let majors = pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen);
            let minor_att =
                info[ui].by_role[Role::Knight.index()] | info[ui].by_role[Role::Bishop.index()];
            s += p.threat_by_minor * (minor_att & majors).count() as i32;
            let hanging = their_pieces & info[ui].attacks & !info[ti].attacks;
            s += p.hanging * hanging.count() as i32;

            // Passed pawns beyond the cached part.
            for sq in Bitboard(pawn.passed[ui]) {
                let rank = relative_rank(us, sq) as i32;
                let w = (rank - 2).max(0);
                if w == 0 {
                    continue;
                }
                let Some(stop) = forward(us, sq) else {
                    continue;
                };
                let their_dist = stop.distance(kings[ti]).min(5) as i32;
                let our_dist = stop.distance(kings[ui]).min(5) as i32;
                s.eg += w * (their_dist * p.passed_enemy_king - our_dist * p.passed_own_king);
                if occ.contains(stop) {
                    s += p.passed_blocked * w;
                } else if !info[ti].attacks.contains(stop) {
                    s += p.passed_free * w;
                }
                // Rule of the square against a lone king.
                let their_npm =
                    pos.by_color(them) & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King);
                if their_npm.is_empty() {
                    let promo = Square::from_coords(
                        sq.file(),
                        if us.is_white() {
                            chess_rules::Rank::Eighth
                        } else {
                            chess_rules::Rank::First
                        },
                    );
                    let path = Bitboard(MASKS.forward[ui][sq.index()]);
                    let pawn_dist = (7 - rank).min(5);
                    let tempo = i32::from(pos.turn() == them);
                    let king_dist = promo.distance(kings[ti]) as i32 - tempo;
                    if !path.intersects(occ) && king_dist > pawn_dist {
                        s += p.unstoppable;
                    }
                }
            }

            // Our king's safety against their attack.
            let ksq = kings[ui];
            let mut danger = 0;
            let attackers = info[ti].king_attackers;
            let their_queens = pos.pieces(them, Role::Queen);
            if attackers >= 2 || (attackers >= 1 && their_queens.has_any()) {
                let safe = !info[ui].attacks & !pos.by_color(them);
                let diag = bishop_attacks(ksq, occ);
                let orth = rook_attacks(ksq, occ);
                let checks = [
                    (Role::Knight, knight_attacks(ksq)),
                    (Role::Bishop, diag),
                    (Role::Rook, orth),
                    (Role::Queen, diag | orth),
                ];
                let mut units = info[ti].king_attack_units;
                for (role, squares) in checks {
                    let n = (squares & info[ti].by_role[role.index()] & safe).count() as i32;
                    units += p.safe_check[role.index()] * n.min(2);
                }
                let weak_ring = rings[ui] & info[ti].attacks & !info[ui].attacks2;
                units += weak_ring.count() as i32;
                if their_queens.is_empty() {
                    units /= 2;
                }
                danger = (units * units / p.king_danger_divisor).min(p.king_danger_max);
            }
            s.mg -= danger;
            s.eg -= danger / 8;

            // Pawn shield and storm.
            let kf = ksq.file().index();
            let kr = relative_rank(us, ksq);
            let mut shelter = 0;
            for f in kf.saturating_sub(1)..=(kf + 1).min(7) {
                let file = Bitboard(file_bb(f));
                let ahead = Bitboard(ranks_ahead(ui, ksq.rank().index()));
                let ours = pos.pieces(us, Role::Pawn) & file & ahead;
                let nearest = ours.into_iter().map(|q| relative_rank(us, q)).min();
                match nearest {
                    None => shelter -= p.shield_missing,
                    Some(r) => shelter -= p.shield_distance[(r - kr).min(3)],
                }
                let theirs = pos.pieces(them, Role::Pawn) & file & ahead;
                if let Some(r) = theirs.into_iter().map(|q| relative_rank(us, q)).min() {
                    let d = r - kr;
                    if d < p.storm.len() {
                        let blocked = nearest.is_some_and(|o| o + 1 == r);
                        let v = p.storm[d];
                        shelter -= if blocked { v / 2 } else { v };
                    }
                }
            }
            if !Bitboard(file_bb(kf)).intersects(pos.pieces(us, Role::Pawn)) {
                shelter -= p.king_open_file;
            }
            s.mg += shelter;

            score += s * sign;
        }

        // Tapering and endgame scaling.
        let phase = phase.min(24);
        let strong = if score.eg >= 0 {
            Color::White
        } else {
            Color::Black
        };
        let scale = self.endgame_scale(pos, strong);
        let eg = score.eg * scale / 64;
        let mut v = (score.mg * phase + eg * (24 - phase)) / 24;
        // Drift towards a draw as the fifty-move counter runs.
        let hm = pos.halfmoves().min(100) as i32;
        v = v * (200 - hm) / 200;
        v + if pos.turn().is_white() {
            p.tempo
        } else {
            -p.tempo
        }
    }

    /// Endgame scale (of 64) for `strong`'s winning chances.
    fn endgame_scale(&self, pos: &Position, strong: Color) -> i32 {
        let weak = !strong;
        let p = &self.p;
        let npm = |c: Color| -> i32 {
            [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
                .iter()
                .map(|&r| SIMPLE_VALUE[r.index()] * pos.pieces(c, r).count() as i32)
                .sum()
        };
        let (sn, wn) = (npm(strong), npm(weak));
        if pos.pieces(strong, Role::Pawn).is_empty()
            && sn - wn <= SIMPLE_VALUE[Role::Bishop.index()]
        {
            return if sn < SIMPLE_VALUE[Role::Rook.index()] {
                0
            } else {
                p.pawnless_minor_up_scale
            };
        }
        let wb = pos.pieces(Color::White, Role::Bishop);
        let bb = pos.pieces(Color::Black, Role::Bishop);
        if wb.count() == 1 && bb.count() == 1 {
            let light = Bitboard(LIGHT);
            if wb.intersects(light) != bb.intersects(light) {
                let others =
                    pos.by_role(Role::Knight) | pos.by_role(Role::Rook) | pos.by_role(Role::Queen);
                return if others.is_empty() {
                    p.opposite_bishops_scale
                } else {
                    p.opposite_bishops_pieces_scale
                };
            }
        }
        64
    }

    /// Endgames against a lone king, scored from white's side; `None` when not one.
    fn special_endgame(&self, pos: &Position) -> Option<i32> {
        let white_alone = pos.by_color(Color::White).count() == 1;
        let black_alone = pos.by_color(Color::Black).count() == 1;
        let (strong, weak) = match (white_alone, black_alone) {
            (false, true) => (Color::White, Color::Black),
            (true, false) => (Color::Black, Color::White),
            _ => return None,
        };
        if pos.pieces(strong, Role::Pawn).has_any() {
            return None;
        }
        let p = &self.p;
        let count = |r: Role| pos.pieces(strong, r).count() as i32;
        let (knights, bishops, rooks, queens) = (
            count(Role::Knight),
            count(Role::Bishop),
            count(Role::Rook),
            count(Role::Queen),
        );
        let sb = pos.pieces(strong, Role::Bishop);
        let both_bishop_colours = sb.intersects(Bitboard(LIGHT)) && sb.intersects(Bitboard(DARK));
        let can_mate =
            queens > 0 || rooks > 0 || both_bishop_colours || (bishops > 0 && knights > 0);
        if !can_mate {
            return Some(0);
        }
        let material: i32 = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .iter()
            .map(|&r| SIMPLE_VALUE[r.index()] * count(r))
            .sum();
        let sk = pos.king_of(strong);
        let wk = pos.king_of(weak);
        let proximity = 14 - manhattan(sk, wk);
        let mut v = p.mop_up_base + material + p.mop_up_proximity * proximity;
        if queens == 0 && rooks == 0 && knights == 1 && bishops == 1 {
            // KBN: only the corners of the bishop's colour are mating corners.
            let corners = if sb.intersects(Bitboard(DARK)) {
                [Square::A1, Square::H8]
            } else {
                [Square::A8, Square::H1]
            };
            let d = corners
                .iter()
                .map(|&c| manhattan(wk, c))
                .min()
                .unwrap_or(14);
            v += p.kbn_corner * (14 - d) + p.mop_up_edge * centre_distance(wk);
        } else {
            v += p.mop_up_edge * centre_distance(wk);
        }
        Some(if strong.is_white() { v } else { -v })
    }

    fn pawn_entry(&mut self, pos: &Position) -> PawnEntry {
        let white = pos.pieces(Color::White, Role::Pawn).0;
        let black = pos.pieces(Color::Black, Role::Pawn).0;
        let h =
            white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let idx = (h >> 50) as usize & (PAWN_CACHE_SIZE - 1);
        let e = self.pawns[idx];
        if e.valid && e.white == white && e.black == black {
            return e;
        }
        let (ws, wp) = self.pawn_structure(pos, Color::White);
        let (bs, bp) = self.pawn_structure(pos, Color::Black);
        let e = PawnEntry {
            white,
            black,
            valid: true,
            score: ws - bs,
            passed: [wp, bp],
        };
        self.pawns[idx] = e;
        e
    }

    /// Pawn-structure score for `us` (from its side) and its passed pawns.
    fn pawn_structure(&self, pos: &Position, us: Color) -> (S, u64) {
        let p = &self.p;
        let ui = us.index();
        let ours = pos.pieces(us, Role::Pawn);
        let theirs = pos.pieces(!us, Role::Pawn);
        let their_att = pawn_attacks_set(theirs, !us);
        let mut s = S::ZERO;
        let mut passed = 0u64;
        for sq in ours {
            let i = sq.index();
            let f = sq.file().index();
            let r = relative_rank(us, sq);
            let adj = Bitboard(ADJACENT_FILES[f]);
            let ahead = Bitboard(MASKS.forward[ui][i]);
            let doubled = ours.intersects(ahead);
            if doubled {
                s += p.doubled;
            }
            let phalanx = ours & adj & Bitboard(rank_bb(sq.rank().index()));
            let supported = ours & pawn_attacks(!us, sq);
            if !ours.intersects(adj) {
                s += p.isolated;
            } else if !ours.intersects(Bitboard(MASKS.support_span[ui][i]))
                && forward(us, sq).is_some_and(|stop| their_att.contains(stop))
            {
                s += p.backward;
            }
            if phalanx.has_any() || supported.has_any() {
                let c = p.connected[r];
                s += if phalanx.has_any() {
                    c + S::new(c.mg / 2, c.eg / 2)
                } else {
                    c
                };
            }
            if !doubled && !theirs.intersects(Bitboard(MASKS.passed_span[ui][i])) {
                s += p.passed[r];
                passed |= 1 << i;
            }
        }
        (s, passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(fen: &str) -> i32 {
        HandEval::default().evaluate(&Position::from_fen(fen).unwrap())
    }

    #[test]
    fn symmetric_under_mirroring() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 b - - 0 9",
            "8/8/4k3/8/8/3BN3/8/4K3 w - - 0 1",
            "6k1/5ppp/8/8/8/8/2b2PPP/3B2K1 b - - 0 1",
        ];
        let mut e = HandEval::default();
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(e.evaluate(&pos), e.evaluate(&pos.mirrored()), "{fen}");
        }
    }

    #[test]
    fn material_matters() {
        // White a queen up.
        assert!(eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") > 700);
        assert!(eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1") < -700);
    }

    #[test]
    fn insufficient_material_is_zero() {
        assert_eq!(eval("8/8/4k3/8/8/3B4/8/4K3 w - - 0 1"), 0);
        assert_eq!(eval("8/8/4k3/8/8/3N4/8/4K3 b - - 0 1"), 0);
        // Two knights cannot force mate.
        assert_eq!(eval("8/8/4k3/8/8/3NN3/8/4K3 w - - 0 1"), 0);
    }

    #[test]
    fn lone_king_is_driven_to_the_edge() {
        let centre = eval("8/8/8/3k4/8/8/8/R3K3 w - - 0 1");
        let edge = eval("3k4/8/8/8/8/8/8/R3K3 w - - 0 1");
        assert!(edge > centre && centre > 500, "{edge} {centre}");
    }

    #[test]
    fn kbn_prefers_the_bishop_coloured_corner() {
        // Dark-squared bishop (c1): a1 and h8 are the mating corners.
        let right = eval("7k/8/5K2/8/8/8/8/2B1N3 w - - 0 1");
        let wrong = eval("k7/8/2K5/8/8/8/8/2B1N3 w - - 0 1");
        assert!(right > wrong, "{right} {wrong}");
    }

    #[test]
    fn opposite_bishops_are_drawish() {
        // White three pawns up; bishops d3 (light) v d6 (dark) or e6 (light).
        let ocb = eval("6k1/8/3b4/8/8/3B4/5PPP/6K1 w - - 0 1");
        let scb = eval("6k1/8/4b3/8/8/3B4/5PPP/6K1 w - - 0 1");
        assert!(ocb > 0 && ocb < scb, "{ocb} {scb}");
    }

    #[test]
    fn passed_pawns_count() {
        let passer = eval("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1");
        let blocked = eval("4k3/8/3p4/3P4/8/8/8/4K3 w - - 0 1");
        assert!(passer > 100, "{passer}");
        assert!(blocked.abs() < 60, "{blocked}");
    }
}
