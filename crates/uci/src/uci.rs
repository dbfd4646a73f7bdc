//! The UCI protocol: reads command lines, turns them into [`Engine`] calls, and writes the
//! engine's answers. Nothing here searches or evaluates.
//!
//! A reader thread feeds lines through a channel, so a search never waits on input and `stop`
//! is seen at once; a waiter thread prints `bestmove` when a search ends. Malformed input is
//! answered with `info string` and otherwise ignored.

use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use chess_rules::Position;
use chess_search::{
    Bound, Engine, EngineOptions, EvalSource, Info, MAX_PLY, OPTIONS, OptionKind, SearchLimits,
    StopHandle, bench,
};

use crate::strength::{Set, Strength, levelled_move};

const NAME: &str = concat!("chess-platform ", env!("CARGO_PKG_VERSION"));
const AUTHOR: &str = "the chess-platform developers";

/// A line-oriented, thread-safe writer: whole lines never interleave.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    pub fn new(w: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(w))))
    }

    pub fn line(&self, text: &str) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A closed stdout (the GUI went away) is not worth a panic.
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }
}

struct Running {
    stopper: StopHandle,
    waiter: JoinHandle<()>,
}

/// The protocol state: the engine, the current position and game history, and the running
/// search if any.
pub struct Uci {
    engine: Engine,
    out: Output,
    position: Position,
    history: Vec<u64>,
    search: Option<Running>,
    strength: Strength,
}

/// Reads commands from `input` until `quit` or end of input.
pub fn run(input: impl BufRead + Send + 'static, out: Output) {
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::Builder::new()
        .name("uci-reader".into())
        .spawn(move || {
            let mut input = input;
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match input.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).into_owned();
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send("quit".to_owned());
        })
        .ok();
    let mut uci = Uci::new(out);
    for line in rx {
        if !uci.handle(&line) {
            break;
        }
    }
    uci.finish_search();
}

/// Runs the bench ([`bench::run_with`]) with `source` evaluating and prints its report: the
/// evaluation first, `Nodes searched` and `Nodes/second` last.
pub fn print_bench(depth: u32, source: &EvalSource, out: &Output) {
    let total = bench::BENCH_POSITIONS.len();
    out.line(&format!("Evaluation: {}", source.describe()));
    let report = bench::run_with(depth, source, |i, fen, nodes| {
        out.line(&format!(
            "Position {:>2}/{total}: {nodes:>10} nodes  {fen}",
            i + 1
        ));
    });
    out.line("===========================");
    out.line(&format!("Total time (ms): {}", report.elapsed_ms));
    out.line(&format!("Nodes searched: {}", report.nodes));
    out.line(&format!("Nodes/second: {}", report.nps));
}

impl Uci {
    pub fn new(out: Output) -> Uci {
        Uci {
            engine: Engine::new(EngineOptions::default()),
            out,
            position: Position::startpos(),
            history: Vec::new(),
            search: None,
            strength: Strength::new(),
        }
    }

    fn info_string(&self, text: &str) {
        self.out.line(&format!("info string {text}"));
    }

