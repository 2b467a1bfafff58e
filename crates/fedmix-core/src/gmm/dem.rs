//! Distributed EM (DEM) for Gaussian mixtures, the iterative baseline of the
//! FedGenGMM paper (Section 5.4, after Wu et al. 2023), and its three ways of
//! choosing the initial model without seeing any data.
//!
//! A round: the server broadcasts the model; each client runs the E-step on its
//! own rows and answers with the sufficient statistics about the model's means
//! (SuffStats, which add across clients) and the sum of its rows'
//! log-likelihoods; the server merges the statistics and runs the M-step. With
//! every client answering, a round is exactly one iteration of centralized EM on
//! the pooled rows.
//!
//! Tied covariances need the scatter of the pooled data about its column means
//! (see SuffStats::estimates), which no client can compute alone. Each client
//! sends, once, its rows' column sums and scatter about a shift the server
//! broadcasts with the first model (a DataSummary); those add, and the server
//! recenters their total on the pooled mean. The alternative, per-component
//! second moments as for full covariances, would send k d x d matrices every
//! round instead of one d x d matrix once.

use super::estep::BlockBuffers;
use super::mstep::gmm_from_estimates;
use super::stats::{moments_about, scatter_rounding, DataScatter, Estimates, SuffStats, Tiles, TiedInput};
use super::{CovarianceType, Gmm};
use crate::alloc;
use crate::data::{variance_floor_from_abs_max, Data};
use crate::error::{show, Error, Result};
use crate::kmeans::{self, KMeansOptions};
use crate::linalg;
use crate::rng::Rng;

/// What a client tells the server once about its rows: how many, the largest
/// magnitude of each feature (so that the server's variance floor, see
/// Data::variance_floor, is the pooled data's), and for tied covariances the
/// column sums and scatter about a shift every client shares.
#[derive(Clone, Debug, PartialEq)]
pub struct DataSummary {
    pub n: f64,
    /// (d,)
    pub abs_max: Vec<f64>,
    /// (d,) the shared shift
    pub shift: Vec<f64>,
    /// tied only, else empty: sum_i (x_i - shift), (d,)
    pub sum: Vec<f64>,
    /// tied only, else empty: sum_i (x_i - shift)(x_i - shift)^T, (d, d)
    pub scatter: Vec<f64>,
}

impl DataSummary {
    pub fn of(x: &Data, shift: &[f64], tied: bool, tiles: &mut Tiles) -> Result<Self> {
        let (sum, scatter) = if tied { moments_about(x, shift, tiles)? } else { (Vec::new(), Vec::new()) };
        Ok(DataSummary { n: x.n as f64, abs_max: x.abs_max(), shift: shift.to_vec(), sum, scatter })
    }

    /// The summary of no rows, to merge others into.
    pub fn empty(d: usize, shift: &[f64], tied: bool) -> Result<Self> {
        let (sum, scatter) = if tied { (vec![0.0; d], alloc::zeros(d * d)?) } else { (Vec::new(), Vec::new()) };
        Ok(DataSummary { n: 0.0, abs_max: vec![0.0; d], shift: shift.to_vec(), sum, scatter })
    }

    /// Adds the summary of other rows about the same shift.
    pub fn merge(&mut self, other: &DataSummary) {
        assert!(self.shift == other.shift && self.sum.len() == other.sum.len() && self.scatter.len() == other.scatter.len());
        self.n += other.n;
        for (a, b) in self.abs_max.iter_mut().zip(&other.abs_max) {
            *a = a.max(*b);
        }
        for (a, b) in self.sum.iter_mut().zip(&other.sum) {
            *a += b;
        }
        for (a, b) in self.scatter.iter_mut().zip(&other.scatter) {
            *a += b;
        }
    }

    pub fn floor(&self) -> Vec<f64> {
        variance_floor_from_abs_max(&self.abs_max)
    }

    /// The rows' column means and their scatter about them (what DataScatter::new
    /// computes from the rows): mean = shift + sum / n and
    /// scatter - sum sum^T / n, which loses about eps (|mean - shift| / sigma)^2,
    /// nothing when the shift is near the data.
    pub fn data_scatter(&self) -> Result<DataScatter> {
        let d = self.abs_max.len();
        let n = self.n;
        let mean = (0..d).map(|j| self.shift[j] + self.sum[j] / n).collect();
        let scatter = alloc::collect((0..d * d).map(|i| self.scatter[i] - self.sum[i / d] * self.sum[i % d] / n))?;
        Ok(DataScatter { n: n as usize, mean, scatter })
    }

    /// Checks a summary a client sent: a whole number of rows (at least one),
    /// finite values, magnitudes >= 0, and for tied a scatter about the rows' own
    /// mean that is positive semidefinite.
    pub fn check(&self) -> Result<()> {
        let n = self.n;
        if !(n >= 1.0) || !n.is_finite() || n.fract() != 0.0 {
            return Err(Error::data(format!("the summary reports {} rows; a client needs a whole number of rows, at least one", show(n))));
        }
        for (name, v) in [("absMax", &self.abs_max), ("shift", &self.shift), ("sum", &self.sum), ("scatter", &self.scatter)] {
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::data(format!("summary {}[{}] is {}; values must be finite", name, i, show(v[i]))));
            }
        }
        if let Some(j) = self.abs_max.iter().position(|&v| v < 0.0) {
            return Err(Error::data(format!("summary absMax[{}] is {}; a magnitude cannot be negative", j, show(self.abs_max[j]))));
        }
        if !self.scatter.is_empty() {
            let d = self.abs_max.len();
            let c = self.data_scatter()?;
            let scale: Vec<f64> = (0..d).map(|j| self.scatter[j * d + j]).collect();
            if !linalg::is_positive_semidefinite(&c.scatter, d, &scale, scatter_rounding(n), 0.0, &mut alloc::zeros(d * d)?) {
                return Err(Error::data("the summary's scatter is not positive semidefinite about the rows' mean"));
            }
        }
        Ok(())
    }
}

