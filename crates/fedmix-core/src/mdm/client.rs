//! The client side of MDM inference: every statistic is one client's term of a
//! sum over the cohort, computed from its histogram alone. The functions take m
//! histograms and add each client's term into an accumulator, so the same code
//! serves one client (m = 1, what a client role sends) and a batch of
//! simulated clients (the sum a secure aggregator would release).

use super::{check_histograms, Histograms, Mdm};
use crate::alloc;
use crate::error::{show, Error, Result};
use crate::special::{digamma, digamma_diff_known, digamma_diff_lazy, lgamma, ln_rising_factorial, ln_rising_factorial_known};

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
    pub fn zeros(k: usize, c: usize, n_max: usize) -> Result<Self> {
        Ok(InitStats { k, c, n_max, e: alloc::zeros(k * n_max)?, p: alloc::zeros(k * c)?, q: alloc::zeros(k * c)?, clients: 0.0 })
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
    pub fn zeros(k: usize, c: usize, n_max: usize) -> Result<Self> {
        Ok(RoundStats {
            k,
            c,
            n_max,
            omega: alloc::zeros(k)?,
            e: alloc::zeros(k * n_max)?,
            u: alloc::zeros(k * c)?,
            v: alloc::zeros(k)?,
            log_likelihood: 0.0,
            unsupported: 0.0,
            clients: 0.0,
        })
    }
}

/// Algorithm 1, client side, for m clients: client i chose component
/// components[i] (uniformly at random, on the client) and adds E^i (a 1 at
/// (k_i, n_i)), P^i (its normalized histogram in row k_i) and Q^i (its square).
pub fn init_contributions(counts: &[f64], sizes: &[f64], m: usize, components: &[u32], acc: &mut InitStats) -> Result<()> {
    super::check_shape(acc.k, acc.c, acc.n_max)?;
    check_histograms(counts, sizes, m, acc.c, acc.n_max)?;
    init_rows(counts, sizes, m, components, acc)
}

/// `init_contributions` for histograms checked once (Histograms): only their fit to the shape is checked.
pub fn init_contributions_held(h: &Histograms, components: &[u32], acc: &mut InitStats) -> Result<()> {
    super::check_shape(acc.k, acc.c, acc.n_max)?;
    h.fits(acc.c, acc.n_max)?;
    init_rows(h.counts(), h.sizes(), h.m(), components, acc)
}

