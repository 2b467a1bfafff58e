//! Distributed EM (fedmix_core::gmm::dem). Statistics cross the boundary in
//! their wire form: nk (k), s1 (k x d) and s2 of wire_s2_len values (a full
//! matrix as its packed upper triangle); per-client arrays are concatenated in
//! client order. TypeScript checks the messages' shapes first; the checks here
//! are about what the numbers mean.

use super::gmm_handle::{into_handle, stats_wire_lens as cov_lens, write_stats, GmmHandle};
use super::{buffers, data, f64s, f64s_mut, optional, seed, status};
use fedmix_core::gmm::dem::{self, DataSummary};
use fedmix_core::gmm::stats::{pack_upper_into, packed_len, unpack_symmetric, SuffStats, Tiles};
use fedmix_core::gmm::CovarianceType;
use fedmix_core::{alloc, Error, Result, Rng};

/// A DEM client's answer to the model `h`: statistics of its n rows about the
/// model's means into out_nk, out_s1, out_s2, and the sum of the rows'
/// log-likelihoods into out_loglik.
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_client_stats(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64, out_loglik: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status(|| {
        let (stats, total) = dem::client_statistics(&data(x, n, d)?, g)?;
        write_stats(&stats, out_nk, out_s1, out_s2);
        *out_loglik = total;
        Ok(())
    })
}

/// A DEM client's summary of its rows about `shift` (d): per-feature largest
/// magnitude into out_abs_max (d); with `tied` 1 also the column sums of
/// x - shift (d) and their scatter (packed, d (d + 1) / 2).
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_client_summary(x: *const f64, n: usize, d: usize, shift: *const f64, tied: i32, out_abs_max: *mut f64, out_sum: *mut f64, out_scatter: *mut f64) -> i32 {
    status(|| {
        let x = data(x, n, d)?;
        if n > 0 {
            x.require_finite("the client's rows")?;
        }
        let s = DataSummary::of(&x, f64s(shift, d), tied != 0, &mut Tiles::new(d)?)?;
        f64s_mut(out_abs_max, d).copy_from_slice(&s.abs_max);
        if tied != 0 {
            f64s_mut(out_sum, d).copy_from_slice(&s.sum);
            pack_upper_into(&s.scatter, d, f64s_mut(out_scatter, packed_len(d)));
        }
        Ok(())
    })
}

/// Checks statistics a client sent (SuffStats::check_sum): from `rows` rows,
/// every count at least `min_count`, for an M-step with ridge `reg_covar`, each
/// value within `quantization` of honest ones (a secure round's bound; 0: exact).
/// `shift` (k x d) may be null (zeros).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_check_stats(options: *const crate::DemCheckStatsOptions, shift: *const f64, nk: *const f64, s1: *const f64, s2: *const f64) -> i32 {
    let crate::DemCheckStatsOptions { cov_type, k, d, rows, min_count, reg_covar, quantization } = *options;
    let k = k as usize; let d = d as usize;
    status(|| {
        let t = CovarianceType::from_code(cov_type)?;
        let (a, b, c) = cov_lens(t, k, d);
        let shift = match optional(shift, k * d)? {
            Some(s) => s,
            None => buffers::zeros(k * d)?,
        };
        SuffStats::from_wire(t, k, d, shift, f64s(nk, a), f64s(s1, b), f64s(s2, c))?.check_sum(rows, min_count, reg_covar, quantization)
    })
}

/// Checks a summary a client sent about `shift` (DataSummary::check); `tied` 1
/// when it carries sums and a packed scatter.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_check_summary(d: usize, tied: i32, rows: f64, shift: *const f64, abs_max: *const f64, sum: *const f64, scatter: *const f64) -> i32 {
    status(|| summary_from_wire(d, tied != 0, rows, f64s(shift, d), f64s(abs_max, d), sum, scatter)?.check())
}

unsafe fn summary_from_wire(d: usize, tied: bool, rows: f64, shift: &[f64], abs_max: &[f64], sum: *const f64, scatter: *const f64) -> Result<DataSummary> {
    let (sum, scatter) = if tied { (f64s(sum, d).to_vec(), unpack_symmetric(f64s(scatter, packed_len(d)), d)?) } else { (Vec::new(), Vec::new()) };
    Ok(DataSummary { n: rows, abs_max: abs_max.to_vec(), shift: shift.to_vec(), sum, scatter })
}

/// Checks the log-likelihood a client reported with its statistics about the
/// model `h` (dem::check_log_likelihood): within [Q, Q + n ln K]. Tied
/// statistics need the client's summary (its sums and packed scatter about
/// `summary_shift`); other types ignore it.
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_check_log_likelihood(
    h: *const GmmHandle,
    options: *const crate::DemCheckLogLikelihoodOptions,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    summary_shift: *const f64,
    abs_max: *const f64,
    sum: *const f64,
    scatter: *const f64,
) -> i32 {
    let crate::DemCheckLogLikelihoodOptions { rows, loglik } = *options;
    let g = &(*h).gmm;
    status(|| {
        let (t, k, d) = (g.cov_type, g.k, g.d);
        let (a, b, c) = cov_lens(t, k, d);
        let stats = SuffStats::from_wire(t, k, d, alloc::copy(&g.means)?, f64s(nk, a), f64s(s1, b), f64s(s2, c))?;
        let tied = t == CovarianceType::Tied;
        let summary = if tied { Some(summary_from_wire(d, true, rows, f64s(summary_shift, d), f64s(abs_max, d), sum, scatter)?) } else { None };
        dem::check_log_likelihood(&stats, g, summary.as_ref(), rows, loglik)
    })
}

