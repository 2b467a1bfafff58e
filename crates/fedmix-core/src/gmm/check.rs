//! What a Gaussian mixture's parameters must satisfy before the core computes
//! with them, whatever brought them (a saved file, a federated client's
//! message, initial precisions): checked once, in Gmm::from_parts, so that
//! every later E-step, sample and read-out stays finite and nothing traps.
//!
//! - Covariances symmetric and positive definite, with every Cholesky pivot
//!   (a conditional variance) above the variance floor of the means'
//!   magnitude: the floor a fit applies (Data::variance_floor, 16 ulps of a
//!   feature's largest magnitude), computed from the largest |mean| of each
//!   feature instead of the data's largest value, which bounds the means, so
//!   no fitted model is refused. A spread that f64 cannot resolve around its
//!   mean is a collapsed component.
//! - Magnitudes the core can compute with: the E-step squares standardized
//!   coordinates (x_j - mu_j) / sigma_j. With the floor, a row within the
//!   means' range has |x_j - mu_j| <= 2 A_j (A_j the largest |mu_cj|) and
//!   sigma_j >= 16 eps A_j, so each coordinate is at most 1 / (8 eps) = 5.6e14
//!   and its square at most 3.2e29: d of them (d <= 2^28) stay below 1e38, far
//!   from f64::MAX. A mean of 1e200 needs variances above (16 eps 1e200)^2 =
//!   1.3e372, beyond f64: such a file is refused, naming the component, where
//!   it used to score -Infinity and NaN. For the same reason the precisions
//!   P P^T (scikit-learn's precisions_, and the diagonal E-step's P^2) must be
//!   finite: a precision factor of 1e300 is refused.
//! - A saved file's precision factors, when it gives covariances too, the
//!   same Gaussians up to rounding (`check_factors_match`, Gmm::from_saved).
//!   scikit-learn derives precisions_cholesky_ from covariances_ and keeps
//!   both; a file that edits one and not the other describes two models, and
//!   is refused.

use super::CovarianceType;
use crate::alloc;
use crate::data::variance_floor_from_abs_max;
use crate::error::{show, Error, Result};
use crate::linalg;

/// Ulps per term of the tolerance on P^T S P - I (see `check_factors_match`).
const RESIDUAL_ULPS: f64 = 64.0;

/// The variance that counts as zero for each feature: the fit's floor of the
/// means' largest magnitude. Infinite when a mean is too large for any variance.
pub fn means_variance_floor(k: usize, d: usize, means: &[f64]) -> Vec<f64> {
    let abs_max: Vec<f64> = (0..d).map(|j| (0..k).fold(0.0f64, |a, c| a.max(means[c * d + j].abs()))).collect();
    variance_floor_from_abs_max(&abs_max)
}

