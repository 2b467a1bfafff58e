//! Hierarchical EM (Vasconcelos & Lippman, "Learning mixture hierarchies",
//! NIPS 1999): reduces a mixture of n "lower" Gaussian components to K
//! "upper" ones from their parameters alone, as FedGenGMM's sample-free
//! server step. Lower component i, of weight w_i (the weights sum to one),
//! stands for N w_i virtual samples drawn from it, N given; all of them go to
//! one upper component together, which makes the E-step
//!
//!   ln h_ij = ln pi_j + N w_i l_ij - lse_i,
//!   l_ij = ln N(mu_i | mu_j, S_j) - 1/2 tr(S_j^-1 S_i)
//!        = -1/2 (d ln 2 pi + ln det S_j + tr(S_j^-1 (S_i + dd')))  with d = mu_i - mu_j,
//!
//! the expected log-density of those samples, in log space (the exponent
//! N w_i makes responsibilities nearly hard). With a_ij = w_i h_ij the M-step
//! is pi_j = sum_i a_ij (the virtual samples' share, as the M-step for
//! samples), mu_j = sum_i a_ij mu_i / pi_j and
//! S_j = sum_i a_ij (S_i + dd') / pi_j + reg_covar I, then tied (shared,
//! weighted by pi) or spherical (the mean variance) as scikit-learn does.
//! The objective, per virtual sample, is sum_i lse_i / N; iterations stop
//! when it changes by less than tol, as GaussianMixture's lower bound.
//!
//! Full and tied upper covariances take the lower ones as d x d matrices;
//! diag and spherical take their diagonals only (the rest does not enter
//! tr(S_j^-1 S_i) for a diagonal S_j). One E-step is O(n K d^2) (full) or
//! O(n K d): S_j's inverse and log-determinant are worked out once per
//! iteration, the per-pair trace is kernels::trace_outer.
//!
//! Initialization, each of n_init times: weighted k-means++ on the lower
//! means (the first pick by weight, then by weight times squared distance,
//! with greedy trials as crate::kmeans), or the given means; each lower
//! component goes wholly to its nearest mean (the first on ties), and one
//! M-step from those hard assignments gives the start. An upper component
//! that gets nothing there starts at its mean with the moment-matched
//! covariance of the whole mixture. The run with the best final objective is
//! kept (the first on ties).
//!
//! Responsibilities below FLUSH (2^-100) are taken as 0 (see there).
//!
//! An upper component left with a share below EMPTY_SHARE keeps its previous
//! mean and covariance (its weight is the share plus 10 eps, as
//! scikit-learn's): with hard responsibilities its weighted mean would be
//! 0 / 0.

use crate::alloc;
use crate::error::{Error, Result};
use crate::gmm::CovarianceType;
use crate::kernels;
use crate::linalg;
use crate::rng::Rng;

/// Below this share of the virtual samples an upper component keeps its previous mean and covariance.
pub const EMPTY_SHARE: f64 = 1e-12;

/// Responsibilities below this (2^-100) count as 0. Nearly hard responsibilities
/// are mostly far smaller, and products of them are subnormal numbers, on which
/// the hardware is tens of times slower; what is dropped moves a mean or
/// covariance by less than 1e-30 of itself.
pub const FLUSH: f64 = 7.888_609_052_210_118e-31;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// The lower components: n weights, n x d means, and n covariances of
/// `lower_size(covariance_type, d)` values each (d x d row-major for full
/// and tied, d variances for diag and spherical).
#[derive(Clone, Copy)]
pub struct Lower<'a> {
    pub n: usize,
    pub weights: &'a [f64],
    pub means: &'a [f64],
    pub covariances: &'a [f64],
}

/// Values per lower covariance for an upper type.
pub fn lower_size(t: CovarianceType, d: usize) -> usize {
    if full_form(t) {
        d * d
    } else {
        d
    }
}

fn full_form(t: CovarianceType) -> bool {
    matches!(t, CovarianceType::Full | CovarianceType::Tied)
}

