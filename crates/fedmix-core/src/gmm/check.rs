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
//! - Precision factors and covariances, when both are given, consistent:
//!   P^T S P = I up to the rounding of computing it (see `check_factor`).
//!   scikit-learn derives precisions_cholesky_ from covariances_ and keeps
//!   both; a file that edits one and not the other describes two models, and
//!   is refused. Given one, the other is derived (the covariances from the
//!   factors here, the factors from the covariances as a fit does).

use super::CovarianceType;
use crate::alloc;
use crate::data::variance_floor_from_abs_max;
use crate::error::{show, Error, Result};
use crate::linalg;

/// Ulps per term of the tolerance on P^T S P - I (see `check_factor`).
const RESIDUAL_ULPS: f64 = 16.0;

/// The variance that counts as zero for each feature: the fit's floor of the
/// means' largest magnitude. Infinite when a mean is too large for any variance.
pub fn means_variance_floor(k: usize, d: usize, means: &[f64]) -> Vec<f64> {
    let abs_max: Vec<f64> = (0..d).map(|j| (0..k).fold(0.0f64, |a, c| a.max(means[c * d + j].abs()))).collect();
    variance_floor_from_abs_max(&abs_max)
}

/// Checks covariances `cov` and precision factors `pc` (both finite, shaped by
/// `cov_type`) against the means and, when `both_given` (not one derived from
/// the other), against each other, as the module says.
pub fn check_gaussians(cov_type: CovarianceType, k: usize, d: usize, means: &[f64], cov: &[f64], pc: &[f64], both_given: bool) -> Result<()> {
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
                    return Err(not_positive_definite(cov_type, c, j, s[j * d + j], floor[j], &means[..]));
                }
                if both_given {
                    check_factor(cov_type, c, &l, p, d)?;
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
                // p^2 v = 1: one product and one rounding each way
                let r = p * p * v - 1.0;
                if both_given && !(r.abs() <= RESIDUAL_ULPS * 2.0 * f64::EPSILON) {
                    return Err(disagree(cov_type, c, r));
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

/// Whether the triangular factor `p` factors the inverse of S = L L^T, up to
/// the rounding of computing it.
///
/// Upper, as a fit computes it (the transpose of L^-1, by substitution): then
/// L P^T = I, and substitution guarantees the residual |L X - I| <= gamma_d
/// |L| |X| for X = P^T (Higham, Accuracy and Stability, thm 8.5), with as
/// much again for forming the product here. The check allows RESIDUAL_ULPS
/// (d + 2) eps times |L| |P^T|, entry by entry: 16 times that bound for any
/// conditioning (L is the fit's own factor: the same Cholesky of the same S),
/// while for a well-conditioned matrix an edit of P or S beyond 1e-12 or so
/// does not pass.
///
/// Lower, as from initial precisions (scikit-learn's precisions_init, and its
/// covariances derived here): G = L^T P is orthogonal, and G^T G = P^T S P
/// must be the identity, with the same tolerance on (|L^T| |P|)^T (|L^T| |P|).
fn check_factor(cov_type: CovarianceType, c: usize, l: &[f64], p: &[f64], d: usize) -> Result<()> {
    let tol = RESIDUAL_ULPS * (d as f64 + 2.0) * f64::EPSILON;
    if linalg::triangle(p, d) == Some(true) {
        for i in 0..d {
            for j in 0..d {
                let (mut s, mut a) = (0.0, 0.0);
                // L is lower (m <= i), P^T is lower (P_jm non-zero for m >= j)
                for m in j..=i {
                    let t = l[i * d + m] * p[j * d + m];
                    s += t;
                    a += t.abs();
                }
                let r = s - if i == j { 1.0 } else { 0.0 };
                if !(r.abs() <= tol * a) {
                    return Err(disagree(cov_type, c, r));
                }
            }
        }
        return Ok(());
    }
    let (mut g, mut h) = (alloc::zeros(d * d)?, alloc::zeros(d * d)?);
    for i in 0..d {
        for j in 0..d {
            let (mut s, mut a) = (0.0, 0.0);
            // L^T is upper: (L^T)_im = L_mi, non-zero for m >= i
            for m in i..d {
                let t = l[m * d + i] * p[m * d + j];
                s += t;
                a += t.abs();
            }
            g[i * d + j] = s;
            h[i * d + j] = a;
        }
    }
    for i in 0..d {
        for j in 0..=i {
            let (mut s, mut a) = (0.0, 0.0);
            for m in 0..d {
                s += g[m * d + i] * g[m * d + j];
                a += h[m * d + i] * h[m * d + j];
            }
            let r = s - if i == j { 1.0 } else { 0.0 };
            if !(r.abs() <= tol * a) {
                return Err(disagree(cov_type, c, r));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::{precisions_cholesky_from_covariances, Gmm};

    fn full_model(cov: &[f64], means: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let pc = precisions_cholesky_from_covariances(CovarianceType::Full, 1, 2, cov, None, |c| panic!("{}", c)).unwrap();
        (pc, means.to_vec())
    }

    #[test]
    fn honest_parameters_pass_every_type() {
        let full = [2.0, 0.3, 0.3, 1.0];
        let (pc, means) = full_model(&full, &[1.0, -2.0]);
        check_gaussians(CovarianceType::Full, 1, 2, &means, &full, &pc, true).unwrap();
        // a lower factor of the same precision (initial precisions) passes too
        let mut prec = vec![0.0; 4];
        linalg::mul_transpose_self(&pc, 2, &mut prec);
        let mut lower = vec![0.0; 4];
        linalg::cholesky_lower(&prec, 2, &mut lower).unwrap();
        check_gaussians(CovarianceType::Full, 1, 2, &means, &full, &lower, true).unwrap();
        let v = [0.5, 4.0];
        let pv: Vec<f64> = v.iter().map(|x: &f64| 1.0 / x.sqrt()).collect();
        check_gaussians(CovarianceType::Diag, 1, 2, &means, &v, &pv, true).unwrap();
    }

    #[test]
    fn a_near_singular_covariance_passes() {
        // correlation 1 - 1e-12: condition number about 4e12
        let r = 1.0 - 1e-12;
        let s = [1.0, r, r, 1.0];
        let (pc, means) = full_model(&s, &[0.5, 0.5]);
        check_gaussians(CovarianceType::Full, 1, 2, &means, &s, &pc, true).unwrap();
    }

    #[test]
    fn refuses_disagreeing_factors_and_collapsed_or_huge_components() {
        let s = [2.0, 0.3, 0.3, 1.0];
        let (mut pc, means) = full_model(&s, &[1.0, -2.0]);
        pc[0] *= 1.0 + 1e-9;
        let e = check_gaussians(CovarianceType::Full, 1, 2, &means, &s, &pc, true).unwrap_err();
        assert!(e.message.contains("disagree"), "{}", e.message);
        let (pc, _) = full_model(&s, &[0.0, 0.0]);
        let e = check_gaussians(CovarianceType::Full, 1, 2, &[1e200, 0.0], &s, &pc, true).unwrap_err();
        assert!(e.message.contains("too large") || e.message.contains("resolution"), "{}", e.message);
        let e = check_gaussians(CovarianceType::Diag, 1, 1, &[0.0], &[1e-310], &[1e155], true).unwrap_err();
        assert!(e.message.contains("overflows"), "{}", e.message);
        let e = check_gaussians(CovarianceType::Full, 1, 2, &means, &[0.0; 4], &pc, true).unwrap_err();
        assert!(e.message.contains("not positive definite"), "{}", e.message);
        // a file without covariances gets them from its factors, then the same checks
        assert!(Gmm::from_parts(CovarianceType::Diag, 1, 1, vec![1.0], vec![0.0], vec![1e-200], None).is_err());
    }
}
