//! One-class SVM (Schölkopf, Platt, Shawe-Taylor, Smola and Williamson,
//! "Estimating the support of a high-dimensional distribution", 2001) as
//! scikit-learn 1.2's `OneClassSVM` fits it through its libsvm: the dual
//!
//! ```text
//! min 1/2 a'Qa   subject to 0 <= a_i <= 1, sum a_i = nu l
//! ```
//!
//! (libsvm's scaling of the 1/(nu l) box), Q_ij = K(x_i, x_j), solved by SMO
//! with second-order working-set selection (solver.rs). The model keeps the
//! rows with a_i > 0 (the support vectors, in training order) and their a_i
//! (scikit-learn's `dual_coef_`); `rho` is scikit-learn's `offset_`:
//!
//! ```text
//! decision(x) = sum_i a_i K(x_i, x) - rho,   score = decision + rho
//! ```
//!
//! and a row is an inlier (+1) when decision(x) > 0. Kernels: RBF, K(x, y) =
//! exp(-gamma |x - y|^2) with gamma a number, 'scale' (1 / (d Var X), Var over
//! every value; 1 when that is 0) or 'auto' (1 / d); and linear, x'y.
//!
//! Rows are kept row-major, padded with a zero to an even width, with their
//! squared norms, so that a kernel value is one dot product over features
//! (kernels::dot: f64x2 lanes) and |x - y|^2 = |x|^2 + |y|^2 - 2 x'y.
//!
//! Cached kernel values are f32, as libsvm's: with f64 entries the solver
//! follows libsvm's steps only until two candidates of a working-set choice
//! differ by less than f32 rounding, and then ends at another point that
//! meets the same tolerance; on Fashion-MNIST clients that moved decision
//! values by up to 3.5e-4 of their range (scikit-learn's own tol = 1e-3
//! solution is that far from the exact one). Everything else is f64.

pub mod cache;
mod solver;
#[cfg(test)]
mod tests;

use crate::alloc;
use crate::data::Data;
use crate::error::{show, Error, Result};
use crate::kernels;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelType {
    Rbf,
    Linear,
}

impl KernelType {
    pub const ALL: [KernelType; 2] = [KernelType::Rbf, KernelType::Linear];

    /// Stable code used across the C ABI.
    pub const fn code(self) -> i32 {
        match self {
            KernelType::Rbf => 0,
            KernelType::Linear => 1,
        }
    }

    pub fn from_code(c: i32) -> Result<Self> {
        KernelType::ALL
            .iter()
            .copied()
            .find(|k| k.code() == c)
            .ok_or_else(|| Error::param(format!("unknown kernel code {}; use 0 (rbf) or 1 (linear)", c)))
    }

    pub const fn name(self) -> &'static str {
        match self {
            KernelType::Rbf => "rbf",
            KernelType::Linear => "linear",
        }
    }
}

/// How the RBF kernel's gamma is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Gamma {
    /// 1 / (d Var X)
    Scale,
    /// 1 / d
    Auto,
    Value(f64),
}

impl Gamma {
    /// Codes of the C ABI (the value travels separately).
    pub const SCALE: i32 = 0;
    pub const AUTO: i32 = 1;
    pub const VALUE: i32 = 2;

    pub fn from_code(c: i32, value: f64) -> Result<Self> {
        match c {
            Gamma::SCALE => Ok(Gamma::Scale),
            Gamma::AUTO => Ok(Gamma::Auto),
            Gamma::VALUE => Ok(Gamma::Value(value)),
            _ => Err(Error::param(format!("unknown gamma code {}; use 0 (scale), 1 (auto) or 2 (a value)", c))),
        }
    }
}

#[derive(Clone, Debug)]
pub struct OcsvmOptions {
    pub kernel: KernelType,
    pub gamma: Gamma,
    pub nu: f64,
    pub tol: f64,
    pub shrinking: bool,
    /// kernel cache size in MiB (scikit-learn's cache_size)
    pub cache_mb: f64,
    /// None: no limit but libsvm's own, max(10^7, 100 n)
    pub max_iter: Option<usize>,
}

impl Default for OcsvmOptions {
    fn default() -> Self {
        OcsvmOptions { kernel: KernelType::Rbf, gamma: Gamma::Scale, nu: 0.5, tol: 1e-3, shrinking: true, cache_mb: 200.0, max_iter: None }
    }
}

