//! Gaussian mixtures with scikit-learn 1.2 semantics (sklearn/mixture/
//! _gaussian_mixture.py): four covariance types, parameters stored in the same
//! shapes (flattened row-major), precisions kept as Cholesky factors for
//! stability. The pieces: estep (log densities, responsibilities), mstep
//! (parameters from responsibilities), fit (initialization and the EM loop),
//! float32 (the E-step in single precision), sample, dem (distributed EM's client and server steps and initializations),
//! check (what parameters from outside must satisfy).

pub mod check;
pub mod dem;
pub mod estep;
pub mod fit;
pub mod float32;
pub mod mstep;
pub mod sample;
pub mod stats;

use crate::alloc;
use crate::distributions;
use crate::error::{Error, Result};
use crate::linalg;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CovarianceType {
    /// each component its own d x d covariance: shape (k, d, d)
    Full,
    /// one d x d covariance shared by all components: shape (d, d)
    Tied,
    /// each component a diagonal covariance: shape (k, d)
    Diag,
    /// each component a single variance: shape (k,)
    Spherical,
}

impl CovarianceType {
    pub const ALL: [CovarianceType; 4] = [CovarianceType::Full, CovarianceType::Tied, CovarianceType::Diag, CovarianceType::Spherical];

    pub const fn code(self) -> i32 {
        match self {
            CovarianceType::Full => 0,
            CovarianceType::Tied => 1,
            CovarianceType::Diag => 2,
            CovarianceType::Spherical => 3,
        }
    }

    pub fn from_code(code: i32) -> Result<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.code() == code)
            .ok_or_else(|| Error::param(format!("unknown covariance type code {}; use 0 full, 1 tied, 2 diag, 3 spherical", code)))
    }

    pub fn name(self) -> &'static str {
        match self {
            CovarianceType::Full => "full",
            CovarianceType::Tied => "tied",
            CovarianceType::Diag => "diag",
            CovarianceType::Spherical => "spherical",
        }
    }

    /// Number of values in a covariance (or precision) array of this type:
    /// k^a d^b for (a, b) = `shape_powers`.
    pub fn param_len(self, k: usize, d: usize) -> usize {
        let (a, b) = self.shape_powers();
        k.pow(a) * d.pow(b)
    }

    /// The powers of the component count k and the feature count d whose
    /// product is the length of a covariance array of this type: full k d^2,
    /// tied d^2, diag k d, spherical k. The one home of that rule:
    /// scripts/gen-wasm-abi.mjs reads these arms into TypeScript's
    /// COVARIANCE_SHAPE_POWERS (keep one `CovarianceType::X => (a, b),` a line).
    pub const fn shape_powers(self) -> (u32, u32) {
        match self {
            CovarianceType::Full => (1, 2),
            CovarianceType::Tied => (0, 2),
            CovarianceType::Diag => (1, 1),
            CovarianceType::Spherical => (1, 0),
        }
    }


    fn shape(self, k: usize, d: usize) -> String {
        match self {
            CovarianceType::Full => format!("({}, {}, {})", k, d, d),
            CovarianceType::Tied => format!("({}, {})", d, d),
            CovarianceType::Diag => format!("({}, {})", k, d),
            CovarianceType::Spherical => format!("({},)", k),
        }
    }

    /// Matrices stored per component (full: k, tied: 1); 0 for the vector types.
    fn n_matrices(self, k: usize) -> usize {
        match self {
            CovarianceType::Full => k,
            CovarianceType::Tied => 1,
            _ => 0,
        }
    }
}

/// A fitted (or imported) Gaussian mixture.
#[derive(Clone, Debug, PartialEq)]
pub struct Gmm {
    pub cov_type: CovarianceType,
    pub k: usize,
    pub d: usize,
    /// (k,)
    pub weights: Vec<f64>,
    /// (k, d)
    pub means: Vec<f64>,
    /// shape by covariance type
    pub covariances: Vec<f64>,
    /// Cholesky factors P of the precisions (precision = P P^T), same shape as
    /// covariances. Upper-triangular when computed from covariances, lower when
    /// given as initial precisions, exactly as scikit-learn.
    pub precisions_chol: Vec<f64>,
}

