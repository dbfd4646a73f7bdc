//! The worker pool: a fixed set of search threads behind a bounded admission gate. A call is
//! admitted only while fewer than `slots + queue` calls hold a place; beyond that it is
//! refused at once with `RESOURCE_EXHAUSTED`. Cancellation is by [`Cancel`]: dropping a call's
//! [`CancelOnDrop`] guard stops its searches.
//!
//! Two ways to run searches ([`EvalBackend`]):
//!
//! - `cpu`: each worker thread owns its engines and runs one search at a time, evaluating
//!   with the incremental evaluator (hand-written or network);
//! - `cpu-batched` and `gpu`: each worker thread runs a [`Scheduler`] of up to `tasks`
//!   searches as coroutines; their leaf evaluations (and bulk evaluations) are gathered into
//!   batches of up to `batch_size` positions for the CPU batch backend or the GPU. The
//!   thread's searches share one hash table of `hash_mb`. Without a usable GPU the `gpu`
//!   backend logs one warning and evaluates its batches on the CPU.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chess_nn::{BatchEvaluator, CpuBatch, Network};
use chess_search::batched::{self, Scheduler};
use chess_search::{Engine, EngineOptions, EvalSource, StopHandle, TranspositionTable};
use chess_service_kit::{MetricCounter, MetricGauge, MetricHistogram, Metrics};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::tables::TableSlot;

/// The wait a busy service suggests (RetryInfo): searches end within the limits, and a place
/// frees as soon as one does.
const BUSY_RETRY: Duration = Duration::from_millis(500);

/// The engines one worker thread owns.
#[derive(Debug)]
pub struct Engines {
    /// For analysis: the configured hash size and threads; its table is kept between calls.
    pub main: Engine,
    /// For levelled play: a small table cleared before every move, so a seeded level gives
    /// the same move every time.
    pub play: Engine,
}

/// Work for a worker thread.
pub type Task = Box<dyn FnOnce(&mut Engines) + Send>;

/// Where evaluations run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalBackend {
    /// One search per worker thread, incremental evaluation on the CPU.
    Cpu,
    /// Batched search, batches evaluated on the CPU.
    CpuBatched,
    /// Batched search, batches evaluated on the GPU (wgpu), or on the CPU when no GPU can.
    Gpu,
}

impl EvalBackend {
    pub fn is_batched(self) -> bool {
        self != EvalBackend::Cpu
    }

    pub fn name(self) -> &'static str {
        match self {
            EvalBackend::Cpu => "cpu",
            EvalBackend::CpuBatched => "cpu-batched",
            EvalBackend::Gpu => "gpu",
        }
    }
}

/// The worker pool's settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub workers: usize,
    pub queue: usize,
    pub hash_mb: usize,
    pub threads: usize,
    /// The evaluation every engine uses.
    pub eval: EvalSource,
    pub backend: EvalBackend,
    /// Batched backends: searches per worker thread.
    pub tasks: usize,
    /// Batched backends: positions per backend call.
    pub batch_size: usize,
    /// Endgame tables for the analysis engines (not levelled play, which should stay at its
    /// level), once ready.
    pub tables: TableSlot,
}

impl PoolConfig {
    /// Searches that can run at once.
    pub fn slots(&self) -> usize {
        if self.backend.is_batched() {
            self.workers.max(1) * self.tasks.max(1)
        } else {
            self.workers.max(1)
        }
    }

    /// The network a batched backend evaluates.
    pub fn network(&self) -> Option<&Arc<Network>> {
        match &self.eval {
            EvalSource::Network(net) => Some(net),
            EvalSource::Hand => None,
        }
    }
}

/// The service's own metrics about its searches.
#[derive(Clone, Debug)]
pub struct SearchMetrics {
    /// Admitted calls waiting for a worker.
    pub queue_depth: MetricGauge,
    /// Searches running now.
    pub active: MetricGauge,
    pub rejected: MetricCounter,
    pub nodes: MetricCounter,
    pub searches: MetricCounter,
    pub cancelled: MetricCounter,
    pub evaluations: MetricCounter,
    /// Time from a call's cancellation to its search thread letting go.
    pub cancel_stop: MetricHistogram,
    /// Positions per batch sent to a batched backend.
    pub batch_size: MetricHistogram,
}

