//! `chess report`: the position report (material, bishops, pawn structure, files, king
//! safety, development, centre, space, phase, endgame class) as text in English or Chinese,
//! or as one JSON object.

use std::io::{self, Write};

use chess_rules::Position;
use clap::{Args, ValueEnum};

use crate::error::CliResult;
use crate::input;
use crate::opening::play_moves;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// English.
    En,
    /// Chinese (中文).
    Zh,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The position (default: the standard start). Quote it.
    #[arg(long, value_name = "FEN")]
    fen: Option<String>,
    /// Moves played from the position first (any notation); the report is of the position
    /// after them.
    #[arg(long, value_name = "MOVE", num_args = 1..)]
    moves: Vec<String>,
    /// Print one JSON object (keys `material`, `pawns`, `bishops`, `files`, `king_safety`,
    /// `development`, `centre`, `space`, `phase`, `endgame`, `items`, ...).
    #[arg(long)]
    json: bool,
    /// The language of the text report.
    #[arg(long, value_enum, default_value_t = Lang::En)]
    lang: Lang,
}

pub fn run(args: ReportArgs) -> CliResult {
    let start = match &args.fen {
        Some(fen) => input::parse_fen(fen)?,
        None => Position::startpos(),
    };
    let mut pos = start.clone();
    for m in play_moves(&start, &args.moves)? {
        pos.play_unchecked(m);
    }
    let report = chess_knowledge::describe(&pos);
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        writeln!(out, "{}", report.fen)?;
        write!(out, "{}", report.to_text(args.lang == Lang::Zh))?;
    }
    Ok(())
}
