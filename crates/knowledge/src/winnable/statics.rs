//! The static proof of unwinnability: when no pawn can ever capture, be captured or promote,
//! every piece lives in a region walled off by pawns, and mate needs a check on a square the
//! losing king can reach with every escape square covered. When no such square exists, no
//! series of legal moves mates, and the reason says why.
//!
//! The argument, made sound by induction on the moves of any game from here: assume no pawn
//! ever captures or is captured. Then each pawn keeps to its file, between its square and the
//! nearest enemy pawn ahead (which can only come towards it; with none ahead the pawn might
//! promote, and the argument is not tried), and a pawn whose range is its own square is a
//! permanent wall. Each piece can only ever stand on the squares a flood fill reaches from
//! where it stands, moving as that piece moves, with the walls as the only obstacles (the
//! other men may always step aside, so ignoring them over-estimates); a king never enters a
//! square a wall pawn attacks. The assumption can first break only by a pawn capturing (an
//! enemy unit on a square it attacks from somewhere in its range) or being captured (an enemy
//! piece attacks a square of its range, or the enemy king can step onto one that no wall pawn
//! of the pawn's side guards). When the flood fills rule all of these out, the assumption
//! holds for ever.

use chess_rules::{
    Bitboard, Color, Position, Role, Square, attacks, between, king_attacks, knight_attacks,
    pawn_attacks,
};

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
    if pos.legal_ep_square().is_some() {
        return None;
    }
    // Each pawn's range: the squares of its file it can ever stand on, up to the nearest enemy
    // pawn ahead, which can only come towards it. With no enemy pawn ahead it may promote,
    // and the argument does not apply.
    let mut ranges: Vec<(Color, Square, Bitboard)> = Vec::with_capacity(pawns.count() as usize);
    for c in Color::ALL {
        for p in pawns & pos.by_color(c) {
            let ahead = file_ahead(c, p) & pawns & pos.by_color(!c);
            let stop = match c {
                Color::White => ahead.first(),
                Color::Black => last(ahead),
            }?;
            ranges.push((c, p, between(p, stop).with(p)));
        }
    }
    // A pawn whose range is its own square never moves: a wall.
    let walls: Bitboard = ranges
        .iter()
        .filter(|r| r.2.count() == 1)
        .map(|r| r.1)
        .collect();
    // Squares attacked for ever, by the walls.
    let mut wall_attacks = [Bitboard::EMPTY; 2];
    let mut ever_attacked = [Bitboard::EMPTY; 2];
    let mut pawn_range = [Bitboard::EMPTY; 2];
    // What each pawn can ever attack, kept for the checks below.
    let mut targets = Vec::with_capacity(ranges.len());
    for &(c, p, range) in &ranges {
        pawn_range[c.index()] |= range;
        let mut t = Bitboard::EMPTY;
        for sq in range {
            t |= pawn_attacks(c, sq);
        }
        ever_attacked[c.index()] |= t;
        targets.push(t);
        if range.count() == 1 {
            wall_attacks[c.index()] |= pawn_attacks(c, p);
        }
    }
    // The cheap test first (it settles most positions of a game): pawns that may meet a
    // pawn to capture.
    for (&(c, _, _), t) in ranges.iter().zip(&targets) {
        if t.intersects(pawn_range[(!c).index()]) {
            return None;
        }
    }

    // Where every piece can ever be, and what it can ever attack.
    let mut reach_of = [Bitboard::EMPTY; 2]; // non-king pieces, by colour
    let mut potential_of = [Bitboard::EMPTY; 2]; // non-king pieces, by colour
    let mut king_reach = [Bitboard::EMPTY; 2];
    let mut king_zone = [Bitboard::EMPTY; 2]; // squares a king can ever attack
    let mut units = Vec::new();
    for c in Color::ALL {
        let forbidden = wall_attacks[(!c).index()];
        let reach = flood(Role::King, c, pos.king_of(c), walls, forbidden);
        king_reach[c.index()] = reach;
        for k in reach {
            king_zone[c.index()] |= king_attacks(k);
        }
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

    // The pawns keep to their ranges only if none can ever capture or be captured.
    for (&(c, _, range), t) in ranges.iter().zip(&targets) {
        let enemy = !c;
        if potential_of[enemy.index()].intersects(range) {
            return None;
        }
        // A king takes a pawn by stepping onto its square: never onto a square a wall pawn
        // of the pawn's side guards.
        if (range & king_zone[enemy.index()] & !wall_attacks[c.index()]).has_any() {
            return None;
        }
        if t.intersects(reach_of[enemy.index()]) {
            return None;
        }
    }

    // Mate needs a check on a square the losing king can reach, with every escape square
    // blocked, guarded by a pawn, attacked by a piece, or attacked by the winning king.
    let lking = king_reach[loser.index()];
    let wking = king_reach[winner.index()];
    let pawn_att = ever_attacked[winner.index()];
    let base_cover = walls
        | reach_of[loser.index()]
        | pawn_range[loser.index()]
        | pawn_range[winner.index()]
        | pawn_att;
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

    let moving = pawns & !walls;
    Some(explain(
        pos, winner, &units, lking, checkable, pawns, moving,
    ))
}

/// The squares of `sq`'s file ahead of it, as a pawn of `c` moves.
fn file_ahead(c: Color, sq: Square) -> Bitboard {
    let file = Bitboard::file(sq.file());
    let i = sq.index() as u32;
    let mask = match c {
        Color::White => u64::MAX.checked_shl(i + 1).unwrap_or(0),
        Color::Black => (1u64 << i) - 1,
    };
    Bitboard(file.0 & mask)
}

/// The highest square of a set.
fn last(b: Bitboard) -> Option<Square> {
    if b.is_empty() {
        None
    } else {
        Square::try_new(63 - b.0.leading_zeros())
    }
}

fn explain(
    pos: &Position,
    winner: Color,
    units: &[Unit],
    lking: Bitboard,
    checkable: Bitboard,
    pawns: Bitboard,
    moving: Bitboard,
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
        let locked = if locks.is_empty() {
            String::new()
        } else {
            format!(" (locked: {})", locks.join(", "))
        };
        if moving.is_empty() {
            text.push_str(&format!(
                "no pawn can ever move again{locked} and no piece can ever capture one; "
            ));
        } else {
            let names: Vec<String> = moving.map(|s| s.to_string()).collect();
            text.push_str(&format!(
                "no pawn can ever capture, be captured or promote{locked}: the pawns on {} can only advance up their blocked files; ",
                names.join(", ")
            ));
        }
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
