//! Costs between Gaussians, batched: the matrix of costs between two sets of
//! Gaussians, as FedDistr's server needs it for every pair of clients' base
//! distributions. A covariance is full (d x d, row-major) or diagonal (d
//! variances); means are d values; a set of n is stored row after row.
//!
//!   2-Wasserstein  W2^2 = |m_a - m_b|^2 + tr S_a + tr S_b - 2 tr (S_b^1/2 S_a S_b^1/2)^1/2
//!                  (Dowson & Landau 1982); the cost is W2 itself. The trace of
//!                  the root is the sum of the roots of the eigenvalues of
//!                  F' S_a F for any F with F F' = S_b (all are similar to
//!                  S_a S_b): F is S_b's Cholesky factor, or its symmetric
//!                  root when S_b is only semi-definite, so one symmetric
//!                  eigenvalue problem per pair, values only. Eigenvalues that
//!                  rounding (or a covariance that is not semi-definite) puts
//!                  below zero count as zero, as a floored sqrtm does.
//!                  Diagonal: |m_a - m_b|^2 + |sqrt v_a - sqrt v_b|^2.
//!   Bhattacharyya  DB = 1/8 dm' S^-1 dm + 1/2 ln(det S / sqrt(det S_a det S_b)),
//!                  S = (S_a + S_b) / 2, determinants through Cholesky factors.
//!
//! Cell (i, j) of the result is +inf where both sets carry task labels and
//! a's i-th differs from b's j-th (a forbidden pair: not computed), NaN where
//! the cost is undefined (Bhattacharyya with a covariance that is not
//! positive definite; W2 with a negative diagonal variance). Everything that
//! depends on one Gaussian alone (factors, traces, log-determinants, roots of
//! variances) is computed once per call, not once per pair.

use crate::alloc;
use crate::error::{Error, Result};
use crate::kernels::{self, Cols};
use crate::linalg;

/// Which cost between two Gaussians.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    Wasserstein,
    Bhattacharyya,
}

impl Cost {
    pub const ALL: [Cost; 2] = [Cost::Wasserstein, Cost::Bhattacharyya];
    pub const fn code(self) -> i32 {
        match self {
            Cost::Wasserstein => 0,
            Cost::Bhattacharyya => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Cost::Wasserstein => "wasserstein",
            Cost::Bhattacharyya => "bhattacharyya",
        }
    }
    pub fn from_code(code: i32) -> Result<Self> {
        Self::ALL.iter().copied().find(|c| c.code() == code).ok_or_else(|| Error::param(format!("unknown Gaussian cost code {}", code)))
    }
}

/// How covariances are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// d x d, row-major
    Full,
    /// d variances
    Diagonal,
}

impl Form {
    pub const ALL: [Form; 2] = [Form::Full, Form::Diagonal];
    pub const fn code(self) -> i32 {
        match self {
            Form::Full => 0,
            Form::Diagonal => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Form::Full => "full",
            Form::Diagonal => "diagonal",
        }
    }
    pub fn from_code(code: i32) -> Result<Self> {
        Self::ALL.iter().copied().find(|c| c.code() == code).ok_or_else(|| Error::param(format!("unknown covariance form code {}", code)))
    }
    /// Values of one covariance in d dimensions.
    pub fn size(self, d: usize) -> usize {
        match self {
            Form::Full => d * d,
            Form::Diagonal => d,
        }
    }
}

/// n Gaussians: means (n x d) and covariances (n x form.size(d)), row after
/// row, and optionally the task label of each.
#[derive(Clone, Copy)]
pub struct Gaussians<'a> {
    pub n: usize,
    pub means: &'a [f64],
    pub covariances: &'a [f64],
    pub labels: Option<&'a [i32]>,
}

