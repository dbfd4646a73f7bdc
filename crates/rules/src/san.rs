//! Standard Algebraic Notation: writing (with English letters, figurines or Chinese piece
//! names) and reading (lenient by default, strict on request).

use crate::{Bitboard, File, Move, MoveList, Position, Rank, Role, Square};

/// Which piece letters SAN writing uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PieceLetters {
    /// `K Q R B N`, as PGN requires.
    #[default]
    English,
    /// `♔ ♕ ♖ ♗ ♘` (white figurines for both sides, as printed notation does).
    Figurine,
    /// `王 后 車 象 馬` (traditional characters; the reader also takes simplified 车 马).
    Chinese,
}

impl PieceLetters {
    fn letter(self, role: Role) -> char {
        match self {
            PieceLetters::English => role.upper_char(),
            PieceLetters::Figurine => role.figurine(),
            PieceLetters::Chinese => role.chinese(),
        }
    }
}

/// Options for [`Position::san_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SanOptions {
    pub letters: PieceLetters,
    /// Append `+` for check and `#` for checkmate.
    pub check_marks: bool,
}

impl Default for SanOptions {
    fn default() -> Self {
        SanOptions {
            letters: PieceLetters::English,
            check_marks: true,
        }
    }
}

/// How forgiving SAN reading is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SanStrictness {
    /// Accepts `0-0`, `Ng1f3`, `Ng1-f3`, `e8Q`, `exd6 e.p.`, a missing `x`, a missing or wrong
    /// check mark, figurines and Chinese piece names, trailing annotation symbols, and the
    /// null move as `--`, `Z0`, `0000` or `@@@@`.
    #[default]
    Lenient,
    /// Only the canonical SAN of the move (piece letters may be figurines or Chinese, and
    /// annotation symbols or an `e.p.` note may follow): `x` exactly on captures, `=` before a
    /// promotion, minimal disambiguation, `O-O` with the letter O, and the right check mark.
    Strict,
}

/// Why a SAN string does not name a move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    #[error("cannot read {text:?} as a move: {reason}")]
    Unparseable { text: String, reason: &'static str },
    #[error("illegal move {text:?}: {reason}")]
    Illegal { text: String, reason: String },
    #[error("ambiguous move {text:?}: could be {}", candidates.join(", "))]
    Ambiguous {
        text: String,
        candidates: Vec<String>,
    },
    #[error("{text:?} is not strict SAN: write {expected:?}")]
    NotStrict { text: String, expected: String },
}

/// What the text says, before looking at the position.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    Null,
    Castle {
        king_side: bool,
    },
    Normal {
        role: Role,
        from_file: Option<File>,
        from_rank: Option<Rank>,
        capture: bool,
        to: Square,
        promotion: Option<Role>,
    },
}

/// Splits off trailing annotation symbols (`!`, `?` and their pairs), check marks and an
/// `e.p.` note, returning the core text and the check mark seen.
fn strip_suffixes(text: &str) -> (&str, &str) {
    let mut s = text.trim();
    // Annotation symbols may stand on either side of the check mark (`Nf3+!`, `Nf3!+`).
    s = s.trim_end_matches(['!', '?']);
    let before_marks = s;
    s = s.trim_end_matches(['+', '#']);
    let mut marks = &before_marks[s.len()..];
    let unannotated = s.trim_end_matches(['!', '?']);
    if unannotated.len() != s.len() {
        s = unannotated;
        if marks.is_empty() {
            let before = s;
            s = s.trim_end_matches(['+', '#']);
            marks = &before[s.len()..];
        }
    }
    s = s.trim_end();
    for ep in ["e.p.", "ep", "e.p"] {
        if let Some(rest) = s.strip_suffix(ep) {
            // Only a note when something precedes it that ends in a rank digit.
            if rest.trim_end().ends_with(|c: char| c.is_ascii_digit()) {
                s = rest.trim_end();
                break;
            }
        }
    }
    (s, marks)
}

/// Normalises figurines and Chinese piece names to English letters.
fn to_english(s: &str) -> String {
    s.chars()
        .map(|c| {
            Role::from_figurine(c)
                .or_else(|| Role::from_chinese(c))
                .map_or(c, |r| r.upper_char())
        })
        .collect()
}