#[derive(Clone, Copy)]
pub struct Options<'a> {
    pub k: usize,
    pub covariance_type: CovarianceType,
    /// N, the virtual samples the lower mixture stands for
    pub virtual_samples: f64,
    pub tol: f64,
    pub max_iter: usize,
    pub reg_covar: f64,
    pub n_init: usize,
    /// k x d starting means (then n_init is 1)
    pub means_init: Option<&'a [f64]>,
}

/// The reduced mixture: covariances shaped as GaussianMixture's for the type.
#[derive(Clone, Debug)]
pub struct Reduced {
    pub weights: Vec<f64>,
    pub means: Vec<f64>,
    pub covariances: Vec<f64>,
    /// the objective per virtual sample at the returned parameters
    pub lower_bound: f64,
    /// sum_i w_i sum_j h_ij (ln pi_j + l_ij - ln h_ij): a lower bound (Jensen's)
    /// on the mean log-likelihood of the virtual samples under the reduced
    /// mixture, with the prior counted per sample; what BIC takes
    pub log_likelihood: f64,
    pub n_iter: usize,
    pub converged: bool,
}

/// The parameters during the iterations: covariances always per component
/// (d x d or d), tied and spherical ones expanded.
struct State {
    weights: Vec<f64>,
    means: Vec<f64>,
    covs: Vec<f64>,
}

pub fn check(d: usize, lower: &Lower, o: &Options) -> Result<()> {
    if d == 0 {
        return Err(Error::param("the components need at least one dimension"));
    }
    let n = lower.n;
    if n == 0 {
        return Err(Error::data("there are no components to reduce"));
    }
    if o.k == 0 {
        return Err(Error::param("the reduced mixture needs at least one component"));
    }
    if o.k > n {
        return Err(Error::param(format!("cannot reduce {} components to {}: K must be at most the number of components", n, o.k)));
    }
    if !(o.virtual_samples.is_finite() && o.virtual_samples > 0.0) {
        return Err(Error::param(format!("the virtual samples must be a positive finite number, got {}", crate::error::show(o.virtual_samples))));
    }
    if !(o.tol.is_finite() && o.tol >= 0.0) {
        return Err(Error::param(format!("tol must be finite and at least 0, got {}", crate::error::show(o.tol))));
    }
    if !(o.reg_covar.is_finite() && o.reg_covar >= 0.0) {
        return Err(Error::param(format!("reg_covar must be finite and at least 0, got {}", crate::error::show(o.reg_covar))));
    }
    if o.max_iter == 0 || o.n_init == 0 {
        return Err(Error::param("max_iter and n_init must be at least 1"));
    }
    let size = lower_size(o.covariance_type, d);
    let too_many = || Error::data(format!("{} components of {} dimensions are too many", n, d));
    let (nm, nc) = (n.checked_mul(d).ok_or_else(too_many)?, n.checked_mul(size).ok_or_else(too_many)?);
    if lower.weights.len() != n || lower.means.len() != nm || lower.covariances.len() != nc {
        return Err(Error::data(format!(
            "{} components of {} dimensions need {} weights, {} means and {} covariance values, got {}, {} and {}",
            n,
            d,
            n,
            nm,
            nc,
            lower.weights.len(),
            lower.means.len(),
            lower.covariances.len()
        )));
    }
    for (i, &w) in lower.weights.iter().enumerate() {
        if !(w.is_finite() && w > 0.0) {
            return Err(Error::data(format!("the weight of component {} is {}; weights must be positive and finite", i, crate::error::show(w))));
        }
    }
    for (what, values, width) in [("mean", lower.means, d), ("covariance", lower.covariances, size)] {
        if let Some(p) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::data(format!("the {} of component {} holds a value that is not finite ({})", what, p / width, crate::error::show(values[p]))));
        }
    }
    if full_form(o.covariance_type) {
        let mut l = alloc::zeros(d * d)?;
        for i in 0..n {
            let s = &lower.covariances[i * size..(i + 1) * size];
            if !linalg::is_symmetric(s, d) || linalg::cholesky_lower(s, d, &mut l).is_err() {
                return Err(Error::data(format!("the covariance of component {} is not symmetric positive definite", i)));
            }
        }
    } else if let Some(p) = lower.covariances.iter().position(|&v| v <= 0.0) {
        return Err(Error::data(format!("the covariance of component {} has a variance that is not positive ({})", p / d, crate::error::show(lower.covariances[p]))));
    }
    if let Some(m) = o.means_init {
        if m.len() != o.k * d {
            return Err(Error::data(format!("means_init needs {} x {} = {} values, got {}", o.k, d, o.k * d, m.len())));
        }
        if m.iter().any(|v| !v.is_finite()) {
            return Err(Error::data("means_init holds a value that is not finite"));
        }
    }
    Ok(())
}

