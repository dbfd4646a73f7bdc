//! The PGN export format writer.

use std::fmt;
use std::io::{self, Write};

use chess_rules::{FenError, Position};

use crate::{GameResult, Line, PgnGame, ReaderOptions};

/// The Seven Tag Roster in export order, with the value written when a tag is missing
/// (`Result` defaults to the game's result, else `*`).
pub const SEVEN_TAG_ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Deepest variation nesting the writer follows (the reader allows 128 by default).
const MAX_WRITE_DEPTH: usize = 1024;

/// Settings of a [`Writer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// The longest movetext line, in characters (default 79, as the PGN standard asks). A
    /// single word longer than this (say, a URL in a comment) gets a line of its own. Tag
    /// pairs are never split.
    pub max_width: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { max_width: 79 }
    }
}

/// Writes games in PGN export format: the Seven Tag Roster first in its standard order
/// (`?` or `????.??.??` where a tag is missing), the other tags after it in their order,
/// a blank line, the movetext wrapped to 79 columns with move numbers (`12...` after a
/// comment or variation when black is to move), canonical SAN, NAGs as `$n`, comments in
/// braces, variations in parentheses, the result, and a blank line.
///
/// A game that starts from a set-up position without a `FEN` tag gets `SetUp` and `FEN`
/// tags after the roster.
///
/// ```
/// use chess_pgn::{PgnGame, Writer};
/// let game = PgnGame::parse("[White \"Anna\"]\n1.e4 e5 2.Nf3 {develops} 2...Nc6!? (2...d6) 1-0").unwrap();
/// let mut writer = Writer::new(Vec::new());
/// writer.write_game(&game).unwrap();
/// assert_eq!(
///     String::from_utf8(writer.into_inner()).unwrap(),
///     "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
///      [White \"Anna\"]\n[Black \"?\"]\n[Result \"1-0\"]\n\n\
///      1. e4 e5 2. Nf3 {develops} 2... Nc6 $5 (2... d6) 1-0\n\n"
/// );
/// ```
pub struct Writer<W> {
    out: W,
    opts: WriterOptions,
    text: String,
}

impl<W> fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl<W: Write> Writer<W> {
    /// A writer with the default [`WriterOptions`].
    pub fn new(out: W) -> Writer<W> {
        Writer::with_options(out, WriterOptions::default())
    }

    /// A writer with chosen options (widths below 8 are taken as 8).
    ///
    /// ```
    /// use chess_pgn::{PgnGame, Writer, WriterOptions};
    /// let game = PgnGame::parse("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *").unwrap();
    /// let mut w = Writer::with_options(Vec::new(), WriterOptions { max_width: 20 });
    /// w.write_game(&game).unwrap();
    /// let text = String::from_utf8(w.into_inner()).unwrap();
    /// assert!(text.ends_with("\n\n1. e4 e5 2. Nf3 Nc6\n3. Bb5 a6 *\n\n"));
    /// ```
    pub fn with_options(out: W, opts: WriterOptions) -> Writer<W> {
        let opts = WriterOptions {
            max_width: opts.max_width.max(8),
        };
        Writer {
            out,
            opts,
            text: String::new(),
        }
    }

    /// Writes one game. Fails with [`io::ErrorKind::InvalidInput`], writing nothing, when the
    /// game cannot be written as PGN that reads back as the same game: a move not legal where
    /// it stands, or a tag that [`check_tags`] refuses (a bad name, a line break in a value, a
    /// tag pair too long to read, a `FEN` or `SetUp` tag that does not describe the start
    /// position). (A comment holding `}` is written as a `;` comment, which ends its line.)
    pub fn write_game(&mut self, game: &PgnGame) -> io::Result<()> {
        self.text.clear();
        format_game(&mut self.text, game, self.opts)?;
        self.out.write_all(self.text.as_bytes())
    }