/// A client's answer to a broadcast model: the statistics of its rows about the
/// model's means, and the sum of their log-likelihoods. No rows give zeros.
pub fn client_statistics(x: &Data, gmm: &Gmm) -> Result<(SuffStats, f64)> {
    if x.d != gmm.d {
        return Err(Error::data(format!("the client's rows have {} features but the model has {}", x.d, gmm.d)));
    }
    if x.n > 0 {
        x.require_finite("the client's rows")?;
    }
    let (stats, total) = SuffStats::from_e_step(x, gmm, &mut BlockBuffers::new(gmm.k, x.d)?, &mut Tiles::new(x.d)?)?;
    if !total.is_finite() {
        return Err(Error::numerical(format!(
            "the log-likelihood of the client's rows under the model is {}; the model gives some row no density",
            show(total)
        )));
    }
    Ok((stats, total))
}

/// The expected complete-data log-likelihood of a client's rows under `gmm`,
/// Q = sum_i sum_c r_ic ln(w_c N(x_i; mu_c, Sigma_c)), from the statistics it
/// sent about gmm's means (for tied covariances with its summary, which holds
/// the scatter tied statistics leave out). The rows' log-likelihood is Q plus
/// the entropy of the responsibilities, between 0 and n ln K: what a client
/// reports must lie in [Q, Q + n ln K]. Also returns the magnitude of Q's
/// terms, which bounds its rounding.
pub fn expected_log_likelihood(stats: &SuffStats, gmm: &Gmm, summary: Option<&DataSummary>) -> Result<(f64, f64)> {
    let (k, d) = (gmm.k, gmm.d);
    if stats.k != k || stats.d != d || stats.cov_type != gmm.cov_type {
        return Err(Error::param("statistics and model differ in components, features or covariance type"));
    }
    let p = &gmm.precisions_chol;
    let log_det = gmm.log_det_chol();
    let half_log_2pi = 0.5 * d as f64 * (2.0 * std::f64::consts::PI).ln();
    // tr(P P^T S) for a d x d precision factor P and a scatter S read through `s(a, b)` (symmetric),
    // and the magnitude its rounding scales with, sum |lambda_ab| sqrt(S_aa S_bb): far above |tr|
    // when the precision is ill-conditioned (correlated features), as each S_ab may be off by a
    // share of sqrt(S_aa S_bb) (stats::scatter_rounding)
    let trace = |pc: &[f64], s: &dyn Fn(usize, usize) -> f64| -> (f64, f64) {
        let (mut t, mut bound) = (0.0, 0.0);
        for a in 0..d {
            for b in 0..d {
                let lambda: f64 = (0..d).map(|c| pc[a * d + c] * pc[b * d + c]).sum();
                t += lambda * s(a, b);
                bound += lambda.abs() * (s(a, a) * s(b, b)).abs().sqrt();
            }
        }
        (t, bound)
    };
    let tied_scatter = if gmm.cov_type == CovarianceType::Tied {
        let sm = summary.filter(|m| m.scatter.len() == d * d && m.sum.len() == d).ok_or_else(|| Error::param("tied statistics need the client's summary (sum and scatter)"))?;
        // sum_c sum_i r_ic (x_i - mu_c)(x_i - mu_c)^T about the summary's shift: the scatter, less
        // sum_c (a_c m_c^T + m_c a_c^T) plus sum_c n_c m_c m_c^T, with m_c = mu_c - shift and
        // a_c = s1_c + n_c m_c (each row's responsibilities summing to one)
        let mut st = sm.scatter.clone();
        for c in 0..k {
            let n = stats.nk[c];
            let m: Vec<f64> = (0..d).map(|j| gmm.means[c * d + j] - sm.shift[j]).collect();
            let a: Vec<f64> = (0..d).map(|j| stats.s1[c * d + j] + n * m[j]).collect();
            for i in 0..d {
                for j in 0..d {
                    st[i * d + j] += n * m[i] * m[j] - a[i] * m[j] - m[i] * a[j];
                }
            }
        }
        Some(st)
    } else {
        None
    };
    let (mut q, mut magnitude) = (0.0, 0.0);
    for c in 0..k {
        let n = stats.nk[c];
        let (tr, bound) = match gmm.cov_type {
            CovarianceType::Full => {
                let s2 = &stats.s2[c * d * d..(c + 1) * d * d];
                trace(&p[c * d * d..(c + 1) * d * d], &|a, b| if a <= b { s2[a * d + b] } else { s2[b * d + a] })
            }
            CovarianceType::Tied => {
                // the shared covariance's trace term is the sum over components: counted once, with component 0
                if c > 0 {
                    (0.0, 0.0)
                } else {
                    let st = tied_scatter.as_ref().unwrap();
                    trace(p, &|a, b| st[a * d + b])
                }
            }
            CovarianceType::Diag => {
                let t: f64 = (0..d).map(|j| p[c * d + j] * p[c * d + j] * stats.s2[c * d + j]).sum();
                (t, t.abs())
            }
            CovarianceType::Spherical => {
                let t = p[c] * p[c] * (0..d).map(|j| stats.s2[c * d + j]).sum::<f64>();
                (t, t.abs())
            }
        };
        let constant = n * (gmm.weights[c].ln() + log_det[c] - half_log_2pi);
        q += constant - 0.5 * tr;
        magnitude += constant.abs() + 0.5 * bound;
    }
    Ok((q, magnitude))
}

