//! What an arbiter says about an illegal move: which piece was moved where, and why the move
//! is illegal ("king moved into check", "pinned", "path blocked", ...).

use chess_rules::{
    Bitboard, CastlingSide, Color, Position, Role, Square, attacks, between, pawn_attacks,
};
use serde::Serialize;

/// An attempted move that the rules do not allow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IllegalAttempt {
    /// The attempt as origin and destination, `e1e2`.
    pub attempted: String,
    pub from: String,
    pub to: String,
    /// Why it is illegal, in words, e.g. `king moved into check (e2 is attacked by Bb5)`.
    pub reason: String,
    /// Whether the king was moved onto an attacked square (送王, "giving the king away"),
    /// castling onto one included: the foul the source documents' three-strikes rule counts.
    pub king_into_attack: bool,
}

/// Reads `text` as an attempt to move a piece from one square to another (UCI `e1e2`,
/// coordinates `Ke1-e2`, `e2-e4`, `Ra1xa7`, or SAN `Ke2` when exactly one piece of that kind
/// could go there ignoring checks) and, when that move is illegal here, says why. `None` when
/// the text names no such attempt (garbage, an empty square, a pawn promotion left
/// unspecified) or when the move is legal.
///
/// ```
/// use chess_rules::Position;
/// let pos = Position::from_fen("4k3/8/8/1b6/8/8/8/4K3 w - - 0 1").unwrap();
/// let a = chess_knowledge::illegal_attempt(&pos, "e1e2").unwrap();
/// assert_eq!(a.reason, "king moved into check (e2 is attacked by Bb5)");
/// ```
pub fn illegal_attempt(pos: &Position, text: &str) -> Option<IllegalAttempt> {
    let (from, to, promotion) = read_squares(pos, text.trim())?;
    if pos.find_move(from, to, promotion).is_some() {
        return None;
    }
    let (reason, king_into_attack) = match explain(pos, from, to, promotion)? {
        Why::KingIntoAttack(reason) => (reason, true),
        Why::Other(reason) => (reason, false),
    };
    Some(IllegalAttempt {
        attempted: format!("{from}{to}"),
        from: from.to_string(),
        to: to.to_string(),
        reason,
        king_into_attack,
    })
}

fn read_squares(pos: &Position, text: &str) -> Option<(Square, Square, Option<Role>)> {
    if !text.is_ascii() || text.len() > 12 {
        return None;
    }
    if text.eq_ignore_ascii_case("o-o") || text == "0-0" {
        let (k, kt, _, _) = CastlingSide::KingSide.squares(pos.turn());
        return Some((k, kt, None));
    }
    if text.eq_ignore_ascii_case("o-o-o") || text == "0-0-0" {
        let (k, kt, _, _) = CastlingSide::QueenSide.squares(pos.turn());
        return Some((k, kt, None));
    }
    // Strip a piece letter, capture and move signs, check marks and `=`.
    let cleaned: String = text
        .trim_end_matches(['+', '#', '!', '?'])
        .chars()
        .filter(|c| !matches!(c, '-' | 'x' | ':' | '='))
        .collect();
    let body = cleaned.trim_start_matches(['K', 'Q', 'R', 'B', 'N']);
    let piece_letter = cleaned.chars().next().filter(|c| "KQRBN".contains(*c));
    let promo_of = |s: &str| -> Option<Option<Role>> {
        match s {
            "" => Some(None),
            p if p.len() == 1 => {
                let r = Role::from_char(p.chars().next()?.to_ascii_lowercase())?;
                matches!(r, Role::Knight | Role::Bishop | Role::Rook | Role::Queen)
                    .then_some(Some(r))
            }
            _ => None,
        }
    };
    if body.len() >= 4
        && let (Ok(from), Ok(to)) = (body[0..2].parse::<Square>(), body[2..4].parse::<Square>())
    {
        let promotion = promo_of(&body[4..])?;
        return Some((from, to, promotion));
    }
    // SAN-like: an optional piece letter and a destination; the piece that could go there.
    if body.len() == 2 {
        let to: Square = body.parse().ok()?;
        let role = piece_letter.map_or(Some(Role::Pawn), |c| {
            Role::from_char(c.to_ascii_lowercase())
        })?;
        let us = pos.turn();
        let candidates: Vec<Square> = pos
            .pieces(us, role)
            .into_iter()
            .filter(|&from| reaches(pos, from, to, role, us))
            .collect();
        if let [from] = candidates[..] {
            return Some((from, to, None));
        }
    }
    None
}

