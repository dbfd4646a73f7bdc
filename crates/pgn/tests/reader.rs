//! The tokenising reader: events, error locations, recovery, limits and hostile input.

mod common;

use std::io::{self, BufRead, BufReader, Read};

use chess_pgn::{
    ErrorKind, Flow, GameBuilder, Location, PgnError, ReadError, Reader, ReaderOptions, Skipper,
    Visitor, read_games,
};
use common::{GOOD_FILES, Recorder, Rng, data, without_san, write};

/// Each game's events, or its error message.
fn events(pgn: &str) -> Vec<Result<Vec<String>, String>> {
    Reader::new(pgn.as_bytes())
        .games(&mut Recorder::default())
        .map(|g| g.map_err(|e| e.to_string()))
        .collect()
}

fn sans(pgn: &str) -> Vec<String> {
    let games = events(pgn);
    assert_eq!(games.len(), 1, "{games:?}");
    games[0]
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix("san "))
        .map(|e| e.split(' ').next().unwrap().to_owned())
        .collect()
}

fn first_error(pgn: &str, opts: ReaderOptions) -> (ErrorKind, u64, u64) {
    let mut reader = Reader::with_options(pgn.as_bytes(), opts);
    loop {
        match reader.read_game(&mut Skipper) {
            Ok(Some(())) => {}
            Ok(None) => panic!("no error in {pgn:?}"),
            Err(ReadError::Syntax(e)) => return (e.kind, e.at.line, e.at.column),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_game_event_by_event() {
    let pgn = "[Event \"E\"]\n[Note \"say \\\"hi\\\" \\\\ bye\"]\n\n\
               {pre} 1. e4! e5 $2 (1... c5 ; sicilian\n2. Nf3) 2. Nf3?! 1-0\n";
    let games = events(pgn);
    let expected = [
        "game 1 1:1",
        "tag Event=E",
        "tag Note=say \"hi\" \\ bye",
        "movetext",
        "comment \"pre\"",
        "san e4 4:10",
        "nag 1",
        "san e5 4:14",
        "nag 2",
        "( 4:20",
        "san c5 4:26",
        "comment \" sicilian\"",
        "san Nf3 5:4",
        ")",
        "san Nf3 5:12",
        "nag 6",
        "outcome 1-0",
    ];
    assert_eq!(games, [Ok(expected.map(String::from).to_vec())]);
}

#[test]
fn move_number_forms() {
    assert_eq!(
        sans("1.e4 1...e5 2. Nf3 2... Nc6 3 Bb5 3. ... a6 4.Ba4 4…Nf6 *"),
        ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
    );
    assert_eq!(
        sans("1. O-O-O 0-0 2. 0-0-0+ Z0 3. -- e8=Q# *"),
        ["O-O-O", "0-0", "0-0-0+", "Z0", "--", "e8=Q#"]
    );
}

#[test]
fn suffixes_and_symbols_are_nags() {
    let games = events("1. e4 !! e5 ?? 2. Nf3!? Nc6?! 3. Bb5 +- a6 = 4. Ba4 $0 $255 -/+ ±\n*");
    let nags: Vec<&str> = games[0]
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix("nag "))
        .collect();
    assert_eq!(
        nags,
        ["3", "4", "5", "6", "18", "10", "0", "255", "17", "16"]
    );
}

#[test]
fn escape_lines_bom_and_results() {
    let pgn = "\u{feff}% a comment line\n[Event \"x\"]\n% another\n\n%1. d4\n1. e4 ½-½\n";
    let games = events(pgn);
    let g = games[0].as_ref().unwrap();
    assert_eq!(g[0], "game 1 2:1");
    assert!(g.contains(&"san e4 6:4".to_owned()));
    assert_eq!(g.last().unwrap(), "outcome 1/2-1/2");
    assert_eq!(g.iter().filter(|e| e.starts_with("san")).count(), 1);
    // `%` elsewhere is an error.
    let (kind, line, col) = first_error("1. e4 % e5 *", ReaderOptions::default());
    assert_eq!((kind, line, col), (ErrorKind::BadToken("%".into()), 1, 7));
}

#[test]
fn games_without_tags_or_results() {
    // Without a result between them, tagless movetext runs on; a tag section starts a game.
    let games = events("1. e4 e5\n\n1. d4 d5 *\n1. c4 c5\n[Event \"x\"]\n1. Nf3");
    let sans: Vec<Vec<&str>> = games
        .iter()
        .map(|g| {
            g.as_ref()
                .unwrap()
                .iter()
                .filter(|e| e.starts_with("san"))
                .map(|e| &e[4..7])
                .collect()
        })
        .collect();
    assert_eq!(
        sans,
        [
            vec!["e4 ", "e5 ", "d4 ", "d5 "],
            vec!["c4 ", "c5 "],
            vec!["Nf3"]
        ]
    );
    let outcomes: Vec<&str> = games
        .iter()
        .map(|g| g.as_ref().unwrap().last().unwrap().as_str())
        .collect();
    assert_eq!(outcomes, ["outcome *", "outcome none", "outcome none"]);
}

#[test]
fn errors_have_kind_line_and_column() {
    use ErrorKind::*;
    let d = ReaderOptions::default();
    let cases: Vec<(&str, ErrorKind, u64, u64)> = vec![
        ("1. e4 {open", UnterminatedComment, 1, 7),
        ("\n  1. e4 {open\nmore\n\n1. d4", UnterminatedComment, 2, 9),
        ("[Event \"x\n\n1. e4 *", UnterminatedTag, 1, 1),
        ("[Event \"x\"", UnterminatedTag, 1, 1),
        (
            "[Event x]\n",
            BadTag("expected '\"' to open the value"),
            1,
            8,
        ),
        (
            "[ \"x\"]",
            BadTag("expected a tag name (letters, digits, '_')"),
            1,
            3,
        ),
        ("1. e4 (e5 (d5) *", UnclosedVariation, 1, 7),
        (
            "1. e4 (e5 (d5) *\n[Event \"next\"]",
            UnclosedVariation,
            1,
            7,
        ),
        ("1. e4 e5 )", UnmatchedParen, 1, 10),
        ("1. e4 e5 }", UnexpectedChar('}'), 1, 10),
        ("1. e4 ]", UnexpectedChar(']'), 1, 7),
        ("1. e4 $ e5", BadNag("$".into()), 1, 7),
        ("1. e4 $256", BadNag("$256".into()), 1, 7),
        ("1. e4 e5!!! *", BadToken("e5!!!".into()), 1, 7),
        ("1. e4 <e5> *", BadToken("<e5>".into()), 1, 7),
        ("1. e4 12e4 *", BadToken("12e4".into()), 1, 7),
        ("1. e4 \"e5\" *", BadToken("\"e5\"".into()), 1, 7),
        // Columns count characters, not bytes.
        ("{ü日本} &", BadToken("&".into()), 1, 7),
        ("1. e4 { a\nbü } &", BadToken("&".into()), 2, 6),
    ];
    for (pgn, kind, line, col) in cases {
        assert_eq!(first_error(pgn, d), (kind, line, col), "{pgn:?}");
    }
    let shallow = ReaderOptions { max_depth: 3, ..d };
    assert_eq!(
        first_error("1. e4 (e5 (d5 (c5 (b5", shallow),
        (TooDeep { limit: 3 }, 1, 19)
    );
    let short = ReaderOptions {
        max_item_len: 10,
        ..d
    };
    let too_long = |what| TooLong { what, limit: 10 };
    assert_eq!(
        first_error("1. e4 {0123456789A} *", short),
        (too_long("comment"), 1, 7)
    );
    assert_eq!(
        first_error("1. e4 ;0123456789A\n*", short),
        (too_long("comment"), 1, 7)
    );
    assert_eq!(
        first_error("1. Nf3xxxxxxxxxxxxxxxx *", short),
        (too_long("token"), 1, 4)
    );
    assert_eq!(
        first_error("[Event \"0123456789A\"]", short),
        (too_long("tag pair"), 1, 1)
    );
}

#[test]
fn recovery_resumes_at_the_next_tag_section() {
    // The broken line ends in a result: the tag line right after it is the next game.
    let games = events("1. e4 && e5 *\n[Event \"a\"]\n1. d4 *\n\n[Event \"b\"]\n1. c4 *");
    assert!(games[0].is_err());
    assert_eq!(games[1].as_ref().unwrap()[1], "tag Event=a");
    assert_eq!(games.len(), 3);
    // Otherwise the tag line must follow an empty line.
    let games = events("1. e4 &&\n[Event \"skipped\"]\n1. d4 *\n\n[Event \"b\"]\n1. c4 *");
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].as_ref().unwrap()[1], "tag Event=b");
    // A broken tag section is skipped as a whole.
    let games = events("[Event \"x]\n[Site \"y\"]\n\n1. e4 *\n\n[Event \"c\"]\n*");
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].as_ref().unwrap()[1], "tag Event=c");
    // A comment that runs into the next game gives that game back.
    let games = events("1. e4 { oops\n\n[Event \"d\"]\n\n1. d4 *");
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].as_ref().unwrap()[1], "tag Event=d");
    // A comment may hold empty lines and brackets that are not a tag pair.
    let games = events("1. e4 { a\n\n[%clk 0:01]\n\n[not a tag]\n} *");
    assert_eq!(games.len(), 1);
    assert!(games[0].is_ok());
}

