//! Principal component analysis with scikit-learn 1.2's results for
//! `PCA(n_components=k, svd_solver='full')`: the eigenvectors of the sample
//! covariance (ddof 1) of the centered training data, by descending
//! eigenvalue, with scikit-learn's sign convention. scikit-learn takes the SVD
//! of the centered data; the eigenvectors of its covariance are the same
//! directions and its eigenvalues are S^2 / (n - 1).
//!
//! Accuracy: eigenvalues are exact to about eps * (largest eigenvalue), so the
//! k-th explained variance is relative to about eps * lambda_1 / lambda_k
//! (fine for the leading components PCA keeps; the SVD would give
//! eps * sqrt(lambda_1 / lambda_k)).

use crate::alloc;
use crate::data::Data;
use crate::error::{Error, Result};
use crate::kernels;
use crate::linalg;

/// Rows per tile of the covariance accumulation (as the E-step's blocks).
const BLOCK: usize = 256;

#[derive(Clone, Debug)]
pub struct Pca {
    pub d: usize,
    pub k: usize,
    /// per-feature mean of the training data (d)
    pub mean: Vec<f64>,
    /// k x d row-major: component r is row r (scikit-learn's components_)
    pub components: Vec<f64>,
    /// k eigenvalues of the covariance, descending (explained_variance_)
    pub explained_variance: Vec<f64>,
    /// each as a fraction of the total variance (explained_variance_ratio_)
    pub explained_variance_ratio: Vec<f64>,
    /// mean of the min(n, d) - k eigenvalues left out (noise_variance_; 0 if none)
    pub noise_variance: f64,
}

/// Fits k components to the rows of `x` (n >= 2, finite, 1 <= k <= min(n, d)).
pub fn fit(x: &Data, k: usize) -> Result<Pca> {
    x.require_finite("X")?;
    let (n, d) = (x.n, x.d);
    if n < 2 {
        return Err(Error::data(format!("PCA needs at least 2 rows to estimate a variance, got {}", n)));
    }
    let rank_bound = n.min(d);
    if k < 1 || k > rank_bound {
        return Err(Error::param(format!(
            "nComponents = {} must be between 1 and min(rows, features) = min({}, {}) = {}; lower nComponents",
            k, n, d, rank_bound
        )));
    }
    let mean = x.column_means();
    let cov = covariance(x, &mean)?;
    // total variance = trace of the covariance = sum of all eigenvalues
    let total: f64 = (0..d).map(|j| cov[j * d + j]).sum();
    let (values, mut components) = linalg::symmetric_eigen(&cov, d)?;
    drop(cov);
    // rounding can leave a zero eigenvalue slightly negative; a variance is not
    let values: Vec<f64> = values.iter().map(|&v| v.max(0.0)).collect();
    // the first k eigenvectors, in place
    components.truncate(k * d);
    flip_signs(x, &mean, &mut components, k)?;
    let ratio = |v: f64| if total > 0.0 { v / total } else { 0.0 };
    // scikit-learn's noise variance averages the min(n, d) singular-value
    // eigenvalues past k; beyond rank n - 1 they are zero in exact arithmetic
    let rest = &values[k..rank_bound];
    let noise_variance = if rest.is_empty() { 0.0 } else { rest.iter().sum::<f64>() / rest.len() as f64 };
    Ok(Pca {
        d,
        k,
        mean,
        explained_variance: values[..k].to_vec(),
        explained_variance_ratio: values[..k].iter().map(|&v| ratio(v)).collect(),
        components,
        noise_variance,
    })
}

/// Upper-triangle-accumulated, then mirrored, sample covariance (ddof 1) of the
/// centered data, d x d row-major. One pass in tiles of BLOCK rows, the
/// products in the same SIMD kernel (and scalar twin) as the GMM statistics.
fn covariance(x: &Data, mean: &[f64]) -> Result<Vec<f64>> {
    let (n, d) = (x.n, x.d);
    let mut cov = alloc::zeros(alloc::cells(d, d, 8)?)?;
    let mut tile = alloc::zeros(d * BLOCK)?;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        for j in 0..d {
            let col = &x.col(j)[i0..i0 + len];
            for (t, &v) in tile[j * len..(j + 1) * len].iter_mut().zip(col) {
                *t = v - mean[j];
            }
        }
        kernels::scatter_tile(&tile, &tile, d, len, &mut cov);
        i0 += len;
    }
    let denom = (n - 1) as f64;
    for j in 0..d {
        for l in j..d {
            let v = cov[j * d + l] / denom;
            cov[j * d + l] = v;
            cov[l * d + j] = v;
        }
    }
    Ok(cov)
}

/// scikit-learn's svd_flip(U, Vt) with u_based_decision=True: in each column of
/// U (the training rows' scores on a component, up to a positive factor) the
/// entry of largest magnitude, the first on ties, is made positive.
fn flip_signs(x: &Data, mean: &[f64], components: &mut [f64], k: usize) -> Result<()> {
    let (n, d) = (x.n, x.d);
    let mut scores = alloc::zeros(n)?;
    for r in 0..k {
        project(x, mean, &components[r * d..(r + 1) * d], &mut scores);
        let mut best = 0;
        for i in 1..n {
            if scores[i].abs() > scores[best].abs() {
                best = i;
            }
        }
        if scores[best] < 0.0 {
            for v in components[r * d..(r + 1) * d].iter_mut() {
                *v = -*v;
            }
        }
    }
    Ok(())
}

