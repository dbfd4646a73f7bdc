//! # chess-knowledge
//!
//! What a player knows beyond the rules, computed from a position: the opening's ECO code and
//! name (the lichess chess-openings data set, matched by position so that transpositions
//! count), its class (open, semi-open, closed; gambit), and a position report (material,
//! bishops, pawn structure, files, king safety, development, centre, space, phase, endgame
//! class) worded in English and Chinese. A pure library on top of `chess-rules`.
//!
//! ```
//! use chess_rules::{Game, Position};
//! let mut game = Game::new(Position::startpos());
//! for san in ["e4", "c5"] { game.play_san(san).unwrap(); }
//! let c = chess_knowledge::classify(game.start(), game.moves());
//! assert_eq!(c.summary(), "B20 Sicilian Defense  semi-open");
//! let report = chess_knowledge::describe(game.position());
//! assert_eq!(report.material.balance, 0);
//! ```

#![forbid(unsafe_code)]

mod illegal;
mod material;
mod openings;
mod report;
mod ser;
mod winnable;

pub use illegal::{IllegalAttempt, illegal_attempt};
pub use openings::{
    Classification, DataError, Gambit, GambitEvidence, Opening, OpeningClass, classify, data_stats,
    opening_of,
};
pub use report::{
    BishopInfo, Bishops, CentreControl, Development, EndgameClass, Files, Item, KingSafety,
    Material, PIECE_VALUES, PawnChain, PawnStructure, Pawns, Phase, Report, SideBishops,
    SideMaterial, Sides, WinnabilityReport, describe,
};
pub use winnable::{
    Analysis, Mode, Verdict, Winnability, WinnableBudget, find_helpmate, proves_mate, winnability,
    winnable,
};