/// Counts the moves reported, skipping every variation.
#[derive(Default)]
struct MainlineOnly(usize);

impl Visitor for MainlineOnly {
    type Output = usize;
    fn begin_game(&mut self, _: u64, _: Location) {
        self.0 = 0;
    }
    fn san(&mut self, _: &str, _: Location) {
        self.0 += 1;
    }
    fn begin_variation(&mut self, _: Location) -> Flow {
        Flow::Skip
    }
    fn end_variation(&mut self) {
        panic!("a skipped variation has no end event");
    }
    fn end_game(&mut self) -> usize {
        self.0
    }
}

#[test]
fn skipping_variations_and_movetext() {
    let bytes = data("variations.pgn");
    let counts: Vec<usize> = Reader::new(&bytes[..])
        .games(&mut MainlineOnly::default())
        .map(Result::unwrap)
        .collect();
    assert_eq!(counts, [9, 14, 30]);
    // Skipped movetext is still checked and still ends at its result.
    let mut reader = Reader::new(&b"1. e4 (e5 *\n\n1. d4 *"[..]);
    assert!(reader.read_game(&mut Skipper).is_err());
    assert_eq!(reader.games_started(), 1);
    let files: usize = GOOD_FILES
        .iter()
        .map(|f| {
            Reader::new(&data(f)[..])
                .games(&mut Skipper)
                .map(Result::unwrap)
                .count()
        })
        .sum();
    assert_eq!(files, 25);
}