impl<'a> Gaussians<'a> {
    fn check(&self, name: &str, d: usize, form: Form) -> Result<()> {
        let size = form.size(d);
        let means = self.n.checked_mul(d).ok_or_else(|| Error::data(format!("{} Gaussians of {} dimensions are too many", self.n, d)))?;
        let covs = self.n.checked_mul(size).ok_or_else(|| Error::data(format!("{} Gaussians of {} dimensions are too many", self.n, d)))?;
        if self.means.len() != means {
            return Err(Error::data(format!("set {}: {} means of {} dimensions need {} values, got {}", name, self.n, d, means, self.means.len())));
        }
        if self.covariances.len() != covs {
            return Err(Error::data(format!("set {}: {} {} covariances of {} dimensions need {} values, got {}", name, self.n, form.name(), d, covs, self.covariances.len())));
        }
        if let Some(l) = self.labels {
            if l.len() != self.n {
                return Err(Error::data(format!("set {}: {} Gaussians but {} labels", name, self.n, l.len())));
            }
        }
        for (what, values, width) in [("mean", self.means, d), ("covariance", self.covariances, size)] {
            if let Some(p) = values.iter().position(|v| !v.is_finite()) {
                return Err(Error::data(format!("set {}: the {} of Gaussian {} holds a value that is not finite ({})", name, what, p / width.max(1), crate::error::display(values[p]))));
            }
        }
        Ok(())
    }

    fn mean(&self, i: usize, d: usize) -> &'a [f64] {
        &self.means[i * d..(i + 1) * d]
    }

    fn cov(&self, i: usize, size: usize) -> &'a [f64] {
        &self.covariances[i * size..(i + 1) * size]
    }
}

/// The na x nb row-major matrix of `cost` between every Gaussian of `a` and
/// every one of `b` (d dimensions, covariances in `form`), into `out`.
/// Labels must be given for both sets or for neither.
pub fn cost_matrix(cost: Cost, form: Form, d: usize, a: &Gaussians, b: &Gaussians, out: &mut [f64]) -> Result<()> {
    a.check("a", d, form)?;
    b.check("b", d, form)?;
    if a.labels.is_some() != b.labels.is_some() {
        return Err(Error::param("task labels must be given for both sets of Gaussians or for neither"));
    }
    let cells = alloc::cells(a.n, b.n, 1)?;
    if out.len() < cells {
        return Err(Error::data(format!("the output holds {} values; {} x {} costs need {}", out.len(), a.n, b.n, cells)));
    }
    match (cost, form) {
        (Cost::Wasserstein, Form::Full) => wasserstein_full(d, a, b, out),
        (Cost::Wasserstein, Form::Diagonal) => wasserstein_diagonal(d, a, b, out),
        (Cost::Bhattacharyya, Form::Full) => bhattacharyya_full(d, a, b, out),
        (Cost::Bhattacharyya, Form::Diagonal) => bhattacharyya_diagonal(d, a, b, out),
    }
}

/// Whether pair (i, j) is forbidden (different task labels); its cell is then +inf.
#[inline]
fn forbidden(a: &Gaussians, b: &Gaussians, i: usize, j: usize) -> bool {
    match (a.labels, b.labels) {
        (Some(la), Some(lb)) => la[i] != lb[j],
        _ => false,
    }
}

fn sq_diff(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (p, q) in x.iter().zip(y) {
        s += (p - q) * (p - q);
    }
    s
}

fn trace(s: &[f64], d: usize) -> f64 {
    (0..d).map(|j| s[j * d + j]).sum()
}

/// F with F F' = s: the lower Cholesky factor (true) when s is positive
/// definite, else the symmetric root with negative eigenvalues taken as zero.
fn factor(s: &[f64], d: usize, out: &mut [f64]) -> Result<bool> {
    if linalg::cholesky_lower(s, d, out).is_ok() {
        return Ok(true);
    }
    let (values, vectors) = linalg::symmetric_eigen(s, d)?;
    for v in out[..d * d].iter_mut() {
        *v = 0.0;
    }
    for r in 0..d {
        let root = values[r].max(0.0).sqrt();
        if root == 0.0 {
            continue;
        }
        let u = &vectors[r * d..(r + 1) * d];
        for i in 0..d {
            let ui = u[i] * root;
            kernels::axpy(&mut out[i * d..(i + 1) * d], u, ui);
        }
    }
    Ok(false)
}