/// Whether a piece could go from `from` to `to` by its way of moving, ignoring checks and
/// what stands on `to`.
fn reaches(pos: &Position, from: Square, to: Square, role: Role, us: Color) -> bool {
    let occ = pos.occupied();
    match role {
        Role::Pawn => {
            let dir = if us == Color::White { 1 } else { -1 };
            let one = from.offset(0, dir);
            let two = from.offset(0, 2 * dir);
            let start = from.rank() == chess_rules::Rank::Second.relative(us);
            one == Some(to)
                || (start && two == Some(to) && one.is_some_and(|s| !occ.contains(s)))
                || pawn_attacks(us, from).contains(to)
        }
        Role::King => {
            attacks(Role::King, us, from, occ).contains(to)
                || CastlingSide::ALL.iter().any(|side| {
                    let (k, kt, _, _) = side.squares(us);
                    from == k && to == kt
                })
        }
        r => attacks(r, us, from, occ).contains(to),
    }
}

/// Names a piece: `Bb5`, `Pe4` (pawns as `P`).
fn piece_name(pos: &Position, sq: Square) -> String {
    match pos.role_at(sq) {
        Some(Role::Pawn) | None => format!("P{sq}"),
        Some(r) => format!("{}{sq}", r.upper_char()),
    }
}

