//! `chess rules`: rules queries answered by the gateway's `chess.v1.RulesService`, handy for
//! checking a deployment against the local `chess moves`.
//!
//! ```text
//! chess rules legal-moves e4 e5          one move per line, as `chess moves` prints them
//! chess rules status --fen 'FEN' Qh5     check, mate, repetitions, claimable draw, outcome
//! ```

use std::fmt::Write as _;
use std::io::{self, Write as _};

use chess_proto::v1::{LegalMovesRequest, PositionStatusRequest};
use clap::{Args, Subcommand};

use crate::client::{Client, ClientArgs};
use crate::error::CliResult;
use crate::moves::MoveFormat;
use crate::show::{claim_name, color_name};

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// List the legal moves of a position (after MOVES), one per line.
    LegalMoves(LegalMovesArgs),
    /// Check, mate, stalemate, dead position, repetitions, claimable draw and outcome.
    Status(PositionArgs),
}

#[derive(Debug, Args)]
struct PositionArgs {
    /// Start position as one quoted FEN (default: the standard start position).
    #[arg(long, value_name = "FEN")]
    fen: Option<String>,
    /// Moves played from the position first, in any notation (repetitions count across them).
    #[arg(value_name = "MOVES")]
    moves: Vec<String>,
}

#[derive(Debug, Args)]
struct LegalMovesArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// How to write the moves.
    #[arg(long, value_enum, default_value_t = MoveFormat::San)]
    format: MoveFormat,
}

pub fn run(args: RulesArgs, client: &ClientArgs) -> CliResult {
    crate::client::block_on(async move {
        let client = Client::connect(client).await?;
        match args.command {
            RulesCommand::LegalMoves(a) => legal_moves(&client, a).await,
            RulesCommand::Status(a) => status(&client, a).await,
        }
    })
}

async fn legal_moves(client: &Client, args: LegalMovesArgs) -> CliResult {
    let request = LegalMovesRequest {
        fen: args.position.fen.unwrap_or_default(),
        moves: args.position.moves,
    };
    let answer = client
        .rules()
        .legal_moves(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let mut out = String::new();
    for m in &answer.moves {
        let text = match args.format {
            MoveFormat::San => &m.san,
            MoveFormat::Uci => &m.uci,
            MoveFormat::Lan => &m.coordinate,
        };
        writeln!(out, "{text}").ok();
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    if answer.moves.is_empty() {
        eprintln!("no legal moves in {}", answer.fen);
    }
    Ok(())
}

fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

async fn status(client: &Client, args: PositionArgs) -> CliResult {
    let request = PositionStatusRequest {
        fen: args.fen.unwrap_or_default(),
        moves: args.moves,
    };
    let s = client
        .rules()
        .position_status(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let rows: [(&str, String); 11] = [
        ("fen", s.fen.clone()),
        ("turn", color_name(s.turn).to_owned()),
        ("check", yes_no(s.check).to_owned()),
        ("checkmate", yes_no(s.checkmate).to_owned()),
        ("stalemate", yes_no(s.stalemate).to_owned()),
        ("dead position", yes_no(s.dead_position).to_owned()),
        ("repetitions", s.repetition_count.to_string()),
        ("halfmove clock", s.halfmove_clock.to_string()),
        ("legal moves", s.legal_move_count.to_string()),
        (
            "claimable draw",
            claim_name(s.claimable_draw).unwrap_or("none").to_owned(),
        ),
        (
            "outcome",
            s.outcome
                .as_ref()
                .map_or_else(|| "none".to_owned(), |o| o.description.clone()),
        ),
    ];
    let mut out = String::new();
    for (name, value) in rows {
        writeln!(out, "{name:<15} {value}").ok();
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
