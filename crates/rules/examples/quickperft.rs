use chess_rules::{Position, perft};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fen = args
        .get(1)
        .map(String::as_str)
        .unwrap_or(chess_rules::STARTPOS_FEN);
    let depth: u32 = args.get(2).and_then(|d| d.parse().ok()).unwrap_or(5);
    let pos = Position::from_fen(fen).unwrap();
    let t = std::time::Instant::now();
    let n = perft(&pos, depth);
    let s = t.elapsed().as_secs_f64();
    println!("{n} nodes {:.1} Mnps", n as f64 / s / 1e6);
}
