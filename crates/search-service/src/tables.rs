//! Endgame tables for the service's engines (`--tables`): a folder of tables opened at start,
//! or the set of every ending up to 4 pieces generated into the data directory on first use
//! (`--tables generate`), in the background, so the service serves at once and its engines
//! take the tables up as soon as they are ready.
//!
//! A generated set is reused when it is there and valid: the generator skips every ending
//! whose file passes its checks (magic, version, size, CRC) and remakes the others.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use chess_search::Engine;
use chess_tablebase::{GenerateOptions, Material, Tablebase, generate_endings};

/// The tables once they are ready (at start for a folder, after generation otherwise); empty
/// without `--tables`. Cheap to clone; every engine shares the one mapping.
#[derive(Clone, Debug, Default)]
pub struct TableSlot(Arc<OnceLock<Arc<Tablebase>>>);

impl TableSlot {
    pub fn get(&self) -> Option<&Arc<Tablebase>> {
        self.0.get()
    }

    /// Gives `engine` the tables when they have become ready since it was last given them.
    pub fn sync(&self, engine: &mut Engine) {
        if engine.tables().is_none()
            && let Some(tb) = self.get()
        {
            engine.set_tables(Some(tb.clone()));
        }
    }
}

/// What `--tables` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TablesSpec {
    /// A folder of tables (`chess tb generate --dir DIR`).
    Dir(PathBuf),
    /// Generate every ending up to `--tables-generate-pieces` pieces into `DATA_DIR/tables`
    /// (reusing valid tables already there).
    Generate,
}

/// `--tables` text: `generate`, or a folder.
impl std::str::FromStr for TablesSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<TablesSpec, String> {
        parse_spec(text)
    }
}

pub fn parse_spec(text: &str) -> Result<TablesSpec, String> {
    match text.trim() {
        "" => Err("expected a folder of tables or `generate`".to_owned()),
        "generate" => Ok(TablesSpec::Generate),
        dir => Ok(TablesSpec::Dir(PathBuf::from(dir))),
    }
}

/// Why the tables could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error(
        "--tables {path}: not a folder (generate tables with `chess tb generate --pieces 4 --dir {path}`, or use --tables generate)"
    )]
    NotAFolder { path: String },
    #[error("--tables {path}: no tables in it (*.ctb files from `chess tb generate`)")]
    Empty { path: String },
    #[error("--tables {path}: {reason}")]
    Bad { path: String, reason: String },
}

/// Opens the folder now, or starts generating in the background; the slot fills when the
/// tables are ready.
pub fn start(
    spec: Option<&TablesSpec>,
    data_dir: &Path,
    pieces: usize,
) -> Result<TableSlot, TablesError> {
    let slot = TableSlot::default();
    match spec {
        None => {}
        Some(TablesSpec::Dir(dir)) => {
            let tb = open(dir)?;
            tracing::info!(
                dir = %dir.display(),
                endings = tb.tables().len(),
                max_pieces = tb.max_pieces(),
                "endgame tables loaded"
            );
            let _ = slot.0.set(Arc::new(tb));
        }
        Some(TablesSpec::Generate) => {
            let dir = data_dir.join("tables");
            let filled = slot.clone();
            std::thread::Builder::new()
                .name("tables-generate".into())
                .spawn(move || match generate(&dir, pieces) {
                    Ok(tb) => {
                        let _ = filled.0.set(Arc::new(tb));
                    }
                    Err(e) => {
                        tracing::error!(dir = %dir.display(), error = %e, "endgame tables not generated; searching without them");
                    }
                })
                .map_err(|e| TablesError::Bad {
                    path: "generate".to_owned(),
                    reason: format!("cannot start the generator thread: {e}"),
                })?;
        }
    }
    Ok(slot)
}

fn open(dir: &Path) -> Result<Tablebase, TablesError> {
    let path = dir.display().to_string();
    if !dir.is_dir() {
        return Err(TablesError::NotAFolder { path });
    }
    let tb = Tablebase::open_dir(dir).map_err(|e| TablesError::Bad {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if tb.max_pieces() == 0 {
        return Err(TablesError::Empty { path });
    }
    Ok(tb)
}

/// Generates (or finds valid on disk) every ending up to `pieces` pieces, one ending at a
/// time so that each is logged, then opens the folder.
fn generate(dir: &Path, pieces: usize) -> Result<Tablebase, String> {
    let endings = Material::all_up_to(pieces);
    let started = Instant::now();
    tracing::info!(dir = %dir.display(), endings = endings.len(), pieces, "endgame tables: generating the missing ones (valid ones on disk are kept)");
    let opts = GenerateOptions {
        progress: false,
        ..GenerateOptions::default()
    };
    let mut made = 0;
    for (i, m) in endings.iter().enumerate() {
        let t = Instant::now();
        let reports = generate_endings(&[*m], dir, &opts).map_err(|e| e.to_string())?;
        let fresh = reports.iter().filter(|r| !r.skipped).count();
        made += fresh;
        tracing::info!(
            ending = %m,
            done = i + 1,
            of = endings.len(),
            generated = fresh > 0,
            ms = t.elapsed().as_millis() as u64,
            "endgame table ready"
        );
    }
    let tb = Tablebase::open_dir(dir).map_err(|e| e.to_string())?;
    tracing::info!(
        dir = %dir.display(),
        endings = tb.tables().len(),
        generated = made,
        secs = started.elapsed().as_secs(),
        "endgame tables ready"
    );
    Ok(tb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_is_a_folder_or_generate() {
        assert_eq!(parse_spec("generate"), Ok(TablesSpec::Generate));
        assert_eq!(
            parse_spec("/var/tables"),
            Ok(TablesSpec::Dir(PathBuf::from("/var/tables")))
        );
        assert!(parse_spec(" ").is_err());
    }

    #[test]
    fn a_missing_or_empty_folder_is_refused() {
        let missing = std::env::temp_dir().join(format!("no-tables-{}", std::process::id()));
        let e = start(Some(&TablesSpec::Dir(missing.clone())), &missing, 3).unwrap_err();
        assert!(e.to_string().contains("not a folder"), "{e}");
        std::fs::create_dir_all(&missing).unwrap();
        let e = start(Some(&TablesSpec::Dir(missing.clone())), &missing, 3).unwrap_err();
        assert!(e.to_string().contains("no tables in it"), "{e}");
        std::fs::remove_dir_all(&missing).unwrap();
    }

    #[test]
    fn generate_fills_the_slot_in_the_background_and_reuses_the_set() {
        let data = std::env::temp_dir().join(format!("gen-tables-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        for _ in 0..2 {
            let slot = start(Some(&TablesSpec::Generate), &data, 3).unwrap();
            let deadline = Instant::now() + std::time::Duration::from_secs(120);
            while slot.get().is_none() {
                assert!(Instant::now() < deadline, "no tables after 120 s");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert_eq!(slot.get().unwrap().max_pieces(), 3);
        }
        std::fs::remove_dir_all(&data).unwrap();
    }
}
