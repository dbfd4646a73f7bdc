//! Copies of a real game store, each damaged in one way, given to the real
//! `chess-rules-service` binary: it must refuse to start, exit with status 1, say on stderr
//! which file is damaged and how to recover, and never announce that it is serving. The
//! undamaged copy must start. The store is written by the service itself, over gRPC.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::{CreateGameRequest, GetGameRequest, MakeMoveRequest};

const PAGE: u64 = 4096;

/// Damage to one page or a few bytes of it: the page may be one redb has freed (it keeps a freed
/// page's old bytes), so the service may start; it must then serve every game whole. The other
/// cases (a missing, empty, headerless or truncated file) must be refused.
const MAY_HIT_A_FREE_PAGE: [&str; 4] = [
    "a page in the middle zeroed",
    "512 random bytes in the middle",
    "one byte changed in the middle",
    "last used page zeroed",
];

/// The marker the service writes beside a store it creates.
fn created_marker(store: &Path) -> PathBuf {
    store.with_file_name("games.redb.created")
}

/// The service on `data_dir` on free loopback ports, its stdout piped, its stderr to `stderr`.
fn spawn(data_dir: &Path, stderr: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_chess-rules-service"))
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start chess-rules-service")
}

/// Starts the service on `data_dir` (its stderr to `stderr`) and reads its stdout up to the
/// LISTENING line: the process and the gRPC address it announced (`None` when it ended first).
fn serve(data_dir: &Path, stderr: Stdio) -> (std::process::Child, Option<String>) {
    let mut child = spawn(data_dir, stderr);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = lines.find_map(|line| {
        let line = line.ok()?;
        let rest = line.strip_prefix("LISTENING ")?;
        rest.split(' ')
            .find_map(|w| w.strip_prefix("grpc="))
            .map(str::to_owned)
    });
    (child, addr)
}

/// The moves every game of the test store has.
const MOVES: [&str; 5] = ["e4", "e5", "Nf3", "Nc6", "Bb5"];

