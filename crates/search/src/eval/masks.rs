//! Bitboard masks and square helpers of the evaluation, built at compile time.

use chess_rules::{Bitboard, Color, Square};

// ----- masks -----

pub(super) const FILE_A: u64 = 0x0101_0101_0101_0101;

/// Dark squares (`a1`, `c1`, ..., `h8`) and light squares, as chess-rules has them.
pub(super) const DARK: u64 = Bitboard::DARK_SQUARES.0;
pub(super) const LIGHT: u64 = Bitboard::LIGHT_SQUARES.0;
const _: () = assert!(DARK & 1 == 1 && LIGHT & (1 << 7) != 0);

pub(super) const fn file_bb(file: usize) -> u64 {
    FILE_A << file
}

pub(super) const fn rank_bb(rank: usize) -> u64 {
    0xff << (8 * rank)
}

pub(super) const ADJACENT_FILES: [u64; 8] = {
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
pub(super) const fn ranks_ahead(color: usize, rank: usize) -> u64 {
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

pub(super) struct Masks {
    /// Squares ahead on the same file.
    pub(super) forward: [[u64; 64]; 2],
    /// Squares ahead on the same and neighbouring files (where enemy pawns stop a passer).
    pub(super) passed_span: [[u64; 64]; 2],
    /// Neighbouring-file squares level with or behind (where supporting pawns come from).
    pub(super) support_span: [[u64; 64]; 2],
}

pub(super) const MASKS: Masks = {
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

/// Rank index from `color`'s side (0 = its first rank).
#[inline]
pub(super) fn relative_rank(color: Color, sq: Square) -> usize {
    match color {
        Color::White => sq.rank().index(),
        Color::Black => 7 - sq.rank().index(),
    }
}

#[inline]
pub(super) fn forward(color: Color, sq: Square) -> Option<Square> {
    sq.offset(0, if color.is_white() { 1 } else { -1 })
}

/// Steps from the four centre squares (0 in the centre, 6 in a corner).
#[inline]
pub(super) fn centre_distance(sq: Square) -> i32 {
    let f = sq.file().index() as i32;
    let r = sq.rank().index() as i32;
    let df = if f < 4 { 3 - f } else { f - 4 };
    let dr = if r < 4 { 3 - r } else { r - 4 };
    df + dr
}

#[inline]
pub(super) fn manhattan(a: Square, b: Square) -> i32 {
    (a.file().index() as i32 - b.file().index() as i32).abs()
        + (a.rank().index() as i32 - b.rank().index() as i32).abs()
}
