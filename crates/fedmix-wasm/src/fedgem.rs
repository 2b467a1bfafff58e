//! FedGEM exports: a client handle that keeps its rows in WASM memory across
//! rounds, and the server's update and merge over the reported balls.

use super::codes::{INIT_KMEANS, INIT_SEEDS, RADIUS_BISECTION, RADIUS_CLOSED_FORM};
use super::{buffers, data, f64s, f64s_mut, optional, seed, status, u32s_mut};
use fedmix_core::fedgem::client::{Isotropic, RadiusMethod};
use fedmix_core::fedgem::server::{final_merge, round_update, Search};
use fedmix_core::{Data, Error, Rng};
use std::slice;

/// A client's rows (column-major, copied once) and its model, owned by TypeScript.
pub struct FedGemClient {
    values: Vec<f64>,
    n: usize,
    d: usize,
    model: Isotropic,
}

impl FedGemClient {
    fn data(&self) -> Data<'_> {
        Data { values: &self.values, n: self.n, d: self.d }
    }
}

fn search(indexed: i32) -> Search {
    if indexed != 0 {
        Search::KdTree
    } else {
        Search::AllPairs
    }
}

unsafe fn owners<'a>(ptr: *const u32, len: usize) -> &'a [u32] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

/// A client over n x d rows with k components: `weights` (k) or null for
/// uniform, the known `variance`, starting `means` (k x d) or null for the
/// start `init` (an INIT_ code) makes.
///
/// # Safety
/// Pointers cover the shapes; `out_handle` receives the handle.
pub unsafe extern "C" fn fm_fedgem_client_new(
    x: *const f64,
    options: *const crate::FedgemClientNewOptions,
    weights: *const f64,
    means: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::FedgemClientNewOptions { n, d, k, variance, init, n_init, seed_lo, seed_hi } = *options;
    let n = n as usize; let d = d as usize; let k = k as usize; let n_init = n_init as usize;
    status(|| {
        let x = data(x, n, d)?;
        x.require_finite("X")?;
        if k < 1 {
            return Err(Error::param(format!("a client needs at least one component, got {}", k)));
        }
        if n < k {
            return Err(Error::data(format!("the client has {} rows for {} components; each component needs at least one row", n, k)));
        }
        let weights = match optional(weights, k)? {
            Some(w) => w,
            None => buffers::filled(1.0 / k as f64, k)?,
        };
        let model = match optional(means, k * d)? {
            Some(m) => Isotropic::new(k, d, weights, variance, m)?,
            None => {
                // validate before the (slower) k-means
                Isotropic::new(k, d, buffers::copy(&weights)?, variance, buffers::zeros(k * d)?)?;
                if init != INIT_SEEDS && init != INIT_KMEANS {
                    return Err(Error::param(format!("unknown init code {}; use 0 k-means++ seeds, 1 k-means", init)));
                }
                Isotropic::kmeans_init(&x, k, weights, variance, n_init, init == INIT_KMEANS, &mut Rng::new(seed(seed_lo, seed_hi)))?
            }
        };
        let h = FedGemClient { values: buffers::copy(x.values)?, n, d, model };
        *out_handle = Box::into_raw(Box::new(h)) as usize;
        Ok(())
    })
}

/// # Safety
/// `h` is a live handle, freed once.
pub unsafe extern "C" fn fm_fedgem_client_free(h: *mut FedGemClient) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// `steps` local EM steps; writes the maximizers (k x d), radii (k), counts (k)
/// and the mean log-likelihood. `method` RADIUS_CLOSED_FORM, or
/// RADIUS_BISECTION with `iterations` halvings.
///
/// # Safety
/// `h` is live; outputs cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_fedgem_client_steps(
    h: *mut FedGemClient,
    steps: usize,
    method: i32,
    iterations: usize,
    out_maximizers: *mut f64,
    out_radii: *mut f64,
    out_counts: *mut f64,
    out_loglik: *mut f64,
) -> i32 {
    status(|| {
        let c = &mut *h;
        let method = match method {
            RADIUS_CLOSED_FORM => RadiusMethod::ClosedForm,
            RADIUS_BISECTION => RadiusMethod::Bisection { iterations },
            _ => return Err(Error::param(format!("unknown radius method code {}; use 0 closed form, 1 bisection", method))),
        };
        let x = Data { values: &c.values, n: c.n, d: c.d };
        let r = c.model.local_steps(&x, steps, method)?;
        let (k, d) = (c.model.k, c.model.d);
        f64s_mut(out_maximizers, k * d).copy_from_slice(&r.maximizers);
        f64s_mut(out_radii, k).copy_from_slice(&r.radii);
        f64s_mut(out_counts, k).copy_from_slice(&r.counts);
        *out_loglik = r.log_likelihood;
        Ok(())
    })
}

