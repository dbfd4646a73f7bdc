//! Endgame knowledge: how much of its advantage a side can convert (no pawns and little more
//! material, opposite-coloured bishops), and the endgames against a lone king (mop-up; KBN's
//! mating corners).

use chess_rules::{Bitboard, Color, Position, Role, Square};

use super::masks::{DARK, LIGHT, centre_distance, manhattan};
use crate::params::EvalParams;

/// Values for endgame material decisions (same scale as SEE).
const SIMPLE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 0];

/// Endgame scale (of 64) for `strong`'s winning chances.
pub(super) fn endgame_scale(p: &EvalParams, pos: &Position, strong: Color) -> i32 {
    let weak = !strong;
    let npm = |c: Color| -> i32 {
        [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .iter()
            .map(|&r| SIMPLE_VALUE[r.index()] * pos.pieces(c, r).count() as i32)
            .sum()
    };
    let (sn, wn) = (npm(strong), npm(weak));
    if pos.pieces(strong, Role::Pawn).is_empty() && sn - wn <= SIMPLE_VALUE[Role::Bishop.index()] {
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
pub(super) fn special_endgame(p: &EvalParams, pos: &Position) -> Option<i32> {
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
    let count = |r: Role| pos.pieces(strong, r).count() as i32;
    let (knights, bishops, rooks, queens) = (
        count(Role::Knight),
        count(Role::Bishop),
        count(Role::Rook),
        count(Role::Queen),
    );
    let sb = pos.pieces(strong, Role::Bishop);
    let both_bishop_colours = sb.intersects(Bitboard(LIGHT)) && sb.intersects(Bitboard(DARK));
    let can_mate = queens > 0 || rooks > 0 || both_bishop_colours || (bishops > 0 && knights > 0);
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
