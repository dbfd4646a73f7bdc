//! Hostile clients, kept as a test: a seeded stream of random and mutated requests to every
//! RPC of a real stack (rules service, two search replicas, gateway), sent as raw protobuf
//! bytes so that they can be anything a client can put on the wire: random fields and wire
//! types, long strings, boundary numbers, invalid UTF-8, truncated and garbled messages.
//!
//! Whatever arrives, the stack must answer like a service and stay one: no `INTERNAL` or
//! `UNKNOWN`, no `UNAVAILABLE` (every process is up, so that one would be caused by the
//! request), no call that outlives its deadline, response metadata under 8 KiB, every search
//! replica still in rotation afterwards, every gauge back to zero, and each process's memory
//! grown by a bounded amount.
//!
//! `CHESS_FUZZ_SEED` and `CHESS_FUZZ_REQUESTS` change the seed and the request count.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_integration_tests::{Service, TempDir};
use prost::bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};

use crate::runtime;

/// Requests sent unless `CHESS_FUZZ_REQUESTS` says otherwise, and how many are in flight.
const REQUESTS: usize = 3000;
const CONCURRENCY: usize = 12;
/// gRPC's usual limit on the response metadata a client accepts.
const MAX_METADATA_BYTES: usize = 8 * 1024;
/// Memory a process may gain over the run (its caches and tables are allocated at start).
const MAX_RSS_GROWTH_KIB: u64 = 256 * 1024;
/// How long past its deadline a call may take before it counts as a hang.
const HANG_MARGIN: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------
// Raw protobuf: a codec for bytes as they are, and a writer of wire-format fields.

