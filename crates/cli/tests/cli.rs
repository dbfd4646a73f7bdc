//! The `chess` binary run on real inputs: exit codes, stdout and stderr.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const CASTLES: &str = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
const PROMOTION: &str = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";

/// What one run of the binary gave.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    fn last_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or("")
    }

    #[track_caller]
    fn assert_ok(&self) -> &Self {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        self
    }

    #[track_caller]
    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "expected exit code {code}: {self:#?}");
        self
    }

    #[track_caller]
    fn assert_stderr_has(&self, text: &str) -> &Self {
        assert!(
            self.stderr.contains(text),
            "stderr lacks {text:?}: {self:#?}"
        );
        self
    }

    #[track_caller]
    fn assert_stdout_has(&self, text: &str) -> &Self {
        assert!(
            self.stdout.contains(text),
            "stdout lacks {text:?}: {self:#?}"
        );
        self
    }
}

fn chess<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_chess"))
        .args(args)
        .output()
        .unwrap();
    Run {
        // A signal (a panic does not end in one, but an abort would) reads as -1.
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Splits a command line on spaces (none of the tests needs a quoted argument with spaces
/// unless it says so with `chess`).
fn run(line: &str) -> Run {
    chess(&line.split_whitespace().collect::<Vec<_>>())
}

/// A file under the test target's temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    /// A fresh path (unique per process and call); nothing is written.
    fn path(name: &str) -> TempFile {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        TempFile(
            PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("chess-cli-{}-{n}-{name}", std::process::id())),
        )
    }
}

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A fresh file holding `contents`.
fn temp_file(name: &str, contents: &[u8]) -> TempFile {
    let file = TempFile::path(name);
    std::fs::write(&file.0, contents).unwrap();
    file
}

fn path_str(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

fn rules_suite() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rules/tests/data/perft.epd")
}

// ----- general -----

#[test]
fn usage_errors_exit_2() {
    run("").assert_code(2);
    run("frobnicate").assert_code(2);
    run("perft").assert_code(2).assert_stderr_has("--depth");
    run("perft --depth x").assert_code(2);
    run("perft --depth 2 --epd suite.epd").assert_code(2);
    run("perft --depth 2 --max-nodes 10").assert_code(2);
    run("perft --depth 2 --max-depth 1").assert_code(2);
    run("perft --max-nodes 10").assert_code(2);
    run("perft --depth 2 --threads 0").assert_code(2);
    run("moves --format xyz").assert_code(2);
    run("san").assert_code(2);
    run("fen").assert_code(2);
    run("pgn").assert_code(2);
}

#[test]
fn help_and_version() {
    run("--help").assert_ok().assert_stdout_has("perft");
    run("perft --help")
        .assert_ok()
        .assert_stdout_has("--divide");
    run("--version").assert_ok().assert_stdout_has("chess");
}

