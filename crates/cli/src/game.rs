//! `chess game`: games stored by the rules service, played through the gateway.
//!
//! ```text
//! chess game new --tc 5+3 --white Ann --black Bob    the id alone on the first line
//! chess game move ID e4                              `1. e4 (e2e4)`, the new FEN, the result
//! chess game show ID [--pgn]
//! chess game watch ID                                one line per event until the game ends
//! chess game resign ID --side black
//! chess game draw ID accept|decline|claim --side white [--move Nf3]
//! chess game new --illegal-moves fide               illegal moves become fouls (FIDE 7.5)
//! chess game touch ID g1 --side white [--adjust]    touch-move; --adjust is j'adoube
//! ```

use std::fmt::Write as _;
use std::io::{self, Write as _};

use chess_proto::v1::{
    self, ClaimDrawRequest, CreateGameRequest, GameEvent, GameState, GetGameRequest,
    MakeMoveRequest, ResignRequest, RespondToDrawRequest, TouchPieceRequest, WatchGameRequest,
    game_event::Kind,
};
use chess_rules::Position;
use chess_rules_service::TimeControl;
use clap::{Args, Subcommand, ValueEnum};

use crate::client::{Client, ClientArgs};
use crate::error::{CliError, CliResult};

#[derive(Debug, Args)]
pub struct GameArgs {
    #[command(subcommand)]
    command: GameCommand,
}

#[derive(Debug, Subcommand)]
enum GameCommand {
    /// Create a game; prints its id alone on the first line, then a summary.
    New(NewArgs),
    /// Play a move for the side to move; prints the move, the new FEN and the result if the
    /// game is over.
    Move(MoveArgs),
    /// Show a game: FEN, board, moves with times, clocks, draw offer, claimable draw, outcome.
    Show(ShowArgs),
    /// Follow a game as it is played, one line per event, until it ends (or Ctrl-C).
    Watch(WatchArgs),
    /// Resign for one side.
    Resign(ResignArgs),
    /// Accept or decline the opponent's draw offer, or claim a draw (threefold repetition,
    /// fifty-move rule).
    Draw(DrawArgs),
    /// Ask the engine for the side to move's move at a playing strength; with `--play` it is
    /// made in the game (play against the engine).
    EngineMove(EngineMoveArgs),
    /// Report that the side to move touched a piece (touch-move: it must then move it, or
    /// capture it if it is the opponent's); `--adjust` announces "j'adoube".
    Touch(TouchArgs),
}

/// What happens to illegal moves in a new game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum IllegalMoves {
    /// Refused; the game is unchanged.
    Reject,
    /// FIDE 7.5: a foul; the first gives the opponent two minutes, the second loses.
    Fide,
    /// A foul; the third loses.
    ThreeStrikes,
}

impl IllegalMoves {
    fn proto(self) -> i32 {
        match self {
            IllegalMoves::Reject => v1::IllegalMoves::Reject.into(),
            IllegalMoves::Fide => v1::IllegalMoves::Fide.into(),
            IllegalMoves::ThreeStrikes => v1::IllegalMoves::ThreeStrikes.into(),
        }
    }
}

#[derive(Debug, Args)]
struct TouchArgs {
    /// The game id.
    id: String,
    /// The square of the touched piece (`g1`).
    square: String,
    /// The side touching (it must be that side's move).
    #[arg(long, value_enum)]
    side: Side,
    /// "J'adoube": only adjusting the piece; no obligation to move it.
    #[arg(long)]
    adjust: bool,
}

/// A side of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Side {
    White,
    Black,
}

impl Side {
    fn proto(self) -> i32 {
        match self {
            Side::White => v1::Color::White.into(),
            Side::Black => v1::Color::Black.into(),
        }
    }
}

