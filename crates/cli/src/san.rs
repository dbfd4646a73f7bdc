//! `chess san`: convert moves in any accepted notation to SAN and UCI, playing them in turn.

use std::io::{self, Write};

use chess_rules::{PieceLetters, Position, SanError, SanOptions, SanStrictness, UciError};
use clap::{Args, ValueEnum};

use crate::error::{CliError, CliResult};
use crate::input;

/// Piece letters for the SAN column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Letters {
    /// `K Q R B N`.
    English,
    /// `♔ ♕ ♖ ♗ ♘`.
    Figurine,
    /// `王 后 車 象 馬`.
    Chinese,
}

impl From<Letters> for PieceLetters {
    fn from(l: Letters) -> PieceLetters {
        match l {
            Letters::English => PieceLetters::English,
            Letters::Figurine => PieceLetters::Figurine,
            Letters::Chinese => PieceLetters::Chinese,
        }
    }
}

#[derive(Debug, Args)]
pub struct SanArgs {
    /// The start position (default: the standard one). Quote it.
    #[arg(long, value_name = "FEN")]
    fen: Option<String>,
    /// Accept only strict SAN (`Nxf3`, not `Nf3` for a capture, nor UCI or coordinates).
    #[arg(long)]
    strict: bool,
    /// Piece letters of the SAN output.
    #[arg(long, value_enum, default_value_t = Letters::English)]
    letters: Letters,
    /// Moves in UCI (`g1f3`), SAN (`Nf3`, lenient unless --strict) or coordinate notation
    /// (`Ng1-f3`), played one after another.
    #[arg(value_name = "MOVE", required = true, num_args = 1..)]
    moves: Vec<String>,
}

pub fn run(args: SanArgs) -> CliResult {
    let mut pos = match &args.fen {
        Some(fen) => input::parse_fen(fen)?,
        None => Position::startpos(),
    };
    let opts = SanOptions {
        letters: args.letters.into(),
        check_marks: true,
    };
    let mut out = io::stdout().lock();
    for (i, text) in args.moves.iter().enumerate() {
        let m = if args.strict {
            pos.parse_san_with(text, SanStrictness::Strict)
        } else {
            pos.parse_move(text)
        }
        .map_err(|e| move_error(i + 1, text, &pos, &e, args.strict))?;
        writeln!(out, "{} {}", pos.san_with(m, opts), pos.uci(m))?;
        // A parsed move is legal here, so playing it cannot fail; keep the position otherwise.
        pos = pos
            .play(m)
            .map_err(|e| CliError::failure(format!("move {}: {e}", i + 1)))?;
    }
    Ok(())
}

/// `move 3 "Nd2": ambiguous: could be Nbd2, Nfd2 (position: <FEN>)`.
fn move_error(index: usize, text: &str, pos: &Position, err: &SanError, strict: bool) -> CliError {
    // `parse_move` falls back to SAN when UCI fails, and SAN reads `e1g1` as a pawn move;
    // for text that is UCI in form, the UCI reader's explanation is the one that fits.
    if !strict && let Err(UciError::Illegal { reason, .. }) = pos.parse_uci(text.trim()) {
        return CliError::failure(format!(
            "move {index} {text:?}: illegal: {reason} (position: {})",
            pos.fen()
        ));
    }
    CliError::failure(format!(
        "move {index} {text:?}: {} (position: {})",
        describe_san_error(err),
        pos.fen()
    ))
}

/// Why a move was rejected, without repeating its text: `illegal: no white king can move to
/// e7`, `ambiguous: could be Nbd2, Nfd2`.
pub fn describe_san_error(err: &SanError) -> String {
    match err {
        SanError::Unparseable { reason, .. } => format!("cannot read it as a move: {reason}"),
        SanError::Illegal { reason, .. } => format!("illegal: {reason}"),
        SanError::Ambiguous { candidates, .. } => {
            format!("ambiguous: could be {}", candidates.join(", "))
        }
        SanError::NotStrict { expected, .. } => format!("not strict SAN: write {expected:?}"),
    }
}
