//! EM over row shards (GaussianMixture's `threads`; the start model is the
//! core's fm_gmm_initial): the workspace of the whole data, a shard's E-step
//! and the M-step from the shards' summed statistics. In the 'dem' module,
//! which holds the same E-step and M-step for distributed EM, and not in the
//! core every program loads.

use super::gmm_handle::{into_handle, stats_wire_lens, write_stats, GmmHandle};
use super::{buffers, data, f64s, status};
use fedmix_core::gmm::fit;
use fedmix_core::gmm::mstep::Workspace;
use fedmix_core::gmm::stats::{SuffStats, Tiles};
use fedmix_core::gmm::{estep, CovarianceType};
use fedmix_core::Error;

/// What the M-steps of EM over row shards keep from the whole data (its
/// variance floor; for tied covariances its scatter): an opaque handle.
pub struct EmWorkspace {
    ws: Workspace,
    n: usize,
}

/// The workspace of EM over the n rows at `x` for covariance type `cov_type`.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_gmm_em_workspace(x: *const f64, n: usize, d: usize, cov_type: i32, out_handle: *mut usize) -> i32 {
    status(|| {
        let ws = Workspace::new(&data(x, n, d)?, CovarianceType::from_code(cov_type)?)?;
        *out_handle = Box::into_raw(Box::new(EmWorkspace { ws, n })) as usize;
        Ok(())
    })
}

/// # Safety
/// `h` is a live workspace handle; it is dead afterwards.
pub unsafe extern "C" fn fm_gmm_em_workspace_free(h: *mut EmWorkspace) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// The E-step of EM under `h` on n rows (a shard of the data): the rows'
/// sufficient statistics about the model's means in wire form into out_nk
/// (k), out_s1 (k x d) and out_s2 (full: k packed upper triangles; diag and
/// spherical: k x d; tied: none), and the sum of their log-likelihoods.
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gmm_shard_stats(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64, out_loglik: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        let x = data(x, n, d)?;
        if x.d != g.d {
            return Err(Error::data(format!("the shard has {} features but the model has {}", x.d, g.d)));
        }
        let (stats, total) = SuffStats::from_e_step(&x, g, &mut estep::BlockBuffers::new(g.k, d)?, &mut Tiles::new(d)?)?;
        write_stats(&stats, out_nk, out_s1, out_s2);
        *out_loglik = total;
        Ok(())
    })
}

/// EM's M-step at iteration `iteration` from the statistics of m shards under
/// `h` (fm_gmm_shard_stats; concatenated in shard order, and summed in that
/// order, so the result does not depend on which shard finished first): the
/// new model's handle, whose lower bound is the mean log-likelihood of the
/// workspace's rows under `h`.
///
/// # Safety
/// Live handles; pointers cover the shapes (m shards).
pub unsafe extern "C" fn fm_gmm_em_step(
    ws: *const EmWorkspace,
    h: *const GmmHandle,
    options: *const crate::GmmEmStepOptions,
    loglik: *const f64,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::GmmEmStepOptions { m, reg_covar, iteration } = *options;
    let (m, iteration) = (m as usize, iteration as usize);
    let (ws, g) = (&*ws, &(*h).gmm);
    status(|| {
        let (t, k, d) = (g.cov_type, g.k, g.d);
        let (a, b, c) = stats_wire_lens(t, k, d);
        let mut stats = SuffStats::new(t, k, d, buffers::copy(&g.means)?)?;
        let mut total = 0.0;
        for (i, l) in f64s(loglik, m).iter().enumerate() {
            stats.merge(&SuffStats::from_wire(t, k, d, buffers::copy(&g.means)?, f64s(nk.add(i * a), a), f64s(s1.add(i * b), b), f64s(s2.add(i * c), c))?);
            total += l;
        }
        let (gmm, lower_bound) = fit::em_step(g, &stats, total, iteration, reg_covar, &ws.ws, ws.n)?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: iteration, lower_bound }, out_handle);
        Ok(())
    })
}
