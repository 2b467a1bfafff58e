//! Initialization and the EM loop, following scikit-learn's BaseMixture.fit:
//! n_init restarts keeping the best lower bound, stopping when the change of the
//! mean log-likelihood per row falls below tol, warm starts that continue from a
//! previous fit.

use super::estep::BlockBuffers;
use super::mstep::{self, Workspace};
use super::stats::SuffStats;
use super::{check_weights, precisions_cholesky_from_covariances, precisions_init_to_chol, singular_covariance_error, CovarianceType, Gmm};
use crate::alloc;
use crate::data::Data;
use crate::error::{Error, Result};
use crate::kmeans::{self, KMeansInit, KMeansOptions};
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitParams {
    /// responsibilities from the labels of one k-means run (k-means++ seeds, Lloyd)
    KMeans,
    /// one-hot responsibilities on k-means++ seed rows
    KMeansPlusPlus,
    /// uniform random responsibilities, normalized per row
    Random,
    /// one-hot responsibilities on k distinct random rows
    RandomFromData,
}

impl InitParams {
    pub const ALL: [InitParams; 4] = [InitParams::KMeans, InitParams::KMeansPlusPlus, InitParams::Random, InitParams::RandomFromData];

    /// Stable code used across the C ABI.
    pub const fn code(self) -> i32 {
        match self {
            InitParams::KMeans => 0,
            InitParams::KMeansPlusPlus => 1,
            InitParams::Random => 2,
            InitParams::RandomFromData => 3,
        }
    }

    /// scikit-learn's name of the method (its `init_params` value).
    pub fn name(self) -> &'static str {
        match self {
            InitParams::KMeans => "kmeans",
            InitParams::KMeansPlusPlus => "k-means++",
            InitParams::Random => "random",
            InitParams::RandomFromData => "random_from_data",
        }
    }

    pub fn from_code(code: i32) -> Result<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.code() == code)
            .ok_or_else(|| Error::param(format!("unknown initParams code {}; use 0 kmeans, 1 k-means++, 2 random, 3 random_from_data", code)))
    }
}

#[derive(Clone, Debug)]
pub struct FitOptions {
    pub n_components: usize,
    pub covariance_type: CovarianceType,
    pub tol: f64,
    pub reg_covar: f64,
    pub max_iter: usize,
    pub n_init: usize,
    pub init_params: InitParams,
    /// (k,)
    pub weights_init: Option<Vec<f64>>,
    /// (k, d)
    pub means_init: Option<Vec<f64>>,
    /// precisions (inverse covariances), shaped by covariance type
    pub precisions_init: Option<Vec<f64>>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            n_components: 1,
            covariance_type: CovarianceType::Full,
            tol: 1e-3,
            reg_covar: 1e-6,
            max_iter: 100,
            n_init: 1,
            init_params: InitParams::KMeans,
            weights_init: None,
            means_init: None,
            precisions_init: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct FitResult {
    pub gmm: Gmm,
    /// true when some restart reached the tolerance (scikit-learn's converged_)
    pub converged: bool,
    /// EM iterations of the best restart
    pub n_iter: usize,
    /// mean log-likelihood per row of the best restart at its last E-step
    pub lower_bound: f64,
}

fn check_number(name: &str, v: f64) -> Result<()> {
    if !(v >= 0.0) || !v.is_finite() {
        return Err(Error::param(format!("{} must be a finite number >= 0, got {}", name, crate::error::display(v))));
    }
    Ok(())
}

/// Option checks that do not need the data (scikit-learn's _check_parameters
/// plus the constraints of _parameter_constraints).
pub fn validate_options(o: &FitOptions, d: usize) -> Result<()> {
    let k = o.n_components;
    if k < 1 {
        return Err(Error::param(format!("nComponents must be at least 1, got {}", k)));
    }
    if o.n_init < 1 {
        return Err(Error::param(format!("nInit must be at least 1, got {}", o.n_init)));
    }
    check_number("tol", o.tol)?;
    check_number("regCovar", o.reg_covar)?;
    if let Some(w) = &o.weights_init {
        check_weights(w, k).map_err(|e| Error::param(format!("weightsInit: {}", e.message)))?;
    }
    if let Some(m) = &o.means_init {
        if m.len() != k * d {
            return Err(Error::param(format!("meansInit has {} values; expected shape ({}, {}) = {} values", m.len(), k, d, k * d)));
        }
        if m.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("meansInit must be finite"));
        }
    }
    if let Some(p) = &o.precisions_init {
        precisions_init_to_chol(o.covariance_type, k, d, p)?;
    }
    Ok(())
}

