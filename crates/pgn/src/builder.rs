//! The validating layer: a visitor that checks every move with chess-rules and builds a
//! [`PgnGame`].

use std::io::BufRead;

use chess_rules::{Position, SanStrictness};

use crate::{
    Flow, GameError, GameResult, Line, Location, MoveNumber, Node, PgnError, PgnGame, Reader,
    ReaderOptions, Visitor,
};

/// Settings of a [`GameBuilder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuilderOptions {
    /// How SAN is read (default lenient: `Ng1f3`, `0-0`, a missing `x` or check mark...).
    pub strictness: SanStrictness,
    /// Accept null moves in the mainline too, not only in variations (default false).
    pub null_moves_in_mainline: bool,
    /// Most moves in one game, variations included (default 200 000).
    pub max_nodes: usize,
    /// Most tag pairs in one game (default 1 000).
    pub max_tags: usize,
    /// Most bytes of comments, tags and NAGs in one game (default 16 MiB).
    pub max_annotation_bytes: usize,
}

impl Default for BuilderOptions {
    fn default() -> Self {
        BuilderOptions {
            strictness: SanStrictness::Lenient,
            null_moves_in_mainline: false,
            max_nodes: 200_000,
            max_tags: 1_000,
            max_annotation_bytes: 16 << 20,
        }
    }
}

/// A line under construction.
#[derive(Debug)]
struct Frame {
    line: Line,
    /// The position before the line's last move, where a variation of that move starts.
    before: Position,
    /// The position the line has reached.
    pos: Position,
    /// A variation has closed since the last move: a comment now goes before the next move.
    after_variation: bool,
    /// Comments and NAGs waiting for the next move.
    comments: Vec<String>,
    nags: Vec<u8>,
}

impl Frame {
    fn new(pos: Position) -> Frame {
        Frame {
            line: Line::default(),
            before: pos.clone(),
            pos,
            after_variation: false,
            comments: Vec::new(),
            nags: Vec::new(),
        }
    }

    /// The finished line: comments left waiting go to the last move, or to the line when it
    /// has none. (NAGs in a line without moves have nothing to annotate and are dropped.)
    fn finish(mut self) -> Line {
        match self.line.nodes.last_mut() {
            Some(last) => last.comments_after.append(&mut self.comments),
            None => self.line.comments.append(&mut self.comments),
        }
        self.line
    }
}

/// Collapses runs of whitespace (line breaks included) to one space and trims the ends, as
/// the writer re-wraps comments.
fn normalize_comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A [`Visitor`] that builds a [`PgnGame`], checking every move with chess-rules: the
/// mainline from the `FEN` tag's position (or the standard start), each variation from the
/// position before the move it replaces. Null moves are accepted in variations.
///
/// Comments are stored with their whitespace collapsed to single spaces. A comment goes to
/// the move before it (`comments_after`) unless a variation or the start of a line comes
/// between, in which case it goes to the move after it (`comments_before`).
///
/// ```
/// use chess_pgn::{GameBuilder, Reader};
/// let pgn = b"[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 (1. e3 -- 2. e4) Kd7 *\n";
/// let mut reader = Reader::new(&pgn[..]);
/// let game = reader.read_game(&mut GameBuilder::new()).unwrap().unwrap().unwrap();
/// assert_eq!(game.root.nodes[0].variations[0].nodes[1].san, "--");
/// assert_eq!(game.end_position().fen(), "8/3k4/8/8/4P3/8/8/4K3 w - - 1 2");
/// ```
#[derive(Debug)]
pub struct GameBuilder {
    opts: BuilderOptions,
    game: u64,
    tags: Vec<(String, String)>,
    start: Option<Position>,
    stack: Vec<Frame>,
    result: Option<GameResult>,
    error: Option<GameError>,
    nodes: usize,
    annotation_bytes: usize,
}

impl Default for GameBuilder {
    fn default() -> Self {
        GameBuilder::new()
    }
}

impl GameBuilder {
    /// A builder with the default [`BuilderOptions`].
    pub fn new() -> GameBuilder {
        GameBuilder::with_options(BuilderOptions::default())
    }