pub fn validate_options(o: &OcsvmOptions) -> Result<()> {
    if !(o.nu > 0.0 && o.nu <= 1.0) {
        return Err(Error::param(format!("nu must be in (0, 1], got {}", show(o.nu))));
    }
    if !(o.tol > 0.0 && o.tol.is_finite()) {
        return Err(Error::param(format!("tol must be a finite number > 0, got {}", show(o.tol))));
    }
    if let Gamma::Value(g) = o.gamma {
        if !(g > 0.0 && g.is_finite()) {
            return Err(Error::param(format!("gamma must be 'scale', 'auto' or a finite number > 0, got {}", show(g))));
        }
    }
    if !(o.cache_mb > 0.0 && o.cache_mb.is_finite()) {
        return Err(Error::param(format!("cacheSize must be a finite number of MiB > 0, got {}", show(o.cache_mb))));
    }
    Ok(())
}

/// A kernel with its gamma resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel {
    pub kind: KernelType,
    pub gamma: f64,
}

impl Kernel {
    /// Turns dot products x'y_t into kernel values in place; `sq_x` is |x|^2
    /// and sq[t] is |y_t|^2.
    #[inline]
    pub(crate) fn from_dots(&self, v: &mut [f64], sq_x: f64, sq: &[f64]) {
        match self.kind {
            KernelType::Rbf => kernels::rbf_from_dots(v, sq_x, sq, self.gamma),
            KernelType::Linear => {}
        }
    }
}

/// Rows stored row-major, `width` (d rounded up to even, the pad 0) apart,
/// with their squared norms.
#[derive(Clone, Debug)]
pub struct Rows {
    pub n: usize,
    pub d: usize,
    pub width: usize,
    pub values: Vec<f64>,
    pub sq: Vec<f64>,
}

impl Rows {
    fn empty(n: usize, d: usize) -> Result<Rows> {
        let width = d + d % 2;
        Ok(Rows { n, d, width, values: alloc::zeros(alloc::cells(n, width, 8)?)?, sq: alloc::zeros(n)? })
    }

    fn finish(mut self, what: &str) -> Result<Rows> {
        for i in 0..self.n {
            let x = self.row(i);
            let s = kernels::dot(x, x);
            if !s.is_finite() {
                return Err(Error::data(format!(
                    "row {} of {} is too large: its squared norm overflows a double; scale the features down",
                    i, what
                )));
            }
            self.sq[i] = s;
        }
        Ok(self)
    }

    /// The rows of column-major data (already checked finite), transposed
    /// eight rows at a time (each column's eight values are adjacent).
    pub fn from_data(x: &Data, what: &str) -> Result<Rows> {
        const B: usize = 8;
        let (n, d) = (x.n, x.d);
        let width = d + d % 2;
        let mut values = alloc::with_capacity(alloc::cells(n, width, 8)?)?;
        let mut block = alloc::zeros(B * width)?;
        let mut i0 = 0;
        while i0 < n {
            let nb = B.min(n - i0);
            for j in 0..d {
                for (r, v) in x.col(j)[i0..i0 + nb].iter().enumerate() {
                    block[r * width + j] = *v;
                }
            }
            values.extend_from_slice(&block[..nb * width]);
            i0 += nb;
        }
        Rows { n, d, width, values, sq: alloc::zeros(n)? }.finish(what)
    }

    /// Rows given row-major, `d` values each (already checked finite).
    pub fn from_row_major(v: &[f64], n: usize, d: usize, what: &str) -> Result<Rows> {
        let mut r = Rows::empty(n, d)?;
        for i in 0..n {
            r.values[i * r.width..i * r.width + d].copy_from_slice(&v[i * d..(i + 1) * d]);
        }
        r.finish(what)
    }

    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    /// The rows at `idx`, in that order.
    fn select(&self, idx: &[u32]) -> Result<Rows> {
        let mut r = Rows::empty(idx.len(), self.d)?;
        for (k, &i) in idx.iter().enumerate() {
            r.values[k * self.width..(k + 1) * self.width].copy_from_slice(self.row(i as usize));
            r.sq[k] = self.sq[i as usize];
        }
        Ok(r)
    }

