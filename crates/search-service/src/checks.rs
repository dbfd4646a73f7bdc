//! The checks of a request against the service's limits: each turns the wire's request into
//! the search to run, or into `INVALID_ARGUMENT` naming the offending field.

use std::fmt::Display;

use chess_proto::FieldViolation;
use chess_proto::v1;
use chess_rules::{Game, Outcome, Position};
use chess_search::{SearchLimits, SplitMix64};
use chess_wire::{move_from_text, position_from_fen};
use tonic::Status;

use crate::Config;
use crate::jobs::SearchJob;
use chess_search::{Level, MAX_ELO, MIN_ELO};

/// The limits the service enforces.
#[derive(Clone, Debug)]
pub struct RequestLimits {
    pub max_depth: u32,
    pub max_time_ms: u64,
    pub max_nodes: u64,
    pub default_time_ms: u64,
    pub max_multipv: u32,
    pub max_moves: usize,
    pub max_batch: usize,
    pub max_pgn_bytes: usize,
    pub review_nodes: u64,
    pub call_parallelism: usize,
    pub hash_mb: usize,
}

impl RequestLimits {
    pub fn from_config(c: &Config) -> RequestLimits {
        RequestLimits {
            max_depth: c.max_depth,
            max_time_ms: c.max_time_ms.max(1),
            max_nodes: c.max_nodes.max(1),
            default_time_ms: c.default_time_ms.clamp(1, c.max_time_ms.max(1)),
            max_multipv: c.max_multipv,
            max_moves: c.max_moves,
            max_batch: c.max_batch.max(1),
            max_pgn_bytes: c.max_pgn_bytes,
            review_nodes: c.review_nodes.max(1),
            call_parallelism: c.call_parallelism,
            hash_mb: c.hash_mb as usize,
        }
    }
}

/// The violation every limit check reports: `"<asked> is over the limit of <limit>"` on
/// `field`.
pub fn over_limit(
    field: impl Into<String>,
    asked: impl Display,
    limit: impl Display,
) -> FieldViolation {
    FieldViolation::new(field, format!("{asked} is over the limit of {limit}"))
}

/// A position given as FEN plus moves from it, with the keys of the positions before the last.
#[derive(Debug)]
pub struct Placed {
    pub position: Position,
    pub history: Vec<u64>,
    pub fen: String,
    /// How the game ended, when a rule that needs no claim ended it in `position`.
    pub outcome: Option<Outcome>,
}

pub fn place(
    prefix: &str,
    fen: &str,
    moves: &[String],
    max_moves: usize,
) -> Result<Placed, FieldViolation> {
    let mut position = position_from_fen(&format!("{prefix}fen"), fen)?;
    if moves.len() > max_moves {
        return Err(over_limit(
            format!("{prefix}moves"),
            format!("{} moves", moves.len()),
            max_moves,
        ));
    }
    let mut history = Vec::with_capacity(moves.len());
    let mut game = Game::new(position.clone());
    for (i, text) in moves.iter().enumerate() {
        let field = format!("{prefix}moves[{i}]");
        if let Some(outcome) = game.outcome() {
            return Err(FieldViolation::new(
                field,
                format!("the game is already over ({outcome}): no move can follow"),
            ));
        }
        let m = move_from_text(&field, &position, text, false)?;
        history.push(position.zobrist());
        position.play_unchecked(m);
        // Legal: move_from_text read it in this position.
        let _ = game.play(m);
    }
    let fen = position.fen();
    Ok(Placed {
        position,
        history,
        fen,
        outcome: game.outcome(),
    })
}

/// What a call gets when it sets no limit at all.
#[derive(Clone, Copy, Debug)]
pub enum Default_ {
    Time(u64),
    Nodes(u64),
}

pub fn check_limits(
    prefix: &str,
    limits: Option<&v1::SearchLimits>,
    cfg: &RequestLimits,
    default: Default_,
) -> Result<SearchLimits, FieldViolation> {
    let l = limits.cloned().unwrap_or_default();
    let field = |name: &str| format!("{prefix}limits.{name}");
    if l.depth > cfg.max_depth {
        return Err(over_limit(
            field("depth"),
            format!("depth {}", l.depth),
            cfg.max_depth,
        ));
    }
    if l.nodes > cfg.max_nodes {
        return Err(over_limit(
            field("nodes"),
            format!("{} nodes", l.nodes),
            cfg.max_nodes,
        ));
    }
    if l.time_ms > cfg.max_time_ms {
        return Err(over_limit(
            field("time_ms"),
            format!("{} ms", l.time_ms),
            format!("{} ms", cfg.max_time_ms),
        ));
    }
    let max_mate = cfg.max_depth.div_ceil(2);
    if l.mate > max_mate {
        return Err(over_limit(
            field("mate"),
            format!("mate in {}", l.mate),
            format!("{max_mate} moves"),
        ));
    }
    let mut out = SearchLimits {
        depth: (l.depth > 0).then_some(l.depth),
        nodes: (l.nodes > 0).then_some(l.nodes),
        mate: (l.mate > 0).then_some(l.mate),
        ..SearchLimits::default()
    };
    let unset = l.depth == 0 && l.nodes == 0 && l.mate == 0 && l.time_ms == 0;
    out.movetime = Some(match (l.time_ms, unset, default) {
        (0, true, Default_::Time(ms)) => ms,
        (0, true, Default_::Nodes(n)) => {
            out.nodes = Some(n.min(cfg.max_nodes));
            cfg.max_time_ms
        }
        // Every search ends by the server's time limit, whatever else it asks for.
        (0, false, _) => cfg.max_time_ms,
        (ms, _, _) => ms,
    });
    Ok(out)
}