    /// A builder with chosen settings.
    ///
    /// ```
    /// use chess_pgn::{BuilderOptions, GameBuilder, GameError, Reader};
    /// use chess_rules::SanStrictness;
    /// let strict = BuilderOptions { strictness: SanStrictness::Strict, ..BuilderOptions::default() };
    /// let mut builder = GameBuilder::with_options(strict);
    /// let game = Reader::new(&b"1. e4 e5 2. Ng1f3 *"[..]).read_game(&mut builder).unwrap().unwrap();
    /// assert!(matches!(game, Err(GameError::Move { .. })));
    /// ```
    pub fn with_options(opts: BuilderOptions) -> GameBuilder {
        GameBuilder {
            opts,
            game: 0,
            tags: Vec::new(),
            start: None,
            stack: Vec::new(),
            result: None,
            error: None,
            nodes: 0,
            annotation_bytes: 0,
        }
    }

    fn fail(&mut self, e: GameError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Counts annotation bytes against the limit; false (and the game fails) past it.
    fn budget(&mut self, bytes: usize) -> bool {
        self.annotation_bytes += bytes;
        if self.annotation_bytes > self.opts.max_annotation_bytes {
            let limit = self.opts.max_annotation_bytes;
            self.fail(GameError::TooLarge {
                game: self.game,
                what: "bytes of annotations",
                limit,
            });
            return false;
        }
        true
    }
}

impl Visitor for GameBuilder {
    type Output = Result<PgnGame, GameError>;

    fn begin_game(&mut self, number: u64, _at: Location) {
        self.game = number;
        self.tags.clear();
        self.start = None;
        self.stack.clear();
        self.result = None;
        self.error = None;
        self.nodes = 0;
        self.annotation_bytes = 0;
    }

    fn tag(&mut self, name: &str, value: &str) {
        if self.error.is_some() || !self.budget(name.len() + value.len()) {
            return;
        }
        if self.tags.len() >= self.opts.max_tags {
            let limit = self.opts.max_tags;
            return self.fail(GameError::TooLarge {
                game: self.game,
                what: "tag pairs",
                limit,
            });
        }
        self.tags.push((name.to_owned(), value.to_owned()));
    }

    fn begin_movetext(&mut self) -> Flow {
        if self.error.is_some() {
            return Flow::Skip;
        }
        let start = match self.tags.iter().find(|(n, _)| n == "FEN") {
            None => Position::startpos(),
            Some((_, fen)) => match Position::from_fen(fen.trim()) {
                Ok(pos) => pos,
                Err(source) => {
                    let fen = fen.clone();
                    self.fail(GameError::Fen {
                        game: self.game,
                        fen,
                        source,
                    });
                    return Flow::Skip;
                }
            },
        };
        self.stack.push(Frame::new(start.clone()));
        self.start = Some(start);
        Flow::Continue
    }

    fn san(&mut self, san: &str, at: Location) {
        if self.error.is_some() {
            return;
        }
        if self.nodes >= self.opts.max_nodes {
            let limit = self.opts.max_nodes;
            return self.fail(GameError::TooLarge {
                game: self.game,
                what: "moves",
                limit,
            });
        }
        let in_mainline = self.stack.len() == 1;
        let (game, strictness) = (self.game, self.opts.strictness);
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        let number = MoveNumber {
            number: top.pos.fullmoves(),
            color: top.pos.turn(),
        };
        let mv = match top.pos.parse_san_with(san, strictness) {
            Ok(mv) => mv,
            Err(source) => {
                let san = san.to_owned();
                return self.fail(GameError::Move {
                    game,
                    number,
                    san,
                    at,
                    source,
                });
            }
        };
        if mv.is_null() && in_mainline && !self.opts.null_moves_in_mainline {
            let san = san.to_owned();
            return self.fail(GameError::NullMoveInMainline {
                game,
                number,
                san,
                at,
            });
        }
        let mut node = Node::new(mv, san);
        node.nags = std::mem::take(&mut top.nags);
        node.comments_before = std::mem::take(&mut top.comments);
        top.before.clone_from(&top.pos);
        top.pos.play_unchecked(mv);
        top.line.nodes.push(node);
        top.after_variation = false;
        self.nodes += 1;
    }

    fn nag(&mut self, nag: u8) {
        if self.error.is_some() || !self.budget(1) {
            return;
        }
        if let Some(top) = self.stack.last_mut() {
            match top.line.nodes.last_mut() {
                Some(last) => last.nags.push(nag),
                None => top.nags.push(nag),
            }
        }
    }

