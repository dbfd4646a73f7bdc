//! `chess winnable`: who can still checkmate (FIDE 5.2.2 dead positions, 6.9 flag falls), for
//! a FEN, for moves played from the start, or for each FEN line of standard input (`-`).
//!
//! ```text
//! chess winnable '8/8/8/2k5/8/8/3KB3/8 w - - 0 1'      --  (both sides' verdicts)
//! chess winnable e4 e5 --for white --full
//! chess winnable - --full --json < fens.txt            one JSON object per line, in order
//! ```
//!
//! The JSON per position is `{"white": {"verdict", "line", "reason"}, "black": {...}}`
//! (`line`: the helpmate proof in UCI for a winnable side), or `{"error": "..."}`.

use std::io::{self, BufRead, Write};

use chess_knowledge::{Analysis, Verdict, WinnableBudget, winnable};
use chess_rules::{Color, Position};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::error::{CliError, CliResult};
use crate::input;
use crate::opening::play_moves;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Side {
    White,
    Black,
}

#[derive(Debug, Args)]
pub struct WinnableArgs {
    /// A FEN (quoted or not), moves in any notation played from the start position, or `-` to
    /// read one FEN per line from standard input and answer one line each, in order.
    #[arg(value_name = "FEN|MOVES|-", required = true, num_args = 1..)]
    position: Vec<String>,
    /// Only this intended winner (default: both sides).
    #[arg(long = "for", value_enum, value_name = "SIDE")]
    side: Option<Side>,
    /// Full mode: a deep helpmate search as well (as when a flag falls) instead of the quick
    /// static analysis and short search run after every move.
    #[arg(long)]
    full: bool,
    /// The node budget of the helpmate search (default: 200 quick, 4000000 full).
    #[arg(long, value_name = "N")]
    nodes: Option<u64>,
    /// One JSON object per position.
    #[arg(long)]
    json: bool,
}

pub fn run(args: WinnableArgs) -> CliResult {
    let mut limits = if args.full {
        WinnableBudget::full()
    } else {
        WinnableBudget::quick()
    };
    if let Some(n) = args.nodes {
        limits = limits.with_nodes(n);
    }
    let sides: Vec<Color> = match args.side {
        Some(Side::White) => vec![Color::White],
        Some(Side::Black) => vec![Color::Black],
        None => vec![Color::White, Color::Black],
    };
    let mut out = io::stdout().lock();
    if args.position.len() == 1 && args.position[0] == "-" {
        let stdin = io::stdin().lock();
        for line in stdin.lines() {
            let line = line.map_err(|e| CliError::failure(format!("cannot read input: {e}")))?;
            let text = line.trim();
            let answer = match position_of(&[text.to_owned()]) {
                Ok(pos) => Answer::Done(analyse(&pos, &sides, &limits), pos),
                Err(e) => Answer::Error(e),
            };
            writeln!(out, "{}", answer.render(args.json, true))?;
            // Each answer goes out as soon as it is known, for a caller reading line by line.
            out.flush()?;
        }
        return Ok(());
    }
    match position_of(&args.position) {
        Ok(pos) => {
            let answer = Answer::Done(analyse(&pos, &sides, &limits), pos);
            writeln!(out, "{}", answer.render(args.json, false))?;
            Ok(())
        }
        Err(e) if args.json => {
            writeln!(out, "{}", Answer::Error(e.clone()).render(true, false))?;
            Err(CliError::failure(e))
        }
        Err(e) => Err(CliError::failure(e)),
    }
}

/// A FEN when the words look like one (they contain a `/`), else moves from the start.
fn position_of(words: &[String]) -> Result<Position, String> {
    let text = input::join_words(words);
    let text = text.trim();
    if text.is_empty() {
        return Err("empty line: expected a FEN".to_owned());
    }
    if text.contains('/') {
        return Position::from_fen(text).map_err(|e| input::fen_error_message(text, &e));
    }
    let moves: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    let start = Position::startpos();
    let played = play_moves(&start, &moves).map_err(|e| e.message().unwrap_or_default())?;
    let mut pos = start;
    for m in played {
        pos.play_unchecked(m);
    }
    Ok(pos)
}

fn analyse(pos: &Position, sides: &[Color], limits: &WinnableBudget) -> Vec<Analysis> {
    sides.iter().map(|&c| winnable(pos, c, limits)).collect()
}

enum Answer {
    Done(Vec<Analysis>, Position),
    Error(String),
}

impl Answer {
    fn render(&self, json: bool, one_line: bool) -> String {
        match (self, json) {
            (Answer::Error(e), true) => json!({ "error": e }).to_string(),
            (Answer::Error(e), false) => format!("error: {e}"),
            (Answer::Done(analyses, _), true) => {
                // Written by hand to keep the keys in order: white, then black; verdict, line,
                // reason.
                let sides: Vec<String> = analyses
                    .iter()
                    .map(|a| {
                        format!(
                            "{}:{{\"verdict\":{},\"line\":{},\"reason\":{}}}",
                            Value::from(side_key(a.winner)),
                            Value::from(a.verdict.name()),
                            Value::from(a.line_uci()),
                            Value::from(a.reason()),
                        )
                    })
                    .collect();
                format!("{{{}}}", sides.join(","))
            }
            (Answer::Done(analyses, pos), false) => {
                let code: String = analyses
                    .iter()
                    .map(chess_knowledge::Analysis::letter)
                    .collect();
                let parts: Vec<String> = analyses.iter().map(|a| describe(a, pos)).collect();
                if one_line {
                    format!("{code}  {}", parts.join("; "))
                } else {
                    format!("{code}\n{}", parts.join("\n"))
                }
            }
        }
    }
}

fn side_key(c: Color) -> &'static str {
    c.fold("white", "black")
}

fn describe(a: &Analysis, pos: &Position) -> String {
    let side = a.winner.fold("White", "Black");
    match &a.verdict {
        Verdict::Winnable { .. } => {
            let line = a.line_san(pos);
            if line.is_empty() {
                format!("{side}: winnable (the opponent is checkmated)")
            } else {
                format!("{side}: winnable, helpmate {}", line.join(" "))
            }
        }
        Verdict::Unwinnable { reason } => format!("{side}: cannot win: {reason}"),
        Verdict::Undetermined => {
            format!("{side}: undetermined after {} nodes", a.nodes)
        }
    }
}
