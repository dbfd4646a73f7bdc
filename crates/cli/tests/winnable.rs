//! `chess winnable` run as the binary: verdicts, the JSON per line, proofs that replay, errors.

use std::io::Write;
use std::process::{Command, Stdio};

use chess_rules::Position;

fn chess(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chess"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chess");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn one_position_as_text() {
    let (code, out, err) = chess(&["winnable", "8/8/8/2k5/8/8/3KB3/8 w - - 0 1"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("--\n"), "{out}");
    assert!(
        out.contains("White: cannot win: White has only a bishop"),
        "{out}"
    );
    let (_, out, _) = chess(&["winnable", "e4", "e5", "--for", "white", "--full"], "");
    assert!(out.starts_with("W\nWhite: winnable, helpmate "), "{out}");
}

#[test]
fn standard_input_answers_one_json_line_per_line_in_order() {
    let input = "7k/8/5K2/8/8/8/P7/6N1 w - - 0 1\n\
                 not a fen/8\n\
                 k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1\n\
                 \n\
                 8/8/8/2k5/8/2b5/3KB3/8 w - - 0 1\n";
    let (code, out, err) = chess(&["winnable", "-", "--full", "--json"], input);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let fens: Vec<&str> = input.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if [1, 3].contains(&i) {
            assert!(v["error"].is_string(), "{line}");
            continue;
        }
        let pos = Position::from_fen(fens[i]).unwrap();
        for side in ["white", "black"] {
            let s = &v[side];
            let verdict = s["verdict"].as_str().unwrap();
            assert!(
                ["winnable", "unwinnable", "undetermined"].contains(&verdict),
                "{line}"
            );
            if verdict == "winnable" {
                // The proof replays legally and ends in mate.
                let mut p = pos.clone();
                for uci in s["line"].as_array().unwrap() {
                    let m = p.parse_uci(uci.as_str().unwrap()).unwrap();
                    p = p.play(m).unwrap();
                }
                assert!(p.is_checkmate(), "{line}");
            }
        }
    }
    assert!(
        lines[0].starts_with(r#"{"white":{"verdict":"winnable","line":["#),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains(r#""black":{"verdict":"unwinnable""#));
    assert!(lines[2].contains("cannot attack a dark square"));
    assert!(lines[4].contains(r#""white":{"verdict":"winnable""#));
    assert!(lines[4].contains(r#""black":{"verdict":"winnable""#));
}

#[test]
fn a_bad_position_is_an_error() {
    let (code, out, _) = chess(&["winnable", "8/8/8 w - - 0 1", "--json"], "");
    assert_eq!(code, 1);
    assert!(out.starts_with(r#"{"error":"#), "{out}");
    let (code, _, err) = chess(&["winnable", "e4", "e9"], "");
    assert_eq!(code, 1);
    assert!(err.contains("move 2"), "{err}");
}
