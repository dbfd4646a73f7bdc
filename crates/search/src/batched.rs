//! Batched search: searches run as cooperative tasks (stackful coroutines, `corosensei`) that
//! pause at every leaf evaluation; a [`Scheduler`] gathers the pending leaves of all its tasks
//! into one batch for a [`BatchEvaluator`] backend (the CPU reference, or the GPU through
//! `chess-nn-gpu`) and resumes each task with its score.
//!
//! Alpha-beta is sequential inside one search, so the batch is filled by many searches at
//! once: concurrent analyses, the positions of a game under review, the helpers of one
//! analysis (tasks sharing its hash table, see [`Engine::search_inline`](crate::Engine)), and
//! bulk evaluations ([`evaluate_many`]), which add all their positions to one batch.
//!
//! A round resumes every task once. Each task runs until it needs an evaluation (it adds its
//! position's features to the round's batch and pauses), asks to wait ([`yield_now`]), or
//! ends. The batch goes to the backend whenever it reaches the scheduler's batch size, and at
//! the end of the round. Every backend returns exactly [`Network::evaluate`]'s score, and
//! [`LeafEval`] clamps it as [`NnueEval`](crate::NnueEval) does, so a search finds the same
//! moves, scores and node counts whichever way its evaluations ran.
//!
//! One scheduler per thread; tasks never move between threads.
//!
//! ```
//! use std::sync::Arc;
//! use chess_nn::{CpuBatch, Network};
//! use chess_rules::Position;
//! use chess_search::batched::{self, Scheduler};
//! use chess_search::{Engine, EngineOptions, SearchLimits, StopHandle};
//!
//! let net = Network::default_network();
//! let mut scheduler = Scheduler::new(net.clone(), Box::new(CpuBatch::new(net.clone())), 64);
//! let found = Arc::new(std::sync::Mutex::new(Vec::new()));
//! for fen in ["6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "6k1/8/8/8/8/8/5PPP/3R2K1 w - - 0 1"] {
//!     let (net, found) = (net.clone(), found.clone());
//!     scheduler.spawn(move || {
//!         let mut engine = batched::engine(EngineOptions::default(), net);
//!         let pos = Position::from_fen(fen).unwrap();
//!         let r = engine.search_inline(&pos, &[], SearchLimits::depth(4), &StopHandle::new(), |_| {},
//!             &batched::Tasks);
//!         found.lock().unwrap().push(r.best_move.unwrap().to_string());
//!     });
//! }
//! scheduler.run_to_end();
//! assert!(found.lock().unwrap().contains(&"d1d8".to_string()));
//! assert!(scheduler.stats().leaves > 0);
//! ```

use std::cell::{Cell, RefCell};
use std::fmt;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use chess_nn::{BatchEvaluator, CpuBatch, FeatureBatch, Network};
use chess_rules::Position;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::engine::{Engine, SearchLimits, SearchResult, StopHandle, TaskRuntime};
use crate::eval::Evaluator;
use crate::nnue::EVAL_LIMIT;
use crate::options::EngineOptions;

/// Stack reserved for each task (mapped lazily: untouched pages cost nothing).
pub const TASK_STACK_BYTES: usize = 16 << 20;

/// Why a task paused.
#[derive(Clone, Copy, Debug)]
enum Pause {
    /// Its position's features are in the round's batch at this index.
    Leaf(usize),
    /// `len` positions from `start` are in the batch.
    Bulk { start: usize, len: usize },
    /// Waiting for other tasks (helpers finishing).
    Idle,
}

/// What a paused task gets back.
#[derive(Debug)]
enum Resume {
    Start,
    Score(i32),
    Scores(Vec<i32>),
    Go,
}

type TaskYielder = Yielder<Resume, Pause>;
type Task = Coroutine<Resume, Pause, (), DefaultStack>;

thread_local! {
    /// The running task's yielder; null outside tasks.
    static CURRENT: Cell<*const TaskYielder> = const { Cell::new(ptr::null()) };
    /// The round's batch: tasks add features, the scheduler evaluates it between resumes.
    static PENDING: RefCell<FeatureBatch> = RefCell::new(FeatureBatch::new());
    /// Tasks spawned by running tasks, picked up by the scheduler when the spawner pauses.
    static SPAWNED: RefCell<Vec<Box<dyn FnOnce()>>> = const { RefCell::new(Vec::new()) };
    /// A scheduler is running on this thread (one per thread).
    static SCHEDULER: Cell<bool> = const { Cell::new(false) };
}