/// A store with `games` games of a few moves each, written by the real service over gRPC and
/// closed cleanly (SIGTERM); the store file and the game ids.
fn real_store(dir: &Path, games: usize) -> (PathBuf, Vec<String>) {
    let (mut child, addr) = serve(dir, Stdio::inherit());
    let addr = addr.expect("a LISTENING line with the address");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ids = runtime.block_on(async {
        let mut client = GameServiceClient::connect(format!("http://{addr}"))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for g in 0..games {
            let id = client
                .create_game(CreateGameRequest {
                    white: format!("white player {g}"),
                    black: format!("black player {g}"),
                    time_control_text: "5+3".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .game_id;
            for mv in MOVES {
                client
                    .make_move(MakeMoveRequest {
                        game_id: id.clone(),
                        r#move: mv.into(),
                        ..Default::default()
                    })
                    .await
                    .unwrap();
            }
            ids.push(id);
        }
        ids
    });
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(child.wait().unwrap().success());
    (dir.join("games.redb"), ids)
}

/// Starts the service on `data_dir` and reads every game back: `Ok` when each is there,
/// whole (its players and all its moves), `Err` saying what was missing or wrong.
fn serves_every_game_intact(data_dir: &Path, ids: &[String]) -> Result<(), String> {
    let (mut child, addr) = serve(data_dir, Stdio::null());
    let Some(addr) = addr else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("it did not announce an address".to_owned());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let mut client = GameServiceClient::connect(format!("http://{addr}"))
            .await
            .map_err(|e| e.to_string())?;
        for (g, id) in ids.iter().enumerate() {
            let game = client
                .get_game(GetGameRequest {
                    game_id: id.clone(),
                })
                .await
                .map_err(|e| format!("game {id}: {e:?}"))?
                .into_inner();
            let sans: Vec<&str> = game
                .moves
                .iter()
                .filter_map(|m| m.r#move.as_ref().map(|m| m.san.as_str()))
                .collect();
            if sans != MOVES || game.white != format!("white player {g}") {
                return Err(format!("game {id} came back as {game:?}"));
            }
        }
        Ok(())
    });
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// How the service ended on a data directory: `Ok(stderr)` when it exited by itself (with
/// its status), `Err(stdout)` when it announced that it listens (it is then stopped).
fn run_service(data_dir: &Path) -> Result<(i32, String), String> {
    let mut child = spawn(data_dir, Stdio::piped());
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("LISTENING") && tx.send(line).is_err() {
                break;
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    for _ in 0..600 {
        if let Ok(line) = rx.try_recv() {
            child.kill().unwrap();
            child.wait().unwrap();
            return Err(line);
        }
        if let Some(status) = child.try_wait().unwrap() {
            let text = err_reader.join().unwrap();
            return Ok((status.code().unwrap_or(-1), text));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    panic!("chess-rules-service neither started nor exited within 30 s");
}

fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// The offsets of the pages (after the header page) that hold something, in file order.
fn used_pages(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .chunks(PAGE as usize)
        .enumerate()
        .skip(1)
        .filter(|(_, page)| page.iter().any(|&b| b != 0))
        .map(|(i, _)| i as u64 * PAGE)
        .collect()
}

#[test]
fn damaged_stores_are_refused_with_a_clear_message() {
    let base = std::env::temp_dir().join(format!("chess-store-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let original = base.join("original");
    let (store_file, ids) = real_store(&original, 100);
    assert!(created_marker(&store_file).exists());
    let len = std::fs::metadata(&store_file).unwrap().len();
    let pages = used_pages(&store_file);
    assert!(
        pages.len() > 8,
        "{} pages in use of {len} bytes",
        pages.len()
    );
    let middle = pages[pages.len() / 2];

    // The undamaged copy starts (and is stopped).
    let good = base.join("good");
    copy_dir(&original, &good);
    let started = run_service(&good);
    assert!(
        started.is_err(),
        "the undamaged store did not start: {started:?}"
    );

    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut random_bytes = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect()
    };
    let noise = random_bytes(512);
    type Damage = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "emptied (0 bytes)",
            Box::new(|p| std::fs::write(p, b"").unwrap()),
        ),
        ("deleted", Box::new(|p| std::fs::remove_file(p).unwrap())),
        (
            "header page zeroed",
            Box::new(|p| write_at(p, 0, &[0; PAGE as usize])),
        ),
        (
            "a page in the middle zeroed",
            Box::new(move |p| write_at(p, middle, &[0; PAGE as usize])),
        ),
        (
            "truncated to half",
            Box::new(move |p| {
                let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_len(len / 2).unwrap();
            }),
        ),
        (
            "512 random bytes in the middle",
            Box::new(move |p| write_at(p, middle + 100, &noise)),
        ),
        (
            "one byte changed in the middle",
            Box::new(move |p| {
                let mut b = [0u8];
                let f = std::fs::File::open(p).unwrap();
                std::os::unix::fs::FileExt::read_exact_at(&f, &mut b, middle + 200).unwrap();
                write_at(p, middle + 200, &[b[0] ^ 0x5a]);
            }),
        ),
        // A torn write at the end.
        (
            "last used page zeroed",
            Box::new({
                let last = *pages.last().unwrap();
                move |p| write_at(p, last, &[0; PAGE as usize])
            }),
        ),
    ];
    let mut failures = Vec::new();
    for (i, (name, damage)) in cases.iter().enumerate() {
        let dir = base.join(format!("case{i}"));
        copy_dir(&original, &dir);
        let file = dir.join("games.redb");
        damage(&file);
        match run_service(&dir) {
            Err(_) if MAY_HIT_A_FREE_PAGE.contains(name) => {
                match serves_every_game_intact(&dir, &ids) {
                    Ok(()) => eprintln!("{name}: started; the page was free, every game is whole"),
                    Err(e) => failures.push(format!("{name}: served a damaged store: {e}")),
                }
            }
            Err(line) => failures.push(format!("{name}: served a damaged store ({line})")),
            Ok((code, stderr)) => {
                let expected = [
                    format!("the game store {} is damaged: ", file.display()),
                    "To recover:".to_owned(),
                    "restore".to_owned(),
                ];
                if code != 1 || expected.iter().any(|e| !stderr.contains(e.as_str())) {
                    failures.push(format!("{name}: exit {code}, stderr:\n{stderr}"));
                } else {
                    eprintln!("{name}: refused: {}", stderr.trim());
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // A new data directory still starts an empty store.
    let fresh = base.join("fresh");
    assert!(run_service(&fresh).is_err());
    assert!(created_marker(&fresh.join("games.redb")).exists());
    std::fs::remove_dir_all(&base).unwrap();
}
