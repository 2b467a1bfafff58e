//! The 'float32' module: GaussianMixture's fit with the E-step in single
//! precision (fedmix_core::gmm::float32). It takes fm_gmm_fit's arguments and
//! makes the same handle, so the model it fits is read, scored and saved by
//! the core's fm_gmm_* as any other.

use super::gmm_handle::{fit_into_handle, GmmHandle};
use fedmix_core::gmm::float32;

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
    fit_into_handle(float32::fit, x, options, weights_init, means_init, precisions_init, warm, out_handle)
}
