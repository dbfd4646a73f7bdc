//! The inner loops: accumulator row updates and the SCReLU output sum.
//!
//! Written as straight loops (row updates over fixed-size chunks of `i16`, the output sum as one
//! flat reduction; no intrinsics, no `unsafe`) so that the compiler vectorises them for
//! whatever target features the function they are inlined into has: `simd.rs` compiles them
//! once more for AVX2 and once for AVX-512 and picks one at run time; the portable path is
//! this same code for the build's own target. Every accumulator length is a multiple of [`CHUNK`] (the format requires the
//! hidden size to be a multiple of 16), so there is never a remainder to handle.
//!
//! Checked in the generated assembly:
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false RUSTFLAGS=--emit=asm cargo build --release -p chess-nn
//! grep -oE '^\s+v?p[a-z]+' target/release/deps/chess_nn-*.s | sort | uniq -c
//! ```
//!
//! (LTO off: with the release profile's thin LTO the crate's own `.s` is the pre-link code,
//! which LLVM has not vectorised yet.) On the baseline x86-64 target (SSE2) the row updates
//! compile to `paddw`/`psubw` on `xmm` registers and the small-weight output sum to
//! `pmaxsw`/`pminsw` (the clamp), `pmullw` (`c * w`) and `pmaddwd` (`* c` and the sum); with
//! `-C target-cpu=x86-64-v3` the same code becomes `vpaddw`/`vpsubw`, `vpmaxsw`/`vpminsw`,
//! `vpmullw` and `vpmaddwd` on `ymm` registers.

// The inner loops copy each chunk into a local array before computing and store it back
// whole: with references into two slices the compiler must assume a store may change a later
// load (aliasing) and keeps the loop scalar; with values it emits packed instructions.

/// Values processed per step of the inner loops.
pub(crate) const CHUNK: usize = 16;

#[inline(always)]
fn chunks(s: &[i16]) -> &[[i16; CHUNK]] {
    let (c, rest) = s.as_chunks::<CHUNK>();
    debug_assert!(rest.is_empty());
    c
}

#[inline(always)]
fn chunks_mut(s: &mut [i16]) -> &mut [[i16; CHUNK]] {
    let (c, rest) = s.as_chunks_mut::<CHUNK>();
    debug_assert!(rest.is_empty());
    c
}

/// `acc += row`, wrapping.
#[inline(always)]
pub(crate) fn add_row(acc: &mut [i16], row: &[i16]) {
    for (a, r) in chunks_mut(acc).iter_mut().zip(chunks(row)) {
        let (mut v, r) = (*a, *r);
        for i in 0..CHUNK {
            v[i] = v[i].wrapping_add(r[i]);
        }
        *a = v;
    }
}

/// `out = biases + sum of the rows of `features``, where feature `f`'s row is
/// `weights[f * hidden..(f + 1) * hidden]`: a refresh ([`accumulate_diff`] with nothing to
/// take away).
#[inline(always)]
pub(crate) fn accumulate(
    out: &mut [i16],
    biases: &[i16],
    weights: &[i16],
    hidden: usize,
    features: &[u16],
) {
    accumulate_diff(out, biases, weights, hidden, features, &[]);
}

const WIDE: usize = 64;

/// `out = start + sum of the rows of `adds` - sum of the rows of `subs``: a refresh from the
/// biases or from an accumulator computed before (the refresh cache's step). Chunk-major, so
/// each chunk of the sum stays in registers while the rows are added to it and is stored
/// once; 64 values at a time where the hidden size allows (fewer loop steps), else 16.
#[inline(always)]
pub(crate) fn accumulate_diff(
    out: &mut [i16],
    start: &[i16],
    weights: &[i16],
    hidden: usize,
    adds: &[u16],
    subs: &[u16],
) {
    if hidden.is_multiple_of(WIDE) {
        accumulate_diff_by::<WIDE>(out, start, weights, hidden, adds, subs);
    } else {
        accumulate_diff_by::<CHUNK>(out, start, weights, hidden, adds, subs);
    }
}

