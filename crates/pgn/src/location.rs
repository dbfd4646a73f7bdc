//! Places in the input, for events and error messages.

use std::fmt;

/// A place in the input: a 1-based line and column and the byte offset from the start.
///
/// Columns count characters (Unicode scalar values), not bytes, so they match what an editor
/// shows for UTF-8 text; a byte-order mark at the start of the file is not counted.
///
/// ```
/// use chess_pgn::Location;
/// let at = Location { line: 3, column: 7, offset: 52 };
/// assert_eq!(at.to_string(), "line 3, column 7");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// 1-based line number; lines end with `\n` (a preceding `\r` belongs to the line).
    pub line: u64,
    /// 1-based column, in characters.
    pub column: u64,
    /// Bytes from the start of the input (a byte-order mark included).
    pub offset: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}
