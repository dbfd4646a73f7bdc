//! `chess store export|import`: move games between game stores (redb files and PostgreSQL
//! databases) as JSON lines, one game with its whole event log per line.
//!
//! ```text
//! chess store export --store chess-data > games.jsonl
//! chess store import --store postgres://chess:secret@db:5432/chess < games.jsonl
//! ```

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use chess_rules_service::store::transfer;
use clap::{Args, Subcommand};

use crate::error::{CliError, CliResult};

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Write every game of a store as JSON lines (stdout unless --output).
    Export {
        /// The store: a data directory or .redb file (`redb:PATH`), or
        /// `postgres://user:password@host:port/database`. A redb file must not be in use by a
        /// running rules service.
        #[arg(long, value_name = "URL")]
        store: String,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Read games written by `chess store export` into a store (stdin unless --input). Each
    /// game's log is replayed and checked as CreateGame checks a new game, then written in one
    /// transaction; games already there with the same log are left as they are, so an
    /// interrupted import can be run again. Lines that are refused are skipped and listed, and
    /// the exit status is then 1.
    Import {
        /// The store (as for export); a missing redb file is created.
        #[arg(long, value_name = "URL")]
        store: String,
        /// Read from this file instead of stdin.
        #[arg(long, short, value_name = "FILE")]
        input: Option<PathBuf>,
    },
}

fn shown(url: &str) -> String {
    chess_rules_service::store::redact_url(url)
}

pub fn run(args: StoreArgs) -> CliResult {
    // The PostgreSQL store runs its connections on this runtime; the store's calls block
    // and are made from this (non-runtime) thread.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    match args.command {
        StoreCommand::Export { store, output } => {
            let opened = runtime
                .block_on(transfer::open_url(&store, false))
                .map_err(CliError::failure)?;
            let n = match output {
                Some(path) => {
                    let file = std::fs::File::create(&path).map_err(|e| {
                        CliError::failure(format!("cannot create {}: {e}", path.display()))
                    })?;
                    let mut out = BufWriter::new(file);
                    let n = transfer::export(&*opened, &mut out).map_err(CliError::failure)?;
                    out.flush().map_err(|e| {
                        CliError::failure(format!("cannot write {}: {e}", path.display()))
                    })?;
                    n
                }
                None => {
                    let mut out = BufWriter::new(std::io::stdout().lock());
                    let n = transfer::export(&*opened, &mut out).map_err(CliError::failure)?;
                    out.flush().map_err(CliError::Output)?;
                    n
                }
            };
            eprintln!("exported {n} game(s) from {}", shown(&store));
            Ok(())
        }
        StoreCommand::Import { store, input } => {
            let mut reader: Box<dyn BufRead> = match &input {
                Some(path) => Box::new(BufReader::new(std::fs::File::open(path).map_err(|e| {
                    CliError::failure(format!("cannot open {}: {e}", path.display()))
                })?)),
                None => Box::new(BufReader::new(std::io::stdin().lock())),
            };
            let opened = runtime
                .block_on(transfer::open_url(&store, true))
                .map_err(CliError::failure)?;
            let done = transfer::import(&*opened, &mut reader);
            let source = input
                .as_ref()
                .map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
            let summary = format!("imported from {source} into {}: {done}", shown(&store));
            if !done.complete() {
                return Err(CliError::failure(summary));
            }
            eprintln!("{summary}");
            Ok(())
        }
    }
}
