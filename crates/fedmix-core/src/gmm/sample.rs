//! Drawing rows from a mixture, grouped by component as scikit-learn's sample().

use super::{CovarianceType, Gmm};
use crate::alloc;
use crate::distributions::Multinomial;
use crate::error::{Error, Result};
use crate::linalg;
use crate::rng::Rng;

/// Fills `out` (n x d, column-major) and `labels` (n) with draws from `gmm`.
/// Counts per component are one multinomial draw; rows of component 0 come first.
pub fn sample(gmm: &Gmm, n: usize, rng: &mut Rng, out: &mut [f64], labels: &mut [u32]) -> Result<()> {
    let (k, d) = (gmm.k, gmm.d);
    assert!(out.len() == n * d && labels.len() == n);
    let mut counts = vec![0u64; k];
    Multinomial::new(n as u64, &gmm.weights)?.sample_into(rng, &mut counts);
    // x = mu + A z with A A^T = Sigma: Cholesky factor, or standard deviations
    let dense = matches!(gmm.cov_type, CovarianceType::Full | CovarianceType::Tied);
    // one component's factor at a time (d x d when dense, else d)
    let mut a = if dense { alloc::zeros(d * d)? } else { vec![0.0; d] };
    let mut z = vec![0.0; d];
    let mut row = 0;
    for c in 0..k {
        match gmm.cov_type {
            CovarianceType::Full | CovarianceType::Tied => {
                let off = if gmm.cov_type == CovarianceType::Full { c * d * d } else { 0 };
                // Gmm::from_parts checked it; an error rather than a trap if a model ever arrives another way
                linalg::cholesky_lower(&gmm.covariances[off..off + d * d], d, &mut a)
                    .map_err(|_| Error::numerical(format!("the covariance of component {} is not positive definite; it cannot be sampled", c)))?;
            }
            CovarianceType::Diag => a.iter_mut().zip(&gmm.covariances[c * d..(c + 1) * d]).for_each(|(s, v)| *s = v.sqrt()),
            CovarianceType::Spherical => a.iter_mut().for_each(|s| *s = gmm.covariances[c].sqrt()),
        }
        for _ in 0..counts[c] {
            for v in z.iter_mut() {
                *v = rng.normal();
            }
            for j in 0..d {
                let s = if dense { (0..=j).map(|l| a[j * d + l] * z[l]).sum::<f64>() } else { a[j] * z[j] };
                out[j * n + row] = gmm.means[c * d + j] + s;
            }
            labels[row] = c as u32;
            row += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::precisions_cholesky_from_covariances;

    #[test]
    fn sample_moments_match_parameters() {
        let (k, d) = (2, 2);
        let cov = vec![1.0, 0.6, 0.6, 2.0, 0.5, -0.2, -0.2, 0.3];
        let pc = precisions_cholesky_from_covariances(CovarianceType::Full, k, d, &cov, None, |c| panic!("component {}", c)).unwrap();
        let g = Gmm::from_parts(CovarianceType::Full, k, d, vec![0.25, 0.75], vec![-3.0, 1.0, 4.0, 2.0], pc, Some(cov.clone())).unwrap();
        let n = 40_000;
        let mut out = vec![0.0; n * d];
        let mut labels = vec![0u32; n];
        sample(&g, n, &mut Rng::new(12), &mut out, &mut labels).unwrap();
        let n0 = labels.iter().filter(|&&l| l == 0).count();
        assert!((n0 as f64 / n as f64 - 0.25).abs() < 0.01);
        assert!(labels.windows(2).all(|w| w[0] <= w[1]));
        let rows: Vec<usize> = (n0..n).collect();
        let m = |j: usize| rows.iter().map(|&i| out[j * n + i]).sum::<f64>() / rows.len() as f64;
        let (m0, m1) = (m(0), m(1));
        assert!((m0 - 4.0).abs() < 0.02 && (m1 - 2.0).abs() < 0.02);
        let c01 = rows.iter().map(|&i| (out[i] - m0) * (out[n + i] - m1)).sum::<f64>() / rows.len() as f64;
        assert!((c01 + 0.2).abs() < 0.02, "{}", c01);
    }
}
