//! `chess-match`: engine-versus-engine matches over UCI with a sequential probability ratio
//! test, for proving that a change to search or evaluation gains strength.
//!
//! Games are played in pairs: both games of a pair start from the same opening of the book with
//! colours swapped. Several pairs run at once (`--concurrency`), each worker with its own two
//! engine processes. After every pair the state (pentanomial counts, the pairs done) is written
//! to `--state`, so a stopped match resumes where it was (`--resume`). With `--sprt elo0,elo1`
//! the match stops as soon as the test decides (the first pair to carry the ratio past a bound
//! decides; pairs in flight then finish and count, but cannot undo it). The last line gives the
//! result.
//!
//! ```text
//! chess-match --engine target/release/chess-uci --opponent ./chess-uci-base \
//!     --tc 10+0.1 --sprt 0,5 --concurrency 2 --pairs 5000 --pgn sprt.pgn --state sprt.json
//! ```

#![forbid(unsafe_code)]

mod engine;
mod game;
mod openings;
mod sprt;
mod state;

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use chess_rules::Position;
use clap::Parser;

use engine::{Engine, SearchInfo, mate_plies};
use game::{Adjudication, Control, Record};
use openings::book;
use sprt::Sprt;
use state::State;

const DEFAULT_BOOK: &str = include_str!("../books/default.txt");

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Engine matches over UCI with an SPRT: game pairs, concurrency, adjudication, resume"
)]
struct Args {
    /// The engine under test (a command line).
    #[arg(long)]
    engine: String,
    /// The baseline or opponent (a command line).
    #[arg(long)]
    opponent: String,
    /// NAME=VALUE, a UCI option of the engine under test (repeatable).
    #[arg(long = "engine-option", value_name = "NAME=VALUE")]
    engine_options: Vec<String>,
    /// NAME=VALUE, a UCI option of the opponent (repeatable).
    #[arg(long = "opponent-option", value_name = "NAME=VALUE")]
    opponent_options: Vec<String>,
    /// BASE+INC in seconds (`10+0.1`), `nodes=N` per move, or `movetime=MS`.
    #[arg(long, default_value = "10+0.1")]
    tc: String,
    /// The opponent's own control, of the same kind as --tc (default: --tc). Odds, or a
    /// fair comparison of two engines of different speeds at fixed node counts
    /// (`--tc nodes=10000 --opponent-tc nodes=11000` for an opponent 10 % faster).
    #[arg(long)]
    opponent_tc: Option<String>,
    /// Game pairs at most.
    #[arg(long, default_value_t = 500)]
    pairs: u64,
    /// Pairs played at once (each with two engine processes).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// `elo0,elo1[,alpha[,beta]]`: stop when the test decides.
    #[arg(long)]
    sprt: Option<String>,
    /// Openings, one per line: UCI moves from the start position, or a FEN; `#` comments.
    /// The default is a built-in list of 50 open, semi-open, closed and flank openings.
    #[arg(long)]
    book: Option<PathBuf>,
    /// Random legal plies added to each pair's opening (both games of a pair get the same),
    /// so that a match longer than the book, above all at a fixed node count, does not
    /// replay the same games.
    #[arg(long, default_value_t = 0)]
    random_plies: u32,
    /// The seed of those random plies.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the games go (appended).
    #[arg(long, default_value = "match.pgn")]
    pgn: PathBuf,
    /// The checkpoint written after every pair.
    #[arg(long, default_value = "match.json")]
    state: PathBuf,
    /// Carry on from `--state` instead of starting afresh.
    #[arg(long)]
    resume: bool,
    /// Adjudicate a draw after this move when both engines score within --draw-cp for
    /// --draw-moves moves each (0 turns it off).
    #[arg(long, default_value_t = 8)]
    draw_moves: u32,
    #[arg(long, default_value_t = 40)]
    draw_after: u32,
    #[arg(long, default_value_t = 10)]
    draw_cp: i32,
    /// Adjudicate a win when both engines agree on --win-cp or more for --win-moves moves
    /// each (0 turns it off).
    #[arg(long, default_value_t = 4)]
    win_moves: u32,
    #[arg(long, default_value_t = 1000)]
    win_cp: i32,
}

