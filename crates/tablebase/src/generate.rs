//! The retrograde generator.
//!
//! One byte per index holds the value found so far (the file encoding; 0 = not yet known).
//! Initialisation generates each position's moves forward once: checkmates get "loss in 0",
//! captures and promotions look their result up in the finished sub-tables, so a position can
//! start as a (provisional) win, or as a loss when every move leaves the ending and loses.
//! Pass `d` then takes every position whose value is exactly `d` plies and walks its unmoves
//! (non-capturing, non-promoting moves played backwards by the side that just moved):
//! - a loss in `d`: each predecessor wins in `d + 1` unless it already wins sooner;
//! - a win in `d`: each predecessor not yet valued is re-examined forward; when every move now
//!   leads to a settled win for the opponent (a win of at most `d` plies is settled, since
//!   shorter values were all found in earlier passes) it loses in `1 +` the longest of them.
//!
//! Positions never valued are draws. Two-square pawn moves that allow an en-passant reply lead
//! to a position that is not exactly a table position: the few positions with such a move are
//! re-examined forward at every pass instead of being reached by unmoves.
//!
//! Memory: one byte per index of the ending generated (its entries), plus its sub-tables,
//! which are mapped files.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use crate::TbError;
use crate::board::{Board, Child};
use crate::file::{Table, TableStats, table_path, write_table};
use crate::index::Indexer;
use crate::material::Material;
use crate::probe::Tablebase;
use crate::value::Value;

/// How to run a generation.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Print progress lines to standard error.
    pub progress: bool,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        GenerateOptions {
            threads,
            progress: false,
        }
    }
}

/// What happened to one ending.
#[derive(Clone, Debug)]
pub struct GenerateReport {
    pub stats: TableStats,
    /// The table was on disk and valid already.
    pub skipped: bool,
    pub bytes: u64,
}

/// Generates the endings named like `KBNvK` (and what they depend on) into a fresh `dir`,
/// quietly: what tests and tools that need a few small tables call. A name that is not an
/// ending is an error.
pub fn generate_named(names: &[&str], dir: &Path) -> Result<Vec<GenerateReport>, TbError> {
    let endings = names
        .iter()
        .map(|n| n.parse::<Material>())
        .collect::<Result<Vec<_>, _>>()?;
    let _ = std::fs::remove_dir_all(dir);
    let opts = GenerateOptions {
        progress: false,
        ..GenerateOptions::default()
    };
    generate_endings(&endings, dir, &opts)
}

/// Generates the given endings and everything they depend on into `dir`, smallest first,
/// skipping each ending whose table is already there and valid (so an interrupted run resumes).
pub fn generate_endings(
    endings: &[Material],
    dir: &Path,
    opts: &GenerateOptions,
) -> Result<Vec<GenerateReport>, TbError> {
    std::fs::create_dir_all(dir).map_err(|e| TbError::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut order: Vec<Material> = Vec::new();
    for m in endings {
        for dep in m.with_dependencies() {
            if !order.contains(&dep) {
                order.push(dep);
            }
        }
    }
    order.sort_by_key(|m| (m.piece_count(), m.pawn_count(), m.to_string()));
    let mut tb = Tablebase::empty(dir);
    let mut reports = Vec::new();
    for (n, &m) in order.iter().enumerate() {
        let path = table_path(dir, m);
        if path.exists() {
            match Table::open(&path) {
                Ok(t) => {
                    if opts.progress {
                        eprintln!(
                            "[{}/{}] {m}: on disk and valid, skipped",
                            n + 1,
                            order.len()
                        );
                    }
                    reports.push(GenerateReport {
                        stats: t.stats().clone(),
                        skipped: true,
                        bytes: t.file_bytes(),
                    });
                    tb.insert(t);
                    continue;
                }
                Err(e) => {
                    if opts.progress {
                        eprintln!("[{}/{}] {m}: {e}; generating again", n + 1, order.len());
                    }
                }
            }
        }
        if opts.progress {
            eprintln!("[{}/{}] {m}: generating", n + 1, order.len());
        }
        let (stats, data) = generate_one(m, &tb, opts)?;
        let bytes = write_table(dir, &stats, &data)?;
        drop(data);
        if opts.progress {
            eprintln!(
                "[{}/{}] {m}: {} positions, {} wins, {} draws, {} losses, longest win {} plies, {} ms, {} bytes",
                n + 1,
                order.len(),
                stats.positions,
                stats.wins,
                stats.draws,
                stats.losses,
                stats.longest_win_plies,
                stats.generate_ms,
                bytes
            );
        }
        tb.insert(Table::open(&path)?);
        reports.push(GenerateReport {
            stats,
            skipped: false,
            bytes,
        });
    }
    Ok(reports)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only the sub-tables are known.
    Init,
    /// During pass `d`: wins of at most `d` plies and every loss are settled.
    Pass(u32),
    /// The table is complete: unknown means draw.
    Final,
}

enum Known {
    Settled(Value),
    Pending,
}

/// Runs `f` over `0..n` in chunks on `threads` threads, each with its own state.
fn parallel<S: Default + Send>(threads: usize, n: u64, f: impl Fn(u64, &mut S) + Sync) -> Vec<S> {
    const CHUNK: u64 = 1 << 14;
    let next = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut state = S::default();
                    loop {
                        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                        if start >= n {
                            break;
                        }
                        for i in start..(start + CHUNK).min(n) {
                            f(i, &mut state);
                        }
                    }
                    state
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("generator thread panicked"))
            .collect()
    })
}