/// Checks the log-likelihood a client reports with its statistics: within
/// [Q, Q + n ln K] of expected_log_likelihood, up to rounding. A client cannot
/// then steer the stopping rule with a number its statistics do not support.
pub fn check_log_likelihood(stats: &SuffStats, gmm: &Gmm, summary: Option<&DataSummary>, rows: f64, log_likelihood: f64) -> Result<()> {
    let (q, magnitude) = expected_log_likelihood(stats, gmm, summary)?;
    let entropy = rows * (gmm.k as f64).ln();
    let slack = 1e-7 * (magnitude + entropy + rows);
    if !(log_likelihood >= q - slack && log_likelihood <= q + entropy + slack) {
        return Err(Error::data(format!(
            "its log-likelihood {} lies outside [{}, {}], what its statistics allow under the model (Q to Q + n ln K)",
            show(log_likelihood),
            show(q),
            show(q + entropy)
        )));
    }
    Ok(())
}

/// The server's M-step on the merged statistics (about the broadcast model's
/// means) and the merged summaries: the estimates, the precision factors, and the
/// singular-covariance error with the pooled data's variance floor.
pub fn server_step(stats: &SuffStats, summary: &DataSummary, reg_covar: f64) -> Result<Gmm> {
    if !(reg_covar >= 0.0) || !reg_covar.is_finite() {
        return Err(Error::param(format!("regCovar must be a finite number >= 0, got {}", show(reg_covar))));
    }
    let scatter = if stats.cov_type == CovarianceType::Tied { Some(summary.data_scatter()?) } else { None };
    // EM responsibilities: every row's sum to one
    let tied = scatter.as_ref().map(|data| TiedInput { data, rows_sum_to_one: true });
    let est = stats.estimates(reg_covar, tied)?;
    gmm_from_estimates(stats.cov_type, stats.k, stats.d, est, reg_covar, Some(&summary.floor()))
}

/// The candidates of separated_unit_centers, generated on demand (storing them
/// would take 64 k d values): the cube's corners when d <= 10 (else only the
/// origin), its middle, then points of Roberts' R_d sequence,
/// x_i = frac(1/2 + i alpha) with alpha_j = phi^-(j+1) and phi the positive root
/// of x^(d+1) = x + 1, quasi-random points that need no prime per dimension (as
/// Halton's do) and stay evenly spread in high dimension.
struct Candidates {
    d: usize,
    corners: usize,
    alpha: Vec<f64>,
    count: usize,
}

impl Candidates {
    fn new(d: usize, quasi_random: usize) -> Self {
        let mut phi = 2.0f64;
        for _ in 0..200 {
            phi = (1.0 + phi).powf(1.0 / (d as f64 + 1.0));
        }
        let corners = if d <= 10 { 1 << d } else { 1 };
        let alpha = (0..d).map(|j| phi.powf(-(j as f64 + 1.0))).collect();
        Candidates { d, corners, alpha, count: corners + 1 + quasi_random }
    }

    /// Candidate p into `out` (d values).
    fn get(&self, p: usize, out: &mut [f64]) {
        if p < self.corners {
            for (j, o) in out.iter_mut().enumerate() {
                *o = (p.checked_shr(j as u32).unwrap_or(0) & 1) as f64;
            }
        } else if p == self.corners {
            out.iter_mut().for_each(|o| *o = 0.5);
        } else {
            let i = (p - self.corners) as f64;
            for (o, a) in out.iter_mut().zip(&self.alpha) {
                *o = (0.5 + i * a).fract();
            }
        }
    }

    /// Squared distance of every candidate to `c`, min-ed into `near`.
    fn nearer(&self, c: &[f64], near: &mut [f64]) {
        let mut x = vec![0.0; self.d];
        for (p, v) in near.iter_mut().enumerate() {
            self.get(p, &mut x);
            let s: f64 = x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
            *v = v.min(s);
        }
    }
}

/// k maximally separated centers in the unit cube (k x d, row-major).
///
/// Farthest-point traversal (Gonzalez's greedy maximin) over a candidate set (the
/// cube's corners when d <= 10, its middle, and 64 k, at least 2048, points of the
/// R_d sequence; see Candidates), starting at the origin corner; the last pick's
/// distance s is the smallest separation. The centers are then shrunk towards the
/// cube's middle, x -> r + (1 - 2r) x with r = s / (2 (1 + s)), so that balls of
/// radius r around them are disjoint (separation (1 - 2r) s = 2r) and inside the
/// cube: a packing of k equal balls, as far apart as the greedy finds, none on the
/// boundary where a Gaussian would waste half its mass. One center sits in the
/// middle. In one dimension this gives 1/4, 3/4 for k = 2 and 1/6, 1/2, 5/6 for
/// k = 3; in two, the four quarter points for k = 4.
pub fn separated_unit_centers(k: usize, d: usize) -> Result<Vec<f64>> {
    let cand = Candidates::new(d, alloc::cells(64, k, 8)?.max(2048));
    let mut centers = alloc::zeros(alloc::cells(k, d, 8)?)?;
    let mut near = alloc::filled(f64::INFINITY, cand.count)?;
    cand.nearer(&centers[..d], &mut near);
    let mut sep = f64::INFINITY;
    for c in 1..k {
        let mut best = 0;
        for p in 1..cand.count {
            if near[p] > near[best] {
                best = p;
            }
        }
        sep = near[best].sqrt();
        cand.get(best, &mut centers[c * d..(c + 1) * d]);
        cand.nearer(&centers[c * d..(c + 1) * d], &mut near);
    }
    let r = if k == 1 { 0.5 } else { sep / (2.0 * (1.0 + sep)) };
    centers.iter_mut().for_each(|x| *x = r + (1.0 - 2.0 * r) * *x);
    Ok(centers)
}