    /// The output.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The output, to write something between games.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// The output, once writing is done.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Why a game's tags cannot be written so that they read back as the same game. Each names
/// its tag ([`TagError::tag`]); values are quoted cut short.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagError {
    /// A name that is not letters, digits and `_`.
    #[error("tag name {} is not letters, digits and '_'", quote(name))]
    BadName {
        /// The name.
        name: String,
    },
    /// A value with a line break, which ends a tag pair.
    #[error("tag {name} has a line break in its value")]
    LineBreak {
        /// The tag's name.
        name: String,
    },
    /// A tag pair longer than a reader with default limits takes.
    #[error("tag {name} is {len} bytes long; a reader takes tag pairs of at most {max}")]
    TooLong {
        /// The tag's name.
        name: String,
        /// The value's length in bytes.
        len: usize,
        /// The longest tag pair [`ReaderOptions::default`] reads.
        max: usize,
    },
    /// A `FEN` tag that is not a legal position.
    #[error("FEN tag {} is not a legal position: {source}", quote(value))]
    BadFen {
        /// The tag's value.
        value: String,
        /// What chess-rules found wrong with it.
        source: FenError,
    },
    /// A `FEN` tag naming another position than the game's start: the moves would not read
    /// back from it.
    #[error("FEN tag {} is not the game's start position {start}", quote(value))]
    FenNotStart {
        /// The tag's value.
        value: String,
        /// The start position's FEN.
        start: String,
    },
    /// A `SetUp` tag other than `0` or `1`, or `0` (the standard start) for a game that does
    /// not start from the standard position.
    #[error(
        "SetUp tag {} does not fit a game that starts from {start}",
        quote(value)
    )]
    BadSetUp {
        /// The tag's value.
        value: String,
        /// The start position's FEN.
        start: String,
    },
}

impl TagError {
    /// The name of the tag at fault.
    pub fn tag(&self) -> &str {
        match self {
            TagError::BadName { name }
            | TagError::LineBreak { name }
            | TagError::TooLong { name, .. } => name,
            TagError::BadFen { .. } | TagError::FenNotStart { .. } => "FEN",
            TagError::BadSetUp { .. } => "SetUp",
        }
    }
}

/// `text` in quotes, cut to 60 characters with its length when longer.
fn quote(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// Checks one tag pair: a name of letters, digits and `_`, a value without line breaks, and
/// no longer than a reader takes.
pub fn check_tag(name: &str, value: &str) -> Result<(), TagError> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(TagError::BadName {
            name: name.to_owned(),
        });
    }
    if value.contains(['\n', '\r']) {
        return Err(TagError::LineBreak {
            name: name.to_owned(),
        });
    }
    // `[Name "value"]` with every `"` and `\` escaped.
    let escapes = value.bytes().filter(|b| matches!(b, b'"' | b'\\')).count();
    let max = ReaderOptions::default().max_item_len;
    if name.len() + value.len() + escapes + 5 > max {
        return Err(TagError::TooLong {
            name: name.to_owned(),
            len: value.len(),
            max,
        });
    }
    Ok(())
}

/// Checks every tag of `game` with [`check_tag`], and that the `FEN` and `SetUp` tags
/// describe its start position, so that what is written reads back as the same game.
pub fn check_tags(game: &PgnGame) -> Result<(), TagError> {
    for (name, value) in &game.tags {
        check_tag(name, value)?;
    }
    let start = game.start.fen();
    if let Some(value) = game.tag("FEN") {
        // The reader takes the first FEN tag, trimmed.
        match Position::from_fen(value.trim()) {
            Err(source) => {
                return Err(TagError::BadFen {
                    value: value.to_owned(),
                    source,
                });
            }
            Ok(pos) if pos.fen() != start => {
                return Err(TagError::FenNotStart {
                    value: value.to_owned(),
                    start,
                });
            }
            Ok(_) => {}
        }
    }
    if let Some(value) = game.tag("SetUp") {
        let standard = game.tag("FEN").is_none() && game.start == Position::startpos();
        if !matches!((value.trim(), standard), ("1", _) | ("0", true)) {
            return Err(TagError::BadSetUp {
                value: value.to_owned(),
                start,
            });
        }
    }
    Ok(())
}

fn write_tag(out: &mut String, name: &str, value: &str) -> io::Result<()> {
    check_tag(name, value).map_err(|e| invalid(e.to_string()))?;
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str("\"]\n");
    Ok(())
}

fn format_game(out: &mut String, game: &PgnGame, opts: WriterOptions) -> io::Result<()> {
    check_tags(game).map_err(|e| invalid(e.to_string()))?;
    let result = game
        .result
        .or_else(|| game.tag("Result").and_then(|r| r.parse().ok()))
        .unwrap_or(GameResult::Unknown);
    for (name, default) in SEVEN_TAG_ROSTER {
        let value = match game.tag(name) {
            Some(v) => v,
            None if name == "Result" => result.as_str(),
            None => default,
        };
        write_tag(out, name, value)?;
    }
    // A game from a set-up position (or marked `SetUp "1"`) without a FEN tag gets SetUp and
    // FEN tags after the roster; the SetUp tag it has is written there.
    let set_up = game.tag("SetUp");
    let add_fen = game.tag("FEN").is_none()
        && (set_up.is_some_and(|v| v.trim() == "1") || game.start != Position::startpos());
    if add_fen {
        write_tag(out, "SetUp", set_up.unwrap_or("1"))?;
        write_tag(out, "FEN", &game.start.fen())?;
    }
    // The first tag of each roster name is already written, and so is SetUp when a FEN tag
    // was added.
    let mut written = [false; SEVEN_TAG_ROSTER.len()];
    let mut set_up_written = !add_fen;
    for (name, value) in &game.tags {
        if let Some(i) = SEVEN_TAG_ROSTER.iter().position(|(n, _)| n == name)
            && !written[i]
        {
            written[i] = true;
            continue;
        }
        if name == "SetUp" && !set_up_written {
            set_up_written = true;
            continue;
        }
        write_tag(out, name, value)?;
    }
    out.push('\n');
    let mut wrap = Wrap {
        out,
        col: 0,
        width: opts.max_width,
        open: 0,
    };
    write_line(&mut wrap, &game.root, &game.start, 0)?;
    wrap.word(result.as_str());
    wrap.out.push_str("\n\n");
    Ok(())
}