fn options(items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|i| {
            i.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| format!("option {i:?} is not NAME=VALUE"))
        })
        .collect()
}

/// A move's comment as cutechess writes it, score (pawns, or `M` and moves to mate, from
/// the mover's side) / depth and seconds, then the nodes: `{+0.35/12 0.412s, 812345 nodes}`.
fn move_comment(info: &SearchInfo) -> String {
    let mut s = String::from("{");
    if let Some(v) = info.score {
        if let Some(plies) = mate_plies(v) {
            let moves = (plies + 1) / 2;
            s.push_str(&format!("{}M{moves}", if v > 0 { '+' } else { '-' }));
        } else {
            s.push_str(&format!("{:+.2}", f64::from(v) / 100.0));
        }
        if let Some(d) = info.depth {
            s.push_str(&format!("/{d}"));
        }
        s.push(' ');
    }
    s.push_str(&format!("{:.3}s", info.elapsed.as_secs_f64()));
    if let Some(n) = info.nodes {
        s.push_str(&format!(", {n} nodes"));
    }
    s.push('}');
    s
}

fn pgn_text(rec: &Record, white: &str, black: &str, round: u64) -> String {
    let mut s = String::new();
    let start = Position::from_fen(&rec.start_fen).unwrap_or_else(|_| Position::startpos());
    s.push_str("[Event \"chess-match\"]\n");
    s.push_str(&format!(
        "[Round \"{round}\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n"
    ));
    s.push_str(&format!("[Result \"{}\"]\n", rec.result));
    if start != Position::startpos() {
        s.push_str(&format!("[SetUp \"1\"]\n[FEN \"{}\"]\n", rec.start_fen));
    }
    s.push_str(&format!(
        "[Termination \"{}\"]\n\n",
        rec.reason.replace('"', "'")
    ));
    let mut pos = start;
    let mut line = String::new();
    for (i, m) in rec.moves.iter().enumerate() {
        let Ok(mv) = pos.parse_uci(m) else { break };
        if pos.turn() == chess_rules::Color::White {
            line.push_str(&format!("{}. ", pos.fullmoves()));
        } else if i == 0 {
            line.push_str(&format!("{}... ", pos.fullmoves()));
        }
        line.push_str(&pos.san(mv));
        line.push(' ');
        if let Some(Some(info)) = rec.info.get(i) {
            line.push_str(&move_comment(info));
            line.push(' ');
        }
        pos.play_unchecked(mv);
        if line.len() > 70 {
            s.push_str(line.trim_end());
            s.push('\n');
            line.clear();
        }
    }
    line.push_str(rec.result);
    s.push_str(&line);
    s.push_str("\n\n");
    s
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

fn run(args: Args) -> Result<(), String> {
    let control = Control::parse(&args.tc)?;
    let opponent_control = match &args.opponent_tc {
        Some(tc) => Control::parse(tc)?,
        None => control,
    };
    if !control.same_kind(opponent_control) {
        return Err(format!(
            "--opponent-tc {:?} is not of the same kind as --tc {:?} (clock, nodes= or movetime=)",
            args.opponent_tc.as_deref().unwrap_or_default(),
            args.tc
        ));
    }
    let sprt = args.sprt.as_deref().map(Sprt::parse).transpose()?;
    let engine_opts = options(&args.engine_options)?;
    let opponent_opts = options(&args.opponent_options)?;
    let book_text = match &args.book {
        Some(p) => fs::read_to_string(p).map_err(|e| format!("book {}: {e}", p.display()))?,
        None => DEFAULT_BOOK.to_owned(),
    };
    let openings = Arc::new(book(&book_text)?);
    if args.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    let adjudication = Adjudication {
        draw_after: args.draw_after,
        draw_moves: args.draw_moves,
        draw_cp: args.draw_cp,
        win_moves: args.win_moves,
        win_cp: args.win_cp,
    };
    let mut setup = format!(
        "{} {:?} vs {} {:?}, {}, sprt {:?}",
        args.engine, args.engine_options, args.opponent, args.opponent_options, args.tc, args.sprt
    );
    if let Some(tc) = &args.opponent_tc {
        setup.push_str(&format!(", opponent {tc}"));
    }
    if args.random_plies > 0 {
        setup.push_str(&format!(
            ", {} random plies, seed {}",
            args.random_plies, args.seed
        ));
    }
    let state = if args.resume && args.state.exists() {
        let text = fs::read_to_string(&args.state)
            .map_err(|e| format!("{}: {e}", args.state.display()))?;
        let s: State = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a match state: {e}", args.state.display()))?;
        if s.setup != setup {
            return Err(format!(
                "{} is the state of another match ({}); start afresh without --resume",
                args.state.display(),
                s.setup
            ));
        }
        println!("resuming: {}", s.summary(sprt.as_ref()));
        s
    } else {
        fs::write(&args.pgn, "").map_err(|e| format!("{}: {e}", args.pgn.display()))?;
        State {
            setup,
            ..State::default()
        }
    };
    println!(
        "chess-match: {} vs {}, {}{}, {} openings{}, concurrency {}, load average {}",
        args.engine,
        args.opponent,
        args.tc,
        args.opponent_tc
            .as_ref()
            .map_or(String::new(), |tc| format!(" (the opponent {tc})")),
        openings.len(),
        if args.random_plies > 0 {
            format!(" + {} random plies (seed {})", args.random_plies, args.seed)
        } else {
            String::new()
        },
        args.concurrency,
        load_average()
    );
    // A resumed match that was decided plays no more pairs.
    let decided = state.decided.is_some();
    let state = Arc::new(Mutex::new(state));
    let next = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(decided));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut workers = Vec::new();
    for _ in 0..args.concurrency {
        let (state, next, stop, errors, openings) = (
            state.clone(),
            next.clone(),
            stop.clone(),
            errors.clone(),
            openings.clone(),
        );
        let (engine_cmd, opponent_cmd) = (args.engine.clone(), args.opponent.clone());
        let (engine_opts, opponent_opts) = (engine_opts.clone(), opponent_opts.clone());
        let (pgn_path, state_path, max_pairs) = (args.pgn.clone(), args.state.clone(), args.pairs);
        let (random_plies, seed) = (args.random_plies, args.seed);
        workers.push(thread::spawn(move || {
            let result = (|| -> Result<(), String> {
                let mut ours = Engine::start(&engine_cmd, &engine_opts)?;
                let mut theirs = Engine::start(&opponent_cmd, &opponent_opts)?;
                // Name each by its options too, so that two builds of one engine, or one engine
                // with two settings, can be told apart in the games.
                for (e, opts) in [(&mut ours, &engine_opts), (&mut theirs, &opponent_opts)] {
                    if !opts.is_empty() {
                        let list: Vec<String> =
                            opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        e.name = format!("{} ({})", e.name, list.join(", "));
                    }
                }
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(());
                    }
                    let pair = next.fetch_add(1, Ordering::SeqCst);
                    if pair >= max_pairs {
                        return Ok(());
                    }
                    if state.lock().map_err(|_| "poisoned")?.done.contains(&pair) {
                        continue;
                    }
                    let o = openings[(pair as usize) % openings.len()].extended(
                        random_plies,
                        seed,
                        pair,
                    )?;
                    let first = game::play(
                        &o.start,
                        &o.moves,
                        &mut ours,
                        &mut theirs,
                        [control, opponent_control],
                        &adjudication,
                    )?;
                    let second = game::play(
                        &o.start,
                        &o.moves,
                        &mut theirs,
                        &mut ours,
                        [opponent_control, control],
                        &adjudication,
                    )?;
                    let mut s = state.lock().map_err(|_| "poisoned")?;
                    let mut half_points = 0;
                    let mut text = String::new();
                    for (i, (rec, ours_white)) in
                        [(&first, true), (&second, false)].into_iter().enumerate()
                    {
                        let ours_points = match (rec.result, ours_white) {
                            ("1-0", true) | ("0-1", false) => 2,
                            ("1/2-1/2", _) => 1,
                            _ => 0,
                        };
                        half_points += ours_points;
                        s.wld[match ours_points {
                            2 => 0,
                            0 => 1,
                            _ => 2,
                        }] += 1;
                        let forfeit = rec.reason.contains("time forfeit")
                            || rec.reason.contains("illegal move")
                            || rec.reason.contains("did not answer")
                            || rec.reason.contains("exited");
                        if forfeit {
                            s.forfeits[usize::from(ours_points == 2)] += 1;
                        }
                        let (w, b) = if ours_white {
                            (ours.name.as_str(), theirs.name.as_str())
                        } else {
                            (theirs.name.as_str(), ours.name.as_str())
                        };
                        text.push_str(&pgn_text(rec, w, b, 2 * pair + i as u64 + 1));
                    }
                    s.penta.add(half_points);
                    s.done.insert(pair);
                    let decided = s.settle(sprt.as_ref());
                    let mut f = fs::OpenOptions::new()
                        .append(true)
                        .create(true)
                        .open(&pgn_path)
                        .map_err(|e| format!("{}: {e}", pgn_path.display()))?;
                    f.write_all(text.as_bytes())
                        .map_err(|e| format!("{}: {e}", pgn_path.display()))?;
                    let json = serde_json::to_string(&*s).map_err(|e| e.to_string())?;
                    let tmp = state_path.with_extension("tmp");
                    fs::write(&tmp, json)
                        .and_then(|()| fs::rename(&tmp, &state_path))
                        .map_err(|e| format!("{}: {e}", state_path.display()))?;
                    println!(
                        "pair {} ({}, {}): {}",
                        pair + 1,
                        first.result,
                        second.result,
                        s.summary(sprt.as_ref())
                    );
                    if decided {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
            })();
            if let Err(e) = result {
                stop.store(true, Ordering::SeqCst);
                if let Ok(mut errs) = errors.lock() {
                    errs.push(e);
                }
            }
        }));
    }
    for w in workers {
        let _ = w.join();
    }
    let s = state.lock().map_err(|_| "poisoned")?;
    let errs = errors.lock().map_err(|_| "poisoned")?;
    for e in errs.iter() {
        eprintln!("error: {e}");
    }
    println!("{}", s.verdict(sprt.as_ref(), &load_average()));
    if errs.is_empty() {
        Ok(())
    } else {
        Err("a worker stopped on an error".into())
    }
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("chess-match: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::MATE;

    #[test]
    fn move_comments_read_as_cutechess_writes_them() {
        let info = |score, depth, nodes| SearchInfo {
            score,
            depth,
            nodes,
            elapsed: Duration::from_millis(412),
        };
        let c = |i: SearchInfo| move_comment(&i);
        assert_eq!(
            c(info(Some(35), Some(12), Some(812_345))),
            "{+0.35/12 0.412s, 812345 nodes}"
        );
        assert_eq!(c(info(Some(-120), Some(3), None)), "{-1.20/3 0.412s}");
        assert_eq!(c(info(Some(0), None, None)), "{+0.00 0.412s}");
        // Mates as the runner keeps them: mate in 1 is one ply, mated in 1 two plies.
        assert_eq!(c(info(Some(MATE - 1), Some(9), None)), "{+M1/9 0.412s}");
        assert_eq!(c(info(Some(MATE - 5), Some(9), None)), "{+M3/9 0.412s}");
        assert_eq!(c(info(Some(-MATE + 2), Some(9), None)), "{-M1/9 0.412s}");
        assert_eq!(c(info(None, None, Some(7))), "{0.412s, 7 nodes}");
    }
}