/// Whether the caller runs inside a scheduler's task.
pub fn in_task() -> bool {
    !CURRENT.with(Cell::get).is_null()
}

#[allow(unsafe_code)] // one of the crate's two unsafe blocks (the other: the hash table's prefetch); see SAFETY below
fn suspend(pause: Pause) -> Resume {
    let y = CURRENT.with(Cell::get);
    assert!(!y.is_null(), "suspend outside a task");
    // SAFETY: `y` was set by this task's own body from the yielder corosensei passed it, and
    // the coroutine (with its yielder) lives until the task returns.
    let resumed = unsafe { &*y }.suspend(pause);
    CURRENT.with(|c| c.set(y));
    resumed
}

/// Lets the scheduler's other tasks run; returns at the next round. Outside a task it returns
/// at once.
pub fn yield_now() {
    if in_task() {
        suspend(Pause::Idle);
    }
}

/// Starts `f` as a new task of the current scheduler, from inside a task. Outside a task it
/// runs `f` at once.
pub fn spawn(f: impl FnOnce() + 'static) {
    if in_task() {
        SPAWNED.with(|s| s.borrow_mut().push(Box::new(f)));
    } else {
        f();
    }
}

/// The [`TaskRuntime`] of the current thread's scheduler, for [`Engine::search_inline`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Tasks;

impl TaskRuntime for Tasks {
    fn spawn(&self, task: Box<dyn FnOnce()>) {
        spawn(task);
    }
    fn yield_now(&self) {
        yield_now();
    }
}

/// Scores of `positions` (centipawns for each side to move: [`Network::evaluate`] clamped as
/// the search's evaluators clamp it). In a task they join the round's batch all at once and
/// the task pauses once; outside a task they are evaluated here on the CPU.
pub fn evaluate_many(net: &Arc<Network>, positions: &[Position]) -> Vec<i32> {
    let mut scores = evaluate_raw(net, positions);
    for s in &mut scores {
        *s = (*s).clamp(-EVAL_LIMIT, EVAL_LIMIT);
    }
    scores
}

fn evaluate_raw(net: &Arc<Network>, positions: &[Position]) -> Vec<i32> {
    if positions.is_empty() {
        return Vec::new();
    }
    if !in_task() {
        let mut batch = FeatureBatch::with_capacity(*net.king_buckets(), positions.len());
        for p in positions {
            batch.push_position(p);
        }
        let mut out = vec![0; positions.len()];
        CpuBatch::new(net.clone())
            .evaluate_batch(&batch, &mut out)
            .expect("the output has one slot per position");
        return out;
    }
    let start = PENDING.with(|b| {
        let mut b = b.borrow_mut();
        let start = b.len();
        for p in positions {
            b.push_position(p);
        }
        start
    });
    match suspend(Pause::Bulk {
        start,
        len: positions.len(),
    }) {
        Resume::Scores(s) => s,
        other => unreachable!("a bulk evaluation resumed with {other:?}"),
    }
}

/// The network evaluation of the batched search: inside a task each call adds the position to
/// the scheduler's batch and pauses until the batch is evaluated; outside a task it evaluates
/// at once. Scores are clamped as [`NnueEval`](crate::NnueEval)'s are.
#[derive(Debug)]
pub struct LeafEval {
    net: Arc<Network>,
}

impl LeafEval {
    pub fn new(net: Arc<Network>) -> LeafEval {
        LeafEval { net }
    }
}

impl Evaluator for LeafEval {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        let v = if in_task() {
            let at = PENDING.with(|b| {
                let mut b = b.borrow_mut();
                b.push_position(pos);
                b.len() - 1
            });
            match suspend(Pause::Leaf(at)) {
                Resume::Score(v) => v,
                other => unreachable!("a leaf resumed with {other:?}"),
            }
        } else {
            self.net.evaluate(pos)
        };
        v.clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }
}

