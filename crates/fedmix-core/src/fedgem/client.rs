//! The FedGEM client's model and its local steps.
//!
//! The model: x ~ sum_k pi_k N(theta_k, sigma^2 I) with the weights pi fixed
//! (uniform or given) and sigma^2 known (1 in the paper). At iterate theta^t the
//! finite-sample expected complete-data log-likelihood of component k is
//!
//!   Q_k(theta | theta^t) = -1/(2 sigma^2 n) sum_i gamma_ik ||x_i - theta||^2 + const,
//!
//! gamma_ik the responsibilities under theta^t. Its maximizer is the M-step
//! M_k = sum_i gamma_ik x_i / N_k (N_k = sum_i gamma_ik), and since
//! sum_i gamma_ik ||x_i - theta||^2 = N_k ||theta - M_k||^2 + const, Q_k is an
//! isotropic quadratic around M_k. The uncertainty ball is the largest ball
//! around M_k in which no theta lowers Q_k below its value at the previous
//! iterate theta^t_k:
//!
//!   Q_k(theta) >= Q_k(theta^t_k)  <=>  ||theta - M_k|| <= ||theta^t_k - M_k||,
//!
//! so its radius is the length of the last M-step, whatever sigma^2 and the
//! weights (closed form). `bisection_radius` finds the same radius without the
//! closed form (the paper's Algorithm 4): bisection over a feasibility check
//! that evaluates Q_k on the data at points of the sphere.

use crate::alloc;
use crate::data::Data;
use crate::error::{show, Error, Result};
use crate::gmm::estep::{self, BlockBuffers, Scratch};
use crate::gmm::stats::{SuffStats, Tiles};
use crate::gmm::{CovarianceType, Gmm};
use crate::kmeans::{self, KMeansInit, KMeansOptions};
use crate::rng::Rng;

/// A component explaining less than this share of a row in total keeps its
/// mean: its M-step would divide by (almost) nothing.
const EMPTY_COMPONENT: f64 = 1e-10;

/// An isotropic mixture with fixed weights and a known shared variance.
#[derive(Clone, Debug, PartialEq)]
pub struct Isotropic {
    pub k: usize,
    pub d: usize,
    /// (k,), positive, summing to one
    pub weights: Vec<f64>,
    /// sigma^2 > 0
    pub variance: f64,
    /// (k, d), row-major
    pub means: Vec<f64>,
}

/// How the client computes its radii.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RadiusMethod {
    /// ||theta^t_k - M_k||
    ClosedForm,
    /// Algorithm 4: bisection over the feasibility check, `iterations` halvings
    Bisection { iterations: usize },
}

/// What a client reports after its local steps.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalRound {
    /// (k, d): the last M-step's maximizers, now the client's means
    pub maximizers: Vec<f64>,
    /// (k,): the uncertainty-ball radii around them
    pub radii: Vec<f64>,
    /// (k,): N_k of the last E-step (the component's share of the rows)
    pub counts: Vec<f64>,
    /// mean log-likelihood per row at the iterate of the last E-step
    pub log_likelihood: f64,
}