const SINGULAR_HINT: &str = "some components have an ill-defined covariance (collapsed onto too few distinct points, or a feature with zero variance); increase regCovar or lower nComponents";

/// Cholesky factors of the precisions from covariances (scikit-learn's
/// _compute_precision_cholesky). A covariance that is not positive definite is
/// the error `singular` makes of its component. `floor`, per feature, is the
/// variance that counts as zero (see Data::variance_floor).
pub fn precisions_cholesky_from_covariances(
    cov_type: CovarianceType,
    k: usize,
    d: usize,
    cov: &[f64],
    floor: Option<&[f64]>,
    singular: impl Fn(usize) -> Error,
) -> Result<Vec<f64>> {
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            let m = cov_type.n_matrices(k);
            let mut out = alloc::zeros(m * d * d)?;
            let mut l = alloc::zeros(d * d)?;
            let mut inv = alloc::zeros(d * d)?;
            for c in 0..m {
                linalg::cholesky_lower_floor(&cov[c * d * d..(c + 1) * d * d], d, &mut l, floor).map_err(|_| singular(c))?;
                linalg::invert_lower(&l, d, &mut inv);
                linalg::transpose(&inv, d, &mut out[c * d * d..(c + 1) * d * d]);
            }
            Ok(out)
        }
        CovarianceType::Diag | CovarianceType::Spherical => {
            let per = if cov_type == CovarianceType::Diag { d } else { 1 };
            let spherical_floor = floor.map_or(0.0, |f| f.iter().sum::<f64>() / d as f64);
            let mut out = alloc::with_capacity(cov.len())?;
            for (i, &v) in cov.iter().enumerate() {
                let min = match (cov_type, floor) {
                    (CovarianceType::Diag, Some(f)) => f[i % d],
                    _ => spherical_floor,
                };
                if !(v > min) || !v.is_finite() {
                    return Err(singular(i / per));
                }
                out.push(1.0 / v.sqrt());
            }
            Ok(out)
        }
    }
}

/// The error a fit reports when a component's covariance is not positive definite.
pub fn singular_covariance_error(component: usize, reg_covar: f64) -> Error {
    Error::numerical(format!("Fitting failed at component {}: {} (regCovar is {})", component, SINGULAR_HINT, crate::error::display(reg_covar)))
}