/// An engine whose evaluations go through the scheduler ([`LeafEval`] on every thread).
pub fn engine(options: EngineOptions, net: Arc<Network>) -> Engine {
    Engine::with_evaluator(options, move || Box::new(LeafEval::new(net.clone())))
}

/// Runs one search per position as concurrent tasks of `scheduler` (each with its own engine,
/// hash table and [`LeafEval`]) and returns their results in order. For benchmarks and for
/// holding the batched search to the incremental one.
pub fn search_all(
    scheduler: &mut Scheduler,
    options: &EngineOptions,
    positions: &[Position],
    limits: &SearchLimits,
) -> Vec<SearchResult> {
    let results: Rc<RefCell<Vec<Option<SearchResult>>>> =
        Rc::new(RefCell::new(vec![None; positions.len()]));
    for (i, pos) in positions.iter().enumerate() {
        let (results, pos, limits) = (results.clone(), pos.clone(), limits.clone());
        let mut engine = engine(options.clone(), scheduler.net.clone());
        scheduler.spawn(move || {
            let r = engine.search_inline(&pos, &[], limits, &StopHandle::new(), |_| {}, &Tasks);
            results.borrow_mut()[i] = Some(r);
        });
    }
    scheduler.run_to_end();
    let mut results = results.borrow_mut();
    results
        .iter_mut()
        .map(|r| r.take().unwrap_or_default())
        .collect()
}

/// What a scheduler has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedulerStats {
    /// Batches sent to the backend.
    pub batches: u64,
    /// Positions evaluated (leaves and bulk positions).
    pub leaves: u64,
    /// The largest batch.
    pub largest: u64,
    /// Tasks that ran to their end.
    pub tasks_finished: u64,
    /// Tasks that panicked (their panic is logged; the scheduler goes on).
    pub tasks_panicked: u64,
}

struct Slot {
    task: Task,
    /// What to resume it with in the next round.
    next: Option<Resume>,
    /// Where its request sits in the batch being filled.
    waiting: Option<Pause>,
}