impl Isotropic {
    /// Validates the parameters (weights positive and summing to one, variance
    /// positive, means finite and of shape (k, d)).
    pub fn new(k: usize, d: usize, weights: Vec<f64>, variance: f64, means: Vec<f64>) -> Result<Self> {
        if k < 1 || d < 1 {
            return Err(Error::param(format!("a model needs at least one component and one feature, got k = {}, d = {}", k, d)));
        }
        crate::gmm::check_weights(&weights, k)?;
        check_variance(variance)?;
        if means.len() != k * d {
            return Err(Error::param(format!("means has {} values; ({}, {}) needs {}", means.len(), k, d, k * d)));
        }
        if let Some(i) = means.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(format!("means[{}] is {}; means must be finite", i, show(means[i]))));
        }
        Ok(Isotropic { k, d, weights, variance, means })
    }

    /// Starting means from k-means++ seeds (the paper's initialization), the
    /// best of `n_init` seedings by inertia; with `lloyd`, refined by k-means
    /// (Lloyd's iterations) first.
    pub fn kmeans_init(x: &Data, k: usize, weights: Vec<f64>, variance: f64, n_init: usize, lloyd: bool, rng: &mut Rng) -> Result<Self> {
        x.require_finite("X")?;
        kmeans::require_clusterable(x, k, "nComponents")?;
        let centers = if lloyd {
            let opts = KMeansOptions { n_clusters: k, init: KMeansInit::PlusPlus, n_init: n_init.max(1), ..KMeansOptions::default() };
            kmeans::fit(x, &opts, rng)?.centers
        } else {
            let (mut labels, mut dist) = (alloc::filled(0u32, x.n)?, alloc::zeros(x.n)?);
            let mut best: Option<(f64, Vec<f64>)> = None;
            for _ in 0..n_init.max(1) {
                let (centers, _) = kmeans::kmeans_plusplus(x, k, &mut rng.fork())?;
                kmeans::assign(x, &centers, k, &mut labels, &mut dist)?;
                let inertia: f64 = dist.iter().sum();
                if best.as_ref().map_or(true, |b| inertia < b.0) {
                    best = Some((inertia, centers));
                }
            }
            best.expect("at least one seeding").1
        };
        Isotropic::new(k, x.d, weights, variance, centers)
    }

    /// The same model as a spherical Gaussian mixture (for the E-step and prediction).
    pub fn gmm(&self) -> Result<Gmm> {
        let sd = self.variance.sqrt();
        Ok(Gmm {
            cov_type: CovarianceType::Spherical,
            k: self.k,
            d: self.d,
            weights: alloc::copy(&self.weights)?,
            means: alloc::copy(&self.means)?,
            covariances: alloc::filled(self.variance, self.k)?,
            precisions_chol: alloc::filled(1.0 / sd, self.k)?,
        })
    }

    /// Replaces the variance (a client without a known one takes the
    /// federation's estimate before its first local step).
    pub fn set_variance(&mut self, variance: f64) -> Result<()> {
        check_variance(variance)?;
        self.variance = variance;
        Ok(())
    }

    /// Replaces the means (the server's update), checking shape and values.
    pub fn set_means(&mut self, means: &[f64]) -> Result<()> {
        let m = Isotropic::new(self.k, self.d, alloc::copy(&self.weights)?, self.variance, alloc::copy(means)?)?;
        self.means = m.means;
        Ok(())
    }

    /// Most probable component of each row.
    pub fn predict(&self, x: &Data) -> Result<Vec<u32>> {
        self.check_data(x)?;
        let mut labels = alloc::filled(0u32, x.n)?;
        estep::predict(x, &self.gmm()?, &mut labels)?;
        Ok(labels)
    }

    /// Per-row log-likelihood under the model.
    pub fn score_samples(&self, x: &Data) -> Result<Vec<f64>> {
        self.check_data(x)?;
        let mut lse = alloc::zeros(x.n)?;
        estep::score_samples(x, &self.gmm()?, &mut lse)?;
        Ok(lse)
    }

    fn check_data(&self, x: &Data) -> Result<()> {
        if x.d != self.d {
            return Err(Error::data(format!("X has {} features but the model has {}", x.d, self.d)));
        }
        x.require_finite("X")
    }

    /// `steps` EM steps on the means (weights and variance stay fixed); returns
    /// the last step's maximizers (also the new means) with their radii.
    pub fn local_steps(&mut self, x: &Data, steps: usize, method: RadiusMethod) -> Result<LocalRound> {
        self.check_data(x)?;
        if steps < 1 {
            return Err(Error::param("local steps must be at least 1"));
        }
        let (k, d) = (self.k, self.d);
        let mut bufs = BlockBuffers::new(k, d)?;
        let mut tiles = Tiles::new(d)?;
        let start = alloc::copy(&self.means)?;
        let mut round = None;
        for _ in 0..steps {
            // a failed round leaves the model as it was
            let (stats, total) = match self.gmm().and_then(|g| SuffStats::from_e_step(x, &g, &mut bufs, &mut tiles)) {
                Ok(r) => r,
                Err(e) => {
                    self.means = start;
                    return Err(e);
                }
            };
            if !total.is_finite() {
                self.means = start;
                return Err(Error::numerical("the log-likelihood is not finite; the variance may be too small for the data's scale"));
            }
            let previous = match alloc::copy(&self.means) {
                Ok(p) => p,
                Err(e) => {
                    self.means = start;
                    return Err(e);
                }
            };
            // statistics are about the current means: M_k - theta_k = s1_k / N_k, exactly
            let mut radii = vec![0.0; k];
            for c in 0..k {
                if stats.nk[c] > EMPTY_COMPONENT {
                    let mut sq = 0.0;
                    for j in 0..d {
                        let step = stats.s1[c * d + j] / stats.nk[c];
                        self.means[c * d + j] += step;
                        sq += step * step;
                    }
                    radii[c] = sq.sqrt();
                }
            }
            round = Some((previous, radii, stats.nk, total / x.n as f64));
        }
        let (previous, radii, counts, log_likelihood) = round.expect("steps >= 1");
        let radii = match method {
            RadiusMethod::ClosedForm => radii,
            RadiusMethod::Bisection { iterations } => match self.bisection_radii(x, &previous, iterations) {
                Ok(r) => r,
                Err(e) => {
                    self.means = start;
                    return Err(e);
                }
            },
        };
        Ok(LocalRound { maximizers: alloc::copy(&self.means)?, radii, counts, log_likelihood })
    }

    /// Algorithm 4's radius of every component around the current means, with
    /// the responsibilities at the `previous` means.
    fn bisection_radii(&self, x: &Data, previous: &[f64], iterations: usize) -> Result<Vec<f64>> {
        let (k, d) = (self.k, self.d);
        let mut gmm = self.gmm()?;
        gmm.means.copy_from_slice(previous);
        let (mut resp, mut lse) = (alloc::zeros(alloc::cells(x.n, k, 8)?)?, alloc::zeros(x.n)?);
        estep::e_step(x, &gmm, &mut Scratch::new(d)?, &mut resp, &mut lse)?;
        let mut radii = alloc::zeros(k)?;
        for (c, radius) in radii.iter_mut().enumerate() {
            let r = &resp[c * x.n..(c + 1) * x.n];
            *radius = bisection_radius(x, r, &self.means[c * d..(c + 1) * d], &previous[c * d..(c + 1) * d], iterations)?;
        }
        Ok(radii)
    }
}

