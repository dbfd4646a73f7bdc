//! Zobrist keys, generated at compile time from a fixed-seed SplitMix64 sequence.

use crate::{CastlingRights, File, Piece, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

struct Keys {
    pieces: [[u64; 64]; 12],
    castling: [u64; 16],
    en_passant: [u64; 8],
    black_to_move: u64,
}

const fn make_keys() -> Keys {
    let mut state = 0x2545_f491_4f6c_dd1d;
    let mut pieces = [[0u64; 64]; 12];
    let mut p = 0;
    while p < 12 {
        let mut sq = 0;
        while sq < 64 {
            let (s, v) = splitmix(state);
            state = s;
            pieces[p][sq] = v;
            sq += 1;
        }
        p += 1;
    }
    // Castling keys are the XOR of one key per right, so removing a right is one XOR.
    let mut single = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (s, v) = splitmix(state);
        state = s;
        single[i] = v;
        i += 1;
    }
    let mut castling = [0u64; 16];
    let mut bits = 0;
    while bits < 16 {
        let mut j = 0;
        while j < 4 {
            if bits & (1 << j) != 0 {
                castling[bits] ^= single[j];
            }
            j += 1;
        }
        bits += 1;
    }
    let mut en_passant = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        let (s, v) = splitmix(state);
        state = s;
        en_passant[f] = v;
        f += 1;
    }
    let (_, black_to_move) = splitmix(state);
    Keys {
        pieces,
        castling,
        en_passant,
        black_to_move,
    }
}

static KEYS: Keys = make_keys();

#[inline]
pub(crate) fn piece(p: Piece, sq: Square) -> u64 {
    KEYS.pieces[p.index()][sq as usize]
}

#[inline]
pub(crate) fn castling(rights: CastlingRights) -> u64 {
    KEYS.castling[rights.bits() as usize]
}

#[inline]
pub(crate) fn en_passant(file: File) -> u64 {
    KEYS.en_passant[file as usize]
}

#[inline]
pub(crate) fn black_to_move() -> u64 {
    KEYS.black_to_move
}