/// Runs tasks in rounds on the calling thread and evaluates their leaves in batches.
pub struct Scheduler {
    net: Arc<Network>,
    backend: Box<dyn BatchEvaluator + Send>,
    max_batch: usize,
    slots: Vec<Slot>,
    /// Slot indices whose requests are in the batch being filled.
    in_batch: Vec<usize>,
    scores: Vec<i32>,
    stats: SchedulerStats,
    on_batch: Option<Box<dyn FnMut(usize)>>,
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("backend", &self.backend.name())
            .field("max_batch", &self.max_batch)
            .field("tasks", &self.slots.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Scheduler {
    /// A scheduler evaluating `net` with `backend` in batches of up to `max_batch` positions
    /// (at least 1; a bulk evaluation may exceed it). One per thread: a second one on the same
    /// thread panics.
    pub fn new(
        net: Arc<Network>,
        backend: Box<dyn BatchEvaluator + Send>,
        max_batch: usize,
    ) -> Scheduler {
        assert!(
            !SCHEDULER.with(|s| s.replace(true)),
            "one batch scheduler per thread"
        );
        // The round's batch in the network's input layout (king buckets).
        PENDING.with(|b| *b.borrow_mut() = FeatureBatch::for_network(&net));
        Scheduler {
            net,
            backend,
            max_batch: max_batch.max(1),
            slots: Vec::new(),
            in_batch: Vec::new(),
            scores: Vec::new(),
            stats: SchedulerStats::default(),
            on_batch: None,
        }
    }

    /// Calls `f` with the size of every batch sent to the backend (for metrics).
    pub fn on_batch(&mut self, f: impl FnMut(usize) + 'static) {
        self.on_batch = Some(Box::new(f));
    }

    /// The backend's name (`cpu`, `wgpu: <adapter>`).
    pub fn backend_name(&self) -> &str {
        self.backend.name()
    }

    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Tasks not finished yet.
    pub fn tasks(&self) -> usize {
        self.slots.len()
    }

    pub fn stats(&self) -> SchedulerStats {
        self.stats
    }

    /// Adds a task; it first runs in the next round.
    pub fn spawn(&mut self, f: impl FnOnce() + 'static) {
        self.spawn_boxed(Box::new(f));
    }

    fn spawn_boxed(&mut self, f: Box<dyn FnOnce()>) {
        let stack = DefaultStack::new(TASK_STACK_BYTES).expect("cannot map a task stack");
        let task = Coroutine::with_stack(stack, move |y: &TaskYielder, _first: Resume| {
            CURRENT.with(|c| c.set(ptr::from_ref(y)));
            f();
        });
        self.slots.push(Slot {
            task,
            next: Some(Resume::Start),
            waiting: None,
        });
    }

    /// Runs rounds until every task has ended.
    pub fn run_to_end(&mut self) {
        while !self.slots.is_empty() {
            self.round();
        }
    }

    /// Resumes every task once, evaluating their leaves in batches; tasks that end are
    /// dropped. Returns the number of tasks still alive.
    pub fn round(&mut self) -> usize {
        let mut i = 0;
        while i < self.slots.len() {
            let Some(input) = self.slots[i].next.take() else {
                i += 1;
                continue;
            };
            let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.slots[i].task.resume(input)
            }));
            CURRENT.with(|c| c.set(ptr::null()));
            let spawned = SPAWNED.with(|s| std::mem::take(&mut *s.borrow_mut()));
            for f in spawned {
                self.spawn_boxed(f);
            }
            match resumed {
                Ok(CoroutineResult::Yield(Pause::Idle)) => {
                    self.slots[i].next = Some(Resume::Go);
                    i += 1;
                }
                Ok(CoroutineResult::Yield(p)) => {
                    self.slots[i].waiting = Some(p);
                    self.in_batch.push(i);
                    i += 1;
                    if PENDING.with(|b| b.borrow().len()) >= self.max_batch {
                        self.flush();
                    }
                }
                Ok(CoroutineResult::Return(())) => {
                    self.stats.tasks_finished += 1;
                    self.remove(i);
                }
                Err(_) => {
                    // The panic message went to the panic hook; the task is gone.
                    self.stats.tasks_panicked += 1;
                    tracing::error!("a batched search task panicked");
                    self.remove(i);
                }
            }
        }
        self.flush();
        self.slots.len()
    }

    /// Drops slot `i`, keeping the batch's slot indices right.
    fn remove(&mut self, i: usize) {
        self.slots.swap_remove(i);
        let moved = self.slots.len();
        // Slot `moved` (the old last one) is now at `i`; it has not run this round if it is
        // behind `i`, and the loop reaches it next.
        for s in &mut self.in_batch {
            if *s == moved {
                *s = i;
            }
        }
    }

    /// Evaluates the batch being filled and hands each waiting task its scores.
    fn flush(&mut self) {
        let batch = PENDING.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if batch.is_empty() {
            PENDING.with(|b| *b.borrow_mut() = batch);
            return;
        }
        self.scores.clear();
        self.scores.resize(batch.len(), 0);
        if let Err(error) = self.backend.evaluate_batch(&batch, &mut self.scores) {
            tracing::warn!(backend = self.backend.name(), %error,
                "batch evaluation failed; evaluating on the CPU from now on");
            self.backend = Box::new(CpuBatch::new(self.net.clone()));
            self.backend
                .evaluate_batch(&batch, &mut self.scores)
                .expect("the CPU backend takes any batch");
        }
        self.stats.batches += 1;
        self.stats.leaves += batch.len() as u64;
        self.stats.largest = self.stats.largest.max(batch.len() as u64);
        if let Some(f) = &mut self.on_batch {
            f(batch.len());
        }
        for &s in &self.in_batch {
            let slot = &mut self.slots[s];
            slot.next = Some(match slot.waiting.take() {
                Some(Pause::Leaf(at)) => Resume::Score(self.scores[at]),
                Some(Pause::Bulk { start, len }) => {
                    Resume::Scores(self.scores[start..start + len].to_vec())
                }
                Some(Pause::Idle) | None => Resume::Go,
            });
        }
        self.in_batch.clear();
        let mut batch = batch;
        batch.clear();
        PENDING.with(|b| *b.borrow_mut() = batch);
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        // Unfinished tasks are unwound by corosensei when their coroutines drop.
        self.slots.clear();
        PENDING.with(|b| b.borrow_mut().clear());
        SCHEDULER.with(|s| s.set(false));
    }
}