#[derive(Default)]
struct Scratch {
    children: Vec<Child>,
    parents: Vec<(Board, bool)>,
    ep: Vec<Child>,
    found: Vec<u64>,
    error: Option<String>,
}

/// An ending being generated: its index, its working values and its finished sub-tables.
pub(crate) struct Generator<'a> {
    ix: Indexer,
    work: Vec<AtomicU8>,
    subs: &'a Tablebase,
    max_assigned: AtomicU32,
}

impl<'a> Generator<'a> {
    fn table_known(&self, board: &Board, mode: Mode) -> Known {
        if mode == Mode::Init {
            return Known::Pending; // nothing of this ending is known yet: no index needed
        }
        let idx = self.ix.index(board).expect("a legal board has an index");
        let v = Value::from_byte(self.work[idx as usize].load(Ordering::Relaxed));
        match (mode, v) {
            (Mode::Init, _) => unreachable!("answered above"),
            (Mode::Final, v) => Known::Settled(v),
            (Mode::Pass(_), Value::Draw) => Known::Pending,
            (Mode::Pass(_), Value::Loss(_)) => Known::Settled(v),
            (Mode::Pass(d), Value::Win(w)) => {
                if u32::from(w) <= d {
                    Known::Settled(v)
                } else {
                    Known::Pending
                }
            }
        }
    }

    fn sub_value(&self, board: &Board) -> Value {
        self.subs
            .board_value(board)
            .expect("sub-tables are generated before the endings that need them")
    }

    fn child_known(&self, c: &Child, mode: Mode, ep: &mut Vec<Child>) -> Known {
        if c.exit {
            return Known::Settled(self.sub_value(&c.board));
        }
        let plain = self.table_known(&c.board, mode);
        let Some(ep_sq) = c.ep_square else {
            return plain;
        };
        // The reply may also take en passant: the best of the stored value and those captures.
        c.board.ep_children(ep_sq, ep);
        let best_ep = ep
            .iter()
            .map(|e| self.sub_value(&e.board).after_move())
            .reduce(|a, b| if b.is_better_than(a) { b } else { a });
        match (plain, best_ep) {
            (k, None) => k,
            (Known::Settled(v), Some(e)) => Known::Settled(if e.is_better_than(v) { e } else { v }),
            (Known::Pending, Some(Value::Win(e))) => match mode {
                // Whatever the position itself turns out to be, it wins in no fewer plies.
                Mode::Pass(d) if u32::from(e) <= d + 1 => Known::Settled(Value::Win(e)),
                _ => Known::Pending,
            },
            (Known::Pending, Some(_)) => Known::Pending,
        }
    }

