//! Attack tables. Leaper and ray tables are computed by `const fn` at compile time; sliding
//! attacks use magic bitboards whose tables `build.rs` generates.

use crate::{Bitboard, Color, Role, Square};

pub(crate) struct Magic {
    pub(crate) mask: u64,
    pub(crate) magic: u64,
    pub(crate) shift: u32,
    pub(crate) offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/magics.rs"));

const fn step_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

static KNIGHT: [u64; 64] = step_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [u64; 64] = step_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[u64; 64]; 2] = [
    step_table(&[(-1, 1), (1, 1)]),
    step_table(&[(-1, -1), (1, -1)]),
];

const DIRS: [(i32, i32); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

/// Squares strictly between two squares on a line, and the whole line through both.
const fn ray_tables() -> ([[u64; 64]; 64], [[u64; 64]; 64]) {
    let mut between = [[0u64; 64]; 64];
    let mut line = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let (fa, ra) = ((a % 8) as i32, (a / 8) as i32);
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRS[d];
            // The full line through `a` in this direction, both ways.
            let mut full = 1u64 << a;
            let mut k = 1;
            while k < 8 {
                let (f, r) = (fa + df * k, ra + dr * k);
                if f >= 0 && f < 8 && r >= 0 && r < 8 {
                    full |= 1 << (r * 8 + f);
                }
                let (f, r) = (fa - df * k, ra - dr * k);
                if f >= 0 && f < 8 && r >= 0 && r < 8 {
                    full |= 1 << (r * 8 + f);
                }
                k += 1;
            }
            let mut acc = 0u64;
            let mut k = 1;
            while k < 8 {
                let (f, r) = (fa + df * k, ra + dr * k);
                if f < 0 || f >= 8 || r < 0 || r >= 8 {
                    break;
                }
                let b = (r * 8 + f) as usize;
                between[a][b] = acc;
                line[a][b] = full;
                acc |= 1 << b;
                k += 1;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

static RAYS: ([[u64; 64]; 64], [[u64; 64]; 64]) = ray_tables();

const _: () = assert!(KNIGHT[0] == (1 << 10) | (1 << 17));
const _: () = assert!(KING[63].count_ones() == 3);

#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq as usize])
}

#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq as usize])
}

/// Every square but those of the a-file, and of the h-file.
pub(crate) const NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
pub(crate) const NOT_FILE_H: u64 = !0x8080_8080_8080_8080;

/// Squares a pawn of `color` on `sq` attacks.
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color as usize][sq as usize])
}

/// Every square the pawns of `color` in `pawns` attack, all at once.
#[inline]
pub fn pawn_attacks_set(pawns: Bitboard, color: Color) -> Bitboard {
    let p = pawns.0;
    Bitboard(match color {
        Color::White => ((p & NOT_FILE_A) << 7) | ((p & NOT_FILE_H) << 9),
        Color::Black => ((p & NOT_FILE_A) >> 9) | ((p & NOT_FILE_H) >> 7),
    })
}

#[inline]
#[allow(unsafe_code)] // the one unchecked index of the crate: see SAFETY below
fn magic_lookup(m: &Magic, occupied: Bitboard) -> Bitboard {
    let idx = m.offset + ((occupied.0 & m.mask).wrapping_mul(m.magic) >> m.shift) as usize;
    debug_assert!(idx < SLIDER_TABLE_LEN);
    // SAFETY: build.rs sizes each square's slice as 1 << (64 - shift) entries starting at
    // `offset`, and a product shifted right by `shift` is below that, so `idx` is in bounds.
    Bitboard(unsafe { *SLIDER_ATTACKS.get_unchecked(idx) })
}

#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq as usize], occupied)
}

#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq as usize], occupied)
}

#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares attacked by a piece of this role and colour on `sq`.
#[inline]
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// Squares strictly between `a` and `b` when they share a rank, file or diagonal; else empty.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(RAYS.0[a as usize][b as usize])
}

/// The whole rank, file or diagonal through `a` and `b` (edge to edge); empty if none.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(RAYS.1[a as usize][b as usize])
}

/// True when `a`, `b` and `c` lie on one line.
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliders_match_tables() {
        let occ = Bitboard::from_square(Square::D6) | Bitboard::from_square(Square::F4);
        let r = rook_attacks(Square::D4, occ);
        assert!(r.contains(Square::D6) && !r.contains(Square::D7));
        assert!(r.contains(Square::F4) && !r.contains(Square::G4));
        assert_eq!(r.count(), 2 + 3 + 3 + 2);
        assert_eq!(bishop_attacks(Square::A1, Bitboard::EMPTY).count(), 7);
        assert_eq!(between(Square::A1, Square::D4).count(), 2);
        assert_eq!(line(Square::B2, Square::C3).count(), 8);
        assert!(between(Square::A1, Square::B3).is_empty());
    }

    #[test]
    fn pawn_attacks_set_is_the_union_of_each_pawns_attacks() {
        for color in [Color::White, Color::Black] {
            for sq in Square::ALL {
                let one = Bitboard::from_square(sq);
                assert_eq!(
                    pawn_attacks_set(one, color),
                    pawn_attacks(color, sq),
                    "{sq:?}"
                );
            }
            let pawns = Bitboard(0x00FF_0000_8142_A500);
            let union = pawns.fold(Bitboard::EMPTY, |b, sq| b | pawn_attacks(color, sq));
            assert_eq!(pawn_attacks_set(pawns, color), union);
        }
    }
}
