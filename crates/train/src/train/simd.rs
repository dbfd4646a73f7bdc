//! The trainer's inner loops compiled for the CPU's vector instructions, chosen at run time.
//!
//! The gradient and Adam loops are plain element-wise loops over `f32` (no reductions whose
//! order a wider vector would change), which the compiler vectorises for whatever target
//! features the function they are inlined into has. A release build for baseline x86-64 only
//! has SSE2, so each kernel here is compiled a second and a third time, inside functions
//! marked `#[target_feature(enable = "avx2")]` and with the AVX-512 set chess-nn uses, and
//! called through the copy a [`Simd`] names. Every copy does the same float operations in the
//! same order (Rust never fuses a multiply and an add on its own), so a training run gives the
//! same network to the bit on every path (tested by forcing each path the machine has).
//! `CHESS_NN_SIMD=portable|avx2|avx512` caps the choice, as for the engine.

use chess_nn::Simd;

use super::dataset::Dataset;
use super::model::FloatNet;
use super::optimiser::{GradPart, Trainer};

/// For each kernel, a copy per instruction set and a function that picks one by `Simd`. The
/// kernels are `#[inline(always)]`, so each copy holds the whole loop nest.
macro_rules! multiversion {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* ) => $body:expr ; )*) => {
        #[cfg(target_arch = "x86_64")]
        mod avx2 {
            use super::*;
            $(
                #[target_feature(enable = "avx2")]
                pub(super) fn $name($($arg: $ty),*) {
                    $body
                }
            )*
        }

        #[cfg(target_arch = "x86_64")]
        mod avx512 {
            use super::*;
            $(
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
                pub(super) fn $name($($arg: $ty),*) {
                    $body
                }
            )*
        }

        $(
            /// The kernel on `simd`'s instructions; `simd` must be available on this CPU
            /// ([`Simd::detect`] gives such one).
            pub(super) fn $name(simd: Simd, $($arg: $ty),*) {
                assert!(simd.is_available(), "{simd} is not available on this CPU");
                match simd {
                    // SAFETY: the CPU has the path's instructions (asserted above).
                    #[cfg(target_arch = "x86_64")]
                    Simd::Avx512 => unsafe { avx512::$name($($arg),*) },
                    // SAFETY: as above.
                    #[cfg(target_arch = "x86_64")]
                    Simd::Avx2 => unsafe { avx2::$name($($arg),*) },
                    _ => $body,
                }
            }
        )*
    };
}

multiversion! {
    fn add_batch(part: &mut GradPart, net: &FloatNet, set: &Dataset, idx: &[u32], scale: f32)
        => part.add_batch(net, set, idx, scale);
    fn step(trainer: &mut Trainer, grad: &mut FloatNet, touched: &mut [bool], list: &mut Vec<u16>, lr: f32, out_limit: i32)
        => trainer.step(grad, touched, list, lr, out_limit);
}