/// Reduces `lower` (d dimensions) to `o.k` components; see the module's notes.
pub fn reduce(d: usize, lower: &Lower, o: &Options, rng: &mut Rng) -> Result<Reduced> {
    check(d, lower, o)?;
    let total: f64 = lower.weights.iter().sum();
    let weights = alloc::collect(lower.weights.iter().map(|w| w / total))?;
    let lower = Lower { weights: &weights, ..*lower };
    let mut work = Work::new(d, &lower, o)?;
    let runs = if o.means_init.is_some() { 1 } else { o.n_init };
    let mut best: Option<Reduced> = None;
    for _ in 0..runs {
        let centers = match o.means_init {
            Some(m) => alloc::copy(m)?,
            None => weighted_kmeans_plusplus(d, &lower, o.k, &mut rng.fork())?,
        };
        let run = work.run(&centers)?;
        if best.as_ref().map_or(true, |b| run.lower_bound > b.lower_bound) {
            best = Some(run);
        }
    }
    Ok(best.expect("at least one run"))
}

/// k-means++ on the lower means, each weighted by its w_i: the first pick in
/// proportion to w, then to w times the squared distance to the nearest pick,
/// keeping of 2 + ln k candidates the one that lowers the weighted potential most.
fn weighted_kmeans_plusplus(d: usize, lower: &Lower, k: usize, rng: &mut Rng) -> Result<Vec<f64>> {
    let n = lower.n;
    let w = lower.weights;
    let mean = |i: usize| &lower.means[i * d..(i + 1) * d];
    let pick = |cum: &[f64], total: f64, rng: &mut Rng| -> usize {
        let v = rng.next_f64() * total;
        cum.partition_point(|&c| c <= v).min(n - 1)
    };
    let sq = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum() };
    let mut cum = alloc::zeros(n)?;
    let mut acc = 0.0;
    for i in 0..n {
        acc += w[i];
        cum[i] = acc;
    }
    let first = pick(&cum, acc, rng);
    let mut centers = alloc::with_capacity(alloc::cells(k, d, 8)?)?;
    centers.extend_from_slice(mean(first));
    let mut closest = alloc::collect((0..n).map(|i| w[i] * sq(mean(i), mean(first))))?;
    let trials = 2 + (k as f64).ln() as usize;
    let mut cand = alloc::zeros(n)?;
    let mut best_d = alloc::zeros(n)?;
    for _ in 1..k {
        let mut acc = 0.0;
        for i in 0..n {
            acc += closest[i];
            cum[i] = acc;
        }
        let mut best: Option<(usize, f64)> = None;
        for _ in 0..trials {
            // a zero potential (fewer distinct means than k) picks by weight
            let id = if acc > 0.0 {
                pick(&cum, acc, rng)
            } else {
                let mut a = 0.0;
                for i in 0..n {
                    a += w[i];
                    cum[i] = a;
                }
                pick(&cum, a, rng)
            };
            let mut pot = 0.0;
            for i in 0..n {
                cand[i] = closest[i].min(w[i] * sq(mean(i), mean(id)));
                pot += cand[i];
            }
            if best.map_or(true, |(_, p)| pot < p) {
                best = Some((id, pot));
                best_d.copy_from_slice(&cand);
            }
        }
        let (id, _) = best.expect("at least two trials");
        std::mem::swap(&mut closest, &mut best_d);
        centers.extend_from_slice(mean(id));
    }
    Ok(centers)
}

