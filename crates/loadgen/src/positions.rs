//! The positions requests are about: a built-in set of openings, middlegames and endgames, or
//! a FEN/EPD/PGN file.

use std::collections::HashSet;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chess_rules::Position;
use clap::Args;

use crate::failure::Failure;

/// The flags of `chess-loadgen positions`.
#[derive(Debug, Args)]
pub struct PositionsArgs {
    /// A FEN, EPD or PGN file; the built-in set without it.
    #[arg(long, value_name = "FILE")]
    pub positions: Option<PathBuf>,
}

/// The built-in set: (phase, FEN). Varied on purpose: quiet and tactical, open and closed,
/// castling and en passant available, promotions near, few and many pieces, so that analysis
/// times spread the way real traffic does. No position is over (every side to move has a move).
const BUILT_IN: &[(&str, &str)] = &[
    // Openings
    (
        "opening",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ),
    (
        "opening",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    ),
    (
        "opening",
        "rnbqkbnr/pp2pppp/3p4/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3",
    ),
    (
        "opening",
        "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
    ),
    (
        "opening",
        "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
    ),
    (
        "opening",
        "rnbqkbnr/ppp2ppp/4p3/3p4/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3",
    ),
    (
        "opening",
        "rnbqkbnr/pp2pppp/2p5/3p4/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3",
    ),
    (
        "opening",
        "rnbqkbnr/ppp2ppp/4p3/3p4/2PP4/8/PP2PPPP/RNBQKBNR w KQkq - 0 3",
    ),
    (
        "opening",
        "rnbqk2r/ppp1ppbp/3p1np1/8/2PPP3/2N5/PP3PPP/R1BQKBNR w KQkq - 0 5",
    ),
    (
        "opening",
        "rnbqkbnr/pppp1ppp/8/4p3/2P5/8/PP1PPPPP/RNBQKBNR w KQkq - 0 2",
    ),
    (
        "opening",
        "rnb1kbnr/ppp1pppp/8/q7/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 4",
    ),
    (
        "opening",
        "rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6",
    ),
    (
        "opening",
        "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
    ),
    (
        "opening",
        "rnbqkbnr/ppppp1pp/8/5p2/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
    ),
    (
        "opening",
        "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    ),
    (
        "opening",
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    ),
    (
        "opening",
        "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 7",
    ),
    // Middlegames
    (
        "middlegame",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    ),
    (
        "middlegame",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    ),
    (
        "middlegame",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    ),
    (
        "middlegame",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    ),
    (
        "middlegame",
        "r1bq1rk1/pp2bppp/2n1pn2/2pp4/2PP4/2N1PN2/PP2BPPP/R1BQ1RK1 w - - 0 8",
    ),
    (
        "middlegame",
        "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
    ),
    (
        "middlegame",
        "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 w - - 0 10",
    ),
    (
        "middlegame",
        "2kr1b1r/ppp2ppp/2n1bn2/4q3/8/2N2N2/PPPBBPPP/R2QK2R w KQ - 4 9",
    ),
    (
        "middlegame",
        "rn1qkb1r/4pp1p/3p1np1/2pP4/4P3/2N5/PP3PPP/R1BQKBNR w KQkq - 0 8",
    ),
    (
        "middlegame",
        "r1bqkb1r/pp1n1ppp/2n1p3/2ppP3/3P1P2/2N5/PPP3PP/R1BQKBNR w KQkq - 1 6",
    ),
    (
        "middlegame",
        "r2q1rk1/1b1nbppp/pp1ppn2/8/2P1P3/1PN2NP1/P2Q1PBP/R2R2K1 w - - 0 13",
    ),
    (
        "middlegame",
        "r4rk1/pp3ppp/2p5/3pPb2/3P1q2/2PB4/P1Q2PPP/R4RK1 w - - 0 17",
    ),
    (
        "middlegame",
        "r2qr1k1/1ppb1pbp/np1p2p1/3Pn3/2P1P3/2N1BP2/PP1QN1PP/R3KB1R w KQ - 1 12",
    ),
    (
        "middlegame",
        "3r2k1/5ppp/p3q3/1p6/3Q4/P5P1/1P3P1P/3R2K1 w - - 0 28",
    ),
    (
        "middlegame",
        "2r3k1/pp3ppp/4pn2/8/3P4/2B2N2/PP3PPP/2R3K1 w - - 0 20",
    ),
    (
        "middlegame",
        "rnbqkb1r/pp1p1ppp/2p5/4P3/2B5/8/PPP1NnPP/RNBQK2R w KQkq - 0 6",
    ),
    ("middlegame", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
    // Endgames
    ("endgame", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    ("endgame", "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1"),
    ("endgame", "4k3/8/r7/4PK2/8/8/8/1R6 b - - 0 1"),
    ("endgame", "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"),
    ("endgame", "8/8/8/8/4k3/8/8/K1Q5 w - - 0 1"),
    ("endgame", "8/8/8/4k3/8/8/8/R3K3 w - - 0 1"),
    ("endgame", "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1"),
    ("endgame", "8/5pk1/6p1/3n4/8/6P1/5PK1/2B5 w - - 0 40"),
    ("endgame", "8/5pk1/6p1/7p/r7/5PP1/5K1P/R7 w - - 0 45"),
    ("endgame", "8/8/4k3/8/2q5/8/5PK1/3Q4 w - - 0 60"),
    ("endgame", "7k/8/6KP/8/8/3B4/8/8 w - - 0 1"),
    ("endgame", "8/6pk/8/8/8/8/P7/K7 w - - 0 1"),
    ("endgame", "7k/5Q2/8/6K1/8/8/8/8 w - - 0 1"),
    ("endgame", "8/4k3/3n4/8/3N4/4K3/4P3/8 w - - 0 1"),
    ("endgame", "8/8/8/4k3/8/8/8/4KBN1 w - - 0 1"),
    ("endgame", "2r3k1/1P3ppp/8/8/8/8/5PPP/6K1 w - - 0 1"),
    (
        "endgame",
        "8/pp3pk1/2p3p1/3p4/3P4/2P3P1/PP3PK1/8 w - - 0 30",
    ),
];

/// A position with its normalised FEN.
#[derive(Clone, Debug)]
pub struct Spot {
    pub fen: String,
    pub position: Position,
}

/// The positions of a run and where they came from.
#[derive(Clone, Debug)]
pub struct PositionSet {
    pub source: String,
    pub spots: Vec<Spot>,
}

/// Most positions kept from a file.
const MAX_POSITIONS: usize = 100_000;

impl PositionSet {
    pub fn built_in() -> PositionSet {
        let spots = BUILT_IN
            .iter()
            .map(|(_, fen)| {
                let position = Position::from_fen(fen).expect("the built-in FENs are checked");
                Spot {
                    fen: position.fen(),
                    position,
                }
            })
            .collect();
        PositionSet {
            source: "built-in".to_owned(),
            spots,
        }
    }

    /// A FEN or EPD file (one position a line; `#` starts a comment line), or PGN (by the
    /// extension `.pgn`, or text that starts with a tag or a move number): every position of
    /// every game's mainline where the side to move has a move, each once.
    fn from_file(path: &Path) -> Result<PositionSet, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let is_pgn = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("pgn"))
            || looks_like_pgn(&text);
        let spots = if is_pgn {
            read_pgn(&text).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            read_fen_lines(&text).map_err(|e| format!("{}: {e}", path.display()))?
        };
        if spots.is_empty() {
            return Err(format!(
                "{}: no usable position (every one is over, or the file is empty)",
                path.display()
            ));
        }
        Ok(PositionSet {
            source: path.display().to_string(),
            spots,
        })
    }

    pub fn load(path: Option<&Path>) -> Result<PositionSet, String> {
        match path {
            None => Ok(PositionSet::built_in()),
            Some(p) => PositionSet::from_file(p),
        }
    }

    /// The position of request number `seq`: the set in order, round and round.
    pub fn get(&self, seq: u64) -> &Spot {
        &self.spots[(seq % self.spots.len() as u64) as usize]
    }
}

/// A tag pair or a move number (`1.`) first: PGN; a FEN starts with a rank (`8/`, `rnbq`).
fn looks_like_pgn(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('[') {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t.as_bytes().get(digits) == Some(&b'.')
}

/// One FEN or EPD per line. EPD has four fields and then operations (`bm e4; id "x";`);
/// a FEN has six. Missing counters read as `0 1`.
fn read_fen_lines(text: &str) -> Result<Vec<Spot>, String> {
    let mut seen = HashSet::new();
    let mut spots = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            return Err(format!(
                "line {}: {line:?} is not a FEN or EPD (it needs at least 4 fields)",
                i + 1
            ));
        }
        let counters = match (fields.get(4), fields.get(5)) {
            (Some(h), Some(f)) if h.parse::<u32>().is_ok() && f.parse::<u32>().is_ok() => {
                format!("{h} {f}")
            }
            _ => "0 1".to_owned(),
        };
        let fen = format!("{} {counters}", fields[..4].join(" "));
        let position =
            Position::from_fen(&fen).map_err(|e| format!("line {}: {fen:?}: {e}", i + 1))?;
        push(&mut spots, &mut seen, position);
        if spots.len() >= MAX_POSITIONS {
            break;
        }
    }
    Ok(spots)
}

