//! Hierarchical EM: reducing a mixture to fewer components from its parameters (FedGenGMM's sample-free server step).

use super::{f64s, f64s_mut, seed, status};
use fedmix_core::gmm::CovarianceType;
use fedmix_core::hem::{self, Lower, Options};
use fedmix_core::{Error, Rng};

/// Reduces n lower components in d dimensions (weights n, means n x d,
/// covariances n x d x d for full and tied `covariance_type`, n x d variances
/// for diag and spherical) to k of `covariance_type` (a CovarianceType code),
/// each lower component standing for its share of `virtual_samples`.
/// `means_init` (k x d) or null for n_init weighted k-means++ starts.
/// Writes weights (k), means (k x d), covariances (GaussianMixture's shape
/// for the type) and [lower bound per virtual sample, mean log-likelihood
/// bound of the virtual samples (for BIC), n_iter, converged].
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_hem_reduce(
    options: *const crate::HemReduceOptions,
    weights: *const f64,
    means: *const f64,
    covariances: *const f64,
    means_init: *const f64,
    out_weights: *mut f64,
    out_means: *mut f64,
    out_covariances: *mut f64,
    out_stats: *mut f64,
) -> i32 {
    let crate::HemReduceOptions { covariance_type, d, n, k, virtual_samples, tol, max_iter, reg_covar, n_init, seed_lo, seed_hi } = *options;
    let d = d as usize; let n = n as usize; let k = k as usize; let max_iter = max_iter as usize; let n_init = n_init as usize;
    status(|| {
        let t = CovarianceType::from_code(covariance_type)?;
        let too_many = || Error::data(format!("{} components of {} dimensions are too many", n, d));
        let size = hem::lower_size(t, d);
        let init = if means_init.is_null() { None } else { Some(f64s(means_init, k.checked_mul(d).ok_or_else(too_many)?)) };
        let lower = Lower {
            n,
            weights: f64s(weights, n),
            means: f64s(means, n.checked_mul(d).ok_or_else(too_many)?),
            covariances: f64s(covariances, n.checked_mul(size).ok_or_else(too_many)?),
        };
        let o = Options { k, covariance_type: t, virtual_samples, tol, max_iter, reg_covar, n_init, means_init: init };
        let r = hem::reduce(d, &lower, &o, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        f64s_mut(out_weights, k).copy_from_slice(&r.weights);
        f64s_mut(out_means, k * d).copy_from_slice(&r.means);
        f64s_mut(out_covariances, r.covariances.len()).copy_from_slice(&r.covariances);
        f64s_mut(out_stats, 4).copy_from_slice(&[r.lower_bound, r.log_likelihood, r.n_iter as f64, r.converged as i32 as f64]);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::{null, null_mut};

    #[test]
    fn reduces_through_the_abi_and_reports_errors() {
        let (w, m, s) = ([0.5, 0.5], [0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 1.0, 1.0]);
        let (mut ow, mut om, mut oc, mut st) = ([0.0; 1], [0.0; 2], [0.0; 2], [0.0; 4]);
        let diag = CovarianceType::Diag.code();
        let o = |covariance_type, k| crate::HemReduceOptions { covariance_type, d: 2, n: 2, k, virtual_samples: 100.0, tol: 1e-3, max_iter: 100, reg_covar: 0.0, n_init: 1, seed_lo: 0, seed_hi: 0 };
        let r = unsafe { fm_hem_reduce(&o(diag, 1), w.as_ptr(), m.as_ptr(), s.as_ptr(), null(), ow.as_mut_ptr(), om.as_mut_ptr(), oc.as_mut_ptr(), st.as_mut_ptr()) };
        assert_eq!(r, 0);
        // one component: the moment-matched Gaussian (variance 1 + 2^2)
        assert!((ow[0] - 1.0).abs() < 1e-12 && (om[0] - 2.0).abs() < 1e-12 && (oc[0] - 5.0).abs() < 1e-12);
        let r = unsafe { fm_hem_reduce(&o(diag, 3), w.as_ptr(), m.as_ptr(), s.as_ptr(), null(), null_mut(), null_mut(), null_mut(), null_mut()) };
        assert_eq!(r, fedmix_core::ErrorKind::InvalidParameter.code());
        let r = unsafe { fm_hem_reduce(&o(9, 1), w.as_ptr(), m.as_ptr(), s.as_ptr(), null(), null_mut(), null_mut(), null_mut(), null_mut()) };
        assert_eq!(r, fedmix_core::ErrorKind::InvalidParameter.code());
    }
}