    /// A position's value from its moves as far as they are known: `Settled(Win)` may still
    /// shorten while any move is pending; `Pending` when nothing can be said yet.
    fn evaluate(&self, board: &Board, mode: Mode, loss_only: bool, s: &mut Scratch) -> Known {
        let mut children = std::mem::take(&mut s.children);
        board.children(&mut children);
        let result = if children.is_empty() {
            Known::Settled(if board.in_check(board.turn) {
                Value::Loss(0)
            } else {
                Value::Draw
            })
        } else {
            let mut best_win: Option<u16> = None;
            let mut all_win = true;
            let mut pending = false;
            let mut longest = 0u16;
            for c in &children {
                let k = self.child_known(c, mode, &mut s.ep);
                // A loss check needs every move to be a settled win; stop at the first that is
                // not (a position with a losing reply is already marked a win).
                if loss_only && !matches!(k, Known::Settled(Value::Win(_))) {
                    pending = true;
                    break;
                }
                match k {
                    Known::Settled(Value::Loss(l)) => {
                        best_win = Some(best_win.map_or(l + 1, |b| b.min(l + 1)))
                    }
                    Known::Settled(Value::Win(w)) => longest = longest.max(w),
                    Known::Settled(Value::Draw) => all_win = false,
                    Known::Pending => pending = true,
                }
            }
            if let Some(w) = best_win {
                Known::Settled(Value::Win(w))
            } else if pending {
                Known::Pending
            } else if all_win {
                Known::Settled(Value::Loss(longest + 1))
            } else {
                Known::Settled(Value::Draw)
            }
        };
        s.children = children;
        result
    }

    fn too_long(&self, v: Value) -> String {
        format!(
            "{}: a distance to mate of {v:?} does not fit the one-byte format",
            self.ix.material()
        )
    }

    /// Lowers a win to `w` plies (or sets it on an unknown position).
    fn store_win(&self, idx: u64, w: u16, s: &mut Scratch) {
        let Some(b) = Value::Win(w).to_byte() else {
            s.error = Some(self.too_long(Value::Win(w)));
            return;
        };
        let cell = &self.work[idx as usize];
        let mut cur = cell.load(Ordering::Relaxed);
        while cur == 0 || (cur % 2 == 1 && cur > b) {
            match cell.compare_exchange_weak(cur, b, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.max_assigned.fetch_max(u32::from(w), Ordering::Relaxed);
                    return;
                }
                Err(now) => cur = now,
            }
        }
    }

    fn store_loss(&self, idx: u64, l: u16, s: &mut Scratch) {
        let Some(b) = Value::Loss(l).to_byte() else {
            s.error = Some(self.too_long(Value::Loss(l)));
            return;
        };
        if self.work[idx as usize]
            .compare_exchange(0, b, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.max_assigned.fetch_max(u32::from(l), Ordering::Relaxed);
        }
    }

    fn store(&self, idx: u64, k: Known, s: &mut Scratch) {
        match k {
            Known::Settled(Value::Win(w)) => self.store_win(idx, w, s),
            Known::Settled(Value::Loss(l)) => self.store_loss(idx, l, s),
            _ => {}
        }
    }

    fn pass(&self, d: u32, threads: usize) -> Result<(), TbError> {
        let target = if d % 2 == 1 {
            Value::Win(d as u16)
        } else {
            Value::Loss(d as u16)
        };
        let Some(target) = target.to_byte() else {
            return Ok(());
        };
        let states = parallel(threads, self.ix.size(), |idx, s: &mut Scratch| {
            if self.work[idx as usize].load(Ordering::Relaxed) != target {
                return;
            }
            let board = self.ix.board(idx);
            let mut parents = std::mem::take(&mut s.parents);
            board.parents(&mut parents);
            for &(q, double) in &parents {
                let qi = self.ix.index(&q).expect("a legal board has an index");
                if d.is_multiple_of(2) {
                    if double && leaves_ep_reply(&q, &board) {
                        continue; // re-examined forward with the en-passant positions
                    }
                    self.store_win(qi, d as u16 + 1, s);
                } else if self.work[qi as usize].load(Ordering::Relaxed) == 0 {
                    let k = self.evaluate(&q, Mode::Pass(d), true, s);
                    self.store(qi, k, s);
                }
            }
            s.parents = parents;
        });
        first_error(states)
    }

    /// Pass-`d` forward re-examination of positions that have a two-square move allowing an
    /// en-passant reply.
    fn recheck(&self, list: &[u64], d: u32) -> Result<(), TbError> {
        let mut s = Scratch::default();
        for &idx in list {
            let cur = Value::from_byte(self.work[idx as usize].load(Ordering::Relaxed));
            if matches!(cur, Value::Loss(_)) {
                continue;
            }
            let k = self.evaluate(&self.ix.board(idx), Mode::Pass(d), false, &mut s);
            self.store(idx, k, &mut s);
        }
        first_error(vec![s])
    }
}

