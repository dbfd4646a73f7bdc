//! # chess-pgn
//!
//! Portable Game Notation for the chess platform, in three layers:
//!
//! - [`Reader`]: a streaming tokeniser that walks an input of any size game by game and
//!   reports each part of a game (tags, moves as written, NAGs, comments, variations, the
//!   result) to a [`Visitor`]. It never loads the input whole, bounds its memory, reports
//!   syntax errors with line and column, and then carries on with the next game.
//! - [`GameBuilder`]: a visitor that checks every move with chess-rules and builds a
//!   [`PgnGame`] (tags, start position, move tree); [`read_games`] wraps both.
//! - [`Writer`]: PGN export format, which reads back to the same tree.
//!
//! A pure library: the only I/O is through the `std::io` traits given to it.
//!
//! Reading a file of games:
//!
//! ```
//! use std::fs::File;
//! use std::io::BufReader;
//!
//! use chess_pgn::{read_games, PgnError};
//!
//! # let path = std::env::temp_dir().join(format!("chess-pgn-doc-{}.pgn", std::process::id()));
//! # std::fs::write(&path, "[White \"Anna\"]\n[Black \"Ben\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 \
//! #     4. Qxf7# 1-0\n\n[White \"Ben\"]\n[Black \"Anna\"]\n\n1. d4 d5 2. Kd3 *\n").unwrap();
//! let file = BufReader::new(File::open(&path)?);
//! let mut summaries = Vec::new();
//! for game in read_games(file) {
//!     match game {
//!         Ok(game) => summaries.push(format!(
//!             "{} v {}: {} moves, {}",
//!             game.tag("White").unwrap_or("?"),
//!             game.tag("Black").unwrap_or("?"),
//!             game.root.nodes.len(),
//!             game.result.map_or("no result", |r| r.as_str()),
//!         )),
//!         // A broken game is reported and skipped; the next one is read.
//!         Err(PgnError::Game(e)) => summaries.push(format!("invalid: {e}")),
//!         Err(PgnError::Read(e)) => summaries.push(format!("unreadable: {e}")),
//!     }
//! }
//! assert_eq!(summaries, [
//!     "Anna v Ben: 7 moves, 1-0",
//!     "invalid: game 2, move 2. Kd3 (line 9, column 13): illegal move \"Kd3\": no white king can move to d3",
//! ]);
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Only the text, with a visitor of one's own (here counting games by result, as fast as the
//! input can be tokenised):
//!
//! ```
//! use chess_pgn::{Flow, GameResult, Reader, Visitor};
//!
//! #[derive(Default)]
//! struct Results {
//!     white_wins: u32,
//! }
//!
//! impl Visitor for Results {
//!     type Output = ();
//!     fn begin_movetext(&mut self) -> Flow {
//!         Flow::Skip // no interest in the moves
//!     }
//!     fn outcome(&mut self, result: Option<GameResult>) {
//!         if result == Some(GameResult::WhiteWins) {
//!             self.white_wins += 1;
//!         }
//!     }
//!     fn end_game(&mut self) {}
//! }
//!
//! let pgn = "1. e4 e5 1-0\n\n1. d4 {a comment} d5 0-1\n\n1. c4 (1. Nf3) 1-0\n";
//! let mut results = Results::default();
//! let mut reader = Reader::new(pgn.as_bytes());
//! while reader.read_game(&mut results)?.is_some() {}
//! assert_eq!(results.white_wins, 2);
//! # Ok::<(), chess_pgn::ReadError>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
mod builder;
mod error;
mod game;
mod location;
mod nag;
mod reader;
mod result;
mod visitor;
mod writer;

pub use builder::{BuilderOptions, GameBuilder, PgnGames, read_games};
pub use error::{ErrorKind, GameError, MoveNumber, PgnError, ReadError, SyntaxError};
pub use game::{Line, Node, PgnGame};
pub use location::Location;
pub use nag::{
    NAG_BLUNDER, NAG_BRILLIANT, NAG_DUBIOUS, NAG_GOOD, NAG_MISTAKE, NAG_SPECULATIVE,
    nag_from_symbol, nag_symbol,
};
pub use reader::{Games, Reader, ReaderOptions};
pub use result::{GameResult, ParseResultError};
pub use visitor::{Flow, Skipper, Visitor};
pub use writer::{SEVEN_TAG_ROSTER, TagError, Writer, WriterOptions, check_tag, check_tags};
