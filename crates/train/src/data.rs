//! The self-play data file (version 1), little-endian:
//!
//! ```text
//! header: b"CHTD", version u32 = 1
//! game:   result u8 (0 black won, 1 draw, 2 white won), count u16,
//!         then count records: fen_len u8, fen (ASCII, fen_len bytes), score i16
//! ```
//!
//! `score` is the search score in centipawns from White's point of view, clamped to
//! ±[`SCORE_LIMIT`]. Games are appended whole as they finish, so an interrupted run leaves
//! only complete games, plus at most one torn game at the end, which readers skip and
//! [`open_for_append`] cuts off. A FEN record costs about 60 bytes; a packed board would be
//! half that, but FEN keeps the file readable with any tool and is the rules crate's own
//! validated input format.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::Error;

pub const MAGIC: [u8; 4] = *b"CHTD";
pub const VERSION: u32 = 1;
pub const HEADER_BYTES: usize = 8;
/// Scores are stored clamped to this many centipawns.
pub const SCORE_LIMIT: i32 = 32_000;

/// A game's result from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum GameResult {
    BlackWin = 0,
    Draw = 1,
    WhiteWin = 2,
}

impl GameResult {
    fn from_u8(v: u8) -> Option<GameResult> {
        match v {
            0 => Some(GameResult::BlackWin),
            1 => Some(GameResult::Draw),
            2 => Some(GameResult::WhiteWin),
            _ => None,
        }
    }

    /// White's points: 0, 0.5 or 1.
    pub fn white_points(self) -> f32 {
        f32::from(self as u8) / 2.0
    }
}

/// One recorded position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub fen: String,
    /// Centipawns, White's point of view.
    pub score: i16,
}

/// One finished game's recorded positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub result: GameResult,
    pub positions: Vec<Record>,
}

impl GameRecord {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.result as u8);
        let n = self.positions.len().min(usize::from(u16::MAX));
        out.extend_from_slice(&(n as u16).to_le_bytes());
        for r in &self.positions[..n] {
            let fen = r.fen.as_bytes();
            assert!(fen.len() <= 255, "FEN longer than 255 bytes");
            out.push(fen.len() as u8);
            out.extend_from_slice(fen);
            out.extend_from_slice(&r.score.to_le_bytes());
        }
    }
}

/// Clamps a White-relative centipawn score into the stored range.
pub fn clamp_score(cp: i32) -> i16 {
    cp.clamp(-SCORE_LIMIT, SCORE_LIMIT) as i16
}

/// The contents of a data file.
#[derive(Debug)]
pub struct DataFile {
    pub games: Vec<GameRecord>,
    /// Bytes up to the end of the last complete game.
    pub valid_len: u64,
    /// Bytes after it (a game torn by an interruption).
    pub torn_bytes: u64,
}

impl DataFile {
    pub fn positions(&self) -> usize {
        self.games.iter().map(|g| g.positions.len()).sum()
    }
}

fn format_error(path: &Path, what: String) -> Error {
    Error::Format {
        path: path.to_owned(),
        what,
    }
}

/// Parses a data file's bytes.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<DataFile, Error> {
    if bytes.len() < HEADER_BYTES || bytes[..4] != MAGIC {
        return Err(format_error(
            path,
            format!("not a chess-train data file (expected magic {MAGIC:?} and a version)"),
        ));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    if version != VERSION {
        return Err(format_error(
            path,
            format!("data format version {version}, expected {VERSION}"),
        ));
    }
    let mut games = Vec::new();
    let mut at = HEADER_BYTES;
    while let Some((game, next)) = parse_game(bytes, at).map_err(|w| format_error(path, w))? {
        games.push(game);
        at = next;
    }
    Ok(DataFile {
        games,
        valid_len: at as u64,
        torn_bytes: (bytes.len() - at) as u64,
    })
}

/// The game starting at `at`: `Ok(None)` when the bytes end before it does.
fn parse_game(bytes: &[u8], at: usize) -> Result<Option<(GameRecord, usize)>, String> {
    let Some(head) = bytes.get(at..at + 3) else {
        return Ok(None);
    };
    let result = GameResult::from_u8(head[0])
        .ok_or_else(|| format!("bad game result {} at byte {at}", head[0]))?;
    let n = usize::from(u16::from_le_bytes([head[1], head[2]]));
    let mut p = at + 3;
    let mut positions = Vec::with_capacity(n);
    for _ in 0..n {
        let Some(&len) = bytes.get(p) else {
            return Ok(None);
        };
        let len = usize::from(len);
        let Some(rec) = bytes.get(p + 1..p + 1 + len + 2) else {
            return Ok(None);
        };
        let fen = std::str::from_utf8(&rec[..len])
            .map_err(|_| format!("FEN at byte {p} is not text"))?
            .to_owned();
        let score = i16::from_le_bytes([rec[len], rec[len + 1]]);
        positions.push(Record { fen, score });
        p += 1 + len + 2;
    }
    Ok(Some((GameRecord { result, positions }, p)))
}

/// Reads and parses a data file.
pub fn read(path: &Path) -> Result<DataFile, Error> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
    parse(path, &bytes)
}

/// An append-only writer positioned after the last complete game.
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
}

/// Opens `path` for appending: creates it with a header when missing or empty, otherwise
/// validates it and cuts off a torn last game. Returns the writer and the games already there.
pub fn open_for_append(path: &Path) -> Result<(Appender, DataFile), Error> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let existing = match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => Some(read(path)?),
        _ => None,
    };
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let data = match existing {
        Some(data) => {
            if data.torn_bytes > 0 {
                file.set_len(data.valid_len).map_err(io)?;
            }
            data
        }
        None => {
            file.set_len(0).map_err(io)?;
            let mut header = MAGIC.to_vec();
            header.extend_from_slice(&VERSION.to_le_bytes());
            file.write_all(&header).map_err(io)?;
            DataFile {
                games: Vec::new(),
                valid_len: HEADER_BYTES as u64,
                torn_bytes: 0,
            }
        }
    };
    Ok((
        Appender {
            path: path.to_owned(),
            file,
            buf: Vec::new(),
        },
        data,
    ))
}

impl Appender {
    /// Appends one game in a single write and flushes it to the OS.
    pub fn append(&mut self, game: &GameRecord) -> Result<(), Error> {
        self.buf.clear();
        game.encode(&mut self.buf);
        self.file
            .write_all(&self.buf)
            .and_then(|()| self.file.flush())
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_torn_tail() {
        let game = GameRecord {
            result: GameResult::WhiteWin,
            positions: vec![Record {
                fen: "8/8/8/8/8/8/8/K6k w - - 0 1".into(),
                score: -123,
            }],
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        game.encode(&mut bytes);
        let whole = bytes.len();
        game.encode(&mut bytes);
        bytes.truncate(bytes.len() - 3);
        let data = parse(Path::new("x"), &bytes).unwrap();
        assert_eq!(data.games, vec![game]);
        assert_eq!(data.valid_len, whole as u64);
        assert!(data.torn_bytes > 0);
        assert!(parse(Path::new("x"), b"NOPE\x01\0\0\0").is_err());
    }
}
