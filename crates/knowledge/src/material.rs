//! Material and development counted the documents' way: piece values, the value of a side's
//! pieces, the minor pieces' home squares. A leaf: the openings and the position report both
//! count with it.

use chess_rules::{Bitboard, Color, File, Position, Rank, Role, Square};

/// The documents' piece values: pawn 1, knight 3, bishop 3, rook 5, queen 9.
pub const PIECE_VALUES: [(Role, u32); 5] = [
    (Role::Pawn, 1),
    (Role::Knight, 3),
    (Role::Bishop, 3),
    (Role::Rook, 5),
    (Role::Queen, 9),
];

fn value(role: Role) -> u32 {
    PIECE_VALUES
        .iter()
        .find(|(r, _)| *r == role)
        .map_or(0, |(_, v)| *v)
}

/// The value of `color`'s pieces other than pawns and the king.
pub(crate) fn piece_points(pos: &Position, color: Color) -> u32 {
    [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .map(|r| pos.pieces(color, r).count() * value(r))
        .sum()
}

/// The starting squares of `color`'s knights and bishops.
pub(crate) fn minor_home_squares(color: Color) -> Bitboard {
    let rank = Rank::First.relative(color);
    [File::B, File::C, File::F, File::G]
        .into_iter()
        .fold(Bitboard::EMPTY, |b, f| {
            b | Bitboard::from_square(Square::from_coords(f, rank))
        })
}

/// Minor pieces of `color` not on their starting squares.
pub(crate) fn developed_minors(p: &Position, color: Color) -> u32 {
    let minors = p.pieces(color, Role::Knight) | p.pieces(color, Role::Bishop);
    let home = minor_home_squares(color);
    (minors & !home).count()
}
