//! Static exchange evaluation: the material outcome of the captures on one square, each side
//! capturing with its least valuable piece and free to stop when continuing would lose.
//!
//! Pins are ignored, and a pawn recapturing onto the last rank counts as a pawn.

use chess_rules::{Bitboard, Color, Move, Position, Role, Square, bishop_attacks, rook_attacks};

/// Piece values for exchanges (pawn, knight, bishop, rook, queen, king).
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// The material balance, for the side making `m`, of the exchange that `m` starts on its
/// destination square. Quiet moves score 0 or less (the piece may be lost).
///
/// ```
/// use chess_rules::Position;
/// use chess_search::see;
/// // Rook takes an undefended pawn.
/// let pos = Position::from_fen("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1").unwrap();
/// assert_eq!(see(&pos, pos.parse_uci("e1e5").unwrap()), 100);
/// ```
pub fn see(pos: &Position, m: Move) -> i32 {
    if m.is_castle() || m.is_null() {
        return 0;
    }
    exchange(pos, m, first_gain(pos, m))
}

/// [`see`] of a move that is neither castling nor null, given what the move itself wins
/// ([`first_gain`]).
fn exchange(pos: &Position, m: Move, first: i32) -> i32 {
    let (from, to) = (m.from(), m.to());
    let mut occ = pos.occupied();
    if m.is_en_passant() {
        occ ^= Bitboard::from_square(Square::from_coords(to.file(), from.rank()));
    }
    let mut gain = [0i32; 40];
    gain[0] = first;
    // The value of the piece standing on `to`, which the next capture wins.
    let mut on_square = SEE_VALUE[m.role_after().index()];
    occ ^= Bitboard::from_square(from);

    let diag = pos.by_role(Role::Bishop) | pos.by_role(Role::Queen);
    let orth = pos.by_role(Role::Rook) | pos.by_role(Role::Queen);
    let mut attackers =
        (pos.attackers_to(to, Color::White, occ) | pos.attackers_to(to, Color::Black, occ)) & occ;
    let mut side = !pos.turn();
    let mut d = 0;
    while d + 1 < gain.len() {
        let mine = attackers & pos.by_color(side);
        let Some((role, sq)) = Role::ALL
            .into_iter()
            .find_map(|r| (mine & pos.by_role(r)).first().map(|sq| (r, sq)))
        else {
            break;
        };
        // A king may only take last: never into a square the other side still covers.
        if role == Role::King && (attackers & pos.by_color(!side)).has_any() {
            break;
        }
        d += 1;
        gain[d] = on_square - gain[d - 1];
        on_square = SEE_VALUE[role.index()];
        occ ^= Bitboard::from_square(sq);
        // Sliders behind the piece that just captured join in.
        attackers |= (bishop_attacks(to, occ) & diag) | (rook_attacks(to, occ) & orth);
        attackers &= occ;
        side = !side;
    }
    // Each side chooses between stopping and the best continuation.
    while d > 0 {
        gain[d - 1] = -(-gain[d - 1]).max(gain[d]);
        d -= 1;
    }
    gain[0]
}

/// What `m` itself wins: the captured piece, and a promotion's gain over the pawn.
#[inline]
fn first_gain(pos: &Position, m: Move) -> i32 {
    let captured = if m.is_en_passant() {
        SEE_VALUE[Role::Pawn.index()]
    } else {
        pos.role_at(m.to()).map_or(0, |r| SEE_VALUE[r.index()])
    };
    captured
        + m.promotion()
            .map_or(0, |p| SEE_VALUE[p.index()] - SEE_VALUE[Role::Pawn.index()])
}

/// True when the exchange started by `m` gains at least `threshold`: `see(pos, m) >=
/// threshold`, often without playing the exchange out. The exchange never ends above what
/// `m` itself wins (the other side may stop at once), nor below that less the moving piece
/// (after a recapture we may stop in turn), so either bound can answer first.
#[inline]
pub fn see_ge(pos: &Position, m: Move, threshold: i32) -> bool {
    if m.is_castle() || m.is_null() {
        return threshold <= 0;
    }
    let gain = first_gain(pos, m);
    from_bounds(m, gain, threshold).unwrap_or_else(|| exchange(pos, m, gain) >= threshold)
}

/// [`see_ge`]'s answer when the bounds decide it (`gain` is what `m` itself wins), `None` when
/// the exchange has to be played out.
#[inline]
fn from_bounds(m: Move, gain: i32, threshold: i32) -> Option<bool> {
    if gain < threshold {
        Some(false)
    } else if gain - SEE_VALUE[m.role_after().index()] >= threshold {
        Some(true)
    } else {
        None
    }
}

