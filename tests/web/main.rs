//! The web app in a real browser: a real `chess up` (and a second gateway that needs API
//! keys, in front of the same rules and search services), then `web/e2e/browser.mjs` drives
//! Debian's Chromium with playwright-core through the page: first view (under 1 s), a game
//! against the engine by clicks, drag and typed SAN (with Chinese piece names) until
//! resignation, a declined draw offer, the move list stepped with keys, a reload that resumes
//! the game, the same game watched live from another tab (its address, clocks, names),
//! continuous analysis (with no depth limit, restarted while browsing), checkmate and
//! stalemate said so, castling by dropping the king on its rook, keyboard moves on the board,
//! the error for a bad FEN, a review with judgements, opening, phases and next mistake,
//! Chinese labels, phone width, themes kept, and an API key. Screenshots go to a fresh
//! `target/debug/web-shots/` (each checked to be a PNG written by this run); with
//! `CHESS_WEB_SHOTS=DIR` (e.g. `docs/web`, relative to the workspace root) they are also
//! copied there once the run has passed, which is how the README's pictures are refreshed.
//!
//! Needs Node.js, `npm ci` in web/ (playwright-core) and Chromium (`/usr/bin/chromium`, or
//! `$CHROMIUM`); without them the test says what is missing and passes, except under
//! `CI=true`, where it fails.

#![forbid(unsafe_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chess_integration_tests::up::Up;
use chess_integration_tests::{TempDir, spawn};

/// Longest the browser script may run (it takes well under a minute on a developer machine).
const BROWSER_LIMIT: Duration = Duration::from_secs(300);
const KEY: &str = "web-test-key-7f3a";
/// The screenshots the browser script takes when every step passes.
const SHOTS: [&str; 9] = [
    "play.png",
    "play-result.png",
    "watch.png",
    "analysis.png",
    "bad-fen.png",
    "review.png",
    "play-zh.png",
    "phone.png",
    "contrast.png",
];
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace root")
        .to_path_buf()
}

/// What the browser test needs, or why it cannot run here.
fn prerequisites() -> Result<(PathBuf, PathBuf), String> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.exists() {
        return Err(format!(
            "no Chromium at {} (apt-get install chromium, or set CHROMIUM)",
            chromium.display()
        ));
    }
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("no Node.js ({e}); apt-get install nodejs npm"))?;
    if !node.status.success() {
        return Err("`node --version` failed".to_owned());
    }
    let web = repo().join("web");
    if !web.join("node_modules/playwright-core").exists() {
        return Err(format!(
            "playwright-core is not installed: run `npm ci` in {}",
            web.display()
        ));
    }
    Ok((chromium, web))
}

/// One HTTP/1.1 exchange (`Connection: close`): the response head and body.
fn http1(addr: &str, request: &[u8]) -> (String, Vec<u8>) {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(request).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    (head, raw[split + 4..].to_vec())
}

/// The web port without a browser: the page with its headers, and the gRPC-Web API on the
/// same origin behind the same API keys.
#[test]
fn the_web_port_serves_the_page_and_the_keyed_api() {
    let dir = TempDir::new("web-port");
    let rules = spawn::rules(&dir, &[], &[]);
    let gateway = spawn::gateway(
        &dir,
        &rules.url(),
        &[],
        &[
            "--web-listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--auth",
            "keys",
            "--log",
            "warn",
        ],
        &[("CHESS_API_KEYS", KEY)],
    );
    let addr = gateway.web.expect("the web address").to_string();

    let (head, page) = http1(
        &addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'self'"),
        "{head}"
    );
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains("<script type=\"module\""), "{page}");
    let (head, _) = http1(
        &addr,
        b"GET /assets/nothing.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(head.starts_with("http/1.1 404"), "{head}");

    // LegalMoves of the start position (an empty request message), as the page sends it.
    let call = |auth: &str| {
        let request = format!(
            "POST /chess.v1.RulesService/LegalMoves HTTP/1.1\r\nHost: x\r\n\
             Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n{auth}\
             Content-Length: 5\r\nConnection: close\r\n\r\n"
        );
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(&[0, 0, 0, 0, 0]);
        http1(&addr, &bytes)
    };
    let (head, body) = call(&format!("Authorization: Bearer {KEY}\r\n"));
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("application/grpc-web"), "{head}");
    let body = String::from_utf8_lossy(&body).to_ascii_lowercase();
    assert!(body.contains("grpc-status:0"), "{body}");
    assert!(body.contains("e2e4"), "the legal moves arrive: {body}");
    let (head, body) = call("");
    let all = format!(
        "{head}{}",
        String::from_utf8_lossy(&body).to_ascii_lowercase()
    );
    assert!(
        all.contains("grpc-status: 16") || all.contains("grpc-status:16"),
        "{all}"
    );
}

