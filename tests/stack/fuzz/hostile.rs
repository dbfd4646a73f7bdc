//! Hostile values: protobuf fields written by hand (any field number, wire type and value),
//! strings hard to swallow, boundary numbers, and damage done to a whole message.

use chess_integration_tests::rng::Rng;

use super::schema::Kind;

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
        7 => (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect(),
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

pub(super) struct Ctx {
    /// Ids of real games, in the forms a client may write them.
    pub games: Vec<String>,
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
pub(super) fn message(
    rng: &mut Rng,
    ctx: &Ctx,
    out: &mut Vec<u8>,
    fields: &[(u32, Kind)],
    depth: usize,
) {
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
pub(super) fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) -> &'static str {
    match rng.below(20) {
        // Unknown field, random number and wire type.
        0 => {
            let field = 1 + (rng.next_u64() % ((1 << 29) - 1)) as u32;
            match rng.below(4) {
                0 => put_varint(bytes, field, rng.next_u64()),
                1 => put_bytes(bytes, field, &hostile_text(rng, TEXTS)),
                2 => {
                    key(bytes, field, 1);
                    bytes.extend_from_slice(&rng.next_u64().to_le_bytes());
                }
                _ => {
                    key(bytes, field, 5);
                    bytes.extend_from_slice(&(rng.next_u64() as u32).to_le_bytes());
                }
            }
            "unknown field"
        }
        // A known field number with the wrong wire type.
        1 => {
            put_varint(bytes, 1 + rng.below(5) as u32, rng.next_u64());
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
            bytes[at] = rng.next_u64() as u8;
            "byte changed"
        }
        // Random bytes instead of a message.
        4 => {
            *bytes = (0..rng.below(300)).map(|_| rng.next_u64() as u8).collect();
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
