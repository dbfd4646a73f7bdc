//! The hand-written evaluation's properties.

use super::*;

fn eval(fen: &str) -> i32 {
    HandEval::default().evaluate(&Position::from_fen(fen).unwrap())
}

#[test]
fn symmetric_under_mirroring() {
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 b - - 0 9",
        "8/8/4k3/8/8/3BN3/8/4K3 w - - 0 1",
        "6k1/5ppp/8/8/8/8/2b2PPP/3B2K1 b - - 0 1",
    ];
    let mut e = HandEval::default();
    for fen in fens {
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(e.evaluate(&pos), e.evaluate(&pos.mirrored()), "{fen}");
    }
}

#[test]
fn material_matters() {
    // White a queen up.
    assert!(eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") > 700);
    assert!(eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1") < -700);
}

#[test]
fn insufficient_material_is_zero() {
    assert_eq!(eval("8/8/4k3/8/8/3B4/8/4K3 w - - 0 1"), 0);
    assert_eq!(eval("8/8/4k3/8/8/3N4/8/4K3 b - - 0 1"), 0);
    // Two knights cannot force mate.
    assert_eq!(eval("8/8/4k3/8/8/3NN3/8/4K3 w - - 0 1"), 0);
}

#[test]
fn lone_king_is_driven_to_the_edge() {
    let centre = eval("8/8/8/3k4/8/8/8/R3K3 w - - 0 1");
    let edge = eval("3k4/8/8/8/8/8/8/R3K3 w - - 0 1");
    assert!(edge > centre && centre > 500, "{edge} {centre}");
}

#[test]
fn kbn_prefers_the_bishop_coloured_corner() {
    // Dark-squared bishop (c1): a1 and h8 are the mating corners.
    let right = eval("7k/8/5K2/8/8/8/8/2B1N3 w - - 0 1");
    let wrong = eval("k7/8/2K5/8/8/8/8/2B1N3 w - - 0 1");
    assert!(right > wrong, "{right} {wrong}");
}

#[test]
fn opposite_bishops_are_drawish() {
    // White three pawns up; bishops d3 (light) v d6 (dark) or e6 (light).
    let ocb = eval("6k1/8/3b4/8/8/3B4/5PPP/6K1 w - - 0 1");
    let scb = eval("6k1/8/4b3/8/8/3B4/5PPP/6K1 w - - 0 1");
    assert!(ocb > 0 && ocb < scb, "{ocb} {scb}");
}

#[test]
fn passed_pawns_count() {
    let passer = eval("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1");
    let blocked = eval("4k3/8/3p4/3P4/8/8/8/4K3 w - - 0 1");
    assert!(passer > 100, "{passer}");
    assert!(blocked.abs() < 60, "{blocked}");
}
