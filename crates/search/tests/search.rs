//! Search behaviour on known positions: mates at their exact distance, tactics, stalemate and
//! repetition handling, stopping, MultiPV and determinism. These run with the hand-written
//! evaluation, whose endgame knowledge (king, bishop and knight) and fixed-depth tactics they
//! pin down; `tactics_with_the_default_network` checks the embedded network on the tactics.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_rules::{Move, Position};
use chess_search::{Engine, EngineOptions, EvalSource, Info, Score, SearchLimits, SearchResult};

fn engine() -> Engine {
    Engine::with_source(EngineOptions::default(), EvalSource::Hand)
}

fn search(fen: &str, limits: SearchLimits) -> (Position, SearchResult) {
    let pos = Position::from_fen(fen).unwrap();
    let result = engine().search(&pos, &[], limits);
    (pos, result)
}

fn best(fen: &str, depth: u32) -> (String, Score) {
    let (pos, r) = search(fen, SearchLimits::depth(depth));
    let m = r.best_move.unwrap();
    (pos.san(m), r.lines[0].score)
}

/// Plays SAN moves from `fen`, returning the final position and the keys before it.
fn play(fen: &str, moves: &[&str]) -> (Position, Vec<u64>) {
    let mut pos = Position::from_fen(fen).unwrap();
    let mut keys = Vec::new();
    for san in moves {
        let m = pos.parse_san(san).unwrap();
        keys.push(pos.zobrist());
        pos.play_unchecked(m);
    }
    (pos, keys)
}

