//! `chess.v1.AnalysisService`: admission, and the tasks each call runs on the worker pool
//! (the requests are checked in [`crate::checks`], the answers written in [`crate::wire`]).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use chess_proto::FieldViolation;
use chess_proto::v1;
use chess_proto::v1::analysis_service_server::AnalysisService;
use chess_rules::Position;
use chess_search::batched;
use chess_search::{EvalSource, Score, SearchResult, SplitMix64, TranspositionTable};
use chess_wire::{move_to_proto, position_from_fen};
use futures::Stream;
use tokio::sync::{mpsc, oneshot};
use tonic::{Request, Response, Status};

use crate::Config;
use crate::checks::{
    BestMoveJob, Default_, RequestLimits, check_analyze, check_best_move, check_limits, over_limit,
};
use crate::jobs::{SearchJob, run_search};
use crate::pool::{Cancel, CancelOnDrop, Engines, WorkerPool};
use crate::review::{PositionValue, build_response};
use crate::wire::{finished, line_to_proto, response, score_to_proto, wdl_to_proto};

/// The service.
#[derive(Clone, Debug)]
pub struct SearchApi {
    pool: WorkerPool,
    limits: RequestLimits,
}

type ResponseStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

/// A response stream that cancels its call's searches when the client drops it.
struct Guarded<T> {
    rx: mpsc::UnboundedReceiver<Result<T, Status>>,
    _guard: CancelOnDrop,
}

impl<T> Stream for Guarded<T> {
    type Item = Result<T, Status>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

fn guarded<T: Send + 'static>(
    rx: mpsc::UnboundedReceiver<Result<T, Status>>,
    guard: CancelOnDrop,
) -> ResponseStream<T> {
    Box::pin(Guarded { rx, _guard: guard })
}

/// `hand-written`, or the network's file name (which carries its content hash).
pub fn evaluator_name(eval: &EvalSource) -> String {
    match eval {
        EvalSource::Hand => "hand-written".to_owned(),
        EvalSource::Network(net) => net.file_name(),
    }
}

fn worker_gone() -> Status {
    Status::internal("the search worker stopped before answering (see the service log)")
}

fn cancelled() -> Status {
    Status::cancelled("the call was cancelled")
}

impl SearchApi {
    pub fn new(pool: WorkerPool, config: &Config) -> SearchApi {
        SearchApi {
            pool,
            limits: RequestLimits::from_config(config),
        }
    }

    /// Search slots one call may occupy at once.
    fn parallelism(&self, items: usize) -> usize {
        let slots = self.pool.config.slots();
        let cap = match self.limits.call_parallelism {
            0 => slots,
            n => n.min(slots),
        };
        cap.clamp(1, items.max(1))
    }

    /// Runs one search on the pool and waits for it (a dropped call cancels it). `levelled`
    /// uses the worker's small play engine, cleared first, so a seeded level repeats.
    async fn search_once(
        &self,
        job: SearchJob,
        levelled: bool,
    ) -> Result<(SearchJob, SearchResult), Status> {
        let permit = self.pool.admit()?;
        let cancel = Cancel::new();
        let guard = cancel.guard();
        let metrics = self.pool.metrics.clone();
        let (tx, rx) = oneshot::channel();
        self.pool.submit(Box::new(move |e: &mut Engines| {
            let _permit = permit;
            let engine = if levelled {
                e.play.new_game();
                &mut e.play
            } else {
                &mut e.main
            };
            let searched = run_search(engine, &job, &cancel, &metrics, |_| {});
            let _ = tx.send((job, searched));
        }))?;
        let (job, searched) = rx.await.map_err(|_| worker_gone())?;
        guard.disarm();
        if searched.cancelled {
            return Err(cancelled());
        }
        Ok((job, searched.result))
    }

