//! Runs the `chess-train` binary end to end: datagen, resume, training, bad arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chess_rules::Position;
use chess_train::data::{self, GameResult};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chess-train"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chess-train-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "failed: {stderr}");
    stderr
}

/// `<command> --data <file> --out <out>` and `args`.
fn command_on(command: &str, file: &Path, out: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        command,
        "--data",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    bin(&all)
}

fn datagen(file: &Path, games: u32) -> Output {
    bin(&[
        "datagen",
        "--out",
        file.to_str().unwrap(),
        "--games",
        &games.to_string(),
        "--nodes",
        "500",
        "--seed",
        "3",
        "--report-every",
        "1",
    ])
}

#[test]
fn datagen_resumes_and_training_writes_a_loadable_network() {
    let dir = scratch("flow");
    let file = dir.join("games.bin");
    let log = ok(&datagen(&file, 2));
    assert!(log.contains("positions/s"), "progress line: {log}");

    let first = data::read(&file).unwrap();
    assert_eq!(first.games.len(), 2);
    assert_eq!(first.torn_bytes, 0);
    assert!(first.positions() > 10, "{} positions", first.positions());
    for game in &first.games {
        assert!(matches!(
            game.result,
            GameResult::WhiteWin | GameResult::Draw | GameResult::BlackWin
        ));
        for rec in &game.positions {
            let pos = Position::from_fen(&rec.fen).expect("stored FENs parse");
            assert!(!pos.is_check(), "a position in check was kept: {}", rec.fen);
            assert!(i32::from(rec.score).abs() <= data::SCORE_LIMIT);
        }
    }

    // Resume: one more game, the first two untouched.
    ok(&datagen(&file, 3));
    let second = data::read(&file).unwrap();
    assert_eq!(second.games.len(), 3);
    assert_eq!(second.games[..2], first.games[..]);
    assert_ne!(second.games[2], second.games[0]);
    // A game torn by an interruption is cut off; the file is already complete.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(&[2, 5, 0, 10, b'r']);
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(data::read(&file).unwrap().torn_bytes, 5);
    let log = ok(&datagen(&file, 3));
    assert!(log.contains("cut off 5 bytes"), "{log}");
    let third = data::read(&file).unwrap();
    assert_eq!((third.games.len(), third.torn_bytes), (3, 0));

    let net_path = dir.join("net.nnue");
    let ckpt = dir.join("train.ckpt");
    let train_to = |out: &Path, args: &[&str]| command_on("train", &file, out, args);
    let train_with = |out: &Path, epochs: &'static str, extra: &[&'static str]| {
        let mut args = vec![
            "--hidden",
            "32",
            "--epochs",
            epochs,
            "--batch",
            "64",
            "--threads",
            "2",
            "--lr-drop",
            "2",
            // Of the 3 games, the game-index hash holds out the second.
            "--validation",
            "0.3",
            "--checkpoint",
            ckpt.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        train_to(out, &args)
    };
    let train = |epochs: &'static str| train_with(&net_path, epochs, &[]);
    let out = train("2");
    let log = ok(&out);
    assert!(log.contains("epoch 2/2 loss"), "{log}");
    assert!(
        log.contains("held out for validation") && log.contains(" val_loss 0."),
        "{log}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let net = chess_nn::Network::load(&net_path).expect("the network loads");
    assert!(stdout.contains(&net.file_name()), "{stdout}");
    assert_eq!(net.hidden(), 32);
    let eval = net.evaluate(&Position::startpos());
    assert!(eval.abs() < 10_000, "start position evaluates to {eval}");

    // Resume from the checkpoint: only the third epoch runs.
    let log = ok(&train("3"));
    assert!(
        log.contains("resuming") && log.contains("epoch 3/3"),
        "{log}"
    );
    assert!(!log.contains("epoch 2/3"), "{log}");
    // The third epoch (index 2) trains at a tenth of the rate.
    assert!(log.contains("lr 1.0e-4"), "{log}");
    let trained = chess_nn::Network::load(&net_path).expect("the network loads");
    // A resume towards another target is refused before any training, the checkpoint left
    // as it was and no network written; a change of schedule is allowed and logged.
    let resumed = dir.join("resumed.nnue");
    let ckpt_bytes = std::fs::read(&ckpt).unwrap();
    let resume_with = |extra: &[&'static str]| train_with(&resumed, "4", extra);
    let out = resume_with(&["--wdl", "0.5", "--mirror"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("was trained with --wdl 0 (given: 0.5), --mirror false (given: true)")
            && !err.contains("epoch 4/4"),
        "{err}"
    );
    assert_eq!(std::fs::read(&ckpt).unwrap(), ckpt_bytes);
    assert!(!resumed.exists());
    let log = ok(&resume_with(&["--lr", "0.002"]));
    assert!(
        log.contains("resuming with --lr 0.002; the run began with 0.001")
            && log.contains("epoch 4/4"),
        "{log}"
    );

    // --init: training goes on from a network's weights. At a negligible rate the result is
    // the same network again (random weights would give another).
    let again = dir.join("again.nnue");
    let from = |init: &str, hidden: &str, buckets: &str, out: &Path| {
        train_to(
            out,
            &[
                "--hidden",
                hidden,
                "--buckets",
                buckets,
                "--epochs",
                "1",
                "--lr",
                "1e-9",
                "--init",
                init,
            ],
        )
    };
    let log = ok(&from(net_path.to_str().unwrap(), "32", "1", &again));
    assert!(log.contains("starting from"), "{log}");
    let copy = chess_nn::Network::load(&again).expect("the network loads");
    assert_eq!(copy.file_name(), trained.file_name());
    let out = from(net_path.to_str().unwrap(), "16", "1", &again);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && err.contains("hidden size 32, more than --hidden 16"),
        "{err}"
    );
    // A wider --hidden: the network's 32 neurons and 32 new ones that add nothing yet.
    let wide = dir.join("wide.nnue");
    let log = ok(&from(net_path.to_str().unwrap(), "64", "1", &wide));
    assert!(log.contains("starting from"), "{log}");
    let wide = chess_nn::Network::load(&wide).expect("the network loads");
    assert_eq!(wide.hidden(), 64);
    let evaluates_as_trained = |net: &chess_nn::Network| {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(net.evaluate(&pos), trained.evaluate(&pos), "{fen}");
        }
    };
    evaluates_as_trained(&wide);
    // --output-weight-limit below what the starting weights reach: clamped, and said so.
    let clamped = dir.join("clamped.nnue");
    let log = ok(&train_to(
        &clamped,
        &[
            "--hidden",
            "32",
            "--epochs",
            "1",
            "--lr",
            "1e-9",
            "--init",
            net_path.to_str().unwrap(),
            "--output-weight-limit",
            "1",
        ],
    ));
    assert!(
        log.contains("beyond the limit 1: they are clamped (--output-weight-limit"),
        "{log}"
    );
    let clamped = chess_nn::Network::load(&clamped).expect("the network loads");
    assert!(clamped.out_weights().iter().all(|w| w.abs() <= 1));
    assert!(trained.out_weights().iter().any(|w| w.abs() > 1));
    // --buckets: the one output layer copied into eight buckets evaluates as before.
    let bucketed = dir.join("bucketed.nnue");
    let log = ok(&from(net_path.to_str().unwrap(), "32", "8", &bucketed));
    assert!(log.contains("starting from"), "{log}");
    let eight = chess_nn::Network::load(&bucketed).expect("the network loads");
    assert_eq!(eight.buckets(), 8);
    evaluates_as_trained(&eight);
    // ... but a network of eight buckets cannot start one of four.
    let out = from(bucketed.to_str().unwrap(), "32", "4", &again);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && err.contains("has 8 output buckets, not --buckets 4"),
        "{err}"
    );
    // --king-buckets: the feature weights copied into each king bucket evaluate as before
    // (a version-3 file); training then moves the buckets apart.
    let kb_args = |init: &str, rate: &'static str| {
        vec![
            "--hidden".to_owned(),
            "32".into(),
            "--buckets".into(),
            "8".into(),
            "--king-buckets".into(),
            "00011222/3".into(),
            "--epochs".into(),
            "1".into(),
            "--lr".into(),
            rate.into(),
            "--init".into(),
            init.to_owned(),
        ]
    };
    let kb_path = dir.join("kb.nnue");
    let args = kb_args(bucketed.to_str().unwrap(), "1e-9");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&train_to(&kb_path, &args));
    let kb = chess_nn::Network::load(&kb_path).expect("the network loads");
    assert_eq!((kb.king_buckets().count(), kb.buckets()), (4, 8));
    assert_eq!(&std::fs::read(&kb_path).unwrap()[4..8], &3u32.to_le_bytes());
    evaluates_as_trained(&kb);
    let moved = dir.join("kb-moved.nnue");
    let args = kb_args(bucketed.to_str().unwrap(), "0.01");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&train_to(&moved, &args));
    let moved = chess_nn::Network::load(&moved).expect("the network loads");
    let rows = 768 * 32;
    assert_ne!(
        moved.ft_weights()[..rows],
        moved.ft_weights()[3 * rows..4 * rows],
        "the buckets learn apart"
    );
    // A king-bucketed network cannot start another map.
    let out = train_to(
        &again,
        &[
            "--hidden",
            "32",
            "--buckets",
            "8",
            "--king-buckets",
            "00001111/2",
            "--init",
            kb_path.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("has king buckets 00011222/3")
            && err.contains("not --king-buckets 00001111/22222222/"),
        "{err}"
    );
    // --factorise: from scratch with a factor shared by the king buckets, a checkpoint
    // flagged with it (version 5, flags 3: the map and the factor) that resumes only with
    // --factorise, an ordinary version-3 network file.
    let fac_ckpt = dir.join("fac.ckpt");
    let fac_path = dir.join("fac.nnue");
    let fac = |factorise: bool, epochs: &'static str| {
        let mut args = vec![
            "--hidden",
            "32",
            "--king-buckets",
            "00011222/3",
            "--epochs",
            epochs,
            "--batch",
            "64",
            "--checkpoint",
            fac_ckpt.to_str().unwrap(),
        ];
        if factorise {
            args.push("--factorise");
        }
        train_to(&fac_path, &args)
    };
    ok(&fac(true, "1"));
    let header = std::fs::read(&fac_ckpt).unwrap()[4..20].to_vec();
    assert_eq!(header[..4], 5u32.to_le_bytes());
    assert_eq!(header[12..], 3u32.to_le_bytes());
    assert_eq!(
        &std::fs::read(&fac_path).unwrap()[4..8],
        &3u32.to_le_bytes()
    );
    let factorised = chess_nn::Network::load(&fac_path).expect("the network loads");
    assert_eq!(factorised.king_buckets().count(), 4);
    let out = fac(false, "2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("was trained with a shared factor: resume it with --factorise"),
        "{err}"
    );
    let log = ok(&fac(true, "2"));
    assert!(
        log.contains("resuming from") && log.contains("epoch 2/2"),
        "{log}"
    );
    let out = from(
        dir.join("missing.nnue").to_str().unwrap(),
        "32",
        "1",
        &again,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && err.contains("missing.nnue"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_give_clear_errors() {
    let dir = scratch("bad");
    let missing = dir.join("no-such-file.bin");
    let out = bin(&[
        "train",
        "--data",
        missing.to_str().unwrap(),
        "--out",
        dir.join("n.nnue").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-file.bin"), "{err}");

    let not_data = dir.join("text.bin");
    std::fs::write(&not_data, "hello world").unwrap();
    let out = bin(&[
        "train",
        "--data",
        not_data.to_str().unwrap(),
        "--out",
        dir.join("n.nnue").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not a chess-train data file"),
        "{err}"
    );

    // Placeholder files and one bad setting: a usage error (exit 2) that names it.
    for (flag, value, want) in [
        ("--hidden", "100", "--hidden 100"),
        (
            "--king-buckets",
            "0001122x/3",
            "'x' in rank 1 is not a bucket (0-9, a-v)",
        ),
        ("--buckets", "17", "--buckets 17: must be 1 to 16"),
    ] {
        let out = bin(&["train", "--data", "x", "--out", "y", flag, value]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains(want), "{err}");
    }

    for (hidden, limit, max) in [("256", "65", "64"), ("512", "0", "32")] {
        let out = bin(&[
            "train",
            "--data",
            "x",
            "--out",
            "y",
            "--hidden",
            hidden,
            "--output-weight-limit",
            limit,
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let want =
            format!("--output-weight-limit {limit}: must be from 1 to {max} for --hidden {hidden}");
        assert!(err.contains(&want), "{err}");
    }

    let out = bin(&["train", "--data", "x", "--out", "y", "--factorise"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--factorise shares feature weights between king buckets"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = bin(&["train", "--data", "x", "--out", "y", "--validation", "0.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--validation 0.5"));

    let out = bin(&["datagen", "--out", "x", "--games", "0", "--nodes", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--games"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rescale_matches_a_network_to_the_default_scale() {
    let dir = scratch("rescale");
    let file = dir.join("games.bin");
    ok(&datagen(&file, 4));
    // The default network's weights at SCALE 500: evaluations larger than its own.
    let mut parts = chess_nn::Network::clone(&chess_nn::Network::default_network()).into_parts();
    parts.scale = 500;
    let big = dir.join("big.nnue");
    let bytes = chess_nn::Network::from_parts(parts).unwrap().to_bytes();
    std::fs::write(&big, bytes).unwrap();
    let out = dir.join("matched.nnue");
    let rescale = |args: &[&str]| command_on("rescale", &file, &out, args);
    let run = rescale(&["--net", big.to_str().unwrap(), "--like", "default"]);
    ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("scale=500 -> "), "{stdout}");
    let matched = chess_nn::Network::load(&out).expect("the network loads");
    let default = chess_nn::Network::default_network();
    assert!(
        (matched.scale() - default.scale()).abs() <= 4,
        "scale {} against {} ({stdout})",
        matched.scale(),
        default.scale()
    );
    let start = Position::startpos();
    assert!((matched.evaluate(&start) - default.evaluate(&start)).abs() <= 1);

    // Bad input: a network that does not exist, the hand-written evaluation, too few positions.
    for (args, expected) in [
        (vec!["--net", "no-such.nnue"], "no-such.nnue"),
        (vec!["--net", "hand"], "not a network"),
        (vec!["--net", "default", "--positions", "5"], "at least 100"),
    ] {
        let run = rescale(&args);
        assert!(!run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(expected), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
