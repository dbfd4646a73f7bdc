//! The gateway client without a stack, or against a gateway that wants API keys: options,
//! the unreachable-gateway hint, and the `authorization` metadata.

#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use clap::Parser as _;
use common::{Stack, TempDir, chess, free_port};

#[test]
fn unreachable_gateway_suggests_chess_up() {
    let server = format!("http://127.0.0.1:{}", free_port());
    for args in [
        vec!["--server", &server, "game", "show", "x"],
        vec!["--server", &server, "rules", "legal-moves"],
    ] {
        chess(&args)
            .assert_code(1)
            .assert_stderr_has(&format!("error: cannot reach the gateway at {server}"))
            .assert_stderr_has("connection refused")
            .assert_stderr_has("chess up");
    }
    // CHESS_SERVER is read, and `host:port` means http.
    let addr = server.trim_start_matches("http://");
    let run = common::run_command({
        let mut c = common::command(&["rules", "status"]);
        c.env("CHESS_SERVER", addr);
        c
    });
    run.assert_code(1).assert_stderr_has(&server);
}

#[test]
fn client_usage_errors_exit_2() {
    chess(&["--server", "https://127.0.0.1:1", "rules", "status"])
        .assert_code(2)
        .assert_stderr_has("TLS");
    chess(&["--server", "ftp://127.0.0.1:1", "rules", "status"]).assert_code(2);
    chess(&["game", "move", "id"]).assert_code(2);
    chess(&["game", "resign", "id"])
        .assert_code(2)
        .assert_stderr_has("--side");
    chess(&["game", "draw", "id", "maybe", "--side", "white"]).assert_code(2);
    chess(&["game", "move", "id", "e4", "--side", "red"]).assert_code(2);
    chess(&["--timeout", "soon", "rules", "status"]).assert_code(2);
    chess(&["up", "--listen", "nowhere"]).assert_code(2);
    chess(&["up", "--metrics-listen", "0.0.0.0:9090"])
        .assert_code(2)
        .assert_stderr_has("--metrics-listen 0.0.0.0:9090");
}

#[test]
fn help_lists_the_network_commands() {
    let run = chess(&["--help"]);
    run.assert_ok();
    for word in [
        "up",
        "game",
        "rules",
        "perft",
        "--server",
        "--api-key",
        "--timeout",
    ] {
        run.assert_stdout_has(word);
    }
    let run = chess(&["game", "--help"]);
    run.assert_ok();
    for word in ["new", "move", "show", "watch", "resign", "draw"] {
        run.assert_stdout_has(word);
    }
    chess(&["up", "--help"])
        .assert_ok()
        .assert_stdout_has("--data-dir")
        .assert_stdout_has("--rules-listen")
        .assert_stdout_has("--search-metrics-listen")
        .assert_stdout_has("--memory");
    chess(&["--help"])
        .assert_ok()
        .assert_stdout_has("the search service");
    chess(&["rules", "--help"])
        .assert_ok()
        .assert_stdout_has("legal-moves")
        .assert_stdout_has("status");
}

/// A gateway that wants API keys, in this test process, in front of a stack's rules service.
struct KeyedGateway {
    runtime: Option<tokio::runtime::Runtime>,
    shutdown: chess_service_kit::Shutdown,
    server: String,
}

impl KeyedGateway {
    fn start(rules: &str, key: &str) -> KeyedGateway {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let config = chess_gateway::GatewayConfig::try_parse_from([
            "chess-gateway",
            "--listen",
            &listen,
            "--rules-addr",
            &format!("http://{rules}"),
            "--auth",
            "keys",
            "--api-keys",
            key,
            "--metrics-listen",
            "127.0.0.1:0",
            "--shutdown-grace-secs",
            "1",
        ])
        .unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let shutdown = chess_service_kit::Shutdown::new();
        runtime.spawn(chess_gateway::run(config, shutdown.clone()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&listen).is_err() {
            assert!(Instant::now() < deadline, "the keyed gateway did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        KeyedGateway {
            runtime: Some(runtime),
            shutdown,
            server: format!("http://{listen}"),
        }
    }
}

impl Drop for KeyedGateway {
    fn drop(&mut self) {
        self.shutdown.trigger();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

#[test]
fn api_key_is_sent_as_a_bearer_token() {
    let dir = TempDir::new("client-keys");
    let stack = Stack::start(dir.path(), &[]);
    let gateway = KeyedGateway::start(&stack.rules, "sesame-123");
    let server = gateway.server.as_str();

    chess(&["--server", server, "rules", "legal-moves"])
        .assert_code(1)
        .assert_stderr_has("error: UNAUTHENTICATED: ")
        .assert_stderr_has("--api-key");
    chess(&[
        "--server",
        server,
        "--api-key",
        "wrong",
        "rules",
        "legal-moves",
    ])
    .assert_code(1)
    .assert_stderr_has("error: UNAUTHENTICATED: ");
    let run = chess(&[
        "--server",
        server,
        "--api-key",
        "sesame-123",
        "rules",
        "legal-moves",
    ]);
    run.assert_ok();
    assert_eq!(run.lines().len(), 20);

    // From the environment, through a game.
    let with_env = |args: &[&str]| {
        let mut c = common::command(args);
        c.env("CHESS_SERVER", server)
            .env("CHESS_API_KEY", "sesame-123");
        common::run_command(c)
    };
    let created = with_env(&["game", "new"]);
    created.assert_ok();
    let id = created.lines()[0].to_owned();
    with_env(&["game", "move", &id, "d4"])
        .assert_ok()
        .assert_stdout_has("1. d4 (d2d4)");
    // The same game through the open loopback gateway of `chess up`.
    stack
        .chess(&["game", "show", &id])
        .assert_ok()
        .assert_stdout_has("1. d4");
    drop(gateway);
}