/// Responsibilities (n x k, column-major) for one initialization.
fn initial_responsibilities(x: &Data, o: &FitOptions, rng: &mut Rng) -> Result<Vec<f64>> {
    let (n, k) = (x.n, o.n_components);
    let mut resp = alloc::zeros(alloc::cells(n, k, 8)?)?;
    match o.init_params {
        InitParams::KMeans => {
            let opts = KMeansOptions { n_clusters: k, init: KMeansInit::PlusPlus, n_init: 1, ..Default::default() };
            let tol_abs = kmeans::absolute_tolerance(x, opts.tol);
            let seeds = kmeans::kmeans_plusplus(x, k, rng)?.0;
            let r = kmeans::lloyd(x, seeds, k, opts.max_iter, tol_abs)?;
            for (i, &l) in r.labels.iter().enumerate() {
                resp[l as usize * n + i] = 1.0;
            }
        }
        InitParams::KMeansPlusPlus => {
            for (c, &i) in kmeans::kmeans_plusplus(x, k, rng)?.1.iter().enumerate() {
                resp[c * n + i] = 1.0;
            }
        }
        InitParams::Random => {
            for i in 0..n {
                let mut s = 0.0;
                for c in 0..k {
                    let u = rng.next_f64();
                    resp[c * n + i] = u;
                    s += u;
                }
                for c in 0..k {
                    resp[c * n + i] /= s;
                }
            }
        }
        InitParams::RandomFromData => {
            for (c, &i) in rng.sample_without_replacement(n, k)?.iter().enumerate() {
                resp[c * n + i] = 1.0;
            }
        }
    }
    Ok(resp)
}

/// Initial parameters: estimated from initial responsibilities, then replaced by
/// whatever the user gave (scikit-learn's _initialize).
fn initialize(x: &Data, o: &FitOptions, ws: &mut Workspace, rng: &mut Rng) -> Result<Gmm> {
    let (k, d, t) = (o.n_components, x.d, o.covariance_type);
    let all_given = o.weights_init.is_some() && o.means_init.is_some() && o.precisions_init.is_some();
    let (mut weights, mut means, mut covariances) = if all_given {
        (Vec::new(), Vec::new(), Vec::new()) // nothing estimated would survive
    } else {
        let resp = initial_responsibilities(x, o, rng)?;
        // k-means++ and random_from_data give mass to k rows only
        let rows_sum_to_one = matches!(o.init_params, InitParams::KMeans | InitParams::Random);
        let est = mstep::estimate_parameters(x, &resp, k, t, o.reg_covar, rows_sum_to_one, ws)?;
        let w = alloc::collect(est.nk.iter().map(|v| v / x.n as f64))?;
        (w, est.means, est.covariances)
    };
    if let Some(w) = &o.weights_init {
        weights = alloc::copy(w)?;
    }
    if let Some(m) = &o.means_init {
        means = alloc::copy(m)?;
    }
    let gmm = match &o.precisions_init {
        Some(p) => {
            let pc = precisions_init_to_chol(t, k, d, p)?;
            Gmm::from_parts(t, k, d, weights, means, pc, None)?
        }
        None => {
            let pc = precisions_cholesky_from_covariances(t, k, d, &covariances, Some(&ws.floor), |c| singular_covariance_error(c, o.reg_covar))?;
            covariances.truncate(t.param_len(k, d));
            Gmm { cov_type: t, k, d, weights, means, covariances, precisions_chol: pc }
        }
    };
    Ok(gmm)
}

/// The E-step of EM with the statistics it feeds (SuffStats::from_e_step, or
/// the float32 twin in float32.rs) and the sum of the rows' log-likelihoods.
pub type EStep<'a> = dyn FnMut(&Gmm, &mut Workspace) -> Result<(SuffStats, f64)> + 'a;

