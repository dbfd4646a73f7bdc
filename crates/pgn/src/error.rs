//! Errors of the reader (syntax) and the combined error of [`crate::read_games`].

use std::{fmt, io};

use crate::{GameError, Location};

/// What is wrong with the text. See [`SyntaxError`] for where.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A `{` comment without its `}` before the end of the input, or before what is plainly
    /// the next game (an empty line followed by a tag pair). Located at the `{`.
    UnterminatedComment,
    /// A tag pair without its closing `"]` on the same line. Located at the `[`.
    UnterminatedTag,
    /// A tag pair that does not read `[Name "value"]`. Located where it goes wrong.
    BadTag(&'static str),
    /// A `(` never closed before the game ends. Located at the `(`.
    UnclosedVariation,
    /// A `)` without its `(`.
    UnmatchedParen,
    /// Variations nested deeper than the reader's limit. Located at the `(` too many.
    TooDeep {
        /// [`crate::ReaderOptions::max_depth`].
        limit: usize,
    },
    /// A token that is not a move, a move number, an annotation or a result (its text, cut
    /// to 40 characters).
    BadToken(String),
    /// `$` not followed by a number from 0 to 255.
    BadNag(String),
    /// A character that has no place here, such as a stray `}` or `]`.
    UnexpectedChar(char),
    /// A token, comment or tag longer than the reader's limit. Located at its start.
    TooLong {
        /// `"token"`, `"comment"`, `"tag pair"` or `"NAG"`.
        what: &'static str,
        /// [`crate::ReaderOptions::max_item_len`].
        limit: usize,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnterminatedComment => f.write_str("unterminated comment: no closing '}'"),
            ErrorKind::UnterminatedTag => {
                f.write_str("unterminated tag pair: no closing '\"]' on the line")
            }
            ErrorKind::BadTag(why) => write!(f, "bad tag pair: {why}"),
            ErrorKind::UnclosedVariation => f.write_str("variation '(' is never closed"),
            ErrorKind::UnmatchedParen => f.write_str("')' without a matching '('"),
            ErrorKind::TooDeep { limit } => {
                write!(f, "variations nested more than {limit} deep")
            }
            ErrorKind::BadToken(t) => write!(f, "unexpected token {t:?}"),
            ErrorKind::BadNag(t) => write!(f, "bad NAG {t:?}: expected '$' and a number 0-255"),
            ErrorKind::UnexpectedChar(c) => write!(f, "unexpected character {c:?}"),
            ErrorKind::TooLong { what, limit } => write!(f, "{what} longer than {limit} bytes"),
        }
    }
}

/// A syntax error: what, where, and in which game (1-based, counting every game the reader
/// has started, broken ones included).
///
/// ```
/// use chess_pgn::{ErrorKind, ReadError, Reader, Skipper};
/// let mut reader = Reader::new(&b"1. e4 { never closed"[..]);
/// match reader.read_game(&mut Skipper) {
///     Err(ReadError::Syntax(e)) => {
///         assert_eq!(e.kind, ErrorKind::UnterminatedComment);
///         assert_eq!((e.at.line, e.at.column), (1, 7));
///         assert_eq!(e.to_string(), "game 1, line 1, column 7: unterminated comment: no closing '}'");
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game}, {at}: {kind}")]
pub struct SyntaxError {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Where: for an unclosed `{`, `(` or `[`, where it opens.
    pub at: Location,
    /// The game's number in the input (1-based).
    pub game: u64,
}

/// Why [`crate::Reader::read_game`] failed.
///
/// After a [`ReadError::Syntax`] the reader has already skipped to the next game; after a
/// [`ReadError::Io`] it is finished and returns no more games.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The text is not PGN.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// The input could not be read.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
}

impl ReadError {
    /// The syntax error, if it is one.
    pub fn as_syntax(&self) -> Option<&SyntaxError> {
        match self {
            ReadError::Syntax(e) => Some(e),
            ReadError::Io(_) => None,
        }
    }
}

/// Any error met reading validated games: the text (syntax, I/O) or the chess (an illegal
/// move, a bad FEN).
#[derive(Debug, thiserror::Error)]
pub enum PgnError {
    /// The text could not be read (see [`ReadError`]).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The text reads, but the game is not valid (see [`GameError`]).
    #[error(transparent)]
    Game(#[from] GameError),
}

impl From<SyntaxError> for PgnError {
    fn from(e: SyntaxError) -> PgnError {
        PgnError::Read(ReadError::Syntax(e))
    }
}

impl From<io::Error> for PgnError {
    fn from(e: io::Error) -> PgnError {
        PgnError::Read(ReadError::Io(e))
    }
}
