//! `chess pgn`: check a PGN file game by game with chess-pgn, report every broken game with
//! where it breaks and the position there, and optionally re-emit the good games.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use chess_pgn::{
    BuilderOptions, Flow, GameBuilder, GameError, GameResult, Location, PgnGame, ReadError, Reader,
    SyntaxError, Visitor, Writer,
};
use chess_rules::{Position, SanStrictness};
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::input::Utf8Watch;

#[derive(Debug, Args)]
pub struct PgnArgs {
    /// The PGN file (`-` for standard input).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Re-emit every good game in PGN export format (to stdout unless --output is given).
    #[arg(long, alias = "normalise")]
    normalize: bool,
    /// With --normalize: write the games to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE", requires = "normalize")]
    output: Option<PathBuf>,
    /// Accept only strict SAN in the movetext.
    #[arg(long)]
    strict: bool,
}

pub fn run(args: PgnArgs) -> CliResult {
    let from_stdin = args.file.as_os_str() == "-";
    let input: Box<dyn Read> = if from_stdin {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(&args.file).map_err(|e| {
            CliError::failure(format!("cannot read {:?}: {e}", args.file.display()))
        })?)
    };
    let name = if from_stdin {
        "standard input".to_owned()
    } else {
        format!("{:?}", args.file.display())
    };

    // The normalised games go to stdout or a file; the report then goes wherever they do not.
    let games_out: Option<Box<dyn Write>> = match (&args.output, args.normalize) {
        (_, false) => None,
        (None, true) => Some(Box::new(io::stdout().lock())),
        (Some(path), true) => {
            if !from_stdin && same_file(&args.file, path) {
                return Err(CliError::failure(format!(
                    "--output {:?} is the input file: write the normalised games elsewhere",
                    path.display()
                )));
            }
            let file = File::create(path).map_err(|e| {
                CliError::failure(format!("cannot create {:?}: {e}", path.display()))
            })?;
            Some(Box::new(file))
        }
    };
    let report: Box<dyn Write> = if args.normalize && args.output.is_none() {
        Box::new(io::stderr().lock())
    } else {
        Box::new(io::stdout().lock())
    };
    let strictness = if args.strict {
        SanStrictness::Strict
    } else {
        SanStrictness::Lenient
    };
    let summary = check(
        Utf8Watch::new(input),
        &name,
        strictness,
        games_out.map(BufWriter::new),
        BufWriter::new(report),
    )?;
    if summary.errors > 0 {
        return Err(CliError::failure(format!(
            "{name}: {} error(s), {} of {} game(s) bad",
            summary.errors, summary.bad_games, summary.games
        )));
    }
    Ok(())
}

/// True when both paths name one existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What a check found.
#[derive(Debug, Default)]
struct Summary {
    games: u64,
    bad_games: u64,
    moves: u64,
    errors: u64,
}

