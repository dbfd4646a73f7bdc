//! The opening book: its lines (UCI moves from the start position, or a FEN), and the seeded
//! random plies that may extend each pair's opening, so that a long match at a fixed node
//! count does not play the same games again once the book comes round.

use chess_rules::Position;
use chess_search::SplitMix64;

/// One opening: a start position and moves from it.
pub struct Opening {
    pub start: Position,
    pub moves: Vec<String>,
    /// The position the moves lead to.
    end: Position,
}

pub fn book(text: &str) -> Result<Vec<Opening>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (start, moves, end) = if line.contains('/') {
            let p = Position::from_fen(line)
                .map_err(|e| format!("book line {}: {line:?}: {e}", n + 1))?;
            (p.clone(), Vec::new(), p)
        } else {
            let mut p = Position::startpos();
            let moves: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            for m in &moves {
                let mv = p
                    .parse_uci(m)
                    .map_err(|e| format!("book line {}: {m}: {e}", n + 1))?;
                p.play_unchecked(mv);
            }
            (Position::startpos(), moves, p)
        };
        out.push(Opening { start, moves, end });
    }
    if out.is_empty() {
        return Err("the opening book has no openings".into());
    }
    Ok(out)
}

impl Opening {
    /// This opening followed by `plies` random legal moves, drawn from `seed` and the pair
    /// index, that leave the game going (the side to move has a move). The same pair always
    /// gets the same extension, so a resumed match replays nothing differently.
    pub fn extended(&self, plies: u32, seed: u64, pair: u64) -> Result<Opening, String> {
        let mut rng = SplitMix64::new(seed ^ pair.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for _ in 0..64 {
            let mut pos = self.end.clone();
            let mut moves = self.moves.clone();
            for _ in 0..plies {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal.as_slice()[rng.below(legal.len())];
                moves.push(pos.uci(mv));
                pos.play_unchecked(mv);
            }
            if moves.len() == self.moves.len() + plies as usize && !pos.legal_moves().is_empty() {
                return Ok(Opening {
                    start: self.start.clone(),
                    moves,
                    end: pos,
                });
            }
        }
        Err(format!(
            "no {plies} random plies after the opening {:?} leave the game going",
            self.moves.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_legal_seeded_and_differ_by_pair() {
        let book = book("e2e4 e7e5\n# a comment\n8/8/8/8/8/8/k7/2K4Q w - - 0 1\n").unwrap();
        assert_eq!(book.len(), 2);
        let a = book[0].extended(4, 7, 0).unwrap();
        assert_eq!(a.moves.len(), 6);
        assert_eq!(a.moves[..2], ["e2e4", "e7e5"]);
        let mut pos = a.start.clone();
        for m in &a.moves {
            let mv = pos.parse_uci(m).unwrap();
            pos.play_unchecked(mv);
        }
        assert!(!pos.legal_moves().is_empty());
        assert_eq!(a.moves, book[0].extended(4, 7, 0).unwrap().moves);
        let others: Vec<Vec<String>> = (1..20)
            .map(|p| book[0].extended(4, 7, p).unwrap().moves)
            .collect();
        assert!(others.iter().any(|m| *m != a.moves));
        assert_ne!(a.moves, book[0].extended(4, 8, 0).unwrap().moves);
        // A FEN opening gets its moves from the FEN's position.
        let f = book[1].extended(3, 7, 5).unwrap();
        assert_eq!(f.moves.len(), 3);
        assert_eq!(book[0].extended(0, 7, 3).unwrap().moves, ["e2e4", "e7e5"]);
    }

    #[test]
    fn bad_book_lines_are_named() {
        let err = book("e2e4 e7e9").err().unwrap();
        assert!(err.contains("book line 1") && err.contains("e7e9"), "{err}");
        assert!(book("# nothing\n").is_err());
    }
}
