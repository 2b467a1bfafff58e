//! Principal component analysis: fit and transform.

use super::{data, f64s, f64s_mut, status};
use fedmix_core::{pca, Error};

/// PCA of the n x d column-major `x` with k components. Writes the mean (d),
/// the components (k x d row-major), the explained variances and their ratios
/// (k each) and the noise variance (1).
///
/// # Safety
/// Pointers cover the shapes given.
pub unsafe extern "C" fn fm_pca_fit(
    x: *const f64,
    options: *const crate::PcaFitOptions,
    out_mean: *mut f64,
    out_components: *mut f64,
    out_variance: *mut f64,
    out_ratio: *mut f64,
    out_noise: *mut f64,
) -> i32 {
    let crate::PcaFitOptions { n, d, k } = *options;
    let n = n as usize; let d = d as usize; let k = k as usize;
    status(|| {
        let p = pca::fit(&data(x, n, d)?, k)?;
        f64s_mut(out_mean, d).copy_from_slice(&p.mean);
        f64s_mut(out_components, k * d).copy_from_slice(&p.components);
        f64s_mut(out_variance, k).copy_from_slice(&p.explained_variance);
        f64s_mut(out_ratio, k).copy_from_slice(&p.explained_variance_ratio);
        *out_noise = p.noise_variance;
        Ok(())
    })
}

/// (x - mean) @ components^T for a fitted PCA: `mean` has `mean_len` values
/// (the fitted feature count), `components` k x mean_len; `out` is n x k
/// column-major.
///
/// # Safety
/// Pointers cover the shapes given.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_pca_transform(x: *const f64, n: usize, d: usize, mean: *const f64, mean_len: usize, components: *const f64, k: usize, out: *mut f64) -> i32 {
    status(|| {
        let cells = k.checked_mul(mean_len).ok_or_else(|| Error::param("the PCA shape is too large"))?;
        pca::transform(&data(x, n, d)?, f64s(mean, mean_len), f64s(components, cells), k, f64s_mut(out, n * k))
    })
}
