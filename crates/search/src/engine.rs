//! The engine facade: the shared hash table, search threads, options applied by name, and
//! handles to running searches. Protocol front ends (UCI, the gRPC service) translate their messages into these
//! calls and nothing more.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use chess_rules::{Move, Position};
use chess_tablebase::Tablebase;

use crate::eval::Evaluator;
use crate::nnue::EvalSource;
use crate::options::{EngineOption, EngineOptions, NO_TABLES, OptionError};
use crate::params::Params;
use crate::search::{Control, Searcher, Shared, TimeManager, Worker};
use crate::tt::TranspositionTable;

/// The limit and result types belong to the search; the facade hands them through.
pub use crate::search::{Info, Line, SearchLimits, SearchResult};

/// Search threads need room for deep recursion (each ply holds a move list on the stack).
const SEARCH_STACK_BYTES: usize = 64 << 20;

/// Stops a running search, or tells it the ponder move was played; cheap to clone and usable
/// from any thread.
#[derive(Clone, Debug)]
pub struct StopHandle(Arc<Control>);

impl Default for StopHandle {
    fn default() -> Self {
        StopHandle::new()
    }
}

impl StopHandle {
    /// A handle for a search not started yet ([`Engine::search_inline`]); its clock starts
    /// now.
    pub fn new() -> StopHandle {
        StopHandle(Arc::new(Control::new(false)))
    }

    /// Whether [`StopHandle::stop`] was called (or the search stopped itself).
    pub fn is_stopped(&self) -> bool {
        self.0.stop.load(Relaxed)
    }

    /// The search returns its best move so far within milliseconds.
    pub fn stop(&self) {
        self.0.stop.store(true, Relaxed);
    }

    /// The opponent played the expected move: the clock limits now apply.
    pub fn ponderhit(&self) {
        self.0.ponderhit();
    }
}

/// Where [`Engine::search_inline`] runs a search's helpers: a cooperative scheduler (see
/// [`crate::batched`]).
pub trait TaskRuntime {
    /// Starts `task` as a task of the caller's scheduler.
    fn spawn(&self, task: Box<dyn FnOnce()>);
    /// Lets the scheduler's other tasks run before the caller goes on.
    fn yield_now(&self);
}

struct CountDown(Arc<AtomicUsize>);

impl Drop for CountDown {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// A search running on its own threads.
#[derive(Debug)]
pub struct SearchHandle {
    control: StopHandle,
    join: JoinHandle<SearchResult>,
    fallback: Option<Move>,
}

impl SearchHandle {
    pub fn stop(&self) {
        self.control.stop();
    }

    pub fn ponderhit(&self) {
        self.control.ponderhit();
    }

    /// A handle for stopping the search from elsewhere while another thread waits.
    pub fn stopper(&self) -> StopHandle {
        self.control.clone()
    }

    pub fn is_finished(&self) -> bool {
        self.join.is_finished()
    }

    /// Waits for the search to end and returns its result.
    pub fn wait(self) -> SearchResult {
        match self.join.join() {
            Ok(r) => r,
            // A panicking search still answers with a legal move.
            Err(_) => SearchResult {
                best_move: self.fallback,
                ponder: None,
                lines: Vec::new(),
            },
        }
    }
}

type EvalFactory = Arc<dyn Fn() -> Box<dyn Evaluator> + Send + Sync>;

/// The engine: owns the hash table and the per-thread search state kept across moves.
///
/// ```
/// use chess_rules::Position;
/// use chess_search::{Engine, EngineOptions, SearchLimits};
/// let mut engine = Engine::new(EngineOptions::default());
/// let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
/// let result = engine.go(&pos, &[], SearchLimits::depth(3), |_| {}).wait();
/// assert_eq!(result.best_move.unwrap().to_string(), "d1d8");
/// ```
pub struct Engine {
    options: EngineOptions,
    params: Params,
    tt: Arc<TranspositionTable>,
    workers: Arc<Vec<Mutex<Worker>>>,
    eval_factory: EvalFactory,
    /// What `EvalFile` last selected.
    eval_source: EvalSource,
    /// Endgame tables (`TablePath`), shared with every other engine given the same.
    tables: Option<Arc<Tablebase>>,
    last: Option<Arc<Control>>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn lock(m: &Mutex<Worker>) -> MutexGuard<'_, Worker> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Engine {
    /// An engine with the default evaluation: the embedded network (`EvalFile` `default`).
    pub fn new(options: EngineOptions) -> Engine {
        Engine::with_source(options, EvalSource::default())
    }

