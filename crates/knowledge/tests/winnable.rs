//! The unwinnability analysis: positions of each class, every proof replayed through the
//! rules, and random positions that must neither panic nor overrun their budget.

use chess_knowledge::{Verdict, WinnableBudget, proves_mate, winnability, winnable};
use chess_rules::{Color, Position};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Both verdicts in full mode, each winnable proof checked by replaying it.
fn code(fen: &str) -> (String, Vec<String>) {
    let p = pos(fen);
    let both = winnability(&p, &WinnableBudget::full());
    let mut reasons = Vec::new();
    for a in [&both.white, &both.black] {
        match &a.verdict {
            Verdict::Winnable { line } => {
                assert!(proves_mate(&p, a.winner, line), "{fen}: bad proof {line:?}")
            }
            Verdict::Unwinnable { reason } => reasons.push(reason.clone()),
            Verdict::Undetermined => {}
        }
    }
    (both.code(), reasons)
}

#[test]
fn locked_wall_with_bishops_of_one_colour() {
    // The light-squared bishop is on the black king's side of the wall: it can check, never
    // mate, for the dark escape squares stay free.
    let (c, reasons) = code("k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1");
    assert_eq!(c, "--");
    assert!(reasons[0].contains("bishop on light squares, cannot attack a dark square"));
    assert!(reasons[0].contains("locked"));
    // A dark-squared bishop behind the wall never even checks.
    let (c, reasons) = code("4k3/8/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/2B1K3 w - - 0 1");
    assert_eq!(c, "--");
    assert!(reasons[0].contains("can never give check"), "{reasons:?}");
}

#[test]
fn locked_wall_with_a_way_in_is_not_dead() {
    // The same wall, but the bishop is light-squared behind it and can take a pawn: the wall
    // opens, and White can win.
    let (c, _) = code("4k3/8/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/4KB2 w - - 0 1");
    assert_eq!(&c[..1], "W");
}

#[test]
fn kings_shut_in_behind_their_own_pawns() {
    // White's king is shut in on the first two ranks by the locked wall, and White has
    // nothing else: Black's dark-squared bishop can neither come in nor take a pawn (all on
    // light squares), so it can never even give check.
    let (c, reasons) = code("4k3/8/1b6/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1");
    assert_eq!(c, "--", "{reasons:?}");
}

#[test]
fn dead_by_material() {
    for fen in [
        "8/8/8/2k5/8/8/3KB3/8 w - - 0 1",
        "8/8/8/2k5/8/8/3KN3/8 b - - 0 1",
        "8/8/8/2k5/8/3b4/3KB3/8 w - - 0 1",
        "8/8/8/2k5/8/8/3K4/8 w - - 0 1",
        "b7/8/8/2k5/8/3b4/3KB1B1/8 w - - 0 1",
    ] {
        assert_eq!(code(fen).0, "--", "{fen}");
    }
    // A bishop against a rook or queen: the rook's side can mate, the bishop's never.
    for fen in [
        "8/8/8/6r1/7K/8/3kB3/8 w - - 0 1",
        "8/8/2B5/8/q6K/8/1k6/8 w - - 0 1",
        "8/8/2B5/q7/7K/8/1k4r1/8 b - - 0 1",
    ] {
        let (c, reasons) = code(fen);
        assert_eq!(c, "-B", "{fen}");
        assert!(reasons[0].contains("only a bishop against rooks and queens"));
    }
    // With a knight to block instead, the bishop's side can mate.
    assert_eq!(code("8/8/8/6n1/7K/8/3kB3/8 w - - 0 1").0, "WB");
}

#[test]
fn looks_dead_but_hides_a_helpmate() {
    for (fen, want) in [
        // Opposite-coloured bishops: the loser's bishop blocks its own king in a corner.
        ("8/8/8/2k5/8/2b5/3KB3/8 w - - 0 1", "WB"),
        // Knight against bishop: the bishop blocks.
        ("8/8/8/2k5/8/2n5/3KB3/8 w - - 0 1", "WB"),
        // A knight and a pawn that is blocked: the knight takes on h7 and the pawn goes on.
        ("7k/7p/7P/8/8/8/8/1N2K3 w - - 0 1", "WB"),
        // Two knights against a bare king mate only with help.
        ("8/8/8/2k5/8/8/3KNN2/8 w - - 0 1", "W-"),
        // A knight against a pawn: the pawn promotes to a blocker.
        ("8/8/8/2k5/4p3/8/3K1N2/8 w - - 0 1", "WB"),
    ] {
        assert_eq!(code(fen).0, want, "{fen}");
    }
}

#[test]
fn every_reachable_position_searched() {
    // White's king and rook are shut in on the h-file behind their own pawns (the rook can
    // never pass the king), Black has a blocked pawn: no static argument applies, since the
    // h-pawn can still move, but the reachable positions are few, and none is a mate.
    let fen = "k7/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1";
    let (c, reasons) = code(fen);
    assert_eq!(c, "--", "{reasons:?}");
    assert!(
        reasons[0].contains("every position reachable"),
        "{reasons:?}"
    );
    // With the rook outside the pocket it mates, with help.
    assert_eq!(&code("k7/6p1/6P1/6PK/6P1/6P1/7P/7R w - - 0 1").0[..1], "W");
    // Quick mode, run after every move, does not search that far.
    let quick = winnability(&pos(fen), &WinnableBudget::quick());
    assert!(!quick.is_dead());
}

