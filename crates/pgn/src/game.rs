//! A validated game: tags, start position and the move tree.

use chess_rules::{Move, Position};

use crate::result::GameResult;

/// A game read and checked move by move: its tags, its start position and its moves as a
/// tree (the mainline with variations hanging off the moves they replace).
///
/// Build one with [`PgnGame::parse`], [`crate::read_games`] or [`crate::GameBuilder`], or by
/// hand; write it with [`crate::Writer`] or [`PgnGame::to_pgn`].
///
/// ```
/// use chess_pgn::PgnGame;
/// let game = PgnGame::parse("[White \"Anna\"]\n\n1. e4 e5 (1... c5 $1 {Sicilian}) 2. Nf3 *").unwrap();
/// assert_eq!(game.tag("White"), Some("Anna"));
/// assert_eq!(game.root.nodes.len(), 3);
/// let e5 = &game.root.nodes[1];
/// assert_eq!(e5.san, "e5");
/// assert_eq!(e5.variations[0].nodes[0].nags, [1]);
/// assert_eq!(e5.variations[0].nodes[0].comments_after, ["Sicilian"]);
/// assert_eq!(game.end_position().fen(), "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// The tag pairs in the order read.
    pub tags: Vec<(String, String)>,
    /// The position before the first move: from the `FEN` tag, or the standard start.
    pub start: Position,
    /// The mainline; its nodes carry the variations.
    pub root: Line,
    /// The game termination marker at the end of the movetext; `None` when there was none.
    pub result: Option<GameResult>,
}

/// A sequence of moves from one position: the mainline or a variation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The moves, in order.
    pub nodes: Vec<Node>,
    /// Comments of a line without moves (such as a game comment before `*` in a game with no
    /// moves). In a line with moves, every comment belongs to a node.
    pub comments: Vec<String>,
}

/// A move in a [`Line`], with its annotations and the variations that replace it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The move, legal in the position the line has reached.
    pub mv: Move,
    /// The move as written in the input, without suffix annotations (`Ng1f3`, `exd6 e.p.`);
    /// the writer writes canonical SAN instead.
    pub san: String,
    /// Numeric Annotation Glyphs, in the order read (suffixes `!`, `?`... included).
    pub nags: Vec<u8>,
    /// Comments written before the move (after a variation of the previous move, or at the
    /// start of a line).
    pub comments_before: Vec<String>,
    /// Comments written after the move.
    pub comments_after: Vec<String>,
    /// Alternatives to this move, each played from the position before it.
    pub variations: Vec<Line>,
}

impl Node {
    /// A node without annotations.
    ///
    /// ```
    /// use chess_pgn::Node;
    /// use chess_rules::Position;
    /// let pos = Position::startpos();
    /// let node = Node::new(pos.parse_san("e4").unwrap(), "e4");
    /// assert!(node.nags.is_empty() && node.variations.is_empty());
    /// ```
    pub fn new(mv: Move, san: impl Into<String>) -> Node {
        Node {
            mv,
            san: san.into(),
            nags: Vec::new(),
            comments_before: Vec::new(),
            comments_after: Vec::new(),
            variations: Vec::new(),
        }
    }
}

impl Line {
    /// The moves of this line, without its variations.
    pub fn moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.nodes.iter().map(|n| n.mv)
    }

    /// Nodes in this line and all its variations, however deep.
    ///
    /// ```
    /// use chess_pgn::PgnGame;
    /// let game = PgnGame::parse("1. e4 (1. d4 (1. c4) d5) e5 *").unwrap();
    /// assert_eq!(game.root.node_count(), 5);
    /// ```
    pub fn node_count(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| 1 + n.variations.iter().map(Line::node_count).sum::<usize>())
            .sum()
    }
}

impl PgnGame {
    /// An empty game from a start position, with no tags.
    pub fn new(start: Position) -> PgnGame {
        PgnGame {
            tags: Vec::new(),
            start,
            root: Line::default(),
            result: None,
        }
    }

    /// The value of the first tag named `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets a tag, replacing the first of that name or adding it at the end.
    ///
    /// ```
    /// use chess_pgn::PgnGame;
    /// use chess_rules::Position;
    /// let mut game = PgnGame::new(Position::startpos());
    /// game.set_tag("Event", "Club championship");
    /// game.set_tag("Event", "Club final");
    /// assert_eq!(game.tags, [("Event".to_owned(), "Club final".to_owned())]);
    /// ```
    pub fn set_tag(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some(tag) => tag.1 = value,
            None => self.tags.push((name.to_owned(), value)),
        }
    }

    /// The mainline moves.
    pub fn mainline(&self) -> impl Iterator<Item = Move> + '_ {
        self.root.moves()
    }

    /// The position at the end of the mainline.
    pub fn end_position(&self) -> Position {
        let mut pos = self.start.clone();
        for m in self.mainline() {
            pos.play_unchecked(m);
        }
        pos
    }
}
