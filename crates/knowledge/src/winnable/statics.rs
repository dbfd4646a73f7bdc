//! The static proof of unwinnability: when no pawn can ever move again, every piece lives in a
//! region walled off by pawns, and mate needs a check on a square the losing king can reach
//! with every escape square covered. When no such square exists, no series of legal moves
//! mates, and the reason says why.
//!
//! The argument, made sound by induction on the moves of any game from here: assume every
//! pawn stays where it is. Then each piece can only ever stand on the squares a flood fill
//! reaches from where it stands, moving as that piece moves, with the pawns as the only
//! obstacles (the other pieces may always step aside, so ignoring them over-estimates). The
//! assumption can first break only by a pawn moving (it needs its square ahead free, or an
//! enemy unit on a square it captures on, or en passant) or by a pawn being captured (an
//! enemy piece reaches its square; a king only when no pawn of the pawn's side guards it).
//! When the flood fills rule all of these out, the assumption holds for ever.

use chess_rules::{
    Bitboard, Color, Position, Role, Square, attacks, king_attacks, knight_attacks, pawn_attacks,
};

/// Everything that can ever happen on a board whose pawns never move, over-estimated.
struct Frozen {
    /// The pawns: permanent walls.
    walls: Bitboard,
    /// Squares each side's pawns attack, for ever.
    pawn_attacks: [Bitboard; 2],
}

/// The squares a piece of `role` and `color` standing on `from` can ever occupy when only
/// `walls` block it; a king also never enters `forbidden` (squares attacked by frozen pawns).
fn flood(role: Role, color: Color, from: Square, walls: Bitboard, forbidden: Bitboard) -> Bitboard {
    let mut reach = Bitboard::from_square(from);
    let mut frontier = reach;
    while let Some(sq) = frontier.first() {
        frontier = frontier.without(sq);
        let step = match role {
            Role::King => king_attacks(sq) & !forbidden,
            Role::Knight => knight_attacks(sq),
            _ => attacks(role, color, sq, walls),
        };
        let new = Bitboard(step.0 & !walls.0 & !reach.0);
        reach |= new;
        frontier |= new;
    }
    reach
}

/// The squares a piece can ever attack from anywhere in `reach`.
fn attack_potential(role: Role, color: Color, reach: Bitboard, walls: Bitboard) -> Bitboard {
    let mut att = Bitboard::EMPTY;
    for sq in reach {
        att |= attacks(role, color, sq, walls);
    }
    att
}

fn side_name(c: Color) -> &'static str {
    c.fold("White", "Black")
}

fn side_lower(c: Color) -> &'static str {
    c.fold("white", "black")
}

/// One unit of the intended winner, apart from king and pawns.
struct Unit {
    role: Role,
    reach: Bitboard,
    /// Attacks from each square of `reach`.
    from: Vec<(Square, Bitboard)>,
    potential: Bitboard,
}