/// Fails after handing out `ok` bytes.
struct Failing {
    data: &'static [u8],
    ok: usize,
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ok == 0 {
            return Err(io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.ok).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.ok -= n;
        Ok(n)
    }
}

#[test]
fn an_io_error_ends_the_input() {
    let input = Failing {
        data: b"1. e4 e5 *\n\n1. d4 d5 *\n",
        ok: 14,
    };
    let mut reader = Reader::new(BufReader::with_capacity(4, input));
    let mut rec = Recorder::default();
    assert!(reader.read_game(&mut rec).unwrap().is_some());
    assert!(matches!(reader.read_game(&mut rec), Err(ReadError::Io(_))));
    assert!(reader.read_game(&mut rec).unwrap().is_none());
    assert!(reader.read_game(&mut rec).unwrap().is_none());
}

/// Records the largest buffer the reader asks to fill.
struct Watch<R> {
    inner: R,
    largest: usize,
}

impl<R: Read> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.largest = self.largest.max(buf.len());
        self.inner.read(buf)
    }
}

impl<R: Read> BufRead for Watch<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        unreachable!("the reader only calls read")
    }
    fn consume(&mut self, _: usize) {}
}

#[test]
fn memory_stays_bounded_on_huge_items() {
    let huge = "a".repeat(5 << 20);
    for (prefix, suffix) in [
        ("1. e4 {", "}"),
        ("1. e4 ", ""),
        ("[Event \"", "\"]"),
        ("1. e4 ;", ""),
    ] {
        let pgn = format!("{prefix}{huge}{suffix} *\n\n[Event \"after\"]\n\n1. d4 *\n");
        let mut reader = Reader::new(Watch {
            inner: pgn.as_bytes(),
            largest: 0,
        });
        let mut rec = Recorder::default();
        let err = reader.read_game(&mut rec).unwrap_err();
        assert!(
            matches!(err.as_syntax().unwrap().kind, ErrorKind::TooLong { .. }),
            "{err}"
        );
        let next = reader.read_game(&mut rec).unwrap().unwrap();
        assert_eq!(next[1], "tag Event=after", "{prefix}");
        let largest = reader.into_inner().largest;
        assert!(largest <= 3 << 20, "{prefix}: buffer of {largest} bytes");
    }
    // Long lines and runs of whitespace do not grow the buffer at all.
    let pgn = format!("1. e4{} e5 *", " ".repeat(5 << 20));
    let mut reader = Reader::new(Watch {
        inner: pgn.as_bytes(),
        largest: 0,
    });
    assert!(reader.read_game(&mut Skipper).unwrap().is_some());
    assert!(reader.into_inner().largest <= 64 << 10);
}

/// Reads everything with validation; fails if reading does not come to an end.
fn read_all(bytes: &[u8]) -> Vec<Result<chess_pgn::PgnGame, PgnError>> {
    let mut out = Vec::new();
    for game in read_games(bytes) {
        out.push(game);
        assert!(out.len() <= bytes.len() + 1, "reading does not end");
    }
    out
}

