//! Property tests over random games: the move generator agrees with a slow, independent
//! mailbox generator written here; Zobrist keys kept incrementally equal a fresh computation;
//! SAN written for every legal move reads back as the same move, leniently and strictly.

use std::collections::BTreeSet;

use chess_rules::{
    Color, EnPassantMode, FenOptions, PieceLetters, Position, Role, SanOptions, SanStrictness,
    Square,
};
use proptest::prelude::*;

/// Board as 64 optional (colour, role) pairs.
type Board = [Option<(Color, Role)>; 64];

fn board_of(pos: &Position) -> Board {
    let mut b = [None; 64];
    for sq in Square::ALL {
        b[sq.index()] = pos.piece_at(sq).map(|p| (p.color, p.role));
    }
    b
}

fn at(f: i32, r: i32) -> Option<usize> {
    ((0..8).contains(&f) && (0..8).contains(&r)).then(|| (r * 8 + f) as usize)
}

/// Is `sq` attacked by `by` on board `b`? Walks rays and steps square by square.
fn attacked(b: &Board, sq: usize, by: Color) -> bool {
    let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
    let knight = [
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ];
    let king = [
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
        (0, -1),
        (1, -1),
    ];
    for (df, dr) in knight {
        if let Some(s) = at(f + df, r + dr)
            && b[s] == Some((by, Role::Knight))
        {
            return true;
        }
    }
    for (df, dr) in king {
        if let Some(s) = at(f + df, r + dr)
            && b[s] == Some((by, Role::King))
        {
            return true;
        }
    }
    let pawn_dr = if by == Color::White { -1 } else { 1 };
    for df in [-1, 1] {
        if let Some(s) = at(f + df, r + pawn_dr)
            && b[s] == Some((by, Role::Pawn))
        {
            return true;
        }
    }
    for (i, (df, dr)) in king.iter().enumerate() {
        let diagonal = i % 2 == 1;
        let (mut nf, mut nr) = (f + df, r + dr);
        while let Some(s) = at(nf, nr) {
            if let Some((c, role)) = b[s] {
                if c == by
                    && (role == Role::Queen
                        || (diagonal && role == Role::Bishop)
                        || (!diagonal && role == Role::Rook))
                {
                    return true;
                }
                break;
            }
            nf += df;
            nr += dr;
        }
    }
    false
}

fn name(sq: usize) -> String {
    Square::ALL[sq].to_string()
}

/// All legal moves in UCI, generated naively: pseudo-legal moves filtered by playing them on a
/// copy of the board and looking for attacks on the king.
fn slow_legal(pos: &Position) -> BTreeSet<String> {
    let b = board_of(pos);
    let us = pos.turn();
    let them = !us;
    let mut out = BTreeSet::new();
    let king_sq = |b: &Board| (0..64).find(|&s| b[s] == Some((us, Role::King))).unwrap();
    let mut try_move = |from: usize, to: usize, promo: Option<Role>, ep_capture: Option<usize>| {
        let mut nb = b;
        let (c, role) = nb[from].unwrap();
        nb[from] = None;
        if let Some(cap) = ep_capture {
            nb[cap] = None;
        }
        nb[to] = Some((c, promo.unwrap_or(role)));
        if !attacked(&nb, king_sq(&nb), them) {
            let p = promo.map(|r| r.char().to_string()).unwrap_or_default();
            out.insert(format!("{}{}{}", name(from), name(to), p));
        }
    };
    for from in 0..64 {
        let Some((c, role)) = b[from] else { continue };
        if c != us {
            continue;
        }
        let (f, r) = ((from % 8) as i32, (from / 8) as i32);
        let steps: &[(i32, i32)] = match role {
            Role::Knight => &[
                (1, 2),
                (2, 1),
                (2, -1),
                (1, -2),
                (-1, -2),
                (-2, -1),
                (-2, 1),
                (-1, 2),
            ],
            Role::King | Role::Queen => &[
                (1, 0),
                (1, 1),
                (0, 1),
                (-1, 1),
                (-1, 0),
                (-1, -1),
                (0, -1),
                (1, -1),
            ],
            Role::Bishop => &[(1, 1), (-1, 1), (-1, -1), (1, -1)],
            Role::Rook => &[(1, 0), (0, 1), (-1, 0), (0, -1)],
            Role::Pawn => &[],
        };
        let slides = matches!(role, Role::Bishop | Role::Rook | Role::Queen);
        for &(df, dr) in steps {
            let (mut nf, mut nr) = (f + df, r + dr);
            while let Some(to) = at(nf, nr) {
                match b[to] {
                    Some((oc, _)) if oc == us => break,
                    Some(_) => {
                        try_move(from, to, None, None);
                        break;
                    }
                    None => try_move(from, to, None, None),
                }
                if !slides {
                    break;
                }
                nf += df;
                nr += dr;
            }
        }
        if role == Role::Pawn {
            let dir = if us == Color::White { 1 } else { -1 };
            let start_rank = if us == Color::White { 1 } else { 6 };
            let last_rank = if us == Color::White { 7 } else { 0 };
            let promos: Vec<Option<Role>> = if r + dir == last_rank {
                vec![
                    Some(Role::Queen),
                    Some(Role::Rook),
                    Some(Role::Bishop),
                    Some(Role::Knight),
                ]
            } else {
                vec![None]
            };
            if let Some(one) = at(f, r + dir)
                && b[one].is_none()
            {
                for &p in &promos {
                    try_move(from, one, p, None);
                }
                if r == start_rank
                    && let Some(two) = at(f, r + 2 * dir)
                    && b[two].is_none()
                {
                    try_move(from, two, None, None);
                }
            }
            for df in [-1, 1] {
                if let Some(to) = at(f + df, r + dir) {
                    if matches!(b[to], Some((c, _)) if c == them) {
                        for &p in &promos {
                            try_move(from, to, p, None);
                        }
                    } else if Some(Square::ALL[to]) == pos.ep_square() {
                        try_move(from, to, None, at(f + df, r));
                    }
                }
            }
        }
    }
    // Castling, from the recorded rights and the board.
    let rank = if us == Color::White { 0 } else { 7 };
    let rights = pos.castling_rights();
    let ksq = king_sq(&b);
    if !attacked(&b, ksq, them) {
        for (side, empty, safe, to) in [
            (
                chess_rules::CastlingSide::KingSide,
                vec![5, 6],
                vec![5, 6],
                6,
            ),
            (
                chess_rules::CastlingSide::QueenSide,
                vec![1, 2, 3],
                vec![3, 2],
                2,
            ),
        ] {
            if rights.has(us, side)
                && empty.iter().all(|&f| b[(rank * 8 + f) as usize].is_none())
                && safe
                    .iter()
                    .all(|&f| !attacked(&b, (rank * 8 + f) as usize, them))
            {
                out.insert(format!("{}{}", name(ksq), name((rank * 8 + to) as usize)));
            }
        }
    }
    out
}