#[test]
fn mate_in_one() {
    let (san, score) = best("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 4);
    assert_eq!((san.as_str(), score), ("Rd8#", Score::Mate(1)));
    let (san, score) = best("1r4k1/5ppp/8/8/8/8/1Q3PPP/6K1 w - - 0 1", 4);
    assert_eq!((san.as_str(), score), ("Qxb8#", Score::Mate(1)));
}

#[test]
fn mate_in_two() {
    // Rook and king against king: Kg6 (or Kh6) and Ra8.
    let (_, score) = best("7k/8/8/6K1/8/8/8/R7 w - - 0 1", 6);
    assert_eq!(score, Score::Mate(2));
    // Black to move: Rg1+ Kxg1 Rf1#.
    let (san, score) = best("6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1", 6);
    assert_eq!((san.as_str(), score), ("Rg1+", Score::Mate(2)));
    // Qxh7+ Kxh7 hxg6#.
    let (san, score) = best(
        "r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1",
        6,
    );
    assert_eq!((san.as_str(), score), ("Qxh7+", Score::Mate(2)));
}

#[test]
fn mate_in_three() {
    let (san, score) = best("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", 8);
    assert_eq!((san.as_str(), score), ("Ra6+", Score::Mate(3)));
    let (_, score) = best("4k3/8/8/4K3/8/8/8/7R w - - 0 1", 8);
    assert_eq!(score, Score::Mate(3));
}

#[test]
fn mated_side_sees_the_distance() {
    // ...Kh8 allows Ra8# at once; ...Kf8 lasts a move longer (Re1, Re8#).
    let (san, score) = best("6k1/8/6K1/8/8/8/8/R7 b - - 0 1", 6);
    assert_eq!((san.as_str(), score), ("Kf8", Score::Mate(-2)));
}

#[test]
fn kbn_mate() {
    // King, bishop and knight against king: the mate needs the corner of the bishop's colour
    // (h8 for the dark-squared bishop), here seven moves away. Depth 17 since the fourth
    // SPSA parameter set, tuned for the network, whose larger reductions cost the hand-written
    // evaluation here: mate in 7 at depth 17 (107k nodes; mate in 9 from depth 14), where the
    // set before found it at depth 12 (9k nodes). The network found it sooner with the new
    // set: depth 13 and 41k nodes, was depth 15 and 93k.
    let (_, score) = best("7k/8/5K2/8/3B4/8/8/4N3 w - - 0 1", 17);
    assert_eq!(score, Score::Mate(7));
    let (_, score) = best("8/8/8/8/8/5K2/4N3/5B1k w - - 0 1", 10);
    assert_eq!(score, Score::Mate(4));
    let (_, score) = best("7k/5K2/8/4N3/8/8/8/2B5 w - - 0 1", 8);
    assert_eq!(score, Score::Mate(3));
}

#[test]
fn go_mate_stops_when_found() {
    let (pos, r) = search(
        "r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1",
        SearchLimits {
            mate: Some(3),
            ..SearchLimits::default()
        },
    );
    assert_eq!(r.lines[0].score, Score::Mate(3));
    assert_eq!(pos.san(r.best_move.unwrap()), "Ra6+");
}

#[test]
fn avoids_stalemate_when_winning() {
    // Most queen moves stalemate the cornered king; Qg1# and Qg7# mate.
    for fen in [
        "6Q1/8/8/8/8/8/p1K5/k7 w - - 0 1",
        "k7/2K5/8/1Q6/8/8/8/8 w - - 0 1",
    ] {
        let (pos, r) = search(fen, SearchLimits::depth(6));
        let m = r.best_move.unwrap();
        let next = pos.play(m).unwrap();
        assert!(!next.is_stalemate(), "{fen}: {m}");
        assert!(next.is_checkmate(), "{fen}: {m}");
        assert_eq!(r.lines[0].score, Score::Mate(1));
    }
}

#[test]
fn stalemate_and_checkmate_roots() {
    let (_, r) = search("k7/8/1QK5/8/8/8/8/8 b - - 0 1", SearchLimits::depth(5));
    assert_eq!((r.best_move, r.lines[0].score), (None, Score::Cp(0)));
    let (_, r) = search("k7/1Q6/2K5/8/8/8/8/8 b - - 0 1", SearchLimits::depth(5));
    assert_eq!((r.best_move, r.lines[0].score), (None, Score::Mate(0)));
}

const KNIGHT_DANCE: [&str; 7] = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"];

#[test]
fn takes_a_repetition_draw_when_losing() {
    // Black is a queen down; ...Ng8 repeats the start position a third time.
    let (pos, keys) = play(
        "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &KNIGHT_DANCE,
    );
    let r = engine().search(&pos, &keys, SearchLimits::depth(8));
    assert_eq!(pos.san(r.best_move.unwrap()), "Ng8");
    assert_eq!(r.lines[0].score, Score::Cp(0));
}

#[test]
fn avoids_a_repetition_draw_when_winning() {
    // Black is a queen up and must not play ...Ng8.
    let (pos, keys) = play(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1",
        &KNIGHT_DANCE,
    );
    let r = engine().search(&pos, &keys, SearchLimits::depth(8));
    assert_ne!(pos.san(r.best_move.unwrap()), "Ng8");
    assert!(matches!(r.lines[0].score, Score::Cp(cp) if cp > 500));
    // Without the history the same move is harmless.
    let r = engine().search(&pos, &[], SearchLimits::depth(2));
    assert!(r.best_move.is_some());
}

#[test]
fn fifty_move_rule_is_a_draw() {
    // White is a rook up, but the clock is at 99 and nothing resets it in time... unless a
    // capture or pawn move is available; here only king and rook moves exist.
    let (_, r) = search("8/8/8/4k3/8/8/8/R3K3 w - - 99 120", SearchLimits::depth(4));
    // After any white move the clock reaches 100: a draw unless it mates.
    assert_eq!(r.lines[0].score, Score::Cp(0));
}

/// Well-known tactics (mostly from the "Win at Chess" collection) with their best moves.
const TACTICS: &[(&str, &str)] = &[
    (
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
        "Qg6",
    ),
    (
        "5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1",
        "Rg3",
    ),
    ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", "Qc4+"),
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1", "Rb7"),
    (
        "rnbqkb1r/pppp1ppp/8/4P3/6n1/7P/PPPNPPP1/R1BQKBNR b KQkq - 0 1",
        "Ne3",
    ),
    (
        "r4q1k/p2bR1rp/2p2Q1N/5p2/5p2/2P5/PP3PPP/R5K1 w - - 0 1",
        "Rf7",
    ),
    (
        "3q1rk1/p4pp1/2pb3p/3p4/6Pr/1PNQ4/P1PB1PP1/4RRK1 b - - 0 1",
        "Bh2+",
    ),
    (
        "2br2k1/2q3rn/p2NppQ1/2p1P3/Pp5R/4P3/1P3PPP/3R2K1 w - - 0 1",
        "Rxh7",
    ),
    (
        "r1b1kb1r/3q1ppp/pBp1pn2/8/Np3P2/5B2/PPP3PP/R2Q1RK1 w kq - 0 1",
        "Bxc6",
    ),
    (
        "4k1r1/2p3r1/1pR1p3/3pP2p/3P2qP/P4N2/1PQ4P/5R1K b - - 0 1",
        "Qxf3+",
    ),
    (
        "5rk1/pp4p1/2n1p2p/2Npq3/2p5/6P1/P3P1BP/R4Q1K w - - 0 1",
        "Qxf8+",
    ),
    (
        "r2rb1k1/pp1q1p1p/2n1p1p1/2bp4/5P2/PP1BPR1Q/1BPN2PP/R5K1 w - - 0 1",
        "Qxh7+",
    ),
    (
        "1R6/1brk2p1/4p2p/p1P1Pp2/P7/6P1/1P4P1/2R3K1 w - - 0 1",
        "Rxb7",
    ),
    (
        "r4rk1/ppp2ppp/2n5/2bqp3/8/P2PB3/1PP1NPPP/R2Q1RK1 w - - 0 1",
        "Nc3",
    ),
    (
        "1k5r/pppbn1pp/4q1r1/1P3p2/2NPp3/1QP5/P4PPP/R1B1R1K1 w - - 0 1",
        "Ne5",
    ),
    ("R7/P4k2/8/8/8/8/r7/6K1 w - - 0 1", "Rh8"),
    (
        "r1b2rk1/ppbn1ppp/4p3/1QP4q/3P4/N4N2/5PPP/R1B2RK1 w - - 0 1",
        "c6",
    ),
    (
        "r2qkb1r/1ppb1ppp/p7/4p3/P1Q1P3/2P5/5PPP/R1B2KNR b kq - 0 1",
        "Bb5",
    ),
    (
        "r3nrk1/2p2p1p/p1p1b1p1/2NpPq2/3R4/P1N1Q3/1PP2PPP/4R1K1 w - - 0 1",
        "g4",
    ),
    (
        "6k1/1b1nqpbp/pp4p1/5P2/1PN5/4Q3/P5PP/1B2B1K1 b - - 0 1",
        "Bd4",
    ),
    ("3R1rk1/8/5Qpp/2p5/2P1p1q1/P3P3/1P2PK2/8 b - - 0 1", "Qh4+"),
    (
        "3r2k1/1p1b1pp1/pq5p/8/3NR3/2PQ3P/PP3PP1/6K1 b - - 0 1",
        "Bf5",
    ),
    (
        "7k/pp4np/2p3p1/3pN1q1/3P4/Q7/1r3rPP/2R2RK1 w - - 0 1",
        "Qf8+",
    ),
    (
        "1r1r2k1/4pp1p/2p1b1p1/p3R3/RqBP4/4P3/1PQ2PPP/6K1 b - - 0 1",
        "Qe1+",
    ),
    (
        "r2q2k1/pp1rbppp/4pn2/2P5/1P3B2/6P1/P3QPBP/1R3RK1 w - - 0 1",
        "c6",
    ),
];

/// The tactics `engine` misses at `depth`, one line each.
fn missed_tactics(engine: &mut Engine, depth: u32) -> Vec<String> {
    let mut failed = Vec::new();
    for (fen, want) in TACTICS {
        let pos = Position::from_fen(fen).unwrap();
        engine.new_game();
        let r = engine.search(&pos, &[], SearchLimits::depth(depth));
        let got = pos.san(r.best_move.unwrap());
        let got = got.trim_end_matches(['+', '#']);
        if got != want.trim_end_matches(['+', '#']) {
            failed.push(format!(
                "{fen}: want {want}, got {got} ({})",
                r.lines[0].score
            ));
        }
    }
    failed
}

#[test]
fn tactics_at_fixed_depth() {
    // The hand-written evaluation finds all 25 at depth 14. (At depth 11 until the fourth
    // SPSA parameter set, tuned for the network: its larger reductions put c6 at depth 14,
    // 235k nodes, where the set before found it at depth 11, 45k; the network found c6
    // sooner with the new set, depth 9 and 14k nodes, was depth 10 and 29k. At depth 9 it
    // did until the continuation history of four plies back; with it, Qg6 and c6 came one
    // ply later, and once checks that lose material were no longer extended, Bf5 one more;
    // the two changes scored +16.5 and +17.0 Elo in play. Ordering only the quiet checks
    // that do not hang the checker pushed Qg6 past depth 14, until delta pruning kept
    // checking captures.)
    let failed = missed_tactics(&mut engine(), 14);
    assert!(
        failed.is_empty(),
        "{} of {} failed:\n{}",
        failed.len(),
        TACTICS.len(),
        failed.join("\n")
    );
}

#[test]
fn a_mate_by_a_checking_capture_is_not_delta_pruned() {
    // Qg6 mates in two (Qg6 fxg6 Nxg6#). The root searches Qg6 last and a few plies short,
    // so the knight's mating capture comes at the quiescence search with White a queen
    // down, where delta pruning dropped it (the hand-written evaluation then played Nh5
    // through depth 14) until captures that check were kept.
    let fen = "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1";
    for depth in 9..=12 {
        let (pos, r) = search(fen, SearchLimits::depth(depth));
        assert_eq!(
            (pos.san(r.best_move.unwrap()), r.lines[0].score),
            ("Qg6".to_string(), Score::Mate(2)),
            "depth {depth}"
        );
    }
}

#[test]
fn tactics_with_the_default_network() {
    // The network's positional judgement differs from the hand-written evaluation's on a
    // few quiet "best moves" of this list; the forcing ones it must find. At depth 11: the
    // network of output buckets misses 6 at depth 9 (its predecessor 3), but finds Bxc6, c6
    // (twice) and Bb5 two plies deeper and misses 2 there.
    let failed = missed_tactics(&mut Engine::new(EngineOptions::default()), 11);
    assert!(
        failed.len() <= 3,
        "{} of {} failed:\n{}",
        failed.len(),
        TACTICS.len(),
        failed.join("\n")
    );
}

#[test]
fn fixed_depth_is_deterministic() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let (_, a) = search(fen, SearchLimits::depth(8));
    let (_, b) = search(fen, SearchLimits::depth(8));
    assert_eq!(
        a,
        SearchResult {
            lines: a.lines.clone(),
            ..b.clone()
        }
    );
    assert_eq!(a.lines[0].nodes, b.lines[0].nodes);
    assert_eq!(a.lines[0].pv, b.lines[0].pv);
}

