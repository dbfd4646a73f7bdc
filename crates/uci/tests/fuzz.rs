//! Random and mutated command lines sent to the real `chess-uci` binary. Every `go` must end
//! in exactly one legal `bestmove` within its limits (or within a second of `stop` when it
//! has none), and the engine must answer `isready` after every other command.
//!
//! Deterministic: `UCI_FUZZ_SEED` picks the sequence (printed on failure) and `UCI_FUZZ_GOS`
//! how many `go` commands are sent (default 250).

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use chess_rules::Position;
use common::{SECOND, Uci};

/// splitmix64: small, deterministic, good enough to pick test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

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

/// Numbers at and around the boundaries, and things that look like numbers but are not.
const ODD_NUMBERS: [&str; 22] = [
    "0",
    "-0",
    "+5",
    "-1",
    "-99999999999",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999",
    "1e9",
    "1.5",
    "0x10",
    "",
    "-",
    "ten",
    "５",
    "NaN",
];

const JUNK: [&str; 10] = [
    "banana",
    "e2e5",
    "0000",
    "a7a8q",
    "--",
    "go",
    "quitx",
    "\u{fffd}",
    "ÿ",
    "searchmovesdepth",
];

/// Positions that exercise the edges: mate, stalemate, a single legal move, promotions.
const FENS: [&str; 6] = [
    "k7/1Q6/2K5/8/8/8/8/8 b - - 0 1",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1",
    "8/P6k/8/8/8/8/6Kp/8 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
];

/// A small limit for the side to move: the search must end by itself, soon.
fn small_limit(rng: &mut Rng, white: bool) -> String {
    match rng.below(5) {
        0 => format!("depth {}", 1 + rng.below(3)),
        1 => format!("nodes {}", 1 + rng.below(20_000)),
        2 => format!("movetime {}", rng.below(200)),
        3 => format!("mate {} depth {}", 1 + rng.below(2), 1 + rng.below(3)),
        _ => {
            let (us, them) = if white { ("w", "b") } else { ("b", "w") };
            format!(
                "{us}time {} {them}time {} {us}inc {}",
                rng.below(2_000),
                rng.below(100_000),
                rng.below(100)
            )
        }
    }
}

/// Any parameter, with a value from anywhere.
fn random_param(rng: &mut Rng, pos: &Position) -> String {
    let word = rng.pick(&GO_WORDS);
    let value = match rng.below(4) {
        0 => rng.pick(&ODD_NUMBERS).to_owned(),
        1 => rng.next().to_string(),
        2 => (rng.below(3000) as i64 - 100).to_string(),
        _ => {
            let moves = pos.legal_moves();
            match moves.is_empty() {
                true => "e2e4".to_owned(),
                false => moves[rng.below(moves.len())].to_string(),
            }
        }
    };
    match word {
        "infinite" | "ponder" => word.to_owned(),
        _ => format!("{word} {value}"),
    }
}

/// A `go` line: well formed with a small limit, or random parameters, or mutated.
fn go_line(rng: &mut Rng, pos: &Position) -> String {
    let mut words: Vec<String> = vec!["go".into()];
    let params = rng.below(4);
    for _ in 0..params {
        words.push(random_param(rng, pos));
    }
    if rng.chance(70) {
        let at = 1 + rng.below(words.len());
        words.insert(at, small_limit(rng, pos.turn().is_white()));
    }
    let mut line = words.join(" ");
    if rng.chance(25) {
        // Mutations: junk inserted, a word dropped, a character changed, spaces doubled.
        let mut tokens: Vec<String> = line.split(' ').map(str::to_owned).collect();
        match rng.below(4) {
            0 => {
                let at = 1 + rng.below(tokens.len());
                tokens.insert(at, rng.pick(&JUNK).to_owned());
            }
            1 if tokens.len() > 1 => {
                let at = 1 + rng.below(tokens.len() - 1);
                tokens.remove(at);
            }
            // The word `go` itself stays: the line must remain a `go`.
            2 if tokens.len() > 1 => {
                let at = 1 + rng.below(tokens.len() - 1);
                tokens[at].push(
                    rng.pick(&["x", "0", "-", "\t", "9"])
                        .chars()
                        .next()
                        .unwrap(),
                );
            }
            _ => {
                let at = rng.below(tokens.len());
                tokens[at] = format!("  {}\t", tokens[at]);
            }
        }
        line = tokens.join(" ");
    }
    line
}