fn wasserstein_full(d: usize, a: &Gaussians, b: &Gaussians, out: &mut [f64]) -> Result<()> {
    let size = d * d;
    let mut factors = alloc::zeros(alloc::cells(b.n, size, 8)?)?;
    let mut lower = alloc::filled(false, b.n)?;
    for j in 0..b.n {
        lower[j] = factor(b.cov(j, size), d, &mut factors[j * size..(j + 1) * size])?;
    }
    let trace_b = alloc::collect((0..b.n).map(|j| trace(b.cov(j, size), d)))?;
    let mut t = alloc::zeros(size)?;
    let mut m = alloc::zeros(size)?;
    let mut v = alloc::zeros(size)?;
    let mut values = vec![0.0; d];
    let mut off = vec![0.0; d];
    for i in 0..a.n {
        let sa = a.cov(i, size);
        let trace_a = trace(sa, d);
        for j in 0..b.n {
            let cell = &mut out[i * b.n + j];
            if forbidden(a, b, i, j) {
                *cell = f64::INFINITY;
                continue;
            }
            let f = &factors[j * size..(j + 1) * size];
            let tri = lower[j];
            // T = S_a F; a lower F has row k non-zero in columns 0..=k only
            t.iter_mut().for_each(|x| *x = 0.0);
            for r in 0..d {
                let row = &mut t[r * d..(r + 1) * d];
                for k in 0..d {
                    let width = if tri { k + 1 } else { d };
                    kernels::axpy(&mut row[..width], &f[k * d..k * d + width], sa[r * d + k]);
                }
            }
            // the lower triangle of M = F' T: M[r][c] = sum_k F[k][r] T[k][c], c <= r
            m.iter_mut().for_each(|x| *x = 0.0);
            for k in 0..d {
                let top = if tri { k + 1 } else { d };
                for r in 0..top {
                    kernels::axpy(&mut m[r * d..r * d + r + 1], &t[k * d..k * d + r + 1], f[k * d + r]);
                }
            }
            linalg::symmetric_eigenvalues(&m, d, &mut v, &mut values, &mut off)
                .map_err(|e| Error::numerical(format!("the eigenvalues for Gaussians {} and {} did not converge (at {})", i, j, e)))?;
            let root_trace: f64 = values.iter().map(|x| x.max(0.0).sqrt()).sum();
            let w2 = sq_diff(a.mean(i, d), b.mean(j, d)) + (trace_a + trace_b[j] - 2.0 * root_trace);
            *cell = root(w2);
        }
    }
    Ok(())
}

/// W2 from W2^2: rounding can leave the trace term a hair below zero for
/// equal covariances (that is 0); NaN (a negative variance) stays NaN.
fn root(w2: f64) -> f64 {
    if w2 < 0.0 {
        0.0
    } else {
        w2.sqrt()
    }
}

fn wasserstein_diagonal(d: usize, a: &Gaussians, b: &Gaussians, out: &mut [f64]) -> Result<()> {
    // b as 2d columns of nb rows (means, then roots of variances): one SIMD
    // squared-distance pass over all of b per Gaussian of a
    let width = 2 * d;
    let mut cols = alloc::zeros(alloc::cells(b.n, width, 8)?)?;
    for j in 0..b.n {
        let (m, v) = (b.mean(j, d), b.cov(j, d));
        for l in 0..d {
            cols[l * b.n + j] = m[l];
            cols[(d + l) * b.n + j] = v[l].sqrt();
        }
    }
    let mut centre = vec![0.0; width];
    for i in 0..a.n {
        let (m, v) = (a.mean(i, d), a.cov(i, d));
        for l in 0..d {
            centre[l] = m[l];
            centre[d + l] = v[l].sqrt();
        }
        let row = &mut out[i * b.n..(i + 1) * b.n];
        if b.n > 0 {
            kernels::sq_dist(Cols::new(&cols, b.n, 0), width, b.n, &centre, None, None, row);
        }
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = if forbidden(a, b, i, j) { f64::INFINITY } else { root(*cell) };
        }
    }
    Ok(())
}

