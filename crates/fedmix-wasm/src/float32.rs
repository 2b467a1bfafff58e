//! The 'float32' module: GaussianMixture's fit with the E-step in single
//! precision (fedmix_core::gmm::float32). It takes fm_gmm_fit's arguments and
//! makes the same handle, so the model it fits is read, scored and saved by
//! the core's fm_gmm_* as any other.

use super::gmm_handle::{fit_options, into_handle, GmmHandle};
use super::{data, status};
use fedmix_core::gmm::float32;
use fedmix_core::Rng;

/// # Safety
/// As fm_gmm_fit.
pub unsafe extern "C" fn fm_gmm_fit_f32(
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
        let r = float32::fit(&data(x, n, d)?, &opts, warm, &mut Rng::new(seed))?;
        into_handle(GmmHandle { gmm: r.gmm, converged: r.converged, n_iter: r.n_iter, lower_bound: r.lower_bound }, out_handle);
        Ok(())
    })
}
