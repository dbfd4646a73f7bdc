//! Self-play at a fixed node count per move, with the evaluation `--eval-file` names.

use std::path::PathBuf;
use std::time::Instant;

use chess_rules::{Color, Game, Move, Position};
use chess_search::batched::Tasks;
use chess_search::{Engine, EngineOptions, EvalSource, Score, SearchLimits, StopHandle};

use crate::Error;
use crate::data::{self, GameRecord, GameResult, Record};
use crate::rng::{Rng, game_seed};

/// Settings of a `datagen` run (also its command line).
#[derive(Clone, Debug, clap::Args)]
pub struct DatagenConfig {
    #[arg(long)]
    pub out: PathBuf,
    /// Games the file should hold at the end (those already there count).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub games: u64,
    /// Search nodes per move.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Random legal plies that open each game.
    #[arg(long, default_value_t = 8)]
    pub random_plies: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Progress line every this many games.
    #[arg(long, default_value_t = 10)]
    pub report_every: u64,
    /// The evaluation the games are played and scored with: `hand` (the hand-written
    /// evaluation), `default` (the embedded network) or a network file.
    #[arg(long, default_value = "default")]
    pub eval_file: String,
}

/// Adjudication: a side this far ahead (centipawns, or any mate score) for
/// [`WIN_PLIES`] consecutive plies wins.
pub const WIN_SCORE: i32 = 2000;
pub const WIN_PLIES: u32 = 4;
/// Plies after the opening before a game is called a draw.
pub const MAX_PLIES: usize = 200;

/// What a run did.
#[derive(Clone, Copy, Debug)]
pub struct DatagenSummary {
    pub games_before: u64,
    pub games_played: u64,
    pub positions: u64,
    pub seconds: f64,
}

/// Stack of the thread that plays the games: the search recurses on it (as deep as a
/// search thread of `Engine::go` may).
const PLAY_STACK_BYTES: usize = 64 << 20;

/// Plays the games `out` still lacks and appends each as it ends.
///
/// The games are played on one thread of their own, each move searched on it
/// (`Engine::search_inline`, which finds exactly what `Engine::search` does with one thread,
/// and the engine here has one): `Engine::search` starts a thread with a fresh 64 MiB stack
/// for every move, which at 2,000 nodes a move cost 16-21 % of the positions a second.
pub fn run(cfg: &DatagenConfig) -> Result<DatagenSummary, Error> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("datagen".into())
            .stack_size(PLAY_STACK_BYTES)
            .spawn_scoped(s, || play_all(cfg))
            .map_err(|e| {
                Error::Usage(format!("cannot start the thread that plays the games: {e}"))
            })?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn play_all(cfg: &DatagenConfig) -> Result<DatagenSummary, Error> {
    let (mut out, existing) = data::open_for_append(&cfg.out)?;
    let before = existing.games.len() as u64;
    if existing.torn_bytes > 0 {
        eprintln!(
            "datagen: cut off {} bytes of a torn last game in {}",
            existing.torn_bytes,
            cfg.out.display()
        );
    }
    eprintln!(
        "datagen: {} holds {before} games; playing {} more at {} nodes per move",
        cfg.out.display(),
        cfg.games.saturating_sub(before),
        cfg.nodes
    );
    let source = EvalSource::from_option(&cfg.eval_file)
        .map_err(|e| Error::Usage(format!("--eval-file {:?}: {e}", cfg.eval_file)))?;
    eprintln!("datagen: evaluation: {}", source.describe());
    let options = EngineOptions {
        hash_mb: 4,
        threads: 1,
        ..EngineOptions::default()
    };
    let mut engine = Engine::with_source(options, source);
    let start = Instant::now();
    let mut positions = 0u64;
    let mut played = 0u64;
    for index in before..cfg.games {
        let game = play_game(&mut engine, cfg, game_seed(cfg.seed, index));
        out.append(&game)?;
        positions += game.positions.len() as u64;
        played += 1;
        if played.is_multiple_of(cfg.report_every.max(1)) || index + 1 == cfg.games {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "datagen: games {}/{} positions {positions} ({:.0} positions/s, {:.2} games/s)",
                index + 1,
                cfg.games,
                positions as f64 / secs.max(1e-9),
                played as f64 / secs.max(1e-9),
            );
        }
    }
    Ok(DatagenSummary {
        games_before: before,
        games_played: played,
        positions,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A move that changes material: not quiet.
fn is_noisy(pos: &Position, m: Move) -> bool {
    m.promotion().is_some()
        || m.is_en_passant()
        || (!m.is_castle() && pos.piece_at(m.to()).is_some())
}

/// An opening of `plies` random legal moves that does not end the game; retried with fresh
/// random numbers until one does not.
fn random_opening(rng: &mut Rng, plies: u32) -> Game {
    loop {
        let mut game = Game::new(Position::startpos());
        let mut ok = true;
        for _ in 0..plies {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                ok = false;
                break;
            }
            let m = moves.as_slice()[rng.below(moves.len())];
            game.play(m).expect("generated moves are legal");
        }
        if ok && game.outcome().is_none() {
            return game;
        }
    }
}

fn play_game(engine: &mut Engine, cfg: &DatagenConfig, seed: u64) -> GameRecord {
    let mut rng = Rng::new(seed);
    let mut game = random_opening(&mut rng, cfg.random_plies);
    engine.new_game();
    let mut history: Vec<u64> = (0..game.ply())
        .map(|i| game.position_at(i).unwrap().zobrist())
        .collect();
    let mut records = Vec::new();
    let mut streak: (Option<Color>, u32) = (None, 0);
    let mut plies = 0;
    let result = loop {
        if let Some(outcome) = game.outcome() {
            break match outcome.winner() {
                Some(Color::White) => GameResult::WhiteWin,
                Some(Color::Black) => GameResult::BlackWin,
                None => GameResult::Draw,
            };
        }
        if game.claimable_draw().is_some() || plies >= MAX_PLIES {
            break GameResult::Draw;
        }
        let pos = game.position().clone();
        let found = engine.search_inline(
            &pos,
            &history,
            SearchLimits::nodes(cfg.nodes),
            &StopHandle::new(),
            |_| {},
            &Tasks,
        );
        let Some(best) = found.best_move else {
            break GameResult::Draw;
        };
        let score = found.lines.first().map_or(Score::Cp(0), |l| l.score);
        let white = if pos.turn() == Color::White { 1 } else { -1 };
        let cp_white = match score {
            Score::Cp(cp) => Some(cp * white),
            Score::Mate(_) => None,
        };
        let leader = match score {
            Score::Mate(n) => Some(if n > 0 { pos.turn() } else { !pos.turn() }),
            Score::Cp(cp) if cp.abs() > WIN_SCORE => {
                Some(if cp > 0 { pos.turn() } else { !pos.turn() })
            }
            Score::Cp(_) => None,
        };
        streak = match (leader, streak) {
            (Some(c), (Some(s), n)) if c == s => (Some(c), n + 1),
            (Some(c), _) => (Some(c), 1),
            (None, _) => (None, 0),
        };
        if let (Some(winner), n) = streak
            && n >= WIN_PLIES
        {
            break if winner == Color::White {
                GameResult::WhiteWin
            } else {
                GameResult::BlackWin
            };
        }
        if let Some(cp) = cp_white
            && !pos.is_check()
            && !is_noisy(&pos, best)
        {
            records.push(Record {
                fen: pos.fen(),
                score: data::clamp_score(cp),
            });
        }
        history.push(pos.zobrist());
        game.play(best).expect("the engine plays legal moves");
        plies += 1;
    };
    GameRecord {
        result,
        positions: records,
    }
}