fn parse_text(core: &str) -> Result<Parsed, &'static str> {
    match core {
        "--" | "Z0" | "0000" | "@@@@" => return Ok(Parsed::Null),
        "O-O" | "0-0" | "OO" | "00" => return Ok(Parsed::Castle { king_side: true }),
        "O-O-O" | "0-0-0" | "OOO" | "000" => return Ok(Parsed::Castle { king_side: false }),
        _ => {}
    }
    let chars: Vec<char> = core.chars().collect();
    if chars.is_empty() {
        return Err("empty");
    }
    if chars.len() > 10 {
        return Err("too long for a move");
    }
    let mut end = chars.len();
    // Promotion: `=Q`, `Q` or `q` after the destination rank, or `(Q)`, `/Q`.
    let mut promotion = None;
    if end >= 3 {
        let last = chars[end - 1];
        let (promo_char, consumed) = if last == ')' && end >= 4 && chars[end - 3] == '(' {
            (chars[end - 2], 3)
        } else {
            (last, 1)
        };
        if let Some(role) = Role::from_char(promo_char) {
            let before = end - consumed;
            let sep = chars[before - 1];
            let is_promo = sep == '=' || sep == '/' || sep.is_ascii_digit();
            if is_promo && matches!(role, Role::Pawn | Role::King) {
                return Err("a pawn promotes to a queen, rook, bishop or knight only");
            }
            if is_promo {
                promotion = Some(role);
                end = before;
                if sep == '=' || sep == '/' {
                    end -= 1;
                }
            }
        }
    }
    if end < 2 {
        return Err("no destination square");
    }
    let to_file = File::from_char(chars[end - 2]).ok_or("no destination square at the end")?;
    let to_rank = Rank::from_char(chars[end - 1]).ok_or("no destination square at the end")?;
    let to = Square::from_coords(to_file, to_rank);
    let mut rest = &chars[..end - 2];

    // Piece letter: upper case only, so that `b` stays a file.
    let mut role = Role::Pawn;
    if let Some(&c) = rest.first()
        && c.is_ascii_uppercase()
    {
        role = Role::from_char(c).ok_or("unknown piece letter")?;
        rest = &rest[1..];
    }
    let mut capture = false;
    if let Some(&c) = rest.last()
        && matches!(c, 'x' | ':' | '-' | '×')
    {
        capture = c != '-';
        rest = &rest[..rest.len() - 1];
    }
    let mut from_file = None;
    let mut from_rank = None;
    match rest {
        [] => {}
        [c] => {
            if let Some(f) = File::from_char(*c) {
                from_file = Some(f);
            } else if let Some(r) = Rank::from_char(*c) {
                from_rank = Some(r);
            } else {
                return Err("unexpected character before the destination");
            }
        }
        [f, r] => {
            from_file = Some(File::from_char(*f).ok_or("bad origin square")?);
            from_rank = Some(Rank::from_char(*r).ok_or("bad origin square")?);
        }
        _ => return Err("unexpected characters before the destination"),
    }
    if promotion.is_some() && role != Role::Pawn {
        return Err("only pawns promote");
    }
    Ok(Parsed::Normal {
        role,
        from_file,
        from_rank,
        capture,
        to,
        promotion,
    })
}

impl Position {
    /// SAN of a legal move, with `+`/`#`.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::from_fen("6k1/P7/8/8/8/8/8/R3K2R w KQ - 0 1").unwrap();
    /// assert_eq!(pos.san(pos.parse_uci("a7a8q").unwrap()), "a8=Q+");
    /// assert_eq!(pos.san(pos.parse_uci("e1c1").unwrap()), "O-O-O");
    /// ```
    pub fn san(&self, m: Move) -> String {
        self.san_with(m, SanOptions::default())
    }

    /// SAN with a choice of piece letters and check marks.
    ///
    /// ```
    /// use chess_rules::{PieceLetters, Position, SanOptions};
    /// let pos = Position::startpos();
    /// let m = pos.parse_san("Nf3").unwrap();
    /// let chinese = SanOptions { letters: PieceLetters::Chinese, check_marks: true };
    /// assert_eq!(pos.san_with(m, chinese), "馬f3");
    /// let figurine = SanOptions { letters: PieceLetters::Figurine, check_marks: true };
    /// assert_eq!(pos.san_with(m, figurine), "♘f3");
    /// ```
    pub fn san_with(&self, m: Move, opts: SanOptions) -> String {
        let mut out = self.san_body(m, opts.letters);
        if opts.check_marks && !m.is_null() {
            let mut next = self.clone();
            next.play_unchecked(m);
            if next.is_check() {
                out.push(if next.has_legal_moves() { '+' } else { '#' });
            }
        }
        out
    }