#[inline(always)]
fn accumulate_diff_by<const N: usize>(
    out: &mut [i16],
    start: &[i16],
    weights: &[i16],
    hidden: usize,
    adds: &[u16],
    subs: &[u16],
) {
    let outs = out.as_chunks_mut::<N>().0;
    let starts = start.as_chunks::<N>().0;
    for (j, (o, b)) in outs.iter_mut().zip(starts).enumerate() {
        let mut v = *b;
        for &f in adds {
            let at = usize::from(f) * hidden + j * N;
            let r: [i16; N] = weights[at..at + N].try_into().unwrap();
            for i in 0..N {
                v[i] = v[i].wrapping_add(r[i]);
            }
        }
        for &f in subs {
            let at = usize::from(f) * hidden + j * N;
            let r: [i16; N] = weights[at..at + N].try_into().unwrap();
            for i in 0..N {
                v[i] = v[i].wrapping_sub(r[i]);
            }
        }
        *o = v;
    }
}

/// `acc -= row`, wrapping.
#[inline(always)]
pub(crate) fn sub_row(acc: &mut [i16], row: &[i16]) {
    for (a, r) in chunks_mut(acc).iter_mut().zip(chunks(row)) {
        let (mut v, r) = (*a, *r);
        for i in 0..CHUNK {
            v[i] = v[i].wrapping_sub(r[i]);
        }
        *a = v;
    }
}

/// `out = src + a0 - s0`: a quiet move, in one pass.
#[inline(always)]
fn add1_sub1(out: &mut [i16], src: &[i16], a0: &[i16], s0: &[i16]) {
    for (((o, s), a), r) in chunks_mut(out)
        .iter_mut()
        .zip(chunks(src))
        .zip(chunks(a0))
        .zip(chunks(s0))
    {
        let (s, a, r) = (*s, *a, *r);
        let mut v = [0i16; CHUNK];
        for i in 0..CHUNK {
            v[i] = s[i].wrapping_add(a[i]).wrapping_sub(r[i]);
        }
        *o = v;
    }
}

/// `out = src + a0 - s0 - s1`: a capture (or en passant), in one pass.
#[inline(always)]
fn add1_sub2(out: &mut [i16], src: &[i16], a0: &[i16], s0: &[i16], s1: &[i16]) {
    for ((((o, s), a), r0), r1) in chunks_mut(out)
        .iter_mut()
        .zip(chunks(src))
        .zip(chunks(a0))
        .zip(chunks(s0))
        .zip(chunks(s1))
    {
        let (s, a, r0, r1) = (*s, *a, *r0, *r1);
        let mut v = [0i16; CHUNK];
        for i in 0..CHUNK {
            v[i] = s[i]
                .wrapping_add(a[i])
                .wrapping_sub(r0[i])
                .wrapping_sub(r1[i]);
        }
        *o = v;
    }
}

/// `out = src + a0 + a1 - s0 - s1`: castling, in one pass.
#[inline(always)]
fn add2_sub2(out: &mut [i16], src: &[i16], adds: [&[i16]; 2], subs: [&[i16]; 2]) {
    for (((((o, s), a0), a1), r0), r1) in chunks_mut(out)
        .iter_mut()
        .zip(chunks(src))
        .zip(chunks(adds[0]))
        .zip(chunks(adds[1]))
        .zip(chunks(subs[0]))
        .zip(chunks(subs[1]))
    {
        let (s, a0, a1, r0, r1) = (*s, *a0, *a1, *r0, *r1);
        let mut v = [0i16; CHUNK];
        for i in 0..CHUNK {
            v[i] = s[i]
                .wrapping_add(a0[i])
                .wrapping_add(a1[i])
                .wrapping_sub(r0[i])
                .wrapping_sub(r1[i]);
        }
        *o = v;
    }
}

/// `out = src + sum(adds) - sum(subs)`, fused into one pass for the shapes moves have.
#[inline(always)]
pub(crate) fn copy_update(out: &mut [i16], src: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
    match (adds, subs) {
        ([a], [s]) => add1_sub1(out, src, a, s),
        ([a], [s0, s1]) => add1_sub2(out, src, a, s0, s1),
        ([a0, a1], [s0, s1]) => add2_sub2(out, src, [a0, a1], [s0, s1]),
        _ => {
            out.copy_from_slice(src);
            for a in adds {
                add_row(out, a);
            }
            for s in subs {
                sub_row(out, s);
            }
        }
    }
}