#[test]
fn the_game_already_over() {
    let mated = pos("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    let both = winnability(&mated, &WinnableBudget::quick());
    assert_eq!(both.black.verdict, Verdict::Winnable { line: vec![] });
    assert!(both.white.verdict.is_unwinnable());
    let stalemate = pos("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert!(winnability(&stalemate, &WinnableBudget::quick()).is_dead());
}

#[test]
fn quick_mode_decides_the_dead_classes() {
    for fen in [
        "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1",
        "8/8/8/2k5/8/8/3KB3/8 w - - 0 1",
    ] {
        let both = winnability(&pos(fen), &WinnableBudget::quick());
        assert!(both.is_dead(), "{fen}: {}", both.code());
        assert!(both.dead_reason().is_some());
    }
}

/// A small reproducible generator, so that failures can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Positions from seeded random games, sampled along the way.
fn random_positions(seed: u64, games: usize) -> Vec<Position> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut p = Position::startpos();
        for ply in 0..400 {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.below(moves.len())];
            p.play_unchecked(m);
            if ply % 37 == 36 {
                out.push(p.clone());
            }
        }
        out.push(p);
    }
    out
}

#[test]
fn every_proof_is_legal_and_mates_and_no_answer_contradicts_material() {
    let limits = WinnableBudget::full().with_nodes(20_000);
    for p in random_positions(0x5eed_1234_abcd_0001, 40) {
        for c in Color::ALL {
            let a = winnable(&p, c, &limits);
            assert!(a.nodes <= limits.nodes, "{}: {} nodes", p.fen(), a.nodes);
            match &a.verdict {
                Verdict::Winnable { line } => {
                    assert!(proves_mate(&p, c, line), "{}: {line:?}", p.fen());
                    assert!(p.can_possibly_mate(c), "{}", p.fen());
                }
                Verdict::Unwinnable { .. } => {
                    // Nothing the search can find may contradict a proof of unwinnability.
                    let q = winnable(&p, c, &WinnableBudget::quick().with_nodes(5_000));
                    assert!(!q.verdict.is_winnable(), "{}", p.fen());
                }
                Verdict::Undetermined => {}
            }
        }
    }
}