/// Whether the two-square move from `q` to `p` gives the reply an en-passant capture.
fn leaves_ep_reply(q: &Board, p: &Board) -> bool {
    let moved = (0..p.len)
        .find(|&k| p.pieces[k].sq != q.pieces[k].sq)
        .expect("one piece moved");
    let ep = (p.pieces[moved].sq + q.pieces[moved].sq) / 2;
    p.ep_capture_possible(ep)
}

fn first_error(states: Vec<Scratch>) -> Result<(), TbError> {
    match states.into_iter().find_map(|s| s.error) {
        Some(e) => Err(TbError::Generate(e)),
        None => Ok(()),
    }
}

/// Generates one ending whose sub-tables are all in `subs`; returns its header figures and its
/// data bytes.
pub(crate) fn generate_one(
    material: Material,
    subs: &Tablebase,
    opts: &GenerateOptions,
) -> Result<(TableStats, Vec<u8>), TbError> {
    let start = Instant::now();
    for dep in material.with_dependencies() {
        if dep != material && dep.piece_count() > 2 && subs.table(dep).is_none() {
            return Err(TbError::Generate(format!(
                "{material} needs the {dep} table first"
            )));
        }
    }
    let ix = Indexer::new(material);
    let size = ix.size();
    let g = Generator {
        work: (0..size).map(|_| AtomicU8::new(0)).collect(),
        ix,
        subs,
        max_assigned: AtomicU32::new(0),
    };
    let threads = opts.threads.max(1);

    // Initialisation: mates, stalemates, and moves that leave the ending.
    let states = parallel(threads, size, |idx, s: &mut Scratch| {
        let Some(board) = g.ix.canonical_board(idx) else {
            return;
        };
        let k = g.evaluate(&board, Mode::Init, false, s);
        g.store(idx, k, s);
        if s.children.iter().any(|c| c.ep_square.is_some()) {
            s.found.push(idx);
        }
    });
    let mut ep_list: Vec<u64> = states
        .iter()
        .flat_map(|s| s.found.iter().copied())
        .collect();
    ep_list.sort_unstable();
    first_error(states)?;
    let sub_longest = material
        .with_dependencies()
        .iter()
        .filter_map(|m| subs.table(*m))
        .map(|t| {
            t.stats()
                .longest_win_plies
                .max(t.stats().longest_loss_plies)
        })
        .max()
        .unwrap_or(0);
    if opts.progress {
        eprintln!(
            "  {material}: {size} entries initialised in {} ms ({} with an en-passant reply)",
            start.elapsed().as_millis(),
            ep_list.len()
        );
    }

    let mut d = 0u32;
    loop {
        let limit = g.max_assigned.load(Ordering::Relaxed) + 1;
        let limit = if ep_list.is_empty() {
            limit
        } else {
            limit.max(sub_longest + 2)
        };
        if d > limit {
            break;
        }
        g.pass(d, threads)?;
        g.recheck(&ep_list, d)?;
        if opts.progress && d % 10 == 9 {
            eprintln!(
                "  {material}: pass {d} done, {} ms",
                start.elapsed().as_millis()
            );
        }
        d += 1;
    }

    let data: Vec<u8> = g.work.into_iter().map(AtomicU8::into_inner).collect();
    let mut stats = table_stats(&Indexer::new(material), &data, threads);
    stats.generate_ms = start.elapsed().as_millis() as u64;
    Ok((stats, data))
}

