//! Arbitrary bytes as a PGN file, through the streaming reader and the validating builder.
//!
//! - The first byte picks a read size: the input is read again trickling that many bytes per
//!   `read` call, and every event and every game must be the same as reading it whole
//!   (chunk boundaries must not matter).
//! - Strict SAN is a subset of lenient: a game the strict builder accepts is accepted by the
//!   lenient one, as the same game.
//! - Every game that parses is a legal move tree whose written moves read back as its moves.
//! - It can be written unless it holds a tag PGN cannot express (a name that is not letters,
//!   digits and `_`, a line break in a value), and write -> read gives the same game (same start, tags, moves, NAGs,
//!   comments, variations, result; only the as-written SAN becomes canonical SAN), after
//!   which write -> read is an exact fixed point.
#![no_main]

use std::io::{BufReader, Read};

use chess_pgn::{
    BuilderOptions, Flow, GameResult, Line, Location, PgnError, PgnGame, PgnGames, Reader,
    ReaderOptions, SEVEN_TAG_ROSTER, Visitor,
};
use chess_rules::{Position, SanStrictness};
use libfuzzer_sys::fuzz_target;

/// Hands out at most `step` bytes per `read`.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Records every event, to compare two readings of the same input.
#[derive(Default)]
struct Recorder {
    events: Vec<String>,
    skip_movetext: bool,
}

impl Visitor for Recorder {
    type Output = usize;
    fn begin_game(&mut self, number: u64, at: Location) {
        self.events.push(format!("begin {number} {at:?}"));
    }
    fn tag(&mut self, name: &str, value: &str) {
        self.events.push(format!("tag {name:?} {value:?}"));
    }
    fn begin_movetext(&mut self) -> Flow {
        self.events.push("movetext".into());
        if self.skip_movetext {
            Flow::Skip
        } else {
            Flow::Continue
        }
    }
    fn san(&mut self, san: &str, at: Location) {
        self.events.push(format!("san {san:?} {at:?}"));
    }
    fn nag(&mut self, nag: u8) {
        self.events.push(format!("nag {nag}"));
    }
    fn comment(&mut self, text: &str) {
        self.events.push(format!("comment {text:?}"));
    }
    fn begin_variation(&mut self, at: Location) -> Flow {
        self.events.push(format!("( {at:?}"));
        Flow::Continue
    }
    fn end_variation(&mut self) {
        self.events.push(")".into());
    }
    fn outcome(&mut self, result: Option<GameResult>) {
        self.events.push(format!("result {result:?}"));
    }
    fn end_game(&mut self) -> usize {
        self.events.push("end".into());
        self.events.len()
    }
}

fn record<R: std::io::BufRead>(input: R, skip_movetext: bool) -> Vec<String> {
    let mut reader = Reader::new(input);
    let mut rec = Recorder {
        skip_movetext,
        ..Recorder::default()
    };
    let mut out = Vec::new();
    // Bounded: each call consumes input or ends it.
    for _ in 0..100_000 {
        match reader.read_game(&mut rec) {
            Ok(None) => break,
            Ok(Some(_)) => out.push(format!("game at {:?}", reader.location())),
            Err(e) => out.push(format!("error {e}")),
        }
        out.append(&mut rec.events);
    }
    out.push(format!("started {}", reader.games_started()));
    out
}

type Outcome = Result<PgnGame, String>;

fn games<R: std::io::BufRead>(input: R, strictness: SanStrictness) -> Vec<Outcome> {
    let opts = BuilderOptions {
        strictness,
        ..BuilderOptions::default()
    };
    PgnGames::with_options(input, ReaderOptions::default(), opts)
        .take(100_000)
        .map(|g| g.map_err(|e: PgnError| e.to_string()))
        .collect()
}

/// The game with every node's as-written SAN cleared.
fn without_san(game: &PgnGame) -> PgnGame {
    fn clear(line: &mut Line) {
        for node in &mut line.nodes {
            node.san.clear();
            node.variations.iter_mut().for_each(clear);
        }
    }
    let mut g = game.clone();
    clear(&mut g.root);
    g
}