/// Reads every game, writing error lines and the summary to `report` and the good games to
/// `games_out`.
fn check<R: Read, G: Write, W: Write>(
    input: Utf8Watch<R>,
    name: &str,
    strictness: SanStrictness,
    mut games_out: Option<G>,
    mut report: W,
) -> CliResult<Summary> {
    let mut reader = Reader::new(BufReader::with_capacity(64 * 1024, input));
    let mut tracker = Tracker::new(strictness);
    let mut summary = Summary::default();
    // Reused for every game, so that a game that cannot be written is caught before any of
    // it reaches the output.
    let mut writer = Writer::new(Vec::new());
    loop {
        let line = match reader.read_game(&mut tracker) {
            Ok(None) => break,
            Ok(Some(Ok(game))) => {
                summary.games += 1;
                summary.moves += game.root.node_count() as u64;
                match (&mut games_out, write_game(&mut writer, &game)) {
                    (Some(out), Ok(text)) => {
                        out.write_all(text)?;
                        None
                    }
                    (Some(_), Err(e)) => Some(format!(
                        "game {}: cannot be written in export format: {e}",
                        summary.games
                    )),
                    (None, _) => None,
                }
            }
            Ok(Some(Err(e))) => {
                summary.games += 1;
                Some(tracker.describe_game_error(&e))
            }
            Err(ReadError::Syntax(e)) => {
                summary.games += 1;
                Some(tracker.describe_syntax_error(&e))
            }
            Err(ReadError::Io(e)) => {
                summary.errors += 1;
                writeln!(report, "error: reading {name} failed: {e}")?;
                break;
            }
        };
        if let Some(line) = line {
            summary.errors += 1;
            summary.bad_games += 1;
            writeln!(report, "{line}")?;
        }
    }
    if let Some(bad) = reader.into_inner().into_inner().first_bad() {
        summary.errors += 1;
        writeln!(
            report,
            "error: {name} is not UTF-8 text: {bad} (read as U+FFFD)"
        )?;
    }
    if let Some(out) = &mut games_out {
        out.flush()?;
    }
    writeln!(
        report,
        "{} games, {} good, {} moves, {} errors",
        summary.games,
        summary.games - summary.bad_games,
        summary.moves,
        summary.errors
    )?;
    report.flush()?;
    Ok(summary)
}

/// The game in export format, or why it cannot be written.
fn write_game<'a>(writer: &'a mut Writer<Vec<u8>>, game: &PgnGame) -> io::Result<&'a [u8]> {
    writer.get_mut().clear();
    writer.write_game(game)?;
    Ok(writer.get_ref())
}

/// Most movetext events remembered per game (the builder's own limit on moves is lower).
const MAX_EVENTS: usize = 1 << 20;

/// Movetext events, kept so that the position of an error can be found afterwards.
#[derive(Debug)]
enum Event {
    /// A move: its text is `texts[start..end]`.
    San {
        start: usize,
        end: usize,
        at: Location,
    },
    BeginVariation {
        at: Location,
    },
    EndVariation,
}

/// A [`GameBuilder`] that also remembers each game's movetext events, so that an error can be
/// reported with the position it happened in: replaying is needed only for broken games.
#[derive(Debug)]
struct Tracker {
    builder: GameBuilder,
    strictness: SanStrictness,
    /// Where the current game starts, for errors that have no place of their own.
    game_at: Location,
    fen: Option<String>,
    texts: String,
    events: Vec<Event>,
}

impl Tracker {
    fn new(strictness: SanStrictness) -> Tracker {
        let opts = BuilderOptions {
            strictness,
            ..BuilderOptions::default()
        };
        Tracker {
            builder: GameBuilder::with_options(opts),
            strictness,
            game_at: Location::default(),
            fen: None,
            texts: String::new(),
            events: Vec::new(),
        }
    }