/// Replaces the means (k x d), e.g. with the server's update.
///
/// # Safety
/// `h` is live; `means` covers `len` values.
pub unsafe extern "C" fn fm_fedgem_client_set_means(h: *mut FedGemClient, means: *const f64, len: usize) -> i32 {
    status(|| (*h).model.set_means(f64s(means, len)))
}

/// Replaces the known variance sigma^2 (positive, finite).
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_fedgem_client_set_variance(h: *mut FedGemClient, variance: f64) -> i32 {
    status(|| (*h).model.set_variance(variance))
}

/// Writes the current means (k x d).
///
/// # Safety
/// `h` is live; `out` covers k x d values.
pub unsafe extern "C" fn fm_fedgem_client_means(h: *const FedGemClient, out: *mut f64) {
    let m = &(*h).model;
    f64s_mut(out, m.k * m.d).copy_from_slice(&m.means);
}

/// Most probable component of each of n rows (`which` 0), or each row's
/// log-likelihood (`which` 1, into `out_values`).
///
/// # Safety
/// `h` is live; pointers cover the shapes.
pub unsafe extern "C" fn fm_fedgem_client_predict(h: *const FedGemClient, x: *const f64, n: usize, d: usize, out_labels: *mut u32, out_values: *mut f64) -> i32 {
    status(|| {
        let c = &*h;
        let x = data(x, n, d)?;
        if !out_labels.is_null() {
            u32s_mut(out_labels, n).copy_from_slice(&c.model.predict(&x)?);
        }
        if !out_values.is_null() {
            f64s_mut(out_values, n).copy_from_slice(&c.model.score_samples(&x)?);
        }
        Ok(())
    })
}

/// The mean log-likelihood of the client's own rows under its current means.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_fedgem_client_score(h: *const FedGemClient, out: *mut f64) -> i32 {
    status(|| {
        let c = &*h;
        let lse = c.model.score_samples(&c.data())?;
        *out = lse.iter().sum::<f64>() / c.n as f64;
        Ok(())
    })
}

/// The collaborative update of m components (centers m x d, radii, owning
/// clients; radii capped, see `capped_radii`): writes the updated centers and
/// the number of overlapping pairs.
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_fedgem_update(
    centers: *const f64,
    radii: *const f64,
    owner_ids: *const u32,
    m: usize,
    d: usize,
    indexed: i32,
    out_centers: *mut f64,
    out_pairs: *mut f64,
) -> i32 {
    status(|| {
        let (updated, pairs) = round_update(f64s(centers, m * d), f64s(radii, m), owners(owner_ids, m), d, search(indexed))?;
        f64s_mut(out_centers, m * d).copy_from_slice(&updated);
        *out_pairs = pairs as f64;
        Ok(())
    })
}

/// The final merge (`final_merge`: components with almost no weight left out
/// of the overlaps; with a `separation_variance` > 0, super-clusters closer
/// than the closest two components of one client, and than sigma sqrt(d),
/// joined; NaN or 0: not): super-cluster of each
/// component (`out_labels`, m), their count (`out_k`), their centers weighted
/// by `weights` (`out_centers`, the first k x d of an m x d buffer), and what
/// the separation step did (`out_joins`, `out_separation`: the distance it
/// used, NaN when none) and how many components were left uncounted
/// (`out_uncounted`).
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_fedgem_merge(
    centers: *const f64,
    radii: *const f64,
    owner_ids: *const u32,
    weights: *const f64,
    options: *const crate::FedgemMergeOptions,
    out_labels: *mut u32,
    out_k: *mut usize,
    out_centers: *mut f64,
    out_joins: *mut usize,
    out_separation: *mut f64,
    out_uncounted: *mut usize,
) -> i32 {
    let crate::FedgemMergeOptions { m, d, indexed, separation_variance } = *options;
    let m = m as usize; let d = d as usize;
    status(|| {
        let r = final_merge(f64s(centers, m * d), f64s(radii, m), owners(owner_ids, m), f64s(weights, m), d, search(indexed), if separation_variance == 0.0 || separation_variance.is_nan() { None } else { Some(separation_variance) })?;
        u32s_mut(out_labels, m).copy_from_slice(&r.labels);
        *out_k = r.k;
        f64s_mut(out_centers, r.k * d).copy_from_slice(&r.centers);
        *out_joins = r.separation_joins;
        *out_separation = r.separation.unwrap_or(f64::NAN);
        *out_uncounted = r.uncounted;
        Ok(())
    })
}