    /// An engine evaluating with `source` (what `EvalFile` selects).
    pub fn with_source(options: EngineOptions, source: EvalSource) -> Engine {
        let mut engine = Engine::with_evaluator(options, source.factory());
        engine.eval_source = source;
        engine
    }

    /// An engine whose threads each get an evaluator from `factory`.
    pub fn with_evaluator<F>(options: EngineOptions, factory: F) -> Engine
    where
        F: Fn() -> Box<dyn Evaluator> + Send + Sync + 'static,
    {
        let eval_factory: EvalFactory = Arc::new(factory);
        let mut options = options;
        options.threads = options.threads.max(1);
        options.multipv = options.multipv.max(1);
        Engine {
            tt: Arc::new(TranspositionTable::new(options.hash_mb)),
            workers: Arc::new(make_workers(options.threads, &eval_factory)),
            params: Params::default(),
            options,
            eval_factory,
            eval_source: EvalSource::Hand,
            tables: None,
            last: None,
        }
    }

    /// Gives every search thread a new evaluator from `factory` (a running search is stopped
    /// first). Caches and histories start empty.
    pub fn set_evaluator<F>(&mut self, factory: F)
    where
        F: Fn() -> Box<dyn Evaluator> + Send + Sync + 'static,
    {
        self.stop_previous();
        self.eval_factory = Arc::new(factory);
        self.workers = Arc::new(make_workers(self.options.threads, &self.eval_factory));
    }

    /// Evaluates with `source` from now on (what `setoption name EvalFile` does).
    pub fn set_eval_source(&mut self, source: EvalSource) {
        self.set_evaluator(source.factory());
        self.eval_source = source;
    }

