//! `chess up`: the whole stack as one child process on free loopback ports; its announcement,
//! readiness, persistence, and its exit on SIGTERM and on a taken port.

#![cfg(unix)]

mod common;

use common::{Stack, TempDir, chess, run_command};

#[test]
fn up_announces_serves_and_stops_on_sigterm() {
    let dir = TempDir::new("up-sigterm");
    let stack = Stack::start(dir.path(), &[]);
    let startup = stack.startup.join("\n");

    // Port 0 was resolved and printed on the services' own lines.
    assert!(stack.gateway.starts_with("127.0.0.1:"), "{startup}");
    assert!(!stack.gateway.ends_with(":0"), "{startup}");
    assert!(!stack.rules.ends_with(":0"), "{startup}");
    assert_ne!(stack.gateway, stack.rules);
    assert!(startup.contains("chess up: ready"), "{startup}");
    let grpcurl = format!(
        "grpcurl -plaintext -d '{{\"fen\":\"\"}}' {} chess.v1.RulesService/LegalMoves",
        stack.gateway
    );
    assert!(startup.contains(&grpcurl), "{startup}");
    assert!(startup.contains(&format!("export CHESS_SERVER=http://{}", stack.gateway)));
    assert!(startup.contains("chess game new"), "{startup}");
    assert!(startup.contains("chess game move <ID> e4"), "{startup}");
    assert!(startup.contains("search "), "{startup}");
    // The web app: the gateway's `WEB url=` line and the same address in the ready block.
    let web = startup
        .lines()
        .find_map(|l| l.strip_prefix("WEB url="))
        .unwrap_or_else(|| panic!("no WEB line: {startup}"));
    assert!(
        web.starts_with("http://127.0.0.1:") && !web.ends_with(":0/"),
        "{web}"
    );
    assert!(startup.contains(&format!("  web      {web}")), "{startup}");
    assert!(startup.contains(&dir.path().join("games.redb").display().to_string()));
    assert!(dir.path().join("games.redb").exists());

    // The gateway reaches the rules service.
    let run = stack.chess(&["rules", "legal-moves"]);
    run.assert_ok();
    assert_eq!(run.lines().len(), 20);

    let (status, rest) = stack.stop();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(rest.iter().any(|l| l == "chess up: stopped"), "{rest:?}");
}

#[test]
fn up_keeps_games_in_the_data_dir_across_restarts() {
    let dir = TempDir::new("up-restart");
    let stack = Stack::start(dir.path(), &[]);
    let created = stack.chess(&["game", "new", "--white", "Ann"]);
    created.assert_ok();
    let id = created.lines()[0].to_owned();
    stack.chess(&["game", "move", &id, "e4"]).assert_ok();
    let (status, _) = stack.stop();
    assert_eq!(status.code(), Some(0));

    let stack = Stack::start(dir.path(), &[]);
    stack
        .chess(&["game", "show", &id])
        .assert_ok()
        .assert_stdout_has("1. e4")
        .assert_stdout_has("Ann");
    let (status, _) = stack.stop();
    assert_eq!(status.code(), Some(0));
}

/// The services' own environment variables are for the services run alone: `chess up` sets
/// their configuration from its own flags, so a stray `CHESS_RULES_*`, `CHESS_SEARCH_*`,
/// `CHESS_GATEWAY_*` or `CHESS_METRICS_LISTEN` (one metrics address for three services) in the
/// shell changes nothing.
#[test]
fn up_ignores_the_services_own_environment() {
    let dir = TempDir::new("up-env");
    let stack = Stack::start_with_env(
        dir.path(),
        &["--memory"],
        &[
            ("CHESS_RULES_MAX_MOVES", "not-a-number"),
            ("CHESS_RULES_DATA_DIR", "/proc/not-here"),
            ("CHESS_SEARCH_MAX_TIME_MS", "not-a-number"),
            ("CHESS_GATEWAY_AUTH", "keys"),
            ("CHESS_METRICS_LISTEN", "127.0.0.1:1"),
        ],
    );
    assert!(stack.startup.join("\n").contains("chess up: ready"));
    let run = stack.chess(&["rules", "legal-moves"]);
    run.assert_ok();
    assert_eq!(run.lines().len(), 20);
    let (status, rest) = stack.stop();
    assert_eq!(status.code(), Some(0), "{rest:?}");
}

#[test]
fn up_memory_store_forgets_games() {
    let dir = TempDir::new("up-memory");
    let data = dir.path().join("unused");
    let stack = Stack::start(&data, &["--memory"]);
    assert!(stack.startup.join("\n").contains("in memory"));
    let created = stack.chess(&["game", "new"]);
    created.assert_ok();
    let id = created.lines()[0].to_owned();
    let (status, _) = stack.stop();
    assert_eq!(status.code(), Some(0));
    assert!(
        !data.exists(),
        "--memory must not create the data directory"
    );

    let stack = Stack::start(&data, &["--memory"]);
    stack
        .chess(&["game", "show", &id])
        .assert_code(1)
        .assert_stderr_has("error: NOT_FOUND: ");
    drop(stack);
}

#[test]
fn up_port_in_use_is_one_clear_line() {
    let dir = TempDir::new("up-port");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let flags = [
        "--listen",
        "--rules-listen",
        "--search-listen",
        "--web-listen",
    ];
    for flag in flags {
        let mut args = vec!["up", "--data-dir", dir.str(), flag, &addr];
        for other in flags.iter().filter(|f| **f != flag) {
            args.extend([*other, "127.0.0.1:0"]);
        }
        let run = run_command(common::command(&args));
        run.assert_code(1).assert_stderr_has(&addr);
        assert_eq!(run.stderr.lines().count(), 1, "{run:#?}");
        assert!(run.stderr.contains("in use"), "{run:#?}");
        assert!(run.stderr.contains(flag), "{run:#?}");
    }
    drop(taken);
}

#[test]
fn up_refuses_addresses_off_loopback() {
    chess(&["up", "--listen", "0.0.0.0:0"])
        .assert_code(2)
        .assert_stderr_has("loopback");
    chess(&["up", "--rules-listen", "0.0.0.0:0"])
        .assert_code(2)
        .assert_stderr_has("loopback");
    chess(&["up", "--search-listen", "0.0.0.0:0"])
        .assert_code(2)
        .assert_stderr_has("loopback");
    chess(&["up", "--web-listen", "0.0.0.0:0"])
        .assert_code(2)
        .assert_stderr_has("loopback");
}

#[test]
fn up_with_a_broken_data_dir_exits_1() {
    let dir = TempDir::new("up-baddir");
    // A file where the data directory should be.
    let file = dir.path().join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    run_command(common::command(&[
        "up",
        "--listen",
        "127.0.0.1:0",
        "--rules-listen",
        "127.0.0.1:0",
        "--search-listen",
        "127.0.0.1:0",
        "--web-listen",
        "127.0.0.1:0",
        "--data-dir",
        file.to_str().unwrap(),
    ]))
    .assert_code(1)
    .assert_stderr_has("error: rules service: cannot create data directory");
}
