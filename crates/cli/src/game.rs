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
//! chess game new --takebacks                         a casual game: takebacks granted
//! chess game takeback ID --side white [--expect-ply N]
//! ```

use std::fmt::Write as _;
use std::io::{self, Write as _};

use chess_proto::v1::{
    self, ClaimDrawRequest, CreateGameRequest, GetGameRequest, MakeMoveRequest, ResignRequest,
    RespondToDrawRequest, TakeBackRequest, TouchPieceRequest, WatchGameRequest, game_event::Kind,
};
use clap::{Args, Subcommand, ValueEnum};

use crate::client::{Client, ClientArgs};
use crate::error::{CliError, CliResult};
use crate::show::{
    after_change, clock_summary, color_name, describe, event_lines, foul_line, label, last_move,
    mode_text, player, score_text, takeback_line, touch_line,
};

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
    /// Take back a side's last move in a casual game (created with `--takebacks`): its own
    /// move, and the opponent's reply if there is one.
    Takeback(TakebackArgs),
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

#[derive(Debug, Args)]
struct TakebackArgs {
    /// The game id.
    id: String,
    /// The side taking back its last move.
    #[arg(long, value_enum)]
    side: Side,
    /// Refuse unless exactly N plies have been played (so that a reply made meanwhile is
    /// not taken back unseen).
    #[arg(long, value_name = "N")]
    expect_ply: Option<u32>,
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
    /// A casual game: either side may take back its last move (`chess game takeback`).
    #[arg(long)]
    takebacks: bool,
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
    /// Elo-like level from 800 to 3000; above the strongest calibrated level, that one
    /// (default: full strength).
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
            GameCommand::Takeback(a) => takeback(&client, a).await,
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
        takebacks: args.takebacks,
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
    if state.takebacks {
        label(&mut out, "takebacks", "allowed (a casual game)");
    }
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

async fn takeback(client: &Client, args: TakebackArgs) -> CliResult {
    let request = TakeBackRequest {
        game_id: args.id,
        side: args.side.proto(),
        expected_ply: args.expect_ply,
        request_id: String::new(),
    };
    let state = client
        .games()
        .take_back(client.request(request))
        .await
        .map_err(|s| client.error(&s))?
        .into_inner();
    let mut out = String::new();
    if let Some(t) = state.taken_back.last() {
        writeln!(out, "{}", takeback_line(t)).ok();
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
        .map(|l| score_text(l.score.as_ref()))
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