    /// What `EvalFile` selected: a network or the hand-written evaluation (the latter also
    /// after [`Engine::with_evaluator`], which names no source).
    pub fn eval_source(&self) -> &EvalSource {
        &self.eval_source
    }

    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Sets an option by its UCI name (case-insensitive) from text; `tune.<param>` sets one of
    /// the search parameters instead (for tuners; see `tune.rs`).
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        // `tune.<param>`: a search parameter, for tuners (not listed among the options).
        let trimmed = name.trim();
        if trimmed
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("tune."))
        {
            return crate::tune::set(&mut self.params, &trimmed[5..], value);
        }
        let option =
            EngineOption::from_name(name).ok_or_else(|| OptionError::Unknown(name.to_owned()))?;
        let spec = option.spec();
        let value = value.trim();
        match option {
            EngineOption::Hash => {
                let mb = spec.spin(value)? as usize;
                self.stop_previous();
                self.options.hash_mb = mb;
                self.tt = Arc::new(TranspositionTable::new(mb));
            }
            EngineOption::Threads => {
                let threads = spec.spin(value)? as usize;
                self.stop_previous();
                self.options.threads = threads;
                self.workers = Arc::new(make_workers(threads, &self.eval_factory));
            }
            EngineOption::MultiPv => self.options.multipv = spec.spin(value)? as usize,
            EngineOption::MoveOverhead => self.options.move_overhead_ms = spec.spin(value)? as u64,
            EngineOption::ShowWdl => self.options.show_wdl = spec.check(value)?,
            EngineOption::Ponder => self.options.ponder = spec.check(value)?,
            EngineOption::EvalFile => {
                let source = EvalSource::from_option(value).map_err(|e| OptionError::EvalFile {
                    value: value.to_owned(),
                    reason: e.to_string(),
                })?;
                self.set_eval_source(source);
            }
            EngineOption::TablePath => {
                let tables = open_tables(value).map_err(|reason| OptionError::TablePath {
                    value: value.to_owned(),
                    reason,
                })?;
                self.set_tables(tables);
            }
        }
        Ok(())
    }

    /// Probes `tables` from now on (`None`: no tables). Several engines may share one set: the
    /// files are mapped once. A running search is stopped first.
    pub fn set_tables(&mut self, tables: Option<Arc<Tablebase>>) {
        self.stop_previous();
        self.tables = tables;
    }

    /// The endgame tables the search probes, if any.
    pub fn tables(&self) -> Option<&Arc<Tablebase>> {
        self.tables.as_ref()
    }

    fn stop_previous(&mut self) {
        if let Some(c) = self.last.take() {
            c.stop.store(true, Relaxed);
        }
    }

    /// Forgets everything learnt: hash table, histories, evaluation caches. Waits for a
    /// running search to end (stopping it first).
    pub fn new_game(&mut self) {
        self.stop_previous();
        for w in self.workers.iter() {
            lock(w).clear();
        }
        self.tt.clear();
    }

    /// The hash table, for sharing with other engines (see [`Engine::use_table`]).
    pub fn table(&self) -> Arc<TranspositionTable> {
        self.tt.clone()
    }

    /// Searches with `table` from now on. Engines given the same table share what they learn,
    /// as the threads of one engine do: several engines analysing the positions of one game at
    /// once find each other's results. A running search is stopped first.
    pub fn use_table(&mut self, table: Arc<TranspositionTable>) {
        self.stop_previous();
        self.tt = table;
    }

    /// Hash table use in per mille.
    pub fn hashfull(&self) -> u32 {
        self.tt.hashfull()
    }

    /// The static evaluation of a position, in centipawns for the side to move.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        (self.eval_factory)().evaluate(pos)
    }

    /// Starts a search of `position` and returns at once. `history` holds the
    /// [`Position::zobrist`] keys of the game's earlier positions, oldest first (for repetition
    /// draws). `on_info` hears about every finished iteration, on the search thread, and about
    /// the final lines when a stop or limit cuts an iteration short. A search still running
    /// from an earlier call is stopped first.
    pub fn go<F>(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: SearchLimits,
        on_info: F,
    ) -> SearchHandle
    where
        F: FnMut(&Info) + Send + 'static,
    {
        let control = Arc::new(Control::new(limits.ponder));
        let shared = self.prepare(position, history, limits, control.clone());
        let fallback = position.legal_moves().first().copied();
        let workers = self.workers.clone();
        let mut on_info = on_info;
        let spawned = std::thread::Builder::new()
            .name("search-0".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || run_search(&shared, &workers, &mut on_info));
        let join = match spawned {
            Ok(j) => j,
            Err(_) => std::thread::spawn(move || SearchResult {
                best_move: fallback,
                ponder: None,
                lines: Vec::new(),
            }),
        };
        SearchHandle {
            control: StopHandle(control),
            join,
            fallback,
        }
    }

    /// Searches `position` on the calling thread, as a cooperative task: the main search runs
    /// here and each helper (with `Threads` above 1) is handed to `runtime` as a task of its
    /// own, sharing the hash table. When the main search ends it stops the helpers and lets
    /// `runtime` run them until they have all returned. `stop` (from [`StopHandle::new`])
    /// stops the search from anywhere; limits count from its creation. This is how the
    /// batched search ([`crate::batched`]) runs searches; with one thread and the same
    /// evaluation it finds exactly what [`Engine::go`] finds.
    pub fn search_inline<F>(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: SearchLimits,
        stop: &StopHandle,
        on_info: F,
        runtime: &dyn TaskRuntime,
    ) -> SearchResult
    where
        F: FnMut(&Info),
    {
        let shared = Arc::new(self.prepare(position, history, limits, stop.0.clone()));
        let workers = self.workers.clone();
        let running = Arc::new(AtomicUsize::new(0));
        for id in 1..workers.len() {
            let (shared, workers, running) = (shared.clone(), workers.clone(), running.clone());
            running.fetch_add(1, Relaxed);
            runtime.spawn(Box::new(move || {
                // Counted down even if the helper panics, so the main task never waits forever.
                let _done = CountDown(running);
                let mut w = lock(&workers[id]);
                Searcher::new(&shared, &mut w, id).iterate(None);
            }));
        }
        let mut on_info = on_info;
        let result = {
            let mut w = lock(&workers[0]);
            Searcher::new(&shared, &mut w, 0).iterate(Some(&mut on_info))
        };
        shared.control.stop.store(true, Relaxed);
        while running.load(Relaxed) > 0 {
            runtime.yield_now();
        }
        result
    }

    /// The state one search's threads share; starts the table's new generation.
    fn prepare(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: SearchLimits,
        control: Arc<Control>,
    ) -> Shared {
        self.stop_previous();
        let mut limits = limits;
        if limits.unlimited() && !limits.ponder {
            limits.infinite = true;
        }
        self.last = Some(control.clone());
        self.tt.new_search();
        let threads = self.workers.len();
        Shared {
            tt: self.tt.clone(),
            control,
            nodes: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            time: TimeManager::new(
                &limits,
                position.turn(),
                self.options.move_overhead_ms,
                &self.params,
            ),
            params: self.params.clone(),
            limits,
            root: position.clone(),
            history: history.to_vec(),
            multipv: self.options.multipv,
            tables: self.tables.clone(),
            tb_pieces: self.tables.as_ref().map_or(0, |t| t.max_pieces()),
            tb_hits: AtomicU64::new(0),
        }
    }

    /// Searches to completion on the calling thread's behalf (a convenience for tests and
    /// tools): `go` followed by `wait`.
    pub fn search(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: SearchLimits,
    ) -> SearchResult {
        self.go(position, history, limits, |_| {}).wait()
    }
}

