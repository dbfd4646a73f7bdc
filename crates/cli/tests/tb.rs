//! `chess tb`: generate, probe (one FEN, or lines from stdin), stats, in the exact forms other
//! tools read.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn chess(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chess"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn generate_probe_and_stats() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-tb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let generated = chess(&["tb", "generate", "--only", "KQvK,KRvK", "--dir", d], None);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    assert!(
        String::from_utf8_lossy(&generated.stderr).contains("KQvK"),
        "progress on stderr"
    );

    // Mate in one: Qb8#. Only that move mates at once.
    let one = chess(
        &[
            "tb",
            "probe",
            "7k/8/6K1/8/8/8/8/1Q6 w - - 0 1",
            "--dir",
            d,
            "--json",
        ],
        None,
    );
    assert!(one.status.success());
    let v = &json_lines(&one)[0];
    assert_eq!(v["wdl"], "win");
    assert_eq!(v["dtm_plies"], 1);
    assert_eq!(v["best"], serde_json::json!(["b1b8"]));

    let input = "Q6k/8/6K1/8/8/8/8/8 b - - 0 1\n\
                 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n\
                 not a fen\n\
                 8/8/8/4k3/8/8/8/R3K3 b - - 0 1\n\
                 8/8/8/4k3/8/8/8/RR2K3 w - - 0 1\n";
    let many = chess(&["tb", "probe", "-", "--dir", d, "--json"], Some(input));
    assert!(many.status.success());
    let lines = json_lines(&many);
    assert_eq!(lines.len(), 5);
    // Already mated: a loss at 0 plies, no moves.
    assert_eq!(
        lines[0],
        serde_json::json!({"wdl": "loss", "dtm_plies": 0, "best": []})
    );
    // Stalemate.
    assert_eq!(
        lines[1],
        serde_json::json!({"wdl": "draw", "dtm_plies": 0, "best": []})
    );
    assert!(lines[2]["error"].is_string());
    // KRvK with the lone king to move: a loss, an even number of plies.
    assert_eq!(lines[3]["wdl"], "loss");
    let n = lines[3]["dtm_plies"].as_i64().unwrap();
    assert!(n < 0 && n % 2 == 0, "{n}");
    // KRRvK was not generated.
    assert!(
        lines[4]["error"].as_str().unwrap().contains("KRRvK"),
        "{}",
        lines[4]
    );

    let stats = chess(&["tb", "stats", "--dir", d, "--json"], None);
    assert!(stats.status.success());
    let s: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let endings = s["endings"].as_array().unwrap();
    let kqk = endings.iter().find(|e| e["ending"] == "KQvK").unwrap();
    assert_eq!(kqk["longest_win_plies"], 19);
    let total = kqk["wins"].as_u64().unwrap()
        + kqk["draws"].as_u64().unwrap()
        + kqk["losses"].as_u64().unwrap();
    assert_eq!(total, kqk["positions"].as_u64().unwrap());
    assert!(kqk["bytes"].as_u64().unwrap() > 40_000);
    assert!(kqk["generate_ms"].is_u64());
    // The example position has the longest win.
    let fen = kqk["example_fen"].as_str().unwrap();
    let ex = chess(&["tb", "probe", fen, "--dir", d, "--json"], None);
    assert_eq!(json_lines(&ex)[0]["dtm_plies"], 19);

    // A run over the same folder resumes: nothing left to do.
    let again = chess(&["tb", "generate", "--only", "KQvK,KRvK", "--dir", d], None);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("0 generated"),
        "{:?}",
        again
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
