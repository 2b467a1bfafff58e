//! Special functions over arrays: digamma, ln Gamma, trigamma and their differences.

use super::codes::{DIGAMMA_DIFFERENCE};
use super::{f64s, f64s_mut};
use fedmix_core::special;

/// In-place digamma over n values (vectorized in the SIMD build).
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_digamma(p: *mut f64, n: usize) {
    special::digamma_in_place(f64s_mut(p, n));
}

/// In-place ln |Gamma| over n values.
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_lgamma(p: *mut f64, n: usize) {
    special::lgamma_in_place(f64s_mut(p, n));
}

/// In-place trigamma over n values.
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_trigamma(p: *mut f64, n: usize) {
    special::trigamma_in_place(f64s_mut(p, n));
}

/// out[i] = psi(x[i] + n[i]) - psi(x[i]) (`which` DIGAMMA_DIFFERENCE), or
/// ln Gamma(x[i] + n[i]) - ln Gamma(x[i]) (LGAMMA_DIFFERENCE, or any other
/// code); NaN outside x > 0, n >= 0.
///
/// # Safety
/// Pointers cover len values.
pub unsafe extern "C" fn fm_gamma_differences(which: i32, x: *const f64, nv: *const f64, out: *mut f64, len: usize) {
    let f = if which == DIGAMMA_DIFFERENCE { special::digamma_diff } else { special::ln_rising_factorial };
    for ((o, &a), &b) in f64s_mut(out, len).iter_mut().zip(f64s(x, len)).zip(f64s(nv, len)) {
        *o = f(a, b);
    }
}