/// Sends and receives message bodies as raw bytes, so a request can be any byte string.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let mut out = vec![0; src.remaining()];
        src.copy_to_slice(&mut out);
        Ok(Some(out))
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn put_varint(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

// ---------------------------------------------------------------------------------------
// The request schemas: enough of each message to fill its fields with hostile values.

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A FEN-like string field.
    Fen,
    /// A move-like string field.
    Move,
    /// A game id.
    GameId,
    /// PGN text.
    Pgn,
    /// Free text (names, tag values, time control text, results).
    Text,
    U32,
    U64,
    /// An enum (a colour).
    Enum,
    Bool,
    Msg(&'static [(u32, Kind)]),
    Repeated(&'static Kind),
}

const LIMITS: &[(u32, Kind)] = &[
    (1, Kind::U32),
    (2, Kind::U64),
    (3, Kind::U64),
    (4, Kind::U32),
];
const STRENGTH: &[(u32, Kind)] = &[
    (1, Kind::U32),
    (2, Kind::U32),
    (3, Kind::U64),
    (4, Kind::U64),
];
const POSITION_MOVES: &[(u32, Kind)] = &[
    (1, Kind::Fen),
    (2, Kind::Repeated(&Kind::Move)),
    (3, Kind::Bool),
];
const ANALYZE: &[(u32, Kind)] = &[
    (1, Kind::Fen),
    (2, Kind::Repeated(&Kind::Move)),
    (3, Kind::Msg(LIMITS)),
    (4, Kind::U32),
];
const TAG: &[(u32, Kind)] = &[(1, Kind::Text), (2, Kind::Text)];
const PERIOD: &[(u32, Kind)] = &[(1, Kind::U32), (2, Kind::U64), (3, Kind::U64)];
const TIME_CONTROL: &[(u32, Kind)] = &[(1, Kind::Repeated(&Kind::Msg(PERIOD)))];

/// Which processes serve an RPC: the gateway always; a backend when its name is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Rules,
    Search,
    GatewayOnly,
}

struct Rpc {
    path: &'static str,
    fields: &'static [(u32, Kind)],
    streaming: bool,
    backend: Backend,
}

const fn rpc(
    path: &'static str,
    fields: &'static [(u32, Kind)],
    streaming: bool,
    backend: Backend,
) -> Rpc {
    Rpc {
        path,
        fields,
        streaming,
        backend,
    }
}

const RPCS: &[Rpc] = &[
    rpc(
        "/chess.v1.RulesService/LegalMoves",
        POSITION_MOVES,
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ConvertMoves",
        POSITION_MOVES,
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ValidateFen",
        &[(1, Kind::Fen)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/PositionStatus",
        POSITION_MOVES,
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ParsePgn",
        &[(1, Kind::Pgn)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/WritePgn",
        &[
            (1, Kind::Repeated(&Kind::Msg(TAG))),
            (2, Kind::Fen),
            (3, Kind::Repeated(&Kind::Move)),
            (4, Kind::Text),
        ],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/CreateGame",
        &[
            (1, Kind::Fen),
            (2, Kind::Msg(TIME_CONTROL)),
            (3, Kind::Text),
            (4, Kind::Text),
            (5, Kind::Text),
        ],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/GetGame",
        &[(1, Kind::GameId)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/MakeMove",
        &[
            (1, Kind::GameId),
            (2, Kind::Move),
            (3, Kind::Enum),
            (4, Kind::U32),
            (5, Kind::Bool),
        ],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/WatchGame",
        &[(1, Kind::GameId)],
        true,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/Resign",
        &[(1, Kind::GameId), (2, Kind::Enum)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/RespondToDraw",
        &[(1, Kind::GameId), (2, Kind::Enum), (3, Kind::Bool)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.GameService/ClaimDraw",
        &[(1, Kind::GameId), (2, Kind::Enum), (3, Kind::Move)],
        false,
        Backend::Rules,
    ),
    rpc(
        "/chess.v1.AnalysisService/Analyze",
        ANALYZE,
        false,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/AnalyzeStream",
        ANALYZE,
        true,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/AnalyzeBatch",
        &[(1, Kind::Repeated(&Kind::Msg(ANALYZE)))],
        true,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/BestMove",
        &[
            (1, Kind::Fen),
            (2, Kind::Repeated(&Kind::Move)),
            (3, Kind::Msg(STRENGTH)),
            (4, Kind::Msg(LIMITS)),
        ],
        false,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/ReviewGame",
        &[(1, Kind::Pgn), (2, Kind::U32), (3, Kind::Msg(LIMITS))],
        false,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/EvaluatePositions",
        &[(1, Kind::Repeated(&Kind::Fen))],
        false,
        Backend::Search,
    ),
    rpc(
        "/chess.v1.GatewayService/ServerInfo",
        &[],
        false,
        Backend::GatewayOnly,
    ),
    rpc(
        "/chess.v1.GatewayService/EngineMove",
        &[
            (1, Kind::GameId),
            (2, Kind::Msg(STRENGTH)),
            (3, Kind::Msg(LIMITS)),
            (4, Kind::Bool),
        ],
        false,
        Backend::GatewayOnly,
    ),
];

// ---------------------------------------------------------------------------------------
// Hostile values.

/// SplitMix64: small, seeded, good enough to pick cases.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const FENS: &[&str] = &[
    "",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    // Checkmate, stalemate, a dead position, the fifty-move rule at its end.
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
    "8/8/4k3/8/8/3K4/8/R7 w - - 150 200",
    // Broken: every field wrong in turn.
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqK - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999999999999 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 4294967296",
    "kkkkkkkk/8/8/8/8/8/8/KKKKKKKK w - - 0 1",
    "8/8/8/8/8/8/8/8 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1",
    "startpos",
];

const MOVES: &[&str] = &[
    "e4", "e2e4", "Nf3", "g1f3", "Ng1-f3", "O-O", "0-0", "O-O-O", "e7e8q", "e8=Q", "exd5", "Qh4#",
    "Nbd7", "a1a1", "e2e5", "h7h8n", "", " ", "--", "0000", "e4!?", "Kxe8", "P@e4",
];

const TEXTS: &[&str] = &[
    "",
    "5+3",
    "0+1",
    "0+0",
    "40/90+30:30+30",
    "0.5+0",
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "Event",
    "White",
    "FEN",
    "SetUp",
    "Result",
    "line\nbreak",
    "quote\"d",
    "tab\t",
    "\u{0}nul",
    "Magnus",
    "99999999999/9999999+99999999",
    "-1+-1",
    "NaN+inf",
];

const PGNS: &[&str] = &[
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0",
    "[Event \"x\"]\n[Result \"1-0\"]\n\n1. f3 e5 2. g4 Qh4# 1-0",
    "[FEN \"8/8/4k3/8/8/3K4/8/R7 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. Ra6+ Kd5 *",
    "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 5. Nf3 Nf6 6. Ng1 Ng8 7. Nf3 Nf6 8. Ng1 Ng8 9. Nf3 *",
    "1. e4 (1. d4 d5 (1... Nf6)) e5 {comment} $1 2. Qh5?? *",
    "[Event \"unterminated",
    "1. e4 e5 2. Ke2 Ke7 3. Kxe7 *",
    "{ never closed",
    "((((((((((((((((((((((((((((((",
];

/// A string that some code will find hard to swallow, as bytes (it may not be UTF-8).
fn hostile_text(rng: &mut Rng, typical: &[&str]) -> Vec<u8> {
    match rng.below(12) {
        0..=4 => rng.pick(typical).as_bytes().to_vec(),
        // Long: one character repeated, up to 20,000 bytes.
        5 => {
            let c = *rng.pick(b"Ne1/({\"\\ %");
            vec![c; 1 + rng.below(20_000)]
        }
        // Invalid UTF-8 bytes, alone or inside a plausible value.
        6 => {
            let mut v = rng.pick(typical).as_bytes().to_vec();
            const BAD: [&[u8]; 4] = [&[0xff], &[0xc3], &[0xed, 0xa0, 0x80], &[0xf8, 0x88]];
            let bad = *rng.pick(&BAD);
            let at = rng.below(v.len() + 1);
            v.splice(at..at, bad.iter().copied());
            v
        }
        // Random bytes.
        7 => (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
        // Multi-byte characters, many of them (the percent-encoded message triples them).
        8 => "♞é漢🂡".repeat(1 + rng.below(2_000)).into_bytes(),
        // A plausible value with control characters or a long tail.
        9 => {
            let mut v = rng.pick(typical).as_bytes().to_vec();
            v.extend(std::iter::repeat_n(b'\r', rng.below(50)));
            v.push(b'\n');
            v
        }
        // Many copies of a typical value (long PGN, long FEN-like text).
        10 => rng.pick(typical).repeat(1 + rng.below(500)).into_bytes(),
        _ => format!("{}{}", rng.pick(typical), rng.pick(typical)).into_bytes(),
    }
}

fn boundary_u64(rng: &mut Rng) -> u64 {
    *rng.pick(&[
        0,
        1,
        2,
        3,
        5,
        16,
        17,
        63,
        64,
        65,
        100,
        1000,
        1024,
        1025,
        u64::from(u16::MAX),
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        i64::MAX as u64,
        u64::MAX,
        1 << 53,
    ])
}

struct Ctx {
    /// Ids of real games, in the forms a client may write them.
    games: Vec<String>,
}

/// A value of `kind` for field `field`, appended to `out`.
fn value(rng: &mut Rng, ctx: &Ctx, out: &mut Vec<u8>, field: u32, kind: Kind, depth: usize) {
    match kind {
        Kind::Fen => put_bytes(out, field, &hostile_text(rng, FENS)),
        Kind::Move => put_bytes(out, field, &hostile_text(rng, MOVES)),
        Kind::Text => put_bytes(out, field, &hostile_text(rng, TEXTS)),
        Kind::Pgn => {
            if rng.chance(3) {
                // Over the gateway's 1 MiB PGN limit.
                let big = PGNS[0].repeat((1 << 20) / PGNS[0].len() + 2);
                put_bytes(out, field, big.as_bytes());
            } else {
                put_bytes(out, field, &hostile_text(rng, PGNS));
            }
        }
        Kind::GameId => {
            let id = rng.pick(&ctx.games).clone();
            let text = match rng.below(8) {
                0 => format!("{{{id}}}"),
                1 => format!("urn:uuid:{id}"),
                2 => id.to_uppercase(),
                3 => id.replace('-', ""),
                4 => String::from_utf8_lossy(&hostile_text(rng, TEXTS)).into_owned(),
                5 => "00000000-0000-0000-0000-000000000000".to_owned(),
                _ => id,
            };
            put_bytes(out, field, text.as_bytes());
        }
        Kind::U32 => {
            let v = if rng.chance(50) {
                rng.below(6) as u64
            } else {
                boundary_u64(rng)
            };
            put_varint(out, field, v);
        }
        Kind::U64 => {
            let v = if rng.chance(40) {
                rng.below(5_000) as u64
            } else {
                boundary_u64(rng)
            };
            put_varint(out, field, v);
        }
        Kind::Enum => {
            let v: i64 = *rng.pick(&[0, 1, 2, 3, -1, i64::from(i32::MAX), i64::from(i32::MIN)]);
            put_varint(out, field, v as u64);
        }
        Kind::Bool => put_varint(out, field, *rng.pick(&[0, 1, 1, 2, u64::MAX])),
        Kind::Msg(fields) => {
            let mut inner = Vec::new();
            message(rng, ctx, &mut inner, fields, depth + 1);
            put_bytes(out, field, &inner);
        }
        Kind::Repeated(item) => {
            let n = match rng.below(10) {
                0..=5 => rng.below(4),
                6..=7 => rng.below(40),
                8 => *rng.pick(&[64, 65, 100, 256, 1024, 1025]),
                _ => rng.below(3_000),
            };
            // Nested repeated messages stay small so one request stays under 4 MiB.
            let n = if depth > 0 || matches!(item, Kind::Msg(_)) {
                n.min(120)
            } else {
                n
            };
            for _ in 0..n {
                value(rng, ctx, out, field, *item, depth);
            }
        }
    }
}

/// Every field of a message (each present or not), in random order.
fn message(rng: &mut Rng, ctx: &Ctx, out: &mut Vec<u8>, fields: &[(u32, Kind)], depth: usize) {
    for &(field, kind) in fields {
        if depth > 3 || rng.chance(25) {
            continue;
        }
        value(rng, ctx, out, field, kind, depth);
        if rng.chance(5) {
            // The same field twice: the last one wins for scalars.
            value(rng, ctx, out, field, kind, depth);
        }
    }
}

/// Damage done to an encoded request, on top of hostile values.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) -> &'static str {
    match rng.below(20) {
        // Unknown field, random number and wire type.
        0 => {
            let field = 1 + (rng.next() % ((1 << 29) - 1)) as u32;
            match rng.below(4) {
                0 => put_varint(bytes, field, rng.next()),
                1 => put_bytes(bytes, field, &hostile_text(rng, TEXTS)),
                2 => {
                    key(bytes, field, 1);
                    bytes.extend_from_slice(&rng.next().to_le_bytes());
                }
                _ => {
                    key(bytes, field, 5);
                    bytes.extend_from_slice(&(rng.next() as u32).to_le_bytes());
                }
            }
            "unknown field"
        }
        // A known field number with the wrong wire type.
        1 => {
            put_varint(bytes, 1 + rng.below(5) as u32, rng.next());
            put_bytes(bytes, 3, &hostile_text(rng, TEXTS));
            "wrong wire type"
        }
        // Cut short.
        2 if !bytes.is_empty() => {
            bytes.truncate(rng.below(bytes.len()));
            "truncated"
        }
        // A byte changed.
        3 if !bytes.is_empty() => {
            let at = rng.below(bytes.len());
            bytes[at] = rng.next() as u8;
            "byte changed"
        }
        // Random bytes instead of a message.
        4 => {
            *bytes = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
            "random bytes"
        }
        // A length that runs past the end; a varint that never ends; a deprecated group.
        5 => {
            key(bytes, 1, 2);
            varint(bytes, 1 << 40);
            "length past the end"
        }
        6 => {
            bytes.extend_from_slice(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ]);
            "endless varint"
        }
        7 => {
            key(bytes, 9, 3);
            "unterminated group"
        }
        _ => "",
    }
}

// ---------------------------------------------------------------------------------------
// Sending, and judging the answers.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Gateway,
    Rules,
    Search,
}

#[derive(Debug, Default)]
struct Tally {
    sent: usize,
    codes: BTreeMap<String, usize>,
    /// Distinct findings (RPC, target, what) with a count and one example request.
    findings: BTreeMap<String, (usize, String)>,
}

impl Tally {
    fn finding(&mut self, what: String, example: String) {
        self.findings.entry(what).or_insert((0, example)).0 += 1;
    }
}

/// The bytes the status would take as response headers (names, values and HPACK's 32 bytes
/// of overhead per entry).
pub(crate) fn status_header_bytes(status: &Status) -> usize {
    let mut map = tonic::codegen::http::HeaderMap::new();
    match status.add_header(&mut map) {
        Ok(()) => map
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 32)
            .sum(),
        Err(_) => usize::MAX,
    }
}

fn metadata_bytes(md: &tonic::metadata::MetadataMap) -> usize {
    md.clone()
        .into_headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 32)
        .sum()
}

fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(160).collect();
    if cut.len() < text.len() {
        cut.push_str(&format!("... ({} bytes)", text.len()));
    }
    cut
}

