//! The client side of MDM inference: every statistic is one client's term of a
//! sum over the cohort, computed from its histogram alone. The functions take m
//! histograms and add each client's term into an accumulator, so the same code
//! serves one client (m = 1, what a client role sends) and a batch of
//! simulated clients (the sum a secure aggregator would release).

use super::{check_histograms, Mdm};
use crate::dirichlet_multinomial::{ln_multinomial_coefficient, log_pmf_row};
use crate::error::{show, Error, Result};
use crate::special::{digamma, digamma_diff_known};

/// Algorithm 1's sums: E (K x N), P and Q (K x C), over `clients` clients.
#[derive(Clone, Debug, PartialEq)]
pub struct InitStats {
    pub k: usize,
    pub c: usize,
    pub n_max: usize,
    /// E[k * N + n - 1]: clients of size n that chose component k
    pub e: Vec<f64>,
    /// sum of the chosen row's normalized histograms c / n
    pub p: Vec<f64>,
    /// sum of their squares (c / n) . (c / n)
    pub q: Vec<f64>,
    /// how many clients contributed (set by whoever sums; not a client's statistic)
    pub clients: f64,
}

impl InitStats {
    pub fn zeros(k: usize, c: usize, n_max: usize) -> Self {
        InitStats { k, c, n_max, e: vec![0.0; k * n_max], p: vec![0.0; k * c], q: vec![0.0; k * c], clients: 0.0 }
    }
}

/// Algorithm 2's sums over `clients` clients: omega (K), E (K x N), u (K x C),
/// v (K), and, for monitoring, the log-likelihood of the clients the model
/// supports and how many it does not (their size has probability 0 in every
/// component).
#[derive(Clone, Debug, PartialEq)]
pub struct RoundStats {
    pub k: usize,
    pub c: usize,
    pub n_max: usize,
    pub omega: Vec<f64>,
    pub e: Vec<f64>,
    pub u: Vec<f64>,
    pub v: Vec<f64>,
    pub log_likelihood: f64,
    pub unsupported: f64,
    pub clients: f64,
}

impl RoundStats {
    pub fn zeros(k: usize, c: usize, n_max: usize) -> Self {
        RoundStats {
            k,
            c,
            n_max,
            omega: vec![0.0; k],
            e: vec![0.0; k * n_max],
            u: vec![0.0; k * c],
            v: vec![0.0; k],
            log_likelihood: 0.0,
            unsupported: 0.0,
            clients: 0.0,
        }
    }
}

/// Algorithm 1, client side, for m clients: client i chose component
/// components[i] (uniformly at random, on the client) and adds E^i (a 1 at
/// (k_i, n_i)), P^i (its normalized histogram in row k_i) and Q^i (its square).
pub fn init_contributions(counts: &[f64], sizes: &[f64], m: usize, components: &[u32], acc: &mut InitStats) -> Result<()> {
    let (k, c, n_max) = (acc.k, acc.c, acc.n_max);
    super::check_shape(k, c, n_max)?;
    check_histograms(counts, sizes, m, c, n_max)?;
    if components.len() != m {
        return Err(Error::param(format!("{} component choices for {} clients", components.len(), m)));
    }
    if let Some((i, &q)) = components.iter().enumerate().find(|(_, &q)| q as usize >= k) {
        return Err(Error::param(format!("client {} chose component {}; components run from 0 to K - 1 = {}", i, q, k - 1)));
    }
    for i in 0..m {
        let q = components[i] as usize;
        let n = sizes[i];
        acc.e[q * n_max + n as usize - 1] += 1.0;
        for (j, &cj) in counts[i * c..(i + 1) * c].iter().enumerate() {
            let p = cj / n;
            acc.p[q * c + j] += p;
            acc.q[q * c + j] += p * p;
        }
        acc.clients += 1.0;
    }
    Ok(())
}

/// What every client of a round needs of the broadcast model, computed once:
/// ln tau, ln Pi, alpha_0 and the digammas of alpha and alpha_0 (so each count
/// costs one digamma difference against a known psi(alpha)).
pub struct Prepared<'a> {
    pub model: &'a Mdm,
    ln_tau: Vec<f64>,
    ln_pi: Vec<f64>,
    a0: Vec<f64>,
    psi_alpha: Vec<f64>,
    psi_a0: Vec<f64>,
}

impl<'a> Prepared<'a> {
    pub fn new(model: &'a Mdm) -> Self {
        let a0: Vec<f64> = (0..model.k).map(|q| model.alpha_row(q).iter().sum()).collect();
        Prepared {
            model,
            ln_tau: model.tau.iter().map(|t| t.ln()).collect(),
            ln_pi: model.pi.iter().map(|p| p.ln()).collect(),
            psi_alpha: model.alpha.iter().map(|&a| digamma(a)).collect(),
            psi_a0: a0.iter().map(|&a| digamma(a)).collect(),
            a0,
        }
    }