/// Fills lines with words up to the width.
struct Wrap<'a> {
    out: &'a mut String,
    col: usize,
    width: usize,
    /// `(`s waiting to be written before the next word.
    open: usize,
}

impl Wrap<'_> {
    fn word(&mut self, w: &str) {
        let len = self.open + w.chars().count();
        if self.col > 0 {
            if self.col + 1 + len > self.width {
                self.out.push('\n');
                self.col = 0;
            } else {
                self.out.push(' ');
                self.col += 1;
            }
        }
        if self.col == 0 && self.open == 0 && w.starts_with('%') {
            // A `%` in the first column would make the line an escape line.
            self.out.push(' ');
            self.col += 1;
        }
        for _ in 0..self.open {
            self.out.push('(');
        }
        self.out.push_str(w);
        self.col += len;
        self.open = 0;
    }

    fn open_paren(&mut self) {
        self.open += 1;
    }

    fn close_paren(&mut self) {
        if self.open > 0 {
            self.word(")");
        } else if self.col < self.width {
            self.out.push(')');
            self.col += 1;
        } else {
            self.out.push_str("\n)");
            self.col = 1;
        }
    }

    fn comment(&mut self, text: &str) {
        if text.contains('}') {
            // Braces cannot hold it; a rest-of-line comment can (and runs past the width when
            // it is long, as it cannot be broken).
            let words: Vec<&str> = text.split_whitespace().collect();
            self.word(&format!("; {}", words.join(" ")));
            self.out.push('\n');
            self.col = 0;
            return;
        }
        let mut words = text.split_whitespace().peekable();
        let mut first = true;
        if words.peek().is_none() {
            self.word("{}");
        }
        while let Some(w) = words.next() {
            let last = words.peek().is_none();
            match (first, last) {
                (true, true) => self.word(&format!("{{{w}}}")),
                (true, false) => self.word(&format!("{{{w}")),
                (false, true) => self.word(&format!("{w}}}")),
                (false, false) => self.word(w),
            }
            first = false;
        }
    }
}

fn write_line(w: &mut Wrap<'_>, line: &Line, start: &Position, depth: usize) -> io::Result<()> {
    if depth > MAX_WRITE_DEPTH {
        return Err(invalid(format!(
            "variations nested more than {MAX_WRITE_DEPTH} deep"
        )));
    }
    for c in &line.comments {
        w.comment(c);
    }
    let mut pos = start.clone();
    let mut need_number = true;
    for node in &line.nodes {
        for c in &node.comments_before {
            w.comment(c);
            need_number = true;
        }
        if !pos.is_legal(node.mv) {
            return Err(invalid(format!(
                "move {} is not legal in {}",
                node.mv,
                pos.fen()
            )));
        }
        let san = pos.san(node.mv);
        if pos.turn().is_white() {
            w.word(&format!("{}. {san}", pos.fullmoves()));
        } else if need_number {
            w.word(&format!("{}... {san}", pos.fullmoves()));
        } else {
            w.word(&san);
        }
        for nag in &node.nags {
            w.word(&format!("${nag}"));
        }
        for c in &node.comments_after {
            w.comment(c);
        }
        for variation in &node.variations {
            w.open_paren();
            write_line(w, variation, &pos, depth + 1)?;
            w.close_paren();
        }
        need_number = !node.comments_after.is_empty() || !node.variations.is_empty();
        pos.play_unchecked(node.mv);
    }
    Ok(())
}

impl PgnGame {
    /// The game in PGN export format (see [`crate::Writer`]), or `None` when it cannot be
    /// written: a move that is not legal where it stands, or a bad tag.
    pub fn to_pgn(&self) -> Option<String> {
        let mut w = Writer::new(Vec::new());
        w.write_game(self).ok()?;
        String::from_utf8(w.into_inner()).ok()
    }
}
