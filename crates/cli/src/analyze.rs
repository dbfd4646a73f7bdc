//! `chess analyze` and `chess review`: the engine through the gateway's
//! `chess.v1.AnalysisService`.
//!
//! ```text
//! chess analyze                                   the start position, one second
//! chess analyze 'FEN' --depth 16 --multipv 3      three lines to depth 16
//! chess analyze 'FEN' --moves e4 e5 --stream      each depth as it completes
//! chess review game.pgn                           judgements, accuracy, ACPL
//! chess review game.pgn --annotated out.pgn       and the annotated game
//! ```

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::time::Duration;

use chess_proto::v1::{
    AnalysisLine, AnalyzeRequest, AnalyzeResponse, PlayerReview, ReviewGameRequest, Score,
    SearchLimits, score,
};
use clap::Args;

use crate::client::{Client, ClientArgs};
use crate::error::{CliError, CliResult};
use crate::input::read_bytes;
use crate::show::{opening_text, score_text};

/// Time past the search's own limit that the call's deadline allows for the answer.
const DEADLINE_SLACK: Duration = Duration::from_secs(10);

#[derive(Debug, Args)]
pub struct SearchLimitArgs {
    /// Search to this depth (plies).
    #[arg(long, value_name = "PLIES")]
    depth: Option<u32>,
    /// Search about this many nodes.
    #[arg(long, value_name = "N")]
    nodes: Option<u64>,
    /// Search for this many milliseconds (with no limit at all, the server's default: 1 s).
    #[arg(long = "time", value_name = "MS")]
    time_ms: Option<u64>,
    /// Look for a mate in this many moves.
    #[arg(long, value_name = "MOVES")]
    mate: Option<u32>,
}

impl SearchLimitArgs {
    fn to_proto(&self) -> SearchLimits {
        SearchLimits {
            depth: self.depth.unwrap_or(0),
            nodes: self.nodes.unwrap_or(0),
            time_ms: self.time_ms.unwrap_or(0),
            mate: self.mate.unwrap_or(0),
        }
    }

    /// The deadline the call needs: the search time plus slack.
    fn deadline(&self, fallback: Duration) -> Duration {
        self.time_ms
            .map_or(fallback, Duration::from_millis)
            .saturating_add(DEADLINE_SLACK)
    }
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A FEN (quoted or not; default: the standard start position) and/or the moves played
    /// from it first, in any notation, move numbers allowed: `chess analyze e4 e5 Nf3`,
    /// `chess analyze "FEN" Kh2`, `chess analyze 1.e4 e5 2.Nf3`.
    #[arg(value_name = "FEN|MOVE")]
    position: Vec<String>,
    /// Moves played from the position first (the same as giving them after the FEN).
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    #[command(flatten)]
    limits: SearchLimitArgs,
    /// Principal variations to show (1 to 16).
    #[arg(long, value_name = "K", default_value_t = 1)]
    multipv: u32,
    /// Print each depth's lines as the search completes it.
    #[arg(long)]
    stream: bool,
    /// Write the lines' moves in UCI instead of SAN.
    #[arg(long)]
    uci: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The PGN file.
    #[arg(value_name = "FILE.pgn")]
    file: PathBuf,
    /// Which game of the file, counting from 1.
    #[arg(long, value_name = "N", default_value_t = 1)]
    game: u32,
    #[command(flatten)]
    limits: SearchLimitArgs,
    /// Also write the annotated game (judgements as NAGs, evaluations and better lines) to
    /// this file; `-` for standard output.
    #[arg(long, value_name = "FILE")]
    annotated: Option<PathBuf>,
}