#[derive(Default)]
struct Count {
    positions: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    longest_win: (u8, u64),
    longest_loss: u32,
}

fn table_stats(ix: &Indexer, data: &[u8], threads: usize) -> TableStats {
    let counts = parallel(threads, ix.size(), |idx, c: &mut Count| {
        if ix.canonical_board(idx).is_none() {
            return;
        }
        c.positions += 1;
        let b = data[idx as usize];
        match Value::from_byte(b) {
            Value::Win(_) => {
                c.wins += 1;
                // The lowest index among the longest wins, whatever the thread split.
                if b > c.longest_win.0 || (b == c.longest_win.0 && idx < c.longest_win.1) {
                    c.longest_win = (b, idx);
                }
            }
            Value::Draw => c.draws += 1,
            Value::Loss(l) => {
                c.losses += 1;
                c.longest_loss = c.longest_loss.max(u32::from(l));
            }
        }
    });
    let mut total = Count {
        longest_win: (0, u64::MAX),
        ..Count::default()
    };
    for c in counts {
        total.positions += c.positions;
        total.wins += c.wins;
        total.draws += c.draws;
        total.losses += c.losses;
        total.longest_loss = total.longest_loss.max(c.longest_loss);
        let (b, i) = c.longest_win;
        if b > 0
            && (b > total.longest_win.0 || (b == total.longest_win.0 && i < total.longest_win.1))
        {
            total.longest_win = (b, i);
        }
    }
    if total.longest_win.0 == 0 {
        total.longest_win.1 = 0;
    }
    TableStats {
        material: ix.material(),
        entries: ix.size(),
        positions: total.positions,
        wins: total.wins,
        draws: total.draws,
        losses: total.losses,
        longest_win_plies: u32::from(total.longest_win.0),
        longest_loss_plies: total.longest_loss,
        example_index: total.longest_win.1,
        generate_ms: 0,
    }
}

/// The result of [`check_consistency`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsistencyReport {
    pub positions: u64,
    pub mismatches: u64,
    /// FENs of the first few positions whose stored value disagrees with their moves.
    pub examples: Vec<String>,
}

/// Checks that every position of a table holds the value its moves give: mated positions lose
/// in 0, otherwise a win one ply longer than the quickest losing reply, or a loss one ply longer
/// than the slowest winning reply when every reply wins, else a draw. `tb` must hold the table
/// and its sub-tables.
pub fn check_consistency(
    tb: &Tablebase,
    material: Material,
    threads: usize,
) -> Result<ConsistencyReport, TbError> {
    let table = tb
        .table(material)
        .ok_or_else(|| TbError::Generate(format!("no {material} table loaded")))?;
    let ix = Indexer::new(material);
    let g = Generator {
        work: (0..ix.size())
            .map(|i| AtomicU8::new(table.byte(i)))
            .collect(),
        ix,
        subs: tb,
        max_assigned: AtomicU32::new(0),
    };
    let found = Mutex::new(Vec::new());
    let states = parallel(threads, g.ix.size(), |idx, s: &mut Scratch| {
        let Some(board) = g.ix.canonical_board(idx) else {
            return;
        };
        s.found.push(0);
        let stored = Value::from_byte(table.byte(idx));
        let Known::Settled(expected) = g.evaluate(&board, Mode::Final, false, s) else {
            unreachable!("final mode settles")
        };
        if expected != stored {
            let mut f = found.lock().expect("no panics while held");
            f.push(format!(
                "{}: stored {stored:?}, moves give {expected:?}",
                board.fen()
            ));
        }
    });
    let positions = states.iter().map(|s| s.found.len() as u64).sum();
    let mut examples = found.into_inner().expect("no panics while held");
    let mismatches = examples.len() as u64;
    examples.truncate(10);
    Ok(ConsistencyReport {
        positions,
        mismatches,
        examples,
    })
}