    fn comment(&mut self, text: &str) {
        if self.error.is_some() || !self.budget(text.len()) {
            return;
        }
        let text = normalize_comment(text);
        if let Some(top) = self.stack.last_mut() {
            match top.line.nodes.last_mut() {
                Some(last) if !top.after_variation => last.comments_after.push(text),
                _ => top.comments.push(text),
            }
        }
    }

    fn begin_variation(&mut self, at: Location) -> Flow {
        if self.error.is_some() {
            return Flow::Skip;
        }
        let Some(top) = self.stack.last() else {
            return Flow::Skip;
        };
        if top.line.nodes.is_empty() {
            self.fail(GameError::VariationWithoutMove {
                game: self.game,
                at,
            });
            return Flow::Skip;
        }
        let frame = Frame::new(top.before.clone());
        self.stack.push(frame);
        Flow::Continue
    }

    fn end_variation(&mut self) {
        if self.error.is_some() || self.stack.len() < 2 {
            return;
        }
        if let Some(frame) = self.stack.pop()
            && let Some(parent) = self.stack.last_mut()
            && let Some(last) = parent.line.nodes.last_mut()
        {
            last.variations.push(frame.finish());
            parent.after_variation = true;
        }
    }

    fn outcome(&mut self, result: Option<GameResult>) {
        self.result = result;
    }

    fn end_game(&mut self) -> Result<PgnGame, GameError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let start = self.start.take().unwrap_or_else(Position::startpos);
        // Variations left open cannot happen (the reader reports them), but fold them in.
        while self.stack.len() > 1 {
            self.end_variation();
        }
        let root = self.stack.pop().map(Frame::finish).unwrap_or_default();
        Ok(PgnGame {
            tags: std::mem::take(&mut self.tags),
            start,
            root,
            result: self.result.take(),
        })
    }
}

/// Reads every game of `input`, checking each with a [`GameBuilder`].
///
/// A syntax error or an invalid game is one `Err` item; reading goes on with the next game.
/// The iterator ends at the end of the input or after an I/O error.
///
/// ```
/// use chess_pgn::{read_games, PgnError};
/// let pgn = "1. e4 e5 *\n\n[Event \"x\"]\n\n1. e4 e4 *\n\n1. d4 d5 1/2-1/2\n";
/// let games: Vec<_> = read_games(pgn.as_bytes()).collect();
/// assert_eq!(games.len(), 3);
/// assert!(games[0].is_ok() && games[2].is_ok());
/// assert!(matches!(&games[1], Err(PgnError::Game(e)) if e.game() == 2));
/// ```
pub fn read_games<R: BufRead>(input: R) -> PgnGames<R> {
    PgnGames::with_options(input, ReaderOptions::default(), BuilderOptions::default())
}

/// The validated games of an input, from [`read_games`].
#[derive(Debug)]
pub struct PgnGames<R> {
    reader: Reader<R>,
    builder: GameBuilder,
}

impl<R: BufRead> PgnGames<R> {
    /// Reads `input` with chosen reader limits and builder settings.
    pub fn with_options(input: R, reader: ReaderOptions, builder: BuilderOptions) -> PgnGames<R> {
        PgnGames {
            reader: Reader::with_options(input, reader),
            builder: GameBuilder::with_options(builder),
        }
    }

    /// The underlying reader.
    pub fn reader(&self) -> &Reader<R> {
        &self.reader
    }
}

impl<R: BufRead> Iterator for PgnGames<R> {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.reader.read_game(&mut self.builder) {
            Ok(None) => None,
            Ok(Some(game)) => Some(game.map_err(PgnError::Game)),
            Err(e) => Some(Err(PgnError::Read(e))),
        }
    }
}

impl PgnGame {
    /// Reads and checks the first game of `text` (a text without any game is an empty game).
    ///
    /// ```
    /// use chess_pgn::{GameError, PgnError, PgnGame};
    /// let err = PgnGame::parse("1. e4 e5 2. Ke3 *").unwrap_err();
    /// assert!(matches!(err, PgnError::Game(GameError::Move { .. })));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "game 1, move 2. Ke3 (line 1, column 13): illegal move \"Ke3\": no white king can move to e3"
    /// );
    /// ```
    pub fn parse(text: &str) -> Result<PgnGame, PgnError> {
        match read_games(text.as_bytes()).next() {
            Some(game) => game,
            None => Ok(PgnGame::new(Position::startpos())),
        }
    }
}