#[derive(Debug, Args)]
struct NewArgs {
    /// Start position as one quoted FEN (default: the standard start position).
    #[arg(long, value_name = "FEN")]
    fen: Option<String>,
    /// Time control: minutes + increment seconds (`5+3`, `0.5+0`), or periods
    /// `moves/minutes+increment` joined by `:` (`40/90+30:30+30`). Default: no clock.
    #[arg(long, value_name = "CONTROL")]
    tc: Option<String>,
    /// White player's name.
    #[arg(long, value_name = "NAME")]
    white: Option<String>,
    /// Black player's name.
    #[arg(long, value_name = "NAME")]
    black: Option<String>,
    /// What happens to an illegal move: refused, or recorded as a foul and penalised.
    #[arg(long, value_enum, default_value_t = IllegalMoves::Reject)]
    illegal_moves: IllegalMoves,
}

#[derive(Debug, Args)]
struct MoveArgs {
    /// The game id (printed by `chess game new`).
    id: String,
    /// The move in any notation: SAN `Nf3`, UCI `g1f3`, coordinate `Ng1-f3`.
    #[arg(value_name = "MOVE")]
    mv: String,
    /// Refuse the move unless it is this side's turn.
    #[arg(long, value_enum)]
    side: Option<Side>,
    /// Refuse the move unless exactly N plies have been played (a guard against playing on a
    /// stale view of the game).
    #[arg(long, value_name = "N")]
    expect_ply: Option<u32>,
    /// Offer a draw with this move.
    #[arg(long)]
    offer_draw: bool,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// The game id.
    id: String,
    /// Print only the game's PGN.
    #[arg(long)]
    pgn: bool,
}

#[derive(Debug, Args)]
struct WatchArgs {
    /// The game id.
    id: String,
}

#[derive(Debug, Args)]
struct ResignArgs {
    /// The game id.
    id: String,
    /// The side that resigns.
    #[arg(long, value_enum)]
    side: Side,
}

#[derive(Debug, Args)]
struct EngineMoveArgs {
    /// The game id.
    id: String,
    /// Elo-like level from 800 to 3000 (default: full strength).
    #[arg(long, value_name = "ELO")]
    elo: Option<u32>,
    /// Seed for the level's randomness (the same seed gives the same move).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Thinking time in milliseconds (default: the level's budget, or 1 s at full strength).
    #[arg(long = "time", value_name = "MS")]
    time_ms: Option<u64>,
    /// Make the move in the game.
    #[arg(long)]
    play: bool,
}

/// What to do about a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DrawAction {
    /// Accept the opponent's pending offer: the game is drawn.
    Accept,
    /// Decline the opponent's pending offer: the game goes on.
    Decline,
    /// Claim a draw by threefold repetition or the fifty-move rule.
    Claim,
}

#[derive(Debug, Args)]
struct DrawArgs {
    /// The game id.
    id: String,
    /// `accept` or `decline` the opponent's offer, or `claim` a draw.
    #[arg(value_enum)]
    action: DrawAction,
    /// The side answering or claiming (it must be that side's move).
    #[arg(long, value_enum)]
    side: Side,
    /// With `claim`: the move you declare you will play, for a claim that holds only after it.
    #[arg(long = "move", value_name = "MOVE")]
    mv: Option<String>,
}

pub fn run(args: GameArgs, client: &ClientArgs) -> CliResult {
    if let GameCommand::Draw(draw) = &args.command
        && draw.mv.is_some()
        && draw.action != DrawAction::Claim
    {
        return Err(CliError::usage("--move goes with `draw ... claim` only"));
    }
    crate::client::block_on(async move {
        let client = Client::connect(client).await?;
        match args.command {
            GameCommand::New(a) => new(&client, a).await,
            GameCommand::Move(a) => play(&client, a).await,
            GameCommand::Show(a) => show(&client, a).await,
            GameCommand::Watch(a) => watch(&client, a).await,
            GameCommand::Resign(a) => resign(&client, a).await,
            GameCommand::EngineMove(a) => engine_move(&client, a).await,
            GameCommand::Draw(a) => draw(&client, a).await,
            GameCommand::Touch(a) => touch(&client, a).await,
        }
    })
}