/// The DEM server's round on the answers of m clients to the model `h`: merges
/// their statistics (about h's means) and summaries (about `summary_shift`, d;
/// sums and packed scatters only for tied), runs the M-step, and writes the new
/// model's handle, whose lower bound is the pooled mean log-likelihood of the
/// rows under `h` and whose n_iter and converged are those given.
///
/// # Safety
/// Live handle; pointers cover the shapes (m clients).
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_server_step(
    h: *const GmmHandle,
    options: *const crate::DemServerStepOptions,
    rows: *const f64,
    loglik: *const f64,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    summary_shift: *const f64,
    abs_max: *const f64,
    sums: *const f64,
    scatters: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::DemServerStepOptions { m, reg_covar, n_iter, converged } = *options;
    let m = m as usize; let n_iter = n_iter as usize;
    let g = &(*h).gmm;
    status(|| {
        if m == 0 {
            return Err(Error::data("a DEM round needs the statistics of at least one client"));
        }
        let (t, k, d) = (g.cov_type, g.k, g.d);
        let tied = t == CovarianceType::Tied;
        let (a, b, c) = cov_lens(t, k, d);
        let (rows, loglik) = (f64s(rows, m), f64s(loglik, m));
        let shift = f64s(summary_shift, d);
        let mut stats = SuffStats::new(t, k, d, buffers::copy(&g.means)?)?;
        let mut summary = DataSummary::empty(d, shift, tied)?;
        for i in 0..m {
            let si = SuffStats::from_wire(t, k, d, buffers::copy(&g.means)?, f64s(nk.add(i * a), a), f64s(s1.add(i * b), b), f64s(s2.add(i * c), c))?;
            stats.merge(&si);
            let (sum, scatter) = if tied { (sums.add(i * d), scatters.add(i * packed_len(d))) } else { (sums, scatters) };
            summary.merge(&summary_from_wire(d, tied, rows[i], shift, f64s(abs_max.add(i * d), d), sum, scatter)?);
        }
        let gmm = dem::server_step(&stats, &summary, reg_covar)?;
        let lower_bound = loglik.iter().sum::<f64>() / rows.iter().sum::<f64>();
        into_handle(GmmHandle { gmm, converged: converged != 0, n_iter, lower_bound }, out_handle);
        Ok(())
    })
}

/// DEM's maximally separated initial model in the box [lo, hi] (d each).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_separated_init(cov_type: i32, k: usize, d: usize, lo: *const f64, hi: *const f64, reg_covar: f64, out_handle: *mut usize) -> i32 {
    status(|| {
        let gmm = dem::separated_init(CovarianceType::from_code(cov_type)?, k, f64s(lo, d), f64s(hi, d), reg_covar)?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })
}

/// A k-FED client: k-means with up to k_local clusters on its rows, then their
/// statistics about their centers for covariance type `cov_type` (tied gathers
/// full ones). Writes the number of clusters found to out_k and, for them, the
/// centers, counts, s1 and s2 in wire form (buffers sized for k_local).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_kfed_local(
    x: *const f64,
    options: *const crate::DemKfedLocalOptions,
    out_k: *mut f64,
    out_centers: *mut f64,
    out_nk: *mut f64,
    out_s1: *mut f64,
    out_s2: *mut f64,
) -> i32 {
    let crate::DemKfedLocalOptions { n, d, k_local, cov_type, seed_lo, seed_hi } = *options;
    let n = n as usize; let d = d as usize; let k_local = k_local as usize;
    status(|| {
        let t = CovarianceType::from_code(cov_type)?;
        let s = dem::kfed_local(&data(x, n, d)?, k_local, t, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        *out_k = s.k as f64;
        f64s_mut(out_centers, s.k * d).copy_from_slice(&s.shift);
        write_stats(&s, out_nk, out_s1, out_s2);
        Ok(())
    })
}

/// The k-FED server: the initial model with k components of type `cov_type` from
/// the local clusters of m clients (`counts` holds how many each sent; centers,
/// nk, s1 and s2 are concatenated in client order, s2 of type
/// dem::kfed_local_type). `seed` picks the clients whose centers seed the groups
/// (`starts` of them, the grouping of least cost kept).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_dem_kfed_server(
    options: *const crate::DemKfedServerOptions,
    counts: *const f64,
    centers: *const f64,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    out_handle: *mut usize,
) -> i32 {
    let crate::DemKfedServerOptions { cov_type, k, d, m, reg_covar, starts, seed_lo, seed_hi } = *options;
    let k = k as usize; let d = d as usize; let m = m as usize;
    status(|| {
        let t = CovarianceType::from_code(cov_type)?;
        let lt = dem::kfed_local_type(t);
        let mut locals = buffers::with_capacity(m)?;
        let (mut at_nk, mut at_s1, mut at_s2) = (0, 0, 0);
        for &cnt in f64s(counts, m) {
            if !(cnt >= 0.0 && cnt <= 1e9 && cnt.fract() == 0.0) {
                return Err(Error::data(format!("a client's number of local clusters must be a whole number, got {}", fedmix_core::error::show(cnt))));
            }
            let kl = cnt as usize;
            let (a, b, c) = cov_lens(lt, kl, d);
            let shift = buffers::copy(f64s(centers.add(at_s1), b))?;
            locals.push(SuffStats::from_wire(lt, kl, d, shift, f64s(nk.add(at_nk), a), f64s(s1.add(at_s1), b), f64s(s2.add(at_s2), c))?);
            at_nk += a;
            at_s1 += b;
            at_s2 += c;
        }
        let gmm = dem::kfed_server(&locals, k, t, reg_covar, starts as usize, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })
}