#[test]
fn the_web_app_in_chromium() {
    let (chromium, web) = match prerequisites() {
        Ok(found) => found,
        Err(missing) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("the browser test cannot run under CI=true: {missing}")
        }
        Err(missing) => {
            eprintln!("SKIPPED the_web_app_in_chromium: {missing}");
            return;
        }
    };
    let data = TempDir::new("web");
    let up = Up::start(&[
        "--web-listen",
        "127.0.0.1:0",
        "--data-dir",
        data.0.to_str().expect("UTF-8 temp path"),
    ]);
    let url = up.field("WEB ", "url=").to_owned();
    assert!(
        up.startup
            .iter()
            .any(|l| l.contains(&format!("web      {url}"))),
        "{:#?}",
        up.startup
    );
    let rules = up.field("LISTENING service=rules", "grpc=").to_owned();
    let search = up.field("LISTENING service=search", "grpc=").to_owned();

    // A gateway that needs API keys, serving the page too, in front of the same services.
    let keyed = spawn::gateway(
        &data,
        &format!("http://{rules}"),
        &[format!("http://{search}")],
        &[
            "--web-listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--auth",
            "keys",
            "--log",
            "warn",
        ],
        &[("CHESS_API_KEYS", KEY)],
    );
    let keyed_url = format!("http://{}/", keyed.web.expect("the web address"));

    // A fresh directory, so that a screenshot found afterwards was taken by this run.
    // In the build's own directory (target/debug), wherever CARGO_TARGET_DIR puts it.
    let shots = chess_integration_tests::bin_dir().join("web-shots");
    if shots.exists() {
        std::fs::remove_dir_all(&shots).expect("remove the last run's screenshots");
    }
    std::fs::create_dir_all(&shots).expect("create the screenshot directory");
    let log = data.0.join("browser.log");
    let started = Instant::now();
    let mut browser = Command::new("node")
        .current_dir(&web)
        .args(["e2e/browser.mjs", "--url", &url, "--keyed-url", &keyed_url])
        .args(["--key", KEY, "--shots"])
        .arg(&shots)
        .env("CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).expect("log file"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut stderr = browser.stderr.take().expect("piped stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = loop {
        if let Some(status) = browser.try_wait().expect("wait for node") {
            break Some(status);
        }
        if started.elapsed() > BROWSER_LIMIT {
            let _ = browser.kill();
            let _ = browser.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let elapsed = started.elapsed();
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    let errors = errors.join().unwrap_or_default();
    println!("{output}");
    let Some(status) = status else {
        panic!("the browser test ran past {BROWSER_LIMIT:?}:\n{output}\n{errors}");
    };
    assert!(
        status.success(),
        "the browser test failed ({status}); screenshots of the failure in {}:\n{output}\n{errors}",
        shots.display()
    );
    let result = output
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line:\n{output}"));
    let first_view = result
        .split("\"firstViewMs\":")
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no first-view time in {result}"));
    assert!(first_view < 1000, "first view took {first_view} ms");
    println!(
        "browser test: {:.1} s in the browser script, first view {first_view} ms",
        elapsed.as_secs_f64()
    );
    for shot in SHOTS {
        let bytes = std::fs::read(shots.join(shot))
            .unwrap_or_else(|e| panic!("no screenshot {shot} in {}: {e}", shots.display()));
        assert!(
            bytes.len() > 1000 && bytes.starts_with(&PNG_SIGNATURE),
            "{shot} is not a PNG image ({} bytes)",
            bytes.len()
        );
    }
    if let Some(dir) = std::env::var_os("CHESS_WEB_SHOTS") {
        let dir = repo().join(dir);
        std::fs::create_dir_all(&dir).expect("create the CHESS_WEB_SHOTS directory");
        for shot in SHOTS {
            std::fs::copy(shots.join(shot), dir.join(shot)).expect("copy a screenshot");
        }
        println!("screenshots copied to {}", dir.display());
    }
    drop(keyed);
    drop(up);
}