impl Gmm {
    /// Builds a model from its parameters, validating every value (see
    /// check.rs: weights a distribution, covariances positive definite and
    /// resolvable at the means' magnitude, precisions finite). The covariances
    /// are derived from the precision factors when not given.
    pub fn from_parts(
        cov_type: CovarianceType,
        k: usize,
        d: usize,
        weights: Vec<f64>,
        means: Vec<f64>,
        precisions_chol: Vec<f64>,
        covariances: Option<Vec<f64>>,
    ) -> Result<Gmm> {
        if k < 1 || d < 1 {
            return Err(Error::param(format!("a model needs at least one component and one feature, got k = {}, d = {}", k, d)));
        }
        check_weights(&weights, k)?;
        check_len("means", &means, k * d, &format!("({}, {})", k, d))?;
        if means.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("means must be finite"));
        }
        check_factors(cov_type, k, d, &precisions_chol)?;
        let covariances = match covariances {
            Some(c) => {
                check_covariance_values(cov_type, k, d, &c)?;
                c
            }
            None => covariances_from_precisions_chol(cov_type, k, d, &precisions_chol)?,
        };
        check::check_gaussians(cov_type, k, d, &means, &covariances, &precisions_chol)?;
        Ok(Gmm { cov_type, k, d, weights, means, covariances, precisions_chol })
    }

    /// A model from a saved file: covariances, precision factors, or both. The
    /// covariances are the model (scikit-learn's covariances_; a fit derives
    /// the factors from them); the factors are computed from them as a fit
    /// computes them, so a file a fit saved loads with the very factors it
    /// held. Factors given as well must be the same Gaussians up to rounding
    /// (check::check_factors_match), or the file is refused; given alone, the
    /// covariances are derived from them and the factors computed again.
    pub fn from_saved(
        cov_type: CovarianceType,
        k: usize,
        d: usize,
        weights: Vec<f64>,
        means: Vec<f64>,
        precisions_chol: Option<Vec<f64>>,
        covariances: Option<Vec<f64>>,
    ) -> Result<Gmm> {
        if k < 1 || d < 1 {
            return Err(Error::param(format!("a model needs at least one component and one feature, got k = {}, d = {}", k, d)));
        }
        if let Some(p) = &precisions_chol {
            check_factors(cov_type, k, d, p)?;
        }
        let covariances = match (covariances, &precisions_chol) {
            (Some(c), _) => {
                check_covariance_values(cov_type, k, d, &c)?;
                c
            }
            (None, Some(p)) => covariances_from_precisions_chol(cov_type, k, d, p)?,
            (None, None) => return Err(Error::param("a saved model needs its covariances, its precisionsCholesky, or both")),
        };
        let pc = precisions_cholesky_from_covariances(cov_type, k, d, &covariances, None, |c| {
            Error::param(format!("covariance of component {} is not positive definite", c))
        })?;
        let gmm = Gmm::from_parts(cov_type, k, d, weights, means, pc, Some(covariances))?;
        if let Some(p) = &precisions_chol {
            check::check_factors_match(cov_type, k, d, &gmm.covariances, p)?;
        }
        Ok(gmm)
    }

    /// Builds a model from covariances (as a federated client sends them),
    /// validating every value: a covariance that is not positive definite (or a
    /// variance that is not positive) is an error naming the component.
    pub fn from_covariances(cov_type: CovarianceType, k: usize, d: usize, weights: Vec<f64>, means: Vec<f64>, covariances: Vec<f64>) -> Result<Gmm> {
        if k < 1 || d < 1 {
            return Err(Error::param(format!("a model needs at least one component and one feature, got k = {}, d = {}", k, d)));
        }
        check_len("covariances", &covariances, cov_type.param_len(k, d), &cov_type.shape(k, d))?;
        if covariances.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("covariances must be finite"));
        }
        // symmetry, and the rest, is from_parts' check
        let pc = precisions_cholesky_from_covariances(cov_type, k, d, &covariances, None, |c| {
            Error::param(format!("covariance of component {} is not positive definite", c))
        })?;
        Gmm::from_parts(cov_type, k, d, weights, means, pc, Some(covariances))
    }

    /// Precision matrices P P^T (or P^2 for the vector types), scikit-learn's
    /// precisions_, into `out` (shaped as the covariances).
    pub fn precisions_into(&self, out: &mut [f64]) {
        precisions_from_chol(self.cov_type, self.k, self.d, &self.precisions_chol, out)
    }

    /// A copy, or the allocation error (a model can hold gigabytes).
    pub fn try_clone(&self) -> Result<Gmm> {
        Ok(Gmm {
            cov_type: self.cov_type,
            k: self.k,
            d: self.d,
            weights: alloc::copy(&self.weights)?,
            means: alloc::copy(&self.means)?,
            covariances: alloc::copy(&self.covariances)?,
            precisions_chol: alloc::copy(&self.precisions_chol)?,
        })
    }

    /// log det of each component's precision Cholesky factor (one value per component).
    pub fn log_det_chol(&self) -> Vec<f64> {
        let (k, d) = (self.k, self.d);
        let p = &self.precisions_chol;
        match self.cov_type {
            CovarianceType::Full => (0..k).map(|c| (0..d).map(|j| p[c * d * d + j * d + j].ln()).sum()).collect(),
            CovarianceType::Tied => {
                let v: f64 = (0..d).map(|j| p[j * d + j].ln()).sum();
                vec![v; k]
            }
            CovarianceType::Diag => (0..k).map(|c| p[c * d..(c + 1) * d].iter().map(|v| v.ln()).sum()).collect(),
            CovarianceType::Spherical => p.iter().map(|v| d as f64 * v.ln()).collect(),
        }
    }

    /// Free parameters, for BIC/AIC (scikit-learn's _n_parameters).
    pub fn n_parameters(&self) -> usize {
        let (k, d) = (self.k, self.d);
        let cov = match self.cov_type {
            CovarianceType::Full => k * d * (d + 1) / 2,
            CovarianceType::Diag => k * d,
            CovarianceType::Tied => d * (d + 1) / 2,
            CovarianceType::Spherical => k,
        };
        cov + d * k + k - 1
    }
}