impl SearchMetrics {
    pub fn new(metrics: &Metrics) -> SearchMetrics {
        SearchMetrics {
            queue_depth: metrics.gauge(
                "search_queue_depth",
                "Admitted calls and tasks waiting for a search worker",
            ),
            active: metrics.gauge("search_active_searches", "Searches running now"),
            rejected: metrics.counter(
                "search_rejected",
                "Calls refused with RESOURCE_EXHAUSTED because the queue was full",
            ),
            nodes: metrics.counter("search_nodes", "Nodes searched"),
            searches: metrics.counter("search_searches", "Searches finished (one per position)"),
            cancelled: metrics.counter(
                "search_cancelled",
                "Searches stopped because their call was cancelled or its deadline passed",
            ),
            evaluations: metrics.counter(
                "search_static_evaluations",
                "Positions evaluated by EvaluatePositions",
            ),
            cancel_stop: metrics.histogram(
                "search_cancel_stop_seconds",
                "Time from a call's cancellation to its search stopping",
                &[0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0],
            ),
            batch_size: metrics.histogram(
                "search_eval_batch_size",
                "Positions per evaluation batch of the batched backends (count: batches, sum: \
                 positions)",
                &[
                    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0,
                    16384.0,
                ],
            ),
        }
    }
}

/// Why the pool could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(
        "--backend {} evaluates a network, but --eval-file is hand: choose --eval-file \
         default or a network file",
        .0.name()
    )]
    NoNetwork(EvalBackend),
    #[error("cannot start search worker {id}: {source}")]
    Worker { id: usize, source: std::io::Error },
}

