//! # chess-rules
//!
//! The rules of chess as the FIDE Laws state them: bitboards, legal move generation, FEN,
//! SAN, coordinate and UCI notation, Zobrist keys, game outcomes and perft. A pure library:
//! no I/O, no async runtime.
//!
//! ```
//! use chess_rules::{Game, Outcome, Position};
//!
//! let mut game = Game::new(Position::startpos());
//! for san in ["f3", "e5", "g4", "Qh4#"] {
//!     game.play_san(san).unwrap();
//! }
//! assert!(matches!(game.outcome(), Some(Outcome::Decisive { .. })));
//! ```

// Unsafe code only where allowed by name: the unchecked slider-table index in attacks.rs.
#![deny(unsafe_code)]

mod attacks;
mod bitboard;
mod castling;
mod color;
mod fen;
mod game;
mod movegen;
mod moves;
mod notation;
mod one_move;
mod outcome;
mod perft;
mod position;
mod role;
mod san;
mod setup;
mod square;
mod zobrist;

pub use attacks::{
    aligned, attacks, between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks,
    pawn_attacks_set, queen_attacks, rook_attacks,
};
pub use bitboard::Bitboard;
pub use castling::CastlingRights;
pub use color::{ByColor, Color};
pub use fen::{EnPassantMode, FenError, FenOptions, STARTPOS_FEN};
pub use game::{Game, GameError};
pub use moves::{CastlingSide, Move, MoveKind, MoveList};
pub use notation::{CoordinateError, UciError};
pub use outcome::{DrawReason, Outcome, WinReason};
pub use perft::{perft, perft_divide, perft_make_all};
pub use position::{IllegalMoveError, MAX_FULLMOVES, MAX_HALFMOVES, Position, PositionError};
pub use role::{Piece, Role};
pub use san::{PieceLetters, SanError, SanOptions, SanStrictness};
pub use setup::Setup;
pub use square::{File, ParseSquareError, Rank, Square};