/// EM from `gmm` for at most max_iter iterations; returns (n_iter, lower bound, converged).
/// Each iteration is one pass over the rows (`e_step`): the M-step needs
/// nothing but the statistics.
fn run_em(x: &Data, o: &FitOptions, gmm: &mut Gmm, start_bound: f64, ws: &mut Workspace, e_step: &mut EStep) -> Result<(usize, f64, bool)> {
    let mut bound = start_bound;
    for it in 1..=o.max_iter {
        let prev = bound;
        let (stats, total) = e_step(gmm, ws)?;
        bound = total / x.n as f64;
        if !bound.is_finite() {
            return Err(non_finite_bound(bound, it));
        }
        let est = stats.estimates(o.reg_covar, ws.tied(true))?;
        mstep::apply_estimates(gmm, est, o.reg_covar, &ws.floor)?;
        if (bound - prev).abs() < o.tol {
            return Ok((it, bound, true));
        }
        if it == o.max_iter {
            return Ok((it, bound, false));
        }
    }
    Ok((0, bound, false))
}

/// The checks fit() makes before any work: the options, at least two finite
/// rows that can be clustered, and a warm model of the shape asked for.
pub fn check_fit(x: &Data, o: &FitOptions, warm: Option<&Gmm>) -> Result<()> {
    validate_options(o, x.d)?;
    if x.n < 2 {
        x.require_finite("X")?;
        return Err(Error::data(format!("X has {} row(s); a Gaussian mixture needs at least 2", x.n)));
    }
    kmeans::require_clusterable(x, o.n_components, "nComponents")?;
    if let Some(g) = warm {
        if g.k != o.n_components || g.d != x.d || g.cov_type != o.covariance_type {
            return Err(Error::param(format!(
                "warm start from a model with {} components, {} features, '{}' covariance cannot fit {} components, {} features, '{}'",
                g.k,
                g.d,
                g.cov_type.name(),
                o.n_components,
                x.d,
                o.covariance_type.name()
            )));
        }
    }
    Ok(())
}

/// The model restart `run` (from 0) of fit() starts its EM from, after
/// fit()'s checks: restart r initializes with the (r + 1)-th fork of `rng`, as
/// fit() does, so that EM run elsewhere (over row shards, see em_step) starts
/// where fit() would. A warm model is copied (fit() makes one restart from it).
pub fn initial_model(x: &Data, o: &FitOptions, warm: Option<&Gmm>, run: usize, rng: &mut Rng) -> Result<Gmm> {
    check_fit(x, o, warm)?;
    if let Some(g) = warm {
        return g.try_clone();
    }
    let mut ws = Workspace::new(x, o.covariance_type)?;
    for _ in 0..run {
        rng.fork();
    }
    initialize(x, o, &mut ws, &mut rng.fork())
}

/// One M-step of EM from statistics summed elsewhere (the E-steps of row
/// shards, merged in a fixed order): what run_em does after its E-step at
/// iteration `it`, with `total` the sum of the rows' log-likelihoods under
/// `gmm`. Returns the new model and the mean log-likelihood per row.
pub fn em_step(gmm: &Gmm, stats: &SuffStats, total: f64, it: usize, reg_covar: f64, ws: &Workspace, n: usize) -> Result<(Gmm, f64)> {
    let bound = total / n as f64;
    if !bound.is_finite() {
        return Err(non_finite_bound(bound, it));
    }
    let est = stats.estimates(reg_covar, ws.tied(true))?;
    Ok((mstep::gmm_from_estimates(gmm.cov_type, gmm.k, gmm.d, est, reg_covar, Some(&ws.floor))?, bound))
}

fn non_finite_bound(bound: f64, it: usize) -> Error {
    Error::numerical(format!("the log-likelihood became {} at EM iteration {}; check the data scale or increase regCovar", crate::error::display(bound), it))
}