    fn san_body(&self, m: Move, letters: PieceLetters) -> String {
        if m.is_null() {
            return "--".to_owned();
        }
        if m.is_castle() {
            return if m.to().file() == File::G {
                "O-O"
            } else {
                "O-O-O"
            }
            .to_owned();
        }
        let mut out = String::with_capacity(8);
        let capture = m.is_en_passant() || self.occupied().contains(m.to());
        if m.role() == Role::Pawn {
            if capture {
                out.push(m.from().file().char());
                out.push('x');
            }
        } else {
            out.push(letters.letter(m.role()));
            let mut list = MoveList::new();
            self.legal_moves_into(&mut list);
            let others: Vec<Square> = list
                .iter()
                .filter(|o| o.role() == m.role() && o.to() == m.to() && o.from() != m.from())
                .map(|o| o.from())
                .collect();
            if !others.is_empty() {
                let file_unique = others.iter().all(|s| s.file() != m.from().file());
                let rank_unique = others.iter().all(|s| s.rank() != m.from().rank());
                if file_unique {
                    out.push(m.from().file().char());
                } else if rank_unique {
                    out.push(m.from().rank().char());
                } else {
                    out.push(m.from().file().char());
                    out.push(m.from().rank().char());
                }
            }
            if capture {
                out.push('x');
            }
        }
        out.push_str(&m.to().to_string());
        if let Some(p) = m.promotion() {
            out.push('=');
            out.push(letters.letter(p));
        }
        out
    }

    /// Reads a move in SAN, leniently (see [`SanStrictness::Lenient`]).
    ///
    /// ```
    /// use chess_rules::{Position, SanError};
    /// let pos = Position::startpos();
    /// for text in ["Nf3", "Ng1f3", "Ng1-f3", "Nf3!?", "♘f3", "馬f3", "马f3"] {
    ///     assert_eq!(pos.parse_san(text).unwrap().to_string(), "g1f3", "{text}");
    /// }
    /// assert!(matches!(pos.parse_san("Nf4"), Err(SanError::Illegal { .. })));
    /// ```
    pub fn parse_san(&self, text: &str) -> Result<Move, SanError> {
        self.parse_san_with(text, SanStrictness::Lenient)
    }

    /// Reads a move in SAN with the chosen strictness.
    ///
    /// ```
    /// use chess_rules::{Position, SanError, SanStrictness};
    /// let pos = Position::from_fen("4k3/8/8/8/8/5p2/8/4K1N1 w - - 0 1").unwrap();
    /// assert!(pos.parse_san_with("Nxf3", SanStrictness::Strict).is_ok());
    /// assert!(matches!(
    ///     pos.parse_san_with("Nf3", SanStrictness::Strict),
    ///     Err(SanError::NotStrict { .. })
    /// ));
    /// assert!(pos.parse_san("Nf3").is_ok());
    /// ```
    pub fn parse_san_with(&self, text: &str, strictness: SanStrictness) -> Result<Move, SanError> {
        let unparseable = |reason| SanError::Unparseable {
            text: text.to_owned(),
            reason,
        };
        if text.len() > 32 {
            return Err(unparseable("too long for a move"));
        }
        let (core, marks) = strip_suffixes(text);
        let english = to_english(core);
        let parsed = parse_text(&english).map_err(unparseable)?;
        let m = self.resolve(text, &parsed)?;
        if strictness == SanStrictness::Strict {
            let canonical = self.san(m);
            let written = format!("{english}{marks}");
            if written != canonical {
                return Err(SanError::NotStrict {
                    text: text.to_owned(),
                    expected: canonical,
                });
            }
        }
        Ok(m)
    }

