//! King safety, development and castling, centre control and space.

use chess_rules::{Bitboard, CastlingSide, Color, File, Position, Rank, Role, Square, attacks};
use serde::Serialize;

use crate::material::{developed_minors, minor_home_squares};

/// A piece named by its letter and square, `Qh5` (white and black alike).
pub(crate) fn piece_name(pos: &Position, sq: Square) -> String {
    let role = pos.role_at(sq).unwrap_or(Role::Pawn);
    match role {
        Role::Pawn => format!("P{sq}"),
        r => format!("{}{sq}", r.upper_char()),
    }
}

/// One side's king safety.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KingSafety {
    pub king: String,
    pub in_check: bool,
    /// Own pawns one or two ranks in front of the king, on its file and the neighbouring ones.
    pub pawn_shield: Vec<String>,
    /// The king's file and its neighbours: those without any pawn, and those without an own
    /// pawn but with an enemy one.
    pub open_files_near: Vec<String>,
    pub half_open_files_near: Vec<String>,
    /// Enemy pieces attacking the king's square or a square next to it, as `Qh5`.
    pub attackers: Vec<String>,
}

/// One side's development.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Development {
    /// Knights and bishops still on their starting squares, as `Nb1`.
    pub undeveloped: Vec<String>,
    pub developed_minors: u32,
    /// `kingside` or `queenside` when the king stands castled (g/h or a/b/c file of its first
    /// rank), else `None`.
    pub castled: Option<&'static str>,
    /// The castling rights left: `kingside`, `queenside`.
    pub can_castle: Vec<&'static str>,
}

/// One side's hold on the centre (d4, e4, d5, e5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CentreControl {
    /// Attacks on the four centre squares by this side's pawns and pieces, counted per piece.
    pub attacks: u32,
    /// This side's pawns and pieces standing on them, as `Pe4`.
    pub occupants: Vec<String>,
}

pub(crate) const CENTRE: [Square; 4] = [Square::D4, Square::E4, Square::D5, Square::E5];

fn attacks_of(pos: &Position, color: Color, sq: Square) -> Bitboard {
    let role = pos.role_at(sq).unwrap_or(Role::Pawn);
    attacks(role, color, sq, pos.occupied())
}

fn near_files(file: File) -> impl Iterator<Item = File> {
    [-1, 0, 1].into_iter().filter_map(move |d| file.offset(d))
}

pub fn king_safety(pos: &Position, color: Color) -> KingSafety {
    let king = pos.king_of(color);
    let own_pawns = pos.pieces(color, Role::Pawn);
    let their_pawns = pos.pieces(!color, Role::Pawn);
    let dir = if color == Color::White { 1 } else { -1 };
    let mut shield = Bitboard::EMPTY;
    let mut open = Vec::new();
    let mut half = Vec::new();
    for f in near_files(king.file()) {
        for step in [1, 2] {
            if let Some(r) = king.rank().offset(step * dir) {
                let sq = Square::from_coords(f, r);
                if own_pawns.contains(sq) {
                    shield |= Bitboard::from_square(sq);
                }
            }
        }
        let fb = Bitboard::file(f);
        match ((own_pawns & fb).has_any(), (their_pawns & fb).has_any()) {
            (false, false) => open.push(f.to_string()),
            (false, true) => half.push(f.to_string()),
            _ => {}
        }
    }
    let zone = chess_rules::king_attacks(king) | Bitboard::from_square(king);
    let attackers = pos
        .by_color(!color)
        .into_iter()
        .filter(|&sq| pos.role_at(sq) != Some(Role::King))
        .filter(|&sq| attacks_of(pos, !color, sq).intersects(zone))
        .map(|sq| piece_name(pos, sq))
        .collect();
    KingSafety {
        king: king.to_string(),
        in_check: pos.attackers_to(king, !color, pos.occupied()).has_any(),
        pawn_shield: shield.into_iter().map(|s| s.to_string()).collect(),
        open_files_near: open,
        half_open_files_near: half,
        attackers,
    }
}