#[test]
fn hostile_inputs_neither_panic_nor_hang() {
    let mut inputs: Vec<Vec<u8>> = vec![
        "(".repeat(100_000).into_bytes(),
        format!("1. e4 {}", "(e5 ".repeat(10_000)).into_bytes(),
        ")".repeat(1000).into_bytes(),
        "[".repeat(100_000).into_bytes(),
        "[Event \"x\"]\n".repeat(10_000).into_bytes(),
        "{".repeat(1000).into_bytes(),
        "}".repeat(1000).into_bytes(),
        "\"".repeat(1000).into_bytes(),
        "$".repeat(1000).into_bytes(),
        "%\n".repeat(1000).into_bytes(),
        "\n".repeat(100_000).into_bytes(),
        "1. e4 *".repeat(1000).into_bytes(),
        "1-0 ".repeat(1000).into_bytes(),
        "$9999999999999999999999 ".repeat(10).into_bytes(),
        b"[Event \"".to_vec(),
        b"[Event".to_vec(),
        b"[".to_vec(),
        b"[Event \"\\".to_vec(),
        b"1.".to_vec(),
        b"\xef\xbb".to_vec(),
        b"\xef\xbb\xbf".to_vec(),
        b"\0\0\0".to_vec(),
        b"[Event \"\xff\xfe\"]\n\n1. e4 {\xc3} \xff *".to_vec(),
        b"1. e4 { a }\r\r\r\r e5 *\r".to_vec(),
        b"1. e4 (--) (Z0 Z0) -- *".to_vec(),
        Vec::new(),
    ];
    let mut rng = Rng::new(7);
    for _ in 0..20 {
        let len = rng.below(20_000);
        inputs.push((0..len).map(|_| rng.next_u64() as u8).collect());
        let alphabet = b"{}()[];$%\"\\\n\r 1.e4Nf3-O*!?x=+#/";
        inputs.push((0..len).map(|_| *rng.pick(alphabet)).collect());
    }
    // Set-up positions from mangled FEN tags.
    let fens = [
        "r3k2r/pppq1ppp/2npbn2/4p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R w KQkq - 4 9",
        "8/8/8/8/8/8/8/8 w - - 0 1",
    ];
    let fen_bytes = b"/12345678kqrbnpKQRBNPwb- \"\\x";
    for _ in 0..2000 {
        let mut fen = rng.pick(&fens).as_bytes().to_vec();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(fen.len());
            match rng.below(3) {
                0 => fen[at] = *rng.pick(fen_bytes),
                1 => fen.insert(at, *rng.pick(fen_bytes)),
                _ => drop(fen.remove(at)),
            }
        }
        let mut pgn = b"[FEN \"".to_vec();
        pgn.extend_from_slice(&fen);
        pgn.extend_from_slice(b"\"]\n\n1. O-O-O Nf6 2. e4 exd3 *\n");
        inputs.push(pgn);
    }
    for input in &inputs {
        read_all(input);
        Reader::new(common::Trickle::new(input.clone()))
            .games(&mut Skipper)
            .for_each(drop);
    }
}

/// Random edits of the corpus: reading never panics, and every game it accepts writes out
/// and reads back to the same tree.
#[test]
fn mutated_corpus() {
    let files: Vec<Vec<u8>> = GOOD_FILES.iter().map(|f| data(f)).collect();
    let specials = b"{}()[];$%\"\\\n \r.!?-";
    let mut rng = Rng::new(2024);
    let mut accepted = 0;
    for _ in 0..300 {
        let mut bytes = rng.pick(&files).clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(4) {
                0 => bytes.insert(at, *rng.pick(specials)),
                1 => {
                    let end = (at + 1 + rng.below(20)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 => {
                    let end = (at + 1 + rng.below(40)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    let to = rng.below(bytes.len());
                    bytes.splice(to..to, copy);
                }
                _ => bytes[at] = rng.next_u64() as u8,
            }
        }
        for game in read_all(&bytes).into_iter().flatten() {
            let text = write(&game);
            let again = chess_pgn::PgnGame::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(without_san(&again.root), without_san(&game.root), "{text}");
            accepted += 1;
        }
    }
    assert!(accepted > 500, "only {accepted} games survived the edits");
}

#[test]
fn builder_reuse_after_errors() {
    // A syntax error in the middle of a game leaves the builder ready for the next one.
    let pgn = "1. e4 (e5 d5 }\n\n[Event \"ok\"]\n\n1. d4 (1. c4 c5) d5 *\n";
    let mut reader = Reader::new(pgn.as_bytes());
    let mut builder = GameBuilder::new();
    assert!(reader.read_game(&mut builder).is_err());
    let game = reader.read_game(&mut builder).unwrap().unwrap().unwrap();
    assert_eq!(game.tag("Event"), Some("ok"));
    assert_eq!(game.root.node_count(), 4);
    assert!(reader.read_game(&mut builder).unwrap().is_none());
    assert_eq!(reader.location().line, 6);
}