/// A proof that `winner` can never mate, as a sentence, when every pawn on the board is frozen
/// for ever; `None` when the argument does not apply or finds a possible mate.
pub(super) fn frozen_proof(pos: &Position, winner: Color) -> Option<String> {
    let loser = !winner;
    let pawns = pos.by_role(Role::Pawn);
    let white_pawns = pawns & pos.by_color(Color::White);
    let black_pawns = pawns & pos.by_color(Color::Black);
    // Cheap exit first: a pawn with a free square ahead can move.
    if (white_pawns.north() & !pawns).has_any() || (black_pawns.south() & !pawns).has_any() {
        return None;
    }
    if pos.legal_ep_square().is_some() {
        return None;
    }
    let mut frozen = Frozen {
        walls: pawns,
        pawn_attacks: [Bitboard::EMPTY; 2],
    };
    for c in Color::ALL {
        for p in pawns & pos.by_color(c) {
            frozen.pawn_attacks[c.index()] |= pawn_attacks(c, p);
        }
    }
    let walls = frozen.walls;

    // Where every piece can ever be, and what it can ever attack.
    let mut reach_of = [Bitboard::EMPTY; 2]; // non-king pieces, by colour
    let mut potential_of = [Bitboard::EMPTY; 2]; // non-king pieces, by colour
    let mut king_reach = [Bitboard::EMPTY; 2];
    let mut units = Vec::new();
    for c in Color::ALL {
        let forbidden = frozen.pawn_attacks[(!c).index()];
        king_reach[c.index()] = flood(Role::King, c, pos.king_of(c), walls, forbidden);
        for sq in pos.by_color(c) & !pos.by_role(Role::King) & !pawns {
            let role = pos.role_at(sq)?;
            let reach = flood(role, c, sq, walls, Bitboard::EMPTY);
            let potential = attack_potential(role, c, reach, walls);
            reach_of[c.index()] |= reach;
            potential_of[c.index()] |= potential;
            if c == winner {
                let from = reach.map(|s| (s, attacks(role, c, s, walls))).collect();
                units.push(Unit {
                    role,
                    reach,
                    from,
                    potential,
                });
            }
        }
    }

    // The pawns stay frozen only if nothing can ever capture one or be captured by one.
    for c in Color::ALL {
        let enemy = !c;
        for p in pawns & pos.by_color(c) {
            if potential_of[enemy.index()].contains(p) {
                return None;
            }
            let guarded = (pawn_attacks(enemy, p) & pawns & pos.by_color(c)).has_any();
            let king_touch = king_reach[enemy.index()]
                .into_iter()
                .any(|k| king_attacks(k).contains(p));
            if king_touch && !guarded {
                return None;
            }
            let targets = pawn_attacks(c, p);
            if targets.intersects(reach_of[enemy.index()] | (pawns & pos.by_color(enemy))) {
                return None;
            }
        }
    }

    // Mate needs a check on a square the losing king can reach, with every escape square
    // blocked, guarded by a pawn, attacked by a piece, or attacked by the winning king.
    let lking = king_reach[loser.index()];
    let wking = king_reach[winner.index()];
    let pawn_att = frozen.pawn_attacks[winner.index()];
    let base_cover = walls | reach_of[loser.index()] | pawn_att;
    let all_potential = potential_of[winner.index()];
    let king_covers = |need: Bitboard, k: Square| -> bool {
        if need.is_empty() {
            return true;
        }
        let mut spots = wking & !king_attacks(k) & !Bitboard::from_square(k);
        for n in need {
            spots &= king_attacks(n);
        }
        spots.has_any()
    };
    let mut checkable = Bitboard::EMPTY;
    for k in lking {
        let need = king_attacks(k) & !base_cover;
        let mate_possible = if units.len() == 1 {
            // One piece: it either gives the check from a square of its own, or a pawn
            // does and the piece only covers.
            let unit = &units[0];
            let by_pawn = pawn_att.contains(k) && king_covers(need & !unit.potential, k);
            by_pawn
                || unit
                    .from
                    .iter()
                    .filter(|(_, a)| a.contains(k))
                    .any(|&(_, a)| king_covers(need & !a, k))
        } else {
            (pawn_att | all_potential).contains(k) && king_covers(need & !all_potential, k)
        };
        if mate_possible {
            return None;
        }
        if (pawn_att | all_potential).contains(k) {
            checkable = checkable.with(k);
        }
    }

    Some(explain(pos, winner, &units, lking, checkable, pawns))
}

fn explain(
    pos: &Position,
    winner: Color,
    units: &[Unit],
    lking: Bitboard,
    checkable: Bitboard,
    pawns: Bitboard,
) -> String {
    let loser = !winner;
    let mut text = String::new();
    if pawns.has_any() {
        let mut locks: Vec<String> = Vec::new();
        for p in pawns & pos.by_color(Color::White) {
            if let Some(ahead) = p.offset(0, 1)
                && (pawns & pos.by_color(Color::Black)).contains(ahead)
            {
                locks.push(format!("{p}/{ahead}"));
            }
        }
        text.push_str("no pawn can ever move again");
        if !locks.is_empty() {
            text.push_str(&format!(" (locked: {})", locks.join(", ")));
        }
        text.push_str(" and no piece can ever capture one; ");
    }
    let pieces = describe_units(units);
    if checkable.is_empty() {
        text.push_str(&format!(
            "{} can never give check: the {} king is confined to {} square{} that {} can ever attack",
            side_name(winner),
            side_lower(loser),
            lking.count(),
            if lking.count() == 1 { "" } else { "s" },
            if units.is_empty() {
                format!("no {} pawn", side_lower(winner))
            } else {
                format!("neither {pieces} nor a pawn")
            }
        ));
    } else {
        text.push_str(&format!(
            "{} can check the {} king on {} square{} but never mate: on each, an escape square stays free",
            side_name(winner),
            side_lower(loser),
            checkable.count(),
            if checkable.count() == 1 { "" } else { "s" },
        ));
        let bishops: Vec<&Unit> = units.iter().filter(|u| u.role == Role::Bishop).collect();
        if !units.is_empty() && bishops.len() == units.len() {
            let light = bishops
                .iter()
                .all(|u| (u.reach & Bitboard::DARK_SQUARES).is_empty());
            let dark = bishops
                .iter()
                .all(|u| (u.reach & Bitboard::LIGHT_SQUARES).is_empty());
            if light || dark {
                let (on, other) = if light {
                    ("light", "a dark")
                } else {
                    ("dark", "a light")
                };
                text.push_str(&format!(
                    " ({}'s only piece{}, bishop{} on {on} squares, cannot attack {other} square)",
                    side_name(winner),
                    if bishops.len() == 1 { "" } else { "s" },
                    if bishops.len() == 1 { "" } else { "s" },
                ));
            }
        } else if units.len() == 1 {
            text.push_str(&format!(
                " (a lone {} and the king cannot cover them all)",
                units[0].role.name()
            ));
        }
    }
    text
}

fn describe_units(units: &[Unit]) -> String {
    let names: Vec<&str> = units.iter().map(|u| u.role.name()).collect();
    match names.len() {
        0 => "no piece".to_owned(),
        1 => format!("the {}", names[0]),
        _ => format!("the {}", names.join(", ")),
    }
}
