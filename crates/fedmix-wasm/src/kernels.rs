//! Kernels exposed for tests and benchmarks.

use super::f64s_mut;
use fedmix_core::kernels;

/// In-place vectorized exp over `n` values (exposed for tests and benchmarks).
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_exp(p: *mut f64, n: usize) {
    kernels::exp_in_place(f64s_mut(p, n));
}

/// Floating-point operations of `iters` rounds of independent multiply-adds;
/// timed from JavaScript to measure the machine's SIMD peak.
pub extern "C" fn fm_madd_peak(iters: f64, seed: f64) -> f64 {
    let mut sink = 0.0;
    let flops = kernels::madd_peak(iters as u64, seed, &mut sink);
    if sink == 1.2345 {
        return -flops; // never true; keeps the loop observable
    }
    flops
}
