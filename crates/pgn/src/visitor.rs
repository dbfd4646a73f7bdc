//! The events a [`crate::Reader`] reports while it walks a game.

use crate::{GameResult, Location};

/// Whether the reader should report what follows or pass over it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Report the events that follow.
    #[default]
    Continue,
    /// Pass over the movetext (from [`Visitor::begin_movetext`]) or this variation (from
    /// [`Visitor::begin_variation`]) without reporting it. The reader still checks its syntax.
    Skip,
}

/// Receives the parts of each game as the [`crate::Reader`] reads them.
///
/// For each game the reader calls `begin_game`, `tag` for each tag pair, `begin_movetext`,
/// then the movetext events in the order they are written, `outcome`, and `end_game`, whose
/// value [`crate::Reader::read_game`] returns. When the reader meets a syntax error it stops
/// the game without calling `end_game`, so a visitor resets its state in `begin_game`.
///
/// Move numbers (`12.`, `12...`) are not reported. Suffix annotations are split off the move
/// (`Nf3!?` is `san("Nf3")` then `nag(5)`); check marks stay in the move text.
///
/// ```
/// use chess_pgn::{GameResult, Location, Reader, Visitor};
///
/// /// Counts the moves of the mainline.
/// struct MainlinePlies {
///     plies: usize,
///     depth: usize,
/// }
///
/// impl Visitor for MainlinePlies {
///     type Output = usize;
///     fn begin_game(&mut self, _number: u64, _at: Location) {
///         self.plies = 0;
///         self.depth = 0;
///     }
///     fn san(&mut self, _san: &str, _at: Location) {
///         if self.depth == 0 {
///             self.plies += 1;
///         }
///     }
///     fn begin_variation(&mut self, _at: Location) -> chess_pgn::Flow {
///         self.depth += 1;
///         chess_pgn::Flow::Continue
///     }
///     fn end_variation(&mut self) {
///         self.depth -= 1;
///     }
///     fn end_game(&mut self) -> usize {
///         self.plies
///     }
/// }
///
/// let pgn = b"1. e4 e5 (1... c5 2. Nf3) 2. Nf3 Nc6 *\n\n1. d4 1-0\n";
/// let mut reader = Reader::new(&pgn[..]);
/// let mut counter = MainlinePlies { plies: 0, depth: 0 };
/// let counts: Vec<usize> = reader.games(&mut counter).map(Result::unwrap).collect();
/// assert_eq!(counts, [4, 1]);
/// ```
pub trait Visitor {
    /// What a finished game gives back.
    type Output;

    /// A new game starts: its number in the input (1-based) and where its first character is.
    fn begin_game(&mut self, number: u64, at: Location) {
        let _ = (number, at);
    }

    /// A tag pair, with the value's escapes (`\"`, `\\`) undone.
    fn tag(&mut self, name: &str, value: &str) {
        let _ = (name, value);
    }

    /// The tag section is over; the movetext follows (it may be empty).
    fn begin_movetext(&mut self) -> Flow {
        Flow::Continue
    }

    /// A move as written, without suffix annotations, and where it starts.
    fn san(&mut self, san: &str, at: Location) {
        let _ = (san, at);
    }

    /// A Numeric Annotation Glyph: `$n`, or a suffix or evaluation symbol read as one.
    fn nag(&mut self, nag: u8) {
        let _ = nag;
    }

    /// The text of a `{...}` comment (between the braces, as written) or of a `;` comment
    /// (to the end of the line).
    fn comment(&mut self, text: &str) {
        let _ = text;
    }

    /// A `(` opens a variation: an alternative to the move just reported.
    fn begin_variation(&mut self, at: Location) -> Flow {
        let _ = at;
        Flow::Continue
    }

    /// The `)` that closes the variation.
    fn end_variation(&mut self) {}

    /// The game termination marker, or `None` when the game ends without one (at the end of
    /// the input or where the next game's tags begin).
    fn outcome(&mut self, result: Option<GameResult>) {
        let _ = result;
    }

    /// The game is complete.
    fn end_game(&mut self) -> Self::Output;
}

/// A visitor that passes over every game's movetext and returns nothing: for counting games
/// or finding the next one.
///
/// ```
/// use chess_pgn::{Reader, Skipper};
/// let pgn = b"[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4 *\n";
/// assert_eq!(Reader::new(&pgn[..]).games(&mut Skipper).count(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Skipper;

impl Visitor for Skipper {
    type Output = ();
    fn begin_movetext(&mut self) -> Flow {
        Flow::Skip
    }
    fn end_game(&mut self) {}
}
