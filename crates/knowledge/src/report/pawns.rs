//! Pawn structure of one side: doubled, isolated, backward, passed, protected passed,
//! connected and side-by-side pawns, pawn islands, and pawn chains with their bases.

use chess_rules::{Bitboard, Color, File, Position, Role, Square, pawn_attacks};
use serde::Serialize;

/// One side's pawn structure. Every list holds squares (`"e4"`) in board order (a1 first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PawnStructure {
    /// Every pawn on a file where this side has two or more.
    pub doubled: Vec<String>,
    /// Pawns with no own pawn on a neighbouring file.
    pub isolated: Vec<String>,
    /// Pawns that no own pawn on a neighbouring file can defend (all of those stand further
    /// forward) and whose square ahead an enemy pawn guards.
    pub backward: Vec<String>,
    /// Pawns with no enemy pawn ahead of them on their own or a neighbouring file.
    pub passed: Vec<String>,
    /// Passed pawns defended by an own pawn.
    pub protected_passed: Vec<String>,
    /// Pawns with an own pawn on a neighbouring file on the same rank or one rank away
    /// (defending, defended or side by side).
    pub connected: Vec<String>,
    /// Pawns with an own pawn beside them on the same rank ("phalanx").
    pub phalanx: Vec<String>,
    /// Groups of pawns on adjacent files, each as its files, e.g. `"a-c"`, `"e"`.
    pub islands: Vec<String>,
    /// Diagonal chains of two or more pawns defending one another.
    pub chains: Vec<PawnChain>,
}

/// A pawn chain: its pawns (rearmost first) and its base, the pawn that no pawn defends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PawnChain {
    pub squares: Vec<String>,
    pub base: Vec<String>,
}

fn names(b: Bitboard) -> Vec<String> {
    b.into_iter().map(|s| s.to_string()).collect()
}

fn adjacent_files(file: File) -> Bitboard {
    [-1, 1]
        .into_iter()
        .filter_map(|d| file.offset(d))
        .fold(Bitboard::EMPTY, |b, f| b | Bitboard::file(f))
}

/// Squares strictly ahead of `sq` (from `color`'s side) on its own and the neighbouring files.
fn front_span(sq: Square, color: Color) -> Bitboard {
    let files = Bitboard::file(sq.file()) | adjacent_files(sq.file());
    files & ahead_of(sq, color)
}

/// All squares on ranks strictly ahead of `sq` for `color`.
pub(crate) fn ahead_of(sq: Square, color: Color) -> Bitboard {
    let r = sq.rank().index() as u32;
    let mut b = Bitboard::EMPTY;
    for rank in 0..8u32 {
        let ahead = match color {
            Color::White => rank > r,
            Color::Black => rank < r,
        };
        if ahead {
            b |= Bitboard::rank(chess_rules::Rank::new(rank));
        }
    }
    b
}

/// `color`'s pawn structure (see the fields of [`PawnStructure`] for each definition).
pub fn pawn_structure(pos: &Position, color: Color) -> PawnStructure {
    let ours = pos.pieces(color, Role::Pawn);
    let theirs = pos.pieces(!color, Role::Pawn);
    let their_attacks = theirs
        .into_iter()
        .fold(Bitboard::EMPTY, |b, s| b | pawn_attacks(!color, s));

    let mut doubled = Bitboard::EMPTY;
    let mut isolated = Bitboard::EMPTY;
    let mut backward = Bitboard::EMPTY;
    let mut passed = Bitboard::EMPTY;
    let mut protected_passed = Bitboard::EMPTY;
    let mut connected = Bitboard::EMPTY;
    let mut phalanx = Bitboard::EMPTY;
    for sq in ours {
        let file = sq.file();
        let neighbours = ours & adjacent_files(file);
        if (ours & Bitboard::file(file)).more_than_one() {
            doubled |= Bitboard::from_square(sq);
        }
        if neighbours.is_empty() {
            isolated |= Bitboard::from_square(sq);
        }
        let defenders = ours & pawn_attacks(!color, sq);
        if (theirs & front_span(sq, color)).is_empty() {
            passed |= Bitboard::from_square(sq);
            if defenders.has_any() {
                protected_passed |= Bitboard::from_square(sq);
            }
        }
        let same_rank = neighbours & Bitboard::rank(sq.rank());
        if same_rank.has_any() {
            phalanx |= Bitboard::from_square(sq);
        }
        let near_ranks = [-1, 0, 1]
            .into_iter()
            .filter_map(|d| sq.rank().offset(d))
            .fold(Bitboard::EMPTY, |b, r| b | Bitboard::rank(r));
        if (neighbours & near_ranks).has_any() {
            connected |= Bitboard::from_square(sq);
        }
        // Backward: neighbours exist but all stand further forward, and the stop square is
        // guarded by an enemy pawn.
        let level_or_behind = neighbours & !ahead_of(sq, color);
        let stop = sq.offset(0, if color == Color::White { 1 } else { -1 });
        if neighbours.has_any()
            && level_or_behind.is_empty()
            && stop.is_some_and(|s| their_attacks.contains(s))
        {
            backward |= Bitboard::from_square(sq);
        }
    }

    PawnStructure {
        doubled: names(doubled),
        isolated: names(isolated),
        backward: names(backward),
        passed: names(passed),
        protected_passed: names(protected_passed),
        connected: names(connected),
        phalanx: names(phalanx),
        islands: islands(ours),
        chains: chains(ours, color),
    }
}