struct Case {
    rpc: &'static Rpc,
    target: Target,
    body: Vec<u8>,
    mutation: &'static str,
    deadline: Duration,
}

impl Case {
    fn describe(&self) -> String {
        let shown: String = self
            .body
            .iter()
            .take(48)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!(
            "{} at {:?}, {} bytes [{shown}{}], mutation {:?}, deadline {:?}",
            self.rpc.path,
            self.target,
            self.body.len(),
            if self.body.len() > 48 { "..." } else { "" },
            self.mutation,
            self.deadline
        )
    }
}

fn make_case(rng: &mut Rng, ctx: &Ctx) -> Case {
    let rpc = rng.pick(RPCS);
    let target = match (rpc.backend, rng.below(5)) {
        (Backend::Rules, 0) => Target::Rules,
        (Backend::Search, 0) => Target::Search,
        _ => Target::Gateway,
    };
    let mut body = Vec::new();
    message(rng, ctx, &mut body, rpc.fields, 0);
    let mutation = mutate(rng, &mut body);
    // Searches run to the deadline at worst; keep them short so the run stays short.
    let deadline = if rpc.backend == Backend::Rules {
        Duration::from_millis(2_000)
    } else {
        Duration::from_millis(50 + rng.below(700) as u64)
    };
    Case {
        rpc,
        target,
        body,
        mutation,
        deadline,
    }
}