/// Precision factors of the right shape: finite, and for the matrix types
/// triangular with a positive diagonal (a Cholesky factor), else positive.
fn check_factors(cov_type: CovarianceType, k: usize, d: usize, pc: &[f64]) -> Result<()> {
    check_len("precisionsCholesky", pc, cov_type.param_len(k, d), &cov_type.shape(k, d))?;
    if pc.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("precisionsCholesky must be finite"));
    }
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            for c in 0..cov_type.n_matrices(k) {
                let p = &pc[c * d * d..(c + 1) * d * d];
                if linalg::triangle(p, d).is_none() || (0..d).any(|j| !(p[j * d + j] > 0.0)) {
                    return Err(Error::param(format!(
                        "precisionsCholesky matrix {} must be triangular with a positive diagonal (a Cholesky factor)",
                        c
                    )));
                }
            }
        }
        _ => {
            if pc.iter().any(|&v| !(v > 0.0)) {
                return Err(Error::param("precisionsCholesky values must be positive"));
            }
        }
    }
    Ok(())
}

/// Covariances of the right shape, finite.
fn check_covariance_values(cov_type: CovarianceType, k: usize, d: usize, c: &[f64]) -> Result<()> {
    check_len("covariances", c, cov_type.param_len(k, d), &cov_type.shape(k, d))?;
    if c.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("covariances must be finite"));
    }
    Ok(())
}

fn check_len(name: &str, v: &[f64], want: usize, shape: &str) -> Result<()> {
    if v.len() != want {
        return Err(Error::param(format!("{} has {} values; expected shape {} = {} values", name, v.len(), shape, want)));
    }
    Ok(())
}

/// scikit-learn's _check_weights: shape (k,), a probability vector (each >= 0,
/// summing to 1 within 1e-8).
pub fn check_weights(w: &[f64], k: usize) -> Result<()> {
    check_len("weights", w, k, &format!("({},)", k))?;
    distributions::check_probabilities("weights", w)
}

/// Validates user-given precisions (scikit-learn's _check_precisions) and returns
/// their Cholesky factors (lower for the matrix types, square roots otherwise).
pub fn precisions_init_to_chol(cov_type: CovarianceType, k: usize, d: usize, prec: &[f64]) -> Result<Vec<f64>> {
    check_len("precisionsInit", prec, cov_type.param_len(k, d), &cov_type.shape(k, d))?;
    if prec.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("precisionsInit must be finite"));
    }
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            let m = cov_type.n_matrices(k);
            let mut out = alloc::zeros(m * d * d)?;
            for c in 0..m {
                let a = &prec[c * d * d..(c + 1) * d * d];
                let ok = linalg::is_symmetric(a, d) && linalg::cholesky_lower(a, d, &mut out[c * d * d..(c + 1) * d * d]).is_ok();
                if !ok {
                    return Err(Error::param(format!(
                        "precisionsInit matrix {} of '{}' precision should be symmetric, positive-definite; pass inverse covariances",
                        c,
                        cov_type.name()
                    )));
                }
            }
            Ok(out)
        }
        _ => {
            if prec.iter().any(|&v| !(v > 0.0)) {
                return Err(Error::param(format!("'{}' precisionsInit values should be positive", cov_type.name())));
            }
            alloc::collect(prec.iter().map(|v| v.sqrt()))
        }
    }
}

/// P P^T per matrix (or P^2 for the vector types) into `out`.
fn precisions_from_chol(cov_type: CovarianceType, k: usize, d: usize, pc: &[f64], out: &mut [f64]) {
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            for c in 0..cov_type.n_matrices(k) {
                linalg::mul_transpose_self(&pc[c * d * d..(c + 1) * d * d], d, &mut out[c * d * d..(c + 1) * d * d]);
            }
        }
        _ => {
            for (o, v) in out.iter_mut().zip(pc) {
                *o = v * v;
            }
        }
    }
}