/// The pool. Cheap to clone.
#[derive(Clone)]
pub struct WorkerPool {
    tx: mpsc::Sender<Task>,
    admission: Arc<Semaphore>,
    pub config: PoolConfig,
    pub metrics: SearchMetrics,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl WorkerPool {
    /// Starts the worker threads.
    pub fn start(config: PoolConfig, metrics: SearchMetrics) -> Result<WorkerPool, StartError> {
        let workers = config.workers.max(1);
        let (tx, rx) = mpsc::channel::<Task>();
        let rx = Arc::new(Mutex::new(rx));
        let net = match (config.backend.is_batched(), config.network()) {
            (false, _) => None,
            (true, Some(net)) => Some(net.clone()),
            (true, None) => return Err(StartError::NoNetwork(config.backend)),
        };
        for id in 0..workers {
            let rx = rx.clone();
            let metrics = metrics.clone();
            let config = config.clone();
            let net = net.clone();
            let name = format!("search-worker-{id}");
            let spawned = match net {
                None => std::thread::Builder::new()
                    .name(name)
                    .spawn(move || run_worker(id, &config, &rx, &metrics)),
                Some(net) => {
                    let backend = config.backend;
                    std::thread::Builder::new().name(name).spawn(move || {
                        let eval = make_backend(backend, &net, config.batch_size);
                        run_scheduler(id, &config, net, eval, &rx, &metrics);
                    })
                }
            };
            spawned.map_err(|source| StartError::Worker { id, source })?;
        }
        let capacity = config.slots() + config.queue;
        Ok(WorkerPool {
            tx,
            admission: Arc::new(Semaphore::new(capacity)),
            config,
            metrics,
        })
    }

    /// A place for one call, or `RESOURCE_EXHAUSTED` at once when all are taken.
    pub fn admit(&self) -> Result<OwnedSemaphorePermit, Status> {
        self.admission.clone().try_acquire_owned().map_err(|_| {
            self.metrics.rejected.inc();
            Status::with_error_details(
                Code::ResourceExhausted,
                format!(
                    "the search service is busy: {} search slots and a queue of {} are all \
                     taken; retry in {} ms or add replicas",
                    self.config.slots(),
                    self.config.queue,
                    BUSY_RETRY.as_millis()
                ),
                ErrorDetails::with_retry_info(Some(BUSY_RETRY)),
            )
        })
    }

    /// Queues a task for the next free worker.
    pub fn submit(&self, task: Task) -> Result<(), Status> {
        self.metrics.queue_depth.inc();
        self.tx.send(task).map_err(|_| {
            self.metrics.queue_depth.dec();
            Status::unavailable("the search workers have stopped")
        })
    }
}

fn engine_options(config: &PoolConfig, hash_mb: usize) -> (EngineOptions, EngineOptions) {
    let main = EngineOptions {
        hash_mb,
        threads: config.threads,
        ..EngineOptions::default()
    };
    let play = EngineOptions {
        hash_mb: 1,
        ..EngineOptions::default()
    };
    (main, play)
}

/// A worker of the `cpu` backend: one task at a time on its own engines.
fn run_worker(
    id: usize,
    config: &PoolConfig,
    rx: &Mutex<mpsc::Receiver<Task>>,
    metrics: &SearchMetrics,
) {
    let (main, play) = engine_options(config, config.hash_mb);
    let mut engines = Engines {
        main: Engine::with_source(main, config.eval.clone()),
        play: Engine::with_source(play, config.eval.clone()),
    };
    loop {
        // The lock is held only while waiting for the next task.
        let task = lock(rx).recv();
        let Ok(task) = task else { break };
        metrics.queue_depth.dec();
        config.tables.sync(&mut engines.main);
        // A failing task loses its call (its reply channel closes), not the worker.
        let run = std::panic::AssertUnwindSafe(|| task(&mut engines));
        if std::panic::catch_unwind(run).is_err() {
            tracing::error!(worker = id, "a search task panicked");
        }
    }
}

/// The batch evaluator of a batched backend: the GPU when it can run (otherwise the CPU, with
/// one warning in the log), or the CPU.
fn make_backend(
    backend: EvalBackend,
    net: &Arc<Network>,
    batch_size: usize,
) -> Box<dyn BatchEvaluator + Send> {
    match backend {
        EvalBackend::Gpu => {
            let options = chess_nn_gpu::GpuOptions {
                max_batch: batch_size.clamp(1, 1 << 16),
                ..chess_nn_gpu::GpuOptions::default()
            };
            chess_nn_gpu::gpu_or_cpu(net.clone(), &options)
        }
        EvalBackend::Cpu | EvalBackend::CpuBatched => Box::new(CpuBatch::new(net.clone())),
    }
}

/// A worker of a batched backend: up to `tasks` searches at once as coroutines, their
/// evaluations batched. Engines are kept and reused; the main engines share one table.
fn run_scheduler(
    id: usize,
    config: &PoolConfig,
    net: Arc<Network>,
    eval: Box<dyn BatchEvaluator + Send>,
    rx: &Mutex<mpsc::Receiver<Task>>,
    metrics: &SearchMetrics,
) {
    let mut scheduler = Scheduler::new(net.clone(), eval, config.batch_size);
    tracing::info!(
        worker = id,
        backend = scheduler.backend_name(),
        batch_size = config.batch_size,
        tasks = config.tasks,
        "batched search worker started"
    );
    let sizes = metrics.batch_size.clone();
    scheduler.on_batch(move |n| sizes.observe(n as f64));
    let table = Arc::new(TranspositionTable::new(config.hash_mb));
    let (main, play) = engine_options(config, 1);
    let free: Rc<RefCell<Vec<Engines>>> = Rc::new(RefCell::new(Vec::new()));
    let max_tasks = config.tasks.max(1);
    loop {
        // Wait for work when idle; otherwise take what is queued, up to the task limit,
        // leaving the rest to idle workers.
        while scheduler.tasks() < max_tasks {
            let task = if scheduler.tasks() == 0 {
                match lock(rx).recv() {
                    Ok(t) => t,
                    Err(_) => return,
                }
            } else {
                let Ok(rx) = rx.try_lock() else { break };
                match rx.try_recv() {
                    Ok(t) => t,
                    Err(_) => break,
                }
            };
            metrics.queue_depth.dec();
            let (free, net, table) = (free.clone(), net.clone(), table.clone());
            let tables = config.tables.clone();
            let (main, play) = (main.clone(), play.clone());
            scheduler.spawn(move || {
                let taken = free.borrow_mut().pop();
                let mut engines = taken.unwrap_or_else(|| {
                    let mut main = batched::engine(main, net.clone());
                    main.use_table(table);
                    Engines {
                        main,
                        play: batched::engine(play, net),
                    }
                });
                tables.sync(&mut engines.main);
                task(&mut engines);
                free.borrow_mut().push(engines);
            });
        }
        scheduler.round();
    }
}

#[derive(Debug, Default)]
struct CancelState {
    cancelled: AtomicBool,
    at: Mutex<Option<Instant>>,
    /// Running searches; a finished one leaves `None`.
    stoppers: Mutex<Vec<Option<StopHandle>>>,
}

/// Cancellation shared by a call and its searches.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<CancelState>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops every search registered now or later.
    pub fn cancel(&self) {
        if self.0.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        *lock(&self.0.at) = Some(Instant::now());
        for s in lock(&self.0.stoppers).iter().flatten() {
            s.stop();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Registers a running search; it is stopped at once if the call is already cancelled.
    /// The token is for [`Cancel::release`].
    pub fn register(&self, stopper: StopHandle) -> usize {
        let mut stoppers = lock(&self.0.stoppers);
        if self.is_cancelled() {
            stopper.stop();
        }
        stoppers.push(Some(stopper));
        stoppers.len() - 1
    }

    /// Forgets a search registered with [`Cancel::register`] (it has ended); the call's other
    /// searches stay registered.
    pub fn release(&self, token: usize) {
        if let Some(s) = lock(&self.0.stoppers).get_mut(token) {
            *s = None;
        }
    }

    /// When the call was cancelled.
    pub fn cancelled_at(&self) -> Option<Instant> {
        *lock(&self.0.at)
    }

    /// A guard that cancels when dropped, unless [`CancelOnDrop::disarm`]ed.
    pub fn guard(&self) -> CancelOnDrop {
        CancelOnDrop(Some(self.clone()))
    }
}

/// Cancels its call when dropped: the call's future or response stream went away (client
/// gone, deadline passed, server shutting down).
#[derive(Debug)]
pub struct CancelOnDrop(Option<Cancel>);

impl CancelOnDrop {
    /// The call finished normally: nothing to cancel.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel();
        }
    }
}