/// Buffers of one reduction, reused across inits and iterations.
struct Work<'a> {
    d: usize,
    lower: &'a Lower<'a>,
    o: &'a Options<'a>,
    size: usize,
    /// n x k log responsibilities, then responsibilities
    resp: Vec<f64>,
    /// n x k expected log-densities l_ij of the last E-step
    ll: Vec<f64>,
    /// per upper component: S_j^-1 (full forms; row after row) or 1 / variances
    /// (diagonal forms; feature-major, d rows of k, as kernels::trace_outer_diag
    /// takes them, with the means alongside in `centres`), and ln det S_j
    prec: Vec<f64>,
    centres: Vec<f64>,
    log_det: Vec<f64>,
    delta: Vec<f64>,
    scratch: Vec<f64>,
}

impl<'a> Work<'a> {
    fn new(d: usize, lower: &'a Lower<'a>, o: &'a Options<'a>) -> Result<Self> {
        let size = lower_size(o.covariance_type, d);
        Ok(Work {
            d,
            lower,
            o,
            size,
            resp: alloc::zeros(alloc::cells(lower.n, o.k, 8)?)?,
            ll: alloc::zeros(alloc::cells(lower.n, o.k, 8)?)?,
            prec: alloc::zeros(alloc::cells(o.k, size, 8)?)?,
            centres: alloc::zeros(alloc::cells(o.k, d, 8)?)?,
            log_det: alloc::zeros(o.k)?,
            delta: alloc::zeros(d)?,
            scratch: alloc::zeros(alloc::cells(2 * d, d, 8)?)?,
        })
    }

    fn run(&mut self, centers: &[f64]) -> Result<Reduced> {
        let (n, k, d) = (self.lower.n, self.o.k, self.d);
        // hard start: each lower component to its nearest center
        for v in self.resp.iter_mut() {
            *v = 0.0;
        }
        for i in 0..n {
            let mu = &self.lower.means[i * d..(i + 1) * d];
            let mut best = (0, f64::INFINITY);
            for j in 0..k {
                let c = &centers[j * d..(j + 1) * d];
                let s: f64 = mu.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
                if s < best.1 {
                    best = (j, s);
                }
            }
            self.resp[i * k + best.0] = 1.0;
        }
        let mut state = State { weights: alloc::zeros(k)?, means: alloc::copy(centers)?, covs: alloc::zeros(alloc::cells(k, self.size, 8)?)? };
        let pooled = self.pooled_covariance()?;
        for j in 0..k {
            state.covs[j * self.size..(j + 1) * self.size].copy_from_slice(&pooled);
        }
        self.m_step(&mut state);
        let mut lower_bound = f64::NEG_INFINITY;
        let mut converged = false;
        let mut n_iter = 0;
        for it in 1..=self.o.max_iter {
            n_iter = it;
            let prev = lower_bound;
            lower_bound = self.e_step(&state)?;
            self.m_step(&mut state);
            if (lower_bound - prev).abs() < self.o.tol {
                converged = true;
                break;
            }
        }
        // the objective of the parameters returned (the loop's is of the ones before its last M-step)
        let lower_bound = self.e_step(&state)?;
        let log_likelihood = self.expected_log_likelihood(&state);
        Ok(Reduced { weights: state.weights, means: state.means, covariances: self.shaped(&state.covs)?, lower_bound, log_likelihood, n_iter, converged })
    }

    /// See Reduced::log_likelihood; from the last E-step.
    fn expected_log_likelihood(&self, state: &State) -> f64 {
        let (n, k) = (self.lower.n, self.o.k);
        let mut total = 0.0;
        for i in 0..n {
            let mut t = 0.0;
            for j in 0..k {
                let h = self.resp[i * k + j];
                if h > 0.0 {
                    t += h * ((state.weights[j].ln() + self.ll[i * k + j]) - h.ln());
                }
            }
            total += self.lower.weights[i] * t;
        }
        total
    }

