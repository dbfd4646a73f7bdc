//! The seeded generator of openings and shuffles (chess-search's SplitMix64), and the two
//! draws training needs from it.

pub use chess_search::SplitMix64 as Rng;

/// Uniform in `[-a, a)`, with 24 bits of resolution.
pub fn uniform(rng: &mut Rng, a: f32) -> f32 {
    let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    (unit * 2.0 - 1.0) * a
}

/// The seed of game number `index` of a run seeded with `seed`: each game differs, and a
/// resumed run plays the same games an uninterrupted one would have.
pub fn game_seed(seed: u64, index: u64) -> u64 {
    Rng::new(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}
