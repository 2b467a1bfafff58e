//! M-step: component sizes, means and covariances from responsibilities
//! (scikit-learn's _estimate_gaussian_parameters), through the sufficient
//! statistics of stats.rs, then the precision factors.

use super::stats::{DataScatter, Estimates, SuffStats, Tiles, TiedInput};
use super::{precisions_cholesky_from_covariances, singular_covariance_error, CovarianceType, Gmm};
use crate::alloc;
use crate::data::Data;
use crate::error::Result;

/// Rows per block when statistics are gathered from a full responsibility matrix.
const BLOCK: usize = 2048;

/// Buffers and per-fit constants reused across iterations.
pub struct Workspace {
    pub tiles: Tiles,
    /// tied only: the data's centered scatter, constant across iterations
    pub data_scatter: Option<DataScatter>,
    /// per-feature variance that counts as zero (Data::variance_floor)
    pub floor: Vec<f64>,
}

impl Workspace {
    pub fn new(x: &Data, cov_type: CovarianceType) -> Result<Self> {
        let mut tiles = Tiles::new(x.d)?;
        let data_scatter = if cov_type == CovarianceType::Tied { Some(DataScatter::new(x, &mut tiles)?) } else { None };
        Ok(Workspace { tiles, data_scatter, floor: x.variance_floor() })
    }
}

fn gather(x: &Data, resp: &[f64], stats: &mut SuffStats, tiles: &mut Tiles) {
    let n = x.n;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        stats.add_block(x, i0, len, &resp[i0..], n, tiles);
        i0 += len;
    }
}

impl Workspace {
    /// The tied-covariance input for responsibilities whose rows do (or do not) sum to one.
    pub fn tied(&self, rows_sum_to_one: bool) -> Option<TiedInput> {
        self.data_scatter.as_ref().map(|data| TiedInput { data, rows_sum_to_one })
    }
}

/// Estimates from a full responsibility matrix (n x k, column-major), exactly:
/// a first pass finds the means, a second gathers the moments about them.
pub fn estimate_parameters(
    x: &Data,
    resp: &[f64],
    k: usize,
    cov_type: CovarianceType,
    reg_covar: f64,
    rows_sum_to_one: bool,
    ws: &mut Workspace,
) -> Result<Estimates> {
    let d = x.d;
    // tied statistics are the first moments alone
    let mut first = SuffStats::new(CovarianceType::Tied, k, d, alloc::zeros(k * d)?)?;
    gather(x, resp, &mut first, &mut ws.tiles);
    let mut stats = SuffStats::new(cov_type, k, d, first.means()?)?;
    gather(x, resp, &mut stats, &mut ws.tiles);
    stats.estimates(reg_covar, ws.tied(rows_sum_to_one))
}

/// Replaces the parameters of `gmm` with the estimates, failing on a covariance
/// that is not positive definite.
pub fn apply_estimates(gmm: &mut Gmm, est: Estimates, reg_covar: f64, floor: &[f64]) -> Result<()> {
    *gmm = gmm_from_estimates(gmm.cov_type, gmm.k, gmm.d, est, reg_covar, Some(floor))?;
    Ok(())
}