pub fn run_analyze(args: AnalyzeArgs, client: &ClientArgs) -> CliResult {
    crate::client::block_on(async move {
        let client = Client::connect(client).await?;
        let (fen, mut moves) = crate::input::fen_and_moves(&args.position);
        moves.extend(crate::input::move_words(&args.moves));
        let request = AnalyzeRequest {
            fen: fen.unwrap_or_default(),
            moves,
            limits: Some(args.limits.to_proto()),
            multipv: args.multipv,
        };
        let deadline = args.limits.deadline(Duration::from_secs(1));
        let mut analysis = client.analysis();
        let mut stdout = io::stdout().lock();
        if args.stream {
            let mut stream = analysis
                .analyze_stream(client.request_at_least(request, deadline))
                .await
                .map_err(|s| client.error(&s))?
                .into_inner();
            while let Some(message) = stream.message().await.map_err(|s| client.error(&s))? {
                if message.done {
                    stdout.write_all(summary(&message, args.uci).as_bytes())?;
                } else {
                    stdout.write_all(lines_text(&message.lines, args.uci).as_bytes())?;
                }
                stdout.flush()?;
            }
        } else {
            let answer = analysis
                .analyze(client.request_at_least(request, deadline))
                .await
                .map_err(|s| client.error(&s))?
                .into_inner();
            stdout.write_all(lines_text(&answer.lines, args.uci).as_bytes())?;
            stdout.write_all(summary(&answer, args.uci).as_bytes())?;
            stdout.flush()?;
        }
        Ok(())
    })
}

fn lines_text(lines: &[AnalysisLine], uci: bool) -> String {
    let mut out = String::new();
    for l in lines {
        let pv: Vec<&str> =
            l.pv.iter()
                .map(|m| if uci { m.uci.as_str() } else { m.san.as_str() })
                .collect();
        let wdl = l
            .wdl
            .map(|w| format!(" wdl {}/{}/{}", w.win, w.draw, w.loss))
            .unwrap_or_default();
        writeln!(
            out,
            "depth {:>2}/{:<2} multipv {} score {:>6}{wdl} nodes {} nps {} time {} ms  {}",
            l.depth,
            l.seldepth,
            l.multipv,
            score_text(l.score.as_ref()),
            l.nodes,
            l.nps,
            l.time_ms,
            pv.join(" ")
        )
        .ok();
    }
    out
}

fn summary(answer: &AnalyzeResponse, uci: bool) -> String {
    let best = answer
        .best_move
        .as_ref()
        .map(|m| if uci { m.uci.clone() } else { m.san.clone() })
        .unwrap_or_else(|| "(none: no legal move)".to_owned());
    let score = answer
        .lines
        .first()
        .map(|l| score_text(l.score.as_ref()))
        .unwrap_or_default();
    format!("bestmove {best} {score}\n")
}

