//! Exhaustive reachability: every position that any series of legal moves can reach from the
//! root, breadth first, each once. A side can mate if and only if one of them is a mate of its
//! opponent, so when the search runs out of positions without meeting one, the side is proven
//! unable to win; when it meets one, the path to it is a helpmate.
//!
//! Pruning keeps the set small and the argument sound: a position from which the winner is
//! already proven unable to mate (material alone, or the static proof of frozen pawns) is not
//! expanded, since nothing reachable from it can be a mate either. In blocked positions the
//! kings and pieces wander inside their regions while the last free pawns close the wall, and
//! every such wandering is explored until each branch either repeats a position or reaches one
//! the static proof settles.
//!
//! Positions are told apart by two independent 64-bit hashes (the Zobrist key, which covers the
//! side to move, castling and en passant, and a second mix of the piece placement), so two
//! different positions are taken for one only with odds of about 2^-128 per pair.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use chess_rules::{Color, Move, Position, Role};

use super::search::hopeless;
use super::statics;

/// What the exhaustive search concluded.
pub(super) enum Reach {
    /// A helpmate: the moves from the root to a mate of the loser.
    Mate(Vec<Move>),
    /// Every reachable position (not settled by a static proof) was visited: no mate exists.
    Exhausted { positions: u64 },
    /// The budget ran out first.
    Unknown,
}

/// The two hashes are already uniform: the set uses them as they are.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

type Seen = HashSet<u128, BuildHasherDefault<PairHasher>>;

/// A second hash of the placement, independent of the Zobrist key.
fn placement_hash(pos: &Position) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut mix = |x: u64| {
        h = (h ^ x).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
    };
    mix(pos.by_color(Color::White).0);
    mix(pos.by_color(Color::Black).0);
    for role in Role::ALL {
        mix(pos.by_role(role).0);
    }
    h
}

fn key(pos: &Position) -> u128 {
    (u128::from(pos.zobrist()) << 64) | u128::from(placement_hash(pos))
}

/// One position met: how it was reached, for the proof line.
struct Node {
    parent: u32,
    mv: Move,
}

/// Searches every position reachable from `root` for a mate by `winner`, visiting at most
/// `budget` positions (and so keeping at most that many in memory).
pub(super) fn exhaust(root: &Position, winner: Color, budget: u64, nodes: &mut u64) -> Reach {
    exhaust_with(root, winner, budget, nodes, true)
}

/// [`exhaust`], with the static cut-offs on or off (off only to cross-check them).
fn exhaust_with(
    root: &Position,
    winner: Color,
    budget: u64,
    nodes: &mut u64,
    prune: bool,
) -> Reach {
    let loser = !winner;
    let mut seen = Seen::default();
    seen.insert(key(root));
    let mut tree = vec![Node {
        parent: u32::MAX,
        mv: Move::NULL,
    }];
    let mut queue = VecDeque::new();
    queue.push_back((0u32, root.clone()));
    let mut visited: u64 = 0;
    while let Some((idx, pos)) = queue.pop_front() {
        for &m in pos.legal_moves().iter() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            if !seen.insert(key(&next)) {
                continue;
            }
            visited += 1;
            *nodes += 1;
            if visited > budget {
                return Reach::Unknown;
            }
            if next.is_check() && next.turn() == loser && !next.has_legal_moves() {
                let mut line = vec![m];
                let mut i = idx;
                while i != 0 {
                    let n = &tree[i as usize];
                    line.push(n.mv);
                    i = n.parent;
                }
                line.reverse();
                return Reach::Mate(line);
            }
            // The static tests only change their answer when the pawns or the material do:
            // a piece moving inside the region it can reach leaves every region as it was.
            let changes = m.role() == Role::Pawn || pos.role_at(m.to()).is_some();
            if prune
                && changes
                && (hopeless(&next, winner) || statics::frozen_proof(&next, winner).is_some())
            {
                continue;
            }
            let child = tree.len() as u32;
            tree.push(Node { parent: idx, mv: m });
            queue.push_back((child, next));
        }
    }
    Reach::Exhausted { positions: visited }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(fen: &str, winner: Color, prune: bool) -> Option<bool> {
        let pos = Position::from_fen(fen).unwrap();
        let mut nodes = 0;
        match exhaust_with(&pos, winner, 150_000, &mut nodes, prune) {
            Reach::Mate(line) => {
                assert!(super::super::proves_mate(&pos, winner, &line), "{fen}");
                Some(true)
            }
            Reach::Exhausted { .. } => Some(false),
            Reach::Unknown => None,
        }
    }

    /// The cut-offs (material, frozen pawns, and re-testing them only after pawn moves and
    /// captures) never change the answer of the plain search over every reachable position.
    #[test]
    fn pruning_never_changes_the_answer() {
        let mut compared = 0;
        for fen in [
            // The king and rook shut in on the h-file behind their own pawns.
            "k7/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1",
            "k7/6p1/6P1/6PK/6P1/6PR/7P/8 w - - 0 1",
            // The same with the rook outside: it gets out, and mates with help.
            "k7/6p1/6P1/6PK/6P1/6P1/7P/7R w - - 0 1",
            // A locked wall a king can break into by taking a pawn.
            "4k3/8/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/4K3 w - - 0 1",
            "4k3/8/8/p2p2p1/P2P2P1/8/8/4K3 w - - 0 1",
            // A bishop behind its own wall.
            "4k3/8/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/2B1K3 b - - 0 1",
            // Knight against pawn: the pawn promotes to a blocker.
            "8/8/8/2k5/4p3/8/3K1N2/8 w - - 0 1",
            "7k/7p/7P/8/8/8/8/1N2K3 w - - 0 1",
        ] {
            for winner in Color::ALL {
                let (with, without) = (outcome(fen, winner, true), outcome(fen, winner, false));
                if let (Some(a), Some(b)) = (with, without) {
                    assert_eq!(a, b, "{fen} for {winner:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared >= 10, "only {compared} comparisons finished");
    }
}