/// The FEN of a board given square by square (a1 = 0), without castling or en passant.
fn board_fen(board: &[Option<char>; 64], white_to_move: bool) -> String {
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                Some(c) => {
                    if empty > 0 {
                        fen.push_str(&empty.to_string());
                        empty = 0;
                    }
                    fen.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push_str(&empty.to_string());
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen.push_str(if white_to_move {
        " w - - 0 1"
    } else {
        " b - - 0 1"
    });
    fen
}

#[test]
fn random_positions_never_panic_nor_overrun_the_budget() {
    let mut rng = Rng(0xfeed_beef_0042_0007);
    let letters = ['P', 'N', 'B', 'R', 'Q', 'p', 'n', 'b', 'r', 'q'];
    let mut checked = 0;
    for _ in 0..3000 {
        let mut board = [None; 64];
        let wk = rng.below(64);
        let bk = rng.below(64);
        if wk == bk {
            continue;
        }
        board[wk] = Some('K');
        board[bk] = Some('k');
        for _ in 0..rng.below(10) {
            board[rng.below(64)].get_or_insert(letters[rng.below(letters.len())]);
        }
        let fen = board_fen(&board, rng.below(2) == 0);
        let Ok(p) = Position::from_fen(&fen) else {
            continue;
        };
        checked += 1;
        for limits in [
            WinnableBudget::quick(),
            WinnableBudget::full().with_nodes(3_000),
        ] {
            for c in Color::ALL {
                let a = winnable(&p, c, &limits);
                assert!(a.nodes <= limits.nodes, "{fen}");
                if let Verdict::Winnable { line } = &a.verdict {
                    assert!(proves_mate(&p, c, line), "{fen}");
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} legal positions");
}

#[test]
fn the_position_report_carries_the_verdicts() {
    let r = chess_knowledge::describe(&pos("k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1"));
    assert!(r.winnability.dead);
    assert_eq!(r.winnability.code, "--");
    assert!(
        r.items
            .iter()
            .any(|i| i.topic == "winnability" && i.en.starts_with("Dead position")),
        "{:?}",
        r.items
    );
    let r = chess_knowledge::describe(&pos("8/8/8/2k5/8/8/3K4/7q w - - 0 1"));
    assert!(!r.winnability.dead);
    assert_eq!(r.winnability.verdicts.white, "unwinnable");
    assert!(
        r.items
            .iter()
            .any(|i| i.en == "Cannot be won by White: White has only its king")
    );
    assert!(r.to_json().contains("\"winnability\""));
}

#[test]
fn pawns_that_can_only_walk_into_the_wall() {
    // The black pawns a5, c5, e5, g5 have no pawn to guard them: a king above the wall can
    // take one and walk in, so the wall proves nothing.
    let p = pos("k7/7B/2K5/p1p1p1p1/PpPpPpPp/3P1P1P/1P6/8 w - - 0 1");
    assert!(!winnability(&p, &WinnableBudget::quick()).is_dead());
    // White's king below could take the b-pawn when it comes to b3: not provable either.
    let p = pos("k7/7B/8/p1p1p1p1/PpPpPpPp/3P1P1P/1P6/4K3 w - - 0 1");
    assert!(!winnability(&p, &WinnableBudget::quick()).is_dead());
    // Facing pawns on an open file with a capture on the way: not provable, and winnable.
    let (c, _) = code("k7/7B/8/p1p1p1p1/PpPpPpP1/1P1P1P2/7P/4K3 w - - 0 1");
    assert_eq!(&c[..1], "W");
    // Mobile pawns whose paths meet an enemy pawn's attack: the argument does not apply.
    let p = pos("4k3/8/8/3p4/8/4P3/8/4K3 w - - 0 1");
    assert!(!winnability(&p, &WinnableBudget::quick()).is_dead());
}

/// Random pawn chains (each file: a white pawn, a black pawn ahead) with kings and a few
/// pieces anywhere: whenever the static proof says a side cannot win, the helpmate search
/// on its own must not find a mate either.
#[test]
fn static_proofs_never_contradict_the_search() {
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    let mut proofs = 0;
    for _ in 0..12_000 {
        let mut board: [Option<char>; 64] = [None; 64];
        // A chain: the white pawns' ranks walk up or down one file by file, each black pawn
        // stands just ahead (or, now and then, further up its file); a file may be empty.
        let mut w = 2 + rng.below(3);
        for file in 0..8 {
            if file > 0 {
                w = if rng.below(2) == 0 { w + 1 } else { w - 1 }.clamp(1, 5);
            }
            if rng.below(8) == 0 {
                continue;
            }
            let b = if rng.below(6) == 0 { w + 2 } else { w + 1 };
            if b > 6 {
                continue;
            }
            board[w * 8 + file] = Some('P');
            board[b * 8 + file] = Some('p');
        }
        let free: Vec<usize> = (0..64).filter(|&i| board[i].is_none()).collect();
        let mut pick = |c: char, rng: &mut Rng| {
            let i = free[rng.below(free.len())];
            if board[i].is_none() {
                board[i] = Some(c);
            }
        };
        pick('K', &mut rng);
        pick('k', &mut rng);
        for _ in 0..rng.below(3) {
            let c = ['N', 'B', 'R', 'Q', 'n', 'b', 'r', 'q'][rng.below(8)];
            pick(c, &mut rng);
        }
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    Some(c) => {
                        if empty > 0 {
                            fen.push_str(&empty.to_string());
                            empty = 0;
                        }
                        fen.push(c);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                fen.push_str(&empty.to_string());
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        fen.push_str(" w - - 0 1");
        let Ok(p) = Position::from_fen(&fen) else {
            continue;
        };
        if !p.has_legal_moves() {
            continue;
        }
        for c in Color::ALL {
            let a = winnable(&p, c, &WinnableBudget::quick());
            let Verdict::Unwinnable { reason } = &a.verdict else {
                continue;
            };
            if !reason.contains("pawn") {
                continue;
            }
            proofs += 1;
            assert_eq!(
                chess_knowledge::find_helpmate(&p, c, 100_000),
                None,
                "{fen}: {reason}"
            );
        }
    }
    eprintln!("{proofs} static proofs cross-checked");
    assert!(proofs > 100, "only {proofs} static proofs exercised");
}

/// A lone bishop against rooks and queens: the helpmate search on its own never mates either.
#[test]
fn a_lone_bishop_never_mates_rooks_and_queens() {
    let mut rng = Rng(0x1234_0000_beef_0001);
    let mut checked = 0;
    for _ in 0..400 {
        let mut squares: Vec<usize> = Vec::new();
        while squares.len() < 5 {
            let s = rng.below(64);
            if !squares.contains(&s) {
                squares.push(s);
            }
        }
        let mut board = [None; 64];
        board[squares[0]] = Some('K');
        board[squares[1]] = Some('B');
        board[squares[2]] = Some('k');
        board[squares[3]] = Some(['r', 'q'][rng.below(2)]);
        if rng.below(2) == 0 {
            board[squares[4]] = Some(['r', 'q'][rng.below(2)]);
        }
        let fen = board_fen(&board, rng.below(2) == 0);
        let Ok(p) = Position::from_fen(&fen) else {
            continue;
        };
        checked += 1;
        assert!(
            winnable(&p, Color::White, &WinnableBudget::quick())
                .verdict
                .is_unwinnable()
                || !p.has_legal_moves(),
            "{fen}"
        );
        assert_eq!(
            chess_knowledge::find_helpmate(&p, Color::White, 20_000),
            None,
            "{fen}"
        );
    }
    assert!(checked > 200, "only {checked}");
}
