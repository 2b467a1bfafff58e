//! Gaussian mixtures: fitting, models from their parameters, reading them
//! back, scoring, prediction and sampling, over opaque handles TypeScript frees.

use super::gmm_handle::{fit_into_handle, fit_options, into_handle, GmmHandle};
use super::{buffers, data, f64s, f64s_mut, optional, seed, status, u32s_mut};
use fedmix_core::gmm::fit;
use fedmix_core::gmm::{estep, sample, CovarianceType, Gmm};
use fedmix_core::{Data, Error, Result, Rng};


/// # Safety
/// Pointers must cover the shapes given; `warm` is 0 or a live handle.
pub unsafe extern "C" fn fm_gmm_fit(
    x: *const f64,
    options: *const crate::GmmFitOptions,
    weights_init: *const f64,
    means_init: *const f64,
    precisions_init: *const f64,
    warm: *const GmmHandle,
    out_handle: *mut usize,
) -> i32 {
    fit_into_handle(fit::fit, x, options, weights_init, means_init, precisions_init, warm, out_handle)
}

/// After fm_gmm_fit's checks, the model its restart `run` (from 0) starts EM
/// from (a copy of `warm` when given): EM over row shards starts there
/// (fm_gmm_shard_stats, fm_gmm_em_step).
///
/// # Safety
/// As fm_gmm_fit.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gmm_initial(
    x: *const f64,
    options: *const crate::GmmFitOptions,
    weights_init: *const f64,
    means_init: *const f64,
    precisions_init: *const f64,
    warm: *const GmmHandle,
    run: usize,
    out_handle: *mut usize,
) -> i32 {
    status(|| {
        let (opts, n, d, seed) = fit_options(options, weights_init, means_init, precisions_init)?;
        let gmm = fit::initial_model(&data(x, n, d)?, &opts, warm.as_ref().map(|h| &h.gmm), run, &mut Rng::new(seed))?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })
}


/// A model from a saved file (JSON import): `precisions_chol` or
/// `covariances` may be null, not both (Gmm::from_saved).
///
/// # Safety
/// Pointers must cover the shapes given.
pub unsafe extern "C" fn fm_gmm_from_parts(
    options: *const crate::GmmFromPartsOptions,
    weights: *const f64,
    means: *const f64,
    precisions_chol: *const f64,
    covariances: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::GmmFromPartsOptions { cov_type, k, d, weights_len, means_len, precisions_chol_len, covariances_len } = *options;
    let k = k as usize; let d = d as usize; let weights_len = weights_len as usize; let means_len = means_len as usize; let precisions_chol_len = precisions_chol_len as usize; let covariances_len = covariances_len as usize;
    status(|| {
        let t = CovarianceType::from_code(cov_type)?;
        let gmm = Gmm::from_saved(
            t,
            k,
            d,
            buffers::copy(f64s(weights, weights_len))?,
            buffers::copy(f64s(means, means_len))?,
            optional(precisions_chol, precisions_chol_len)?,
            optional(covariances, covariances_len)?,
        )?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })
}

/// A model from weights, means and covariances (what federated clients send),
/// rejecting a covariance that is not positive definite.
///
/// # Safety
/// Pointers cover their lengths.
pub unsafe extern "C" fn fm_gmm_from_covariances(
    options: *const crate::GmmFromCovariancesOptions,
    weights: *const f64,
    means: *const f64,
    covariances: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::GmmFromCovariancesOptions { cov_type, k, d, weights_len, means_len, covariances_len } = *options;
    let k = k as usize; let d = d as usize; let weights_len = weights_len as usize; let means_len = means_len as usize; let covariances_len = covariances_len as usize;
    status(|| {
        let t = CovarianceType::from_code(cov_type)?;
        let gmm = Gmm::from_covariances(
            t,
            k,
            d,
            buffers::copy(f64s(weights, weights_len))?,
            buffers::copy(f64s(means, means_len))?,
            buffers::copy(f64s(covariances, covariances_len))?,
        )?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })
}

