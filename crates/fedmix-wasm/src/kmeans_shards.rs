//! k-means over row shards (KMeans' `threads`): a run's starting centers as
//! fm_kmeans_fit draws them, and one shard's half of a Lloyd iteration. In
//! the 'dem' module, which already holds k-means (DEM's and k-FED's starts),
//! and not in the core every program loads; the calling thread sums the
//! shards' counts and sums in shard order and moves the centers.

use super::kmeans::read_options;
use super::{buffers, data, f64s, f64s_mut, status, u32s_mut};
use fedmix_core::kmeans;

/// The starting centers (k x d) of run `run` of fm_kmeans_fit with the same
/// options on the n rows at `x`, after its checks, and its absolute
/// tolerance (tol times the mean feature variance) into `out_tol`.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_kmeans_start(x: *const f64, options: *const crate::KmeansFitOptions, centers: *const f64, run: usize, out_centers: *mut f64, out_tol: *mut f64) -> i32 {
    let (n, d, k) = ((*options).n as usize, (*options).d as usize, (*options).k as usize);
    status(|| {
        let (opts, mut rng) = read_options(&*options, centers)?;
        let x = data(x, n, d)?;
        let start = kmeans::run_start(&x, &opts, run, &mut rng)?;
        f64s_mut(out_centers, k * d).copy_from_slice(&start);
        *out_tol = kmeans::absolute_tolerance(&x, opts.tol);
        Ok(())
    })
}

/// One Lloyd iteration's assignment on n rows (a shard) under the k centers
/// (k x d): each row's nearest center into `labels` (which holds the last
/// iteration's, or u32::MAX at a run's start) and its squared distance into
/// `out_dist`; into `out_stats` the clusters' row counts (k), their sums of
/// rows (k x d, rows added in order), 1 if a label changed (else 0), and the
/// sum of the distances (the shard's inertia).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_kmeans_shard_step(x: *const f64, n: usize, d: usize, centers: *const f64, k: usize, labels: *mut u32, out_dist: *mut f64, out_stats: *mut f64) -> i32 {
    status(|| {
        let x = data(x, n, d)?;
        let (labels, dist) = (u32s_mut(labels, n), f64s_mut(out_dist, n));
        let changed = kmeans::assign(&x, f64s(centers, k * d), k, labels, dist)?;
        let mut counts = buffers::filled(0usize, k)?;
        let out = f64s_mut(out_stats, k + k * d + 2);
        let (head, tail) = out.split_at_mut(k);
        kmeans::accumulate(&x, labels, &mut tail[..k * d], &mut counts);
        for (o, &c) in head.iter_mut().zip(&counts) {
            *o = c as f64;
        }
        tail[k * d] = if changed { 1.0 } else { 0.0 };
        tail[k * d + 1] = dist.iter().sum();
        Ok(())
    })
}