/// ln det of a positive definite s from its Cholesky factor, NaN when it has none.
fn log_det(s: &[f64], d: usize, l: &mut [f64]) -> f64 {
    match linalg::cholesky_lower(s, d, l) {
        Ok(()) => 2.0 * (0..d).map(|j| l[j * d + j].ln()).sum::<f64>(),
        Err(_) => f64::NAN,
    }
}

fn bhattacharyya_full(d: usize, a: &Gaussians, b: &Gaussians, out: &mut [f64]) -> Result<()> {
    let size = d * d;
    let mut l = alloc::zeros(size)?;
    let mut s = alloc::zeros(size)?;
    let ld_a = alloc::collect((0..a.n).map(|i| log_det(a.cov(i, size), d, &mut l)))?;
    let ld_b = alloc::collect((0..b.n).map(|j| log_det(b.cov(j, size), d, &mut l)))?;
    let mut y = vec![0.0; d];
    for i in 0..a.n {
        let (ma, sa) = (a.mean(i, d), a.cov(i, size));
        for j in 0..b.n {
            let cell = &mut out[i * b.n + j];
            if forbidden(a, b, i, j) {
                *cell = f64::INFINITY;
                continue;
            }
            let (mb, sb) = (b.mean(j, d), b.cov(j, size));
            for r in 0..d {
                for c in 0..=r {
                    s[r * d + c] = (sa[r * d + c] + sb[r * d + c]) / 2.0;
                }
            }
            if linalg::cholesky_lower(&s, d, &mut l).is_err() {
                *cell = f64::NAN;
                continue;
            }
            // L y = dm by forward substitution: dm' S^-1 dm = |y|^2
            let mut quad = 0.0;
            let mut ld = 0.0;
            for r in 0..d {
                let mut v = ma[r] - mb[r];
                for k in 0..r {
                    v -= l[r * d + k] * y[k];
                }
                y[r] = v / l[r * d + r];
                quad += y[r] * y[r];
                ld += l[r * d + r].ln();
            }
            *cell = quad / 8.0 + (2.0 * ld - 0.5 * (ld_a[i] + ld_b[j])) / 2.0;
        }
    }
    Ok(())
}

fn bhattacharyya_diagonal(d: usize, a: &Gaussians, b: &Gaussians, out: &mut [f64]) -> Result<()> {
    // sum of ln v per Gaussian, NaN when a variance is not positive
    let log_sum = |v: &[f64]| -> f64 {
        if v.iter().all(|&x| x > 0.0) {
            v.iter().map(|x| x.ln()).sum()
        } else {
            f64::NAN
        }
    };
    let ls_a = alloc::collect((0..a.n).map(|i| log_sum(a.cov(i, d))))?;
    let ls_b = alloc::collect((0..b.n).map(|j| log_sum(b.cov(j, d))))?;
    let mut v = vec![0.0; d];
    let mut lv = vec![0.0; d];
    for i in 0..a.n {
        let (ma, va) = (a.mean(i, d), a.cov(i, d));
        for j in 0..b.n {
            let cell = &mut out[i * b.n + j];
            if forbidden(a, b, i, j) {
                *cell = f64::INFINITY;
                continue;
            }
            if ls_a[i].is_nan() || ls_b[j].is_nan() {
                *cell = f64::NAN;
                continue;
            }
            let (mb, vb) = (b.mean(j, d), b.cov(j, d));
            let mut quad = 0.0;
            for l in 0..d {
                v[l] = (va[l] + vb[l]) / 2.0;
                quad += (ma[l] - mb[l]) * (ma[l] - mb[l]) / v[l];
            }
            lv.copy_from_slice(&v);
            // the vectorized ln takes positive normal numbers; a subnormal mean variance goes through std
            if lv.iter().all(|&x| x >= f64::MIN_POSITIVE && x.is_finite()) {
                kernels::ln_in_place(&mut lv);
            } else {
                lv.iter_mut().for_each(|x| *x = x.ln());
            }
            let ld: f64 = lv.iter().sum();
            *cell = quad / 8.0 + (ld - 0.5 * (ls_a[i] + ls_b[j])) / 2.0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
