//! The phase of the game and the known endgame classes.

use chess_rules::{Color, Position, Role};
use serde::Serialize;

use crate::material::{minor_home_squares, piece_points};

/// Opening, middlegame or endgame.
///
/// - endgame: each side has at most 14 points of pieces (a queen and a rook, or two rooks
///   and a minor piece; pawns and kings not counted);
/// - opening: otherwise, while at least 56 of the 62 points of pieces are on the board and a
///   side still has two or more knights and bishops on their starting squares;
/// - middlegame: the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Opening,
    Middlegame,
    Endgame,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Opening => "opening",
            Phase::Middlegame => "middlegame",
            Phase::Endgame => "endgame",
        }
    }

    pub fn chinese(self) -> &'static str {
        match self {
            Phase::Opening => "开局",
            Phase::Middlegame => "中局",
            Phase::Endgame => "残局",
        }
    }
}

pub fn phase(pos: &Position) -> Phase {
    let (w, b) = (
        piece_points(pos, Color::White),
        piece_points(pos, Color::Black),
    );
    if w <= 14 && b <= 14 {
        return Phase::Endgame;
    }
    let undeveloped = |c: Color| {
        let minors = pos.pieces(c, Role::Knight) | pos.pieces(c, Role::Bishop);
        (minors & minor_home_squares(c)).count()
    };
    if w + b >= 56 && (undeveloped(Color::White) >= 2 || undeveloped(Color::Black) >= 2) {
        Phase::Opening
    } else {
        Phase::Middlegame
    }
}

/// The endgame classes the documents name, recognised by material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndgameClass {
    /// Neither side can mate (lone kings, a lone minor piece, bishops on one colour).
    InsufficientMaterial,
    /// King, bishop and knight against a lone king.
    KbnK,
    KqK,
    KrK,
    /// King and one pawn against a lone king.
    KpK,
    /// Kings and pawns only.
    PawnEndgame,
    /// Queens (and pawns) only.
    QueenEndgame,
    /// Rooks (and pawns) only, both sides with a rook.
    RookEndgame,
    /// One bishop each, on squares of different colours (and pawns).
    OppositeBishops,
    /// One bishop each on squares of one colour (and pawns).
    SameColouredBishops,
    /// Bishops (and pawns) only, otherwise.
    BishopEndgame,
    /// Knights (and pawns) only.
    KnightEndgame,
    /// Knights and bishops (and pawns) only.
    MinorPieceEndgame,
    /// A rook against one minor piece (and pawns).
    RookVsMinor,
}