    /// Spreads the searches of one call over up to [`SearchApi::parallelism`] workers: each
    /// takes the next chunk until none is left or the call is cancelled, searches its items in
    /// order, and hands each result to `done`, which returns false to stop. With
    /// `fresh_table_mb` every chunk gets a fresh table of that size and the engine's histories
    /// cleared, so that no chunk depends on another (with one thread per search, the same
    /// input gives the same results); without it the workers keep their own tables. The call
    /// holds one admission place throughout.
    fn spread<T, F>(
        &self,
        chunks: VecDeque<Vec<(T, SearchJob)>>,
        fresh_table_mb: Option<usize>,
        cancel: &Cancel,
        done: F,
    ) -> Result<(), Status>
    where
        T: Send + 'static,
        F: Fn(T, &SearchJob, SearchResult) -> bool + Clone + Send + 'static,
    {
        let permit = Arc::new(self.pool.admit()?);
        let workers = self.parallelism(chunks.len());
        let chunks = Arc::new(Mutex::new(chunks));
        for _ in 0..workers {
            let (chunks, cancel, permit, done) =
                (chunks.clone(), cancel.clone(), permit.clone(), done.clone());
            let metrics = self.pool.metrics.clone();
            self.pool.submit(Box::new(move |e: &mut Engines| {
                let _permit = permit;
                let own = e.main.table();
                'chunks: loop {
                    let next = chunks.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    let Some(chunk) = next else { break };
                    if let Some(mb) = fresh_table_mb {
                        e.main.use_table(Arc::new(TranspositionTable::new(mb)));
                        e.main.new_game();
                    }
                    for (item, job) in chunk {
                        let searched = run_search(&mut e.main, &job, &cancel, &metrics, |_| {});
                        if searched.cancelled || !done(item, &job, searched.result) {
                            break 'chunks;
                        }
                    }
                }
                if fresh_table_mb.is_some() {
                    e.main.use_table(own);
                }
            }))?;
        }
        Ok(())
    }
}

/// Positions of a reviewed game searched in a row with one fresh table: a fixed split of the
/// game, so that a review is the same whichever workers take part and whichever is free first.
const REVIEW_CHUNK: usize = 16;

#[tonic::async_trait]
impl AnalysisService for SearchApi {
    async fn analyze(
        &self,
        request: Request<v1::AnalyzeRequest>,
    ) -> Result<Response<v1::AnalyzeResponse>, Status> {
        let (job, fen, outcome) = check_analyze("", request.get_ref(), &self.limits)?;
        if let Some(outcome) = outcome {
            return Ok(Response::new(finished(&fen, outcome)));
        }
        let (job, result) = self.search_once(job, false).await?;
        Ok(Response::new(response(
            &job.position,
            &fen,
            &result.lines,
            true,
        )))
    }

    type AnalyzeStreamStream = ResponseStream<v1::AnalyzeResponse>;

