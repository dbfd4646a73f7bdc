//! The engine with our endgame tables: exact lines at the root (KBN v K mated within the
//! table's distance whatever the defence), the exact draw, win/draw/loss probes inside the
//! search after a capture, and `TablePath`. The tables are generated here, once per test
//! binary, into a fresh folder (KBNvK and the 3-piece endings: seconds in the optimised test
//! profile).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use chess_rules::Position;
use chess_search::{Engine, EngineOptions, EvalSource, OptionError, Score, SearchLimits};
use chess_tablebase::{Tablebase, Value, generate_named};

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("search-tables-{}", std::process::id()));
        generate_named(&["KBNvK", "KPvK"], &dir).unwrap();
        dir
    })
}

fn tables() -> Arc<Tablebase> {
    static TB: OnceLock<Arc<Tablebase>> = OnceLock::new();
    TB.get_or_init(|| Arc::new(Tablebase::open_dir(dir()).unwrap()))
        .clone()
}

fn engine(with_tables: bool) -> Engine {
    let mut e = Engine::with_source(EngineOptions::default(), EvalSource::Hand);
    if with_tables {
        e.set_tables(Some(tables()));
    }
    e
}

fn is_mate(pos: &Position) -> bool {
    pos.is_check() && pos.legal_moves().is_empty()
}

/// Plays `start` out, the side that wins by the tables moved by an engine with tables, the
/// other by `defender`; returns the plies until mate (`None`: no mate within 300 plies).
fn play_out(
    start: &Position,
    defender: &mut Engine,
    defender_limits: &SearchLimits,
) -> Option<u32> {
    let tb = tables();
    let winner = match tb.probe_dtm(start).unwrap() {
        Value::Win(_) => start.turn(),
        Value::Loss(_) => !start.turn(),
        Value::Draw => panic!("{start}: not a win for either side"),
    };
    let mut attacker = engine(true);
    let mut pos = start.clone();
    let mut keys = Vec::new();
    for ply in 0..300u32 {
        if is_mate(&pos) {
            return Some(ply);
        }
        assert!(!pos.legal_moves().is_empty(), "{start}: stalemate at {pos}");
        let before = tb.probe_dtm(&pos).unwrap();
        let result = if pos.turn() == winner {
            attacker.search(&pos, &keys, SearchLimits::nodes(2_000))
        } else {
            defender.search(&pos, &keys, defender_limits.clone())
        };
        let m = result.best_move.unwrap();
        keys.push(pos.zobrist());
        pos.play_unchecked(m);
        let after = tb.probe_dtm(&pos).unwrap().after_move();
        if pos.turn() != winner {
            // The winner's move is one of the quickest mates.
            assert_eq!(after, before, "{start}: {m} from {}", keys.len());
            assert!(result.lines[0].tablebase);
        }
    }
    None
}

/// Winning KBNvK positions: the longest mate (33 moves), hand-picked ones, a lost one with the
/// defender to move, and random wins from the table.
fn kbn_starts() -> Vec<Position> {
    let tb = tables();
    let table = tb.table("KBNvK".parse().unwrap()).unwrap();
    let mut fens = vec![
        table.example_fen(),
        "8/8/8/4k3/8/8/8/4KBN1 w - - 0 1".to_owned(),
        "7k/8/8/8/8/8/8/KBN5 w - - 0 1".to_owned(),
        "8/8/3k4/8/8/2NBK3/8/8 b - - 0 1".to_owned(),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = 0;
    while random < 2 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        if let Some((fen, Value::Win(n))) = table.position_at((seed >> 11) % table.entries())
            && n >= 21
        {
            fens.push(fen);
            random += 1;
        }
    }
    fens.iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect()
}

fn dtm(pos: &Position) -> u32 {
    u32::try_from(tables().probe_dtm(pos).unwrap().dtm_plies().abs()).unwrap()
}

#[test]
fn kbn_is_mated_in_exactly_the_table_distance_against_the_best_defence() {
    for start in kbn_starts() {
        let mut defender = engine(true);
        let plies = play_out(&start, &mut defender, &SearchLimits::nodes(2_000));
        assert_eq!(plies, Some(dtm(&start)), "{start}");
    }
}

#[test]
fn kbn_is_mated_within_the_table_distance_against_an_engine_without_tables() {
    for start in kbn_starts() {
        let mut defender = engine(false);
        let plies = play_out(&start, &mut defender, &SearchLimits::depth(6)).unwrap_or(u32::MAX);
        assert!(plies <= dtm(&start), "{start}: mate after {plies} plies");
    }
}