/// Fits a Gaussian mixture to `x`. `warm` continues from a previous model and its
/// lower bound with a single run (scikit-learn's warm_start after a first fit).
pub fn fit(x: &Data, o: &FitOptions, warm: Option<(&Gmm, f64)>, rng: &mut Rng) -> Result<FitResult> {
    check_fit(x, o, warm.map(|(g, _)| g))?;
    let mut bufs = BlockBuffers::new(o.n_components, x.d)?;
    fit_with(x, o, warm, rng, &mut |g, ws| SuffStats::from_e_step(x, g, &mut bufs, &mut ws.tiles))
}

/// fit() after its checks, with the E-step given: initialization, restarts
/// and M-steps are the same whatever computes the E-step (f64 here, f32 in
/// float32.rs).
pub fn fit_with(x: &Data, o: &FitOptions, warm: Option<(&Gmm, f64)>, rng: &mut Rng, e_step: &mut EStep) -> Result<FitResult> {
    let mut ws = Workspace::new(x, o.covariance_type)?;
    let runs = if warm.is_some() { 1 } else { o.n_init };
    let mut best: Option<(Gmm, usize, f64)> = None;
    let mut converged = false;
    for _ in 0..runs {
        let (mut gmm, start) = match warm {
            Some((g, bound)) => (g.try_clone()?, bound),
            None => (initialize(x, o, &mut ws, &mut rng.fork())?, f64::NEG_INFINITY),
        };
        let (n_iter, bound, conv) = run_em(x, o, &mut gmm, start, &mut ws, e_step)?;
        converged |= conv;
        let better = match &best {
            None => true,
            Some((_, _, b)) => bound > *b || *b == f64::NEG_INFINITY,
        };
        if better {
            best = Some((gmm, n_iter, bound));
        }
    }
    let (gmm, n_iter, lower_bound) = best.expect("at least one run");
    Ok(FitResult { gmm, converged, n_iter, lower_bound })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_blobs(n_each: usize, rng: &mut Rng) -> Vec<f64> {
        let n = 2 * n_each;
        let mut v = vec![0.0; 2 * n];
        for i in 0..n {
            let off = if i < n_each { 0.0 } else { 6.0 };
            v[i] = off + rng.normal();
            v[n + i] = -off + 0.5 * rng.normal();
        }
        v
    }

    #[test]
    fn init_params_codes_round_trip_and_unknown_codes_fail() {
        for p in InitParams::ALL {
            assert_eq!(InitParams::from_code(p.code()).unwrap(), p);
        }
        let e = InitParams::from_code(4).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::InvalidParameter);
        assert!(e.message.contains("unknown initParams code 4"));
    }

    #[test]
    fn recovers_two_blobs_with_every_init_and_type() {
        let mut rng = Rng::new(4);
        let v = two_blobs(200, &mut rng);
        let x = Data::new(&v, 400, 2).unwrap();
        for t in CovarianceType::ALL {
            for init in InitParams::ALL {
                // near-symmetric random starts leave EM on a plateau for a while: tight tol
                let o = FitOptions { n_components: 2, covariance_type: t, init_params: init, n_init: 2, max_iter: 1000, tol: 1e-9, ..Default::default() };
                let r = fit(&x, &o, None, &mut Rng::new(1)).unwrap();
                assert!((r.gmm.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                if t == CovarianceType::Tied && init != InitParams::KMeans {
                    // scikit-learn's tied estimate from k one-hot rows divides the whole
                    // scatter by ~k; EM then settles with both means at the data mean.
                    // scikit-learn 1.2.1 does exactly this on this data (checked).
                    continue;
                }
                let mut m: Vec<f64> = (0..2).map(|c| r.gmm.means[c * 2]).collect();
                m.sort_by(f64::total_cmp);
                assert!((m[0] - 0.0).abs() < 0.3 && (m[1] - 6.0).abs() < 0.3, "{:?} {:?}: {:?}", t, init, m);
                assert!(r.converged);
            }
        }
    }

    /// EM over row shards (each shard's E-step statistics merged in order,
    /// then em_step) follows fit() to rounding, from the same initial model.
    #[test]
    fn em_over_shards_follows_fit() {
        let mut rng = Rng::new(5);
        let v = two_blobs(300, &mut rng);
        let (n, d) = (600, 2);
        let x = Data::new(&v, n, d).unwrap();
        // three shards of rows, each its own column-major copy
        let cuts = [0, 150, 420, n];
        let shards: Vec<Vec<f64>> = (0..3).map(|s| (0..d).flat_map(|j| v[j * n + cuts[s]..j * n + cuts[s + 1]].to_vec()).collect()).collect();
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: 3, covariance_type: t, max_iter: 8, tol: 0.0, ..Default::default() };
            let whole = fit(&x, &o, None, &mut Rng::new(9)).unwrap();
            let mut g = initial_model(&x, &o, None, 0, &mut Rng::new(9)).unwrap();
            let ws = Workspace::new(&x, t).unwrap();
            let mut bound = 0.0;
            for it in 1..=o.max_iter {
                let mut sum = SuffStats::new(t, 3, d, g.means.clone()).unwrap();
                let mut total = 0.0;
                for (s, rows) in shards.iter().enumerate() {
                    let xs = Data::new(rows, cuts[s + 1] - cuts[s], d).unwrap();
                    let (st, tot) = SuffStats::from_e_step(&xs, &g, &mut BlockBuffers::new(3, d).unwrap(), &mut crate::gmm::stats::Tiles::new(d).unwrap()).unwrap();
                    sum.merge(&st);
                    total += tot;
                }
                let (next, b) = em_step(&g, &sum, total, it, o.reg_covar, &ws, n).unwrap();
                g = next;
                bound = b;
            }
            assert!((bound - whole.lower_bound).abs() < 1e-12, "{:?}: {} vs {}", t, bound, whole.lower_bound);
            for (a, b) in g.means.iter().zip(&whole.gmm.means) {
                assert!((a - b).abs() < 1e-10, "{:?}: means {} vs {}", t, a, b);
            }
            for (a, b) in g.covariances.iter().zip(&whole.gmm.covariances) {
                assert!((a - b).abs() < 1e-10, "{:?}: covariances {} vs {}", t, a, b);
            }
        }
    }

    #[test]
    fn lower_bound_never_decreases() {
        let mut rng = Rng::new(8);
        let v = two_blobs(100, &mut rng);
        let x = Data::new(&v, 200, 2).unwrap();
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: 3, covariance_type: t, init_params: InitParams::Random, max_iter: 1, ..Default::default() };
            let mut r = fit(&x, &o, None, &mut Rng::new(3)).unwrap();
            for _ in 0..30 {
                let next = fit(&x, &o, Some((&r.gmm, r.lower_bound)), &mut Rng::new(3)).unwrap();
                assert!(next.lower_bound >= r.lower_bound - 1e-12, "{:?}: {} then {}", t, r.lower_bound, next.lower_bound);
                r = next;
            }
        }
    }

    #[test]
    fn bad_input_is_reported() {
        let v = vec![1.0, 2.0, 3.0, 4.0];
        let x = Data::new(&v, 4, 1).unwrap();
        let k5 = FitOptions { n_components: 5, ..Default::default() };
        assert!(fit(&x, &k5, None, &mut Rng::new(0)).unwrap_err().message.contains("rows"));
        let k0 = FitOptions { n_components: 0, ..Default::default() };
        assert!(fit(&x, &k0, None, &mut Rng::new(0)).is_err());
        let bad_prec = FitOptions { n_components: 1, precisions_init: Some(vec![-1.0]), ..Default::default() };
        assert!(fit(&x, &bad_prec, None, &mut Rng::new(0)).is_err());
        // zero variance with no regularization is a singular covariance
        let c = vec![1.0, 1.0, 1.0, 2.0, 2.0, 5.0, 5.0, 5.0];
        let xc = Data::new(&c, 4, 2).unwrap();
        let o = FitOptions { n_components: 2, reg_covar: 0.0, ..Default::default() };
        let e = fit(&xc, &o, None, &mut Rng::new(0)).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Numerical);
        assert!(e.message.contains("regCovar"));
        // with the default regularization the same data fits
        let o = FitOptions { n_components: 2, ..Default::default() };
        assert!(fit(&xc, &o, None, &mut Rng::new(0)).is_ok());
    }
}