impl EndgameClass {
    pub fn name(self) -> &'static str {
        match self {
            EndgameClass::InsufficientMaterial => "insufficient material (dead position)",
            EndgameClass::KbnK => "KBN v K (bishop and knight mate)",
            EndgameClass::KqK => "KQ v K",
            EndgameClass::KrK => "KR v K",
            EndgameClass::KpK => "KP v K",
            EndgameClass::PawnEndgame => "pawn endgame",
            EndgameClass::QueenEndgame => "queen endgame",
            EndgameClass::RookEndgame => "rook endgame",
            EndgameClass::OppositeBishops => "opposite-coloured bishops",
            EndgameClass::SameColouredBishops => "same-coloured bishops",
            EndgameClass::BishopEndgame => "bishop endgame",
            EndgameClass::KnightEndgame => "knight endgame",
            EndgameClass::MinorPieceEndgame => "minor-piece endgame",
            EndgameClass::RookVsMinor => "rook against a minor piece",
        }
    }

    pub fn chinese(self) -> &'static str {
        match self {
            EndgameClass::InsufficientMaterial => "子力不足（死局）",
            EndgameClass::KbnK => "王象馬对王（象马杀王）",
            EndgameClass::KqK => "王后对王",
            EndgameClass::KrK => "王車对王",
            EndgameClass::KpK => "王兵对王",
            EndgameClass::PawnEndgame => "兵残局",
            EndgameClass::QueenEndgame => "后残局",
            EndgameClass::RookEndgame => "車残局",
            EndgameClass::OppositeBishops => "异色格象残局",
            EndgameClass::SameColouredBishops => "同色格象残局",
            EndgameClass::BishopEndgame => "象残局",
            EndgameClass::KnightEndgame => "馬残局",
            EndgameClass::MinorPieceEndgame => "轻子残局",
            EndgameClass::RookVsMinor => "車对轻子残局",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Sig {
    p: u32,
    n: u32,
    b: u32,
    r: u32,
    q: u32,
}

impl Sig {
    fn of(pos: &Position, c: Color) -> Sig {
        let n = |r| pos.pieces(c, r).count();
        Sig {
            p: n(Role::Pawn),
            n: n(Role::Knight),
            b: n(Role::Bishop),
            r: n(Role::Rook),
            q: n(Role::Queen),
        }
    }
    fn pieces(self) -> u32 {
        self.n + self.b + self.r + self.q
    }
    fn bare(self) -> bool {
        self.pieces() == 0 && self.p == 0
    }
    fn only(self, n: u32, b: u32, r: u32, q: u32) -> bool {
        (self.n, self.b, self.r, self.q) == (n, b, r, q)
    }
}

/// The endgame class of the material, if it is one of [`EndgameClass`].
pub fn endgame_class(pos: &Position) -> Option<EndgameClass> {
    if pos.is_insufficient_material() {
        return Some(EndgameClass::InsufficientMaterial);
    }
    let w = Sig::of(pos, Color::White);
    let b = Sig::of(pos, Color::Black);
    let lone = |x: Sig, y: Sig, n, bi, r, q| x.p == 0 && x.only(n, bi, r, q) && y.bare();
    for (x, y) in [(w, b), (b, w)] {
        if lone(x, y, 1, 1, 0, 0) {
            return Some(EndgameClass::KbnK);
        }
        if lone(x, y, 0, 0, 0, 1) {
            return Some(EndgameClass::KqK);
        }
        if lone(x, y, 0, 0, 1, 0) {
            return Some(EndgameClass::KrK);
        }
        if x.pieces() == 0 && x.p == 1 && y.bare() {
            return Some(EndgameClass::KpK);
        }
    }
    let only_pawns = |s: Sig| s.pieces() == 0;
    let only_queens = |s: Sig| s.n + s.b + s.r == 0;
    let only_rooks = |s: Sig| s.n + s.b + s.q == 0;
    let only_bishops = |s: Sig| s.n + s.r + s.q == 0;
    let only_knights = |s: Sig| s.b + s.r + s.q == 0;
    let only_minors = |s: Sig| s.r + s.q == 0;
    if only_pawns(w) && only_pawns(b) {
        return Some(EndgameClass::PawnEndgame);
    }
    if only_queens(w) && only_queens(b) {
        return Some(EndgameClass::QueenEndgame);
    }
    if only_rooks(w) && only_rooks(b) && w.r > 0 && b.r > 0 {
        return Some(EndgameClass::RookEndgame);
    }
    if only_bishops(w) && only_bishops(b) {
        let (wb, bb) = (
            pos.pieces(Color::White, Role::Bishop),
            pos.pieces(Color::Black, Role::Bishop),
        );
        if let (Some(x), Some(y)) = (wb.single(), bb.single()) {
            return Some(if x.is_light() != y.is_light() {
                EndgameClass::OppositeBishops
            } else {
                EndgameClass::SameColouredBishops
            });
        }
        return Some(EndgameClass::BishopEndgame);
    }
    if only_knights(w) && only_knights(b) {
        return Some(EndgameClass::KnightEndgame);
    }
    if only_minors(w) && only_minors(b) {
        return Some(EndgameClass::MinorPieceEndgame);
    }
    for (x, y) in [(w, b), (b, w)] {
        if x.only(0, 0, 1, 0) && (y.only(1, 0, 0, 0) || y.only(0, 1, 0, 0)) {
            return Some(EndgameClass::RookVsMinor);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(fen: &str) -> Option<EndgameClass> {
        endgame_class(&Position::from_fen(fen).unwrap())
    }

    fn phase_of(fen: &str) -> Phase {
        phase(&Position::from_fen(fen).unwrap())
    }

    #[test]
    fn endgame_classes() {
        assert_eq!(
            class("8/8/8/4k3/8/8/8/4KBN1 w - - 0 1"),
            Some(EndgameClass::KbnK)
        );
        assert_eq!(
            class("8/8/8/4k3/8/8/8/4KQ2 w - - 0 1"),
            Some(EndgameClass::KqK)
        );
        assert_eq!(
            class("8/8/8/4k3/8/8/8/r3K3 w - - 0 1"),
            Some(EndgameClass::KrK)
        );
        assert_eq!(
            class("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"),
            Some(EndgameClass::KpK)
        );
        assert_eq!(
            class("8/5p2/8/4k3/8/8/4P3/4K3 w - - 0 1"),
            Some(EndgameClass::PawnEndgame)
        );
        assert_eq!(
            class("8/5p2/8/4k3/8/8/4P3/R3K2r w - - 0 1"),
            Some(EndgameClass::RookEndgame)
        );
        assert_eq!(
            class("8/5p2/3b4/4k3/8/8/4P3/2B1K3 w - - 0 1"),
            Some(EndgameClass::SameColouredBishops)
        );
        assert_eq!(
            class("8/5p2/4b3/4k3/8/8/4P3/2B1K3 w - - 0 1"),
            Some(EndgameClass::OppositeBishops)
        );
        assert_eq!(
            class("8/5p2/4n3/4k3/8/8/4P3/2N1K3 w - - 0 1"),
            Some(EndgameClass::KnightEndgame)
        );
        assert_eq!(
            class("8/5p2/4n3/4k3/8/8/4P3/2B1K3 w - - 0 1"),
            Some(EndgameClass::MinorPieceEndgame)
        );
        assert_eq!(
            class("8/5p2/4n3/4k3/8/8/4P3/R3K3 w - - 0 1"),
            Some(EndgameClass::RookVsMinor)
        );
        assert_eq!(
            class("8/5p2/4q3/4k3/8/8/4P3/3QK3 w - - 0 1"),
            Some(EndgameClass::QueenEndgame)
        );
        assert_eq!(
            class("8/8/8/4k3/8/8/8/4KB2 w - - 0 1"),
            Some(EndgameClass::InsufficientMaterial)
        );
        assert_eq!(class("8/5p2/4q3/4k3/8/8/4P3/R3K3 w - - 0 1"), None);
        assert_eq!(class(chess_rules::STARTPOS_FEN), None);
    }

    #[test]
    fn phases() {
        assert_eq!(phase_of(chess_rules::STARTPOS_FEN), Phase::Opening);
        // All minor pieces out, castled: a middlegame.
        assert_eq!(
            phase_of("r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP2PPP/R2Q1RK1 w - - 0 8"),
            Phase::Middlegame
        );
        // Queen and rook each: an endgame.
        assert_eq!(
            phase_of("3qr1k1/5ppp/8/8/8/8/5PPP/3QR1K1 w - - 0 30"),
            Phase::Endgame
        );
    }
}