fn print(text: &str) -> CliResult {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

async fn new(client: &Client, args: NewArgs) -> CliResult {
    let request = CreateGameRequest {
        start_fen: args.fen.unwrap_or_default(),
        time_control: None,
        time_control_text: args.tc.unwrap_or_default(),
        white: args.white.unwrap_or_default(),
        black: args.black.unwrap_or_default(),
        illegal_moves: args.illegal_moves.proto(),
        request_id: String::new(),
    };
    let state = client
        .games()
        .create_game(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let mut out = format!("{}\n", state.game_id);
    label(&mut out, "white", player(&state.white));
    label(&mut out, "black", player(&state.black));
    label(&mut out, "clock", &clock_summary(&state));
    label(&mut out, "illegal", mode_text(state.illegal_moves));
    label(&mut out, "fen", &state.fen);
    label(
        &mut out,
        "next",
        &format!(
            "chess game move {} MOVE   ({} to move)",
            state.game_id,
            color_name(state.turn)
        ),
    );
    print(&out)
}

async fn play(client: &Client, args: MoveArgs) -> CliResult {
    let request = MakeMoveRequest {
        game_id: args.id,
        r#move: args.mv,
        side: args.side.map_or(v1::Color::Unspecified.into(), Side::proto),
        expected_ply: args.expect_ply,
        offer_draw: args.offer_draw,
        request_id: String::new(),
    };
    let state = client
        .games()
        .make_move(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let mut out = String::new();
    // The call either played a move or, under an arbiter mode, recorded a foul at this ply.
    match state.fouls.last().filter(|f| f.ply == state.ply) {
        Some(f) => {
            writeln!(out, "{}", foul_line(f)).ok();
        }
        None => {
            if let Some(last) = last_move(&state) {
                out.push_str(&last);
                out.push('\n');
            }
        }
    }
    out.push_str(&after_change(&state));
    print(&out)
}

async fn touch(client: &Client, args: TouchArgs) -> CliResult {
    let request = TouchPieceRequest {
        game_id: args.id,
        side: args.side.proto(),
        square: args.square,
        adjust: args.adjust,
        request_id: String::new(),
    };
    let state = client
        .games()
        .touch_piece(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let mut out = String::new();
    if let Some(t) = state.touches.last() {
        writeln!(out, "{}", touch_line(t)).ok();
    }
    out.push_str(&after_change(&state));
    print(&out)
}

async fn show(client: &Client, args: ShowArgs) -> CliResult {
    let state = client
        .games()
        .get_game(client.request(GetGameRequest { game_id: args.id }))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    if args.pgn {
        let mut pgn = state.pgn;
        if !pgn.ends_with('\n') {
            pgn.push('\n');
        }
        return print(&pgn);
    }
    print(&describe(&state))
}

async fn watch(client: &Client, args: WatchArgs) -> CliResult {
    let mut stream = client
        .games()
        .watch_game(client.stream_request(WatchGameRequest { game_id: args.id }))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    loop {
        match stream.message().await {
            Ok(Some(event)) => {
                // A move that ends the game comes as a move event, then a game-over event.
                let over = event.kind == i32::from(Kind::GameOver)
                    || (event.kind == i32::from(Kind::Snapshot)
                        && event.state.as_ref().is_some_and(|s| s.outcome.is_some()));
                print(&event_lines(&event))?;
                if over {
                    return Ok(());
                }
            }
            // The server closes the stream when the game ends.
            Ok(None) => return Ok(()),
            Err(status) => return Err(client.error(&status)),
        }
    }
}

async fn resign(client: &Client, args: ResignArgs) -> CliResult {
    let request = ResignRequest {
        game_id: args.id,
        side: args.side.proto(),
        request_id: String::new(),
    };
    let state = client
        .games()
        .resign(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    print(&after_change(&state))
}

async fn engine_move(client: &Client, args: EngineMoveArgs) -> CliResult {
    let request = v1::EngineMoveRequest {
        game_id: args.id,
        strength: Some(v1::Strength {
            elo: args.elo.unwrap_or(0),
            seed: args.seed.unwrap_or(0),
            ..v1::Strength::default()
        }),
        limits: Some(v1::SearchLimits {
            time_ms: args.time_ms.unwrap_or(0),
            ..v1::SearchLimits::default()
        }),
        play: args.play,
    };
    let wait = std::time::Duration::from_millis(args.time_ms.unwrap_or(1000))
        + std::time::Duration::from_secs(10);
    let answer = client
        .gateway()
        .engine_move(client.request_at_least(request, wait))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let engine = answer.engine.unwrap_or_default();
    let mv = engine.best_move.map(|m| m.san).unwrap_or_default();
    let score = engine
        .line
        .as_ref()
        .map(|l| crate::analyze::score_text(l.score.as_ref()))
        .unwrap_or_default();
    let mut out = if args.play {
        format!("engine played {mv} ({score})\n")
    } else {
        format!("engine move: {mv} ({score})\n")
    };
    if let Some(state) = &answer.game {
        out.push_str(&after_change(state));
    }
    print(&out)
}

async fn draw(client: &Client, args: DrawArgs) -> CliResult {
    let claimed_with_move = args.mv.is_some();
    let mut games = client.games();
    let answer = match args.action {
        DrawAction::Accept | DrawAction::Decline => {
            let request = RespondToDrawRequest {
                game_id: args.id,
                side: args.side.proto(),
                accept: args.action == DrawAction::Accept,
                request_id: String::new(),
            };
            games.respond_to_draw(client.request(request)).await
        }
        DrawAction::Claim => {
            let request = ClaimDrawRequest {
                game_id: args.id,
                side: args.side.proto(),
                r#move: args.mv.unwrap_or_default(),
                request_id: String::new(),
            };
            games.claim_draw(client.request(request)).await
        }
    };
    let state = answer.map_err(|s| client.error(&s))?.into_inner();
    let mut out = String::new();
    if claimed_with_move {
        // The declared move was played as part of the claim.
        if let Some(last) = last_move(&state) {
            writeln!(out, "{last}").ok();
        }
    }
    if args.action == DrawAction::Decline {
        writeln!(
            out,
            "draw offer declined: the game goes on, {} to move",
            color_name(state.turn)
        )
        .ok();
    }
    out.push_str(&after_change(&state));
    print(&out)
}

// ----- presentation -----

fn mode_text(value: i32) -> &'static str {
    match v1::IllegalMoves::try_from(value) {
        Ok(v1::IllegalMoves::Fide) => "fide (a foul; 2 minutes to the opponent, the second loses)",
        Ok(v1::IllegalMoves::ThreeStrikes) => {
            "three-strikes (a king moved onto an attacked square is a foul; the third loses)"
        }
        _ => "reject",
    }
}

/// `foul 1 by black: e8e7 (king moved into check ...); penalty: two minutes added to ...`.
fn foul_line(f: &v1::Foul) -> String {
    format!(
        "foul {} by {}: {} ({}); penalty: {}",
        f.count,
        color_name(f.side),
        f.attempted,
        f.reason,
        f.penalty
    )
}

/// `white touched Ng1` or `white adjusted Ng1 (j'adoube)`.
fn touch_line(t: &v1::Touch) -> String {
    if t.adjust {
        format!("{} adjusted {} (j'adoube)", color_name(t.side), t.piece)
    } else {
        format!("{} touched {}", color_name(t.side), t.piece)
    }
}

/// `B20 Sicilian Defense  semi-open`, or `none`.
pub(crate) fn opening_text(o: Option<&v1::OpeningInfo>) -> String {
    match o {
        Some(o) if !o.eco.is_empty() => {
            let mut text = format!("{} {}", o.eco, o.name);
            if !o.class.is_empty() {
                write!(text, "  {}", o.class).ok();
            }
            if o.gambit {
                text.push_str(", gambit");
            }
            text
        }
        _ => "none".to_owned(),
    }
}

/// `label     value` lines, aligned.
fn label(out: &mut String, name: &str, value: &str) {
    writeln!(out, "{name:<11} {value}").ok();
}

fn player(name: &str) -> &str {
    if name.is_empty() { "?" } else { name }
}

pub(crate) fn color_name(value: i32) -> &'static str {
    match v1::Color::try_from(value) {
        Ok(v1::Color::White) => "white",
        Ok(v1::Color::Black) => "black",
        _ => "nobody",
    }
}

fn opponent(value: i32) -> &'static str {
    match v1::Color::try_from(value) {
        Ok(v1::Color::White) => "black",
        Ok(v1::Color::Black) => "white",
        _ => "nobody",
    }
}

/// The draw rule a claim would invoke, or `None` for `RULE_UNSPECIFIED`.
pub(crate) fn claim_name(rule: i32) -> Option<&'static str> {
    use v1::outcome::Rule;
    match Rule::try_from(rule) {
        Ok(Rule::ThreefoldRepetition) => Some("threefold repetition"),
        Ok(Rule::FiftyMoves) => Some("the fifty-move rule"),
        Ok(Rule::Unspecified) | Err(_) => None,
        // Only the two claimable rules are expected here; name any other plainly.
        Ok(other) => Some(other.as_str_name()),
    }
}

/// `4:58.1` under an hour, `1:29:58` above.
fn clock_time(ms: i64) -> String {
    let ms = ms.max(0);
    let tenths = ms / 100;
    let (h, m, s, t) = (
        tenths / 36_000,
        tenths / 600 % 60,
        tenths / 10 % 60,
        tenths % 10,
    );
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}.{t}")
    }
}