    fn resolve(&self, text: &str, parsed: &Parsed) -> Result<Move, SanError> {
        let illegal = |reason: String| SanError::Illegal {
            text: text.to_owned(),
            reason,
        };
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        match *parsed {
            Parsed::Null => {
                if self.is_check() {
                    Err(illegal(
                        "a null move is not allowed while in check".to_owned(),
                    ))
                } else {
                    Ok(Move::NULL)
                }
            }
            Parsed::Castle { king_side } => {
                let file = if king_side { File::G } else { File::C };
                list.iter()
                    .copied()
                    .find(|m| m.is_castle() && m.to().file() == file)
                    .ok_or_else(|| {
                        illegal(format!(
                            "{} cannot castle {} here",
                            self.turn(),
                            if king_side { "king-side" } else { "queen-side" }
                        ))
                    })
            }
            Parsed::Normal {
                role,
                from_file,
                from_rank,
                capture,
                to,
                promotion,
            } => {
                let from_mask = from_file.map_or(Bitboard::FULL, Bitboard::file)
                    & from_rank.map_or(Bitboard::FULL, Bitboard::rank);
                let mut found: Vec<Move> = list
                    .iter()
                    .copied()
                    .filter(|m| {
                        m.role() == role
                            && m.to() == to
                            && from_mask.contains(m.from())
                            && (m.promotion() == promotion
                                // A pawn reaching the last rank without a named piece is
                                // incomplete, never a silent queen.
                                && !(promotion.is_none() && m.promotion().is_some()))
                    })
                    .collect();
                // `Kg1` names a king step, not castling; only the long forms `Ke1g1` and
                // `Ke1-g1` (both origin coordinates given) describe castling as a king move.
                if from_file.is_none() || from_rank.is_none() {
                    found.retain(|m| !m.is_castle());
                }
                // A lone capture mark on a non-capture is a contradiction even leniently.
                if capture {
                    found.retain(|m| m.is_en_passant() || self.occupied().contains(m.to()));
                }
                // A pawn move without an origin file is a push: SAN always names the file of
                // a capturing pawn.
                if role == Role::Pawn && from_file.is_none() && !capture {
                    found.retain(|m| m.from().file() == to.file());
                }
                match found.len() {
                    1 => Ok(found[0]),
                    0 => {
                        let needs_promo = promotion.is_none()
                            && role == Role::Pawn
                            && list.iter().any(|m| m.to() == to && m.promotion().is_some());
                        Err(illegal(if needs_promo {
                            format!("a pawn reaching {to} must promote: add =Q, =R, =B or =N")
                        } else if capture && !self.occupied().contains(to) {
                            format!("nothing to capture on {to}")
                        } else {
                            format!("no {} {} can move to {to}", self.turn(), role)
                        }))
                    }
                    _ => Err(SanError::Ambiguous {
                        text: text.to_owned(),
                        candidates: found.iter().map(|m| self.san(*m)).collect(),
                    }),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert_eq!(strip_suffixes("Nf3+!?"), ("Nf3", "+"));
        assert_eq!(strip_suffixes("exd6 e.p."), ("exd6", ""));
        assert_eq!(strip_suffixes("exd6e.p.+"), ("exd6", "+"));
        assert_eq!(strip_suffixes("Qh4#"), ("Qh4", "#"));
        assert_eq!(strip_suffixes("Nf3!+"), ("Nf3", "+"));
        assert_eq!(strip_suffixes("Nf3!?#"), ("Nf3", "#"));
    }

    #[test]
    fn parse_forms() {
        assert_eq!(parse_text("O-O"), Ok(Parsed::Castle { king_side: true }));
        assert_eq!(parse_text("0-0-0"), Ok(Parsed::Castle { king_side: false }));
        assert!(matches!(
            parse_text("e8Q"),
            Ok(Parsed::Normal {
                promotion: Some(Role::Queen),
                role: Role::Pawn,
                ..
            })
        ));
        assert!(matches!(
            parse_text("bxc8=N"),
            Ok(Parsed::Normal {
                promotion: Some(Role::Knight),
                from_file: Some(File::B),
                ..
            })
        ));
        assert!(matches!(
            parse_text("Bc4"),
            Ok(Parsed::Normal {
                role: Role::Bishop,
                ..
            })
        ));
        assert!(parse_text("Xe4").is_err());
        assert_eq!(
            parse_text("axb8=K"),
            Err("a pawn promotes to a queen, rook, bishop or knight only")
        );
        assert!(parse_text("a8=P").is_err());
        assert!(parse_text("e9").is_err());
        assert!(parse_text("").is_err());
    }
}