/// out[i] = sum_j (x[i, j] - mean[j]) * w[j], accumulated feature by feature
/// so that each row's sum has the same order in the SIMD and scalar builds.
fn project(x: &Data, mean: &[f64], w: &[f64], out: &mut [f64]) {
    for o in out.iter_mut() {
        *o = 0.0;
    }
    for j in 0..x.d {
        let (m, wj) = (mean[j], w[j]);
        for (o, &v) in out.iter_mut().zip(x.col(j)) {
            *o += (v - m) * wj;
        }
    }
}

/// (X - mean) @ components^T into `out`: n x k, column-major (component r's
/// scores at out[r * n ..]). `components` is k x d row-major.
pub fn transform(x: &Data, mean: &[f64], components: &[f64], k: usize, out: &mut [f64]) -> Result<()> {
    let (n, d) = (x.n, x.d);
    if mean.len() != d || components.len() != k * d {
        return Err(Error::data(format!(
            "X has {} features but the PCA was fitted with {}; pass data with {} columns",
            d,
            mean.len(),
            mean.len()
        )));
    }
    x.require_finite("X")?;
    assert!(out.len() >= n * k);
    for r in 0..k {
        project(x, mean, &components[r * d..(r + 1) * d], &mut out[r * n..(r + 1) * n]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::Rng;

    /// n rows of d correlated features: x = z A + offset, column-major.
    fn correlated(n: usize, d: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        let a: Vec<f64> = (0..d * d).map(|_| rng.normal()).collect();
        let z: Vec<f64> = (0..n * d).map(|_| rng.normal()).collect();
        let mut x = vec![0.0; n * d];
        for i in 0..n {
            for j in 0..d {
                let s: f64 = (0..d).map(|m| z[i * d + m] * a[m * d + j]).sum();
                x[j * n + i] = s + 10.0 * j as f64;
            }
        }
        x
    }

    #[test]
    fn components_diagonalize_the_covariance() {
        let (n, d, k) = (500, 6, 4);
        let v = correlated(n, d, 1);
        let x = Data::new(&v, n, d).unwrap();
        let p = fit(&x, k).unwrap();
        // the projections are uncorrelated, with the explained variances as variances
        let mut t = vec![0.0; n * k];
        transform(&x, &p.mean, &p.components, k, &mut t).unwrap();
        for r in 0..k {
            for q in 0..k {
                let c: f64 = (0..n).map(|i| t[r * n + i] * t[q * n + i]).sum::<f64>() / (n - 1) as f64;
                let want = if r == q { p.explained_variance[r] } else { 0.0 };
                assert!((c - want).abs() < 1e-10 * p.explained_variance[0], "{} {} {} {}", r, q, c, want);
            }
            assert!(r == 0 || p.explained_variance[r] <= p.explained_variance[r - 1]);
            // the sign convention: the largest score in magnitude is positive
            let col = &t[r * n..(r + 1) * n];
            let big = col.iter().fold(0.0f64, |m, &s| if s.abs() > m.abs() { s } else { m });
            assert!(big > 0.0);
        }
        // all components: the ratios sum to 1 and nothing is left for noise
        let all = fit(&x, d).unwrap();
        assert!((all.explained_variance_ratio.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        assert_eq!(all.noise_variance, 0.0);
        let rest: f64 = all.explained_variance[k..].iter().sum::<f64>() / (d - k) as f64;
        assert!((p.noise_variance - rest).abs() < 1e-12 * rest);
    }

    #[test]
    fn fewer_rows_than_features() {
        // rank n - 1 = 4: the fifth eigenvalue is zero (clamped, not negative)
        let (n, d) = (5, 8);
        let v = correlated(n, d, 2);
        let x = Data::new(&v, n, d).unwrap();
        let p = fit(&x, 5).unwrap();
        assert!(p.explained_variance[4] >= 0.0 && p.explained_variance[4] < 1e-12 * p.explained_variance[0]);
        assert!(p.noise_variance == 0.0);
    }

    #[test]
    fn bad_input() {
        let v = correlated(10, 3, 3);
        let x = Data::new(&v, 10, 3).unwrap();
        let e = fit(&x, 4).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidParameter);
        assert!(e.message.contains("min(10, 3) = 3"), "{}", e.message);
        assert_eq!(fit(&x, 0).unwrap_err().kind, ErrorKind::InvalidParameter);
        let one = Data::new(&v[..3], 1, 3).unwrap();
        assert!(fit(&one, 1).unwrap_err().message.contains("at least 2 rows"));
        let mut w = v.clone();
        w[12] = f64::NAN;
        assert!(fit(&Data::new(&w, 10, 3).unwrap(), 1).unwrap_err().message.contains("row 2, column 1"));
        let p = fit(&x, 2).unwrap();
        let narrow = Data::new(&v[..20], 10, 2).unwrap();
        let e = transform(&narrow, &p.mean, &p.components, 2, &mut [0.0; 20]).unwrap_err();
        assert!(e.message.contains("2 features but the PCA was fitted with 3"), "{}", e.message);
        // constant data: zero variance everywhere, ratios 0 rather than NaN
        let c = [1.0; 12];
        let p = fit(&Data::new(&c, 4, 3).unwrap(), 2).unwrap();
        assert_eq!(p.explained_variance, vec![0.0, 0.0]);
        assert_eq!(p.explained_variance_ratio, vec![0.0, 0.0]);
    }
}
