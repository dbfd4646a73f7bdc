//! `chess fen`: validate a FEN and print it normalised, optionally with a board.

use std::io::{self, Write};

use chess_rules::{EnPassantMode, FenOptions, File, Piece, Position, Rank, Square};
use clap::Args;

use crate::error::CliResult;
use crate::input;

#[derive(Debug, Args)]
pub struct FenArgs {
    /// The FEN; several words are joined with spaces, so quoting is optional.
    #[arg(value_name = "FEN", required = true, num_args = 1.., allow_negative_numbers = true)]
    fen: Vec<String>,
    /// Write the en-passant square after every two-square pawn move (plain FEN), not only when
    /// a capture there is legal.
    #[arg(long)]
    plain: bool,
    /// Also draw the board.
    #[arg(long)]
    board: bool,
}

pub fn run(args: FenArgs) -> CliResult {
    let pos = input::parse_fen(&input::join_words(&args.fen))?;
    let en_passant = if args.plain {
        EnPassantMode::Always
    } else {
        EnPassantMode::Legal
    };
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "{}",
        pos.fen_with(FenOptions {
            en_passant,
            ..FenOptions::default()
        })
    )?;
    if args.board {
        write!(out, "{}", draw_board(&pos))?;
    }
    Ok(())
}

/// The board in ASCII, white at the bottom, with coordinates and the game state below.
///
/// ```text
///   +-----------------+
/// 8 | r n b q k b n r |
/// ...
/// 1 | R N B Q K B N R |
///   +-----------------+
///     a b c d e f g h
/// white to move
/// ```
pub fn draw_board(pos: &Position) -> String {
    let border = "  +-----------------+\n";
    let mut out = String::from(border);
    for rank in Rank::ALL.iter().rev() {
        out.push(rank.char());
        out.push_str(" |");
        for file in File::ALL {
            out.push(' ');
            out.push(
                pos.piece_at(Square::from_coords(file, *rank))
                    .map_or('.', Piece::fen_char),
            );
        }
        out.push_str(" |\n");
    }
    out.push_str(border);
    out.push_str("    a b c d e f g h\n");
    let state = if pos.is_checkmate() {
        format!("{} is checkmated", pos.turn())
    } else if pos.is_stalemate() {
        format!("{} is stalemated", pos.turn())
    } else if pos.is_check() {
        format!("{} to move, in check", pos.turn())
    } else {
        format!("{} to move", pos.turn())
    };
    out.push_str(&state);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_board() {
        let board = draw_board(&Position::startpos());
        let lines: Vec<&str> = board.lines().collect();
        assert_eq!(lines[1], "8 | r n b q k b n r |");
        assert_eq!(lines[8], "1 | R N B Q K B N R |");
        assert_eq!(lines[10], "    a b c d e f g h");
        assert_eq!(lines[11], "white to move");
    }
}