#[test]
fn a_won_root_is_answered_from_the_tables() {
    let pos = Position::from_fen("7k/8/8/8/8/8/8/KBN5 w - - 0 1").unwrap();
    let mut e = engine(true);
    e.set_option("MultiPV", "3").unwrap();
    let r = e.search(&pos, &[], SearchLimits::depth(10));
    let n = i32::try_from(dtm(&pos)).unwrap();
    assert_eq!(r.lines[0].score, Score::Mate((n + 1) / 2));
    assert_eq!(r.lines.len(), 3);
    for (i, l) in r.lines.iter().enumerate() {
        assert!(l.tablebase && l.tbhits > 0);
        if i > 0 {
            assert!(mate_rank(l.score) <= mate_rank(r.lines[i - 1].score));
        }
    }
    // The line is the tables' best play: it ends in mate after the table's distance.
    let mut end = pos.clone();
    for m in &r.lines[0].pv {
        end.play_unchecked(*m);
    }
    assert_eq!(r.lines[0].pv.len(), n as usize);
    assert!(is_mate(&end));
    // Without tables the same search gives an estimate, not the mate.
    let plain = engine(false).search(&pos, &[], SearchLimits::depth(6));
    assert!(!plain.lines[0].tablebase && plain.lines[0].tbhits == 0);
    assert!(matches!(plain.lines[0].score, Score::Cp(_)));
}

/// Higher is better for the side to move.
fn mate_rank(s: Score) -> i32 {
    match s {
        Score::Mate(n) if n > 0 => 100_000 - n,
        Score::Mate(n) => -100_000 - n,
        Score::Cp(cp) => cp,
    }
}

#[test]
fn a_drawn_root_is_the_exact_draw_and_keeps_the_draw() {
    // A rook's pawn with the defending king in the corner.
    let pos = Position::from_fen("k7/8/8/8/8/8/P7/K7 w - - 0 1").unwrap();
    assert_eq!(tables().probe_dtm(&pos).unwrap(), Value::Draw);
    let r = engine(true).search(&pos, &[], SearchLimits::depth(8));
    let l = &r.lines[0];
    assert!(l.tablebase);
    assert_eq!((l.score, l.wdl), (Score::Cp(0), (0, 1000, 0)));
    let after = pos.play(r.best_move.unwrap()).unwrap();
    assert_eq!(tables().probe_dtm(&after).unwrap(), Value::Draw);
    let plain = engine(false).search(&pos, &[], SearchLimits::depth(8));
    assert!(!plain.lines[0].tablebase);
}

#[test]
fn a_capture_into_the_tables_is_scored_as_a_table_win_inside_the_search() {
    // KQvKR is not loaded; after Qxd8+ the position is KQvK, which is.
    let fen = "3r3k/8/8/8/8/8/8/3QK3 w - - 0 1";
    let pos = Position::from_fen(fen).unwrap();
    let r = engine(true).search(&pos, &[], SearchLimits::depth(5));
    let l = &r.lines[0];
    assert_eq!(r.best_move.unwrap().to_string(), "d1d8");
    assert!(!l.tablebase, "the root is not in the tables");
    assert!(l.tbhits > 0);
    match l.score {
        // A table win: above every evaluation, below every mate.
        Score::Cp(cp) => assert!((24_800..25_000).contains(&cp), "{cp}"),
        Score::Mate(n) => assert!(n > 0),
    }
    let plain = engine(false).search(&pos, &[], SearchLimits::depth(5));
    assert_eq!(plain.lines[0].tbhits, 0);
    assert!(matches!(plain.lines[0].score, Score::Cp(cp) if cp < 20_000));
}

#[test]
fn table_path_option_loads_and_clears_tables() {
    let mut e = engine(false);
    e.set_option("TablePath", dir().to_str().unwrap()).unwrap();
    assert_eq!(e.tables().unwrap().max_pieces(), 4);
    e.set_option("TablePath", "<empty>").unwrap();
    assert!(e.tables().is_none());
    let missing = dir().join("no-such-folder");
    let err = e
        .set_option("TablePath", missing.to_str().unwrap())
        .unwrap_err();
    assert!(matches!(err, OptionError::TablePath { .. }), "{err}");
    assert!(err.to_string().contains("not a folder"), "{err}");
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("search-tables-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let err = e
        .set_option("TablePath", empty.to_str().unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("no tables"), "{err}");
}