pub fn development(pos: &Position, color: Color) -> Development {
    let home = minor_home_squares(color);
    let minors = pos.pieces(color, Role::Knight) | pos.pieces(color, Role::Bishop);
    let undeveloped = (minors & home)
        .into_iter()
        .map(|sq| piece_name(pos, sq))
        .collect();
    let king = pos.king_of(color);
    let castled = if king.rank() != Rank::First.relative(color) {
        None
    } else {
        match king.file() {
            File::G | File::H => Some("kingside"),
            File::A | File::B | File::C => Some("queenside"),
            _ => None,
        }
    };
    let rights = pos.castling_rights();
    let can_castle = [
        (CastlingSide::KingSide, "kingside"),
        (CastlingSide::QueenSide, "queenside"),
    ]
    .into_iter()
    .filter(|(side, _)| rights.has(color, *side))
    .map(|(_, n)| n)
    .collect();
    Development {
        undeveloped,
        developed_minors: developed_minors(pos, color),
        castled,
        can_castle,
    }
}

pub fn centre(pos: &Position, color: Color) -> CentreControl {
    let centre: Bitboard = CENTRE.into_iter().collect();
    let attacks = pos
        .by_color(color)
        .into_iter()
        .map(|sq| (attacks_of(pos, color, sq) & centre).count())
        .sum();
    let occupants = (pos.by_color(color) & centre)
        .into_iter()
        .map(|sq| piece_name(pos, sq))
        .collect();
    CentreControl { attacks, occupants }
}

/// Squares in the opponent's half that `color` attacks with any pawn or piece and that no
/// enemy pawn attacks.
pub fn space(pos: &Position, color: Color) -> u32 {
    let their_half: Bitboard = Rank::ALL
        .into_iter()
        .filter(|r| r.relative(color).index() >= 4)
        .fold(Bitboard::EMPTY, |b, r| b | Bitboard::rank(r));
    let ours = pos
        .by_color(color)
        .into_iter()
        .fold(Bitboard::EMPTY, |b, sq| b | attacks_of(pos, color, sq));
    let their_pawn_attacks = pos
        .pieces(!color, Role::Pawn)
        .into_iter()
        .fold(Bitboard::EMPTY, |b, sq| {
            b | chess_rules::pawn_attacks(!color, sq)
        });
    (ours & their_half & !their_pawn_attacks).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    #[test]
    fn king_safety_shield_files_attackers() {
        // White castled short with f2, g2 pawns (h-pawn gone: the h-file is open), black
        // queen on h4 and knight on g4 aiming at the king's squares.
        let p = pos("4k3/pppppppp/8/8/6nq/8/PPPPPPP1/5RK1 w - - 0 1");
        let ks = king_safety(&p, Color::White);
        assert_eq!(ks.king, "g1");
        assert_eq!(ks.pawn_shield, ["f2", "g2"]);
        assert_eq!(ks.open_files_near, Vec::<String>::new());
        assert_eq!(ks.half_open_files_near, ["h"]);
        assert_eq!(ks.attackers, ["Ng4", "Qh4"]);
        assert!(!ks.in_check);
        let d = development(&p, Color::White);
        assert_eq!(d.castled, Some("kingside"));
        assert!(d.can_castle.is_empty());
        assert_eq!(d.undeveloped, Vec::<String>::new());
    }

    #[test]
    fn development_centre_space_at_the_start_and_after_e4() {
        let start = Position::startpos();
        let d = development(&start, Color::White);
        assert_eq!(d.undeveloped, ["Nb1", "Bc1", "Bf1", "Ng1"]);
        assert_eq!(d.developed_minors, 0);
        assert_eq!(d.castled, None);
        assert_eq!(d.can_castle, ["kingside", "queenside"]);
        let c = centre(&start, Color::White);
        assert_eq!(c.attacks, 0);
        assert_eq!(space(&start, Color::White), 0);
        // 1.e4 e5 2.Nf3: white attacks d5 (e4) and e5 (Nf3), occupies e4.
        let p = pos("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
        let c = centre(&p, Color::White);
        assert_eq!(c.occupants, ["Pe4"]);
        // e4 attacks d5; Nf3 attacks d4 and e5; Bf1 and Qd1 are blocked.
        assert_eq!(c.attacks, 3);
        let d = development(&p, Color::White);
        assert_eq!(d.developed_minors, 1);
        assert_eq!(d.undeveloped, ["Nb1", "Bc1", "Bf1"]);
    }
}
