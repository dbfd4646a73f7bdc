//! `chess tb`: generate our endgame tables, probe them, and summarise them.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use chess_rules::Position;
use chess_tablebase::{GenerateOptions, Material, Tablebase, Value, generate_endings};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::error::{CliError, CliResult};
use crate::input;

#[derive(Debug, Args)]
pub struct TbArgs {
    #[command(subcommand)]
    command: TbCommand,
}

#[derive(Debug, Subcommand)]
enum TbCommand {
    /// Generate tables into a folder (endings already there and valid are skipped, so a run
    /// that was stopped resumes).
    Generate(GenerateArgs),
    /// Probe positions: win/draw/loss, distance to mate and the best moves.
    Probe(ProbeArgs),
    /// One summary per table in a folder.
    Stats(StatsArgs),
}

#[derive(Debug, Args)]
struct GenerateArgs {
    /// Every ending with at most this many pieces, kings included.
    #[arg(long, conflicts_with = "only", required_unless_present = "only")]
    pieces: Option<usize>,
    /// These endings (and what they depend on), comma-separated: KRPvKR,KQvKRP.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The folder the tables go into (created when missing; tables already there and valid are
    /// kept, so a stopped run resumes).
    #[arg(long)]
    dir: PathBuf,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Debug, Args)]
struct ProbeArgs {
    /// The FEN (several words are joined), or `-` to read one FEN per line from standard input
    /// and answer one line each, in order.
    #[arg(value_name = "FEN", required = true, num_args = 1..)]
    fen: Vec<String>,
    /// The folder of tables (made by `chess tb generate`).
    #[arg(long)]
    dir: PathBuf,
    /// One JSON object per position: {"wdl", "dtm_plies", "best"} or {"error"}.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct StatsArgs {
    /// The folder of tables (made by `chess tb generate`).
    #[arg(long)]
    dir: PathBuf,
    /// JSON (the only form for now; accepted so that scripts can say it).
    #[arg(long)]
    json: bool,
}

pub fn run(args: TbArgs) -> CliResult {
    match args.command {
        TbCommand::Generate(a) => generate(a),
        TbCommand::Probe(a) => probe(a),
        TbCommand::Stats(a) => stats(a),
    }
}

fn generate(args: GenerateArgs) -> CliResult {
    let endings: Vec<Material> = match args.pieces {
        Some(n) if !(2..=8).contains(&n) => return Err(CliError::usage("--pieces takes 2 to 8")),
        Some(n) => Material::all_up_to(n),
        None => args
            .only
            .iter()
            .map(|s| s.parse::<Material>())
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::usage(e.to_string()))?,
    };
    let mut opts = GenerateOptions {
        progress: true,
        ..GenerateOptions::default()
    };
    if let Some(t) = args.threads {
        opts.threads = t.max(1);
    }
    let reports = generate_endings(&endings, &args.dir, &opts)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let made = reports.iter().filter(|r| !r.skipped).count();
    println!(
        "{} endings in {}: {made} generated, {} already there",
        reports.len(),
        args.dir.display(),
        reports.len() - made
    );
    Ok(())
}

/// The answer for one FEN, as the JSON line `--json` prints.
fn answer(tb: &Tablebase, fen: &str) -> Result<(Value, Vec<String>), String> {
    let pos = Position::from_fen(fen.trim()).map_err(|e| e.to_string())?;
    let value = tb.probe_dtm(&pos).map_err(|e| e.to_string())?;
    let moves = tb.best_moves(&pos).map_err(|e| e.to_string())?;
    let best = moves
        .iter()
        .filter(|m| m.value == value)
        .map(|m| pos.uci(m.mv))
        .collect();
    Ok((value, best))
}

fn render(result: &Result<(Value, Vec<String>), String>, as_json: bool) -> String {
    match (result, as_json) {
        (Ok((v, best)), true) => {
            json!({"wdl": v.wdl().as_str(), "dtm_plies": v.dtm_plies(), "best": best}).to_string()
        }
        (Ok((v, best)), false) => format!(
            "{} dtm {} plies, best {}",
            v.wdl().as_str(),
            v.dtm_plies(),
            best.join(" ")
        ),
        (Err(e), true) => json!({ "error": e }).to_string(),
        (Err(e), false) => format!("error: {e}"),
    }
}

fn probe(args: ProbeArgs) -> CliResult {
    let tb = Tablebase::open_dir(&args.dir).map_err(|e| CliError::failure(e.to_string()))?;
    let mut out = io::stdout().lock();
    if args.fen.len() == 1 && args.fen[0] == "-" {
        for line in io::stdin().lock().lines() {
            let line =
                line.map_err(|e| CliError::failure(format!("reading standard input: {e}")))?;
            writeln!(out, "{}", render(&answer(&tb, &line), args.json))?;
        }
        return Ok(());
    }
    let result = answer(&tb, &input::join_words(&args.fen));
    writeln!(out, "{}", render(&result, args.json))?;
    match result {
        Ok(_) => Ok(()),
        Err(e) => Err(CliError::failure(e)),
    }
}

fn stats(args: StatsArgs) -> CliResult {
    let _ = args.json;
    let tb = Tablebase::open_dir(&args.dir).map_err(|e| CliError::failure(e.to_string()))?;
    let endings: Vec<_> = tb
        .tables()
        .into_iter()
        .map(|t| {
            let s = t.stats();
            json!({
                "ending": s.material.to_string(),
                "positions": s.positions,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "longest_win_plies": s.longest_win_plies,
                "example_fen": if s.longest_win_plies > 0 { Some(t.example_fen()) } else { None },
                "bytes": t.file_bytes(),
                "generate_ms": s.generate_ms,
            })
        })
        .collect();
    writeln!(io::stdout().lock(), "{}", json!({ "endings": endings }))?;
    Ok(())
}