fn names(pos: &Position, b: Bitboard) -> String {
    b.into_iter()
        .map(|s| piece_name(pos, s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why an attempt is illegal: the king put on an attacked square, or anything else.
enum Why {
    KingIntoAttack(String),
    Other(String),
}

fn explain(pos: &Position, from: Square, to: Square, promotion: Option<Role>) -> Option<Why> {
    let us = pos.turn();
    let piece = pos.piece_at(from)?;
    if piece.role == Role::King
        && piece.color == us
        && let Some(side) = CastlingSide::ALL.into_iter().find(|side| {
            let (k, kt, _, _) = side.squares(us);
            from == k && to == kt
        })
    {
        return Some(Why::of(castling_reason(pos, side)));
    }
    explain_other(pos, from, to, promotion).map(Why::of)
}

impl Why {
    fn of(text: String) -> Why {
        if text.starts_with(KING_INTO_CHECK) {
            Why::KingIntoAttack(text)
        } else {
            Why::Other(text)
        }
    }
}

const KING_INTO_CHECK: &str = "king moved into check";

fn explain_other(
    pos: &Position,
    from: Square,
    to: Square,
    promotion: Option<Role>,
) -> Option<String> {
    let us = pos.turn();
    let piece = pos.piece_at(from)?;
    if piece.color != us {
        return Some(format!(
            "moved an opponent's piece: the {} on {from} is {}'s",
            piece.role, piece.color
        ));
    }
    let role = piece.role;
    if pos.by_color(us).contains(to) {
        return Some(format!("{to} holds your own piece"));
    }
    if promotion.is_some() && role != Role::Pawn {
        return Some("only pawns promote".into());
    }
    if !reaches(pos, from, to, role, us) {
        return Some(geometry_reason(pos, from, to, role, us));
    }
    if role == Role::Pawn {
        let diagonal = from.file() != to.file();
        let occ = pos.occupied();
        if diagonal && !pos.by_color(!us).contains(to) && pos.ep_square() != Some(to) {
            return Some(format!("a pawn captures diagonally only: {to} is empty"));
        }
        if !diagonal && occ.contains(to) {
            return Some(format!(
                "a pawn cannot capture straight ahead: {to} is occupied"
            ));
        }
        let last = chess_rules::Rank::Eighth.relative(us);
        if to.rank() == last && promotion.is_none() {
            // A notation slip, not a move on the board.
            return None;
        }
    }
    // The move is possible on the board but leaves the king attacked.
    let mut occ = pos.occupied().without(from).with(to);
    let mut captured = Bitboard::from_square(to);
    if role == Role::Pawn && pos.ep_square() == Some(to) && !pos.occupied().contains(to) {
        let victim = to.offset(0, if us == Color::White { -1 } else { 1 })?;
        occ = occ.without(victim);
        captured |= Bitboard::from_square(victim);
    }
    let king = if role == Role::King {
        to
    } else {
        pos.king_of(us)
    };
    let attackers = pos.attackers_to(king, !us, occ) & !captured;
    if attackers.is_empty() {
        return Some(format!("the {role} on {from} cannot move to {to}"));
    }
    Some(if role == Role::King {
        format!(
            "{KING_INTO_CHECK} ({to} is attacked by {})",
            names(pos, attackers)
        )
    } else if pos.is_check() {
        format!(
            "the king is in check from {} and the move does not parry it",
            names(pos, pos.checkers())
        )
    } else {
        format!(
            "the {role} on {from} is pinned: moving it exposes the king to check from {}",
            names(pos, attackers)
        )
    })
}

fn castling_reason(pos: &Position, side: CastlingSide) -> String {
    let us = pos.turn();
    let (k, kt, r, _) = side.squares(us);
    let wing = match side {
        CastlingSide::KingSide => "kingside",
        CastlingSide::QueenSide => "queenside",
    };
    if !pos.castling_rights().has(us, side) {
        return format!("castling {wing} is no longer allowed: the king or that rook has moved");
    }
    let blockers = between(k, r) & pos.occupied();
    if blockers.has_any() {
        return format!(
            "castling {wing}: pieces stand between king and rook ({})",
            names(pos, blockers)
        );
    }
    if pos.is_check() {
        return format!(
            "cannot castle out of check (check from {})",
            names(pos, pos.checkers())
        );
    }
    let path = between(k, kt) | Bitboard::from_square(kt);
    for sq in path {
        let attackers = pos.attackers_to(sq, !us, pos.occupied());
        if attackers.has_any() {
            return if sq == kt {
                format!(
                    "{KING_INTO_CHECK} ({kt} is attacked by {})",
                    names(pos, attackers)
                )
            } else {
                format!(
                    "castling {wing}: the king would cross {sq}, attacked by {}",
                    names(pos, attackers)
                )
            };
        }
    }
    format!("castling {wing} is not allowed here")
}

fn geometry_reason(pos: &Position, from: Square, to: Square, role: Role, us: Color) -> String {
    // A slider whose line is blocked, or a piece that does not move that way at all.
    let empty_board = attacks(role, us, from, Bitboard::EMPTY);
    if matches!(role, Role::Bishop | Role::Rook | Role::Queen) && empty_board.contains(to) {
        let blockers = between(from, to) & pos.occupied();
        return format!(
            "the {role}'s path from {from} to {to} is blocked by {}",
            names(pos, blockers)
        );
    }
    if role == Role::Pawn {
        let dir = if us == Color::White { 1 } else { -1 };
        if from.offset(0, 2 * dir) == Some(to) {
            return if from.rank() != chess_rules::Rank::Second.relative(us) {
                "a pawn moves two squares only from its starting square".into()
            } else {
                format!(
                    "the pawn's path is blocked on {}",
                    from.offset(0, dir).map_or(String::new(), |s| s.to_string())
                )
            };
        }
        return format!("a pawn cannot move from {from} to {to}");
    }
    format!("a {role} does not move from {from} to {to}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(fen: &str, text: &str) -> Option<String> {
        illegal_attempt(&Position::from_fen(fen).unwrap(), text).map(|a| a.reason)
    }

    fn king_into_attack(fen: &str, text: &str) -> bool {
        illegal_attempt(&Position::from_fen(fen).unwrap(), text)
            .unwrap()
            .king_into_attack
    }

    /// The three-strikes rule counts only the king moved onto an attacked square (送王).
    #[test]
    fn only_a_king_put_on_an_attacked_square_counts_as_giving_it_away() {
        let start = chess_rules::STARTPOS_FEN;
        for pawn_slip in ["e2e5", "e2e6", "a2a5", "g1g3", "e1e2"] {
            assert!(!king_into_attack(start, pawn_slip), "{pawn_slip}");
        }
        let fen = "4k3/8/8/1b6/8/8/8/4K3 w - - 0 1";
        assert!(king_into_attack(fen, "Ke2"));
        assert_eq!(why(fen, "e1d2"), None, "d2 is not attacked: legal");
        // Castling onto an attacked square is one; across one, or out of check, is not.
        let fen = "4k1r1/8/8/8/8/8/8/R3K2R w KQ - 0 1";
        assert!(king_into_attack(fen, "O-O"));
        let fen = "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1";
        assert!(!king_into_attack(fen, "O-O"));
        // A pinned piece moved is not the king moved.
        let fen = "4k3/8/8/1b6/8/3N4/4K3/8 w - - 0 1";
        assert!(!king_into_attack(fen, "d3f4"));
    }

    #[test]
    fn reasons() {
        let start = chess_rules::STARTPOS_FEN;
        assert_eq!(why(start, "e2e4"), None, "legal");
        assert_eq!(why(start, "hello"), None, "not a move");
        assert_eq!(why(start, "e3e4"), None, "empty square: no attempt");
        assert_eq!(
            why(start, "f1c4").unwrap(),
            "the bishop's path from f1 to c4 is blocked by Pe2"
        );
        assert_eq!(
            why(start, "g1g3").unwrap(),
            "a knight does not move from g1 to g3"
        );
        assert_eq!(why(start, "e1e2").unwrap(), "e2 holds your own piece");
        assert_eq!(
            why(start, "e7e5").unwrap(),
            "moved an opponent's piece: the pawn on e7 is black's"
        );
        assert_eq!(
            why(start, "e2d3").unwrap(),
            "a pawn captures diagonally only: d3 is empty"
        );
        // The king steps into a bishop's diagonal (SAN and coordinates read too).
        let fen = "4k3/8/8/1b6/8/8/8/4K3 w - - 0 1";
        assert_eq!(
            why(fen, "Ke2").unwrap(),
            "king moved into check (e2 is attacked by Bb5)"
        );
        assert_eq!(
            why(fen, "Ke1-e2").unwrap(),
            "king moved into check (e2 is attacked by Bb5)"
        );
        // A pinned knight.
        let fen = "4k3/8/8/1b6/8/3N4/8/6K1 w - - 0 1";
        assert_eq!(why(fen, "d3f4"), None, "not pinned: the king is on g1");
        let fen = "4k3/8/8/1b6/8/3N4/4K3/8 w - - 0 1";
        assert_eq!(
            why(fen, "d3f4").unwrap(),
            "the knight on d3 is pinned: moving it exposes the king to check from Bb5"
        );
        // In check, a move that does not parry it.
        let fen = "4k3/8/8/8/1b6/8/7P/4K3 w - - 0 1";
        assert_eq!(
            why(fen, "h2h4").unwrap(),
            "the king is in check from Bb4 and the move does not parry it"
        );
        // Castling.
        let fen = "4k3/8/8/8/8/8/8/R3K1NR w KQ - 0 1";
        assert_eq!(
            why(fen, "O-O").unwrap(),
            "castling kingside: pieces stand between king and rook (Ng1)"
        );
        let fen = "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1";
        assert_eq!(
            why(fen, "e1g1").unwrap(),
            "castling kingside: the king would cross f1, attacked by Rf8"
        );
        let fen = "4k3/8/8/8/8/8/8/R3K2R w Q - 0 1";
        assert_eq!(
            why(fen, "e1g1").unwrap(),
            "castling kingside is no longer allowed: the king or that rook has moved"
        );
    }
}