/// Whether the test may expect the search to end by itself: the engine gets `stop` otherwise.
/// A line is bounded when the last value of a limit (the engine keeps the last) is small for
/// the side to move and nothing keeps the search going until `stop`. A `movetime` replaces
/// the clocks. (A line the engine cannot read ends at once either way.)
fn bounded(line: &str, white: bool) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.iter().any(|w| *w == "infinite" || *w == "ponder") {
        return false;
    }
    let last = |name: &str| -> Option<Option<u64>> {
        words
            .windows(2)
            .rfind(|w| w[0] == name)
            .map(|w| w[1].parse::<u64>().ok())
    };
    let small = |name: &str, max: u64| last(name).is_some_and(|v| v.is_some_and(|n| n <= max));
    let clock = if white { "wtime" } else { "btime" };
    small("depth", 3)
        || small("nodes", 20_000)
        || match last("movetime") {
            Some(v) => v.is_some_and(|n| n <= 2_000),
            None => small(clock, 2_000),
        }
}

/// Another command: well formed or mutated, never `go` (or `quit`, or an option that would
/// allocate gigabytes or start hundreds of threads).
fn other_line(rng: &mut Rng, pos: &Position) -> String {
    let moves = pos.legal_moves();
    let some_move = match moves.is_empty() {
        true => "e2e4".to_owned(),
        false => moves[rng.below(moves.len())].to_string(),
    };
    let line = match rng.below(12) {
        0 => format!("position startpos moves {some_move} {}", rng.pick(&JUNK)),
        1 => format!(
            "position fen {}",
            rng.pick(&FENS).replace(' ', rng.pick(&[" ", "  ", "/"]))
        ),
        2 => format!("position fen {} moves", rng.pick(&FENS)),
        3 => format!(
            "setoption name {} value {}",
            rng.pick(&["Hash", "Threads", "MultiPV", "Move Overhead"]),
            rng.pick(&[
                "-1",
                "0",
                "1",
                "2",
                "x",
                "99999999999999999999999",
                "",
                "1e3"
            ])
        ),
        4 => format!(
            "setoption name {} value {}",
            rng.pick(&["UCI_ShowWDL", "Ponder", "NoSuchOption", "EvalFile"]),
            rng.pick(&[
                "true",
                "false",
                "maybe",
                "/no/such/file",
                "hand",
                "default",
                ""
            ])
        ),
        5 => "ucinewgame".into(),
        6 => rng
            .pick(&["stop", "ponderhit", "debug on", "debug off"])
            .into(),
        7 => rng
            .pick(&["d", "eval", "uci", "setoption", "position", "bench x"])
            .into(),
        8 => (0..1 + rng.below(30))
            .map(|_| char::from(32 + rng.below(95) as u8))
            .collect(),
        9 => format!("{} {}", rng.pick(&JUNK), rng.pick(&ODD_NUMBERS)),
        10 => "x".repeat(rng.below(20_000)),
        _ => format!("   {}   ", rng.pick(&GO_WORDS)),
    };
    // Junk that happens to start a search, stop the engine or run the bench is not "another
    // command".
    match line.split_whitespace().next() {
        Some("go" | "quit" | "bench") => format!("x{line}"),
        _ => line,
    }
}

