//! The Dirichlet-multinomial distribution of a count vector c (n = sum c) given
//! Dirichlet parameters alpha (equation 1 of Scott & Cahill, "Improved Modelling
//! of Federated Datasets using Mixtures-of-Dirichlet-Multinomials"):
//!
//!   p(c | n, alpha) = Gamma(a0) Gamma(n+1) / Gamma(n+a0) * prod_j Gamma(c_j+alpha_j) / (Gamma(alpha_j) Gamma(c_j+1))
//!
//! in logs as  -lrf(a0, n) + sum_j lrf(alpha_j, c_j) [+ ln n! - sum_j ln c_j!],
//! with lrf(x, m) = ln Gamma(x+m) - ln Gamma(x) the log rising factorial, which
//! stays accurate where the four-lgamma form cancels (large alpha, small counts).
//! Zero counts contribute nothing, so sparse histograms cost what they hold.

use crate::error::{show, Error, Result};
use crate::special::{lgamma, ln_rising_factorial};

/// Checks that every count is a non-negative integer.
pub fn validate_counts(counts: &[f64], m: usize, c: usize) -> Result<()> {
    if counts.len() != m * c {
        return Err(Error::data(format!("counts have {} values; expected {} rows x {} categories", counts.len(), m, c)));
    }
    for (idx, &v) in counts.iter().enumerate() {
        if !(v >= 0.0) || !v.is_finite() || v != v.floor() {
            return Err(Error::data(format!(
                "count at row {}, category {} is {}; counts must be non-negative integers",
                idx / c,
                idx % c,
                show(v)
            )));
        }
    }
    Ok(())
}

/// Checks that every Dirichlet parameter is a normal positive number and that
/// each row's sum alpha_0 is finite. Subnormal parameters (below
/// f64::MIN_POSITIVE) are refused rather than handled: psi(alpha) ~ -1/alpha
/// overflows there, so no statistic of such a model is finite anyway; and an
/// infinite alpha_0 (e.g. two entries of 1e308) makes every log-pmf NaN.
pub fn validate_alphas(alphas: &[f64], k: usize, c: usize) -> Result<()> {
    if alphas.len() != k * c {
        return Err(Error::param(format!("alphas have {} values; expected {} rows x {} categories", alphas.len(), k, c)));
    }
    for (idx, &v) in alphas.iter().enumerate() {
        if !(v > 0.0) || !v.is_finite() {
            return Err(Error::param(format!(
                "Dirichlet parameter at row {}, category {} is {}; it must be positive and finite",
                idx / c,
                idx % c,
                show(v)
            )));
        }
        if v < f64::MIN_POSITIVE {
            return Err(Error::param(format!(
                "Dirichlet parameter at row {}, category {} is {}, a subnormal number; it must be at least {} (f64::MIN_POSITIVE)",
                idx / c,
                idx % c,
                show(v),
                show(f64::MIN_POSITIVE)
            )));
        }
    }
    for (r, row) in alphas.chunks(c.max(1)).enumerate() {
        let a0: f64 = row.iter().sum();
        if !a0.is_finite() {
            return Err(Error::param(format!(
                "the Dirichlet parameters of row {} sum to {}; their sum alpha_0 must be finite (lower the largest ones)",
                r,
                show(a0)
            )));
        }
    }
    Ok(())
}

/// ln(n! / prod_j c_j!) of one count vector.
pub fn ln_multinomial_coefficient(counts: &[f64]) -> f64 {
    let n: f64 = counts.iter().sum();
    counts.iter().fold(lgamma(n + 1.0), |acc, &cj| if cj > 1.0 { acc - lgamma(cj + 1.0) } else { acc })
}

/// Log-pmf of every count vector (row of `counts`, m x c, row-major) under every
/// parameter vector (row of `alphas`, k x c) into `out` (m x k, row-major), with or
/// without the multinomial coefficient.
pub fn log_pmf(counts: &[f64], m: usize, c: usize, alphas: &[f64], k: usize, with_coefficient: bool, out: &mut [f64]) -> Result<()> {
    if c == 0 {
        return Err(Error::data("count vectors need at least one category"));
    }
    validate_counts(counts, m, c)?;
    validate_alphas(alphas, k, c)?;
    if out.len() != m * k {
        return Err(Error::param(format!("output has {} values; expected {} x {}", out.len(), m, k)));
    }
    let a0 = crate::alloc::collect((0..k).map(|q| alphas[q * c..(q + 1) * c].iter().sum::<f64>()))?;
    for i in 0..m {
        let row = &counts[i * c..(i + 1) * c];
        let n: f64 = row.iter().sum();
        let coefficient = if with_coefficient { ln_multinomial_coefficient(row) } else { 0.0 };
        for q in 0..k {
            out[i * k + q] = log_pmf_row(row, n, &alphas[q * c..(q + 1) * c], a0[q]) + coefficient;
        }
    }
    Ok(())
}

