//! UCI and coordinate (long algebraic) notation.

use crate::{Bitboard, CastlingSide, Move, Position, Role, SanError, Square};

/// Why a UCI move string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UciError {
    #[error(
        "{0:?} is not a UCI move (expected from and to squares and an optional promotion letter, like e2e4 or e7e8q)"
    )]
    Syntax(String),
    #[error("illegal move {uci:?}: {reason}")]
    Illegal { uci: String, reason: String },
}

/// Why a coordinate-notation move (`Ng1-f3`, `Ra1xa7`) was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CoordinateError {
    #[error(
        "{0:?} is not coordinate notation (expected like Ng1-f3, e2-e4, Ra1xa7, e7-e8=Q or O-O)"
    )]
    Syntax(String),
    #[error("illegal move {text:?}: {reason}")]
    Illegal { text: String, reason: String },
}

impl Position {
    /// Reads a UCI move. Castling is the king's two-square move (`e1g1`); the king-takes-rook
    /// form (`e1h1`) is accepted too. `0000` is the null move.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
    /// assert!(pos.parse_uci("e1g1").unwrap().is_castle());
    /// assert!(pos.parse_uci("e1h1").unwrap().is_castle());
    /// assert!(pos.parse_uci("e1e3").is_err());
    /// ```
    pub fn parse_uci(&self, text: &str) -> Result<Move, UciError> {
        let syntax = || UciError::Syntax(text.to_owned());
        if text == "0000" {
            return if self.is_check() {
                Err(UciError::Illegal {
                    uci: text.to_owned(),
                    reason: "a null move is not allowed while in check".to_owned(),
                })
            } else {
                Ok(Move::NULL)
            };
        }
        if !text.is_ascii() || !(4..=5).contains(&text.len()) {
            return Err(syntax());
        }
        let from: Square = text[0..2].parse().map_err(|_| syntax())?;
        let mut to: Square = text[2..4].parse().map_err(|_| syntax())?;
        let promotion = match text.as_bytes().get(4) {
            None => None,
            Some(&c) => match Role::from_char(c as char) {
                Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) => Some(r),
                _ => return Err(syntax()),
            },
        };
        // King takes own rook: the castling form some programs send.
        if self.pieces(self.turn(), Role::King).contains(from)
            && self.pieces(self.turn(), Role::Rook).contains(to)
        {
            for side in CastlingSide::ALL {
                let (k, kt, r, _) = side.squares(self.turn());
                if from == k && to == r {
                    to = kt;
                }
            }
        }
        self.find_move(from, to, promotion)
            .ok_or_else(|| UciError::Illegal {
                uci: text.to_owned(),
                reason: self.explain_illegal(from, to, promotion),
            })
    }

    /// The UCI form of a move (same as `m.to_string()`).
    pub fn uci(&self, m: Move) -> String {
        m.to_string()
    }

    /// Reads coordinate notation: `[piece]from(-|x)to[=promotion]`, or `O-O`/`O-O-O`
    /// (also `0-0`). The piece letter and the capture sign must match the board.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::startpos();
    /// assert_eq!(pos.parse_coordinate("Ng1-f3").unwrap().to_string(), "g1f3");
    /// assert!(pos.parse_coordinate("Ng1xf3").is_err());
    /// ```
    pub fn parse_coordinate(&self, text: &str) -> Result<Move, CoordinateError> {
        let syntax = || CoordinateError::Syntax(text.to_owned());
        let illegal = |reason: String| CoordinateError::Illegal {
            text: text.to_owned(),
            reason,
        };
        let core = text
            .trim()
            .trim_end_matches(['!', '?'])
            .trim_end_matches(['+', '#']);
        let castle = match core {
            "O-O" | "0-0" => Some(CastlingSide::KingSide),
            "O-O-O" | "0-0-0" => Some(CastlingSide::QueenSide),
            _ => None,
        };
        if let Some(side) = castle {
            let (k, kt, _, _) = side.squares(self.turn());
            return self
                .legal_moves()
                .iter()
                .copied()
                .find(|m| m.is_castle() && m.from() == k && m.to() == kt)
                .ok_or_else(|| illegal(format!("{} cannot castle that way here", self.turn())));
        }
        if !core.is_ascii() {
            return Err(syntax());
        }
        let mut s = core;
        let role = match s.chars().next() {
            Some(c) if c.is_ascii_uppercase() => {
                s = &s[1..];
                Role::from_char(c)
                    .filter(|r| *r != Role::Pawn)
                    .ok_or_else(syntax)?
            }
            _ => Role::Pawn,
        };
        if s.len() < 5 {
            return Err(syntax());
        }
        let from: Square = s[0..2].parse().map_err(|_| syntax())?;
        let capture = match &s[2..3] {
            "-" => false,
            "x" | ":" => true,
            _ => return Err(syntax()),
        };
        let to: Square = s[3..5].parse().map_err(|_| syntax())?;
        let promotion = match &s[5..] {
            "" => None,
            p => {
                let p = p.strip_prefix('=').unwrap_or(p);
                let mut chars = p.chars();
                match (chars.next().and_then(Role::from_char), chars.next()) {
                    (Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)), None) => {
                        Some(r)
                    }
                    _ => return Err(syntax()),
                }
            }
        };
        let m = self
            .find_move(from, to, promotion)
            .ok_or_else(|| illegal(self.explain_illegal(from, to, promotion)))?;
        if m.role() != role {
            return Err(illegal(format!(
                "the piece on {from} is a {}, not a {role}",
                m.role()
            )));
        }
        let is_capture = m.is_en_passant() || self.occupied().contains(to);
        if is_capture != capture {
            return Err(illegal(if is_capture {
                format!("{to} is occupied: write {from}x{to}")
            } else {
                format!("{to} is empty: write {from}-{to}")
            }));
        }
        Ok(m)
    }

    /// Coordinate notation: `Ng1-f3`, `Ra1xa7`, `e7-e8=Q`, `O-O`. Coordinate notation
    /// carries no check marks (the FIDE handbook's long form writes none).
    pub fn coordinate(&self, m: Move) -> String {
        if m.is_null() {
            return "--".to_owned();
        }
        if m.is_castle() {
            return self.san_with(
                m,
                crate::SanOptions {
                    check_marks: false,
                    ..Default::default()
                },
            );
        }
        let mut out = String::with_capacity(8);
        if m.role() != Role::Pawn {
            out.push(m.role().upper_char());
        }
        let capture = m.is_en_passant() || self.occupied().contains(m.to());
        out.push_str(&format!(
            "{}{}{}",
            m.from(),
            if capture { 'x' } else { '-' },
            m.to()
        ));
        if let Some(p) = m.promotion() {
            out.push('=');
            out.push(p.upper_char());
        }
        out
    }

    /// Reads a move in any notation this crate knows: UCI first, then SAN (lenient, which
    /// also covers coordinate notation).
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::startpos();
    /// for text in ["g1f3", "Nf3", "Ng1-f3", "0-0"] {
    ///     let _ = pos.parse_move(text);
    /// }
    /// assert_eq!(pos.parse_move("Ng1-f3").unwrap(), pos.parse_move("g1f3").unwrap());
    /// ```
    pub fn parse_move(&self, text: &str) -> Result<Move, SanError> {
        let t = text.trim();
        let uci_shaped = (4..=5).contains(&t.len())
            && t.is_ascii()
            && t.as_bytes()[0].is_ascii_lowercase()
            && t.as_bytes()[1].is_ascii_digit()
            && t.as_bytes()[2].is_ascii_lowercase()
            && t.as_bytes()[3].is_ascii_digit();
        if !uci_shaped {
            return self.parse_san(t);
        }
        match self.parse_uci(t) {
            Ok(m) => Ok(m),
            // SAN reads some UCI-shaped text too (`e2e4` as a pawn move with its origin);
            // when neither reads it, the UCI reason is the one that explains it.
            Err(uci_err) => self.parse_san(t).map_err(|san_err| match uci_err {
                UciError::Illegal { reason, .. } => SanError::Illegal {
                    text: t.to_owned(),
                    reason,
                },
                UciError::Syntax(_) => san_err,
            }),
        }
    }

    fn explain_illegal(&self, from: Square, to: Square, promotion: Option<Role>) -> String {
        let us = self.turn();
        match self.piece_at(from) {
            None => format!("there is no piece on {from}"),
            Some(p) if p.color != us => {
                format!("the piece on {from} is {}'s, and {us} is to move", p.color)
            }
            Some(p) => {
                let reaches = self
                    .legal_moves()
                    .iter()
                    .any(|m| m.from() == from && m.to() == to);
                if reaches && promotion.is_none() {
                    format!("a pawn reaching {to} must promote: add q, r, b or n")
                } else if reaches {
                    "pawns promote only on the last rank".to_owned()
                } else if promotion.is_some() && p.role != Role::Pawn {
                    "only pawns promote".to_owned()
                } else if self.is_check() {
                    format!("{us} is in check and {from}{to} does not get out of it")
                } else if Bitboard::from_square(to).intersects(self.by_color(us)) {
                    format!("{to} holds a {us} piece")
                } else {
                    format!("the {} on {from} cannot move to {to}", p.role)
                }
            }
        }
    }
}