#[test]
fn stop_returns_quickly_with_a_move() {
    let pos = Position::startpos();
    let mut engine = engine();
    let handle = engine.go(
        &pos,
        &[],
        SearchLimits {
            infinite: true,
            ..SearchLimits::default()
        },
        |_| {},
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!handle.is_finished(), "an infinite search waits for stop");
    let t = Instant::now();
    handle.stop();
    let r = handle.wait();
    assert!(
        t.elapsed() < Duration::from_millis(100),
        "{:?}",
        t.elapsed()
    );
    assert!(pos.is_legal(r.best_move.unwrap()));
}

#[test]
fn movetime_and_nodes_limits() {
    let pos = Position::startpos();
    let mut engine = engine();
    let t = Instant::now();
    let r = engine.search(&pos, &[], SearchLimits::movetime(150));
    assert!(
        t.elapsed() < Duration::from_millis(400),
        "{:?}",
        t.elapsed()
    );
    assert!(r.best_move.is_some());
    engine.new_game();
    let r = engine.search(&pos, &[], SearchLimits::nodes(20_000));
    assert!(r.lines[0].nodes <= 20_000, "{}", r.lines[0].nodes);
    let r2 = {
        engine.new_game();
        engine.search(&pos, &[], SearchLimits::nodes(20_000))
    };
    assert_eq!(r.best_move, r2.best_move);
}