/// Every move is legal where it stands, and its written text reads back as it.
fn check_line(line: &Line, start: &Position, mainline: bool) {
    let mut pos = start.clone();
    assert!(
        line.nodes.is_empty() || line.comments.is_empty(),
        "line comments in a line with moves"
    );
    for node in &line.nodes {
        assert!(
            pos.is_legal(node.mv),
            "{:?} illegal in {}",
            node.mv,
            pos.fen()
        );
        assert!(
            !(mainline && node.mv.is_null()),
            "null move in the mainline"
        );
        assert_eq!(
            pos.parse_san(&node.san).as_ref(),
            Ok(&node.mv),
            "node SAN {:?} in {}",
            node.san,
            pos.fen()
        );
        for v in &node.variations {
            check_line(v, &pos, false);
        }
        pos = pos.play(node.mv).unwrap();
    }
}

fn tags_ok(game: &PgnGame) -> bool {
    game.tags.iter().all(|(name, value)| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !value.contains(['\n', '\r'])
    })
}

fn read_one(text: &str) -> PgnGame {
    let mut all: Vec<_> = chess_pgn::read_games(text.as_bytes()).collect();
    assert_eq!(
        all.len(),
        1,
        "written game reads back as {} games:\n{text}",
        all.len()
    );
    match all.pop().unwrap() {
        Ok(g) => g,
        Err(e) => panic!("written game does not read back: {e}\n{text}"),
    }
}

fn check_round_trip(g1: &PgnGame) {
    check_line(&g1.root, &g1.start, true);
    let Some(text) = g1.to_pgn() else {
        assert!(
            !tags_ok(g1),
            "a valid game with good tags cannot be written: {g1:?}"
        );
        return;
    };
    let g2 = read_one(&text);
    // Same start, moves, annotations and variations.
    assert_eq!(
        g2.start, g1.start,
        "start position changed through write/read:\n{text}"
    );
    assert_eq!(
        without_san(&g2).root,
        without_san(g1).root,
        "move tree changed through write/read:\n{text}"
    );
    // The result: the movetext's, else the Result tag's, else '*'.
    let expected = g1
        .result
        .or_else(|| g1.tag("Result").and_then(|r| r.parse().ok()))
        .unwrap_or(GameResult::Unknown);
    assert_eq!(
        g2.result,
        Some(expected),
        "result changed through write/read:\n{text}"
    );
    // Tags: all of g1's (first values unchanged), plus roster defaults and SetUp/FEN.
    for (name, _) in &g1.tags {
        assert_eq!(
            g2.tag(name),
            g1.tag(name),
            "tag {name:?} changed through write/read:\n{text}"
        );
    }
    let mut extra = g2.tags.clone();
    for t in &g1.tags {
        let i = extra
            .iter()
            .position(|x| x == t)
            .unwrap_or_else(|| panic!("tag {t:?} lost:\n{text}"));
        extra.remove(i);
    }
    for (name, _) in &extra {
        assert!(
            SEVEN_TAG_ROSTER.iter().any(|(n, _)| n == name) || name == "SetUp" || name == "FEN",
            "tag {name:?} appeared through write/read:\n{text}"
        );
    }
    // From here on, an exact fixed point.
    let text2 = g2
        .to_pgn()
        .unwrap_or_else(|| panic!("a read-back game cannot be written:\n{text}"));
    assert_eq!(
        text2, text,
        "writing the read-back game gives different text"
    );
    let g3 = read_one(&text2);
    assert_eq!(g3, g2, "write/read is not a fixed point:\n{text2}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    let step = 1 + (first as usize % 17);

    // Events: whole vs trickled, with and without skipping movetext.
    let skip = first & 0x80 != 0;
    let whole = record(input, skip);
    let trickled = record(
        BufReader::with_capacity(step, Trickle { data: input, step }),
        skip,
    );
    assert_eq!(
        whole, trickled,
        "events differ when the input comes {step} bytes at a time"
    );

    // Games: whole vs trickled, lenient vs strict.
    let lenient = games(input, SanStrictness::Lenient);
    let lenient_trickled = games(
        BufReader::with_capacity(step, Trickle { data: input, step }),
        SanStrictness::Lenient,
    );
    assert_eq!(
        lenient, lenient_trickled,
        "games differ when the input comes {step} bytes at a time"
    );
    let strict = games(input, SanStrictness::Strict);
    assert_eq!(
        lenient.len(),
        strict.len(),
        "strict and lenient see different numbers of games"
    );
    for (l, s) in lenient.iter().zip(&strict) {
        if let Ok(s) = s {
            assert_eq!(
                l.as_ref(),
                Ok(s),
                "strict accepts a game lenient reads differently"
            );
        }
    }

    for game in lenient.iter().flatten() {
        check_round_trip(game);
    }
});
