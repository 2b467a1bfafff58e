//! A fitted mixture as an opaque handle: made by the core module (fits,
//! imports) and by the dem module (distributed EM's server steps), read and
//! freed by the core's fm_gmm_* (one heap, see heap.rs; one layout, repr(C)).

use fedmix_core::gmm::Gmm;

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