    /// sum_i w_i (S_i + (mu_i - m)(mu_i - m)') + reg I with m the mixture's mean: where an upper component nobody chose starts.
    fn pooled_covariance(&mut self) -> Result<Vec<f64>> {
        let (n, d, size) = (self.lower.n, self.d, self.size);
        let w = self.lower.weights;
        let mut m = alloc::zeros(d)?;
        for i in 0..n {
            kernels::axpy(&mut m, &self.lower.means[i * d..(i + 1) * d], w[i]);
        }
        let mut out = alloc::zeros(size)?;
        for i in 0..n {
            for l in 0..d {
                self.delta[l] = self.lower.means[i * d + l] - m[l];
            }
            self.add_scatter(&mut out, i, w[i]);
        }
        self.add_reg(&mut out);
        Ok(out)
    }

    /// out += a (S_i + delta delta') (the diagonal only for diagonal forms).
    fn add_scatter(&self, out: &mut [f64], i: usize, a: f64) {
        let (d, size) = (self.d, self.size);
        let s = &self.lower.covariances[i * size..(i + 1) * size];
        let u = &self.delta;
        if size == d {
            for l in 0..d {
                out[l] += a * (s[l] + u[l] * u[l]);
            }
        } else {
            for r in 0..d {
                let ar = a * u[r];
                let (o, sr) = (&mut out[r * d..(r + 1) * d], &s[r * d..(r + 1) * d]);
                for c in 0..d {
                    o[c] += a * sr[c] + ar * u[c];
                }
            }
        }
    }

    fn add_reg(&self, c: &mut [f64]) {
        let d = self.d;
        for l in 0..d {
            c[if self.size == d { l } else { l * d + l }] += self.o.reg_covar;
        }
    }

    /// Responsibilities into `resp` from `state`; returns the objective per virtual sample.
    fn e_step(&mut self, state: &State) -> Result<f64> {
        let (n, k, d, size) = (self.lower.n, self.o.k, self.d, self.size);
        let full = size != d;
        for j in 0..k {
            let c = &state.covs[j * size..(j + 1) * size];
            if full {
                let p = &mut self.prec[j * size..(j + 1) * size];
                if linalg::invert_spd(c, d, p, &mut self.scratch).is_err() {
                    return Err(Error::numerical(format!(
                        "the covariance of reduced component {} is not positive definite; increase reg_covar or reduce to fewer components",
                        j
                    )));
                }
                let l = &self.scratch[..d * d];
                self.log_det[j] = 2.0 * (0..d).map(|r| l[r * d + r].ln()).sum::<f64>();
            } else {
                if c.iter().any(|&v| !(v > 0.0)) {
                    return Err(Error::numerical(format!("a variance of reduced component {} is not positive; increase reg_covar", j)));
                }
                for l in 0..d {
                    self.prec[l * k + j] = 1.0 / c[l];
                    self.centres[l * k + j] = state.means[j * d + l];
                }
                self.log_det[j] = c.iter().map(|v| v.ln()).sum();
            }
        }
        let nv = self.o.virtual_samples;
        let log_w = alloc::collect(state.weights.iter().map(|w| w.ln()))?;
        let mut total = 0.0;
        for i in 0..n {
            let mu = &self.lower.means[i * d..(i + 1) * d];
            let s = &self.lower.covariances[i * size..(i + 1) * size];
            let scale = nv * self.lower.weights[i];
            let row = &mut self.resp[i * k..(i + 1) * k];
            // the traces tr(S_j^-1 (S_i + dd')) into ll's row first
            let lrow = &mut self.ll[i * k..(i + 1) * k];
            if full {
                for j in 0..k {
                    let mj = &state.means[j * d..(j + 1) * d];
                    for l in 0..d {
                        self.delta[l] = mu[l] - mj[l];
                    }
                    lrow[j] = kernels::trace_outer(&self.prec[j * size..(j + 1) * size], s, &self.delta, d);
                }
            } else {
                kernels::trace_outer_diag(&self.prec, &self.centres, s, mu, d, k, lrow);
            }
            for j in 0..k {
                let ll = -0.5 * ((d as f64 * LN_2PI + self.log_det[j]) + lrow[j]);
                lrow[j] = ll;
                row[j] = log_w[j] + scale * ll;
            }
            let top = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if !top.is_finite() {
                return Err(Error::numerical(format!("component {} has no finite responsibility under the reduced mixture", i)));
            }
            for v in row.iter_mut() {
                *v -= top;
            }
            // exp of what is at most 0: the vectorized exp takes it (underflow to 0 included)
            kernels::exp_in_place(row);
            let sum: f64 = row.iter().sum();
            for v in row.iter_mut() {
                *v = if *v < FLUSH { 0.0 } else { *v / sum };
            }
            total += top + sum.ln();
        }
        Ok(total / nv)
    }

