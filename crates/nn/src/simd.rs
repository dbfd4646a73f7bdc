//! Which vector instructions the inner loops use, chosen at run time from the CPU's features.
//!
//! The kernels (`kernels.rs`) are plain loops the compiler vectorises for whatever target
//! features a function is compiled with. A release build for baseline x86-64 only has SSE2, so
//! the same loops are compiled a second and a third time here, inside functions marked
//! `#[target_feature(enable = "avx2")]` and `"avx512bw"`: on those the compiler emits `ymm` and
//! `zmm` instructions. Which copy runs is decided once, when a [`Network`](crate::Network) is
//! built, from `is_x86_feature_detected!`; every copy computes the same wrapping integer
//! arithmetic, so the results are bit for bit the same on every path (tested by forcing each
//! path the machine can run). On aarch64 the baseline already has NEON, so the portable copy is
//! the NEON one.
//!
//! `CHESS_NN_SIMD=portable|avx2|avx512` caps the choice (to measure one path against another);
//! a path the CPU lacks is never used whatever the variable says.

use std::fmt;

/// A set of vector instructions the kernels can be compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Simd {
    /// The build's own target: SSE2 on x86-64, NEON on aarch64, scalar elsewhere.
    Portable,
    /// AVX2 (x86-64, 256-bit vectors).
    Avx2,
    /// AVX-512 with byte and word instructions (x86-64, 512-bit vectors).
    Avx512,
}

impl Simd {
    /// Every path, narrowest first.
    pub const ALL: [Simd; 3] = [Simd::Portable, Simd::Avx2, Simd::Avx512];

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        match self {
            Simd::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx2")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The paths this CPU can run, narrowest first.
    pub fn available() -> Vec<Simd> {
        Simd::ALL.into_iter().filter(|s| s.is_available()).collect()
    }

    /// The widest path this CPU runs, capped by `CHESS_NN_SIMD` when it names one.
    pub fn detect() -> Simd {
        let cap = std::env::var("CHESS_NN_SIMD")
            .ok()
            .and_then(|v| Simd::parse(&v))
            .unwrap_or(Simd::Avx512);
        Simd::available()
            .into_iter()
            .filter(|&s| s <= cap)
            .max()
            .unwrap_or(Simd::Portable)
    }

    /// `portable` (also `sse2`, `neon`, `scalar`), `avx2` or `avx512`.
    pub fn parse(text: &str) -> Option<Simd> {
        match text.trim().to_ascii_lowercase().as_str() {
            "portable" | "sse2" | "neon" | "scalar" => Some(Simd::Portable),
            "avx2" => Some(Simd::Avx2),
            "avx512" => Some(Simd::Avx512),
            _ => None,
        }
    }

    /// The name of the instructions this path uses on this build: `sse2`, `neon` or `scalar`
    /// for the portable path, else `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Portable if cfg!(target_arch = "x86_64") => "sse2",
            Simd::Portable if cfg!(target_arch = "aarch64") => "neon",
            Simd::Portable => "scalar",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// For each kernel, a copy per instruction set and a function that picks one by `Simd`.
macro_rules! multiversion {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* ) $(-> $ret:ty)? ; )*) => {
        #[cfg(target_arch = "x86_64")]
        mod avx2 {
            $(
                #[target_feature(enable = "avx2")]
                pub(super) fn $name($($arg: $ty),*) $(-> $ret)? {
                    crate::kernels::$name($($arg),*)
                }
            )*
        }

        #[cfg(target_arch = "x86_64")]
        mod avx512 {
            $(
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
                pub(super) fn $name($($arg: $ty),*) $(-> $ret)? {
                    crate::kernels::$name($($arg),*)
                }
            )*
        }

        $(
            #[inline]
            pub(crate) fn $name(simd: Simd, $($arg: $ty),*) $(-> $ret)? {
                match simd {
                    // SAFETY: a `Network` only ever holds a `Simd` that `is_available` on this
                    // CPU (`Simd::detect`, `Network::with_simd`), and the kernels get theirs
                    // from the network.
                    #[cfg(target_arch = "x86_64")]
                    Simd::Avx512 => unsafe { avx512::$name($($arg),*) },
                    // SAFETY: as above.
                    #[cfg(target_arch = "x86_64")]
                    Simd::Avx2 => unsafe { avx2::$name($($arg),*) },
                    _ => crate::kernels::$name($($arg),*),
                }
            }
        )*
    };
}

multiversion! {
    fn add_row(acc: &mut [i16], row: &[i16]);
    fn sub_row(acc: &mut [i16], row: &[i16]);
    fn accumulate(out: &mut [i16], biases: &[i16], weights: &[i16], hidden: usize, features: &[u16]);
    fn accumulate_diff(out: &mut [i16], start: &[i16], weights: &[i16], hidden: usize, adds: &[u16], subs: &[u16]);
    fn copy_update(out: &mut [i16], src: &[i16], adds: &[&[i16]], subs: &[&[i16]]);
    fn screlu_sum(acc: &[i16], w: &[i16], qa: i16, small_weights: bool) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portable_path_is_always_there_and_detect_picks_an_available_one() {
        assert!(Simd::Portable.is_available());
        assert!(Simd::detect().is_available());
        assert_eq!(Simd::available()[0], Simd::Portable);
        for s in Simd::ALL {
            assert_eq!(Simd::parse(s.name()), Some(s));
        }
        assert_eq!(Simd::parse("avx1024"), None);
    }

    /// Every kernel gives the same answer on every path this CPU has.
    #[test]
    fn every_path_computes_the_same() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = |n: usize, range: i64| -> Vec<i16> {
            (0..n)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    ((seed % (2 * range as u64 + 1)) as i64 - range) as i16
                })
                .collect()
        };
        let hidden = 128;
        let weights = values(40 * hidden, 32000);
        let biases = values(hidden, 32000);
        let rows: Vec<Vec<i16>> = (0..4).map(|_| values(hidden, 32000)).collect();
        let src = values(hidden, 32000);
        let acc = values(hidden, 600);
        let w = values(hidden, 128);
        let features = [1u16, 7, 39, 0, 22];
        let answers = |simd: Simd| {
            let mut a = src.clone();
            add_row(simd, &mut a, &rows[0]);
            sub_row(simd, &mut a, &rows[1]);
            let mut b = vec![0; hidden];
            accumulate(simd, &mut b, &biases, &weights, hidden, &features);
            let mut c = vec![0; hidden];
            let adds: Vec<&[i16]> = rows[..2].iter().map(Vec::as_slice).collect();
            let subs: Vec<&[i16]> = rows[2..].iter().map(Vec::as_slice).collect();
            copy_update(simd, &mut c, &src, &adds[..1], &subs[..1]);
            let mut d = vec![0; hidden];
            copy_update(simd, &mut d, &src, &adds, &subs);
            let mut e = vec![0; hidden];
            accumulate_diff(simd, &mut e, &src, &weights, hidden, &features, &[3, 39]);
            d.extend_from_slice(&e);
            let s = (
                screlu_sum(simd, &acc, &w, 255, true),
                screlu_sum(simd, &acc, &w, 255, false),
            );
            (a, b, c, d, s)
        };
        let reference = answers(Simd::Portable);
        for simd in Simd::available() {
            assert_eq!(answers(simd), reference, "{simd}");
        }
    }
}