/// # Safety
/// `h` is a live handle; it is dead afterwards.
pub unsafe extern "C" fn fm_gmm_free(h: *mut GmmHandle) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Writes [k, d, covariance type, converged, n_iter, lower_bound, n_parameters].
///
/// # Safety
/// `h` is a live handle, `out` holds 7 values.
pub unsafe extern "C" fn fm_gmm_info(h: *const GmmHandle, out: *mut f64) {
    let h = &*h;
    let g = &h.gmm;
    let v = [g.k as f64, g.d as f64, g.cov_type.code() as f64, h.converged as i32 as f64, h.n_iter as f64, h.lower_bound, g.n_parameters() as f64];
    f64s_mut(out, 7).copy_from_slice(&v);
}

/// Codes of the parameter arrays fm_gmm_read copies out.
pub(crate) const READ_WEIGHTS: i32 = 0;
pub(crate) const READ_MEANS: i32 = 1;
pub(crate) const READ_COVARIANCES: i32 = 2;
pub(crate) const READ_PRECISIONS_CHOLESKY: i32 = 3;
pub(crate) const READ_PRECISIONS: i32 = 4;

/// Copies a parameter array out (`which`: one of the READ_ codes). Returns
/// the number of values, or -1 for an unknown code. Allocates nothing.
///
/// # Safety
/// `h` is a live handle and `out` is large enough (see the shapes).
pub unsafe extern "C" fn fm_gmm_read(h: *const GmmHandle, which: i32, out: *mut f64) -> i32 {
    let g = &(*h).gmm;
    let src: &[f64] = match which {
        READ_WEIGHTS => &g.weights,
        READ_MEANS => &g.means,
        READ_COVARIANCES => &g.covariances,
        READ_PRECISIONS_CHOLESKY => &g.precisions_chol,
        READ_PRECISIONS => {
            // shaped as the covariances
            let len = g.covariances.len();
            g.precisions_into(f64s_mut(out, len));
            return len as i32;
        }
        _ => return -1,
    };
    f64s_mut(out, src.len()).copy_from_slice(src);
    src.len() as i32
}

fn require_features(g: &Gmm, x: &Data) -> Result<()> {
    if x.d != g.d {
        return Err(Error::data(format!("X has {} features but the model was fitted with {}; pass data with {} columns", x.d, g.d, g.d)));
    }
    x.require_finite("X")
}

/// Per-row log-likelihood log sum_c w_c N(x | c) into `out_lse` (n).
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_gmm_score_samples(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_lse: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        estep::score_samples(&x, g, f64s_mut(out_lse, n))
    })
}

/// Responsibilities (n x k, column-major) into `out_resp`, and per-row
/// log-likelihood into `out_lse`.
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_gmm_predict_proba(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_resp: *mut f64, out_lse: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        estep::e_step(&x, g, &mut estep::Scratch::new(d)?, f64s_mut(out_resp, n * g.k), f64s_mut(out_lse, n))?;
        Ok(())
    })
}

/// Most probable component per row into `out_labels` (n).
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_gmm_predict(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_labels: *mut u32) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        estep::predict(&x, g, u32s_mut(out_labels, n))
    })
}

/// n draws (n x d, column-major, grouped by component) and their components.
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_gmm_sample(h: *const GmmHandle, n: usize, seed_lo: u32, seed_hi: u32, out_x: *mut f64, out_labels: *mut u32) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        if n < 1 {
            return Err(Error::param(format!("sample needs n >= 1, got {}", n)));
        }
        sample::sample(g, n, &mut Rng::new(seed(seed_lo, seed_hi)), f64s_mut(out_x, n * g.d), u32s_mut(out_labels, n))
    })
}

/// Restores fit statistics on an imported model (JSON round trip), so a warm
/// start continues from the saved lower bound.
///
/// # Safety
/// `h` is a live handle.
pub unsafe extern "C" fn fm_gmm_set_stats(h: *mut GmmHandle, converged: i32, n_iter: usize, lower_bound: f64) {
    let h = &mut *h;
    h.converged = converged != 0;
    h.n_iter = n_iter;
    h.lower_bound = lower_bound;
}