fn islands(pawns: Bitboard) -> Vec<String> {
    let mut out = Vec::new();
    let mut start: Option<File> = None;
    let mut prev: Option<File> = None;
    for f in File::ALL {
        let has = (pawns & Bitboard::file(f)).has_any();
        match (has, start) {
            (true, None) => start = Some(f),
            (false, Some(s)) => {
                out.push(island_name(s, prev.unwrap_or(s)));
                start = None;
            }
            _ => {}
        }
        prev = Some(f);
    }
    if let Some(s) = start {
        out.push(island_name(s, File::ALL[7]));
    }
    out
}

fn island_name(first: File, last: File) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// Connected components (of size two or more) of the "defends" relation among own pawns.
fn chains(pawns: Bitboard, color: Color) -> Vec<PawnChain> {
    let mut seen = Bitboard::EMPTY;
    let mut out = Vec::new();
    for sq in pawns {
        if seen.contains(sq) {
            continue;
        }
        let mut component = Bitboard::from_square(sq);
        let mut frontier = vec![sq];
        while let Some(s) = frontier.pop() {
            // Pawns this one defends, and pawns that defend it.
            let linked = pawns & (pawn_attacks(color, s) | pawn_attacks(!color, s));
            for t in linked & !component {
                component |= Bitboard::from_square(t);
                frontier.push(t);
            }
        }
        seen |= component;
        if component.more_than_one() {
            let mut squares: Vec<Square> = component.into_iter().collect();
            // Rearmost first.
            if color == Color::Black {
                squares.sort_by_key(|s| std::cmp::Reverse(s.rank().index()));
            } else {
                squares.sort_by_key(|s| s.rank().index());
            }
            let base = component
                .into_iter()
                .filter(|&s| (pawns & pawn_attacks(!color, s)).is_empty());
            out.push(PawnChain {
                squares: squares.iter().map(|s| s.to_string()).collect(),
                base: base.map(|s| s.to_string()).collect(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(fen: &str, color: Color) -> PawnStructure {
        pawn_structure(&Position::from_fen(fen).unwrap(), color)
    }

    #[test]
    fn doubled_isolated_passed() {
        // White a2, c3, c4 (doubled, isolated), f4, e5; black a7, f7, h7.
        let fen = "4k3/p4p1p/8/4P3/2P2P2/2P5/P7/4K3 w - - 0 1";
        let w = of(fen, Color::White);
        assert_eq!(w.doubled, ["c3", "c4"]);
        assert_eq!(w.isolated, ["a2", "c3", "c4"]);
        // a2 is blocked by nothing but a7 stands ahead on its file; c3/c4 have no enemy pawn
        // on b, c or d ahead; e5 has f7 ahead on a neighbouring file; f4 too.
        assert_eq!(w.passed, ["c3", "c4"]);
        assert_eq!(w.protected_passed, Vec::<String>::new());
        assert_eq!(w.islands, ["a", "c", "e-f"]);
        assert_eq!(w.connected, ["f4", "e5"]);
        let b = of(fen, Color::Black);
        assert_eq!(b.isolated, ["a7", "f7", "h7"]);
        assert_eq!(b.passed, ["h7"]);
        assert_eq!(b.islands, ["a", "f", "h"]);
    }

    #[test]
    fn chains_bases_phalanx_protected_passed() {
        // A French advance structure: white's chain b2-c3-d4-e5 (base b2), black's f7-e6-d5
        // (base f7).
        let fen = "4k3/pp3ppp/4p3/3pP3/3P4/2P5/PP3PPP/4K3 w - - 0 1";
        let w = of(fen, Color::White);
        assert_eq!(w.chains.len(), 1);
        assert_eq!(w.chains[0].squares, ["b2", "c3", "d4", "e5"]);
        assert_eq!(w.chains[0].base, ["b2"]);
        let b = of(fen, Color::Black);
        assert_eq!(b.chains[0].squares, ["f7", "e6", "d5"]);
        assert_eq!(b.chains[0].base, ["f7"]);
        assert_eq!(b.phalanx, ["a7", "b7", "f7", "g7", "h7"]);

        // Protected passed pawn: white d5 defended by c4, no black pawn on c, d, e ahead.
        let fen = "4k3/p6p/8/3P4/2P5/8/8/4K3 w - - 0 1";
        let w = of(fen, Color::White);
        assert_eq!(w.passed, ["c4", "d5"]);
        assert_eq!(w.protected_passed, ["d5"]);
    }

    #[test]
    fn backward_pawn() {
        // White d3 with c4 and e4 ahead of it; black c5 and e5 guard d4: d3 is backward.
        let fen = "4k3/8/8/2p1p3/2P1P3/3P4/8/4K3 w - - 0 1";
        let w = of(fen, Color::White);
        assert_eq!(w.backward, ["d3"]);
        assert_eq!(w.isolated, Vec::<String>::new());
        // Black d6 behind c5 and e5 with d5 guarded by white c4/e4: backward too.
        let fen = "4k3/8/3p4/2p1p3/2P1P3/8/8/4K3 w - - 0 1";
        assert_eq!(of(fen, Color::Black).backward, ["d6"]);
        // Without the guarding white pawns d6 is not backward.
        let fen = "4k3/8/3p4/2p1p3/8/8/8/4K3 w - - 0 1";
        assert!(of(fen, Color::Black).backward.is_empty());
    }
}
