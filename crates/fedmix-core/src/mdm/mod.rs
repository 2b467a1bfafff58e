//! Mixtures of Dirichlet-multinomials (MDM) over client histograms, after Scott
//! & Cahill, "Improved Modelling of Federated Datasets using
//! Mixtures-of-Dirichlet-Multinomials". A client is a histogram c of C counts
//! of one categorical feature and its size n = sum c, 1 <= n <= N; the model is
//!
//!   q(c, n) = sum_k tau_k pi_{k,n} p(c | n, alpha_k)                (eqs 1-3)
//!
//! with tau the K component weights, A = (alpha_k) the K x C Dirichlet
//! parameters and Pi = (pi_k) the K x N size distributions (entry n - 1 of
//! pi_k is the probability of size n). All matrices are row-major.
//!
//! - client.rs: what one client computes from its own histogram, as sums that
//!   add across clients (so a secure aggregator can sum them): its Algorithm 1
//!   contribution (E, P, Q) and its Algorithm 2 statistics (omega of eq 12, E,
//!   u and v of eqs 13-14), and its log q for scoring.
//! - server.rs: what the server computes from the sums: the initialization
//!   (eqs 5, 6, 8, 9) and the update (eqs 17-19), with their guards.
//! - sample.rs: new clients (histogram and size) drawn from the model.
//!
//! The guards keep every parameter finite and positive where the paper's
//! formulas would divide by zero or reach the boundary of the parameter space;
//! server.rs documents each and reports which fired through `flags`.

pub mod client;
pub mod sample;
pub mod server;

use crate::dirichlet_multinomial::{validate_alphas, validate_counts};
use crate::distributions::check_probabilities;
use crate::error::{show, Error, Result};

/// Smallest Dirichlet parameter the server keeps. A class that no client of a
/// component holds gets u = 0 in eq 19, which would set its alpha to exactly 0,
/// outside the model (p(c | n, alpha) needs alpha > 0) and, through psi(0),
/// NaN in the next round; 1e-6 already makes such a class all but impossible
/// in that component (p(c_j > 0) ~ 1e-6 n). Without clipping, one round of
/// eq 19 brings it back if clients holding the class appear (their u_kj ~
/// omega / alpha_kj cancels the small alpha). With clipping it takes several
/// rounds: that same large u_kj makes those clients scale their (u, v) down
/// by about alpha_kj / clip. Under noise a u_kj <= 0 therefore keeps alpha_kj
/// instead of flooring it again (server::update, ALPHA_KEPT).
pub const ALPHA_MIN: f64 = 1e-6;

/// Largest Dirichlet parameter the server keeps. With no overdispersion left
/// (clients' histograms as if drawn from one multinomial) the maximum-likelihood
/// alpha_0 is infinite and eq 19 grows it without end; past 1e12 the
/// Dirichlet-multinomial equals the multinomial to about 12 digits.
pub const ALPHA_MAX: f64 = 1e12;

/// Largest K x C and K x N accepted (each): 80 MB per matrix. Sizes arrive in
/// messages, so this bounds what a request can make a client (or the server)
/// allocate. ts/federated/mdm/messages.ts has the same limit (MDM_MAX_CELLS, a
/// public constant; test/wasm-constants.test.ts compares it with this one).
pub const MAX_CELLS: usize = 10_000_000;

/// Checks the sizes of a model: K >= 1 components, C >= 2 categories, N >= 1,
/// K x C and K x N at most MAX_CELLS.
pub fn check_shape(k: usize, c: usize, n_max: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::param("K (the number of components) must be at least 1"));
    }
    if c < 2 {
        return Err(Error::data(format!(
            "histograms have {} categor{}; they need at least 2 (with one, a histogram is just its size and there is no heterogeneity to model)",
            c,
            if c == 1 { "y" } else { "ies" }
        )));
    }
    if n_max == 0 {
        return Err(Error::param("N (the largest client size) must be at least 1"));
    }
    if k.checked_mul(c.max(n_max)).map_or(true, |v| v > MAX_CELLS) {
        return Err(Error::param(format!(
            "K = {} components of C = {} categories and N = {} sizes exceed the limit of {} cells (K x C and K x N each); lower K or N",
            k, c, n_max, MAX_CELLS
        )));
    }
    Ok(())
}

/// The parameters of a mixture of Dirichlet-multinomials: K components over C
/// categories and client sizes 1..=N (n_max).
#[derive(Clone, Debug, PartialEq)]
pub struct Mdm {
    pub k: usize,
    pub c: usize,
    pub n_max: usize,
    /// (K) component weights, a probability vector
    pub tau: Vec<f64>,
    /// (K x C) Dirichlet parameters, positive
    pub alpha: Vec<f64>,
    /// (K x N) size distributions: pi[k * N + n - 1] = P(size n | component k)
    pub pi: Vec<f64>,
}