    async fn analyze_stream(
        &self,
        request: Request<v1::AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStreamStream>, Status> {
        let (job, fen, outcome) = check_analyze("", request.get_ref(), &self.limits)?;
        if let Some(outcome) = outcome {
            let (tx, rx) = mpsc::unbounded_channel();
            let _ = tx.send(Ok(finished(&fen, outcome)));
            return Ok(Response::new(guarded(rx, Cancel::new().guard())));
        }
        let permit = self.pool.admit()?;
        let cancel = Cancel::new();
        let guard = cancel.guard();
        let metrics = self.pool.metrics.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        self.pool.submit(Box::new(move |e: &mut Engines| {
            let _permit = permit;
            let progress = tx.clone();
            let (pos, f) = (job.position.clone(), fen.clone());
            let searched = run_search(&mut e.main, &job, &cancel, &metrics, move |lines| {
                let _ = progress.send(Ok(response(&pos, &f, &lines, false)));
            });
            let last = if searched.cancelled {
                Err(cancelled())
            } else {
                Ok(response(&job.position, &fen, &searched.result.lines, true))
            };
            let _ = tx.send(last);
        }))?;
        Ok(Response::new(guarded(rx, guard)))
    }

    type AnalyzeBatchStream = ResponseStream<v1::AnalyzeBatchResponse>;

    async fn analyze_batch(
        &self,
        request: Request<v1::AnalyzeBatchRequest>,
    ) -> Result<Response<Self::AnalyzeBatchStream>, Status> {
        let req = request.into_inner();
        let n = req.positions.len();
        if n == 0 {
            return Err(FieldViolation::new("positions", "no positions to analyse").into());
        }
        if n > self.limits.max_batch {
            return Err(
                over_limit("positions", format!("{n} positions"), self.limits.max_batch).into(),
            );
        }
        let mut work = VecDeque::with_capacity(n);
        let mut over = Vec::new();
        for (i, p) in req.positions.iter().enumerate() {
            let (job, fen, outcome) = check_analyze(&format!("positions[{i}]."), p, &self.limits)?;
            match outcome {
                Some(outcome) => over.push((i, finished(&fen, outcome))),
                None => work.push_back(((i, fen), job)),
            }
        }
        let cancel = Cancel::new();
        let guard = cancel.guard();
        let (tx, rx) = mpsc::unbounded_channel();
        // Games already over need no search: their answers go first.
        for (index, result) in over {
            let _ = tx.send(Ok(v1::AnalyzeBatchResponse {
                index: index as u32,
                result: Some(result),
            }));
        }
        self.spread(
            work.into_iter().map(|item| vec![item]).collect(),
            None,
            &cancel,
            move |(index, fen): (usize, String), job, result| {
                let msg = v1::AnalyzeBatchResponse {
                    index: index as u32,
                    result: Some(response(&job.position, &fen, &result.lines, true)),
                };
                tx.send(Ok(msg)).is_ok()
            },
        )?;
        Ok(Response::new(guarded(rx, guard)))
    }

    async fn best_move(
        &self,
        request: Request<v1::BestMoveRequest>,
    ) -> Result<Response<v1::BestMoveResponse>, Status> {
        let BestMoveJob { job, level, seed } = check_best_move(request.get_ref(), &self.limits)?;
        let (job, result) = self.search_once(job, level.is_some()).await?;
        let lines = &result.lines;
        let pos = &job.position;
        let usable = chess_search::playable(pos, lines);
        let chosen = match level {
            Some(level) => level.pick(pos, lines, &mut SplitMix64::new(seed)),
            None => usable.first().copied(),
        };
        let strongest = usable
            .first()
            .map(|l| l.pv[0])
            .or(result.best_move)
            .ok_or_else(|| Status::internal("the search found no move"))?;
        let (best, line) = match chosen {
            Some(l) => (l.pv[0], Some(line_to_proto(pos, l))),
            None => (strongest, None),
        };
        Ok(Response::new(v1::BestMoveResponse {
            best_move: Some(move_to_proto(pos, best)),
            line,
            strongest_move: Some(move_to_proto(pos, strongest)),
            elo: level.map_or(0, |l| l.elo),
        }))
    }

    async fn review_game(
        &self,
        request: Request<v1::ReviewGameRequest>,
    ) -> Result<Response<v1::ReviewGameResponse>, Status> {
        let req = request.into_inner();
        if req.pgn.len() > self.limits.max_pgn_bytes {
            return Err(over_limit(
                "pgn",
                format!("{} bytes", req.pgn.len()),
                format!("{} bytes", self.limits.max_pgn_bytes),
            )
            .into());
        }
        let wanted = req.game_index as usize;
        let mut found = 0;
        let mut game = None;
        for (i, g) in chess_pgn::read_games(req.pgn.as_bytes()).enumerate() {
            found = i + 1;
            if i == wanted {
                game = Some(g.map_err(|e| FieldViolation::new("pgn", e.to_string()))?);
                break;
            }
        }
        let Some(game) = game else {
            return Err(FieldViolation::new(
                "game_index",
                format!("game {wanted} asked for, but the PGN holds {found} game(s) (0-based)"),
            )
            .into());
        };
        let moves: Vec<chess_rules::Move> = game.mainline().collect();
        if moves.is_empty() {
            return Err(FieldViolation::new("pgn", "the game has no moves to review").into());
        }
        if moves.len() > self.limits.max_moves {
            return Err(over_limit(
                "pgn",
                format!("{} plies", moves.len()),
                self.limits.max_moves,
            )
            .into());
        }
        let limits = check_limits(
            "",
            req.limits.as_ref(),
            &self.limits,
            Default_::Nodes(self.limits.review_nodes),
        )?;
        let mut positions = Vec::with_capacity(moves.len() + 1);
        let mut keys = Vec::with_capacity(moves.len() + 1);
        let mut pos = game.start.clone();
        for &m in &moves {
            positions.push(pos.clone());
            keys.push(pos.zobrist());
            pos.play_unchecked(m);
        }
        positions.push(pos);
        let mut values: Vec<Option<PositionValue>> =
            positions.iter().map(PositionValue::terminal).collect();
        // Walk the game backwards in fixed chunks, each with a table of its own: later
        // positions fill the table with what the earlier ones will need, and no chunk depends
        // on another's timing.
        let work: Vec<(usize, SearchJob)> = (0..positions.len())
            .rev()
            .filter(|&i| values[i].is_none())
            .map(|i| {
                let job = SearchJob {
                    position: positions[i].clone(),
                    history: keys[..i].to_vec(),
                    limits: limits.clone(),
                    multipv: 2,
                };
                (i, job)
            })
            .collect();
        let total = work.len();
        let mut chunks: VecDeque<Vec<(usize, SearchJob)>> = VecDeque::new();
        let mut work = work.into_iter().peekable();
        while work.peek().is_some() {
            chunks.push_back(work.by_ref().take(REVIEW_CHUNK).collect());
        }
        let started = Instant::now();
        let cancel = Cancel::new();
        let guard = cancel.guard();
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.spread(
            chunks,
            Some(self.limits.hash_mb),
            &cancel,
            move |index: usize, _, result| {
                let nodes = result.lines.first().map_or(0, |l| l.nodes);
                tx.send((index, PositionValue::Lines(result.lines), nodes))
                    .is_ok()
            },
        )?;
        let mut nodes = 0;
        let mut received = 0;
        while let Some((i, value, n)) = rx.recv().await {
            values[i] = Some(value);
            nodes += n;
            received += 1;
        }
        guard.disarm();
        if received < total {
            return Err(if cancel.is_cancelled() {
                cancelled()
            } else {
                worker_gone()
            });
        }
        let values: Vec<PositionValue> = values
            .into_iter()
            .map(|v| v.unwrap_or(PositionValue::Terminal(Score::Cp(0))))
            .collect();
        let time_ms = started.elapsed().as_millis() as u64;
        Ok(Response::new(build_response(
            &game, &positions, &values, nodes, time_ms,
        )))
    }

    async fn evaluate_positions(
        &self,
        request: Request<v1::EvaluatePositionsRequest>,
    ) -> Result<Response<v1::EvaluatePositionsResponse>, Status> {
        let req = request.into_inner();
        if req.fens.is_empty() {
            return Err(FieldViolation::new("fens", "no positions to evaluate").into());
        }
        if req.fens.len() > self.limits.max_batch {
            return Err(over_limit(
                "fens",
                format!("{} positions", req.fens.len()),
                self.limits.max_batch,
            )
            .into());
        }
        let mut positions = Vec::with_capacity(req.fens.len());
        for (i, fen) in req.fens.iter().enumerate() {
            // "" is the start position, as everywhere else (position_from_fen).
            positions.push(position_from_fen(&format!("fens[{i}]"), fen)?);
        }
        let terminal: Vec<Option<PositionValue>> =
            positions.iter().map(PositionValue::terminal).collect();
        let scores = match self.pool.config.network() {
            Some(net) if self.pool.config.backend.is_batched() => {
                // One bulk request into a worker's next batch.
                let open: Vec<Position> = positions
                    .iter()
                    .zip(&terminal)
                    .filter(|(_, t)| t.is_none())
                    .map(|(p, _)| p.clone())
                    .collect();
                let permit = self.pool.admit()?;
                let (tx, rx) = oneshot::channel();
                let net = net.clone();
                self.pool.submit(Box::new(move |_: &mut Engines| {
                    let _permit = permit;
                    let _ = tx.send(batched::evaluate_many(&net, &open));
                }))?;
                rx.await.map_err(|_| worker_gone())?
            }
            _ => {
                let mut eval = self.pool.config.eval.make();
                positions
                    .iter()
                    .zip(&terminal)
                    .filter(|(_, t)| t.is_none())
                    .map(|(p, _)| eval.evaluate(p))
                    .collect()
            }
        };
        let mut scores = scores.into_iter();
        let evaluations = terminal
            .iter()
            .map(|t| {
                let score = match t {
                    Some(t) => t.score(),
                    None => Score::Cp(scores.next().unwrap_or(0)),
                };
                v1::PositionEvaluation {
                    score: Some(score_to_proto(score)),
                    wdl: Some(wdl_to_proto(score.wdl())),
                }
            })
            .collect::<Vec<_>>();
        self.pool
            .metrics
            .evaluations
            .inc_by(evaluations.len() as u64);
        Ok(Response::new(v1::EvaluatePositionsResponse {
            evaluations,
            evaluator: evaluator_name(&self.pool.config.eval),
        }))
    }
}
