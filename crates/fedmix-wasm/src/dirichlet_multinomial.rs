//! The Dirichlet-multinomial log-pmf.

use super::{f64s, f64s_mut, status};
use fedmix_core::dirichlet_multinomial;

/// Dirichlet-multinomial log-pmf of m count vectors (m x c, row-major) under k
/// parameter vectors (k x c) into out (m x k), with the multinomial coefficient
/// when `with_coefficient` is 1.
///
/// # Safety
/// Pointers cover the shapes given.
pub unsafe extern "C" fn fm_dm_log_pmf(counts: *const f64, m: usize, c: usize, alphas: *const f64, k: usize, with_coefficient: i32, out: *mut f64) -> i32 {
    status(|| dirichlet_multinomial::log_pmf(f64s(counts, m * c), m, c, f64s(alphas, k * c), k, with_coefficient != 0, f64s_mut(out, m * k)))
}
