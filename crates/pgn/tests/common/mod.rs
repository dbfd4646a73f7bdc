//! Helpers shared by the tests and the bench: corpus access, a seeded random game generator,
//! a visitor that records events, and an input that trickles out a few bytes at a time.
#![allow(dead_code)]

use std::io::{self, BufRead, Read};
use std::path::PathBuf;

use chess_pgn::{Flow, GameResult, Line, Location, Node, PgnGame, Visitor};
use chess_rules::{Color, Move, Outcome, Position, WinReason};

/// The corpus files that hold only good games.
pub const GOOD_FILES: [&str; 6] = [
    "comments.pgn",
    "variations.pgn",
    "setup.pgn",
    "long.pgn",
    "misc.pgn",
    "crlf_bom.pgn",
];

pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

pub fn data(name: &str) -> Vec<u8> {
    std::fs::read(data_path(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"))
}

/// xorshift64*: small, seeded, good enough for test data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// What the generator puts in a game.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    pub max_plies: usize,
    /// NAGs and comments.
    pub annotate: bool,
    /// Variations up to this depth (0: none).
    pub max_depth: usize,
}

const START_FENS: [&str; 4] = [
    "r3k2r/pppq1ppp/2npbn2/4p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R w KQkq - 4 9",
    "8/2P5/8/8/8/k7/6p1/4K3 b - - 0 50",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
];

const WORDS: [&str; 24] = [
    "good",
    "move",
    "the",
    "knight",
    "is",
    "strong",
    "here,",
    "but",
    "Black",
    "equalises.",
    "Köln",
    "♘",
    "日本",
    "%eval",
    "[%clk",
    "0:01:30]",
    "x{y",
    "(see",
    "game)",
    "1-0",
    "*",
    "--",
    ";",
    "$1",
];

fn random_comment(rng: &mut Rng) -> String {
    if rng.one_in(30) {
        return String::new();
    }
    if rng.one_in(40) {
        // Longer than a line: it must get a line of its own.
        return format!("https://example.invalid/{}", "a".repeat(90));
    }
    let most = if rng.one_in(5) { 40 } else { 6 };
    let n = 1 + rng.below(most);
    (0..n)
        .map(|_| *rng.pick(&WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

fn random_line(
    rng: &mut Rng,
    start: &Position,
    plies: usize,
    depth: usize,
    opts: GenOptions,
) -> Line {
    let mainline = depth == 0;
    let mut line = Line::default();
    let mut pos = start.clone();
    for _ in 0..plies {
        let moves = pos.legal_moves();
        let null = !mainline && !pos.is_check() && rng.one_in(15);
        if moves.is_empty() && !null {
            break;
        }
        let mv = if null || moves.is_empty() {
            Move::NULL
        } else {
            *rng.pick(&moves)
        };
        let mut node = Node::new(mv, pos.san(mv));
        if opts.annotate {
            // Where the reader would put a comment before a move: at the start of a line or
            // after a variation.
            let may_precede = line
                .nodes
                .last()
                .is_none_or(|prev: &Node| !prev.variations.is_empty());
            if may_precede && rng.one_in(5) {
                node.comments_before.push(random_comment(rng));
            }
            if rng.one_in(6) {
                for _ in 0..1 + rng.below(2) {
                    let nag = if rng.one_in(2) {
                        1 + rng.below(6)
                    } else {
                        rng.below(256)
                    };
                    node.nags.push(nag as u8);
                }
            }
            if rng.one_in(7) {
                for _ in 0..1 + rng.below(2) {
                    node.comments_after.push(random_comment(rng));
                }
            }
        }
        if depth < opts.max_depth && rng.one_in(if mainline { 8 } else { 5 }) {
            for _ in 0..1 + rng.below(2) {
                let len = 1 + rng.below(8);
                node.variations
                    .push(random_line(rng, &pos, len, depth + 1, opts));
            }
        }
        pos.play_unchecked(mv);
        line.nodes.push(node);
    }
    line
}

/// A random legal game, with annotations and variations as asked.
pub fn random_game(rng: &mut Rng, opts: GenOptions) -> PgnGame {
    let start = if rng.one_in(4) {
        let fen = START_FENS[rng.below(START_FENS.len())];
        Position::from_fen(fen).unwrap()
    } else {
        Position::startpos()
    };
    let mut game = PgnGame::new(start.clone());
    let plies = rng.below(opts.max_plies + 1);
    game.root = random_line(rng, &start, plies, 0, opts);
    let end = game.end_position();
    game.result = Some(if end.is_checkmate() {
        GameResult::from(Outcome::Decisive {
            winner: !end.turn(),
            reason: WinReason::Checkmate,
        })
    } else {
        *rng.pick(&[
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::Unknown,
        ])
    });
    let n = rng.below(1_000_000);
    game.set_tag("Event", format!("Random game {n}"));
    if rng.one_in(2) {
        game.set_tag("Site", "Tilburg \"Fontys\" \\ Hall");
    }
    game.set_tag("Date", "2024.05.17");
    game.set_tag("White", *rng.pick(&["Ann", "Bo", "Cé", "Dörte"]));
    game.set_tag("Black", *rng.pick(&["Eve", "Fu", "Gül", "日本"]));
    if let Some(result) = game.result {
        game.set_tag("Result", result.as_str());
    }
    if rng.one_in(3) {
        game.set_tag("PlyCount", end.fullmoves().to_string());
    }
    if game.start != Position::startpos() {
        game.set_tag("SetUp", "1");
        game.set_tag("FEN", game.start.fen());
    }
    game
}

/// The tree with the "as written" SAN removed, for comparing what was read from different
/// spellings of the same moves.
pub fn without_san(line: &Line) -> Line {
    Line {
        nodes: line
            .nodes
            .iter()
            .map(|n| Node {
                san: String::new(),
                variations: n.variations.iter().map(without_san).collect(),
                ..n.clone()
            })
            .collect(),
        comments: line.comments.clone(),
    }
}

pub fn write(game: &PgnGame) -> String {
    let mut w = chess_pgn::Writer::new(Vec::new());
    if let Err(e) = w.write_game(game) {
        panic!("cannot write {game:?}: {e}");
    }
    String::from_utf8(w.into_inner()).unwrap()
}

/// Records every event as a line of text.
#[derive(Debug, Default)]
pub struct Recorder {
    pub events: Vec<String>,
}

fn at(l: Location) -> String {
    format!("{}:{}", l.line, l.column)
}

impl Visitor for Recorder {
    type Output = Vec<String>;
    fn begin_game(&mut self, number: u64, l: Location) {
        self.events.clear();
        self.events.push(format!("game {number} {}", at(l)));
    }
    fn tag(&mut self, name: &str, value: &str) {
        self.events.push(format!("tag {name}={value}"));
    }
    fn begin_movetext(&mut self) -> Flow {
        self.events.push("movetext".to_owned());
        Flow::Continue
    }
    fn san(&mut self, san: &str, l: Location) {
        self.events.push(format!("san {san} {}", at(l)));
    }
    fn nag(&mut self, nag: u8) {
        self.events.push(format!("nag {nag}"));
    }
    fn comment(&mut self, text: &str) {
        self.events.push(format!("comment {text:?}"));
    }
    fn begin_variation(&mut self, l: Location) -> Flow {
        self.events.push(format!("( {}", at(l)));
        Flow::Continue
    }
    fn end_variation(&mut self) {
        self.events.push(")".to_owned());
    }
    fn outcome(&mut self, result: Option<GameResult>) {
        self.events
            .push(format!("outcome {}", result.map_or("none", |r| r.as_str())));
    }
    fn end_game(&mut self) -> Vec<String> {
        std::mem::take(&mut self.events)
    }
}

/// Input that hands out 1 to 7 bytes at a time, to cross every buffer boundary.
#[derive(Debug)]
pub struct Trickle {
    data: Vec<u8>,
    pos: usize,
    step: usize,
}

impl Trickle {
    pub fn new(data: Vec<u8>) -> Trickle {
        Trickle {
            data,
            pos: 0,
            step: 0,
        }
    }
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Trickle {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let n = (1 + self.step % 7).min(self.data.len() - self.pos);
        Ok(&self.data[self.pos..self.pos + n])
    }
    fn consume(&mut self, n: usize) {
        self.pos += n;
        self.step += 1;
    }
}

/// The colour of the side to move written as PGN does in a move number.
pub fn dots(color: Color) -> &'static str {
    if color.is_white() { "." } else { "..." }
}