fn read_pgn(text: &str) -> Result<Vec<Spot>, String> {
    let mut seen = HashSet::new();
    let mut spots = Vec::new();
    let mut games = 0;
    let mut first_error = None;
    for game in chess_pgn::read_games(BufReader::new(text.as_bytes())) {
        let game = match game {
            Ok(g) => g,
            Err(e) => {
                first_error.get_or_insert_with(|| e.to_string());
                continue;
            }
        };
        games += 1;
        let mut pos = game.start.clone();
        push(&mut spots, &mut seen, pos.clone());
        for m in game.mainline() {
            pos.play_unchecked(m);
            push(&mut spots, &mut seen, pos.clone());
        }
        if spots.len() >= MAX_POSITIONS {
            break;
        }
    }
    if games == 0 {
        return Err(match first_error {
            Some(e) => format!("no valid game: {e}"),
            None => "no game in the PGN".to_owned(),
        });
    }
    Ok(spots)
}

/// Keeps positions with a move to make, each once.
fn push(spots: &mut Vec<Spot>, seen: &mut HashSet<String>, position: Position) {
    if !position.has_legal_moves() {
        return;
    }
    let fen = position.fen();
    if seen.insert(fen.clone()) {
        spots.push(Spot { fen, position });
    }
}

/// `chess-loadgen positions`.
pub fn main(args: &PositionsArgs) -> Result<ExitCode, Failure> {
    let set = PositionSet::load(args.positions.as_deref()).map_err(Failure::Usage)?;
    for spot in &set.spots {
        println!("{}", spot.fen);
    }
    eprintln!("{} positions from {}", set.spots.len(), set.source);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_position_is_valid_and_playable() {
        assert!(BUILT_IN.len() >= 50, "{}", BUILT_IN.len());
        let mut seen = HashSet::new();
        for (phase, fen) in BUILT_IN {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert!(pos.has_legal_moves(), "{fen} is over");
            assert!(
                ["opening", "middlegame", "endgame"].contains(phase),
                "{phase}"
            );
            assert!(seen.insert(pos.fen()), "{fen} twice");
        }
        for phase in ["opening", "middlegame", "endgame"] {
            let n = BUILT_IN.iter().filter(|(p, _)| *p == phase).count();
            assert!(n >= 15, "{n} {phase} positions");
        }
        assert_eq!(PositionSet::built_in().spots.len(), BUILT_IN.len());
    }

    #[test]
    fn reads_fen_and_epd_lines() {
        let text = "# a comment\n\
                    rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
                    \n\
                    r3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm O-O; id \"castles\";\n\
                    7k/5Q2/6K1/8/8/8/8/8 b - -\n";
        let spots = read_fen_lines(text).unwrap();
        // The stalemate is left out.
        assert_eq!(spots.len(), 2);
        assert_eq!(spots[1].fen, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let err = read_fen_lines("8/8/8/8 w\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = read_fen_lines("\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNQ w KQkq - 0 1")
            .unwrap_err();
        assert!(err.starts_with("line 2"), "{err}");
    }

    #[test]
    fn takes_every_mainline_position_from_pgn() {
        let pgn = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                   1. d4 d5 *\n";
        let spots = read_pgn(pgn).unwrap();
        // Game 1: the 7 positions before the mate (the mate is left out); game 2 shares the
        // start position and adds two.
        assert_eq!(spots.len(), 7 + 2);
        assert!(read_pgn("1. e4 e4 *\n").is_err());
        assert!(looks_like_pgn("1. e4 *"));
        assert!(looks_like_pgn("\n[Event \"x\"]"));
        assert!(!looks_like_pgn("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"));
    }
}