/// Thinking time of one move: `2.1s`, or a clock reading past a minute.
fn used_time(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{}s", ms / 1000, ms % 1000 / 100)
    } else {
        clock_time(i64::try_from(ms).unwrap_or(i64::MAX))
    }
}

fn time_control_text(tc: &v1::TimeControl) -> String {
    let periods = TimeControl::periods_from_proto(tc);
    TimeControl { periods }.to_string()
}

/// `5+3: white 4:58.1, black 5:00.0 (black's clock is running)`, or `none`.
fn clock_summary(state: &GameState) -> String {
    let Some(tc) = &state.time_control else {
        return "none".to_owned();
    };
    let mut text = time_control_text(tc);
    if let Some(clock) = &state.clock {
        write!(
            text,
            ": white {}, black {}",
            clock_time(clock.white_ms),
            clock_time(clock.black_ms)
        )
        .ok();
        if clock.running != i32::from(v1::Color::Unspecified) {
            write!(text, " ({}'s clock is running)", color_name(clock.running)).ok();
        } else if state.outcome.is_none() {
            text.push_str(" (stopped: the clocks start after white's first move)");
        }
    }
    text
}

/// `12. Nf3` or `12... Nf6`: the move number and side come from the FEN before the move.
fn numbered(fen_before: &str, san: &str) -> String {
    let fields: Vec<&str> = fen_before.split_whitespace().collect();
    let number = fields.get(5).copied().unwrap_or("1");
    if fields.get(1) == Some(&"b") {
        format!("{number}... {san}")
    } else {
        format!("{number}. {san}")
    }
}

