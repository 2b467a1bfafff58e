//! k-means: fitting and nearest centers.

use super::{buffers, data, f64s, f64s_mut, seed, status, u32s_mut};
use fedmix_core::kmeans::{self, KMeansInit, KMeansOptions};
use fedmix_core::{Error, Result, Rng};

/// Codes of fm_kmeans_fit's `init`: k-means++ seeds, k distinct random rows,
/// or the k x d centers given at `centers`.
pub(crate) const INIT_PLUS_PLUS: i32 = 0;
pub(crate) const INIT_RANDOM: i32 = 1;
pub(crate) const INIT_GIVEN: i32 = 2;

/// fm_kmeans_fit's options (and fm_kmeans_start's) as the core takes them, and the fit's random numbers.
///
/// # Safety
/// `centers` covers `centers_len` values when init is INIT_GIVEN.
pub(crate) unsafe fn read_options(o: &crate::KmeansFitOptions, centers: *const f64) -> Result<(KMeansOptions, Rng)> {
    let init = match o.init {
        INIT_PLUS_PLUS => KMeansInit::PlusPlus,
        INIT_RANDOM => KMeansInit::Random,
        INIT_GIVEN => KMeansInit::Given(buffers::copy(f64s(centers, o.centers_len as usize))?),
        code => return Err(Error::param(format!("unknown k-means init code {}; use 0 k-means++, 1 random, 2 given centers", code))),
    };
    let opts = KMeansOptions { n_clusters: o.k as usize, init, n_init: o.n_init as usize, max_iter: o.max_iter as usize, tol: o.tol };
    Ok((opts, Rng::new(seed(o.seed_lo, o.seed_hi))))
}

/// k-means. `init`: one of the INIT_ codes.
/// Writes centers (k x d), labels (n) and [inertia, n_iter] to `out_stats`.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_kmeans_fit(
    x: *const f64,
    options: *const crate::KmeansFitOptions,
    centers: *const f64,
    out_centers: *mut f64,
    out_labels: *mut u32,
    out_stats: *mut f64,
) -> i32 {
    let (n, d, k) = ((*options).n as usize, (*options).d as usize, (*options).k as usize);
    status(|| {
        let (opts, mut rng) = read_options(&*options, centers)?;
        let r = kmeans::fit(&data(x, n, d)?, &opts, &mut rng)?;
        f64s_mut(out_centers, k * d).copy_from_slice(&r.centers);
        u32s_mut(out_labels, n).copy_from_slice(&r.labels);
        f64s_mut(out_stats, 2).copy_from_slice(&[r.inertia, r.n_iter as f64]);
        Ok(())
    })
}

/// Nearest of k centers (k x d) per row, and the squared distance to it.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_kmeans_predict(x: *const f64, n: usize, d: usize, centers: *const f64, k: usize, out_labels: *mut u32, out_dist: *mut f64) -> i32 {
    status(|| {
        let x = data(x, n, d)?;
        x.require_finite("X")?;
        kmeans::assign(&x, f64s(centers, k * d), k, u32s_mut(out_labels, n), f64s_mut(out_dist, n)).map(|_| ())
    })
}
