//! `chess rules` against a real `chess up` stack: the gateway's RulesService gives what the
//! local tools give, and bad input comes back with the field that is wrong.

#![cfg(unix)]

mod common;

use common::{Stack, TempDir, chess};

#[test]
fn remote_rules_agree_with_the_local_tools() {
    let dir = TempDir::new("rules-agree");
    let stack = Stack::start(dir.path(), &[]);

    let remote = stack.chess(&["rules", "legal-moves"]);
    remote.assert_ok();
    let local = chess(&["moves"]);
    local.assert_ok();
    assert_eq!(remote.stdout, local.stdout);
    assert_eq!(remote.lines().len(), 20);

    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    for format in ["san", "uci", "lan"] {
        let remote = stack.chess(&[
            "rules",
            "legal-moves",
            "--fen",
            kiwipete,
            "--format",
            format,
        ]);
        remote.assert_ok();
        let local = chess(&["moves", "--fen", kiwipete, "--format", format]);
        assert_eq!(remote.stdout, local.stdout, "--format {format}");
        assert_eq!(remote.lines().len(), 48);
    }

    // After moves in mixed notations.
    let remote = stack.chess(&["rules", "legal-moves", "e4", "e7e5", "Ng1-f3"]);
    remote.assert_ok();
    let local = chess(&[
        "moves",
        "--fen",
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
    ]);
    assert_eq!(remote.stdout, local.stdout);
}

#[test]
fn remote_rules_status() {
    let dir = TempDir::new("rules-status");
    let stack = Stack::start(dir.path(), &[]);

    let run = stack.chess(&["rules", "status"]);
    run.assert_ok()
        .assert_stdout_has("turn            white")
        .assert_stdout_has("legal moves     20")
        .assert_stdout_has("outcome         none");

    let run = stack.chess(&["rules", "status", "f3", "e5", "g4", "Qh4#"]);
    run.assert_ok()
        .assert_stdout_has("checkmate       yes")
        .assert_stdout_has("legal moves     0")
        .assert_stdout_has("outcome         0-1 (black wins by checkmate)");

    let run = stack.chess(&[
        "rules", "status", "Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8",
    ]);
    run.assert_ok()
        .assert_stdout_has("repetitions     3")
        .assert_stdout_has("claimable draw  threefold repetition");

    let run = stack.chess(&["rules", "status", "--fen", "8/8/8/2k5/8/8/3KB3/8 w - - 0 1"]);
    run.assert_ok()
        .assert_stdout_has("dead position   yes")
        .assert_stdout_has("1/2-1/2");
}

#[test]
fn remote_rules_errors_name_the_field() {
    let dir = TempDir::new("rules-errors");
    let stack = Stack::start(dir.path(), &[]);
    stack
        .chess(&["rules", "legal-moves", "e4", "e4"])
        .assert_code(1)
        .assert_stderr_has("error: INVALID_ARGUMENT: ")
        .assert_stderr_has("\n  field moves[1]: illegal move \"e4\"");
    stack
        .chess(&["rules", "status", "--fen", "not a fen"])
        .assert_code(1)
        .assert_stderr_has("error: INVALID_ARGUMENT: ")
        .assert_stderr_has("\n  field fen: invalid FEN");
    // The local tools are unaffected by --server.
    let server = stack.server();
    common::chess(&["--server", &server, "moves"]).assert_ok();
}