/// Sends one case and returns its code, or a finding.
async fn send(channel: Channel, case: &Case) -> Result<Code, String> {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(64 << 20);
    grpc.ready()
        .await
        .map_err(|e| format!("channel not ready: {e}"))?;
    let mut request = Request::new(case.body.clone());
    request.set_timeout(case.deadline);
    let path = PathAndQuery::from_static(case.rpc.path);
    let started = Instant::now();
    let result = if case.rpc.streaming {
        match grpc.server_streaming(request, path, Raw).await {
            Err(status) => Err(status),
            Ok(response) => {
                let md = metadata_bytes(response.metadata());
                if md > MAX_METADATA_BYTES {
                    return Err(format!("response metadata of {md} bytes"));
                }
                let mut stream = response.into_inner();
                // Read to the end or three messages. A watch never ends by itself: its
                // deadline must end it.
                let mut last = Ok(());
                for _ in 0..3 {
                    match stream.message().await {
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(status) => {
                            last = Err(status);
                            break;
                        }
                    }
                }
                last
            }
        }
    } else {
        match grpc.unary(request, path, Raw).await {
            Ok(response) => {
                let md = metadata_bytes(response.metadata());
                if md > MAX_METADATA_BYTES {
                    return Err(format!("response metadata of {md} bytes"));
                }
                Ok(())
            }
            Err(status) => Err(status),
        }
    };
    let status = match result {
        Ok(()) => return Ok(Code::Ok),
        Err(status) => status,
    };
    let bytes = status_header_bytes(&status);
    if bytes > MAX_METADATA_BYTES {
        return Err(format!(
            "{:?} with {bytes} bytes of metadata: {}",
            status.code(),
            short(status.message())
        ));
    }
    let past_deadline = started.elapsed() >= case.deadline;
    match status.code() {
        Code::InvalidArgument
        | Code::NotFound
        | Code::FailedPrecondition
        | Code::OutOfRange
        | Code::ResourceExhausted
        | Code::AlreadyExists
        | Code::Aborted
        | Code::DeadlineExceeded => Ok(status.code()),
        // The client's own deadline, reported by tonic as CANCELLED.
        Code::Cancelled if past_deadline => Ok(status.code()),
        code => Err(format!("{code:?}: {}", short(status.message()))),
    }
}