    /// Row-major values without the padding (n x d).
    pub fn unpadded_into(&self, out: &mut [f64]) {
        for i in 0..self.n {
            out[i * self.d..(i + 1) * self.d].copy_from_slice(&self.values[i * self.width..i * self.width + self.d]);
        }
    }
}

/// gamma as scikit-learn resolves it: 'scale' is 1 / (d Var X) with Var the
/// population variance of every value of X (1 when it is 0), 'auto' 1 / d.
pub fn resolve_gamma(x: &Data, g: Gamma) -> f64 {
    match g {
        Gamma::Value(v) => v,
        Gamma::Auto => 1.0 / x.d as f64,
        Gamma::Scale => {
            let count = (x.n * x.d) as f64;
            let mean = (0..x.d).map(|j| kernels::sum(x.col(j))).sum::<f64>() / count;
            let var = (0..x.d).map(|j| kernels::sq_dev(x.col(j), mean)).sum::<f64>() / count;
            if var != 0.0 {
                1.0 / (x.d as f64 * var)
            } else {
                1.0
            }
        }
    }
}

/// A fitted (or loaded) one-class SVM.
#[derive(Clone, Debug)]
pub struct OneClassSvm {
    pub kernel: KernelType,
    /// the kernel's gamma, resolved (kept for the linear kernel too, unused there)
    pub gamma: f64,
    pub nu: f64,
    /// support vectors, in training order
    pub sv: Rows,
    /// their training rows (empty for a model loaded without them)
    pub support: Vec<u32>,
    /// their a_i (scikit-learn's dual_coef_)
    pub coef: Vec<f64>,
    /// scikit-learn's offset_ (libsvm's rho)
    pub rho: f64,
    /// 1/2 a'Qa at the solution
    pub objective: f64,
    pub n_iter: usize,
    pub converged: bool,
}

/// Values of the cache budget for `cache_mb` MiB of f32 entries.
fn cache_values(cache_mb: f64) -> usize {
    let v = (cache_mb * (1u64 << 20) as f64 / 4.0).floor();
    if v >= usize::MAX as f64 {
        usize::MAX
    } else {
        v as usize
    }
}

pub fn fit(x: &Data, o: &OcsvmOptions) -> Result<OneClassSvm> {
    validate_options(o)?;
    x.require_finite("X")?;
    let rows = Rows::from_data(x, "X")?;
    let gamma = resolve_gamma(x, o.gamma);
    let kernel = Kernel { kind: o.kernel, gamma };
    let settings = solver::Settings { nu: o.nu, eps: o.tol, shrinking: o.shrinking, cache_values: cache_values(o.cache_mb), max_iter: o.max_iter };
    let s = solver::solve(&rows, kernel, &settings)?;
    if !s.rho.is_finite() || !s.objective.is_finite() {
        return Err(Error::numerical(format!(
            "the solution is not finite (rho {}, objective {}); scale the features or lower gamma",
            show(s.rho),
            show(s.objective)
        )));
    }
    let support = alloc::collect((0..rows.n as u32).filter(|&i| s.alpha[i as usize] > 0.0))?;
    let coef = alloc::collect(support.iter().map(|&i| s.alpha[i as usize]))?;
    let sv = rows.select(&support)?;
    drop(rows);
    Ok(OneClassSvm {
        kernel: o.kernel,
        gamma,
        nu: o.nu,
        sv,
        support,
        coef,
        rho: s.rho,
        objective: s.objective,
        n_iter: s.n_iter,
        converged: s.converged,
    })
}

/// Query rows per block of decision_function, and support vectors per block:
/// a block of each (up to 16 x 64 rows of 784 features: 100 KiB and 400 KiB)
/// stays in the core's L2 cache while every pair of them is computed.
const QUERY_BLOCK: usize = 16;
const SV_BLOCK: usize = 64;