#[cfg(unix)]
#[test]
fn non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"8/8/8/8/8/8/8/8\xff");
    let out = Command::new(env!("CARGO_BIN_EXE_chess"))
        .arg("fen")
        .arg(bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// ----- perft -----

#[test]
fn perft_start_position_depth_4() {
    let r = run("perft --depth 4");
    r.assert_ok();
    assert_eq!(r.stdout, "197281\n");
    // Timing goes to stderr, never stdout.
    r.assert_stderr_has("nodes in");
}

#[test]
fn perft_kiwipete_depth_3_fen_quoted_or_not() {
    let quoted = chess(&["perft", "--depth", "3", "--fen", KIWIPETE]);
    assert_eq!(quoted.assert_ok().last_line(), "97862");
    let unquoted = run(&format!("perft --fen {KIWIPETE} --depth 3"));
    assert_eq!(unquoted.assert_ok().last_line(), "97862");
    // The four-field EPD form takes default counters.
    let short = chess(&["perft", "-d", "2", "--fen", &KIWIPETE[..KIWIPETE.len() - 4]]);
    assert_eq!(short.assert_ok().last_line(), "2039");
}

#[test]
fn perft_single_thread_agrees() {
    let r = chess(&["perft", "--depth", "3", "--threads", "1", "--fen", KIWIPETE]);
    assert_eq!(r.assert_ok().last_line(), "97862");
}

#[test]
fn perft_small_depths() {
    assert_eq!(run("perft --depth 0").assert_ok().stdout, "1\n");
    assert_eq!(run("perft --depth 1").assert_ok().stdout, "20\n");
    assert_eq!(run("perft --depth 0 --divide").assert_ok().stdout, "1\n");
}

#[test]
fn perft_divide_format() {
    let r = run("perft --depth 3 --divide");
    r.assert_ok();
    let lines = r.lines();
    assert_eq!(r.last_line(), "8902");
    let moves: Vec<&str> = lines.iter().copied().filter(|l| l.contains(": ")).collect();
    assert_eq!(moves.len(), 20);
    let mut sum = 0;
    for line in &moves {
        let (uci, count) = line.split_once(": ").unwrap();
        assert_eq!(uci.len(), 4, "{line}");
        sum += count.parse::<u64>().unwrap();
    }
    assert_eq!(sum, 8902);
    assert!(moves.contains(&"e2e4: 600"), "{moves:?}");
    assert!(moves.contains(&"g1f3: 440"), "{moves:?}");
}

#[test]
fn perft_divide_writes_castling_as_uci_king_move() {
    let r = chess(&["perft", "--depth", "1", "--divide", "--fen", CASTLES]);
    r.assert_ok()
        .assert_stdout_has("e1g1: 1\n")
        .assert_stdout_has("e1c1: 1\n");
    assert_eq!(r.last_line(), "26");
}

#[test]
fn perft_invalid_fen() {
    chess(&["perft", "--depth", "1", "--fen", "8/8/8/8/8/8/8/8 w - -"])
        .assert_code(1)
        .assert_stderr_has("error: invalid FEN \"8/8/8/8/8/8/8/8 w - -\": no white king");
}

#[test]
fn perft_epd_good_file() {
    let suite = temp_file(
        "good.epd",
        format!(
            "# start position and Kiwipete\n\n\
             rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400 ;D3 8902 ;D4 197281\r\n\
             {KIWIPETE} ;D1 48 ;D2 2039 ;D3 97862 ;D4 4085603\n\
             \x20  # indented comment\n"
        )
        .as_bytes(),
    );
    let r = chess(&["perft", "--epd", path_str(&suite), "--max-nodes", "200000"]);
    r.assert_ok();
    assert!(!r.stdout.contains("mismatch:"), "{r:#?}");
    assert!(
        r.last_line()
            .starts_with("checked 7 entries in 2 positions, 1 skipped, 0 mismatches, "),
        "{r:#?}"
    );
    // 20 + 400 + 8902 + 197281 + 48 + 2039 + 97862
    r.assert_stdout_has(" 306552 nodes, ");
    r.assert_stdout_has(" seconds");

    let shallow = chess(&["perft", "--epd", path_str(&suite), "--max-depth", "2"]);
    assert!(
        shallow
            .assert_ok()
            .last_line()
            .starts_with("checked 4 entries in 2 positions, 4 skipped, 0 mismatches"),
        "{shallow:#?}"
    );
}

#[test]
fn perft_epd_rules_suite() {
    let r = chess(&[
        "perft",
        "--epd",
        path_str(&rules_suite()),
        "--max-nodes",
        "20000",
    ]);
    r.assert_ok();
    assert!(r.last_line().contains("in 132 positions"), "{r:#?}");
    assert!(r.last_line().contains(" 0 mismatches"), "{r:#?}");
}

#[test]
fn perft_epd_mismatch_exits_1() {
    let suite = temp_file(
        "wrong.epd",
        format!("{KIWIPETE} ;D1 48 ;D2 2040\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66\n")
            .as_bytes(),
    );
    let r = chess(&["perft", "--epd", path_str(&suite)]);
    r.assert_code(1)
        .assert_stdout_has(&format!(
            "mismatch: line 1 depth 2: expected 2040, got 2039: {KIWIPETE}"
        ))
        .assert_stderr_has("1 perft mismatch");
    assert!(
        r.last_line()
            .starts_with("checked 4 entries in 2 positions, 0 skipped, 1 mismatches")
    );
    assert_eq!(r.stdout.matches("mismatch:").count(), 1);
}

#[test]
fn perft_epd_malformed_lines_exit_2() {
    let suite = temp_file(
        "malformed.epd",
        format!("{KIWIPETE} ;D1 48\n\n{KIWIPETE} ;D1 48 ;D2 x2039\n").as_bytes(),
    );
    chess(&["perft", "--epd", path_str(&suite)])
        .assert_code(2)
        .assert_stderr_has("line 3: expected \";D<depth> <nodes>\"")
        .assert_stderr_has("\"D2 x2039\"");

    let bad_fen = temp_file("badfen.epd", b"# ok\n4k3/8/8/8/8/8/8/4K3 w Q - ;D1 5\n");
    chess(&["perft", "--epd", path_str(&bad_fen)])
        .assert_code(2)
        .assert_stderr_has("line 2: invalid FEN \"4k3/8/8/8/8/8/8/4K3 w Q -\": castling right 'Q'");

    let no_counts = temp_file("nocounts.epd", b"4k3/8/8/8/8/8/8/4K3 w - -\n");
    chess(&["perft", "--epd", path_str(&no_counts)])
        .assert_code(2)
        .assert_stderr_has("line 1: no \";D<depth> <nodes>\" entries");

    let binary = temp_file("binary.epd", b"4k3/8/8/8/8/8/8/4K3 w - - ;D1 5\n\xff\xfe\n");
    chess(&["perft", "--epd", path_str(&binary)])
        .assert_code(2)
        .assert_stderr_has("line 2: not UTF-8");
}

#[test]
fn perft_epd_missing_file() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-suite.epd");
    chess(&["perft", "--epd", path_str(&missing)])
        .assert_code(1)
        .assert_stderr_has("cannot read")
        .assert_stderr_has("no-such-suite.epd");
}

