//! The table file: a 128-byte header, then one byte per index (see [`crate::Value::to_byte`]).
//!
//! ```text
//! offset size  field
//!      0    8  magic "CHESSTB\x1a"
//!      8    4  format version (1), little-endian like every number here
//!     12    4  header length (128)
//!     16   16  ending name, ASCII, zero-padded ("KQvK")
//!     32    8  entries (index size: both sides to move)
//!     40    8  positions (legal, one per symmetry class)
//!     48    8  wins      56  8 draws      64  8 losses (side to move's view)
//!     72    4  longest win in plies       76  4 longest loss in plies
//!     80    8  index of a position with the longest win
//!     88    8  generation time in milliseconds
//!     96    4  CRC-32 of bytes 0..96 and of the data
//!    100   28  zero
//! ```

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::TbError;
use crate::index::Indexer;
use crate::material::Material;

pub(crate) const MAGIC: &[u8; 8] = b"CHESSTB\x1a";
pub(crate) const VERSION: u32 = 1;
pub(crate) const HEADER_LEN: usize = 128;
/// File name extension of a table.
pub const EXTENSION: &str = "ctb";

/// The figures a table's header records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStats {
    pub material: Material,
    pub entries: u64,
    pub positions: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub longest_win_plies: u32,
    pub longest_loss_plies: u32,
    /// Index of a position whose side to move mates in `longest_win_plies`.
    pub example_index: u64,
    pub generate_ms: u64,
}

/// The path of an ending's table in a folder.
pub fn table_path(dir: &Path, material: Material) -> PathBuf {
    dir.join(format!("{material}.{EXTENSION}"))
}

fn checksum(header: &[u8], data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&header[..96]);
    h.update(data);
    h.finalize()
}

fn header_bytes(stats: &TableStats, data: &[u8]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    let name = stats.material.to_string();
    h[16..16 + name.len()].copy_from_slice(name.as_bytes());
    let fields = [
        (32, stats.entries),
        (40, stats.positions),
        (48, stats.wins),
        (56, stats.draws),
        (64, stats.losses),
        (80, stats.example_index),
        (88, stats.generate_ms),
    ];
    for (at, v) in fields {
        h[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    h[72..76].copy_from_slice(&stats.longest_win_plies.to_le_bytes());
    h[76..80].copy_from_slice(&stats.longest_loss_plies.to_le_bytes());
    let crc = checksum(&h, data);
    h[96..100].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Writes a table atomically: a temporary file beside it, then a rename, so a reader (or a
/// resumed generation) never sees half a table.
pub(crate) fn write_table(dir: &Path, stats: &TableStats, data: &[u8]) -> Result<u64, TbError> {
    let path = table_path(dir, stats.material);
    let tmp = path.with_extension(format!("{EXTENSION}.tmp"));
    let io = |e: std::io::Error| TbError::Io {
        path: path.clone(),
        source: e,
    };
    let mut f = File::create(&tmp).map_err(io)?;
    f.write_all(&header_bytes(stats, data)).map_err(io)?;
    f.write_all(data).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok((HEADER_LEN + data.len()) as u64)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// One ending's table, mapped into memory and checked.
#[derive(Debug)]
pub struct Table {
    map: Mmap,
    pub(crate) indexer: Indexer,
    stats: TableStats,
    bytes: u64,
}

impl Table {
    /// Maps a table file and verifies its header, size and checksum.
    #[allow(unsafe_code)] // the crate's one unsafe block, the memory map: see SAFETY below
    pub fn open(path: &Path) -> Result<Table, TbError> {
        let bad = |reason: String| TbError::BadFile {
            path: path.to_path_buf(),
            reason,
        };
        let file = File::open(path).map_err(|e| TbError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        // SAFETY: tables are written once to a temporary name and renamed into place, never
        // modified afterwards; a file truncated by someone else would fault, which the format's
        // documentation warns about.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| TbError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        if map.len() < HEADER_LEN || &map[0..8] != MAGIC {
            return Err(bad("not a table file (bad magic)".into()));
        }
        let version = u32_at(&map, 8);
        if version != VERSION {
            return Err(bad(format!(
                "format version {version}, this build reads {VERSION}"
            )));
        }
        let name_bytes: Vec<u8> = map[16..32]
            .iter()
            .copied()
            .take_while(|&b| b != 0)
            .collect();
        let name =
            String::from_utf8(name_bytes).map_err(|_| bad("ending name is not ASCII".into()))?;
        let material: Material = name.parse().map_err(|e: TbError| bad(e.to_string()))?;
        if material.to_string() != name {
            return Err(bad(format!("ending name {name} is not canonical")));
        }
        let indexer = Indexer::new(material);
        let entries = u64_at(&map, 32);
        if entries != indexer.size() || map.len() as u64 != HEADER_LEN as u64 + entries {
            return Err(bad(format!(
                "{name} needs {} entries; header says {entries}, file holds {}",
                indexer.size(),
                map.len() as u64 - HEADER_LEN as u64
            )));
        }
        let stored = u32_at(&map, 96);
        let actual = checksum(&map[..HEADER_LEN], &map[HEADER_LEN..]);
        if stored != actual {
            return Err(bad(format!(
                "checksum mismatch (stored {stored:08x}, computed {actual:08x})"
            )));
        }
        let stats = TableStats {
            material,
            entries,
            positions: u64_at(&map, 40),
            wins: u64_at(&map, 48),
            draws: u64_at(&map, 56),
            losses: u64_at(&map, 64),
            longest_win_plies: u32_at(&map, 72),
            longest_loss_plies: u32_at(&map, 76),
            example_index: u64_at(&map, 80),
            generate_ms: u64_at(&map, 88),
        };
        let bytes = map.len() as u64;
        Ok(Table {
            map,
            indexer,
            stats,
            bytes,
        })
    }

    pub fn material(&self) -> Material {
        self.stats.material
    }

    pub fn stats(&self) -> &TableStats {
        &self.stats
    }

    /// Size of the file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub(crate) fn byte(&self, idx: u64) -> u8 {
        self.map[HEADER_LEN + idx as usize]
    }

    /// Entries in the table (both sides to move), legal and canonical or not.
    pub fn entries(&self) -> u64 {
        self.stats.entries
    }

    /// The FEN and stored value of entry `idx` when it is a legal position and the one index of
    /// its symmetry class; `None` for the other entries.
    pub fn position_at(&self, idx: u64) -> Option<(String, crate::Value)> {
        let board = self.indexer.canonical_board(idx)?;
        Some((board.fen(), crate::Value::from_byte(self.byte(idx))))
    }

    /// The FEN of the header's longest-win example.
    pub fn example_fen(&self) -> String {
        self.indexer.board(self.stats.example_index).fen()
    }
}