impl OneClassSvm {
    /// A model from its parts, as toJSON writes them or a client sends them:
    /// `sv` the support vectors row-major (n_sv x d), `coef` their a_i.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(kernel: KernelType, gamma: f64, nu: f64, d: usize, sv: &[f64], coef: &[f64], rho: f64, support: Option<&[u32]>) -> Result<Self> {
        let n = coef.len();
        if d == 0 {
            return Err(Error::param("a one-class SVM needs at least one feature"));
        }
        if n == 0 {
            return Err(Error::param("a one-class SVM needs at least one support vector (dualCoef is empty)"));
        }
        if sv.len() != n * d {
            return Err(Error::param(format!(
                "supportVectors have {} values; {} support vectors (dualCoef) of {} features need {}",
                sv.len(),
                n,
                d,
                n * d
            )));
        }
        if let Some(i) = sv.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(format!("supportVectors hold {} at row {}, column {}", show(sv[i]), i / d, i % d)));
        }
        if let Some(i) = coef.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(format!("dualCoef[{}] is {}; every coefficient must be finite", i, show(coef[i]))));
        }
        if !rho.is_finite() {
            return Err(Error::param(format!("offset must be finite, got {}", show(rho))));
        }
        if kernel == KernelType::Rbf && !(gamma > 0.0 && gamma.is_finite()) {
            return Err(Error::param(format!("gamma must be a finite number > 0, got {}", show(gamma))));
        }
        if !(nu > 0.0 && nu <= 1.0) {
            return Err(Error::param(format!("nu must be in (0, 1], got {}", show(nu))));
        }
        let support = match support {
            Some(s) if s.len() != n => {
                return Err(Error::param(format!("support has {} indices but there are {} support vectors", s.len(), n)));
            }
            Some(s) => alloc::copy(s)?,
            None => Vec::new(),
        };
        Ok(OneClassSvm {
            kernel,
            gamma,
            nu,
            sv: Rows::from_row_major(sv, n, d, "supportVectors").map_err(|e| Error::param(e.message))?,
            support,
            coef: alloc::copy(coef)?,
            rho,
            objective: f64::NAN,
            n_iter: 0,
            converged: true,
        })
    }

    /// decision(x) = sum_i a_i K(x_i, x) - rho for every row of `x` into `out`
    /// (libsvm's order: the terms added in support-vector order, then rho).
    pub fn decision_function(&self, x: &Data, out: &mut [f64]) -> Result<()> {
        if x.d != self.sv.d {
            return Err(Error::data(format!(
                "X has {} features but the model was fitted with {}; pass data with {} columns",
                x.d, self.sv.d, self.sv.d
            )));
        }
        x.require_finite("X")?;
        let (width, nsv) = (self.sv.width, self.sv.n);
        let kernel = Kernel { kind: self.kernel, gamma: self.gamma };
        let mut q = Rows::empty(QUERY_BLOCK.min(x.n), x.d)?;
        let mut dots = alloc::zeros(QUERY_BLOCK * SV_BLOCK)?;
        let mut acc = [0.0f64; QUERY_BLOCK];
        let mut q0 = 0;
        while q0 < x.n {
            let nq = QUERY_BLOCK.min(x.n - q0);
            for j in 0..x.d {
                let col = &x.col(j)[q0..q0 + nq];
                for (r, v) in col.iter().enumerate() {
                    q.values[r * width + j] = *v;
                }
            }
            for r in 0..nq {
                let row = &q.values[r * width..(r + 1) * width];
                let s = kernels::dot(row, row);
                if !s.is_finite() {
                    return Err(Error::data(format!(
                        "row {} of X is too large: its squared norm overflows a double; scale the features down",
                        q0 + r
                    )));
                }
                q.sq[r] = s;
                acc[r] = 0.0;
            }
            let mut s0 = 0;
            while s0 < nsv {
                let ns = SV_BLOCK.min(nsv - s0);
                kernels::cross_dots(&q.values, nq, &self.sv.values[s0 * width..], ns, width, &mut dots, SV_BLOCK);
                for r in 0..nq {
                    let k = &mut dots[r * SV_BLOCK..r * SV_BLOCK + ns];
                    kernel.from_dots(k, q.sq[r], &self.sv.sq[s0..s0 + ns]);
                    let mut a = acc[r];
                    for (c, v) in self.coef[s0..s0 + ns].iter().zip(k.iter()) {
                        a += c * v;
                    }
                    acc[r] = a;
                }
                s0 += ns;
            }
            for r in 0..nq {
                out[q0 + r] = acc[r] - self.rho;
            }
            q0 += nq;
        }
        Ok(())
    }
}
