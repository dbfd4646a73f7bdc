use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chess_rules::{CastlingRights, Color, Move, Position, Role};

use crate::board::{Board, MAX_PIECES};
use crate::file::{EXTENSION, Table};
use crate::material::Material;
use crate::value::{Value, Wdl};
use crate::{ProbeError, TbError};

/// The tables of one folder, each mapped into memory; probes take `&self` and may run on many
/// threads at once.
#[derive(Debug)]
pub struct Tablebase {
    dir: PathBuf,
    tables: HashMap<Material, Table>,
}

/// A legal move and the value it leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    pub mv: Move,
    /// The value for the side that makes the move (the successor's value seen from the other
    /// side, one ply longer).
    pub value: Value,
}

impl Tablebase {
    /// Opens every `*.ctb` table in `dir`, checking each one's checksum; a folder that does not
    /// exist yet holds no tables.
    pub fn open_dir(dir: &Path) -> Result<Tablebase, TbError> {
        let mut tb = Tablebase {
            dir: dir.to_path_buf(),
            tables: HashMap::new(),
        };
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(tb),
            Err(e) => {
                return Err(TbError::Io {
                    path: dir.to_path_buf(),
                    source: e,
                });
            }
        };
        for entry in entries {
            let path = entry
                .map_err(|e| TbError::Io {
                    path: dir.to_path_buf(),
                    source: e,
                })?
                .path();
            if path.extension().and_then(|e| e.to_str()) == Some(EXTENSION) {
                let table = Table::open(&path)?;
                tb.tables.insert(table.material(), table);
            }
        }
        Ok(tb)
    }

    /// No tables yet (the generator fills one as it goes).
    pub(crate) fn empty(dir: &Path) -> Tablebase {
        Tablebase {
            dir: dir.to_path_buf(),
            tables: HashMap::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn insert(&mut self, table: Table) {
        self.tables.insert(table.material(), table);
    }

    pub fn table(&self, material: Material) -> Option<&Table> {
        self.tables.get(&material)
    }

    /// The tables, smallest ending first.
    pub fn tables(&self) -> Vec<&Table> {
        let mut v: Vec<&Table> = self.tables.values().collect();
        v.sort_by_key(|t| {
            let m = t.material();
            (m.piece_count(), m.pawn_count(), m.to_string())
        });
        v
    }

    /// The most pieces any loaded table holds (0 when none is loaded).
    pub fn max_pieces(&self) -> usize {
        self.tables
            .keys()
            .map(|m| m.piece_count())
            .max()
            .unwrap_or(0)
    }

    /// The stored value of a table position (no en-passant right), any piece order, either
    /// orientation of the material.
    pub(crate) fn board_value(&self, board: &Board) -> Result<Value, ProbeError> {
        let material = Material::from_pieces(board.list().iter().map(|p| (p.color, p.role)));
        let (material, board) = if material.needs_flip() {
            (material.flipped(), board.color_flipped())
        } else {
            (material, *board)
        };
        if material.piece_count() == 2 {
            // Two bare kings: no mate exists, whether or not KvK was generated.
            return Ok(Value::Draw);
        }
        let table = self
            .tables
            .get(&material)
            .ok_or_else(|| ProbeError::NoTable(material.to_string()))?;
        let arranged = table.indexer.arrange(&board);
        let idx = table
            .indexer
            .index(&arranged)
            .ok_or(ProbeError::Illegal("kings touch".into()))?;
        Ok(Value::from_byte(table.byte(idx)))
    }

    fn board_of(pos: &Position) -> Result<Board, ProbeError> {
        if pos.castling_rights() != CastlingRights::NONE {
            return Err(ProbeError::Castling);
        }
        let count = pos.occupied().count() as usize;
        if count > MAX_PIECES {
            return Err(ProbeError::NoTable(format!("{count} pieces")));
        }
        let mut b = Board::new(pos.turn());
        for color in Color::ALL {
            for role in Role::ALL {
                for sq in pos.pieces(color, role) {
                    b.push(color, role, sq as u8);
                }
            }
        }
        Ok(b)
    }

    /// The exact value of a position for its side to move. A position with a legal
    /// en-passant capture also weighs that capture (the tables hold no en-passant rights);
    /// castling rights are refused.
    ///
    /// ```no_run
    /// use chess_rules::Position;
    /// use chess_tablebase::{Tablebase, Value};
    /// let tb = Tablebase::open_dir("tables".as_ref()).unwrap();
    /// let pos = Position::from_fen("7k/8/6K1/8/8/8/8/Q7 w - - 0 1").unwrap();
    /// assert_eq!(tb.probe_dtm(&pos).unwrap(), Value::Win(1));
    /// ```
    pub fn probe_dtm(&self, pos: &Position) -> Result<Value, ProbeError> {
        let mut value = self.board_value(&Self::board_of(pos)?)?;
        if pos.legal_ep_square().is_some() {
            for m in pos.legal_moves().iter().filter(|m| m.is_en_passant()) {
                let after = pos.play(*m).expect("legal move");
                let v = self.probe_dtm(&after)?.after_move();
                if v.is_better_than(value) {
                    value = v;
                }
            }
        }
        Ok(value)
    }

    /// Win, draw or loss for the side to move (see [`Tablebase::probe_dtm`]).
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        Ok(self.probe_dtm(pos)?.wdl())
    }

    /// Every legal move with the value it leads to for the mover, best first (shorter wins,
    /// then draws, then longer losses); moves of equal value keep move-generation order.
    pub fn best_moves(&self, pos: &Position) -> Result<Vec<MoveValue>, ProbeError> {
        let mut out = Vec::new();
        for &mv in pos.legal_moves().iter() {
            let after = pos.play(mv).expect("legal move");
            out.push(MoveValue {
                mv,
                value: self.probe_dtm(&after)?.after_move(),
            });
        }
        out.sort_by(|a, b| b.value.cmp_pref(a.value));
        Ok(out)
    }
}