/// Checks covariances `cov` and the precision factors the model holds, `pc`
/// (both finite, shaped by `cov_type`), against the means, as the module says.
pub fn check_gaussians(cov_type: CovarianceType, k: usize, d: usize, means: &[f64], cov: &[f64], pc: &[f64]) -> Result<()> {
    let floor = means_variance_floor(k, d, means);
    match cov_type {
        CovarianceType::Full | CovarianceType::Tied => {
            let m = if cov_type == CovarianceType::Full { k } else { 1 };
            let mut l = alloc::zeros(d * d)?;
            for c in 0..m {
                let (s, p) = (&cov[c * d * d..(c + 1) * d * d], &pc[c * d * d..(c + 1) * d * d]);
                check_precision_finite(cov_type, c, p, d)?;
                if !linalg::is_symmetric(s, d) {
                    return Err(Error::param(format!("covariance matrix {} is not symmetric", c)));
                }
                if let Err(j) = linalg::cholesky_lower_floor(s, d, &mut l, Some(&floor)) {
                    return Err(not_positive_definite(cov_type, c, j, s[j * d + j], floor[j], means));
                }
            }
        }
        CovarianceType::Diag | CovarianceType::Spherical => {
            let per = if cov_type == CovarianceType::Diag { d } else { 1 };
            let spherical_floor = floor.iter().sum::<f64>() / d as f64;
            for (i, (&v, &p)) in cov.iter().zip(pc).enumerate() {
                let (c, j) = (i / per, i % per);
                let min = if cov_type == CovarianceType::Diag { floor[j] } else { spherical_floor };
                if !(v > min) {
                    return Err(not_positive_definite(cov_type, c, j, v, min, means));
                }
                if !(p * p).is_finite() {
                    return Err(Error::param(format!(
                        "precisionsCholesky[{}] is {}: its square, the precision, overflows f64 (a variance of {} is below what the core computes with)",
                        i,
                        show(p),
                        show(1.0 / (p * p))
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The error of a covariance whose pivot `j` is `v`, at or below `floor`.
fn not_positive_definite(cov_type: CovarianceType, c: usize, j: usize, v: f64, floor: f64, means: &[f64]) -> Error {
    let what = match cov_type {
        CovarianceType::Tied => "the tied covariance".to_string(),
        CovarianceType::Spherical => format!("the variance of component {}", c),
        _ => format!("the covariance of component {}", c),
    };
    if v > 0.0 && floor.is_finite() {
        let largest = means.iter().fold(0.0f64, |a, m| a.max(m.abs()));
        Error::param(format!(
            "{} is not usable: its variance along feature {} is {}, below {}, the resolution of f64 around means as large as {} (a collapsed component, or means scaled out of range)",
            what,
            j,
            show(v),
            show(floor),
            show(largest)
        ))
    } else if !floor.is_finite() {
        Error::param(format!(
            "the means along feature {} are too large for the core to compute with: no f64 variance can resolve them (largest |mean| {})",
            j,
            show(means.iter().fold(0.0f64, |a, m| a.max(m.abs())))
        ))
    } else {
        Error::param(format!("{} is not positive definite (pivot {} of feature {})", what, show(v), j))
    }
}

fn disagree(cov_type: CovarianceType, c: usize, r: f64) -> Error {
    let what = match cov_type {
        CovarianceType::Tied => "of the tied covariance".to_string(),
        _ => format!("of component {}", c),
    };
    Error::param(format!(
        "precisionsCholesky and covariances disagree {}: P^T S P differs from the identity by {}, beyond rounding; a file that changes one must change (or drop) the other",
        what,
        show(r)
    ))
}

/// P P^T (a row's sum of squares bounds every entry of its row) must be finite.
fn check_precision_finite(cov_type: CovarianceType, c: usize, p: &[f64], d: usize) -> Result<()> {
    for i in 0..d {
        let ss: f64 = p[i * d..(i + 1) * d].iter().map(|v| v * v).sum();
        if !ss.is_finite() {
            let which = if cov_type == CovarianceType::Tied { "".to_string() } else { format!(" {}", c) };
            return Err(Error::param(format!(
                "precisionsCholesky matrix{}: row {} squared sums to {}; the precision P P^T overflows f64",
                which,
                i,
                show(ss)
            )));
        }
    }
    Ok(())
}

/// Whether saved precision factors `pc` (triangular with a positive diagonal,
/// upper as a fit computes them from covariances, or lower as from initial
/// precisions) are the covariances' `cov` (positive definite: checked) up to
/// rounding: with S = L L^T and G = L^T P, P^T S P = G^T G must be the
/// identity. Its difference from the identity is how far apart the two
/// Gaussians are in their own metric (its eigenvalues are those of the
/// relative difference of the covariances), and that is what rounding moves:
/// by at most RESIDUAL_ULPS (d + 2) eps times the magnitude of each sum's
/// terms, (|L^T| |P|)^T (|L^T| |P|), times the largest variance inflation
/// S_jj / L_jj^2 (how much worse than the features' own scales the matrix is
/// conditioned). Measured on 66 fits of satellite.csv, letter.csv and nearly
/// collinear features (inflation up to 4e14): the factors a fit computed use
/// at most 0.04% of that, and covariances derived from the factors (a file
/// that gave only them, or another tool's) at most 33%; an edit of 1e-9 of a
/// well-conditioned matrix's factor is refused. Diagonal and spherical:
/// p^2 v = 1 within RESIDUAL_ULPS eps.
pub fn check_factors_match(cov_type: CovarianceType, k: usize, d: usize, cov: &[f64], pc: &[f64]) -> Result<()> {
    if !matches!(cov_type, CovarianceType::Full | CovarianceType::Tied) {
        for (i, (&v, &p)) in cov.iter().zip(pc).enumerate() {
            let r = p * p * v - 1.0;
            if !(r.abs() <= RESIDUAL_ULPS * f64::EPSILON) {
                return Err(disagree(cov_type, if cov_type == CovarianceType::Diag { i / d } else { i }, r));
            }
        }
        return Ok(());
    }
    let (mut l, mut g, mut h) = (alloc::zeros(d * d)?, alloc::zeros(d * d)?, alloc::zeros(d * d)?);
    for c in 0..cov_type.n_matrices(k) {
        let (s, p) = (&cov[c * d * d..(c + 1) * d * d], &pc[c * d * d..(c + 1) * d * d]);
        if linalg::cholesky_lower(s, d, &mut l).is_err() {
            return Err(Error::param(format!("covariance matrix {} is not positive definite", c)));
        }
        let inflation = (0..d).fold(1.0f64, |a, j| a.max(s[j * d + j] / (l[j * d + j] * l[j * d + j])));
        let tol = RESIDUAL_ULPS * (d as f64 + 2.0) * f64::EPSILON * inflation;
        for i in 0..d {
            for j in 0..d {
                let (mut sum, mut mag) = (0.0, 0.0);
                // L^T is upper: (L^T)_im = L_mi, non-zero for m >= i
                for m in i..d {
                    let t = l[m * d + i] * p[m * d + j];
                    sum += t;
                    mag += t.abs();
                }
                g[i * d + j] = sum;
                h[i * d + j] = mag;
            }
        }
        for i in 0..d {
            for j in 0..=i {
                let (mut sum, mut mag) = (0.0, 0.0);
                for m in 0..d {
                    sum += g[m * d + i] * g[m * d + j];
                    mag += h[m * d + i] * h[m * d + j];
                }
                let r = sum - if i == j { 1.0 } else { 0.0 };
                if !(r.abs() <= tol * mag) {
                    return Err(disagree(cov_type, c, r));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::{precisions_cholesky_from_covariances, Gmm};

    fn factors(cov: &[f64]) -> Vec<f64> {
        precisions_cholesky_from_covariances(CovarianceType::Full, 1, 2, cov, None, |c| panic!("{}", c)).unwrap()
    }

    #[test]
    fn honest_parameters_pass_every_type() {
        let full = [2.0, 0.3, 0.3, 1.0];
        let (pc, means) = (factors(&full), [1.0, -2.0]);
        check_gaussians(CovarianceType::Full, 1, 2, &means, &full, &pc).unwrap();
        check_factors_match(CovarianceType::Full, 1, 2, &full, &pc).unwrap();
        // a lower factor of the same precision (initial precisions) matches too
        let mut prec = vec![0.0; 4];
        linalg::mul_transpose_self(&pc, 2, &mut prec);
        let mut lower = vec![0.0; 4];
        linalg::cholesky_lower(&prec, 2, &mut lower).unwrap();
        check_factors_match(CovarianceType::Full, 1, 2, &full, &lower).unwrap();
        let v = [0.5, 4.0];
        let pv: Vec<f64> = v.iter().map(|x: &f64| 1.0 / x.sqrt()).collect();
        check_gaussians(CovarianceType::Diag, 1, 2, &means, &v, &pv).unwrap();
        check_factors_match(CovarianceType::Diag, 1, 2, &v, &pv).unwrap();
    }

    #[test]
    fn a_near_singular_covariance_passes() {
        // correlation 1 - 1e-12: condition number about 4e12
        let r = 1.0 - 1e-12;
        let s = [1.0, r, r, 1.0];
        let pc = factors(&s);
        check_gaussians(CovarianceType::Full, 1, 2, &[0.5, 0.5], &s, &pc).unwrap();
        check_factors_match(CovarianceType::Full, 1, 2, &s, &pc).unwrap();
        // covariances derived from the factors, and the factors computed again, load back
        let g = Gmm::from_saved(CovarianceType::Full, 1, 2, vec![1.0], vec![0.5, 0.5], Some(pc), None).unwrap();
        Gmm::from_saved(CovarianceType::Full, 1, 2, vec![1.0], vec![0.5, 0.5], Some(g.precisions_chol.clone()), Some(g.covariances.clone())).unwrap();
    }

    #[test]
    fn refuses_disagreeing_factors_and_collapsed_or_huge_components() {
        let s = [2.0, 0.3, 0.3, 1.0];
        let mut pc = factors(&s);
        pc[0] *= 1.0 + 1e-9;
        let e = check_factors_match(CovarianceType::Full, 1, 2, &s, &pc).unwrap_err();
        assert!(e.message.contains("disagree"), "{}", e.message);
        let pc = factors(&s);
        let e = check_gaussians(CovarianceType::Full, 1, 2, &[1e200, 0.0], &s, &pc).unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
        let e = check_gaussians(CovarianceType::Full, 1, 2, &[1e150, 0.0], &s, &pc).unwrap_err();
        assert!(e.message.contains("resolution"), "{}", e.message);
        let e = check_gaussians(CovarianceType::Diag, 1, 1, &[0.0], &[1e-310], &[1e155]).unwrap_err();
        assert!(e.message.contains("overflows"), "{}", e.message);
        let e = check_gaussians(CovarianceType::Full, 1, 2, &[1.0, -2.0], &[0.0; 4], &pc).unwrap_err();
        assert!(e.message.contains("not positive definite"), "{}", e.message);
        // a file of factors alone whose covariances underflow: an error, not a panic
        assert!(Gmm::from_saved(CovarianceType::Full, 1, 2, vec![1.0], vec![0.0, 0.0], Some(vec![1e-200, 0.0, 0.0, 1e-200]), None).is_err());
        assert!(Gmm::from_parts(CovarianceType::Diag, 1, 1, vec![1.0], vec![0.0], vec![1e-200], None).is_err());
        assert!(Gmm::from_saved(CovarianceType::Diag, 1, 1, vec![1.0], vec![0.0], None, None).is_err());
    }
}
