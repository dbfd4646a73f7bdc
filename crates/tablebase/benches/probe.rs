//! WDL probe speed: `cargo bench -p chess-tablebase --bench probe`.
//!
//! Generates (or reuses) the 3-piece tables and KQvKR, KRvKP, KPvKP under the target folder,
//! then probes a fixed pseudo-random list of legal positions and prints ns per probe. The
//! checksum of the answers is asserted against a second, independent pass, so a fast wrong
//! probe cannot pass.

use std::path::PathBuf;
use std::time::Instant;

use chess_rules::{Color, Piece, Position, Role, Setup, Square};
use chess_tablebase::{GenerateOptions, Material, Tablebase, Wdl, generate_endings};

fn random_positions(n: usize, endings: &[(&[Role], &[Role])]) -> Vec<Position> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    while out.len() < n {
        let (white, black) = endings[(next() % endings.len() as u64) as usize];
        let mut setup = Setup::empty();
        setup.turn = if next() % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        let mut ok = true;
        for (color, roles) in [(Color::White, white), (Color::Black, black)] {
            for &role in std::iter::once(&Role::King).chain(roles.iter()) {
                let sq = Square::new((next() % 64) as u32);
                ok &= setup.piece_at(sq).is_none();
                setup.put(sq, Piece::new(color, role));
            }
        }
        if let (true, Ok(pos)) = (ok, Position::from_setup(&setup)) {
            out.push(pos);
        }
    }
    out
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()))
        .join("tb-bench");
    let endings: Vec<Material> = ["KQvKR", "KRvKP", "KPvKP"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let opts = GenerateOptions {
        progress: true,
        ..GenerateOptions::default()
    };
    generate_endings(&endings, &dir, &opts).unwrap();
    let tb = Tablebase::open_dir(&dir).unwrap();
    use Role::*;
    let mix: &[(&[Role], &[Role])] = &[
        (&[Queen], &[]),
        (&[Pawn], &[]),
        (&[Queen], &[Rook]),
        (&[Rook], &[Pawn]),
        (&[Pawn], &[Pawn]),
    ];
    let positions = random_positions(100_000, mix);
    let tally = |tb: &Tablebase| {
        let mut counts = [0u64; 3];
        for p in &positions {
            let w = tb.probe_wdl(p).unwrap();
            counts[match w {
                Wdl::Loss => 0,
                Wdl::Draw => 1,
                Wdl::Win => 2,
            }] += 1;
        }
        counts
    };
    let reference: [u64; 3] = {
        let mut c = [0u64; 3];
        for p in &positions {
            c[match tb.probe_dtm(p).unwrap().wdl() {
                Wdl::Loss => 0,
                Wdl::Draw => 1,
                Wdl::Win => 2,
            }] += 1;
        }
        c
    };
    let rounds = 5;
    let start = Instant::now();
    for _ in 0..rounds {
        assert_eq!(std::hint::black_box(tally(&tb)), reference);
    }
    let ns = start.elapsed().as_nanos() as f64 / (rounds * positions.len()) as f64;
    println!(
        "probe_wdl: {ns:.0} ns/probe over {} positions x {rounds} (loss/draw/win {reference:?})",
        positions.len()
    );
}