/// DEM's first initialization (the FedGenGMM paper's "maximally separated
/// centers given knowledge of the feature range"): the means are
/// separated_unit_centers mapped onto the box [lo, hi] (distances measured in
/// units of each feature's range), the weights equal, and every covariance the
/// diagonal one of a uniform distribution over a box-shaped cell of 1/k of the
/// volume, variance ((hi_j - lo_j) k^(-1/d))^2 / 12 + regCovar for feature j
/// (spherical: their mean; full and tied: the diagonal matrix). No data is used.
pub fn separated_init(cov_type: CovarianceType, k: usize, lo: &[f64], hi: &[f64], reg_covar: f64) -> Result<Gmm> {
    let d = lo.len();
    if k < 1 || d < 1 || hi.len() != d {
        return Err(Error::param(format!("separated initialization needs k >= 1 and a range per feature, got k = {}, {} lows, {} highs", k, d, hi.len())));
    }
    if let Some(j) = (0..d).find(|&j| !(lo[j].is_finite() && hi[j].is_finite() && lo[j] < hi[j])) {
        return Err(Error::param(format!(
            "featureRange for feature {} is [{}, {}]; it needs finite bounds with min < max",
            j,
            show(lo[j]),
            show(hi[j])
        )));
    }
    if !(reg_covar >= 0.0) || !reg_covar.is_finite() {
        return Err(Error::param(format!("regCovar must be a finite number >= 0, got {}", show(reg_covar))));
    }
    let mut means = separated_unit_centers(k, d)?;
    means.iter_mut().enumerate().for_each(|(i, u)| *u = lo[i % d] + (hi[i % d] - lo[i % d]) * *u);
    let cell = (k as f64).powf(-1.0 / d as f64);
    let var: Vec<f64> = (0..d).map(|j| ((hi[j] - lo[j]) * cell).powi(2) / 12.0 + reg_covar).collect();
    let covariances = match cov_type {
        CovarianceType::Diag => alloc::collect((0..k * d).map(|i| var[i % d]))?,
        CovarianceType::Spherical => alloc::filled(var.iter().sum::<f64>() / d as f64, k)?,
        CovarianceType::Full | CovarianceType::Tied => {
            let mut m = alloc::zeros(cov_type.param_len(k, d))?;
            for c in 0..cov_type.n_matrices(k) {
                for j in 0..d {
                    m[c * d * d + j * d + j] = var[j];
                }
            }
            m
        }
    };
    gmm_from_estimates(cov_type, k, d, Estimates { nk: alloc::filled(1.0, k)?, means, covariances }, reg_covar, None)
}

/// The statistics a k-FED client gathers for a target covariance type: tied
/// needs each local cluster's full scatter, whose within-group part is pooled.
pub fn kfed_local_type(cov_type: CovarianceType) -> CovarianceType {
    if cov_type == CovarianceType::Tied {
        CovarianceType::Full
    } else {
        cov_type
    }
}

/// A k-FED client: k-means with k_local clusters on its rows (k-means++, best of
/// 10, scikit-learn's defaults; fewer clusters when it has fewer distinct rows),
/// and each local cluster's statistics about its center (one-hot
/// responsibilities): count, residual first moment and second moments. No rows
/// give no clusters.
pub fn kfed_local(x: &Data, k_local: usize, cov_type: CovarianceType, rng: &mut Rng) -> Result<SuffStats> {
    let t = kfed_local_type(cov_type);
    if k_local < 1 {
        return Err(Error::param("k-FED needs at least one local cluster"));
    }
    if x.n == 0 {
        return SuffStats::new(t, 0, x.d, Vec::new());
    }
    x.require_finite("the client's rows")?;
    let k = k_local.min(x.distinct_rows_up_to(k_local));
    let r = kmeans::fit(x, &KMeansOptions { n_clusters: k, ..Default::default() }, rng)?;
    let n = x.n;
    let mut resp = alloc::zeros(alloc::cells(n, k, 8)?)?;
    for (i, &l) in r.labels.iter().enumerate() {
        resp[l as usize * n + i] = 1.0;
    }
    let mut stats = SuffStats::new(t, k, x.d, r.centers)?;
    stats.add_block(x, 0, n, &resp, n, &mut Tiles::new(x.d)?);
    Ok(stats)
}

