use std::fmt;

use chess_rules::{Color, Role};

use crate::TbError;

/// The non-king roles in the order an ending's name lists them (strongest first).
pub(crate) const NAME_ORDER: [Role; 5] = [
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::Pawn,
];

/// Piece values used only to decide which side an ending's name puts first.
const fn weight(role: Role) -> u32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 0,
    }
}

/// The material of an ending: the non-king pieces of each side (both kings are implied).
///
/// Its name lists the stronger side first, as white: `KRPvKR`, `KQvK`, `KvK`. A position whose
/// stronger side is black is looked up with the colours swapped and the board mirrored.
///
/// ```
/// use chess_tablebase::Material;
/// let m: Material = "KRPvKR".parse().unwrap();
/// assert_eq!(m.to_string(), "KRPvKR");
/// assert_eq!(m.piece_count(), 5);
/// assert!(m.has_pawns());
/// // The weaker side written first is turned round.
/// assert_eq!("KvKQ".parse::<Material>().unwrap().to_string(), "KQvK");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// Counts indexed `[color][role]` for pawn..queen.
    counts: [[u8; 5]; 2],
}

impl Material {
    /// The material of a piece list, oriented as given (not yet made canonical).
    pub(crate) fn from_pieces(pieces: impl IntoIterator<Item = (Color, Role)>) -> Material {
        let mut counts = [[0u8; 5]; 2];
        for (color, role) in pieces {
            if role != Role::King {
                counts[color.index()][role.index()] += 1;
            }
        }
        Material { counts }
    }

    pub fn count(&self, color: Color, role: Role) -> u8 {
        if role == Role::King {
            1
        } else {
            self.counts[color.index()][role.index()]
        }
    }

    /// Pieces on the board, both kings included.
    pub fn piece_count(&self) -> usize {
        2 + self
            .counts
            .iter()
            .flatten()
            .map(|&c| usize::from(c))
            .sum::<usize>()
    }

    pub fn pawn_count(&self) -> usize {
        usize::from(self.counts[0][0]) + usize::from(self.counts[1][0])
    }

    pub fn has_pawns(&self) -> bool {
        self.pawn_count() > 0
    }

    /// The same material with the colours exchanged.
    pub fn flipped(&self) -> Material {
        Material {
            counts: [self.counts[1], self.counts[0]],
        }
    }

    fn side_key(&self, color: Color) -> (u32, [u8; 5]) {
        let c = &self.counts[color.index()];
        let value = Role::ALL[..5]
            .iter()
            .map(|&r| weight(r) * u32::from(c[r.index()]))
            .sum();
        // Compare role counts strongest role first.
        let order = [c[4], c[3], c[2], c[1], c[0]];
        (value, order)
    }

    /// Whether the table for this material is stored with the colours swapped.
    pub fn needs_flip(&self) -> bool {
        self.side_key(Color::White) < self.side_key(Color::Black)
    }

    /// The orientation the tables are stored in: the stronger side white.
    pub fn canonical(&self) -> Material {
        if self.needs_flip() {
            self.flipped()
        } else {
            *self
        }
    }

    /// The non-king pieces in table order: white's strongest first, then black's.
    pub(crate) fn slots(&self) -> Vec<(Color, Role)> {
        let mut out = Vec::new();
        for color in Color::ALL {
            for role in NAME_ORDER {
                for _ in 0..self.count(color, role) {
                    out.push((color, role));
                }
            }
        }
        out
    }