fn channel_to(service: &Service) -> Channel {
    Endpoint::from_shared(service.url())
        .expect("endpoint")
        .connect_timeout(Duration::from_secs(5))
        .connect_lazy()
}

// ---------------------------------------------------------------------------------------
// The stack and its vital signs.

fn rss_kib(service: &Service) -> u64 {
    let pid = service.child.as_ref().expect("running").id();
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// A metric's value summed over its label sets; 0 when absent.
pub(crate) fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The gauges that count work in progress, by process: all must be zero when idle.
const IDLE_GAUGES: &[&str] = &[
    "chess_grpc_server_in_flight",
    "chess_gateway_watchers",
    "chess_game_watchers",
    "chess_search_queue_depth",
    "chess_search_active_searches",
];

fn busy_gauges(service: &Service) -> Vec<String> {
    let text = service.scrape_metrics();
    IDLE_GAUGES
        .iter()
        .filter_map(|g| {
            let v = metric(&text, g);
            (v != 0.0).then(|| format!("{} {g} = {v}", service.name))
        })
        .collect()
}

pub(crate) fn search_service(dir: &TempDir) -> Service {
    Service::start(
        "chess-search-service",
        &[
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--queue",
            "8",
            "--hash-mb",
            "8",
        ],
        &[],
        &dir.0,
    )
}

async fn create_games(gateway: &Channel) -> Vec<String> {
    use chess_proto::v1::game_service_client::GameServiceClient;
    use chess_proto::v1::{CreateGameRequest, MakeMoveRequest};
    let mut games = GameServiceClient::new(gateway.clone());
    let mut ids = Vec::new();
    for (moves, control) in [
        (&[][..], ""),
        (&["e4", "e5", "Nf3"][..], "5+3"),
        (&["f3", "e5", "g4", "Qh4#"][..], ""),
    ] {
        let id = games
            .create_game(CreateGameRequest {
                time_control_text: control.to_owned(),
                ..CreateGameRequest::default()
            })
            .await
            .expect("create game")
            .into_inner()
            .game_id;
        for m in moves {
            games
                .make_move(MakeMoveRequest {
                    game_id: id.clone(),
                    r#move: (*m).to_owned(),
                    ..MakeMoveRequest::default()
                })
                .await
                .expect("move");
        }
        ids.push(id);
    }
    ids
}

/// A rules service, two search replicas and a gateway in front of them (open auth, no rate
/// limit unless `gateway_args` set one).
#[derive(Debug)]
pub(crate) struct Replicated {
    pub gateway: Service,
    pub rules: Service,
    pub searches: [Service; 2],
    /// Holds the logs and the store; removed on drop.
    pub _dir: TempDir,
}

impl Replicated {
    pub fn start(gateway_args: &[&str], gateway_env: &[(&str, &str)]) -> Replicated {
        let dir = TempDir::new("replicated");
        let data = dir.0.join("data");
        let rules = Service::start(
            "chess-rules-service",
            &[
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                data.to_str().expect("utf-8 path"),
            ],
            &[],
            &dir.0,
        );
        let searches = [search_service(&dir), search_service(&dir)];
        let rules_url = rules.url();
        let search_urls: Vec<String> = searches.iter().map(Service::url).collect();
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--rules-addr",
            &rules_url,
            "--rate-limit",
            "0",
        ];
        for url in &search_urls {
            args.extend(["--search-addr", url.as_str()]);
        }
        args.extend_from_slice(gateway_args);
        let gateway = Service::start("chess-gateway", &args, gateway_env, &dir.0);
        Replicated {
            gateway,
            rules,
            searches,
            _dir: dir,
        }
    }

    /// Search replicas the gateway has in rotation, and ejections so far.
    pub fn rotation(&self) -> (f64, f64) {
        let text = self.gateway.scrape_metrics();
        (
            metric(&text, "chess_gateway_search_replicas_healthy"),
            metric(&text, "chess_gateway_search_ejections_total"),
        )
    }
}

