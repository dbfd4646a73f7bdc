//! The batched search: searches paused at their leaves and evaluated in batches find exactly
//! what the incremental search finds; helpers, bulk evaluations, stops and failing tasks.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use chess_nn::{CpuBatch, Network};
use chess_rules::Position;
use chess_search::batched::{self, Scheduler, Tasks};
use chess_search::{Engine, EngineOptions, NnueEval, SearchLimits, SearchResult, StopHandle};

const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
];

fn positions() -> Vec<Position> {
    FENS.iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect()
}

fn scheduler(net: &Arc<Network>, max_batch: usize) -> Scheduler {
    Scheduler::new(net.clone(), Box::new(CpuBatch::new(net.clone())), max_batch)
}

fn incremental(net: &Arc<Network>, pos: &Position, limits: &SearchLimits) -> SearchResult {
    let n = net.clone();
    let mut engine = Engine::with_evaluator(EngineOptions::default(), move || {
        Box::new(NnueEval::new(n.clone()))
    });
    engine.search(pos, &[], limits.clone())
}

#[test]
fn batched_search_finds_what_the_incremental_search_finds() {
    let net = Network::default_network();
    let limits = SearchLimits::depth(8);
    let positions = positions();
    // All six at once on one scheduler: the batches mix their leaves.
    for max_batch in [1, 4, 1024] {
        let mut s = scheduler(&net, max_batch);
        let batched = batched::search_all(&mut s, &EngineOptions::default(), &positions, &limits);
        for (pos, b) in positions.iter().zip(&batched) {
            let inc = incremental(&net, pos, &limits);
            assert_eq!(
                b.fingerprint(),
                inc.fingerprint(),
                "max_batch {max_batch}: {}",
                pos.fen()
            );
            assert!(inc.lines[0].nodes > 1000);
        }
        let stats = s.stats();
        assert_eq!(stats.tasks_finished, positions.len() as u64);
        assert_eq!(stats.tasks_panicked, 0);
        assert!(stats.largest as usize <= max_batch.max(1), "{stats:?}");
        if max_batch > 1 {
            // While all six run, each round's batch holds one leaf of each.
            assert!(stats.largest >= 4, "{stats:?}");
            assert!(stats.batches < stats.leaves, "{stats:?}");
        }
    }
}

#[test]
fn helpers_run_as_tasks_sharing_the_table() {
    let net = Network::default_network();
    let mut s = scheduler(&net, 256);
    let options = EngineOptions {
        threads: 3,
        ..EngineOptions::default()
    };
    let results = batched::search_all(&mut s, &options, &positions()[..2], &SearchLimits::depth(7));
    for (r, fen) in results.iter().zip(FENS) {
        let pos = Position::from_fen(fen).unwrap();
        let best = r.best_move.expect("a move");
        assert!(pos.legal_moves().as_slice().contains(&best), "{fen}");
        assert_eq!(r.lines[0].depth, 7);
    }
    // Two main searches and two helpers each.
    assert_eq!(s.stats().tasks_finished, 6);
}

#[test]
fn bulk_evaluations_join_the_batch() {
    let net = Network::default_network();
    let positions = positions();
    let mut s = scheduler(&net, 4);
    let got = Rc::new(RefCell::new(Vec::new()));
    for _ in 0..3 {
        let (net, positions, got) = (net.clone(), positions.clone(), got.clone());
        s.spawn(move || {
            let scores = batched::evaluate_many(&net, &positions);
            got.borrow_mut().push(scores);
        });
    }
    s.run_to_end();
    let want: Vec<i32> = positions.iter().map(|p| net.evaluate(p)).collect();
    assert_eq!(*got.borrow(), vec![want.clone(); 3]);
    // Outside a task the same call evaluates at once.
    assert_eq!(batched::evaluate_many(&net, &positions), want);
    assert!(batched::evaluate_many(&net, &[]).is_empty());
    let stats = s.stats();
    assert_eq!(stats.leaves, 18);
    // Each bulk request goes in whole, so a batch can pass the batch size.
    assert!(stats.largest >= 6, "{stats:?}");
}