    /// Handles one line; false after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let line = line.trim();
        let mut words = line.split_whitespace();
        let Some(cmd) = words.next() else {
            return true;
        };
        let rest: Vec<&str> = words.collect();
        match cmd {
            "uci" => self.cmd_uci(),
            "isready" => self.out.line("readyok"),
            "debug" => {}
            "setoption" => self.cmd_setoption(&rest),
            "ucinewgame" => {
                self.finish_search();
                self.engine.new_game();
            }
            "position" => self.cmd_position(&rest),
            "go" => self.cmd_go(&rest),
            "stop" => {
                if let Some(r) = &self.search {
                    r.stopper.stop();
                }
            }
            "ponderhit" => {
                if let Some(r) = &self.search {
                    r.stopper.ponderhit();
                }
            }
            "quit" => return false,
            "bench" => {
                self.finish_search();
                let depth = match rest.first() {
                    None => Some(bench::BENCH_DEPTH),
                    Some(d) => d.parse().ok().filter(|&d| (1..=64).contains(&d)),
                };
                match depth {
                    Some(d) => print_bench(d, self.engine.eval_source(), &self.out),
                    None => self.info_string("bench takes a depth from 1 to 64"),
                }
            }
            "d" => {
                for l in format!("{:?}", self.position).lines() {
                    self.out.line(l);
                }
            }
            "eval" => {
                let v = self.engine.evaluate(&self.position);
                self.out
                    .line(&format!("info string static eval {v} cp (side to move)"));
            }
            _ => self.info_string(&format!("unknown command: {}", quote(line))),
        }
        true
    }

    fn cmd_uci(&self) {
        self.out.line(&format!("id name {NAME}"));
        self.out.line(&format!("id author {AUTHOR}"));
        for o in OPTIONS {
            let text = match o.kind {
                OptionKind::Spin { default, min, max } => {
                    format!(
                        "option name {} type spin default {default} min {min} max {max}",
                        o.name
                    )
                }
                OptionKind::Check { default } => {
                    format!("option name {} type check default {default}", o.name)
                }
                OptionKind::String { default } => {
                    format!("option name {} type string default {default}", o.name)
                }
            };
            self.out.line(&text);
        }
        for line in Strength::option_lines() {
            self.out.line(&line);
        }
        // The network kernels' instruction set, chosen from the CPU at run time.
        self.out.line(&format!(
            "info string simd {}",
            chess_search::Simd::detect()
        ));
        self.out.line("uciok");
    }

    fn cmd_setoption(&mut self, args: &[&str]) {
        // setoption name <words...> [value <words...>]
        if args.first() != Some(&"name") {
            self.info_string("usage: setoption name <name> [value <value>]");
            return;
        }
        let value_at = args.iter().position(|&w| w == "value");
        let name = args[1..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at
            .map(|i| args[i + 1..].join(" "))
            .unwrap_or_default();
        self.finish_search();
        match self.strength.set_option(&name, &value) {
            Set::NotMine => {}
            Set::Done(level) => {
                let text = level.unwrap_or_else(|| "level: full strength".to_owned());
                self.info_string(&text);
                return;
            }
            Set::Invalid(e) => {
                self.info_string(&format!("error: {e}"));
                return;
            }
        }
        match self.engine.set_option(&name, &value) {
            Err(e) => self.info_string(&format!("error: {e}")),
            Ok(()) if name.trim().eq_ignore_ascii_case("EvalFile") => {
                self.strength.evaluation_changed();
                let text = format!("evaluation: {}", self.engine.eval_source().describe());
                self.info_string(&text);
            }
            Ok(()) if name.trim().eq_ignore_ascii_case("TablePath") => {
                let text = match self.engine.tables() {
                    Some(tb) => format!(
                        "tables: {} endings, up to {} pieces, from {}",
                        tb.tables().len(),
                        tb.max_pieces(),
                        tb.dir().display()
                    ),
                    None => "tables: none".to_owned(),
                };
                self.info_string(&text);
            }
            Ok(()) => {}
        }
    }

    fn cmd_position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&w| w == "moves");
        let setup = &args[..moves_at.unwrap_or(args.len())];
        let start = match setup.first() {
            Some(&"startpos") if setup.len() == 1 => Position::startpos(),
            Some(&"fen") if setup.len() > 1 => match Position::from_fen(&setup[1..].join(" ")) {
                Ok(p) => p,
                Err(e) => {
                    self.info_string(&format!("error: bad fen: {e}"));
                    return;
                }
            },
            _ => {
                self.info_string("usage: position startpos|fen <fen> [moves <move>...]");
                return;
            }
        };
        let mut pos = start;
        let mut history = Vec::new();
        for text in moves_at.map_or(&[][..], |i| &args[i + 1..]) {
            match pos.parse_uci(text) {
                Ok(m) if !m.is_null() => {
                    history.push(pos.zobrist());
                    pos.play_unchecked(m);
                }
                Ok(_) => {
                    self.info_string("error: null moves are not accepted; moves after it ignored");
                    break;
                }
                Err(e) => {
                    self.info_string(&format!("error: {e}; moves after it ignored"));
                    break;
                }
            }
        }
        self.position = pos;
        self.history = history;
    }

    /// Starts a search. Every `go` ends in a `bestmove`: one that cannot be read in full is
    /// reported with `info string error: ...` and answered at once from a depth-1 search, so
    /// that a GUI never waits for a search that was not started.
    fn cmd_go(&mut self, args: &[&str]) {
        self.finish_search();
        let limits = match parse_go(&self.position, args) {
            Ok(l) => l,
            Err(e) => {
                self.info_string(&format!(
                    "error: {e}; the go command is answered at once from a depth 1 search"
                ));
                SearchLimits::depth(1)
            }
        };
        let out = self.out.clone();
        let show_wdl = self.engine.options().show_wdl;
        let on_info = move |info: &Info| out.line(&format_info(info, show_wdl));
        // At a level: the level's engine and limits, and its draw among the lines.
        let level = self.strength.level();
        let (engine, limits, seed) = match &level {
            Some(level) => self
                .strength
                .prepare(level, self.engine.eval_source(), limits),
            None => (&mut self.engine, limits, 0),
        };
        let handle = engine.go(&self.position, &self.history, limits, on_info);
        let stopper = handle.stopper();
        let out = self.out.clone();
        let position = self.position.clone();
        let waiter = std::thread::spawn(move || {
            let result = handle.wait();
            let (best, ponder) = match &level {
                Some(level) => levelled_move(level, &position, &result, seed),
                None => (result.best_move, result.ponder),
            };
            let text = match (best, ponder) {
                (Some(b), Some(p)) => format!("bestmove {b} ponder {p}"),
                (Some(b), None) => format!("bestmove {b}"),
                (None, _) => "bestmove (none)".to_owned(),
            };
            out.line(&text);
        });
        self.search = Some(Running { stopper, waiter });
    }

    /// Stops a running search and waits until its `bestmove` is out.
    fn finish_search(&mut self) {
        if let Some(r) = self.search.take() {
            r.stopper.stop();
            let _ = r.waiter.join();
        }
    }
}