fn fen_before(state: &GameState, index: usize) -> &str {
    match index.checked_sub(1) {
        Some(prev) => &state.moves[prev].fen_after,
        None => &state.start_fen,
    }
}

/// The last move played: `1. e4 (e2e4)`.
fn last_move(state: &GameState) -> Option<String> {
    let index = state.moves.len().checked_sub(1)?;
    let played = &state.moves[index];
    let mv = played.r#move.as_ref()?;
    let mut text = format!(
        "{} ({})",
        numbered(fen_before(state, index), &mv.san),
        mv.uci
    );
    if played.draw_offered {
        text.push_str(", offering a draw");
    }
    Some(text)
}

/// What a changed game looks like now: the FEN, pending offer or claim, clock, result.
fn after_change(state: &GameState) -> String {
    let mut out = format!("fen: {}\n", state.fen);
    if let Some(outcome) = &state.outcome {
        writeln!(out, "game over: {}", outcome.description).ok();
        return out;
    }
    let draw_from = state.draw_offer_from;
    if draw_from != i32::from(v1::Color::Unspecified) {
        writeln!(
            out,
            "{} offers a draw: {} may accept or decline",
            color_name(draw_from),
            opponent(draw_from)
        )
        .ok();
    }
    if let Some(rule) = claim_name(state.claimable_draw) {
        writeln!(out, "{} may claim a draw by {rule}", color_name(state.turn)).ok();
    }
    if state.clock.is_some() {
        writeln!(out, "clock: {}", clock_summary(state)).ok();
    }
    out
}