    /// omega_k of eq 12 for one histogram `row` of size n into `omega`; returns
    /// ln q(c, n) without the multinomial coefficient, or None when no
    /// component gives size n a positive probability. Guard for that case:
    /// the size then says nothing about the component, and omega is computed
    /// from tau and the histogram alone (as if pi_{k,n} were equal across k),
    /// instead of 0/0; the client's E^i then gives size n mass, so the next
    /// round's Pi covers it.
    pub fn responsibilities(&self, row: &[f64], n: f64, omega: &mut [f64]) -> Option<f64> {
        let m = self.model;
        let col = n as usize - 1;
        let mut max = f64::NEG_INFINITY;
        for q in 0..m.k {
            let dm = log_pmf_row(row, n, m.alpha_row(q), self.a0[q]);
            omega[q] = self.ln_tau[q] + dm + self.ln_pi[q * m.n_max + col];
            max = max.max(omega[q]);
        }
        let supported = max > f64::NEG_INFINITY;
        if !supported {
            for q in 0..m.k {
                omega[q] = self.ln_tau[q] + log_pmf_row(row, n, m.alpha_row(q), self.a0[q]);
                max = max.max(omega[q]);
            }
        }
        // ln sum_k exp(l_k): relative to the largest, which becomes exp(0) = 1
        let mut sum = 0.0;
        for w in omega.iter_mut() {
            *w = (*w - max).exp();
            sum += *w;
        }
        for w in omega.iter_mut() {
            *w /= sum;
        }
        if supported {
            Some(max + sum.ln())
        } else {
            None
        }
    }
}

/// Algorithm 2, client side, for m clients: each client computes omega^i
/// (eq 12), E^i (omega^i in column n_i), u^i and v^i (eqs 13-14, the digamma
/// differences psi(c + alpha) - psi(alpha) by digamma_diff_known, exact where
/// the plain difference cancels), and adds them into `acc`. With `clip`
/// finite, a client whose (u^i, v^i) has an L2 norm above `clip` scales both
/// down to it (bounding its influence for differential privacy; omega^i and
/// E^i have norm <= 1 already).
pub fn round_statistics(prep: &Prepared, counts: &[f64], sizes: &[f64], m: usize, clip: f64, acc: &mut RoundStats) -> Result<()> {
    let model = prep.model;
    let (k, c, n_max) = (model.k, model.c, model.n_max);
    if (acc.k, acc.c, acc.n_max) != (k, c, n_max) {
        return Err(Error::param(format!(
            "statistics of K = {}, C = {}, N = {} cannot hold a model of K = {}, C = {}, N = {}",
            acc.k, acc.c, acc.n_max, k, c, n_max
        )));
    }
    if !(clip > 0.0) {
        return Err(Error::param(format!("clip must be a positive number (or Infinity for none), got {}", show(clip))));
    }
    check_histograms(counts, sizes, m, c, n_max)?;
    let mut omega = vec![0.0; k];
    let mut u = vec![0.0; k * c];
    let mut v = vec![0.0; k];
    for i in 0..m {
        let row = &counts[i * c..(i + 1) * c];
        let n = sizes[i];
        match prep.responsibilities(row, n, &mut omega) {
            Some(lq) => acc.log_likelihood += lq + ln_multinomial_coefficient(row),
            None => acc.unsupported += 1.0,
        }
        let mut norm2 = 0.0;
        for q in 0..k {
            let w = omega[q];
            let uq = &mut u[q * c..(q + 1) * c];
            if w == 0.0 {
                uq.iter_mut().for_each(|x| *x = 0.0);
                v[q] = 0.0;
                continue;
            }
            let alpha = model.alpha_row(q);
            let psi = &prep.psi_alpha[q * c..(q + 1) * c];
            for j in 0..c {
                uq[j] = if row[j] > 0.0 { w * digamma_diff_known(alpha[j], psi[j], row[j]) } else { 0.0 };
                norm2 += uq[j] * uq[j];
            }
            v[q] = w * digamma_diff_known(prep.a0[q], prep.psi_a0[q], n);
            norm2 += v[q] * v[q];
        }
        let scale = if clip.is_finite() && norm2 > clip * clip { clip / norm2.sqrt() } else { 1.0 };
        for q in 0..k {
            acc.omega[q] += omega[q];
            acc.e[q * n_max + n as usize - 1] += omega[q];
            acc.v[q] += scale * v[q];
        }
        for (a, &x) in acc.u.iter_mut().zip(&u) {
            *a += scale * x;
        }
        acc.clients += 1.0;
    }
    Ok(())
}

/// ln q(c_i, n_i) of m clients into out_ll (negative infinity where the model
/// gives the size probability 0), and, when given, their responsibilities
/// (m x K, row-major; for unsupported sizes from tau and the histogram alone).
pub fn log_pmf(prep: &Prepared, counts: &[f64], sizes: &[f64], m: usize, out_ll: &mut [f64], mut out_resp: Option<&mut [f64]>) -> Result<()> {
    let model = prep.model;
    let (k, c) = (model.k, model.c);
    check_histograms(counts, sizes, m, c, model.n_max)?;
    if out_ll.len() != m || out_resp.as_ref().map_or(false, |r| r.len() != m * k) {
        return Err(Error::param("log_pmf: output buffers do not match the number of histograms"));
    }
    let mut omega = vec![0.0; k];
    for i in 0..m {
        let row = &counts[i * c..(i + 1) * c];
        out_ll[i] = match prep.responsibilities(row, sizes[i], &mut omega) {
            Some(lq) => lq + ln_multinomial_coefficient(row),
            None => f64::NEG_INFINITY,
        };
        if let Some(r) = out_resp.as_deref_mut() {
            r[i * k..(i + 1) * k].copy_from_slice(&omega);
        }
    }
    Ok(())
}