#[test]
fn a_stop_from_another_task_ends_an_infinite_search() {
    let net = Network::default_network();
    let mut s = scheduler(&net, 64);
    let stop = StopHandle::new();
    let result = Rc::new(RefCell::new(None));
    {
        let (net, stop, result) = (net.clone(), stop.clone(), result.clone());
        s.spawn(move || {
            let mut engine = batched::engine(EngineOptions::default(), net);
            let pos = Position::startpos();
            let infinite = SearchLimits {
                infinite: true,
                ..SearchLimits::default()
            };
            let r = engine.search_inline(&pos, &[], infinite, &stop, |_| {}, &Tasks);
            *result.borrow_mut() = Some(r);
        });
    }
    let rounds = Rc::new(Cell::new(0u32));
    {
        let (stop, rounds) = (stop.clone(), rounds.clone());
        s.spawn(move || {
            for _ in 0..20_000 {
                batched::yield_now();
                rounds.set(rounds.get() + 1);
            }
            stop.stop();
        });
    }
    // Bounded: the stopper ends after 20,000 rounds, the search soon after.
    for _ in 0..1_000_000 {
        if s.round() == 0 {
            break;
        }
    }
    assert_eq!(s.tasks(), 0, "the search did not stop");
    assert_eq!(rounds.get(), 20_000);
    let r = result.borrow_mut().take().unwrap();
    assert!(r.best_move.is_some());
    assert!(stop.is_stopped());
}

#[test]
fn a_panicking_task_does_not_take_the_others_down() {
    let net = Network::default_network();
    let mut s = scheduler(&net, 64);
    let done = Rc::new(Cell::new(false));
    s.spawn(|| {
        batched::yield_now();
        panic!("deliberate test panic in a task");
    });
    {
        let (net, done) = (net.clone(), done.clone());
        s.spawn(move || {
            let mut engine = batched::engine(EngineOptions::default(), net);
            let pos = Position::startpos();
            let r = engine.search_inline(
                &pos,
                &[],
                SearchLimits::depth(5),
                &StopHandle::new(),
                |_| {},
                &Tasks,
            );
            done.set(r.best_move.is_some());
        });
    }
    s.run_to_end();
    assert!(done.get());
    assert_eq!(s.stats().tasks_panicked, 1);
    assert_eq!(s.stats().tasks_finished, 1);
}

/// Outside a scheduler `Tasks` runs nothing aside, so `search_inline` on a plain thread is the
/// one-thread search itself: a game's moves searched one after another with one engine (its
/// table and histories carried from move to move, as `chess-train datagen` plays) find exactly
/// what `Engine::search` finds.
#[test]
fn search_inline_outside_a_scheduler_plays_what_search_plays() {
    let net = Network::default_network();
    let engine = || {
        let n = net.clone();
        Engine::with_evaluator(EngineOptions::default(), move || {
            Box::new(NnueEval::new(n.clone()))
        })
    };
    let (mut threaded, mut inline) = (engine(), engine());
    let mut pos = Position::from_fen(FENS[1]).unwrap();
    let mut history = Vec::new();
    for _ in 0..12 {
        let limits = SearchLimits::nodes(3000);
        let a = threaded.search(&pos, &history, limits.clone());
        let b = inline.search_inline(&pos, &history, limits, &StopHandle::new(), |_| {}, &Tasks);
        assert_eq!(a.fingerprint(), b.fingerprint(), "{}", pos.fen());
        let Some(m) = a.best_move else { break };
        history.push(pos.zobrist());
        pos = pos.play(m).unwrap();
    }
}

#[test]
#[should_panic(expected = "one batch scheduler per thread")]
fn one_scheduler_per_thread() {
    let net = Network::default_network();
    let _a = scheduler(&net, 1);
    let _b = scheduler(&net, 1);
}

#[test]
fn leaf_eval_outside_a_task_evaluates_directly() {
    use chess_search::Evaluator;
    let net = Network::default_network();
    let mut e = batched::LeafEval::new(net.clone());
    for pos in positions() {
        assert_eq!(e.evaluate(&pos), net.evaluate(&pos));
    }
    assert!(!batched::in_task());
}