fn check_variance(variance: f64) -> Result<()> {
    if !(variance > 0.0) || !variance.is_finite() {
        return Err(Error::param(format!("variance must be a positive finite number, got {}", show(variance))));
    }
    Ok(())
}

/// sum_i r_i (||x_i - theta||^2 - ||x_i - m||^2): how much lower Q_k is at theta
/// than at its maximizer m, times 2 sigma^2 n. Each row's term is computed as
/// (theta - m) . (theta + m - 2 x_i), which avoids cancelling ||x_i||^2.
fn drop_at(x: &Data, r: &[f64], m: &[f64], theta: &[f64]) -> f64 {
    let d = x.d;
    let a: Vec<f64> = (0..d).map(|j| theta[j] - m[j]).collect();
    let b: Vec<f64> = (0..d).map(|j| theta[j] + m[j]).collect();
    let mut total = 0.0;
    for i in 0..x.n {
        let mut t = 0.0;
        for j in 0..d {
            t += a[j] * (b[j] - 2.0 * x.get(i, j));
        }
        total += r[i] * t;
    }
    total
}

/// The largest radius around the maximizer `m` in which Q_k stays at or above
/// its value at `previous` (Algorithm 4): bisection over a feasibility check.
/// `feasible(rho)` evaluates Q_k on the data at the points of the sphere of
/// radius rho in the 2d axis directions and towards and away from `previous`,
/// where a concave quadratic with a diagonal Hessian is lowest (for this
/// model's isotropic Q_k every direction is equally low, so the check is
/// exact). The bracket starts at [0, 1] and doubles until infeasible.
pub fn bisection_radius(x: &Data, r: &[f64], m: &[f64], previous: &[f64], iterations: usize) -> Result<f64> {
    let d = x.d;
    let limit = drop_at(x, r, m, previous);
    if !(limit > 0.0) {
        return Ok(0.0);
    }
    // the directions as the rows of one (2 d + 2) x d buffer (d can be large)
    let norm = (0..d).map(|j| (previous[j] - m[j]).powi(2)).sum::<f64>().sqrt();
    let count = 2 * d + if norm > 0.0 { 2 } else { 0 };
    let mut directions = alloc::zeros(alloc::cells(count, d, 8)?)?;
    for j in 0..d {
        directions[2 * j * d + j] = 1.0;
        directions[(2 * j + 1) * d + j] = -1.0;
    }
    if norm > 0.0 {
        for (t, s) in [1.0, -1.0].iter().enumerate() {
            for j in 0..d {
                directions[(2 * d + t) * d + j] = s * (previous[j] - m[j]) / norm;
            }
        }
    }
    let feasible = |rho: f64| {
        directions.chunks_exact(d).all(|u| {
            let theta: Vec<f64> = (0..d).map(|j| m[j] + rho * u[j]).collect();
            drop_at(x, r, m, &theta) <= limit
        })
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    let mut doublings = 0;
    while feasible(hi) && doublings < 1100 {
        lo = hi;
        hi *= 2.0;
        doublings += 1;
    }
    for _ in 0..iterations {
        let mid = 0.5 * (lo + hi);
        if feasible(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}
