//! Relaxed SIMD's fused multiply-adds (f32x4.relaxed_madd, f64x2.relaxed_madd),
//! for the third build only (`--cfg fedmix_relaxed`, scripts/build-wasm.sh).
//! rustc 1.63 has no intrinsics for them; LLVM 14 has its own (`llvm.wasm.fma`),
//! which it writes with the proposal's prototype opcodes, renumbered to the final
//! ones after the build (scripts/wasm-relaxed-renumber.mjs). An engine computes
//! a * b + c with one rounding where it has FMA, two where it has not: results
//! differ from the SIMD128 build's by rounding, and may differ between engines.
use core::arch::wasm32::v128;
use core::mem::transmute;

#[repr(simd)]
#[derive(Copy, Clone)]
struct F32x4(f32, f32, f32, f32);
#[repr(simd)]
#[derive(Copy, Clone)]
struct F64x2(f64, f64);

#[allow(improper_ctypes)]
extern "C" {
    #[link_name = "llvm.wasm.fma.v4f32"]
    fn fma_f32x4(a: F32x4, b: F32x4, c: F32x4) -> F32x4;
    #[link_name = "llvm.wasm.fma.v2f64"]
    fn fma_f64x2(a: F64x2, b: F64x2, c: F64x2) -> F64x2;
}

/// a * b + c on four f32 lanes.
#[inline(always)]
pub(crate) fn f32x4_madd(a: v128, b: v128, c: v128) -> v128 {
    // v128 and the vector types are the same 16 bytes; the transmutes are no instructions
    unsafe { transmute(fma_f32x4(transmute(a), transmute(b), transmute(c))) }
}

/// a * b + c on two f64 lanes.
#[inline(always)]
#[allow(dead_code)]
pub(crate) fn f64x2_madd(a: v128, b: v128, c: v128) -> v128 {
    unsafe { transmute(fma_f64x2(transmute(a), transmute(b), transmute(c))) }
}