/// ln p(c | n, alpha) without the multinomial coefficient for one count vector
/// `row` (already checked: non-negative integers summing to n) under one
/// parameter vector `alpha` (positive, summing to a0): the kernel `log_pmf` and
/// the mixture's E-step (mdm) share.
#[inline]
pub fn log_pmf_row(row: &[f64], n: f64, alpha: &[f64], a0: f64) -> f64 {
    let mut s = -ln_rising_factorial(a0, n);
    for (&cj, &aj) in row.iter().zip(alpha) {
        if cj > 0.0 {
            s += ln_rising_factorial(aj, cj);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four-lgamma form of equation (1), directly.
    fn direct(c: &[f64], a: &[f64]) -> f64 {
        let n: f64 = c.iter().sum();
        let a0: f64 = a.iter().sum();
        let mut v = lgamma(a0) + lgamma(n + 1.0) - lgamma(n + a0);
        for (&cj, &aj) in c.iter().zip(a) {
            v += lgamma(cj + aj) - lgamma(aj) - lgamma(cj + 1.0);
        }
        v
    }

    #[test]
    fn matches_the_direct_formula_and_sums_to_one() {
        let alphas = [0.5, 1.5, 2.0, 0.05, 0.05, 0.05];
        // every histogram with n = 4 over 3 categories: probabilities sum to 1
        let mut hist = Vec::new();
        for a in 0..=4 {
            for b in 0..=(4 - a) {
                hist.extend_from_slice(&[a as f64, b as f64, (4 - a - b) as f64]);
            }
        }
        let m = hist.len() / 3;
        let mut out = vec![0.0; m * 2];
        log_pmf(&hist, m, 3, &alphas, 2, true, &mut out).unwrap();
        for q in 0..2 {
            let total: f64 = (0..m).map(|i| out[i * 2 + q].exp()).sum();
            assert!((total - 1.0).abs() < 1e-13, "component {}: {}", q, total);
            for i in 0..m {
                let d = direct(&hist[i * 3..i * 3 + 3], &alphas[q * 3..q * 3 + 3]);
                assert!((out[i * 2 + q] - d).abs() < 1e-12 * d.abs().max(1.0));
            }
        }
        let mut bare = vec![0.0; m * 2];
        log_pmf(&hist, m, 3, &alphas, 2, false, &mut bare).unwrap();
        for i in 0..m {
            let coef = ln_multinomial_coefficient(&hist[i * 3..i * 3 + 3]);
            assert!((out[i * 2] - bare[i * 2] - coef).abs() < 1e-12);
        }
    }

    #[test]
    fn rejects_bad_counts_and_parameters() {
        let mut out = [0.0];
        assert!(log_pmf(&[1.0, -1.0], 1, 2, &[1.0, 1.0], 1, true, &mut out).unwrap_err().message.contains("non-negative integers"));
        assert!(log_pmf(&[1.5, 1.0], 1, 2, &[1.0, 1.0], 1, true, &mut out).is_err());
        assert!(log_pmf(&[1.0, f64::NAN], 1, 2, &[1.0, 1.0], 1, true, &mut out).is_err());
        assert!(log_pmf(&[1.0, 1.0], 1, 2, &[0.0, 1.0], 1, true, &mut out).unwrap_err().message.contains("positive"));
        assert!(log_pmf(&[1.0, 1.0], 1, 2, &[1.0], 1, true, &mut out).is_err());
        // a finite alpha whose row sum is not, and a subnormal alpha
        assert!(log_pmf(&[1.0, 0.0], 1, 2, &[1e308, 1e308], 1, true, &mut out).unwrap_err().message.contains("row 0 sum to Infinity"));
        assert!(log_pmf(&[1.0, 1.0], 1, 2, &[5e-324, 1.0], 1, true, &mut out).unwrap_err().message.contains("subnormal"));
        assert!(log_pmf(&[1.0, 1.0], 1, 2, &[f64::MIN_POSITIVE, 1.0], 1, true, &mut out).is_ok());
    }
}