    /// Weights, means and covariances from the responsibilities in `resp`.
    fn m_step(&mut self, state: &mut State) {
        let (n, k, d, size) = (self.lower.n, self.o.k, self.d, self.size);
        let w = self.lower.weights;
        let mut shares = vec![0.0; k];
        for i in 0..n {
            for j in 0..k {
                shares[j] += w[i] * self.resp[i * k + j];
            }
        }
        // a_ij = w_i h_ij is 0 exactly where h_ij was flushed: those pairs are skipped below
        let mut acc = vec![0.0; size];
        for j in 0..k {
            let share = shares[j];
            state.weights[j] = share + 10.0 * f64::EPSILON;
            if share < EMPTY_SHARE {
                continue;
            }
            let mj = &mut state.means[j * d..(j + 1) * d];
            for v in mj.iter_mut() {
                *v = 0.0;
            }
            for i in 0..n {
                let a = w[i] * self.resp[i * k + j];
                if a != 0.0 {
                    kernels::axpy(mj, &self.lower.means[i * d..(i + 1) * d], a / share);
                }
            }
            for v in acc.iter_mut() {
                *v = 0.0;
            }
            for i in 0..n {
                let a = w[i] * self.resp[i * k + j];
                if a == 0.0 {
                    continue;
                }
                for l in 0..d {
                    self.delta[l] = self.lower.means[i * d + l] - state.means[j * d + l];
                }
                self.add_scatter(&mut acc, i, a / share);
            }
            let c = &mut state.covs[j * size..(j + 1) * size];
            c.copy_from_slice(&acc);
            self.add_reg(c);
        }
        let total: f64 = state.weights.iter().sum();
        for v in state.weights.iter_mut() {
            *v /= total;
        }
        match self.o.covariance_type {
            CovarianceType::Tied => {
                // the components' scatter pooled by their shares (scikit-learn's tied estimate)
                // (each carries reg I, and the shares sum to one: so does the pool)
                let mut pooled = vec![0.0; size];
                for j in 0..k {
                    let a = state.weights[j];
                    for (p, c) in pooled.iter_mut().zip(&state.covs[j * size..(j + 1) * size]) {
                        *p += a * c;
                    }
                }
                for j in 0..k {
                    state.covs[j * size..(j + 1) * size].copy_from_slice(&pooled);
                }
            }
            CovarianceType::Spherical => {
                for j in 0..k {
                    let c = &mut state.covs[j * d..(j + 1) * d];
                    let m = c.iter().sum::<f64>() / d as f64;
                    for v in c.iter_mut() {
                        *v = m;
                    }
                }
            }
            _ => {}
        }
    }

    /// The covariances as GaussianMixture stores them for the type.
    fn shaped(&self, covs: &[f64]) -> Result<Vec<f64>> {
        let (k, d) = (self.o.k, self.d);
        match self.o.covariance_type {
            CovarianceType::Full | CovarianceType::Diag => alloc::copy(covs),
            CovarianceType::Tied => alloc::copy(&covs[..d * d]),
            CovarianceType::Spherical => alloc::collect((0..k).map(|j| covs[j * d])),
        }
    }
}

#[cfg(test)]
mod tests;