/// `sum over i of (clamp(acc[i], 0, qa) * w[i]) * clamp(acc[i], 0, qa)`, wrapping in `i32`.
///
/// `small_weights` promises `|w| * qa <= 32767` for every weight, so that `c * w` fits an
/// `i16` and the loop maps onto `pmullw` + `pmaddwd`; the result is the same as the general
/// path's (which multiplies in `i32`) bit for bit. Wrapping addition is associative, so the
/// order of the sum (vector lanes, GPU reductions) never changes the result.
#[inline(always)]
pub(crate) fn screlu_sum(acc: &[i16], w: &[i16], qa: i16, small_weights: bool) -> i32 {
    if small_weights {
        screlu_sum_small(acc, w, qa)
    } else {
        screlu_sum_wide(acc, w, qa)
    }
}

#[inline(always)]
fn screlu_sum_small(acc: &[i16], w: &[i16], qa: i16) -> i32 {
    // One flat reduction (not chunked): the form the loop vectoriser turns into `pmaddwd`.
    let mut sum = 0i32;
    for (&a, &w) in acc.iter().zip(w) {
        let c = a.max(0).min(qa);
        sum = sum.wrapping_add(i32::from(c.wrapping_mul(w)).wrapping_mul(i32::from(c)));
    }
    sum
}

#[inline(always)]
fn screlu_sum_wide(acc: &[i16], w: &[i16], qa: i16) -> i32 {
    let mut sum = 0i32;
    for (&a, &w) in acc.iter().zip(w) {
        let c = i32::from(a.max(0).min(qa));
        sum = sum.wrapping_add(c.wrapping_mul(i32::from(w)).wrapping_mul(c));
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for test data.
    fn values(seed: u64, n: usize, range: i32) -> Vec<i16> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s % (2 * range as u64 + 1)) as i32 - range) as i16
            })
            .collect()
    }

    #[test]
    fn small_and_wide_paths_agree() {
        for seed in 1..50 {
            let acc = values(seed, 256, 400);
            let w = values(seed * 7 + 3, 256, 128);
            assert_eq!(
                screlu_sum_small(&acc, &w, 255),
                screlu_sum_wide(&acc, &w, 255)
            );
        }
    }

    #[test]
    fn wide_path_wraps() {
        // 32 terms of 255 * 255 * 32767 overflow i32; the definition wraps.
        let acc = vec![300i16; 32];
        let w = vec![i16::MAX; 32];
        let term = 255i64 * 255 * 32767;
        let expected = (term * 32) as i32;
        assert_eq!(screlu_sum_wide(&acc, &w, 255), expected);
    }

    #[test]
    fn accumulate_matches_row_by_row() {
        let hidden = 48;
        let weights = values(3, 10 * hidden, 30000);
        let biases = values(4, hidden, 30000);
        let features = [3u16, 0, 9, 3];
        let mut fast = vec![0; hidden];
        accumulate(&mut fast, &biases, &weights, hidden, &features);
        let mut slow = biases.clone();
        for f in features {
            let f = usize::from(f);
            add_row(&mut slow, &weights[f * hidden..(f + 1) * hidden]);
        }
        assert_eq!(fast, slow);
    }

    #[test]
    fn fused_updates_match_row_by_row() {
        let src = values(11, 64, 30000);
        let rows: Vec<Vec<i16>> = (0..4).map(|i| values(20 + i, 64, 30000)).collect();
        let shapes: [(usize, usize); 5] = [(1, 1), (1, 2), (2, 2), (0, 0), (2, 1)];
        for (na, ns) in shapes {
            let adds: Vec<&[i16]> = rows[..na].iter().map(Vec::as_slice).collect();
            let subs: Vec<&[i16]> = rows[2..2 + ns].iter().map(Vec::as_slice).collect();
            let mut fused = vec![0; 64];
            copy_update(&mut fused, &src, &adds, &subs);
            let mut slow = src.clone();
            adds.iter().for_each(|a| add_row(&mut slow, a));
            subs.iter().for_each(|s| sub_row(&mut slow, s));
            assert_eq!(fused, slow, "{na} adds, {ns} subs");
        }
    }
}