/// A random position reached by legal moves from the start, or one of [`FENS`]; the command
/// that sets it in the engine.
fn random_position(rng: &mut Rng) -> (Position, String) {
    if rng.chance(20) {
        let fen = rng.pick(&FENS);
        return (
            Position::from_fen(fen).unwrap(),
            format!("position fen {fen}"),
        );
    }
    let mut pos = Position::startpos();
    let mut moves = Vec::new();
    for _ in 0..rng.below(40) {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.below(legal.len())];
        moves.push(m.to_string());
        pos.play_unchecked(m);
    }
    let cmd = match moves.is_empty() {
        true => "position startpos".to_owned(),
        false => format!("position startpos moves {}", moves.join(" ")),
    };
    (pos, cmd)
}

/// The `bestmove` line's move, checked: legal in `pos`, or `(none)` when there is no legal
/// move.
fn check_bestmove(line: &str, pos: &Position, context: &str) {
    let mv = line
        .strip_prefix("bestmove ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{context}: not a bestmove line: {line}"));
    if pos.legal_moves().is_empty() {
        assert_eq!(mv, "(none)", "{context}");
    } else {
        pos.parse_uci(mv)
            .unwrap_or_else(|e| panic!("{context}: illegal bestmove {mv}: {e}"));
    }
}

/// `isready` is answered, and nothing before `readyok` is a `bestmove` (no search runs).
fn still_ready(e: &mut Uci, context: &str) {
    e.send("isready");
    let lines = e.until("readyok", 10 * SECOND);
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{context}: a bestmove nobody asked for: {lines:#?}"
    );
}

#[test]
fn every_go_gets_one_bestmove_within_its_limits() {
    let seed: u64 = std::env::var("UCI_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x00c4_e55a_2026);
    let gos: usize = std::env::var("UCI_FUZZ_GOS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250);
    let mut rng = Rng(seed);
    let mut e = Uci::start();
    let (mut commands, mut stopped) = (0usize, 0usize);
    for i in 0..gos {
        let (pos, set) = random_position(&mut rng);
        for _ in 0..rng.below(3) {
            let line = other_line(&mut rng, &pos);
            let context = format!("seed {seed}, command {commands}: {line:?}");
            if rng.chance(5) {
                // Bytes that are not UTF-8.
                e.stdin.write_all(b"go \xff\xfe depth 1\n\xc3\n").unwrap();
                e.until("bestmove", 10 * SECOND);
            } else {
                e.send(&line);
            }
            commands += 1;
            still_ready(&mut e, &context);
        }
        e.send(&set);
        let line = go_line(&mut rng, &pos);
        let context = format!("seed {seed}, go {i} (command {commands}) after {set:?}: {line:?}");
        commands += 2;
        let white = pos.turn().is_white();
        let started = Instant::now();
        e.send(&line);
        let lines = if bounded(&line, white) {
            // movetime and clocks are at most 2 s; depth 3 and 20,000 nodes are far less in any
            // build. The slack covers a loaded machine.
            e.until("bestmove", 30 * SECOND)
        } else {
            std::thread::sleep(Duration::from_millis(rng.below(60) as u64));
            e.send("stop");
            stopped += 1;
            let at = Instant::now();
            let lines = e.until("bestmove", 10 * SECOND);
            let after_stop = at.elapsed();
            assert!(
                after_stop < 2 * SECOND,
                "{context}: {after_stop:?} after stop"
            );
            lines
        };
        let last = lines.last().unwrap();
        check_bestmove(last, &pos, &context);
        if let Some(ms) = line
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[0] == "movetime")
            .and_then(|w| w[1].parse::<u64>().ok())
            .filter(|&ms| ms <= 2_000 && bounded(&line, white))
        {
            let took = started.elapsed();
            assert!(
                took < Duration::from_millis(ms) + 5 * SECOND,
                "{context}: movetime {ms} took {took:?}"
            );
        }
        still_ready(&mut e, &context);
    }
    eprintln!(
        "uci fuzz: seed {seed}: {gos} go commands ({stopped} needed stop), {commands} commands in all"
    );
    e.quit();
}