/// The moves, one numbered line per full move, with thinking times when there is a clock.
fn move_list(state: &GameState) -> String {
    let timed = state.time_control.is_some();
    let mut out = String::new();
    let mut line = String::new();
    for (i, played) in state.moves.iter().enumerate() {
        let Some(mv) = &played.r#move else { continue };
        let before = fen_before(state, i);
        let black = before.split_whitespace().nth(1) == Some("b");
        let mut notes = Vec::new();
        if timed {
            notes.push(used_time(played.time_used_ms));
        }
        if played.draw_offered {
            notes.push("draw offered".to_owned());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", notes.join(", "))
        };
        if black && !line.is_empty() {
            write!(line, "  {}{notes}", mv.san).ok();
        } else {
            if !line.is_empty() {
                writeln!(out, "  {line}").ok();
            }
            line = format!("{}{notes}", numbered(before, &mv.san));
        }
    }
    if !line.is_empty() {
        writeln!(out, "  {line}").ok();
    }
    out
}

/// The whole game for `chess game show`.
fn describe(state: &GameState) -> String {
    let mut out = String::new();
    label(&mut out, "game", &state.game_id);
    label(&mut out, "white", player(&state.white));
    label(&mut out, "black", player(&state.black));
    label(&mut out, "clock", &clock_summary(state));
    label(&mut out, "fen", &state.fen);
    if state.start_fen != Position::startpos().fen() {
        label(&mut out, "start fen", &state.start_fen);
    }
    out.push('\n');
    if let Ok(pos) = Position::from_fen(&state.fen) {
        out.push_str(&crate::fen::draw_board(&pos));
        out.push('\n');
    }
    if state.moves.is_empty() {
        label(&mut out, "moves", "none yet");
    } else {
        label(&mut out, "moves", &format!("{} plies", state.ply));
        out.push_str(&move_list(state));
    }
    let draw_from = state.draw_offer_from;
    let offer = if draw_from == i32::from(v1::Color::Unspecified) {
        "none".to_owned()
    } else {
        format!(
            "from {}: {} may accept or decline",
            color_name(draw_from),
            opponent(draw_from)
        )
    };
    label(&mut out, "draw offer", &offer);
    let claim = claim_name(state.claimable_draw).map_or_else(
        || "none".to_owned(),
        |rule| format!("{rule} ({} may claim)", color_name(state.turn)),
    );
    label(&mut out, "claimable", &claim);
    label(&mut out, "opening", &opening_text(state.opening.as_ref()));
    label(&mut out, "illegal", mode_text(state.illegal_moves));
    if state.fouls.is_empty() {
        label(&mut out, "fouls", "none");
    } else {
        label(&mut out, "fouls", &state.fouls.len().to_string());
        for f in &state.fouls {
            writeln!(out, "  at ply {}: {}", f.ply, foul_line(f)).ok();
        }
    }
    if !state.touches.is_empty() {
        let touches: Vec<String> = state.touches.iter().map(touch_line).collect();
        label(&mut out, "touched", &touches.join(", "));
    }
    let outcome = state.outcome.as_ref().map_or_else(
        || format!("in progress, {} to move", color_name(state.turn)),
        |o| o.description.clone(),
    );
    label(&mut out, "outcome", &outcome);
    out
}

