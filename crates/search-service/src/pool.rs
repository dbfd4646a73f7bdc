//! The worker pool: a fixed set of search threads, each owning its engines, behind a bounded
//! admission gate. A call is admitted only while fewer than `workers + queue` calls hold a
//! place; beyond that it is refused at once with `RESOURCE_EXHAUSTED`. Cancellation is by
//! [`Cancel`]: dropping a call's [`CancelOnDrop`] guard stops its searches.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use chess_search::{Engine, EngineOptions, EvalSource, StopHandle};
use chess_service_kit::{MetricCounter, MetricGauge, MetricHistogram, Metrics};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;

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

/// Pool settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub workers: usize,
    pub queue: usize,
    pub hash_mb: usize,
    pub threads: usize,
    /// The evaluation every engine uses.
    pub eval: EvalSource,
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
        }
    }
}

/// The pool. Cheap to clone.
#[derive(Clone)]
pub struct Pool {
    tx: mpsc::Sender<Task>,
    admission: Arc<Semaphore>,
    capacity: usize,
    pub config: PoolConfig,
    pub metrics: SearchMetrics,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    /// Starts the worker threads.
    pub fn start(config: PoolConfig, metrics: SearchMetrics) -> Result<Pool, String> {
        let workers = config.workers.max(1);
        let (tx, rx) = mpsc::channel::<Task>();
        let rx = Arc::new(Mutex::new(rx));
        for id in 0..workers {
            let rx = rx.clone();
            let options = EngineOptions {
                hash_mb: config.hash_mb,
                threads: config.threads,
                ..EngineOptions::default()
            };
            let queue_depth = metrics.queue_depth.clone();
            let eval = config.eval.clone();
            std::thread::Builder::new()
                .name(format!("search-worker-{id}"))
                .spawn(move || {
                    let mut engines = Engines {
                        main: Engine::new(options),
                        play: Engine::new(EngineOptions {
                            hash_mb: 1,
                            ..EngineOptions::default()
                        }),
                    };
                    engines.main.set_eval_source(eval.clone());
                    engines.play.set_eval_source(eval);
                    loop {
                        // The lock is held only while waiting for the next task.
                        let task = lock(&rx).recv();
                        let Ok(task) = task else { break };
                        queue_depth.dec();
                        // A failing task loses its call (its reply channel closes), not the worker.
                        let run = std::panic::AssertUnwindSafe(|| task(&mut engines));
                        if std::panic::catch_unwind(run).is_err() {
                            tracing::error!(worker = id, "a search task panicked");
                        }
                    }
                })
                .map_err(|e| format!("cannot start search worker {id}: {e}"))?;
        }
        let capacity = workers + config.queue;
        Ok(Pool {
            tx,
            admission: Arc::new(Semaphore::new(capacity)),
            capacity,
            config,
            metrics,
        })
    }

    /// A place for one call, or `RESOURCE_EXHAUSTED` at once when all are taken.
    pub fn admit(&self) -> Result<OwnedSemaphorePermit, Status> {
        self.admission.clone().try_acquire_owned().map_err(|_| {
            self.metrics.rejected.inc();
            Status::resource_exhausted(format!(
                "the search service is busy: {} workers and a queue of {} are all taken; retry \
                 later or add replicas",
                self.config.workers, self.config.queue
            ))
        })
    }

    /// Calls admitted now (running or queued).
    pub fn in_use(&self) -> usize {
        self.capacity - self.admission.available_permits()
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

#[derive(Debug, Default)]
struct CancelState {
    cancelled: AtomicBool,
    at: Mutex<Option<Instant>>,
    stoppers: Mutex<Vec<StopHandle>>,
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
        for s in lock(&self.0.stoppers).iter() {
            s.stop();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Registers a running search; it is stopped at once if the call is already cancelled.
    pub fn register(&self, stopper: StopHandle) {
        let mut stoppers = lock(&self.0.stoppers);
        if self.is_cancelled() {
            stopper.stop();
        }
        stoppers.push(stopper);
    }

    /// Forgets the searches registered so far (they have ended).
    pub fn clear(&self) {
        lock(&self.0.stoppers).clear();
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