    /// Every canonical ending with at most `max_pieces` pieces (kings included), in an order in
    /// which each ending's captures and promotions lead only to endings listed before it.
    pub fn all_up_to(max_pieces: usize) -> Vec<Material> {
        let mut out = Vec::new();
        let extra = max_pieces.saturating_sub(2);
        let mut sides: Vec<[u8; 5]> = Vec::new();
        side_multisets(extra, 0, [0; 5], &mut sides);
        for w in &sides {
            for b in &sides {
                let m = Material { counts: [*w, *b] };
                if m.piece_count() <= max_pieces && !m.needs_flip() && !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        sort_dependencies(&mut out);
        out
    }

    /// The canonical endings a capture or promotion from this one can reach, directly or not,
    /// this one included, in dependency order.
    pub fn with_dependencies(&self) -> Vec<Material> {
        let mut out = vec![self.canonical()];
        let mut i = 0;
        while i < out.len() {
            let m = out[i];
            for next in m.direct_successors() {
                if !out.contains(&next) {
                    out.push(next);
                }
            }
            i += 1;
        }
        sort_dependencies(&mut out);
        out
    }

    /// Canonical endings one capture or one promotion away.
    fn direct_successors(&self) -> Vec<Material> {
        let mut out = Vec::new();
        for color in Color::ALL {
            for r in 0..5 {
                if self.counts[color.index()][r] == 0 {
                    continue;
                }
                let mut captured = *self;
                captured.counts[color.index()][r] -= 1;
                out.push(captured.canonical());
                if r == Role::Pawn.index() {
                    for promo in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                        let mut promoted = captured;
                        promoted.counts[color.index()][promo.index()] += 1;
                        out.push(promoted.canonical());
                        // A capture that promotes removes an enemy piece as well.
                        for victim in 1..5 {
                            let other = color.other().index();
                            if promoted.counts[other][victim] > 0 {
                                let mut both = promoted;
                                both.counts[other][victim] -= 1;
                                out.push(both.canonical());
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

fn sort_dependencies(list: &mut [Material]) {
    list.sort_by_key(|m| (m.piece_count(), m.pawn_count(), m.to_string()));
}

fn side_multisets(left: usize, from_role: usize, cur: [u8; 5], out: &mut Vec<[u8; 5]>) {
    out.push(cur);
    if left == 0 {
        return;
    }
    for r in from_role..5 {
        let mut next = cur;
        next[r] += 1;
        side_multisets(left - 1, r, next, out);
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, color) in Color::ALL.into_iter().enumerate() {
            if i == 1 {
                f.write_str("v")?;
            }
            f.write_str("K")?;
            for role in NAME_ORDER {
                for _ in 0..self.count(color, role) {
                    write!(f, "{}", role.upper_char())?;
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Material({self})")
    }
}

impl std::str::FromStr for Material {
    type Err = TbError;

    /// Parses `KQvK`, `KRPvKR`, `kbnvk`; the result is canonical (stronger side first).
    fn from_str(text: &str) -> Result<Material, TbError> {
        let bad = |why: &str| TbError::BadEnding {
            text: text.to_string(),
            reason: why.to_string(),
        };
        let upper = text.trim().to_ascii_uppercase();
        let (w, b) = upper
            .split_once('V')
            .ok_or_else(|| bad("expected two sides joined by 'v'"))?;
        let mut counts = [[0u8; 5]; 2];
        for (color, side) in [(Color::White, w), (Color::Black, b)] {
            let rest = side
                .strip_prefix('K')
                .ok_or_else(|| bad("each side starts with its king 'K'"))?;
            for c in rest.chars() {
                let role = Role::from_char(c.to_ascii_lowercase())
                    .filter(|&r| r != Role::King)
                    .ok_or_else(|| bad("pieces are Q, R, B, N, P after one K"))?;
                counts[color.index()][role.index()] += 1;
            }
        }
        let m = Material { counts };
        if m.piece_count() > 8 {
            return Err(bad("at most 8 pieces"));
        }
        Ok(m.canonical())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_up_to_four_lists_each_ending_once_after_its_dependencies() {
        let all = Material::all_up_to(4);
        let names: Vec<String> = all.iter().map(|m| m.to_string()).collect();
        // KvK; 5 three-piece; 4-piece: 15 one-sided pairs + 15 (5*5 minus mirrored duplicates).
        assert_eq!(all.len(), 1 + 5 + 15 + 15, "{names:?}");
        for (i, m) in all.iter().enumerate() {
            for dep in m.with_dependencies() {
                let at = all.iter().position(|x| *x == dep).unwrap();
                assert!(at <= i, "{m} needs {dep} first");
            }
        }
        assert!(names.contains(&"KBNvK".to_string()) && names.contains(&"KPvKP".to_string()));
    }

    #[test]
    fn stronger_side_first() {
        assert_eq!("KvKR".parse::<Material>().unwrap().to_string(), "KRvK");
        assert_eq!("KNvKB".parse::<Material>().unwrap().to_string(), "KBvKN");
        assert_eq!("KPvKQ".parse::<Material>().unwrap().to_string(), "KQvKP");
        assert!("KQK".parse::<Material>().is_err());
        assert!("QvK".parse::<Material>().is_err());
    }
}