/// One line per event (two when a snapshot shows a finished game).
fn event_lines(event: &GameEvent) -> String {
    let Some(state) = &event.state else {
        return "event without a state\n".to_owned();
    };
    let clock = state
        .clock
        .as_ref()
        .map(|c| {
            format!(
                ", clock white {} black {}",
                clock_time(c.white_ms),
                clock_time(c.black_ms)
            )
        })
        .unwrap_or_default();
    let over = state
        .outcome
        .as_ref()
        .map(|o| format!("game over: {}\n", o.description));
    match Kind::try_from(event.kind) {
        Ok(Kind::Snapshot) => {
            let mut text = format!(
                "snapshot: ply {}, {} to move, fen {}{clock}\n",
                state.ply,
                color_name(state.turn),
                state.fen
            );
            text.push_str(over.as_deref().unwrap_or(""));
            text
        }
        Ok(Kind::Move | Kind::DrawOffered) => format!(
            "move: {}, fen {}{clock}\n",
            last_move(state).unwrap_or_default(),
            state.fen
        ),
        Ok(Kind::DrawDeclined) => format!(
            "draw declined by {}, {} to move\n",
            color_name(state.turn),
            color_name(state.turn)
        ),
        Ok(Kind::GameOver) => over.unwrap_or_else(|| "game over\n".to_owned()),
        Ok(Kind::Foul) => {
            let mut text = state
                .fouls
                .last()
                .map_or_else(|| "foul".to_owned(), foul_line);
            text.push_str(&clock);
            text.push('\n');
            text
        }
        Ok(Kind::Touch) => state
            .touches
            .last()
            .map_or_else(|| "touch\n".to_owned(), |t| format!("{}\n", touch_line(t))),
        Ok(Kind::Unspecified) | Err(_) => format!("event {}: ply {}\n", event.kind, state.ply),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn played(san: &str, uci: &str, fen_after: &str, ms: u64) -> v1::PlayedMove {
        v1::PlayedMove {
            r#move: Some(v1::Move {
                uci: uci.into(),
                san: san.into(),
                coordinate: String::new(),
            }),
            time_used_ms: ms,
            draw_offered: false,
            fen_after: fen_after.into(),
        }
    }

    #[test]
    fn clocks_and_times() {
        assert_eq!(clock_time(300_000), "5:00.0");
        assert_eq!(clock_time(298_150), "4:58.1");
        assert_eq!(clock_time(5_400_000), "1:30:00");
        assert_eq!(clock_time(-5), "0:00.0");
        assert_eq!(used_time(2_150), "2.1s");
        assert_eq!(used_time(65_000), "1:05.0");
    }

    #[test]
    fn move_numbers_follow_the_fen() {
        assert_eq!(numbered(START, "e4"), "1. e4");
        assert_eq!(
            numbered(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                "e5"
            ),
            "1... e5"
        );
    }

    #[test]
    fn move_list_pairs_moves() {
        let after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let after_e5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
        let after_nf3 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2";
        let state = GameState {
            start_fen: START.into(),
            moves: vec![
                played("e4", "e2e4", after_e4, 0),
                played("e5", "e7e5", after_e5, 1_200),
                played("Nf3", "g1f3", after_nf3, 3_000),
            ],
            time_control: Some(v1::TimeControl {
                periods: vec![v1::TimeControlPeriod {
                    moves: 0,
                    base_ms: 300_000,
                    increment_ms: 3_000,
                }],
            }),
            ..GameState::default()
        };
        assert_eq!(
            move_list(&state),
            "  1. e4 {0.0s}  e5 {1.2s}\n  2. Nf3 {3.0s}\n"
        );
        assert_eq!(last_move(&state).unwrap(), "2. Nf3 (g1f3)");
        assert_eq!(
            time_control_text(state.time_control.as_ref().unwrap()),
            "5+3"
        );
        // A game from a position with black to move starts with `N...`.
        let state = GameState {
            start_fen: after_e4.into(),
            moves: vec![played("e5", "e7e5", after_e5, 0)],
            ..GameState::default()
        };
        assert_eq!(move_list(&state), "  1... e5\n");
    }
}