impl Mdm {
    /// Checks and builds a model: tau and every row of pi are probability
    /// vectors (entries >= 0 summing to 1 within 1e-8), alpha is positive and finite.
    pub fn new(k: usize, c: usize, n_max: usize, tau: Vec<f64>, alpha: Vec<f64>, pi: Vec<f64>) -> Result<Mdm> {
        check_shape(k, c, n_max)?;
        if tau.len() != k {
            return Err(Error::param(format!("tau has {} values; expected K = {}", tau.len(), k)));
        }
        if pi.len() != k * n_max {
            return Err(Error::param(format!("pi has {} values; expected K x N = {} x {}", pi.len(), k, n_max)));
        }
        check_probabilities("tau", &tau)?;
        validate_alphas(&alpha, k, c)?;
        for q in 0..k {
            check_probabilities(&format!("pi[{}]", q), &pi[q * n_max..(q + 1) * n_max])?;
        }
        Ok(Mdm { k, c, n_max, tau, alpha, pi })
    }

    /// A copy, or the allocation error (K x C and K x N reach MAX_CELLS).
    pub fn try_clone(&self) -> Result<Mdm> {
        let (tau, alpha, pi) = (crate::alloc::copy(&self.tau)?, crate::alloc::copy(&self.alpha)?, crate::alloc::copy(&self.pi)?);
        Ok(Mdm { k: self.k, c: self.c, n_max: self.n_max, tau, alpha, pi })
    }

    pub fn alpha_row(&self, q: usize) -> &[f64] {
        &self.alpha[q * self.c..(q + 1) * self.c]
    }

    pub fn pi_row(&self, q: usize) -> &[f64] {
        &self.pi[q * self.n_max..(q + 1) * self.n_max]
    }
}

/// Checks m client histograms (`counts`, m x c, row-major) and their sizes:
/// counts are non-negative integers, a size is a whole number from 1 to n_max,
/// and each histogram sums to its size.
pub fn check_histograms(counts: &[f64], sizes: &[f64], m: usize, c: usize, n_max: usize) -> Result<()> {
    validate_counts(counts, m, c)?;
    if sizes.len() != m {
        return Err(Error::param(format!("{} sizes for {} histograms; give one size per histogram", sizes.len(), m)));
    }
    for (i, &n) in sizes.iter().enumerate() {
        if !(n >= 1.0 && n.is_finite() && n == n.floor()) {
            return Err(Error::data(format!(
                "client {}: its size n is {}; n must be a whole number >= 1 (a client without data points has no histogram to model)",
                i,
                show(n)
            )));
        }
        let sum: f64 = counts[i * c..(i + 1) * c].iter().sum();
        if sum != n {
            return Err(Error::data(format!(
                "client {}: its histogram sums to {} but its size n is {}; n is the number of data points, the sum of the counts",
                i,
                show(sum),
                show(n)
            )));
        }
        if n > n_max as f64 {
            return Err(Error::data(format!(
                "client {}: n = {} exceeds N = {}, the largest client size the model covers; raise N (maxCount) to at least {}",
                i,
                show(n),
                n_max,
                show(n)
            )));
        }
    }
    Ok(())
}

/// Client histograms checked once and kept for every round: the counts (m x c,
/// row-major) and sizes of a group of clients, owned and never lent mutably,
/// so what was checked is what every later call reads. Their fit to a model
/// (its C and N) is all a call still checks, in O(1) (`fits`); the dense pass
/// of `check_histograms` is made here, once.
#[derive(Debug)]
pub struct Histograms {
    counts: Vec<f64>,
    sizes: Vec<f64>,
    m: usize,
    c: usize,
    /// the largest size, against each model's N
    largest: f64,
}

impl Histograms {
    /// Checks and keeps m histograms of c categories (`check_histograms`, without a bound on the sizes).
    pub fn new(counts: Vec<f64>, sizes: Vec<f64>, m: usize, c: usize) -> Result<Histograms> {
        if m == 0 {
            return Err(Error::data("no histograms: give at least one client"));
        }
        check_histograms(&counts, &sizes, m, c, usize::MAX)?;
        let largest = sizes.iter().cloned().fold(0.0, f64::max);
        Ok(Histograms { counts, sizes, m, c, largest })
    }

    pub fn m(&self) -> usize {
        self.m
    }

    pub fn c(&self) -> usize {
        self.c
    }

    pub fn counts(&self) -> &[f64] {
        &self.counts
    }

    pub fn sizes(&self) -> &[f64] {
        &self.sizes
    }

    /// Checks the histograms against a model of c categories and sizes up to
    /// n_max, with check_histograms' errors (the first client too large named).
    pub fn fits(&self, c: usize, n_max: usize) -> Result<()> {
        if c != self.c {
            return Err(Error::data(format!("the histograms have {} categories but the model has {}", self.c, c)));
        }
        if self.largest > n_max as f64 {
            // only on failure: the first client too large, named as check_histograms names it
            let i = self.sizes.iter().position(|&n| n > n_max as f64).unwrap_or(0);
            let n = show(self.sizes[i]);
            return Err(Error::data(format!(
                "client {}: n = {} exceeds N = {}, the largest client size the model covers; raise N (maxCount) to at least {}",
                i, n, n_max, n
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