pub fn run_review(args: ReviewArgs, client: &ClientArgs) -> CliResult {
    if args.game == 0 {
        return Err(CliError::usage("--game counts from 1"));
    }
    let bytes = read_bytes(&args.file)?;
    let pgn = String::from_utf8(bytes).map_err(|e| {
        CliError::failure(format!(
            "{:?} is not UTF-8 text (invalid byte at offset {})",
            args.file.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    // The review keeps the game's result as written: say so when the moves contradict it.
    if let Some(warning) = result_contradiction(&pgn, args.game) {
        eprintln!("warning: {warning}");
    }
    crate::client::block_on(async move {
        let client = Client::connect(client).await?;
        let request = ReviewGameRequest {
            pgn,
            game_index: args.game - 1,
            limits: Some(args.limits.to_proto()),
        };
        // A review searches every position: give it time.
        let deadline = Duration::from_secs(600);
        let review = client
            .analysis()
            .review_game(client.request_at_least(request, deadline))
            .await
            .map_err(|s| client.error(&s))?
            .into_inner();
        let mut out = String::new();
        let opening = opening_text(review.opening.as_ref());
        writeln!(out, "opening: {opening}").ok();
        for m in &review.moves {
            if m.symbol.is_empty() {
                continue;
            }
            let mover = m.r#move.as_ref().map_or("?", |mv| mv.san.as_str());
            let number = m.ply.div_ceil(2);
            let white_moved = m.ply % 2 == 1;
            let dots = if white_moved { "." } else { "..." };
            // Scores from White's side, as the web app and the annotated PGN give them; a
            // move that mates ends the game and has no score after it.
            let played = if mover.ends_with('#') {
                "mate".to_owned()
            } else {
                score_text(white_view(m.played_score.as_ref(), white_moved).as_ref())
            };
            write!(out, "{number}{dots}{mover}{:<3} {played:>6} ", m.symbol).ok();
            match &m.best_move {
                Some(best) => {
                    let line: Vec<&str> = m.best_line.iter().map(|b| b.san.as_str()).collect();
                    writeln!(
                        out,
                        "best {} {} (loses {:.0}% of the expected score): {}",
                        best.san,
                        score_text(white_view(m.best_score.as_ref(), white_moved).as_ref()),
                        m.expected_score_loss * 100.0,
                        line.join(" ")
                    )
                    .ok();
                }
                None => writeln!(out).ok().unwrap_or(()),
            }
        }
        for p in [&review.white, &review.black].into_iter().flatten() {
            out.push_str(&player_text(p));
        }
        writeln!(
            out,
            "{} plies, {} nodes in {:.1} s",
            review.moves.len(),
            review.nodes,
            review.time_ms as f64 / 1000.0
        )
        .ok();
        match args.annotated.as_deref() {
            Some(path) if path.as_os_str() == "-" => {
                out.push('\n');
                out.push_str(&review.annotated_pgn);
            }
            Some(path) => std::fs::write(path, &review.annotated_pgn).map_err(|e| {
                CliError::failure(format!("cannot write {:?}: {e}", path.display()))
            })?,
            None => {}
        }
        let mut stdout = io::stdout().lock();
        stdout.write_all(out.as_bytes())?;
        stdout.flush()?;
        Ok(())
    })
}

/// When game `number` (from 1) of `pgn` ends in a position that decides the result
/// (checkmate, stalemate, a dead position, fivefold repetition, the seventy-five-move rule)
/// and its Result tag or the result after its moves says otherwise, what to tell the user.
fn result_contradiction(pgn: &str, number: u32) -> Option<String> {
    let game = chess_pgn::read_games(pgn.as_bytes())
        .nth(number as usize - 1)?
        .ok()?;
    let mut played = chess_rules::Game::new(game.start.clone());
    for m in game.mainline() {
        played.play(m).ok()?;
    }
    let outcome = played.outcome()?;
    let claims = [
        ("Result tag", game.tag("Result").map(str::trim)),
        ("result after the moves", game.result.map(|r| r.as_str())),
    ];
    let (what, said) = claims.into_iter().find_map(|(what, said)| {
        said.filter(|s| *s != "*" && *s != outcome.result())
            .map(|s| (what, s))
    })?;
    Some(format!(
        "game {number}: its {what} says {said}, but the final position is {outcome}; the review \
         keeps the result as written"
    ))
}

/// A score from the mover's side turned to White's.
fn white_view(score: Option<&Score>, white_moved: bool) -> Option<Score> {
    let mut s = *score?;
    if !white_moved {
        s.value = s.value.map(|v| match v {
            score::Value::Centipawns(cp) => score::Value::Centipawns(-cp),
            score::Value::MateIn(n) => score::Value::MateIn(-n),
        });
    }
    Some(s)
}

fn player_text(p: &PlayerReview) -> String {
    let side = if p.color == chess_proto::v1::Color::White as i32 {
        "White"
    } else {
        "Black"
    };
    let name = if p.name.is_empty() || p.name == "?" {
        String::new()
    } else {
        format!(" ({})", p.name)
    };
    let counts = [
        (p.brilliant, "brilliant", "brilliant"),
        (p.good, "good", "good"),
        (p.interesting, "interesting", "interesting"),
        (p.inaccuracies, "inaccuracy", "inaccuracies"),
        (p.mistakes, "mistake", "mistakes"),
        (p.blunders, "blunder", "blunders"),
    ]
    .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .join(", ");
    format!(
        "{side}{name}: accuracy {:.1}%, average centipawn loss {:.0}, {} {}: {counts}\n",
        p.accuracy,
        p.average_centipawn_loss,
        p.moves,
        if p.moves == 1 { "move" } else { "moves" },
    )
}