/// The covariances a file without them implies: (P P^T)^-1. A triangular
/// factor with a positive diagonal makes P P^T positive definite in exact
/// arithmetic; in f64 it can underflow (a factor of 1e-200) or overflow, and
/// that is an error naming the matrix, not a panic.
fn covariances_from_precisions_chol(cov_type: CovarianceType, k: usize, d: usize, pc: &[f64]) -> Result<Vec<f64>> {
    let mut prec = alloc::zeros(pc.len())?;
    precisions_from_chol(cov_type, k, d, pc, &mut prec);
    let beyond = |c: usize| Error::param(format!("precisionsCholesky matrix {}: the covariance it implies, (P P^T)^-1, is beyond f64", c));
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            // the precisions' buffer is reused for the covariances, a matrix at a time
            let (mut inv, mut scratch) = (alloc::zeros(d * d)?, alloc::zeros(2 * d * d)?);
            for c in 0..cov_type.n_matrices(k) {
                let p = &mut prec[c * d * d..(c + 1) * d * d];
                linalg::invert_spd(p, d, &mut inv, &mut scratch).map_err(|_| beyond(c))?;
                p.copy_from_slice(&inv);
            }
        }
        _ => prec.iter_mut().for_each(|v| *v = 1.0 / *v),
    }
    // values per matrix (d x d), per diagonal component (d) or per spherical one (1)
    let per = cov_type.param_len(1, d);
    let dense = matches!(cov_type, CovarianceType::Full | CovarianceType::Tied);
    // every value finite, every variance positive (an overflowing precision inverts to 0)
    let is_variance = |i: usize| !dense || (i % per) % (d + 1) == 0;
    if let Some(i) = (0..prec.len()).find(|&i| !prec[i].is_finite() || (is_variance(i) && !(prec[i] > 0.0))) {
        return Err(beyond(i / per));
    }
    Ok(prec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_roundtrip_every_type() {
        let (k, d) = (2, 3);
        let full = vec![2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0];
        for (t, cov) in [
            (CovarianceType::Full, full.clone()),
            (CovarianceType::Tied, full[..9].to_vec()),
            (CovarianceType::Diag, vec![1.0, 2.0, 3.0, 0.5, 0.25, 4.0]),
            (CovarianceType::Spherical, vec![2.0, 0.5]),
        ] {
            let pc = precisions_cholesky_from_covariances(t, k, d, &cov, None, |c| panic!("component {}", c)).unwrap();
            let g = Gmm::from_parts(t, k, d, vec![0.4, 0.6], vec![0.0; 6], pc, None).unwrap();
            for (a, b) in g.covariances.iter().zip(&cov) {
                assert!((a - b).abs() < 1e-13, "{:?}: {} vs {}", t, a, b);
            }
        }
    }

    #[test]
    fn rejects_bad_parts() {
        let t = CovarianceType::Diag;
        assert!(Gmm::from_parts(t, 1, 1, vec![0.5], vec![0.0], vec![1.0], None).is_err());
        assert!(Gmm::from_parts(t, 1, 1, vec![1.0], vec![f64::NAN], vec![1.0], None).is_err());
        assert!(Gmm::from_parts(t, 1, 1, vec![1.0], vec![0.0], vec![-1.0], None).is_err());
        assert!(Gmm::from_parts(t, 1, 2, vec![1.0], vec![0.0], vec![1.0, 1.0], None).is_err());
        assert!(Gmm::from_parts(CovarianceType::Full, 1, 2, vec![1.0], vec![0.0, 0.0], vec![1.0, 1.0, 1.0, 1.0], None).is_err());
        assert!(precisions_init_to_chol(CovarianceType::Full, 1, 2, &[1.0, 2.0, 2.0, 1.0]).is_err());
        assert!(precisions_init_to_chol(CovarianceType::Full, 1, 2, &[1.0, 0.5, 0.0, 1.0]).is_err());
        assert!(precisions_init_to_chol(CovarianceType::Spherical, 1, 2, &[0.0]).is_err());
    }
}
