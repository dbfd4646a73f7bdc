//! Errors of the reader (syntax), of the games it reads ([`GameError`], with the
//! [`MoveNumber`] it names), and the combined error of [`crate::read_games`].

use std::{fmt, io};

use chess_rules::{Color, FenError, SanError};

use crate::location::Location;

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

/// A move's number and side, as PGN writes it: `12.` for white, `12...` for black.
///
/// ```
/// use chess_pgn::MoveNumber;
/// use chess_rules::Color;
/// assert_eq!(MoveNumber { number: 12, color: Color::Black }.to_string(), "12...");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveNumber {
    /// The full-move number, as FEN counts it (from 1, up after each black move).
    pub number: u32,
    /// The side making the move.
    pub color: Color,
}

impl fmt::Display for MoveNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dots = if self.color.is_white() { "." } else { "..." };
        write!(f, "{}{dots}", self.number)
    }
}

/// Why a game that reads fine as text is not a valid game. The message names the game
/// (1-based, in the input) and, for a move, its number, side, text and place, and the
/// reason chess-rules gives (illegal, ambiguous, unparseable).
///
/// ```
/// use chess_pgn::{GameError, PgnError, PgnGame};
/// use chess_rules::SanError;
/// let err = PgnGame::parse("1. Nf3 Nf6 2. Nc3 Nc6 3. Nb5 Nb4 4. Nd4 *").unwrap_err();
/// let PgnError::Game(GameError::Move { number, source, .. }) = err else { panic!() };
/// assert_eq!(number.to_string(), "4.");
/// assert!(matches!(source, SanError::Ambiguous { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GameError {
    /// The `FEN` tag does not describe a legal position.
    #[error("game {game}: bad FEN tag {fen:?}: {source}")]
    Fen {
        /// The game's number in the input (1-based).
        game: u64,
        /// The tag's value.
        fen: String,
        /// What chess-rules found wrong with it.
        source: FenError,
    },
    /// A move that chess-rules rejects in the position reached.
    #[error("game {game}, move {number} {san} ({at}): {source}")]
    Move {
        /// The game's number in the input (1-based).
        game: u64,
        /// The move's number and side.
        number: MoveNumber,
        /// The move as written.
        san: String,
        /// Where the move is written.
        at: Location,
        /// Why chess-rules rejects it: unparseable, illegal or ambiguous.
        source: SanError,
    },
    /// A null move (`--`, `Z0`) in the mainline, which only analysis may contain.
    #[error("game {game}, move {number} {san} ({at}): a null move is allowed only in variations")]
    NullMoveInMainline {
        /// The game's number in the input (1-based).
        game: u64,
        /// The move's number and side.
        number: MoveNumber,
        /// The move as written (`--`, `Z0`...).
        san: String,
        /// Where the move is written.
        at: Location,
    },
    /// A `(` where the line has no move yet for the variation to replace.
    #[error("game {game}, {at}: a variation must follow the move it replaces")]
    VariationWithoutMove {
        /// The game's number in the input (1-based).
        game: u64,
        /// Where the `(` is.
        at: Location,
    },
    /// The game is larger than the builder's limits allow.
    #[error("game {game}: more than {limit} {what}")]
    TooLarge {
        /// The game's number in the input (1-based).
        game: u64,
        /// What there is too much of.
        what: &'static str,
        /// The limit from [`BuilderOptions`].
        limit: usize,
    },
}

impl GameError {
    /// The number of the game in the input (1-based).
    pub fn game(&self) -> u64 {
        match *self {
            GameError::Fen { game, .. }
            | GameError::Move { game, .. }
            | GameError::NullMoveInMainline { game, .. }
            | GameError::VariationWithoutMove { game, .. }
            | GameError::TooLarge { game, .. } => game,
        }
    }

    /// Where in the input the error is, when it is at a move or variation.
    pub fn location(&self) -> Option<Location> {
        match *self {
            GameError::Move { at, .. }
            | GameError::NullMoveInMainline { at, .. }
            | GameError::VariationWithoutMove { at, .. } => Some(at),
            GameError::Fen { .. } | GameError::TooLarge { .. } => None,
        }
    }
}