/// [`see_ge`] for a move that captures nothing, given every square the enemy attacks. When
/// neither the origin nor the destination is attacked, nothing can take on the destination, not
/// even a slider behind the origin (its ray would reach the origin first), so the exchange is 0
/// without being played out. Promotions gain material and always go the long way.
#[inline]
pub(crate) fn quiet_see_ge(
    pos: &Position,
    m: Move,
    enemy_attacks: Bitboard,
    threshold: i32,
) -> bool {
    if m.promotion().is_none()
        && !enemy_attacks.contains(m.from())
        && !enemy_attacks.contains(m.to())
    {
        return threshold <= 0;
    }
    see_ge(pos, m, threshold)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn see_of(fen: &str, uci: &str) -> i32 {
        let pos = Position::from_fen(fen).unwrap();
        see(&pos, pos.parse_uci(uci).unwrap())
    }

    #[test]
    fn undefended_pawn() {
        assert_eq!(
            see_of("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5"),
            100
        );
    }

    #[test]
    fn knight_for_pawn_with_xrays() {
        // Nxe5: the pawn is defended by the knight on d7 and the bishop on f6, with the queen
        // behind on h8; white has the rook on e2 and the queen on e1 behind it. Black's best
        // is to recapture once and stop, so white is down a knight for a pawn.
        assert_eq!(
            see_of(
                "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
                "d3e5"
            ),
            100 - 320
        );
    }

    #[test]
    fn equal_trade_and_bad_capture() {
        // Bishop takes a knight defended by a pawn: 330 v 320.
        assert_eq!(
            see_of("4k3/8/2p5/3n4/8/8/6B1/4K3 w - - 0 1", "g2d5"),
            320 - 330
        );
        // Queen takes a pawn defended by a pawn.
        assert_eq!(
            see_of("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1", "d2d5"),
            100 - 950
        );
    }

    #[test]
    fn quiet_moves_to_attacked_squares() {
        // Queen steps next to a pawn that attacks its square.
        assert_eq!(see_of("4k3/8/2p5/8/8/8/3Q4/4K3 w - - 0 1", "d2d5"), -950);
        assert_eq!(see_of("4k3/8/8/8/8/8/3Q4/4K3 w - - 0 1", "d2d5"), 0);
    }

    #[test]
    fn king_cannot_recapture_into_defence() {
        // Rxf7: the king could recapture, but the bishop on b3 covers f7.
        assert_eq!(see_of("5k2/5p2/8/8/8/1B6/8/4KR2 w - - 0 1", "f1f7"), 100);
        // Without the bishop the king takes the rook.
        assert_eq!(
            see_of("5k2/5p2/8/8/8/8/8/4KR2 w - - 0 1", "f1f7"),
            100 - 500
        );
    }

    #[test]
    fn en_passant_and_promotion() {
        assert_eq!(see_of("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"), 100);
        // Promotion on an undefended square wins queen minus pawn.
        assert_eq!(see_of("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"), 850);
        // Promotion where the king recaptures.
        assert_eq!(see_of("8/1Pk5/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"), -100);
    }

    #[test]
    fn threshold() {
        let pos = Position::from_fen("4k3/8/2p5/3n4/8/8/6B1/4K3 w - - 0 1").unwrap();
        let m = pos.parse_uci("g2d5").unwrap();
        assert!(see_ge(&pos, m, -10));
        assert!(!see_ge(&pos, m, 0));
    }

    /// Calls `visit` with each position of 40 random games of at most 120 plies and its legal
    /// moves.
    fn along_random_games(seed: u64, mut visit: impl FnMut(&Position, &[Move])) {
        let mut rng = crate::SplitMix64::new(seed);
        for _game in 0..40 {
            let mut pos = Position::startpos();
            for _ply in 0..120 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                visit(&pos, moves.as_slice());
                let m = moves[rng.below(moves.len())];
                pos.play_unchecked(m);
            }
        }
    }

    /// Every quiet move along random games: the shortcut answers as the full exchange does.
    #[test]
    fn quiet_shortcut_agrees_with_the_exchange() {
        let mut shortcuts = 0;
        along_random_games(11, |pos, moves| {
            let them = !pos.turn();
            let attacked = Square::ALL
                .into_iter()
                .filter(|&sq| pos.attackers_to(sq, them, pos.occupied()).has_any())
                .fold(Bitboard::EMPTY, |b, sq| b | Bitboard::from_square(sq));
            for &m in moves {
                if pos.by_color(them).contains(m.to()) || m.is_en_passant() {
                    continue;
                }
                shortcuts +=
                    usize::from(!attacked.contains(m.from()) && !attacked.contains(m.to()));
                for threshold in [-300, -1, 0, 1, 200] {
                    assert_eq!(
                        quiet_see_ge(pos, m, attacked, threshold),
                        see_ge(pos, m, threshold),
                        "{} {m} {threshold}",
                        pos.fen()
                    );
                }
            }
        });
        assert!(shortcuts > 1000, "{shortcuts} moves took the shortcut");
    }

    /// `see_ge`'s bounds answer exactly as the exchange played out, for every legal move
    /// (captures, quiets, promotions, en passant, castling) along random games.
    #[test]
    fn see_ge_agrees_with_the_exchange() {
        let mut early = 0;
        along_random_games(12, |pos, moves| {
            for &m in moves {
                let v = see(pos, m);
                for threshold in [-950, -330, -100, -1, 0, 1, 100, 220, 330, 640] {
                    assert_eq!(
                        see_ge(pos, m, threshold),
                        v >= threshold,
                        "{} {m} {threshold} (see {v})",
                        pos.fen()
                    );
                    early += usize::from(from_bounds(m, first_gain(pos, m), threshold).is_some());
                }
            }
        });
        assert!(early > 10_000, "{early} answers came from the bounds");
    }
}