// ----- fen -----

#[test]
fn fen_normalises() {
    // Missing counters are filled in; an en-passant square no pawn can use is dropped.
    let r = run("fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3");
    assert_eq!(
        r.assert_ok().stdout,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
    );
    // A usable one stays.
    let ep = "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3";
    assert_eq!(chess(&["fen", ep]).assert_ok().stdout, format!("{ep}\n"));
}

#[test]
fn fen_plain_keeps_every_en_passant_square() {
    let r = run("fen --plain rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
    assert_eq!(
        r.assert_ok().stdout,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1\n"
    );
}

#[test]
fn fen_board() {
    let r = chess(&["fen", "--board", KIWIPETE]);
    r.assert_ok();
    let lines = r.lines();
    assert_eq!(lines[0], KIWIPETE);
    assert!(lines.contains(&"8 | r . . . k . . r |"), "{lines:?}");
    assert!(lines.contains(&"1 | R . . . K . . R |"), "{lines:?}");
    assert!(lines.contains(&"    a b c d e f g h"), "{lines:?}");
    assert_eq!(r.last_line(), "white to move");
    let mate = chess(&["fen", "--board", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"]);
    assert_eq!(mate.assert_ok().last_line(), "black is checkmated");
}

#[test]
fn fen_error_kinds() {
    let cases: &[(&str, &str)] = &[
        ("", "empty FEN"),
        (
            "8/8/8/8/8/8/8/8",
            "found 1 (a FEN contains spaces: quote it)",
        ),
        ("8/8/8/8/8/8/8 w - -", "placement has 7 ranks"),
        (
            "4k3/8/8/8/8/8/8/4K2X w - -",
            "bad piece letter 'X' in rank 1",
        ),
        (
            "4k3/8/8/8/8/8/8/4K2 w - -",
            "rank 1 describes 7 files, expected 8 (text \"4K2\")",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 x - -",
            "side to move must be 'w' or 'b', found \"x\"",
        ),
        ("4k3/8/8/8/8/8/8/4K3 w KK -", "castling field \"KK\""),
        ("4k3/8/8/8/8/8/8/4K3 w - e4", "en-passant field \"e4\""),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - x 1",
            "halfmove clock \"x\" is not a number",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 0 -1",
            "fullmove number \"-1\" is not a number",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 70000 1",
            "halfmove clock 70000 is out of range",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 0 0",
            "fullmove number 0 is out of range",
        ),
        ("8/8/8/8/8/8/8/4K3 w - -", "no black king"),
        ("4k3/8/8/8/8/8/8/3KK3 w - -", "2 white kings"),
        ("4k3/8/8/8/8/8/8/P3K3 w - -", "pawn on a1"),
        ("4k3/8/8/8/8/8/PPPPPPPP/P3K3 w - -", "white has 9 pawns"),
        ("4k3/8/8/8/8/8/PPPPPPPP/4K3 w - - 0 1 extra", "found 7"),
        (
            "4k3/8/8/8/8/PPPPPPPP/PPPPPPPP/4K3 w - -",
            "white has 17 pieces",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w Q -",
            "castling right 'Q' needs a white king on e1 and a white rook on a1",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - e6",
            "en-passant square e6 is impossible",
        ),
        (
            "4k3/4R3/8/8/8/8/8/4K3 w - -",
            "the side not to move (black) is in check",
        ),
    ];
    for &(fen, why) in cases {
        let r = chess(&["fen", fen]);
        r.assert_code(1);
        let expected = format!("error: invalid FEN {fen:?}: ");
        assert!(r.stderr.starts_with(&expected), "{fen}: {r:#?}");
        assert!(
            r.stderr.contains(why),
            "{fen}: expected {why:?} in {:?}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{fen}: {r:#?}");
    }
}

// ----- moves -----

#[test]
fn moves_san_by_default() {
    let r = run("moves");
    r.assert_ok();
    let lines = r.lines();
    assert_eq!(lines.len(), 20);
    assert!(
        lines.contains(&"Nf3") && lines.contains(&"e4") && lines.contains(&"a3"),
        "{lines:?}"
    );
    // Generation order, identical with the explicit format.
    assert_eq!(run("moves --format san").stdout, r.stdout);
}

#[test]
fn moves_each_format() {
    let uci = chess(&["moves", "--format", "uci", "--fen", CASTLES]);
    let uci_lines = uci.assert_ok().lines();
    assert_eq!(uci_lines.len(), 26);
    assert!(
        uci_lines.contains(&"e1g1") && uci_lines.contains(&"e1c1"),
        "{uci_lines:?}"
    );
    assert!(uci_lines.contains(&"a1a8"), "{uci_lines:?}");

    let lan = chess(&["moves", "--format", "lan", "--fen", CASTLES]);
    let lan_lines = lan.assert_ok().lines();
    assert!(
        lan_lines.contains(&"O-O") && lan_lines.contains(&"O-O-O"),
        "{lan_lines:?}"
    );
    assert!(lan_lines.contains(&"Ra1xa8"), "{lan_lines:?}");
    assert!(lan_lines.contains(&"Ke1-f1"), "{lan_lines:?}");

    let san = chess(&["moves", "--fen", CASTLES]);
    let san_lines = san.assert_ok().lines();
    assert!(
        san_lines.contains(&"Rxa8+") && san_lines.contains(&"O-O"),
        "{san_lines:?}"
    );

    // One line per move, the same moves in the same order in every format.
    assert_eq!(uci_lines.len(), lan_lines.len());
    assert_eq!(uci_lines.len(), san_lines.len());
    let first = uci_lines.iter().position(|m| *m == "e1g1").unwrap();
    assert_eq!(lan_lines[first], "O-O");
    assert_eq!(san_lines[first], "O-O");
}

#[test]
fn moves_promotions() {
    let fen = ["--fen", PROMOTION];
    let san = chess(&[&["moves"][..], &fen].concat());
    let uci = chess(&[&["moves", "--format", "uci"][..], &fen].concat());
    let lan = chess(&[&["moves", "--format", "lan"][..], &fen].concat());
    assert!(san.assert_ok().lines().contains(&"a8=Q+"), "{san:#?}");
    assert!(san.lines().contains(&"a8=N"), "{san:#?}");
    assert!(uci.assert_ok().lines().contains(&"a7a8q"), "{uci:#?}");
    assert!(lan.assert_ok().lines().contains(&"a7-a8=R"), "{lan:#?}");
}

#[test]
fn moves_none_and_bad_fen() {
    let r = chess(&["moves", "--fen", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"]);
    assert_eq!(r.assert_ok().stdout, "");
    r.assert_stderr_has("checkmated");
    chess(&["moves", "--fen", "7k/8/8 b - - 0 1"])
        .assert_code(1)
        .assert_stderr_has("error: invalid FEN \"7k/8/8 b - - 0 1\": placement has 3 ranks");
}

// ----- san -----

#[test]
fn san_sequence_from_start() {
    let r = run("san e4 e5 Nf3");
    assert_eq!(r.assert_ok().stdout, "e4 e2e4\ne5 e7e5\nNf3 g1f3\n");
}

#[test]
fn san_accepts_every_notation() {
    let r = run("san e2e4 e7-e5 Ng1-f3 Nc6 Bb5 a7a6 Bb5xc6 dxc6 0-0");
    r.assert_ok();
    assert_eq!(r.lines()[6], "Bxc6 b5c6");
    assert_eq!(r.last_line(), "O-O e1g1");
    let mate = run("san f3 e5 g4 Qh4");
    assert_eq!(mate.assert_ok().last_line(), "Qh4# d8h4");
}

#[test]
fn san_with_fen_and_letters() {
    let r = chess(&["san", "--fen", PROMOTION, "a7a8n", "Kd7", "Nb6+"]);
    assert_eq!(r.assert_ok().stdout, "a8=N a7a8n\nKd7 e8d7\nNb6+ a8b6\n");
    let fig = run("san --letters figurine e4 d5 exd5 Qxd5 Nc3");
    assert_eq!(fig.assert_ok().lines()[3..], ["♕xd5 d8d5", "♘c3 b1c3"]);
    let zh = run("san --letters chinese Nf3 Nf6 e2e4 Nxe4");
    assert_eq!(
        zh.assert_ok().stdout,
        "馬f3 g1f3\n馬f6 g8f6\ne4 e2e4\n馬xe4 f6e4\n"
    );
    // Figurine and Chinese input reads back.
    assert_eq!(
        run("san ♘f3 馬f6").assert_ok().stdout,
        "Nf3 g1f3\nNf6 g8f6\n"
    );
}

#[test]
fn san_strict() {
    run("san --strict e4 e5 Nf3 Nc6 Bb5 a6 Bxc6").assert_ok();
    let r = run("san --strict e4 e5 Nf3 Nc6 Bb5 a6 Bc6");
    r.assert_code(1)
        .assert_stderr_has("move 7 \"Bc6\": not strict SAN: write \"Bxc6\"");
    assert_eq!(
        r.lines().len(),
        6,
        "the good moves before the error are printed"
    );
    run("san --strict e2e4")
        .assert_code(1)
        .assert_stderr_has("move 1 \"e2e4\": not strict SAN");
    run("san --strict 0-0").assert_code(1);
    // Lenient by default.
    run("san e4 e5 Nf3 Nc6 Bb5 a6 Bc6").assert_ok();
}

#[test]
fn san_error_kinds() {
    run("san e4 xyz")
        .assert_code(1)
        .assert_stderr_has("move 2 \"xyz\": cannot read it as a move")
        .assert_stderr_has(
            "(position: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1)",
        );
    run("san e4 e5 Ke7")
        .assert_code(1)
        .assert_stderr_has("move 3 \"Ke7\": illegal: no white king");
    chess(&["san", "--fen", "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "Nd2"])
        .assert_code(1)
        .assert_stderr_has("move 1 \"Nd2\": ambiguous: could be Nbd2, Nfd2");
    chess(&["san", "--fen", PROMOTION, "a8"])
        .assert_code(1)
        .assert_stderr_has("move 1 \"a8\": illegal: a pawn reaching a8 must promote");
    run("san e1g1")
        .assert_code(1)
        .assert_stderr_has("move 1 \"e1g1\": illegal: g1 holds a white piece");
    run("san e2e5")
        .assert_code(1)
        .assert_stderr_has("move 1 \"e2e5\": illegal");
    run("san O-O")
        .assert_code(1)
        .assert_stderr_has("white cannot castle king-side");
    chess(&["san", "--fen", "8/8/8 w - -", "e4"])
        .assert_code(1)
        .assert_stderr_has("error: invalid FEN \"8/8/8 w - -\"");
}

// ----- pgn -----

const GOOD_PGN: &str = "[Event \"Casual\"]\n[White \"Anna\"]\n[Black \"Ben\"]\n[Result \"1-0\"]\n\n\
    1.e4 e5 2.Nf3 {develops} Nc6!? (2...d6 3.d4) 3.Bb5 a6 4.Ba4 Nf6 5.O-O 1-0\n\n\
    [FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. e4 Kd7 2. e5 *\n";

/// One game per error kind; the line numbers below depend on this layout.
const BAD_PGN: &str = "[Event \"good\"]\n\n1. d4 d5 2. c4 *\n\n\
    [Event \"illegal\"]\n\n1. e4 e5 2. Ke3 *\n\n\
    [Event \"illegal in a variation\"]\n\n1. d4 d5 (1... Nf6 2. c4 Nxd4) 2. c4 *\n\n\
    [Event \"syntax\"]\n\n1. e4 ) e5 *\n\n\
    [Event \"ambiguous\"]\n[FEN \"4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1\"]\n\n1. Nd2 *\n\n\
    [Event \"bad FEN\"]\n[FEN \"4k3/8/8 w - - 0 1\"]\n\n1. e4 *\n\n\
    [Event \"unreadable\"]\n\n1. e4 Nf9 *\n";

fn chess_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chess"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn pgn_good_file() {
    let file = temp_file("good.pgn", GOOD_PGN.as_bytes());
    let r = chess(&["pgn", path_str(&file)]);
    r.assert_ok();
    // 9 mainline moves and 2 in the variation, then 3.
    assert_eq!(r.stdout, "2 games, 2 good, 14 moves, 0 errors\n");
}

#[test]
fn pgn_bad_file_reports_each_game() {
    let file = temp_file("bad.pgn", BAD_PGN.as_bytes());
    let r = chess(&["pgn", path_str(&file)]);
    r.assert_code(1);
    let lines = r.lines();
    let expected = [
        "game 2, line 7, column 13: move 2. \"Ke3\": illegal: no white king can move to e3 \
         (position: rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2)",
        "game 3, line 11, column 26: move 2... \"Nxd4\": illegal: no black knight can move to d4 \
         (position: rnbqkb1r/pppppppp/5n2/8/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2)",
        "game 4, line 15, column 7: ')' without a matching '(' \
         (position: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1)",
        "game 5, line 20, column 4: move 1. \"Nd2\": ambiguous: could be Nbd2, Nfd2 \
         (position: 4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1)",
        "game 6, line 22, column 1: bad FEN tag \"4k3/8/8 w - - 0 1\": placement has 3 ranks",
        "game 7, line 29, column 7: move 1... \"Nf9\": cannot read it as a move",
    ];
    assert_eq!(lines.len(), expected.len() + 1, "{r:#?}");
    for (line, want) in lines.iter().zip(expected) {
        assert!(line.starts_with(want), "\n got: {line}\nwant: {want}");
    }
    assert_eq!(r.last_line(), "7 games, 1 good, 3 moves, 6 errors");
    r.assert_stderr_has("6 error(s), 6 of 7 game(s) bad");
}

#[test]
fn pgn_normalize_to_stdout_round_trips() {
    let file = temp_file("normalize.pgn", GOOD_PGN.as_bytes());
    let r = chess(&["pgn", "--normalize", path_str(&file)]);
    r.assert_ok();
    // The report goes to stderr when the games go to stdout.
    r.assert_stderr_has("2 games, 2 good, 14 moves, 0 errors");
    let expected = "[Event \"Casual\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
        [White \"Anna\"]\n[Black \"Ben\"]\n[Result \"1-0\"]\n\n\
        1. e4 e5 2. Nf3 {develops} 2... Nc6 $5 (2... d6 3. d4) 3. Bb5 a6 4. Ba4 Nf6\n\
        5. O-O 1-0\n\n";
    assert!(r.stdout.starts_with(expected), "{}", r.stdout);
    r.assert_stdout_has("[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n");
    r.assert_stdout_has("1. e4 Kd7 2. e5 *\n");
    // Export format reads back clean and is a fixed point.
    let again = chess_with_stdin(&["pgn", "--normalize", "-"], r.stdout.as_bytes());
    again.assert_ok();
    assert_eq!(again.stdout, r.stdout);
}

#[test]
fn pgn_normalize_to_file_skips_bad_games() {
    let input = temp_file("mixed.pgn", BAD_PGN.as_bytes());
    let output = TempFile::path("normalized.pgn");
    let r = chess(&[
        "pgn",
        path_str(&input),
        "--normalize",
        "--output",
        path_str(&output),
    ]);
    r.assert_code(1);
    // With --output the report is on stdout.
    assert_eq!(r.last_line(), "7 games, 1 good, 3 moves, 6 errors");
    let written = std::fs::read_to_string(&*output).unwrap();
    assert!(written.starts_with("[Event \"good\"]\n"), "{written}");
    assert!(written.ends_with("\n\n1. d4 d5 2. c4 *\n\n"), "{written}");
    assert_eq!(written.matches("[Event ").count(), 1);

    chess(&[
        "pgn",
        path_str(&input),
        "--normalize",
        "--output",
        path_str(&input),
    ])
    .assert_code(1)
    .assert_stderr_has("is the input file");
    run("pgn x.pgn --output y.pgn").assert_code(2);
}

#[test]
fn pgn_strict_san() {
    let pgn = b"1. e4 e5 2. Ng1f3 *\n";
    chess_with_stdin(&["pgn", "-"], pgn).assert_ok();
    chess_with_stdin(&["pgn", "--strict", "-"], pgn)
        .assert_code(1)
        .assert_stdout_has(
            "game 1, line 1, column 13: move 2. \"Ng1f3\": not strict SAN: write \"Nf3\"",
        );
}

#[test]
fn pgn_non_utf8_and_unreadable_files() {
    let latin1 = temp_file("latin1.pgn", b"[White \"J\xe9r\xf4me\"]\n\n1. e4 e5 *\n");
    let r = chess(&["pgn", path_str(&latin1)]);
    r.assert_code(1)
        .assert_stdout_has("is not UTF-8 text: invalid byte 0xe9 at line 1");
    assert_eq!(r.last_line(), "1 games, 1 good, 2 moves, 1 errors");

    let in_move = chess_with_stdin(&["pgn", "-"], b"1. e4\n2. e\xff5 *\n");
    in_move
        .assert_code(1)
        .assert_stdout_has("standard input is not UTF-8 text: invalid byte 0xff at line 2");

    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.pgn");
    chess(&["pgn", path_str(&missing)])
        .assert_code(1)
        .assert_stderr_has("cannot read")
        .assert_stderr_has("no-such-file.pgn");
    let dir = env!("CARGO_TARGET_TMPDIR");
    chess(&["pgn", dir])
        .assert_code(1)
        .assert_stdout_has("failed");
}