/// Runs a search with `go` and returns its result and every `info` it reported, in order.
fn go_with_infos(
    engine: &mut Engine,
    pos: &Position,
    limits: SearchLimits,
) -> (SearchResult, Vec<Info>) {
    let infos: Arc<Mutex<Vec<Info>>> = Arc::default();
    let sink = infos.clone();
    let r = engine
        .go(pos, &[], limits, move |i| {
            sink.lock().unwrap().push(i.clone())
        })
        .wait();
    let infos = std::mem::take(&mut *infos.lock().unwrap());
    (r, infos)
}

/// A node limit cuts an iteration short; the last `info` then reports the lines the search
/// returns, with every node searched (not the count at the last finished iteration).
#[test]
fn a_cut_search_reports_its_final_lines() {
    let pos = Position::startpos();
    let mut engine = engine();
    let (r, infos) = go_with_infos(&mut engine, &pos, SearchLimits::nodes(20_000));
    let last = &infos.last().expect("an info line").line;
    assert_eq!(last.nodes, r.lines[0].nodes);
    assert_eq!(last.pv, r.lines[0].pv);
    assert_eq!(last.score, r.lines[0].score);
    assert!(last.nodes >= 20_000, "{}", last.nodes);
    // The iterations before reported fewer nodes than the search spent.
    assert!(infos[infos.len() - 2].line.nodes < last.nodes);
    // A search that ends at its depth reports each iteration once, as before.
    engine.new_game();
    let (_, infos) = go_with_infos(&mut engine, &pos, SearchLimits::depth(4));
    let depths: Vec<u32> = infos.iter().map(|i| i.line.depth).collect();
    assert_eq!(depths, [1, 2, 3, 4]);
}