#[test]
fn hostile_requests_to_every_rpc_leave_the_stack_healthy() {
    let seed: u64 = std::env::var("CHESS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x005e_ed15);
    let requests: usize = std::env::var("CHESS_FUZZ_REQUESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(REQUESTS);

    let stack = Replicated::start(&[], &[]);
    let Replicated {
        gateway,
        rules,
        searches,
        ..
    } = &stack;
    let processes = [gateway, rules, &searches[0], &searches[1]];

    let rt = runtime();
    rt.block_on(async {
        let gw = channel_to(gateway);
        let ids = create_games(&gw).await;
        let healthy_before = metric(
            &gateway.scrape_metrics(),
            "chess_gateway_search_replicas_healthy",
        );
        assert_eq!(healthy_before, 2.0, "both replicas in rotation at the start");
        let rss_before: Vec<u64> = processes.iter().map(|p| rss_kib(p)).collect();

        let ctx = Arc::new(Ctx { games: ids });
        let channels = Arc::new([
            (Target::Gateway, gw.clone()),
            (Target::Rules, channel_to(rules)),
            (Target::Search, channel_to(&searches[0])),
        ]);
        let tally = Arc::new(Mutex::new(Tally::default()));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for worker in 0..CONCURRENCY {
            let (ctx, channels, tally) = (ctx.clone(), channels.clone(), tally.clone());
            let mut rng = Rng(seed ^ (worker as u64).wrapping_mul(0x9e37_79b9));
            let count = requests / CONCURRENCY + usize::from(worker < requests % CONCURRENCY);
            tasks.push(tokio::spawn(async move {
                for _ in 0..count {
                    let case = make_case(&mut rng, &ctx);
                    let channel = channels
                        .iter()
                        .find(|(t, _)| *t == case.target)
                        .map(|(_, c)| c.clone())
                        .expect("channel");
                    let limit = case.deadline + HANG_MARGIN;
                    let outcome = match tokio::time::timeout(limit, send(channel, &case)).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(format!("no answer within {limit:?}")),
                    };
                    let mut t = tally.lock().unwrap();
                    t.sent += 1;
                    match outcome {
                        Ok(code) => *t.codes.entry(format!("{code:?}")).or_default() += 1,
                        Err(what) => {
                            *t.codes.entry("finding".to_owned()).or_default() += 1;
                            // One entry per kind of finding: numbers (ports, sizes,
                            // offsets) do not tell findings apart.
                            let what: String = what
                                .chars()
                                .filter(|c| !c.is_ascii_digit())
                                .take(120)
                                .collect();
                            let key = format!("{} at {:?}: {what}", case.rpc.path, case.target);
                            t.finding(key, case.describe());
                        }
                    }
                }
            }));
        }
        for task in tasks {
            task.await.expect("fuzz task");
        }
        let elapsed = started.elapsed();
        let tally = Arc::try_unwrap(tally).unwrap().into_inner().unwrap();
        println!(
            "fuzz: {} requests (seed {seed:#x}) in {:.1} s; answers by code: {:?}",
            tally.sent,
            elapsed.as_secs_f64(),
            tally.codes
        );
        for (what, (count, example)) in &tally.findings {
            println!("FINDING x{count}: {what}\n    e.g. {example}");
        }

        // Vital signs: in rotation, idle, bounded.
        let gauges_deadline = Instant::now() + Duration::from_secs(15);
        let mut busy: Vec<String>;
        loop {
            busy = processes.iter().flat_map(|p| busy_gauges(p)).collect();
            if busy.is_empty() || Instant::now() > gauges_deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let gateway_metrics = gateway.scrape_metrics();
        let healthy_after = metric(&gateway_metrics, "chess_gateway_search_replicas_healthy");
        let ejections = metric(&gateway_metrics, "chess_gateway_search_ejections_total");
        let rss_after: Vec<u64> = processes.iter().map(|p| rss_kib(p)).collect();
        for ((p, before), after) in processes.iter().zip(&rss_before).zip(&rss_after) {
            println!("fuzz: {} RSS {before} KiB -> {after} KiB", p.name);
        }
        println!("fuzz: replicas healthy {healthy_before} -> {healthy_after}, ejections {ejections}");

        let mut problems: Vec<String> = tally
            .findings
            .iter()
            .map(|(what, (count, _))| format!("{count} x {what}"))
            .collect();
        if healthy_after != healthy_before || ejections != 0.0 {
            problems.push(format!(
                "search replicas in rotation {healthy_before} -> {healthy_after}, {ejections} ejections"
            ));
        }
        problems.extend(busy.into_iter().map(|b| format!("gauge not back to zero: {b}")));
        for ((p, before), after) in processes.iter().zip(&rss_before).zip(&rss_after) {
            if after.saturating_sub(*before) > MAX_RSS_GROWTH_KIB {
                problems.push(format!("{} grew from {before} KiB to {after} KiB", p.name));
            }
        }
        assert_eq!(tally.sent, requests, "every request sent");
        let shown = problems.len().min(40);
        assert!(
            problems.is_empty(),
            "{} problem(s) after {} hostile requests:\n{}{}\n(stderr of the gateway:\n{})",
            problems.len(),
            tally.sent,
            problems[..shown].join("\n"),
            if shown < problems.len() { "\n..." } else { "" },
            short_log(&gateway.stderr())
        );
    });
}

fn short_log(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