fn check_multipv(prefix: &str, multipv: u32, cfg: &RequestLimits) -> Result<usize, FieldViolation> {
    if multipv > cfg.max_multipv {
        return Err(over_limit(
            format!("{prefix}multipv"),
            format!("{multipv} lines"),
            cfg.max_multipv,
        ));
    }
    Ok(multipv.max(1) as usize)
}

/// A checked analysis: the search to run, the FEN searched and, when the game is already
/// over there, how it ended (then there is nothing to search).
pub fn check_analyze(
    prefix: &str,
    req: &v1::AnalyzeRequest,
    cfg: &RequestLimits,
) -> Result<(SearchJob, String, Option<Outcome>), FieldViolation> {
    let placed = place(prefix, &req.fen, &req.moves, cfg.max_moves)?;
    let limits = check_limits(
        prefix,
        req.limits.as_ref(),
        cfg,
        Default_::Time(cfg.default_time_ms),
    )?;
    let multipv = check_multipv(prefix, req.multipv, cfg)?;
    Ok((
        SearchJob {
            position: placed.position,
            history: placed.history,
            limits,
            multipv,
        },
        placed.fen,
        placed.outcome,
    ))
}

/// A checked BestMove request: the search to run, and the level that chooses among its lines
/// (none at full strength; its `elo` is the level played) with the seed of its choice.
#[derive(Debug)]
pub struct BestMoveJob {
    pub job: SearchJob,
    pub level: Option<Level>,
    pub seed: u64,
}

pub fn check_best_move(
    req: &v1::BestMoveRequest,
    cfg: &RequestLimits,
) -> Result<BestMoveJob, Status> {
    let placed = place("", &req.fen, &req.moves, cfg.max_moves)?;
    let strength = req.strength.unwrap_or_default();
    if strength.elo != 0 && !(MIN_ELO..=MAX_ELO).contains(&strength.elo) {
        return Err(FieldViolation::new(
            "strength.elo",
            format!(
                "level {} is outside {MIN_ELO}..={MAX_ELO} (0 for full strength)",
                strength.elo
            ),
        )
        .into());
    }
    if strength.max_depth > cfg.max_depth {
        return Err(over_limit(
            "strength.max_depth",
            format!("depth {}", strength.max_depth),
            cfg.max_depth,
        )
        .into());
    }
    if strength.max_nodes > cfg.max_nodes {
        return Err(over_limit(
            "strength.max_nodes",
            format!("{} nodes", strength.max_nodes),
            cfg.max_nodes,
        )
        .into());
    }
    let mut limits = check_limits(
        "",
        req.limits.as_ref(),
        cfg,
        Default_::Time(cfg.default_time_ms),
    )?;
    if let Some(outcome) = placed.outcome {
        return Err(Status::failed_precondition(format!(
            "no move to play: the game is over, {outcome} ({})",
            placed.fen
        )));
    }
    let cap = |current: Option<u64>, cap: u64| match (current, cap) {
        (c, 0) => c,
        (None, cap) => Some(cap),
        (Some(c), cap) => Some(c.min(cap)),
    };
    limits.depth =
        cap(limits.depth.map(u64::from), u64::from(strength.max_depth)).map(|d| d as u32);
    limits.nodes = cap(limits.nodes, strength.max_nodes);
    let level = (strength.elo != 0).then(|| Level::new(strength.elo));
    let seed = match strength.seed {
        0 => SplitMix64::random_seed(),
        s => s,
    };
    let mut multipv = 1;
    if let Some(level) = level {
        limits = level.limit(limits);
        multipv = level.lines_for(seed);
    }
    let job = SearchJob {
        position: placed.position,
        history: placed.history,
        limits,
        multipv,
    };
    Ok(BestMoveJob { job, level, seed })
}