    fn record(&mut self, event: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    /// Replays the game up to the event at `stop` (or to the end), returning the position
    /// there: where the move at `stop` was to be played, or where a `(` at `stop` opened.
    fn position_at(&self, stop: Option<Location>) -> Option<Position> {
        let start = match &self.fen {
            Some(fen) => Position::from_fen(fen.trim()).ok()?,
            None => Position::startpos(),
        };
        // (position before the line's last move, position reached)
        let mut stack = vec![(start.clone(), start)];
        for event in &self.events {
            match *event {
                Event::San { start, end, at } => {
                    let (before, pos) = stack.last_mut()?;
                    if Some(at) == stop {
                        return Some(pos.clone());
                    }
                    let m = pos
                        .parse_san_with(&self.texts[start..end], self.strictness)
                        .ok()?;
                    before.clone_from(pos);
                    pos.play_unchecked(m);
                }
                Event::BeginVariation { at } => {
                    let (_, pos) = stack.last()?;
                    if Some(at) == stop {
                        return Some(pos.clone());
                    }
                    let (before, _) = stack.last()?;
                    let before = before.clone();
                    stack.push((before.clone(), before));
                }
                Event::EndVariation => {
                    if stack.len() > 1 {
                        stack.pop();
                    }
                }
            }
        }
        let (_, pos) = stack.pop()?;
        stop.is_none().then_some(pos)
    }

    /// `game 3, line 14, column 9: move 12... Nf6: illegal: ... (position: FEN)`.
    fn describe_game_error(&self, err: &GameError) -> String {
        let position = err.location().and_then(|at| self.position_at(Some(at)));
        let what = match err {
            GameError::Move {
                number,
                san,
                source,
                ..
            } => {
                format!(
                    "move {number} {san:?}: {}",
                    crate::san::describe_san_error(source)
                )
            }
            GameError::NullMoveInMainline { number, san, .. } => {
                format!("move {number} {san:?}: a null move is allowed only in variations")
            }
            GameError::VariationWithoutMove { .. } => {
                "a variation must follow the move it replaces".to_owned()
            }
            GameError::Fen { fen, source, .. } => format!("bad FEN tag {fen:?}: {source}"),
            // The builder's other errors (such as size limits) describe themselves; drop
            // their own `game N: ` prefix.
            other => {
                let text = other.to_string();
                let prefix = format!("game {}: ", other.game());
                text.strip_prefix(&prefix)
                    .map(str::to_owned)
                    .unwrap_or(text)
            }
        };
        let at = err.location().unwrap_or(self.game_at);
        format_error(err.game(), at, &what, position.as_ref())
    }

    /// `game 2, line 7, column 7: ')' without a matching '(' (position: FEN)`: the position
    /// the movetext had reached.
    fn describe_syntax_error(&self, err: &SyntaxError) -> String {
        let position = self.position_at(None);
        format_error(err.game, err.at, &err.kind.to_string(), position.as_ref())
    }
}

fn format_error(game: u64, at: Location, what: &str, pos: Option<&Position>) -> String {
    let mut line = format!(
        "game {game}, line {}, column {}: {what}",
        at.line, at.column
    );
    if let Some(pos) = pos {
        line.push_str(&format!(" (position: {})", pos.fen()));
    }
    line
}

impl Visitor for Tracker {
    type Output = Result<PgnGame, GameError>;

    fn begin_game(&mut self, number: u64, at: Location) {
        self.game_at = at;
        self.fen = None;
        self.texts.clear();
        self.events.clear();
        self.builder.begin_game(number, at);
    }

    fn tag(&mut self, name: &str, value: &str) {
        if name == "FEN" && self.fen.is_none() {
            self.fen = Some(value.to_owned());
        }
        self.builder.tag(name, value);
    }

    fn begin_movetext(&mut self) -> Flow {
        self.builder.begin_movetext()
    }

    fn san(&mut self, san: &str, at: Location) {
        if self.events.len() < MAX_EVENTS {
            let start = self.texts.len();
            self.texts.push_str(san);
            self.record(Event::San {
                start,
                end: self.texts.len(),
                at,
            });
        }
        self.builder.san(san, at);
    }

    fn nag(&mut self, nag: u8) {
        self.builder.nag(nag);
    }

    fn comment(&mut self, text: &str) {
        self.builder.comment(text);
    }

    fn begin_variation(&mut self, at: Location) -> Flow {
        let flow = self.builder.begin_variation(at);
        // A skipped variation reports no events, so only a followed one is remembered; its
        // `(` is still recorded first, as the error of a variation without a move sits there.
        if flow == Flow::Continue {
            self.record(Event::BeginVariation { at });
        } else if self.events.len() < MAX_EVENTS {
            self.events.push(Event::BeginVariation { at });
            self.events.push(Event::EndVariation);
        }
        flow
    }

    fn end_variation(&mut self) {
        self.record(Event::EndVariation);
        self.builder.end_variation();
    }

    fn outcome(&mut self, result: Option<GameResult>) {
        self.builder.outcome(result);
    }

    fn end_game(&mut self) -> Self::Output {
        self.builder.end_game()
    }
}