/// `TablePath`'s value as tables: `<empty>` (or nothing) for none, else a folder that exists
/// and holds at least one table, every one of which passes its checks.
fn open_tables(value: &str) -> Result<Option<Arc<Tablebase>>, String> {
    if value.is_empty() || value == NO_TABLES {
        return Ok(None);
    }
    let dir = std::path::Path::new(value);
    if !dir.is_dir() {
        return Err("not a folder".to_owned());
    }
    let tb = Tablebase::open_dir(dir).map_err(|e| e.to_string())?;
    if tb.max_pieces() == 0 {
        return Err("no tables in it".to_owned());
    }
    Ok(Some(Arc::new(tb)))
}

fn make_workers(n: usize, factory: &EvalFactory) -> Vec<Mutex<Worker>> {
    (0..n.max(1))
        .map(|_| Mutex::new(Worker::new(factory())))
        .collect()
}

fn run_search(
    shared: &Shared,
    workers: &[Mutex<Worker>],
    on_info: &mut dyn FnMut(&Info),
) -> SearchResult {
    std::thread::scope(|s| {
        for (id, worker) in workers.iter().enumerate().skip(1) {
            // A helper that cannot start only costs strength.
            let _ = std::thread::Builder::new()
                .name(format!("search-{id}"))
                .stack_size(SEARCH_STACK_BYTES)
                .spawn_scoped(s, move || {
                    let mut w = lock(worker);
                    Searcher::new(shared, &mut w, id).iterate(None);
                });
        }
        let mut w = lock(&workers[0]);
        let result = Searcher::new(shared, &mut w, 0).iterate(Some(on_info));
        shared.control.stop.store(true, Relaxed);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{OPTIONS, OptionKind};

    /// An option's stated default as `setoption` text.
    fn default_text(kind: OptionKind) -> String {
        match kind {
            OptionKind::Spin { default, .. } => default.to_string(),
            OptionKind::Check { default } => default.to_string(),
            OptionKind::String { default } => default.to_owned(),
        }
    }

    /// `OPTIONS` states the defaults of `EngineOptions::default()`: setting every option to its
    /// stated default, starting from options that differ in every field, gives exactly
    /// `EngineOptions::default()` (and `EvalFile` the default evaluation).
    #[test]
    fn option_defaults_are_the_engine_options_default() {
        let changed = EngineOptions {
            hash_mb: 2,
            threads: 2,
            multipv: 3,
            move_overhead_ms: 99,
            show_wdl: true,
            ponder: true,
        };
        let mut engine = Engine::with_source(changed.clone(), EvalSource::Hand);
        assert_eq!(engine.options(), &changed);
        for spec in OPTIONS {
            let text = default_text(spec.kind);
            engine
                .set_option(spec.name, &text)
                .unwrap_or_else(|e| panic!("{} {text:?}: {e}", spec.name));
        }
        assert_eq!(engine.options(), &EngineOptions::default());
        let (EvalSource::Network(ours), EvalSource::Network(default)) =
            (engine.eval_source(), EvalSource::default())
        else {
            panic!("EvalFile's default is not the default network");
        };
        assert_eq!(ours.file_name(), default.file_name());
    }
}
