//! WritePgn and ParsePgn called in process: what is written reads back, what cannot be
//! written is refused with the field named, and a game that goes on after its automatic end
//! is reported, not echoed.

use chess_proto::v1::rules_service_server::RulesService;
use chess_proto::v1::{ParsePgnRequest, ParsePgnResponse, PgnTag, WritePgnRequest};
use prost::Message;
use tonic::{Code, Request, Status};

use super::RulesApi;
use crate::RequestLimits;

fn api() -> RulesApi {
    RulesApi::new(RequestLimits {
        max_moves: 2048,
        max_pgn_bytes: 8 << 20,
        max_games: 10_000,
        max_game_plies: 2048,
    })
}

fn tag(name: &str, value: &str) -> PgnTag {
    PgnTag {
        name: name.into(),
        value: value.into(),
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

async fn write(req: WritePgnRequest) -> Result<String, Status> {
    Ok(api().write_pgn(Request::new(req)).await?.into_inner().pgn)
}

async fn parse(pgn: &str) -> ParsePgnResponse {
    api()
        .parse_pgn(Request::new(ParsePgnRequest { pgn: pgn.into() }))
        .await
        .unwrap()
        .into_inner()
}

/// INVALID_ARGUMENT whose message starts with the field and holds `why`.
#[track_caller]
fn assert_refused(r: Result<String, Status>, field: &str, why: &str) {
    let s = r.expect_err("refused");
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
    assert!(
        s.message().starts_with(&format!("{field}: ")) && s.message().contains(why),
        "expected {field}: ...{why}..., got {}",
        s.message()
    );
}

const FOOLS_MATE: [&str; 4] = ["f3", "e5", "g4", "Qh4#"];

#[tokio::test]
async fn write_pgn_refuses_what_cannot_be_read_back() {
    // A line break in a tag value: was INTERNAL.
    assert_refused(
        write(WritePgnRequest {
            tags: vec![tag("White", "Ann"), tag("Annotator", "two\nlines")],
            ..Default::default()
        })
        .await,
        "tags[1].value",
        "line break",
    );
    assert_refused(
        write(WritePgnRequest {
            tags: vec![tag("Bad Name", "x")],
            ..Default::default()
        })
        .await,
        "tags[0].name",
        "letters, digits",
    );
    // A FEN tag that is no position: was written as given.
    assert_refused(
        write(WritePgnRequest {
            tags: vec![tag("FEN", "not a fen")],
            ..Default::default()
        })
        .await,
        "tags[0].value",
        "is not a legal position",
    );
    // FEN and SetUp tags of another position than start_fen, with moves from the start: were
    // written, and then could not be read.
    assert_refused(
        write(WritePgnRequest {
            tags: vec![
                tag("SetUp", "1"),
                tag("FEN", "4k3/8/8/8/8/8/8/4K2R w K - 0 1"),
            ],
            moves: strings(&["e4", "e5"]),
            ..Default::default()
        })
        .await,
        "tags[1].value",
        "is not the game's start position",
    );
    assert_refused(
        write(WritePgnRequest {
            tags: vec![tag("SetUp", "0")],
            start_fen: "4k3/8/8/8/8/8/8/4K2R w K - 0 1".into(),
            ..Default::default()
        })
        .await,
        "tags[0].value",
        "SetUp",
    );
    // A result the final position contradicts: was accepted.
    for result in ["1-0", "1/2-1/2"] {
        assert_refused(
            write(WritePgnRequest {
                moves: strings(&FOOLS_MATE),
                result: result.into(),
                ..Default::default()
            })
            .await,
            "result",
            "contradicts the final position: 0-1 (black wins by checkmate)",
        );
    }
}

#[tokio::test]
async fn what_write_pgn_writes_reads_back() {
    let start = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
    let text = write(WritePgnRequest {
        tags: vec![
            tag("White", "Ann \"the rook\""),
            tag("SetUp", "1"),
            tag("FEN", "4k3/8/8/8/8/8/8/4K2R w K -"),
        ],
        start_fen: start.into(),
        moves: strings(&["O-O", "Kd7"]),
        result: "*".into(),
    })
    .await
    .unwrap();
    let back = parse(&text).await;
    assert_eq!((back.valid_games, back.invalid_games), (1, 0), "{text}");
    let g = &back.games[0];
    assert_eq!(g.start_fen, start);
    assert_eq!(g.moves.len(), 2);
    assert!(
        g.tags
            .iter()
            .any(|t| t.name == "White" && t.value == "Ann \"the rook\"")
    );
    // The mate's own result, given or not.
    for result in ["", "*", "0-1"] {
        let text = write(WritePgnRequest {
            moves: strings(&FOOLS_MATE),
            result: result.into(),
            ..Default::default()
        })
        .await
        .unwrap();
        assert!(
            text.contains("[Result \"0-1\"]") && text.contains("Qh4# 0-1"),
            "{text}"
        );
    }
    // A decisive result without a decided position (a resignation) stands.
    let text = write(WritePgnRequest {
        moves: strings(&["e4"]),
        result: "1-0".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(text.contains("1. e4 1-0"), "{text}");
}

/// Knights out and back: the start position again every four plies.
fn shuffle(times: usize) -> String {
    let mut text = String::new();
    for i in 0..times {
        text.push_str(&format!("{}. Nf3 Nf6 {}. Ng1 Ng8 ", 2 * i + 1, 2 * i + 2));
    }
    text
}

#[tokio::test]
async fn parse_pgn_refuses_moves_after_a_fivefold_repetition() {
    // The start position for the fifth time after 16 plies ends the game; a 17th ply is refused.
    let r = parse(&format!("[Event \"x\"]\n\n{}*\n", shuffle(4))).await;
    assert_eq!(
        (r.valid_games, r.invalid_games),
        (1, 0),
        "{:?}",
        r.games[0].error
    );
    assert_eq!(r.games[0].moves.len(), 16);
    let r = parse(&format!("[Event \"x\"]\n\n{}9. Nf3 *\n", shuffle(4))).await;
    assert_eq!((r.valid_games, r.invalid_games), (0, 1));
    let e = &r.games[0].error;
    assert_eq!(
        e,
        "game 1, move 9. Nf3: played after the game had ended: 1/2-1/2 (draw by fivefold repetition)"
    );
    assert!(r.games[0].moves.is_empty());
    // Thousands of moves after the end: a short answer, not megabytes.
    let r = parse(&format!("{}*\n", shuffle(2_500))).await;
    assert_eq!(r.invalid_games, 1);
    let bytes = r.encoded_len();
    assert!(bytes < 4_096, "{bytes} bytes");
}
