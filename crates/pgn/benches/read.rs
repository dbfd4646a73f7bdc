//! PGN reading speed in MB/s on a generated multi-megabyte file of random legal games with
//! comments, NAGs and variations: tokenising only (a counting visitor) and full validation
//! (every move checked by chess-rules, trees built). Each run checks the counts it times.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use chess_pgn::{GameResult, Location, Reader, Visitor, Writer, read_games};
use common::{GenOptions, Rng, random_game};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const GAMES: usize = 2000;

fn corpus() -> Vec<u8> {
    let mut rng = Rng::new(42);
    let opts = GenOptions {
        max_plies: 160,
        annotate: true,
        max_depth: 2,
    };
    let mut w = Writer::new(Vec::new());
    for _ in 0..GAMES {
        w.write_game(&random_game(&mut rng, opts)).unwrap();
    }
    w.into_inner()
}

/// Counts every event, so the tokeniser's work cannot be optimised away.
#[derive(Default)]
struct Count {
    events: u64,
}

impl Visitor for Count {
    type Output = u64;
    fn begin_game(&mut self, _: u64, _: Location) {
        self.events = 0;
    }
    fn tag(&mut self, name: &str, value: &str) {
        self.events += (name.len() + value.len()) as u64 % 2 + 1;
    }
    fn san(&mut self, san: &str, _: Location) {
        self.events += 1 + san.len() as u64 % 2;
    }
    fn nag(&mut self, _: u8) {
        self.events += 1;
    }
    fn comment(&mut self, text: &str) {
        self.events += 1 + text.len() as u64 % 2;
    }
    fn outcome(&mut self, result: Option<GameResult>) {
        self.events += u64::from(result.is_some());
    }
    fn end_game(&mut self) -> u64 {
        self.events
    }
}

fn tokenise(pgn: &[u8]) -> (usize, u64) {
    let mut count = Count::default();
    let mut games = 0;
    let mut events = 0;
    for g in Reader::new(pgn).games(&mut count) {
        games += 1;
        events += g.unwrap();
    }
    (games, events)
}

fn validate(pgn: &[u8]) -> (usize, usize) {
    let mut games = 0;
    let mut nodes = 0;
    for g in read_games(pgn) {
        games += 1;
        nodes += g.unwrap().root.node_count();
    }
    (games, nodes)
}

fn mb_per_s(bytes: usize, f: impl Fn()) -> f64 {
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    bytes as f64 / best / 1e6
}

fn bench(c: &mut Criterion) {
    let pgn = corpus();
    let (games, events) = tokenise(&pgn);
    let (checked, nodes) = validate(&pgn);
    assert_eq!((games, checked), (GAMES, GAMES));
    println!(
        "corpus: {GAMES} games, {nodes} moves, {:.1} MB; tokenise {:.0} MB/s, validate {:.1} MB/s",
        pgn.len() as f64 / 1e6,
        mb_per_s(pgn.len(), || assert_eq!(tokenise(&pgn).1, events)),
        mb_per_s(pgn.len(), || assert_eq!(validate(&pgn).1, nodes)),
    );

    let mut group = c.benchmark_group("read");
    group.throughput(Throughput::BytesDecimal(pgn.len() as u64));
    group.sample_size(10);
    group.bench_function("tokenise", |b| {
        b.iter(|| assert_eq!(tokenise(black_box(&pgn)), (GAMES, events)))
    });
    group.bench_function("validate", |b| {
        b.iter(|| assert_eq!(validate(black_box(&pgn)), (GAMES, nodes)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