/// Algorithm 1's sums over histograms already checked against acc's shape.
fn init_rows(counts: &[f64], sizes: &[f64], m: usize, components: &[u32], acc: &mut InitStats) -> Result<()> {
    let (k, c, n_max) = (acc.k, acc.c, acc.n_max);
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

/// Counts up to this value get their per-category terms tabulated for a batch.
const TABLE_COUNTS: usize = 32;

/// Batches of at least this many clients tabulate the per-category terms:
/// the tables cost 2 x K x C x 33 special-function evaluations, about what 64
/// clients with a few dozen non-zero counts each would need anyway.
const TABLE_MIN_CLIENTS: usize = 64;

/// Entries of each table at most (8 MiB of f64): a model of many cells computes its terms directly.
const TABLE_MAX_ENTRIES: usize = 1 << 20;

/// ln Gamma(alpha_kj + c) - ln Gamma(alpha_kj) and psi(alpha_kj + c) - psi(alpha_kj)
/// for c = 0..=TABLE_COUNTS at [(k C + j) 33 + c], and ln c! at [c]: the same
/// functions as the direct path, evaluated once per (component, category,
/// count) instead of once per client.
struct Tables {
    lrf: Vec<f64>,
    dd: Vec<f64>,
    ln_fact: Vec<f64>,
}

/// What every client of a round needs of the broadcast model, computed once:
/// ln tau, alpha_0 with its digamma and lgamma; for a batch also the digammas
/// and lgammas of every alpha (so a count costs one digamma difference and one
/// log rising factorial against known psi(alpha) and ln Gamma(alpha)) and the
/// terms of small counts, tabulated. A single client computes psi(alpha) and
/// ln Gamma(alpha) only for its own categories, where a branch needs them:
/// the same values, bit for bit. It owns a copy of the model, so that it can
/// be kept across calls (the clients of a round in one process share one).
pub struct Prepared {
    pub model: Mdm,
    ln_tau: Vec<f64>,
    a0: Vec<f64>,
    psi_a0: Vec<f64>,
    lgamma_a0: Vec<f64>,
    batch: Option<Batch>,
    /// clients served so far by `serve`: the tables are built once TABLE_MIN_CLIENTS have been
    served: usize,
}

/// psi(alpha) and ln Gamma(alpha) per cell k C + j, and the small-count tables.
struct Batch {
    psi_alpha: Vec<f64>,
    lgamma_alpha: Vec<f64>,
    tables: Tables,
}

impl Prepared {
    pub fn new(model: &Mdm) -> Result<Self> {
        let a0 = alloc::collect((0..model.k).map(|q| model.alpha_row(q).iter().sum()))?;
        Ok(Prepared {
            model: model.try_clone()?,
            ln_tau: alloc::collect(model.tau.iter().map(|t| t.ln()))?,
            psi_a0: alloc::collect(a0.iter().map(|&a| digamma(a)))?,
            lgamma_a0: alloc::collect(a0.iter().map(|&a| lgamma(a)))?,
            a0,
            batch: None,
            served: 0,
        })
    }

    /// For m clients: with the per-cell digammas, lgammas and small-count tables when m is large enough to repay them.
    pub fn for_batch(model: &Mdm, m: usize) -> Result<Self> {
        let mut p = Prepared::new(model)?;
        if m >= TABLE_MIN_CLIENTS {
            p.tabulate();
        }
        Ok(p)
    }

    /// Counts `m` more clients served from this model, and tabulates once enough have been to repay the tables.
    pub fn serve(&mut self, m: usize) {
        self.served = self.served.saturating_add(m);
        if self.batch.is_none() && self.served >= TABLE_MIN_CLIENTS {
            self.tabulate();
        }
    }

    /// Builds the batch terms, unless they are too large or memory is short:
    /// they only save time (the direct path gives the same values).
    fn tabulate(&mut self) {
        let model = &self.model;
        if model.k * model.c * (TABLE_COUNTS + 1) > TABLE_MAX_ENTRIES {
            return;
        }
        let w = TABLE_COUNTS + 1;
        let cells = model.k * model.c;
        let buffers = (alloc::with_capacity(cells), alloc::with_capacity(cells), alloc::zeros(cells * w), alloc::zeros(cells * w));
        let (mut psi_alpha, mut lgamma_alpha, mut lrf, mut dd) = match buffers {
            (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
            _ => return,
        };
        psi_alpha.extend(model.alpha.iter().map(|&a| digamma(a)));
        lgamma_alpha.extend(model.alpha.iter().map(|&a| lgamma(a)));
        for cell in 0..cells {
            let a = model.alpha[cell];
            for c in 1..w {
                lrf[cell * w + c] = ln_rising_factorial_known(a, lgamma_alpha[cell], c as f64);
                dd[cell * w + c] = digamma_diff_known(a, psi_alpha[cell], c as f64);
            }
        }
        let ln_fact = (0..w).map(|c| lgamma(c as f64 + 1.0)).collect();
        self.batch = Some(Batch { psi_alpha, lgamma_alpha, tables: Tables { lrf, dd, ln_fact } });
    }

    fn lrf_direct(&self, cell: usize, c: f64) -> f64 {
        match &self.batch {
            Some(b) => ln_rising_factorial_known(self.model.alpha[cell], b.lgamma_alpha[cell], c),
            None => ln_rising_factorial(self.model.alpha[cell], c),
        }
    }

    fn dd_direct(&self, cell: usize, c: f64) -> f64 {
        match &self.batch {
            Some(b) => digamma_diff_known(self.model.alpha[cell], b.psi_alpha[cell], c),
            None => digamma_diff_lazy(self.model.alpha[cell], c),
        }
    }

    /// ln Gamma(alpha + c) - ln Gamma(alpha) for cell k C + j and a count c >= 1.
    #[inline(always)]
    fn lrf(&self, cell: usize, c: f64) -> f64 {
        match &self.batch {
            Some(b) if c <= TABLE_COUNTS as f64 => b.tables.lrf[cell * (TABLE_COUNTS + 1) + c as usize],
            _ => self.lrf_direct(cell, c),
        }
    }

    /// psi(alpha + c) - psi(alpha) for cell k C + j and a count c >= 1.
    #[inline(always)]
    fn dd(&self, cell: usize, c: f64) -> f64 {
        match &self.batch {
            Some(b) if c <= TABLE_COUNTS as f64 => b.tables.dd[cell * (TABLE_COUNTS + 1) + c as usize],
            _ => self.dd_direct(cell, c),
        }
    }

    /// ln(n! / prod c_j!) over the non-zero counts `nz` (dirichlet_multinomial's ln_multinomial_coefficient, small factorials tabulated).
    fn coefficient(&self, nz: &[(usize, f64)], n: f64) -> f64 {
        let mut s = lgamma(n + 1.0);
        for &(_, c) in nz {
            if c > 1.0 {
                s -= match &self.batch {
                    Some(b) if c <= TABLE_COUNTS as f64 => b.tables.ln_fact[c as usize],
                    _ => lgamma(c + 1.0),
                };
            }
        }
        s
    }

    /// omega_k of eq 12 for one histogram `row` of size n into `omega`; returns
    /// ln q(c, n) without the multinomial coefficient, or None when no
    /// component gives size n a positive probability (see `responsibilities_nz`).
    pub fn responsibilities(&self, row: &[f64], n: f64, omega: &mut [f64]) -> Option<f64> {
        let nz: Vec<(usize, f64)> = row.iter().copied().enumerate().filter(|&(_, c)| c > 0.0).collect();
        self.responsibilities_nz(&nz, n, omega)
    }

    /// `responsibilities` for a histogram given by its non-zero counts (category,
    /// count). ln p(c | n, alpha_k) is dirichlet_multinomial::log_pmf_row's sum,
    /// -lrf(alpha_0, n) + sum_j lrf(alpha_j, c_j), with its terms memoized.
    /// Guard when no component gives size n a positive probability: the size
    /// then says nothing about the component, and omega is computed from tau
    /// and the histogram alone (as if pi_{k,n} were equal across k), instead of
    /// 0/0; the client's E^i then gives size n mass, so the next round's Pi
    /// covers it.
    fn responsibilities_nz(&self, nz: &[(usize, f64)], n: f64, omega: &mut [f64]) -> Option<f64> {
        let m = &self.model;
        let col = n as usize - 1;
        let mut max = f64::NEG_INFINITY;
        for q in 0..m.k {
            let mut dm = -ln_rising_factorial_known(self.a0[q], self.lgamma_a0[q], n);
            for &(j, c) in nz {
                dm += self.lrf(q * m.c + j, c);
            }
            omega[q] = self.ln_tau[q] + dm;
            max = max.max(omega[q] + m.pi[q * m.n_max + col].ln());
        }
        let supported = max > f64::NEG_INFINITY;
        if supported {
            for q in 0..m.k {
                omega[q] += m.pi[q * m.n_max + col].ln();
            }
        } else {
            max = omega.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
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
    check_round(prep, clip, acc)?;
    check_histograms(counts, sizes, m, prep.model.c, prep.model.n_max)?;
    round_rows(prep, counts, sizes, m, clip, acc)
}

/// `round_statistics` for histograms checked once (Histograms): only their
/// fit to the model (C and the largest size against N) is checked, in O(1).
pub fn round_statistics_held(prep: &Prepared, h: &Histograms, clip: f64, acc: &mut RoundStats) -> Result<()> {
    check_round(prep, clip, acc)?;
    h.fits(prep.model.c, prep.model.n_max)?;
    round_rows(prep, h.counts(), h.sizes(), h.m(), clip, acc)
}

fn check_round(prep: &Prepared, clip: f64, acc: &RoundStats) -> Result<()> {
    let model = &prep.model;
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
    Ok(())
}

/// Algorithm 2's sums over histograms already checked against the model.
fn round_rows(prep: &Prepared, counts: &[f64], sizes: &[f64], m: usize, clip: f64, acc: &mut RoundStats) -> Result<()> {
    let model = &prep.model;
    let (k, c, n_max) = (model.k, model.c, model.n_max);
    let mut omega = vec![0.0; k];
    let mut u = alloc::zeros(k * c)?;
    let mut v = vec![0.0; k];
    let mut nz: Vec<(usize, f64)> = alloc::with_capacity(c)?;
    for i in 0..m {
        let row = &counts[i * c..(i + 1) * c];
        let n = sizes[i];
        nz.clear();
        nz.extend(row.iter().copied().enumerate().filter(|&(_, x)| x > 0.0));
        match prep.responsibilities_nz(&nz, n, &mut omega) {
            Some(lq) => acc.log_likelihood += lq + prep.coefficient(&nz, n),
            None => acc.unsupported += 1.0,
        }
        // u^i is zero outside the client's categories: only those are written, and cleared after
        let mut norm2 = 0.0;
        for q in 0..k {
            let w = omega[q];
            v[q] = 0.0;
            if w == 0.0 {
                continue;
            }
            for &(j, x) in &nz {
                let t = w * prep.dd(q * c + j, x);
                u[q * c + j] = t;
                norm2 += t * t;
            }
            v[q] = w * digamma_diff_known(prep.a0[q], prep.psi_a0[q], n);
            norm2 += v[q] * v[q];
        }
        let scale = if clip.is_finite() && norm2 > clip * clip { clip / norm2.sqrt() } else { 1.0 };
        for q in 0..k {
            acc.omega[q] += omega[q];
            acc.e[q * n_max + n as usize - 1] += omega[q];
            acc.v[q] += scale * v[q];
            if omega[q] == 0.0 {
                continue;
            }
            for &(j, _) in &nz {
                acc.u[q * c + j] += scale * u[q * c + j];
                u[q * c + j] = 0.0;
            }
        }
        acc.clients += 1.0;
    }
    Ok(())
}

/// ln q(c_i, n_i) of m clients into out_ll (negative infinity where the model
/// gives the size probability 0), and, when given, their responsibilities
/// (m x K, row-major; for unsupported sizes from tau and the histogram alone).
pub fn log_pmf(prep: &Prepared, counts: &[f64], sizes: &[f64], m: usize, out_ll: &mut [f64], out_resp: Option<&mut [f64]>) -> Result<()> {
    check_histograms(counts, sizes, m, prep.model.c, prep.model.n_max)?;
    log_pmf_rows(prep, counts, sizes, m, out_ll, out_resp)
}

/// `log_pmf` for histograms checked once (Histograms): only their fit to the model is checked.
pub fn log_pmf_held(prep: &Prepared, h: &Histograms, out_ll: &mut [f64], out_resp: Option<&mut [f64]>) -> Result<()> {
    h.fits(prep.model.c, prep.model.n_max)?;
    log_pmf_rows(prep, h.counts(), h.sizes(), h.m(), out_ll, out_resp)
}

fn log_pmf_rows(prep: &Prepared, counts: &[f64], sizes: &[f64], m: usize, out_ll: &mut [f64], mut out_resp: Option<&mut [f64]>) -> Result<()> {
    let (k, c) = (prep.model.k, prep.model.c);
    if out_ll.len() != m || out_resp.as_ref().map_or(false, |r| r.len() != m * k) {
        return Err(Error::param("log_pmf: output buffers do not match the number of histograms"));
    }
    let mut omega = vec![0.0; k];
    let mut nz: Vec<(usize, f64)> = alloc::with_capacity(c)?;
    for i in 0..m {
        nz.clear();
        nz.extend(counts[i * c..(i + 1) * c].iter().copied().enumerate().filter(|&(_, x)| x > 0.0));
        out_ll[i] = match prep.responsibilities_nz(&nz, sizes[i], &mut omega) {
            Some(lq) => lq + prep.coefficient(&nz, sizes[i]),
            None => f64::NEG_INFINITY,
        };
        if let Some(r) = out_resp.as_deref_mut() {
            r[i * k..(i + 1) * k].copy_from_slice(&omega);
        }
    }
    Ok(())
}
