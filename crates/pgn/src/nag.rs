//! Numeric Annotation Glyphs and the move-suffix symbols that stand for them.

/// `!` — a good move ($1).
pub const NAG_GOOD: u8 = 1;
/// `?` — a mistake ($2).
pub const NAG_MISTAKE: u8 = 2;
/// `!!` — a brilliant move ($3).
pub const NAG_BRILLIANT: u8 = 3;
/// `??` — a blunder ($4).
pub const NAG_BLUNDER: u8 = 4;
/// `!?` — a speculative move ($5).
pub const NAG_SPECULATIVE: u8 = 5;
/// `?!` — a dubious move ($6).
pub const NAG_DUBIOUS: u8 = 6;

/// Symbols read as NAGs: the six move suffixes, then the usual evaluation signs.
const SYMBOLS: [(&str, u8); 18] = [
    ("!", NAG_GOOD),
    ("?", NAG_MISTAKE),
    ("!!", NAG_BRILLIANT),
    ("??", NAG_BLUNDER),
    ("!?", NAG_SPECULATIVE),
    ("?!", NAG_DUBIOUS),
    ("=", 10),
    ("\u{221e}", 13),
    ("+=", 14),
    ("\u{2a72}", 14),
    ("=+", 15),
    ("\u{2a71}", 15),
    ("+/-", 16),
    ("\u{b1}", 16),
    ("-/+", 17),
    ("\u{2213}", 17),
    ("+-", 18),
    ("-+", 19),
];

/// The NAG a symbol stands for: the move suffixes `!` `?` `!!` `??` `!?` `?!` (NAGs 1 to 6)
/// and the evaluation signs `=` `∞` `+=` `=+` `±` `∓` `+-` `-+` (and `+/-`, `-/+`).
///
/// ```
/// use chess_pgn::nag_from_symbol;
/// assert_eq!(nag_from_symbol("!?"), Some(5));
/// assert_eq!(nag_from_symbol("+-"), Some(18));
/// assert_eq!(nag_from_symbol("!!!"), None);
/// ```
pub fn nag_from_symbol(symbol: &str) -> Option<u8> {
    SYMBOLS.iter().find(|(s, _)| *s == symbol).map(|&(_, n)| n)
}

/// The move-suffix symbol of NAGs 1 to 6 (`!`, `?`, `!!`, `??`, `!?`, `?!`).
///
/// ```
/// use chess_pgn::nag_symbol;
/// assert_eq!(nag_symbol(4), Some("??"));
/// assert_eq!(nag_symbol(10), None);
/// ```
pub fn nag_symbol(nag: u8) -> Option<&'static str> {
    SYMBOLS[..6]
        .iter()
        .find(|&&(_, n)| n == nag)
        .map(|&(s, _)| s)
}

/// The NAG of a run of `!` and `?` following a move, if it is one of the six suffixes.
pub(crate) fn suffix_nag(suffix: &[u8]) -> Option<u8> {
    match suffix {
        b"!" => Some(NAG_GOOD),
        b"?" => Some(NAG_MISTAKE),
        b"!!" => Some(NAG_BRILLIANT),
        b"??" => Some(NAG_BLUNDER),
        b"!?" => Some(NAG_SPECULATIVE),
        b"?!" => Some(NAG_DUBIOUS),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_agree_with_the_table() {
        for (s, n) in &SYMBOLS[..6] {
            assert_eq!(suffix_nag(s.as_bytes()), Some(*n));
            assert_eq!(nag_symbol(*n), Some(*s));
        }
        assert_eq!(suffix_nag(b"!!?"), None);
    }
}