/// The deepest `go depth` and longest `go mate` the search can use; larger values saturate.
const MAX_DEPTH: u64 = MAX_PLY as u64;
/// Times (ms) above this, about 34 years, saturate to it, so that clock arithmetic cannot
/// overflow.
const MAX_TIME_MS: u64 = 1 << 40;
/// The longest piece of a bad command quoted back.
const QUOTE_CHARS: usize = 40;

/// `text` quoted, cut short when long.
fn quote(text: &str) -> String {
    let n = text.chars().count();
    if n <= QUOTE_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(QUOTE_CHARS).collect();
        format!("{head:?}... ({n} characters)")
    }
}

/// Reads a whole number: optional sign and decimal digits. Values beyond `max` saturate to
/// it, negative ones (clocks that ran out, as some GUIs send) to zero.
fn whole_number(text: &str, max: u64) -> Option<u64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if negative {
        return Some(0);
    }
    // Too many digits for u64 is out of range, not malformed.
    Some(digits.parse::<u64>().unwrap_or(u64::MAX).min(max))
}

/// The words `go` takes; anything else in their place is an error.
const GO_WORDS: [&str; 12] = [
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// Reads the arguments of `go`. Numbers out of range saturate (depths and mates to the
/// search's deepest ply, times to [`MAX_TIME_MS`]); a number that is not a whole number, an
/// unknown word or an illegal `searchmoves` move is an error.
pub fn parse_go(pos: &Position, args: &[&str]) -> Result<SearchLimits, String> {
    let mut l = SearchLimits::default();
    let mut i = 0;
    let number = |i: usize, name: &str, max: u64| -> Result<u64, String> {
        let text = args
            .get(i + 1)
            .filter(|t| !GO_WORDS.contains(t))
            .ok_or_else(|| format!("go {name} needs a number"))?;
        whole_number(text, max)
            .ok_or_else(|| format!("go {name}: {} is not a whole number", quote(text)))
    };
    while i < args.len() {
        let word = args[i];
        match word {
            "infinite" => l.infinite = true,
            "ponder" => l.ponder = true,
            "searchmoves" => {
                // Moves up to the next keyword, each legal here.
                while let Some(text) = args.get(i + 1).filter(|t| !GO_WORDS.contains(t)) {
                    match pos.parse_uci(text) {
                        Ok(m) if !m.is_null() => l.searchmoves.push(m),
                        Ok(_) => {
                            return Err("go searchmoves: a null move cannot be searched".into());
                        }
                        Err(e) => return Err(format!("go searchmoves {}: {e}", quote(text))),
                    }
                    i += 1;
                }
            }
            "wtime" | "btime" | "winc" | "binc" | "movetime" => {
                let v = number(i, word, MAX_TIME_MS)?;
                match word {
                    "wtime" => l.wtime = Some(v),
                    "btime" => l.btime = Some(v),
                    "winc" => l.winc = Some(v),
                    "binc" => l.binc = Some(v),
                    _ => l.movetime = Some(v),
                }
                i += 1;
            }
            "movestogo" | "depth" | "mate" => {
                let max = if word == "movestogo" {
                    u64::from(u32::MAX)
                } else {
                    MAX_DEPTH
                };
                let v = number(i, word, max)?.max(1) as u32;
                match word {
                    "movestogo" => l.movestogo = Some(v),
                    "depth" => l.depth = Some(v),
                    _ => l.mate = Some(v),
                }
                i += 1;
            }
            "nodes" => {
                l.nodes = Some(number(i, word, u64::MAX)?.max(1));
                i += 1;
            }
            other => return Err(format!("go: unknown parameter {}", quote(other))),
        }
        i += 1;
    }
    Ok(l)
}

/// One `info` line.
pub fn format_info(info: &Info, show_wdl: bool) -> String {
    let l = &info.line;
    let mut s = format!(
        "info depth {} seldepth {} multipv {} score {}",
        l.depth, l.seldepth, l.multipv, l.score
    );
    match info.bound {
        Some(Bound::Lower) => s.push_str(" lowerbound"),
        Some(Bound::Upper) => s.push_str(" upperbound"),
        _ => {}
    }
    if show_wdl {
        let (w, d, lo) = l.wdl;
        s.push_str(&format!(" wdl {w} {d} {lo}"));
    }
    s.push_str(&format!(
        " nodes {} nps {} hashfull {} tbhits {} time {}",
        l.nodes, l.nps, info.hashfull, l.tbhits, l.time_ms
    ));
    if !l.pv.is_empty() {
        s.push_str(" pv");
        for m in &l.pv {
            s.push(' ');
            s.push_str(&m.to_string());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_rules::Move;

    /// An `Output` whose lines the test can read.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        /// Everything written since the last call.
        fn take(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
        }
    }

    #[test]
    fn eval_file_option() {
        let buf = Captured::default();
        let mut uci = Uci::new(Output::new(buf.clone()));
        uci.handle("uci");
        assert!(
            buf.take()
                .contains("option name EvalFile type string default default\n")
        );
        // The embedded network evaluates from the start.
        assert!(matches!(uci.engine.eval_source(), EvalSource::Network(_)));
        uci.handle("eval");
        let start_eval = buf.take();
        let cp: i32 = start_eval
            .strip_prefix("info string static eval ")
            .and_then(|t| t.strip_suffix(" cp (side to move)\n"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{start_eval}"));
        // The start position is about level (the side to move's small edge is the network's).
        assert!(cp.abs() < 100, "{cp}");

        uci.handle("setoption name EvalFile value hand");
        assert_eq!(
            buf.take(),
            "info string evaluation: hand-written evaluation\n"
        );
        uci.handle("setoption name EvalFile value default");
        let text = buf.take();
        assert!(
            text.starts_with("info string evaluation: network chnn-")
                && text.ends_with(".nnue (hidden 256)\n"),
            "{text}"
        );
        uci.handle("eval");
        assert_eq!(buf.take(), start_eval);
        uci.handle("position startpos moves e2e4 e7e5 d1h5 b8c6 h5e5");
        uci.handle("go depth 4");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut seen = String::new();
        while !seen.contains("bestmove") && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            seen.push_str(&buf.take());
        }
        assert!(seen.contains("bestmove"), "{seen}");

        // A missing file and a corrupt one: clear errors, and the network stays.
        uci.handle("setoption name EvalFile value /no/such/net.nnue");
        let text = buf.take();
        assert!(
            text.starts_with(
                "info string error: EvalFile \"/no/such/net.nnue\" not loaded (network file /no/such/net.nnue: "
            ) && text.ends_with(
                "the evaluation is unchanged (expected hand, default or the path of a network file)\n"
            ),
            "{text}"
        );
        let path = std::env::temp_dir().join(format!("chess-uci-bad-{}.nnue", std::process::id()));
        std::fs::write(&path, b"CHNN\x04\0\0\0 not a network at all, really not").unwrap();
        uci.handle(&format!("setoption name EvalFile value {}", path.display()));
        let text = buf.take();
        std::fs::remove_file(&path).unwrap();
        assert!(
            text.contains(
                "(network format version 4 is not supported: this build reads versions 1 to 3)"
            ),
            "{text}"
        );
        assert!(matches!(uci.engine.eval_source(), EvalSource::Network(_)));

        uci.handle("setoption name evalfile value Hand");
        assert_eq!(
            buf.take(),
            "info string evaluation: hand-written evaluation\n"
        );
        assert!(matches!(uci.engine.eval_source(), EvalSource::Hand));
    }

    fn moves_text(moves: &[Move]) -> String {
        moves
            .iter()
            .map(Move::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn go_parameters() {
        let pos = Position::startpos();
        let l = parse_go(
            &pos,
            &[
                "wtime",
                "1000",
                "btime",
                "-5",
                "winc",
                "10",
                "binc",
                "20",
                "movestogo",
                "7",
            ],
        )
        .unwrap();
        assert_eq!(
            (l.wtime, l.btime, l.winc, l.binc, l.movestogo),
            (Some(1000), Some(0), Some(10), Some(20), Some(7))
        );
        let l = parse_go(
            &pos,
            &["depth", "5", "searchmoves", "e2e4", "d2d4", "nodes", "9"],
        )
        .unwrap();
        assert_eq!(l.depth, Some(5));
        assert_eq!(moves_text(&l.searchmoves), "e2e4 d2d4");
        assert_eq!(l.nodes, Some(9));
        let l = parse_go(&pos, &["infinite"]).unwrap();
        assert!(l.infinite);
        let l = parse_go(&pos, &["ponder", "movetime", "50", "mate", "3"]).unwrap();
        assert!(l.ponder && l.movetime == Some(50) && l.mate == Some(3));
        assert!(parse_go(&pos, &["depth"]).is_err());
        assert!(parse_go(&pos, &["depth", "x"]).is_err());
        assert!(parse_go(&pos, &["sideways"]).is_err());
    }

    #[test]
    fn go_numbers_out_of_range_saturate() {
        let pos = Position::startpos();
        let go = |line: &str| parse_go(&pos, &line.split_whitespace().collect::<Vec<_>>());
        let deepest = Some(MAX_PLY as u32);
        assert_eq!(go("depth 2147483648").unwrap().depth, deepest);
        assert_eq!(go("depth 4294967296").unwrap().depth, deepest);
        assert_eq!(go("depth 99999999999999999999999").unwrap().depth, deepest);
        assert_eq!(go("mate 2147483648").unwrap().mate, deepest);
        assert_eq!(go("depth 0").unwrap().depth, Some(1));
        assert_eq!(go("depth +7").unwrap().depth, Some(7));
        assert_eq!(
            go("nodes 99999999999999999999999").unwrap().nodes,
            Some(u64::MAX)
        );
        let l =
            go("wtime 99999999999999999999 btime -99999999999999999999 movetime 1e3x").unwrap_err();
        assert!(l.contains("movetime"), "{l}");
        let l =
            go("wtime 99999999999999999999 btime -99999999999999999999 winc 18446744073709551615")
                .unwrap();
        assert_eq!(
            (l.wtime, l.btime, l.winc),
            (Some(MAX_TIME_MS), Some(0), Some(MAX_TIME_MS))
        );
        assert_eq!(
            go("movestogo 99999999999").unwrap().movestogo,
            Some(u32::MAX)
        );
    }

    #[test]
    fn go_that_cannot_be_read_is_an_error() {
        let pos = Position::startpos();
        let go = |line: &str| parse_go(&pos, &line.split_whitespace().collect::<Vec<_>>());
        for bad in [
            "depth 1e9",
            "depth -",
            "depth 12abc",
            "banana 5",
            "searchmoves e2e5 nodes 100",
            "searchmoves 0000",
            "depth nodes 5",
            "nodes",
        ] {
            assert!(go(bad).is_err(), "{bad}");
        }
        let long = format!("depth {}", "9x".repeat(500));
        let e = go(&long).unwrap_err();
        assert!(e.len() < 120 && e.contains("(1000 characters)"), "{e}");
        // searchmoves ends at the next keyword.
        let l = go("searchmoves e2e4 g1f3 depth 3").unwrap();
        assert_eq!(moves_text(&l.searchmoves), "e2e4 g1f3");
        assert_eq!(l.depth, Some(3));
    }

    /// Every `go` is answered with a `bestmove`, even one that cannot be read.
    #[test]
    fn bad_go_still_ends_in_bestmove() {
        let buf = Captured::default();
        let mut uci = Uci::new(Output::new(buf.clone()));
        for line in [
            "go depth 1e9",
            "go searchmoves e2e5 nodes 100",
            "go banana 5",
        ] {
            uci.handle(line);
            uci.finish_search();
            let text = buf.take();
            assert!(text.starts_with("info string error: "), "{line}: {text}");
            let last = text.lines().last().unwrap_or_default();
            assert!(last.starts_with("bestmove "), "{line}: {text}");
            Position::startpos()
                .parse_uci(&last["bestmove ".len()..])
                .unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
}
