//! A fitted mixture as an opaque handle: made by the core module (fits,
//! imports) and by the dem module (distributed EM's server steps), read and
//! freed by the core's fm_gmm_* (one heap, see heap.rs; one layout, repr(C)).

use super::{data, f64s_mut, optional, seed, status};
use fedmix_core::gmm::fit::{FitOptions, FitResult, InitParams};
use fedmix_core::{Data, Result, Rng};
use fedmix_core::gmm::stats::{wire_s2_len, SuffStats};
use fedmix_core::gmm::{CovarianceType, Gmm};

/// A fitted Gaussian mixture and its fit statistics, owned by TypeScript.
#[repr(C)]
pub struct GmmHandle {
    pub(crate) gmm: Gmm,
    pub(crate) converged: bool,
    pub(crate) n_iter: usize,
    pub(crate) lower_bound: f64,
}

pub(crate) fn into_handle(h: GmmHandle, out: *mut usize) {
    unsafe { *out = Box::into_raw(Box::new(h)) as usize };
}

/// A fit's core function: fedmix_core::gmm::fit::fit (float64) or gmm::float32::fit.
pub(crate) type Fitter = fn(&Data<'_>, &FitOptions, Option<(&Gmm, f64)>, &mut Rng) -> Result<FitResult>;

/// fm_gmm_fit and fm_gmm_fit_f32: reads their arguments (fit_options), fits
/// with `fitter` and writes the new handle to `out_handle`.
///
/// # Safety
/// As fm_gmm_fit.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn fit_into_handle(
    fitter: Fitter,
    x: *const f64,
    options: *const crate::GmmFitOptions,
    weights_init: *const f64,
    means_init: *const f64,
    precisions_init: *const f64,
    warm: *const GmmHandle,
    out_handle: *mut usize,
) -> i32 {
    status(|| {
        let (opts, n, d, seed) = fit_options(options, weights_init, means_init, precisions_init)?;
        let warm = warm.as_ref().map(|h| (&h.gmm, h.lower_bound));
        let r = fitter(&data(x, n, d)?, &opts, warm, &mut Rng::new(seed))?;
        into_handle(GmmHandle { gmm: r.gmm, converged: r.converged, n_iter: r.n_iter, lower_bound: r.lower_bound }, out_handle);
        Ok(())
    })
}

/// Lengths of sufficient statistics in wire form: nk (k), s1 (k x d) and s2
/// (a full matrix as its packed upper triangle, see wire_s2_len).
pub(crate) fn stats_wire_lens(t: CovarianceType, k: usize, d: usize) -> (usize, usize, usize) {
    (k, k * d, wire_s2_len(t, k, d))
}

/// Writes sufficient statistics in wire form (stats_wire_lens).
///
/// # Safety
/// Pointers cover the lengths.
pub(crate) unsafe fn write_stats(s: &SuffStats, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64) {
    let (a, b, c) = stats_wire_lens(s.cov_type, s.k, s.d);
    f64s_mut(out_nk, a).copy_from_slice(&s.nk);
    f64s_mut(out_s1, b).copy_from_slice(&s.s1);
    s.s2_wire_into(f64s_mut(out_s2, c));
}

/// fm_gmm_fit's options as the core takes them, and the seed (fm_gmm_fit, and fm_gmm_initial of EM over row shards).
pub(crate) unsafe fn fit_options(
    options: *const crate::GmmFitOptions,
    weights_init: *const f64,
    means_init: *const f64,
    precisions_init: *const f64,
) -> Result<(FitOptions, usize, usize, u64)> {
    let crate::GmmFitOptions { n, d, k, cov_type, tol, reg_covar, max_iter, n_init, init_params, weights_init_len, means_init_len, precisions_init_len, seed_lo, seed_hi } = *options;
    let opts = FitOptions {
        n_components: k as usize,
        covariance_type: CovarianceType::from_code(cov_type)?,
        tol,
        reg_covar,
        max_iter: max_iter as usize,
        n_init: n_init as usize,
        init_params: InitParams::from_code(init_params)?,
        weights_init: optional(weights_init, weights_init_len as usize)?,
        means_init: optional(means_init, means_init_len as usize)?,
        precisions_init: optional(precisions_init, precisions_init_len as usize)?,
    };
    Ok((opts, n as usize, d as usize, seed(seed_lo, seed_hi)))
}