#[test]
fn clock_limits_keep_time() {
    let pos = Position::startpos();
    let mut engine = engine();
    let t = Instant::now();
    let r = engine.search(
        &pos,
        &[],
        SearchLimits {
            wtime: Some(2_000),
            btime: Some(2_000),
            winc: Some(0),
            binc: Some(0),
            ..SearchLimits::default()
        },
    );
    assert!(
        t.elapsed() < Duration::from_millis(700),
        "{:?}",
        t.elapsed()
    );
    assert!(r.best_move.is_some());
}

#[test]
fn multipv_reports_distinct_lines() {
    let pos = Position::startpos();
    let mut engine = Engine::new(EngineOptions {
        multipv: 3,
        ..EngineOptions::default()
    });
    let (r, infos) = go_with_infos(&mut engine, &pos, SearchLimits::depth(6));
    assert_eq!(r.lines.len(), 3);
    let firsts: Vec<Move> = r.lines.iter().map(|l| l.pv[0]).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
    assert_eq!(r.best_move, Some(firsts[0]));
    assert!(
        infos
            .iter()
            .any(|i| i.line.multipv == 3 && i.line.depth == 6)
    );
    // Lines are ordered best first.
    assert!(r.lines.windows(2).all(|w| match (w[0].score, w[1].score) {
        (Score::Cp(a), Score::Cp(b)) => a >= b,
        _ => true,
    }));
}

#[test]
fn searchmoves_restricts_the_root() {
    let pos = Position::startpos();
    let only = pos.parse_uci("a2a3").unwrap();
    let r = engine().search(
        &pos,
        &[],
        SearchLimits {
            depth: Some(5),
            searchmoves: vec![only],
            ..SearchLimits::default()
        },
    );
    assert_eq!(r.best_move, Some(only));
}

#[test]
fn ponder_waits_for_ponderhit() {
    let pos = Position::startpos();
    let mut engine = engine();
    let handle = engine.go(
        &pos,
        &[],
        SearchLimits {
            ponder: true,
            movetime: Some(50),
            ..SearchLimits::default()
        },
        |_| {},
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!handle.is_finished(), "pondering ignores the clock");
    handle.ponderhit();
    let t = Instant::now();
    let r = handle.wait();
    assert!(t.elapsed() < Duration::from_millis(300));
    assert!(r.best_move.is_some());
}

#[test]
fn several_threads_agree_on_a_mate() {
    let pos = Position::from_fen("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1").unwrap();
    let mut engine = Engine::new(EngineOptions {
        threads: 3,
        ..EngineOptions::default()
    });
    let r = engine.search(&pos, &[], SearchLimits::depth(8));
    assert_eq!(r.lines[0].score, Score::Mate(3));
    assert_eq!(pos.san(r.best_move.unwrap()), "Ra6+");
}

#[test]
fn tune_options_set_the_search_parameters() {
    let pos = Position::startpos();
    let run = |e: &mut Engine| e.search(&pos, &[], SearchLimits::depth(9)).fingerprint();
    let mut e = engine();
    let before = run(&mut e);
    e.set_option("tune.rfp_margin", "40").unwrap();
    assert_eq!(e.params().rfp_margin, 40);
    e.new_game();
    assert_ne!(
        run(&mut e),
        before,
        "a smaller futility margin, another search"
    );
    let default = chess_search::Params::default().rfp_margin.to_string();
    e.set_option("TUNE.RFP_Margin", &default).unwrap();
    e.new_game();
    assert_eq!(run(&mut e), before, "the default again, the same search");
    let err = e
        .set_option("tune.rfp_margin", "lots")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rfp_margin") && err.contains("whole number"),
        "{err}"
    );
    assert!(e.set_option("tune.no_such_thing", "1").is_err());
    assert!(e.set_option("tune.", "1").is_err());
    assert_eq!(e.params(), &chess_search::Params::default());
}