fn fast_legal(pos: &Position) -> BTreeSet<String> {
    pos.legal_moves().iter().map(|m| m.to_string()).collect()
}

fn fresh_key(pos: &Position) -> u64 {
    let plain = FenOptions {
        en_passant: EnPassantMode::Always,
        counters: true,
    };
    Position::from_fen(&pos.fen_with(plain)).unwrap().zobrist()
}

/// Seeds that reach castling, en passant and promotions quickly.
const SEEDS: &[&str] = &[
    chess_rules::STARTPOS_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_games_agree_with_slow_generator(
        seed in 0usize..SEEDS.len(),
        picks in proptest::collection::vec(any::<u32>(), 1..160),
    ) {
        let mut pos = Position::from_fen(SEEDS[seed]).unwrap();
        for pick in picks {
            prop_assert_eq!(fast_legal(&pos), slow_legal(&pos), "{}", pos.fen());
            prop_assert_eq!(pos.count_legal() as usize, pos.legal_moves().len());
            prop_assert_eq!(pos.zobrist(), fresh_key(&pos), "{}", pos.fen());
            let moves = pos.legal_moves();
            // The tactical list is the full list's captures and promotions, in its order.
            let tactical: Vec<_> = moves
                .iter()
                .copied()
                .filter(|m| {
                    m.is_en_passant()
                        || m.promotion().is_some()
                        || pos.by_color(!pos.turn()).contains(m.to())
                })
                .collect();
            let listed = pos.legal_tactical_moves();
            prop_assert_eq!(listed.as_slice(), &tactical[..], "{}", pos.fen());
            for &m in moves.iter() {
                let san = pos.san(m);
                prop_assert_eq!(pos.parse_san(&san).unwrap(), m, "{} {}", pos.fen(), san);
                prop_assert_eq!(
                    pos.parse_san_with(&san, SanStrictness::Strict).unwrap(), m, "{}", san
                );
                prop_assert_eq!(pos.parse_uci(&m.to_string()).unwrap(), m);
                prop_assert_eq!(pos.parse_coordinate(&pos.coordinate(m)).unwrap(), m);
                for letters in [PieceLetters::Figurine, PieceLetters::Chinese] {
                    let text = pos.san_with(m, SanOptions { letters, check_marks: true });
                    prop_assert_eq!(pos.parse_san(&text).unwrap(), m, "{}", text);
                }
            }
            if moves.is_empty() {
                break;
            }
            let m = moves[pick as usize % moves.len()];
            let played = pos.play(m).unwrap();
            pos.play_unchecked(m);
            prop_assert_eq!(&played, &pos);
        }
    }
}

#[test]
fn mirrored_positions_have_mirrored_moves() {
    for fen in SEEDS {
        let pos = Position::from_fen(fen).unwrap();
        let mirrored = pos.mirrored();
        assert_eq!(pos.count_legal(), mirrored.count_legal(), "{fen}");
        assert_eq!(
            chess_rules::perft(&pos, 3),
            chess_rules::perft(&mirrored, 3),
            "{fen}"
        );
    }
}