/// The model of the estimates: weights nk / sum(nk), the means, the covariances
/// and their precision factors; a covariance that is not positive definite (its
/// pivots above `floor`, see Data::variance_floor) is the singular-covariance error.
pub fn gmm_from_estimates(cov_type: CovarianceType, k: usize, d: usize, est: Estimates, reg_covar: f64, floor: Option<&[f64]>) -> Result<Gmm> {
    let pc = precisions_cholesky_from_covariances(cov_type, k, d, &est.covariances, floor, |c| singular_covariance_error(c, reg_covar))?;
    let total: f64 = est.nk.iter().sum();
    let weights = alloc::collect(est.nk.iter().map(|v| v / total))?;
    Ok(Gmm { cov_type, k, d, weights, means: est.means, covariances: est.covariances, precisions_chol: pc })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Textbook weighted estimates computed row by row, for comparison.
    #[test]
    fn estimates_match_direct_sums() {
        let (n, d, k) = (300, 3, 2);
        let mut rng = Rng::new(2);
        let xv: Vec<f64> = (0..n * d).map(|_| rng.normal() + 5.0).collect();
        let x = Data::new(&xv, n, d).unwrap();
        let mut resp = vec![0.0; n * k];
        for i in 0..n {
            let u = rng.next_f64();
            resp[i] = u;
            resp[n + i] = 1.0 - u;
        }
        for t in CovarianceType::ALL {
            let mut ws = Workspace::new(&x, t).unwrap();
            let e = estimate_parameters(&x, &resp, k, t, 1e-6, true, &mut ws).unwrap();
            for c in 0..k {
                let nk: f64 = (0..n).map(|i| resp[c * n + i]).sum::<f64>() + 10.0 * f64::EPSILON;
                assert!((e.nk[c] - nk).abs() < 1e-10);
                let mu: Vec<f64> = (0..d).map(|j| (0..n).map(|i| resp[c * n + i] * x.get(i, j)).sum::<f64>() / nk).collect();
                for j in 0..d {
                    assert!((e.means[c * d + j] - mu[j]).abs() < 1e-12);
                }
                let cov = |j: usize, l: usize| -> f64 {
                    (0..n).map(|i| resp[c * n + i] * (x.get(i, j) - mu[j]) * (x.get(i, l) - mu[l])).sum::<f64>() / nk
                };
                match t {
                    CovarianceType::Full => {
                        for j in 0..d {
                            for l in 0..d {
                                let want = cov(j, l) + if j == l { 1e-6 } else { 0.0 };
                                assert!((e.covariances[c * d * d + j * d + l] - want).abs() < 1e-12);
                            }
                        }
                    }
                    CovarianceType::Diag => {
                        for j in 0..d {
                            assert!((e.covariances[c * d + j] - cov(j, j) - 1e-6).abs() < 1e-12);
                        }
                    }
                    CovarianceType::Spherical => {
                        let want = (0..d).map(|j| cov(j, j)).sum::<f64>() / d as f64 + 1e-6;
                        assert!((e.covariances[c] - want).abs() < 1e-12);
                    }
                    CovarianceType::Tied => {}
                }
            }
            if t == CovarianceType::Tied {
                // scikit-learn's formula, directly
                let total: f64 = e.nk.iter().sum();
                for j in 0..d {
                    for l in 0..d {
                        let xtx: f64 = (0..n).map(|i| x.get(i, j) * x.get(i, l)).sum();
                        let mm: f64 = (0..k).map(|c| e.nk[c] * e.means[c * d + j] * e.means[c * d + l]).sum();
                        let want = (xtx - mm) / total + if j == l { 1e-6 } else { 0.0 };
                        assert!((e.covariances[j * d + l] - want).abs() < 1e-9, "{} vs {}", e.covariances[j * d + l], want);
                    }
                }
            }
        }
    }

    /// k-means++ and random_from_data initializations: one-hot rows for k rows only.
    /// The tied estimate must then be scikit-learn's formula as written.
    #[test]
    fn tied_from_k_one_hot_rows_is_scikit_learns_formula() {
        let (n, d, k) = (50, 2, 2);
        let mut rng = Rng::new(3);
        let xv: Vec<f64> = (0..n * d).map(|_| rng.normal() * 2.0 + 7.0).collect();
        let x = Data::new(&xv, n, d).unwrap();
        let mut resp = vec![0.0; n * k];
        resp[4] = 1.0; // row 4 -> component 0
        resp[n + 17] = 1.0; // row 17 -> component 1
        let mut ws = Workspace::new(&x, CovarianceType::Tied).unwrap();
        let e = estimate_parameters(&x, &resp, k, CovarianceType::Tied, 0.0, false, &mut ws).unwrap();
        let total: f64 = e.nk.iter().sum();
        for j in 0..d {
            for l in 0..d {
                let xtx: f64 = (0..n).map(|i| x.get(i, j) * x.get(i, l)).sum();
                let mm: f64 = (0..k).map(|c| e.nk[c] * e.means[c * d + j] * e.means[c * d + l]).sum();
                let want = (xtx - mm) / total;
                assert!((e.covariances[j * d + l] - want).abs() < 1e-9 * want.abs(), "{} vs {}", e.covariances[j * d + l], want);
            }
        }
    }

    #[test]
    fn statistics_add_across_blocks_and_clients() {
        let (n, d, k) = (500, 4, 3);
        let mut rng = Rng::new(6);
        let xv: Vec<f64> = (0..n * d).map(|_| rng.normal()).collect();
        let x = Data::new(&xv, n, d).unwrap();
        let resp: Vec<f64> = (0..n * k).map(|_| rng.next_f64()).collect();
        let shift: Vec<f64> = (0..k * d).map(|_| rng.normal()).collect();
        for t in CovarianceType::ALL {
            let mut tiles = Tiles::new(d).unwrap();
            let mut whole = SuffStats::new(t, k, d, shift.clone()).unwrap();
            whole.add_block(&x, 0, n, &resp, n, &mut tiles);
            let mut parts = SuffStats::new(t, k, d, shift.clone()).unwrap();
            let mut other = SuffStats::new(t, k, d, shift.clone()).unwrap();
            parts.add_block(&x, 0, 123, &resp, n, &mut tiles);
            other.add_block(&x, 123, n - 123, &resp[123..], n, &mut tiles);
            parts.merge(&other);
            for (a, b) in whole.s1.iter().chain(&whole.s2).chain(&whole.nk).zip(parts.s1.iter().chain(&parts.s2).chain(&parts.nk)) {
                assert!((a - b).abs() < 1e-10 * a.abs().max(1.0));
            }
        }
    }
}
