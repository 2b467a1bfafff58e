//! The codes of the C ABI's enumerations that the feature modules read (each
//! module of the split build, scripts/build-wasm.sh, compiles this file; the
//! table TypeScript reads them from is constants.rs, in the core module).

/// Codes of fm_gamma_differences' `which`.
pub(crate) const DIGAMMA_DIFFERENCE: i32 = 0;
pub(crate) const LGAMMA_DIFFERENCE: i32 = 1;

/// Codes of fm_fedgem_client_new's `init`: k-means++ seeds (best of n_init by
/// inertia), or k-means from them.
pub(crate) const INIT_SEEDS: i32 = 0;
pub(crate) const INIT_KMEANS: i32 = 1;

/// Codes of fm_fedgem_client_steps' `method`.
pub(crate) const RADIUS_CLOSED_FORM: i32 = 0;
pub(crate) const RADIUS_BISECTION: i32 = 1;

/// Codes of the arrays fm_ocsvm_read copies out.
pub(crate) const READ_SUPPORT_VECTORS: i32 = 0;
pub(crate) const READ_DUAL_COEF: i32 = 1;
pub(crate) const READ_SUPPORT: i32 = 2;

/// The ABI version of this build (the loader refuses another).
pub(crate) extern "C" fn fm_abi_version() -> i32 {
    super::ABI_VERSION
}

/// 2 for a module of the relaxed-SIMD build, 1 for the SIMD128 build, 0 for the scalar one.
pub(crate) extern "C" fn fm_simd() -> i32 {
    fedmix_core::kernels::SIMD as i32 + fedmix_core::kernels::RELAXED as i32
}
