//! `chess opening`: the ECO code, name and class of a line of moves or of each game of a PGN
//! file, on one line (`B20 Sicilian Defense  semi-open`).

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;

use chess_pgn::{PgnError, read_games};
use chess_proto::quote;
use chess_rules::{Move, Position};
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::input;
use crate::san::describe_san_error;

#[derive(Debug, Args)]
pub struct OpeningArgs {
    /// The start position (default: the standard one). Quote it.
    #[arg(long, value_name = "FEN", conflicts_with = "pgn")]
    fen: Option<String>,
    /// Classify every game of this PGN file instead (`-` for standard input): one line each.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Moves in any notation (`e4 c5`, `e2e4 c7c5`, `1.e4 c5 2.Nf3`), played from the start
    /// position.
    #[arg(value_name = "MOVE", conflicts_with = "pgn")]
    moves: Vec<String>,
}

pub fn run(args: OpeningArgs) -> CliResult {
    let mut out = io::stdout().lock();
    if let Some(path) = &args.pgn {
        return run_pgn(path, &mut out);
    }
    let start = match &args.fen {
        Some(fen) => input::parse_fen(fen)?,
        None => Position::startpos(),
    };
    let moves = play_moves(&start, &input::move_words(&args.moves))?;
    writeln!(
        out,
        "{}",
        chess_knowledge::classify(&start, &moves).summary()
    )?;
    Ok(())
}

/// Reads moves in any notation, each legal in turn; the error names the move and why.
pub fn play_moves(start: &Position, texts: &[String]) -> CliResult<Vec<Move>> {
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let m = pos.parse_move(text).map_err(|e| {
            CliError::failure(format!(
                "move {} {}: {} (position: {})",
                i + 1,
                quote(text),
                describe_san_error(&e),
                pos.fen()
            ))
        })?;
        pos = pos
            .play(m)
            .map_err(|e| CliError::failure(format!("move {}: {e}", i + 1)))?;
        moves.push(m);
    }
    Ok(moves)
}

fn run_pgn(path: &PathBuf, out: &mut impl Write) -> CliResult {
    let input: Box<dyn io::BufRead> = if path.as_os_str() == "-" {
        Box::new(BufReader::new(io::stdin().lock()))
    } else {
        Box::new(BufReader::new(File::open(path).map_err(|e| {
            CliError::failure(format!("cannot read {:?}: {e}", path.display()))
        })?))
    };
    let mut games = 0;
    let mut bad = 0;
    for (i, game) in read_games(input).enumerate() {
        games += 1;
        match game {
            Ok(game) => {
                let moves: Vec<Move> = game.mainline().collect();
                let summary = chess_knowledge::classify(&game.start, &moves).summary();
                writeln!(out, "{summary}")?;
            }
            Err(PgnError::Game(e)) => {
                bad += 1;
                writeln!(out, "game {}: invalid: {e}", i + 1)?;
            }
            Err(PgnError::Read(e)) => {
                return Err(CliError::failure(format!(
                    "cannot read {:?}: {e}",
                    path.display()
                )));
            }
        }
    }
    if games == 0 {
        return Err(CliError::failure(format!(
            "{:?} holds no game",
            path.display()
        )));
    }
    if bad > 0 {
        return Err(CliError::failure(format!(
            "{bad} of {games} games in {:?} are invalid",
            path.display()
        )));
    }
    Ok(())
}