/// DEM's third initialization: the k-FED server (kmeans::kfed_groups) on the
/// clients' local clusters, then the initial model from the groups.
///
/// The local centers (count-weighted) are grouped around k seeds; each group's
/// mean is the count-weighted mean of its local centers (the paper's Lloyd step,
/// weighted so that it is the mean of the rows those clusters hold). The initial
/// model is the M-step of those hard assignments: every local cluster's
/// statistics moved onto its group's mean and added (SuffStats::add_component),
/// giving weights (group rows / all rows), means and covariances of the pooled
/// rows of each group, plus regCovar; tied pools the groups' full covariances
/// weighted by their rows. `starts` 0 groups as the paper does: `rng` picks
/// the device whose centers seed the groups, the farthest local centers fill
/// the rest (kfed_groups). `starts` >= 1 groups by count-weighted k-means on
/// every local center, the best of `starts` runs (kmeans::weighted_groups):
/// with as many local clusters as global ones a seed device's centers fill
/// every seed, and those sit in the clusters that one device saw.
pub fn kfed_server(locals: &[SuffStats], k: usize, cov_type: CovarianceType, reg_covar: f64, starts: usize, rng: &mut Rng) -> Result<Gmm> {
    let t = kfed_local_type(cov_type);
    let d = match locals.first() {
        Some(s) => s.d,
        None => return Err(Error::data("k-FED needs the local clusters of at least one client")),
    };
    if k < 1 {
        return Err(Error::param("k-FED needs k >= 1"));
    }
    if !(reg_covar >= 0.0) || !reg_covar.is_finite() {
        return Err(Error::param(format!("regCovar must be a finite number >= 0, got {}", show(reg_covar))));
    }
    if let Some(i) = locals.iter().position(|s| s.cov_type != t || s.d != d || s.k < 1) {
        return Err(Error::data(format!("client {}'s local clusters are not {} statistics of {} features", i, t.name(), d)));
    }
    let mut points = alloc::with_capacity(locals.iter().map(|s| s.k * d).sum())?;
    let mut owners = alloc::with_capacity(locals.len())?;
    for s in locals {
        let start = points.len() / d;
        points.extend(s.means()?);
        owners.push(start..start + s.k);
    }
    let groups = if starts == 0 {
        let first = rng.below(locals.len() as u64) as usize;
        kmeans::kfed_groups(&points, d, &owners, k, first)?
    } else {
        let weights: Vec<f64> = locals.iter().flat_map(|s| s.nk.iter().copied()).collect();
        kmeans::weighted_groups(&points, &weights, d, k, starts, rng)?.0
    };
    let mut w = alloc::zeros(k)?;
    let mut mu = alloc::zeros(alloc::cells(k, d, 8)?)?;
    for (s, own) in locals.iter().zip(&owners) {
        for (l, p) in own.clone().enumerate() {
            let g = groups[p];
            w[g] += s.nk[l];
            for j in 0..d {
                mu[g * d + j] += s.nk[l] * points[p * d + j];
            }
        }
    }
    for i in 0..k * d {
        mu[i] /= w[i / d];
    }
    let mut pooled = SuffStats::new(t, k, d, mu)?;
    for (s, own) in locals.iter().zip(&owners) {
        for (l, p) in own.clone().enumerate() {
            pooled.add_component(groups[p], s, l);
        }
    }
    let est = if cov_type == CovarianceType::Tied {
        let full = pooled.estimates(0.0, None)?;
        let total: f64 = full.nk.iter().sum();
        let mut cov = alloc::zeros(d * d)?;
        for c in 0..k {
            for (i, v) in cov.iter_mut().enumerate() {
                *v += full.nk[c] * full.covariances[c * d * d + i] / total;
            }
        }
        for j in 0..d {
            cov[j * d + j] += reg_covar;
        }
        Estimates { nk: full.nk, means: full.means, covariances: cov }
    } else {
        pooled.estimates(reg_covar, None)?
    };
    gmm_from_estimates(cov_type, k, d, est, reg_covar, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::fit::{self, FitOptions, InitParams};

    /// n rows of k blobs in d dimensions (column-major), blob c centered at 4c in every feature.
    fn blobs(n: usize, d: usize, k: usize, rng: &mut Rng) -> Vec<f64> {
        let mut v = vec![0.0; n * d];
        for i in 0..n {
            let c = (i * k) / n;
            for j in 0..d {
                v[j * n + i] = 4.0 * c as f64 + (1.0 + 0.3 * j as f64) * rng.normal() + if j == 1 { 0.5 * v[i] } else { 0.0 };
            }
        }
        v
    }

    /// Rows [a, b) of column-major n x d values.
    fn rows(v: &[f64], n: usize, d: usize, a: usize, b: usize) -> Vec<f64> {
        (0..d).flat_map(|j| v[j * n + a..j * n + b].to_vec()).collect()
    }

    fn close(a: &[f64], b: &[f64], rel: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= rel * y.abs().max(1e-3))
    }

    #[test]
    fn one_round_of_dem_is_one_iteration_of_em() {
        let (n, d, k) = (600, 3, 3);
        let mut rng = Rng::new(11);
        let v = blobs(n, d, k, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        let cuts = [0, 50, 51, 330, 600];
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: k, covariance_type: t, init_params: InitParams::Random, max_iter: 2, tol: 0.0, ..Default::default() };
            let start = fit::fit(&x, &o, None, &mut Rng::new(5)).unwrap().gmm;
            let one = FitOptions { max_iter: 1, ..o.clone() };
            let central = fit::fit(&x, &one, Some((&start, f64::NEG_INFINITY)), &mut Rng::new(0)).unwrap();
            let shift: Vec<f64> = (0..d).map(|j| (0..k).map(|c| start.weights[c] * start.means[c * d + j]).sum()).collect();
            let mut stats = SuffStats::new(t, k, d, start.means.clone()).unwrap();
            let mut summary = DataSummary::empty(d, &shift, t == CovarianceType::Tied).unwrap();
            let mut total = 0.0;
            for w in cuts.windows(2) {
                let part = rows(&v, n, d, w[0], w[1]);
                let px = Data::new(&part, w[1] - w[0], d).unwrap();
                let (s, l) = client_statistics(&px, &start).unwrap();
                // what travels and what arrives
                let mut s2 = vec![0.0; crate::gmm::stats::wire_s2_len(t, k, d)];
                s.s2_wire_into(&mut s2);
                let wire = SuffStats::from_wire(t, k, d, start.means.clone(), &s.nk, &s.s1, &s2).unwrap();
                assert_eq!(wire, s);
                wire.check_client(px.n as f64, 0.0, 0.0).unwrap();
                stats.merge(&wire);
                let sm = DataSummary::of(&px, &shift, t == CovarianceType::Tied, &mut Tiles::new(d).unwrap()).unwrap();
                sm.check().unwrap();
                summary.merge(&sm);
                total += l;
            }
            let g = server_step(&stats, &summary, 1e-6).unwrap();
            assert!((total / n as f64 - central.lower_bound).abs() < 1e-12 * central.lower_bound.abs(), "{:?}", t);
            assert!(close(&g.weights, &central.gmm.weights, 1e-12), "{:?} weights", t);
            assert!(close(&g.means, &central.gmm.means, 1e-12), "{:?} means", t);
            assert!(close(&g.covariances, &central.gmm.covariances, 1e-12), "{:?} covariances {:?} vs {:?}", t, g.covariances, central.gmm.covariances);
            if t == CovarianceType::Tied {
                let pooled = summary.data_scatter().unwrap();
                let direct = DataScatter::new(&x, &mut Tiles::new(d).unwrap()).unwrap();
                assert!(close(&pooled.mean, &direct.mean, 1e-13) && close(&pooled.scatter, &direct.scatter, 1e-12));
            }
        }
    }

    #[test]
    fn a_reported_log_likelihood_lies_between_q_and_q_plus_the_entropy_bound() {
        let (n, d, k) = (400, 3, 3);
        let v = blobs(n, d, k, &mut Rng::new(4));
        let x = Data::new(&v, n, d).unwrap();
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: k, covariance_type: t, init_params: InitParams::Random, max_iter: 3, tol: 0.0, ..Default::default() };
            let g = fit::fit(&x, &o, None, &mut Rng::new(5)).unwrap().gmm;
            // far from the origin too: the tied scatter is taken about a shift near the data
            for offset in [0.0, 1e4] {
                let moved: Vec<f64> = v.iter().map(|a| a + offset).collect();
                let mx = Data::new(&moved, n, d).unwrap();
                let mut h = g.clone();
                h.means.iter_mut().for_each(|m| *m += offset);
                let shift: Vec<f64> = (0..d).map(|j| (0..k).map(|c| h.weights[c] * h.means[c * d + j]).sum()).collect();
                let summary = DataSummary::of(&mx, &shift, t == CovarianceType::Tied, &mut Tiles::new(d).unwrap()).unwrap();
                let (st, ll) = client_statistics(&mx, &h).unwrap();
                let (q, _) = expected_log_likelihood(&st, &h, Some(&summary)).unwrap();
                let entropy = ll - q;
                assert!(entropy > 0.0 && entropy < n as f64 * (k as f64).ln(), "{:?} offset {}: Q {} L {}", t, offset, q, ll);
                check_log_likelihood(&st, &h, Some(&summary), n as f64, ll).unwrap();
                for wrong in [1e308, -1e308, q - 1.0, q + n as f64 * (k as f64).ln() + 1.0] {
                    assert!(check_log_likelihood(&st, &h, Some(&summary), n as f64, wrong).is_err(), "{:?} accepted {}", t, wrong);
                }
                // statistics scaled up imply a much lower Q: the honest log-likelihood no longer fits them
                let mut forged = st.clone();
                forged.s2.iter_mut().for_each(|s| *s *= 1e6);
                forged.s1.iter_mut().for_each(|s| *s *= 1e3);
                if t != CovarianceType::Tied {
                    assert!(check_log_likelihood(&forged, &h, Some(&summary), n as f64, ll).is_err(), "{:?}", t);
                }
            }
        }
    }

    #[test]
    fn server_step_reports_singular_covariances() {
        // feature 1 is constant at the model's means: zero variance, no regularization
        let v = [0.0, 0.5, 5.0, 5.5, 1.0, 1.0, 1.0, 1.0];
        let x = Data::new(&v, 4, 2).unwrap();
        let eye = vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let g = Gmm::from_covariances(CovarianceType::Full, 2, 2, vec![0.5, 0.5], vec![0.0, 1.0, 5.0, 1.0], eye).unwrap();
        let (s, _) = client_statistics(&x, &g).unwrap();
        let sm = DataSummary::of(&x, &[0.0, 0.0], false, &mut Tiles::new(2).unwrap()).unwrap();
        let e = server_step(&s, &sm, 0.0).unwrap_err();
        assert!(e.message.contains("regCovar"), "{}", e.message);
        assert!(server_step(&s, &sm, 1e-6).is_ok());
    }

    #[test]
    fn moving_statistics_to_another_shift_is_exact() {
        let (n, d) = (200, 3);
        let mut rng = Rng::new(3);
        let v = blobs(n, d, 2, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        let resp: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
        for t in CovarianceType::ALL {
            let a: Vec<f64> = (0..d).map(|_| rng.normal() * 3.0).collect();
            let b: Vec<f64> = (0..d).map(|_| rng.normal() * 3.0).collect();
            let mut about_a = SuffStats::new(t, 1, d, a).unwrap();
            about_a.add_block(&x, 0, n, &resp, n, &mut Tiles::new(d).unwrap());
            let mut about_b = SuffStats::new(t, 1, d, b.clone()).unwrap();
            about_b.add_block(&x, 0, n, &resp, n, &mut Tiles::new(d).unwrap());
            let mut moved = SuffStats::new(t, 1, d, b).unwrap();
            moved.add_component(0, &about_a, 0);
            assert!(close(&moved.nk, &about_b.nk, 1e-13) && close(&moved.s1, &about_b.s1, 1e-11) && close(&moved.s2, &about_b.s2, 1e-11), "{:?}", t);
        }
    }

    #[test]
    fn client_checks_catch_impossible_statistics() {
        let (n, d, k) = (100, 2, 2);
        let mut rng = Rng::new(9);
        let v = blobs(n, d, k, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        let g = separated_init(CovarianceType::Full, k, &[-3.0, -3.0], &[8.0, 8.0], 1e-6).unwrap();
        let (s, _) = client_statistics(&x, &g).unwrap();
        s.check_client(100.0, 0.0, 0.0).unwrap();
        let bad = |f: &dyn Fn(&mut SuffStats), rows: f64, hint: &str| {
            let mut b = s.clone();
            f(&mut b);
            let e = b.check_client(rows, 0.0, 0.0).unwrap_err();
            assert!(e.message.contains(hint), "{} lacks {}", e.message, hint);
        };
        bad(&|_| {}, 0.0, "at least one");
        bad(&|_| {}, 99.5, "whole number");
        bad(&|_| {}, 60.0, "rows");
        bad(&|b| b.nk[0] = -1.0, 100.0, "at least 0");
        bad(&|b| b.nk[0] += 1.0, 100.0, "sum to");
        bad(&|b| b.s1[1] = f64::NAN, 100.0, "finite");
        bad(&|b| b.s2[3] = -1.0, 100.0, "negative variance");
        // a valid diagonal with an impossible correlation
        bad(&|b| b.s2[1] = 10.0 * (b.s2[0] * b.s2[3]).sqrt(), 100.0, "semidefinite");
    }

    #[test]
    fn summaries_are_checked() {
        let v = [0.0, 1.0, 2.0, 3.0, 1.0, 0.0, 1.0, 0.0];
        let x = Data::new(&v, 4, 2).unwrap();
        let s = DataSummary::of(&x, &[1.0, 1.0], true, &mut Tiles::new(2).unwrap()).unwrap();
        s.check().unwrap();
        assert_eq!(s.abs_max, vec![3.0, 1.0]);
        let mut b = s.clone();
        b.scatter[0] = 0.1; // less spread than the sum implies
        assert!(b.check().unwrap_err().message.contains("semidefinite"));
        let mut b = s.clone();
        b.abs_max[1] = -1.0;
        assert!(b.check().is_err());
        let mut b = s;
        b.n = 0.0;
        assert!(b.check().is_err());
    }

    #[test]
    fn separated_centers_pack_the_cube() {
        let c = separated_unit_centers(2, 1).unwrap();
        assert!(close(&c, &[0.25, 0.75], 1e-12), "{:?}", c);
        let mut c = separated_unit_centers(3, 1).unwrap();
        c.sort_by(f64::total_cmp);
        assert!(close(&c, &[1.0 / 6.0, 0.5, 5.0 / 6.0], 1e-12), "{:?}", c);
        let mut c: Vec<(f64, f64)> = separated_unit_centers(4, 2).unwrap().chunks(2).map(|p| (p[0], p[1])).collect();
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(c, vec![(0.25, 0.25), (0.25, 0.75), (0.75, 0.25), (0.75, 0.75)]);
        assert_eq!(separated_unit_centers(1, 3).unwrap(), vec![0.5; 3]);
        for (k, d) in [(5, 2), (15, 10), (10, 38), (30, 100)] {
            let c = separated_unit_centers(k, d).unwrap();
            let lo = c.iter().fold(1.0f64, |a, &v| a.min(v));
            let hi = c.iter().fold(0.0f64, |a, &v| a.max(v));
            let mut sep = f64::INFINITY;
            for a in 0..k {
                for b in 0..a {
                    sep = sep.min((0..d).map(|j| (c[a * d + j] - c[b * d + j]).powi(2)).sum::<f64>().sqrt());
                }
            }
            // balls of radius sep / 2 are disjoint and inside the cube
            assert!(sep > 0.0 && lo >= sep / 2.0 - 1e-12 && hi <= 1.0 - sep / 2.0 + 1e-12, "k {} d {}: sep {} in [{}, {}]", k, d, sep, lo, hi);
        }
    }

    #[test]
    fn separated_init_spans_the_feature_range() {
        for t in CovarianceType::ALL {
            let g = separated_init(t, 4, &[0.0, 10.0], &[1.0, 30.0], 1e-6).unwrap();
            assert_eq!(g.weights, vec![0.25; 4]);
            for c in 0..4 {
                assert!(g.means[c * 2] > 0.0 && g.means[c * 2] < 1.0 && g.means[c * 2 + 1] > 10.0 && g.means[c * 2 + 1] < 30.0);
            }
            // a quarter of the box per component: cells of half the range per feature
            let v0 = 0.5f64.powi(2) / 12.0 + 1e-6;
            let v1 = 10.0f64.powi(2) / 12.0 + 1e-6;
            let want = match t {
                CovarianceType::Diag => vec![v0, v1],
                CovarianceType::Spherical => vec![(v0 + v1) / 2.0],
                _ => vec![v0, 0.0, 0.0, v1],
            };
            assert!(close(&g.covariances[..want.len()], &want, 1e-12), "{:?}: {:?}", t, g.covariances);
        }
        assert!(separated_init(CovarianceType::Diag, 2, &[0.0], &[0.0], 1e-6).unwrap_err().message.contains("min < max"));
        assert!(separated_init(CovarianceType::Diag, 2, &[0.0, 0.0], &[1.0], 1e-6).is_err());
    }

    #[test]
    fn kfed_recovers_blobs_split_across_clients() {
        let (n, d, k) = (900, 2, 3);
        let mut rng = Rng::new(21);
        let v = blobs(n, d, k, &mut rng);
        // non-IID: each client holds two of the three blobs' rows
        let parts = [(0, 250), (250, 550), (550, 900)];
        for t in CovarianceType::ALL {
            let locals: Vec<SuffStats> = parts
                .iter()
                .map(|&(a, b)| {
                    let p = rows(&v, n, d, a, b);
                    kfed_local(&Data::new(&p, b - a, d).unwrap(), 2, t, &mut Rng::new(a as u64)).unwrap()
                })
                .collect();
            for s in &locals {
                s.check_client(s.nk.iter().sum(), 1.0, 0.0).unwrap();
            }
            let g = kfed_server(&locals, k, t, 1e-6, 0, &mut Rng::new(1)).unwrap();
            let mut m: Vec<f64> = (0..k).map(|c| g.means[c * d]).collect();
            m.sort_by(f64::total_cmp);
            for (c, mc) in m.iter().enumerate() {
                assert!((mc - 4.0 * c as f64).abs() < 0.3, "{:?}: means {:?}", t, m);
            }
            for w in &g.weights {
                assert!((w - 1.0 / 3.0).abs() < 0.05, "{:?}: weights {:?}", t, g.weights);
            }
            // the pooled spread of a blob (feature variances 1 and about 1.7)
            assert!(g.covariances[0] > 0.6 && g.covariances[0] < 2.5, "{:?}: {:?}", t, g.covariances);
            // and EM from it reaches the centralized k-means-initialized fit
            let o = FitOptions { n_components: k, covariance_type: t, ..Default::default() };
            let x = Data::new(&v, n, d).unwrap();
            let from_kfed = fit::fit(&x, &o, Some((&g, f64::NEG_INFINITY)), &mut Rng::new(0)).unwrap();
            let central = fit::fit(&x, &o, None, &mut Rng::new(0)).unwrap();
            assert!((from_kfed.lower_bound - central.lower_bound).abs() < 1e-2, "{:?}", t);
        }
    }

    #[test]
    fn kfed_reports_too_few_local_centers() {
        let v = [0.0, 1.0, 0.0, 1.0];
        let x = Data::new(&v, 2, 2).unwrap();
        let l = kfed_local(&x, 5, CovarianceType::Diag, &mut Rng::new(0)).unwrap();
        assert_eq!(l.k, 2);
        let e = kfed_server(&[l.clone()], 3, CovarianceType::Diag, 1e-6, 0, &mut Rng::new(0)).unwrap_err();
        assert!(e.message.contains("fewer than"), "{}", e.message);
        // no rows: no clusters
        let empty = kfed_local(&Data::new(&[], 0, 2).unwrap(), 2, CovarianceType::Diag, &mut Rng::new(0)).unwrap();
        assert_eq!(empty.k, 0);
        assert!(kfed_server(&[l, empty], 2, CovarianceType::Diag, 1e-6, 0, &mut Rng::new(0)).is_err());
    }

    #[test]
    fn kfed_server_by_weighted_kmeans_finds_clusters_a_seed_device_misses() {
        // 4 devices, device c holding blob c only, each sending k = 4 local clusters
        // (its blob cut into pieces): one device's centers fill every seed of the
        // paper's grouping, all in one blob; weighted k-means on every center does not
        let (k, d) = (4, 2);
        let mut rng = Rng::new(5);
        let mut locals = Vec::new();
        for c in 0..k {
            let x: Vec<f64> = (0..2 * 200).map(|i| if i < 200 { 10.0 * c as f64 } else { 0.0 } + rng.normal()).collect();
            locals.push(kfed_local(&Data::new(&x, 200, d).unwrap(), k, CovarianceType::Diag, &mut rng).unwrap());
        }
        let found = |g: &Gmm| {
            let mut m: Vec<f64> = g.means.chunks(d).map(|p| (p[0] / 10.0).round()).collect();
            m.sort_by(|a, b| a.partial_cmp(b).unwrap());
            m
        };
        for seed in 0..5 {
            let kmeans = kfed_server(&locals, k, CovarianceType::Diag, 1e-6, 10, &mut Rng::new(seed)).unwrap();
            assert_eq!(found(&kmeans), vec![0.0, 1.0, 2.0, 3.0], "seed {}", seed);
            let paper = kfed_server(&locals, k, CovarianceType::Diag, 1e-6, 0, &mut Rng::new(seed)).unwrap();
            assert_ne!(found(&paper), vec![0.0, 1.0, 2.0, 3.0], "seed {}", seed);
        }
        // more starts never cost more; too few distinct centers is an error
        let mut points = Vec::new();
        let mut weights = Vec::new();
        for s in &locals {
            points.extend(s.means().unwrap());
            weights.extend(s.nk.iter().copied());
        }
        for seed in 0..10 {
            let one = kmeans::weighted_groups(&points, &weights, d, k, 1, &mut Rng::new(seed)).unwrap().1;
            let ten = kmeans::weighted_groups(&points, &weights, d, k, 10, &mut Rng::new(seed)).unwrap().1;
            assert!(ten <= one);
        }
        assert!(kmeans::weighted_groups(&[0.0, 0.0, 0.0, 0.0], &[1.0, 2.0], 2, 2, 3, &mut Rng::new(0)).is_err());
    }
}
