//! Small dense linear algebra for TypeScript's own arithmetic on covariances
//! (FedDistr's Gaussians, the Gaussian noise of private releases): the core's
//! Cholesky factor, eigen-decomposition and matrix functions, so that the
//! TypeScript side keeps no second copy of them. Matrices are d x d row-major.

use super::{f64s, f64s_mut, status};
use fedmix_core::linalg;

/// Writes the lower Cholesky factor of `a` (its lower triangle read) to `out`
/// and returns 1, or returns 0 when `a` is not positive definite (a pivot not
/// positive or not finite; `out` is then unspecified). Allocates nothing.
///
/// # Safety
/// `a` and `out` cover d x d values.
pub unsafe extern "C" fn fm_cholesky(a: *const f64, d: usize, out: *mut f64) -> i32 {
    linalg::cholesky_lower(f64s(a, d * d), d, f64s_mut(out, d * d)).is_ok() as i32
}

/// The eigenvalues of a symmetric `a` (descending) into `out_values` and the
/// unit eigenvectors as the rows of `out_vectors`.
///
/// # Safety
/// `a` and `out_vectors` cover d x d values, `out_values` d.
pub unsafe extern "C" fn fm_symmetric_eigen(a: *const f64, d: usize, out_values: *mut f64, out_vectors: *mut f64) -> i32 {
    status(|| {
        let (values, vectors) = linalg::symmetric_eigen(f64s(a, d * d), d)?;
        f64s_mut(out_values, d).copy_from_slice(&values);
        f64s_mut(out_vectors, d * d).copy_from_slice(&vectors);
        Ok(())
    })
}

/// The symmetric positive semi-definite square root of a symmetric `a`.
///
/// # Safety
/// `a` and `out` cover d x d values.
pub unsafe extern "C" fn fm_sqrtm(a: *const f64, d: usize, out: *mut f64) -> i32 {
    status(|| {
        f64s_mut(out, d * d).copy_from_slice(&linalg::sqrtm(f64s(a, d * d), d)?);
        Ok(())
    })
}

/// A symmetric `a` with its eigenvalues raised to at least `floor` (the
/// nearest such matrix in the Frobenius norm).
///
/// # Safety
/// `a` and `out` cover d x d values.
pub unsafe extern "C" fn fm_symmetric_floor(a: *const f64, d: usize, floor: f64, out: *mut f64) -> i32 {
    status(|| {
        f64s_mut(out, d * d).copy_from_slice(&linalg::symmetric_function(f64s(a, d * d), d, |x| x.max(floor))?);
        Ok(())
    })
}
