//! `chess moves`: the legal moves of a position, one per line, in generation order.

use std::io::{self, BufWriter, Write};

use chess_rules::{Move, Position};
use clap::{Args, ValueEnum};

use crate::error::CliResult;
use crate::input;

/// How to write a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MoveFormat {
    /// Standard Algebraic Notation: `Nf3`, `O-O`, `exd6`, `e8=Q+`.
    San,
    /// UCI: `g1f3`, castling as the king's move `e1g1`, promotion `e7e8q`.
    Uci,
    /// Coordinate (long algebraic) notation: `Ng1-f3`, `Ra1xa7`, `e7-e8=Q`.
    #[value(alias = "coordinate")]
    Lan,
}

impl MoveFormat {
    fn write(self, pos: &Position, m: Move) -> String {
        match self {
            MoveFormat::San => pos.san(m),
            MoveFormat::Uci => pos.uci(m),
            MoveFormat::Lan => pos.coordinate(m),
        }
    }
}

#[derive(Debug, Args)]
pub struct MovesArgs {
    /// The position (default: the start position); unquoted FEN words are joined.
    #[arg(long, value_name = "FEN", num_args = 1..=6, allow_negative_numbers = true)]
    fen: Option<Vec<String>>,
    /// How to write the moves.
    #[arg(long, value_enum, default_value_t = MoveFormat::San)]
    format: MoveFormat,
}

pub fn run(args: MovesArgs) -> CliResult {
    let pos = input::position_or_start(args.fen.as_deref())?;
    let moves = pos.legal_moves();
    let mut out = BufWriter::new(io::stdout().lock());
    for &m in moves.iter() {
        writeln!(out, "{}", args.format.write(&pos, m))?;
    }
    out.flush()?;
    if moves.is_empty() {
        let why = if pos.is_check() {
            "checkmated"
        } else {
            "stalemated"
        };
        eprintln!("no legal moves: {} is {why}", pos.turn());
    }
    Ok(())
}
