//! Generates real tables and checks them: every value against its moves, the published longest
//! mates, the file format's checks, resumption.

use std::path::PathBuf;
use std::sync::OnceLock;

use chess_rules::Position;
use chess_tablebase::{
    GenerateOptions, Material, Tablebase, Value, Wdl, check_consistency, generate_endings,
    generate_named, table_path,
};

/// Every 3-piece ending and a few 4-piece ones (with their sub-endings), generated once per
/// test binary into a fresh folder.
fn tables() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("tb-generate-{}", std::process::id()));
        generate_named(
            &[
                "KQvK", "KRvK", "KBvK", "KNvK", "KPvK", "KBBvK", "KBNvK", "KQvKR", "KPvKP", "KRvKP",
            ],
            &dir,
        )
        .unwrap();
        dir
    })
}

fn longest_win(name: &str) -> u32 {
    let tb = Tablebase::open_dir(tables()).unwrap();
    tb.table(name.parse().unwrap())
        .unwrap()
        .stats()
        .longest_win_plies
}

#[test]
fn every_value_agrees_with_the_best_of_its_moves() {
    let tb = Tablebase::open_dir(tables()).unwrap();
    let mut checked = Vec::new();
    for table in tb.tables() {
        let m = table.material();
        let report = check_consistency(&tb, m, 2).unwrap();
        assert_eq!(report.mismatches, 0, "{m}: {:?}", report.examples);
        assert_eq!(report.positions, table.stats().positions, "{m}");
        checked.push(m.to_string());
    }
    for name in [
        "KQvK", "KRvK", "KBvK", "KNvK", "KPvK", "KBNvK", "KPvKP", "KQvKP", "KQvKR",
    ] {
        assert!(
            checked.contains(&name.to_string()),
            "{name} not checked: {checked:?}"
        );
    }
}

#[test]
fn published_longest_mates_are_reproduced() {
    // Moves for the winning side to move; plies = 2 * moves - 1.
    for (name, moves) in [
        ("KQvK", 10),
        ("KRvK", 16),
        ("KBBvK", 19),
        ("KBNvK", 33),
        ("KQvKR", 35),
    ] {
        assert_eq!(longest_win(name), 2 * moves - 1, "{name}");
    }
    assert_eq!(longest_win("KBvK"), 0);
    assert_eq!(longest_win("KNvK"), 0);
}

#[test]
fn the_longest_win_example_has_that_value_and_a_move_keeping_it() {
    let tb = Tablebase::open_dir(tables()).unwrap();
    let t = tb.table("KBNvK".parse().unwrap()).unwrap();
    let pos = Position::from_fen(&t.example_fen()).unwrap();
    assert_eq!(tb.probe_dtm(&pos).unwrap(), Value::Win(65));
    let best = tb.best_moves(&pos).unwrap();
    assert_eq!(best[0].value, Value::Win(65));
    assert!(
        best.iter()
            .all(|mv| !mv.value.is_better_than(Value::Win(65)))
    );
}

#[test]
fn known_positions() {
    let tb = Tablebase::open_dir(tables()).unwrap();
    let probe = |fen: &str| tb.probe_dtm(&Position::from_fen(fen).unwrap()).unwrap();
    // Mate in one, mated, stalemate, a queen lost at once, the colours reversed.
    assert_eq!(probe("7k/8/6K1/8/8/8/8/1Q6 w - - 0 1"), Value::Win(1));
    assert_eq!(probe("Q6k/8/6K1/8/8/8/8/8 b - - 0 1"), Value::Loss(0));
    assert_eq!(probe("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), Value::Draw);
    assert_eq!(probe("7k/5q2/6K1/8/8/8/8/8 w - - 0 1"), Value::Draw);
    assert_eq!(probe("1q6/8/8/8/8/6k1/8/7K b - - 0 1"), Value::Win(1));
    // KPvK: a rook's pawn with the defender in the corner draws; the king on the sixth in
    // front of its pawn wins whoever moves.
    assert_eq!(probe("k7/8/8/8/8/8/P7/K7 w - - 0 1").wdl(), Wdl::Draw);
    assert_eq!(probe("4k3/8/4K3/4P3/8/8/8/8 b - - 0 1").wdl(), Wdl::Loss);
    assert_eq!(probe("4k3/8/4K3/4P3/8/8/8/8 w - - 0 1").wdl(), Wdl::Win);
}

#[test]
fn a_damaged_file_is_refused_and_generated_again() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tb-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let krk: Material = "KRvK".parse().unwrap();
    let opts = GenerateOptions::default();
    let first = generate_endings(&[krk], &dir, &opts).unwrap();
    assert!(first.iter().all(|r| !r.skipped));
    let again = generate_endings(&[krk], &dir, &opts).unwrap();
    assert!(
        again.iter().all(|r| r.skipped),
        "a second run resumes: nothing to do"
    );
    let path = table_path(&dir, krk);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let err = Tablebase::open_dir(&dir).unwrap_err().to_string();
    assert!(err.contains("checksum"), "{err}");
    let third = generate_endings(&[krk], &dir, &opts).unwrap();
    assert!(
        !third
            .iter()
            .find(|r| r.stats.material == krk)
            .unwrap()
            .skipped
    );
    let tb = Tablebase::open_dir(&dir).unwrap();
    assert_eq!(tb.table(krk).unwrap().stats().longest_win_plies, 31);
    std::fs::remove_dir_all(&dir).unwrap();
}
