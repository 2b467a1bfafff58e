//! E-step: weighted log densities log w_c + log N(x | mu_c, Sigma_c) for every
//! row and component, and their normalization into responsibilities.
//!
//! Output layout is column-major n x k (component c at c * n), so that f64x2
//! lanes run across rows. Work goes in blocks of BLOCK rows, so a block's data
//! and its k output columns stay in cache while every component is scored.
//!
//! Quadratic forms use the precision factor P: ||(x - mu) P||^2, computed on the
//! centered rows (more accurate than scikit-learn's expanded forms for data far
//! from the origin, identical otherwise).

use super::{CovarianceType, Gmm};
use crate::alloc;
use crate::data::Data;
use crate::error::Result;
use crate::kernels::{self, Cols, LogDensity};
use crate::linalg;

pub const BLOCK: usize = 256;

/// Per-model constants for scoring, computed once per E-step.
pub struct Prepared<'g> {
    gmm: &'g Gmm,
    /// per component: its distance's map to a weighted log density
    posts: Vec<LogDensity>,
    /// diag/spherical: per-component precisions as k x d (spherical expanded)
    prec: Vec<f64>,
    /// full: whether each factor is upper-triangular; tied: one entry
    upper: Vec<bool>,
    /// tied: rows are shifted by the mean of the means, and b_c = (mu_c - shift) P
    shift: Vec<f64>,
    tied_b: Vec<f64>,
    zeros: Vec<f64>,
}

impl<'g> Prepared<'g> {
    pub fn new(gmm: &'g Gmm) -> Result<Self> {
        let (k, d) = (gmm.k, gmm.d);
        let pc = &gmm.precisions_chol;
        let d_log_2pi = d as f64 * (2.0 * std::f64::consts::PI).ln();
        let log_det = gmm.log_det_chol();
        let mut prep = Prepared {
            gmm,
            posts: (0..k).map(|c| LogDensity { d_log_2pi, log_det: log_det[c], log_w: gmm.weights[c].ln() }).collect(),
            prec: Vec::new(),
            upper: Vec::new(),
            shift: Vec::new(),
            tied_b: Vec::new(),
            zeros: vec![0.0; d],
        };
        match gmm.cov_type {
            CovarianceType::Diag => prep.prec = alloc::collect(pc.iter().map(|v| v * v))?,
            CovarianceType::Spherical => {
                prep.prec = alloc::collect((0..k * d).map(|i| pc[i / d] * pc[i / d]))?;
            }
            CovarianceType::Full => {
                prep.upper = (0..k).map(|c| linalg::triangle(&pc[c * d * d..(c + 1) * d * d], d) == Some(true)).collect();
            }
            CovarianceType::Tied => {
                let upper = linalg::triangle(pc, d) == Some(true);
                prep.upper = vec![upper];
                prep.shift = (0..d).map(|j| (0..k).map(|c| gmm.means[c * d + j]).sum::<f64>() / k as f64).collect();
                prep.tied_b = alloc::zeros(k * d)?;
                for c in 0..k {
                    for j in 0..d {
                        let (lo, hi) = if upper { (0, j + 1) } else { (j, d) };
                        let mut s = 0.0;
                        for l in lo..hi {
                            s += pc[l * d + j] * (gmm.means[c * d + l] - prep.shift[l]);
                        }
                        prep.tied_b[c * d + j] = s;
                    }
                }
            }
        }
        Ok(prep)
    }
}

/// Buffers reused across blocks and iterations.
pub struct Scratch {
    tile: Vec<f64>,
    small: Vec<f64>,
}

impl Scratch {
    pub fn new(d: usize) -> Result<Self> {
        Ok(Scratch { tile: alloc::zeros(d * BLOCK)?, small: vec![0.0; 8 * d] })
    }
}

/// Buffers of a blockwise pass: one block's responsibilities (k x BLOCK) and
/// per-row log-likelihoods, and the scoring scratch.
pub struct BlockBuffers {
    pub resp: Vec<f64>,
    pub lse: Vec<f64>,
    pub scratch: Scratch,
}

impl BlockBuffers {
    pub fn new(k: usize, d: usize) -> Result<Self> {
        Ok(BlockBuffers { resp: alloc::zeros(k * BLOCK)?, lse: vec![0.0; BLOCK], scratch: Scratch::new(d)? })
    }
}

/// Weighted log probabilities of rows [i0, i0 + len) into `out`: component c of
/// row i0 + i at out[c * stride + i].
pub(crate) fn block_weighted_log_prob(x: &Data, i0: usize, len: usize, prep: &Prepared, s: &mut Scratch, out: &mut [f64], stride: usize) {
    let g = prep.gmm;
    let (k, d) = (g.k, g.d);
    let cols = x.cols_from(i0);
    let posts = Some(&prep.posts[..]);
    match g.cov_type {
        CovarianceType::Diag | CovarianceType::Spherical => {
            kernels::sq_dist_many(cols, d, len, k, &g.means, Some(&prep.prec), posts, out, stride);
        }
        CovarianceType::Full => {
            for c in 0..k {
                let p = &g.precisions_chol[c * d * d..(c + 1) * d * d];
                kernels::tri_product(cols, d, len, &g.means[c * d..(c + 1) * d], p, prep.upper[c], &mut s.small, &mut s.tile);
                kernels::sq_dist(Cols::new(&s.tile, len, 0), d, len, &prep.zeros, None, Some(prep.posts[c]), &mut out[c * stride..c * stride + len]);
            }
        }
        CovarianceType::Tied => {
            // (x - shift) P once for all components
            kernels::tri_product(cols, d, len, &prep.shift, &g.precisions_chol, prep.upper[0], &mut s.small, &mut s.tile);
            kernels::sq_dist_many(Cols::new(&s.tile, len, 0), d, len, k, &prep.tied_b, None, posts, out, stride);
        }
    }
}

/// Weighted log probabilities (n x k, column-major) without normalization.
pub fn weighted_log_prob(x: &Data, gmm: &Gmm, out: &mut [f64]) -> Result<()> {
    assert_eq!(out.len(), x.n * gmm.k);
    let prep = Prepared::new(gmm)?;
    let mut s = Scratch::new(x.d)?;
    let mut i0 = 0;
    while i0 < x.n {
        let len = BLOCK.min(x.n - i0);
        block_weighted_log_prob(x, i0, len, &prep, &mut s, &mut out[i0..], x.n);
        i0 += len;
    }
    Ok(())
}

/// The E-step proper: `resp` (n x k, column-major) receives the responsibilities
/// and `lse` the per-row log-likelihood log sum_c w_c N(x | c); returns its mean.
pub fn e_step(x: &Data, gmm: &Gmm, s: &mut Scratch, resp: &mut [f64], lse: &mut [f64]) -> Result<f64> {
    let (n, k) = (x.n, gmm.k);
    assert!(resp.len() == n * k && lse.len() == n);
    let prep = Prepared::new(gmm)?;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        block_weighted_log_prob(x, i0, len, &prep, s, &mut resp[i0..], n);
        kernels::log_normalize(&mut resp[i0..], n, k, len, &mut lse[i0..i0 + len]);
        i0 += len;
    }
    Ok(kernels::sum(lse) / n as f64)
}

/// The per-row log-likelihoods of the E-step into `lse` (n), a block of rows
/// at a time: the same numbers, without an n x k buffer.
pub fn score_samples(x: &Data, gmm: &Gmm, lse: &mut [f64]) -> Result<()> {
    let (n, k) = (x.n, gmm.k);
    assert_eq!(lse.len(), n);
    let prep = Prepared::new(gmm)?;
    let mut b = BlockBuffers::new(k, x.d)?;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        block_weighted_log_prob(x, i0, len, &prep, &mut b.scratch, &mut b.resp, BLOCK);
        kernels::log_normalize(&mut b.resp, BLOCK, k, len, &mut lse[i0..i0 + len]);
        i0 += len;
    }
    Ok(())
}

/// Index of the most probable component of each row (first on ties), a block
/// of rows at a time.
pub fn predict(x: &Data, gmm: &Gmm, labels: &mut [u32]) -> Result<()> {
    let (n, k) = (x.n, gmm.k);
    let prep = Prepared::new(gmm)?;
    let mut b = BlockBuffers::new(k, x.d)?;
    let w = &mut b.resp;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        block_weighted_log_prob(x, i0, len, &prep, &mut b.scratch, w, BLOCK);
        for (i, l) in labels[i0..i0 + len].iter_mut().enumerate() {
            let mut best = 0;
            for c in 1..k {
                if w[c * BLOCK + i] > w[best * BLOCK + i] {
                    best = c;
                }
            }
            *l = best as u32;
        }
        i0 += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::precisions_cholesky_from_covariances;

    /// Direct density from the covariance (no precision factors) as reference.
    fn naive_log_pdf(x: &[f64], mean: &[f64], cov: &[f64], d: usize) -> f64 {
        let mut l = vec![0.0; d * d];
        linalg::cholesky_lower(cov, d, &mut l).unwrap();
        // solve L z = x - mean
        let mut z = vec![0.0; d];
        for i in 0..d {
            let mut s = x[i] - mean[i];
            for m in 0..i {
                s -= l[i * d + m] * z[m];
            }
            z[i] = s / l[i * d + i];
        }
        let maha: f64 = z.iter().map(|v| v * v).sum();
        let logdet: f64 = (0..d).map(|i| l[i * d + i].ln()).sum::<f64>() * 2.0;
        -0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + logdet + maha)
    }

    #[test]
    fn densities_match_direct_formula_for_every_type() {
        let (k, d, n) = (2, 3, 21);
        let mut rng = crate::rng::Rng::new(5);
        let xv: Vec<f64> = (0..n * d).map(|_| rng.normal() * 2.0).collect();
        let x = Data::new(&xv, n, d).unwrap();
        let means = vec![0.5, -1.0, 2.0, -0.3, 0.7, 0.1];
        let full = vec![2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5, 1.0, -0.4, 0.0, -0.4, 2.0, 0.3, 0.0, 0.3, 3.0];
        let cases: Vec<(CovarianceType, Vec<f64>, Box<dyn Fn(usize) -> Vec<f64>>)> = vec![
            (CovarianceType::Full, full.clone(), Box::new(move |c| full[c * 9..(c + 1) * 9].to_vec())),
            (CovarianceType::Tied, vec![2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5], Box::new(|_| vec![2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5])),
            (CovarianceType::Diag, vec![1.0, 2.0, 3.0, 0.5, 0.25, 4.0], Box::new(|c| {
                let v = [[1.0, 2.0, 3.0], [0.5, 0.25, 4.0]][c];
                vec![v[0], 0.0, 0.0, 0.0, v[1], 0.0, 0.0, 0.0, v[2]]
            })),
            (CovarianceType::Spherical, vec![2.0, 0.5], Box::new(|c| {
                let v = [2.0, 0.5][c];
                vec![v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v]
            })),
        ];
        for (t, cov, dense) in cases {
            let pc = precisions_cholesky_from_covariances(t, k, d, &cov, None, |c| panic!("component {}", c)).unwrap();
            let g = Gmm::from_parts(t, k, d, vec![0.3, 0.7], means.clone(), pc, Some(cov)).unwrap();
            let mut w = vec![0.0; n * k];
            weighted_log_prob(&x, &g, &mut w).unwrap();
            for i in 0..n {
                let row: Vec<f64> = (0..d).map(|j| x.get(i, j)).collect();
                for c in 0..k {
                    let e = naive_log_pdf(&row, &means[c * d..(c + 1) * d], &dense(c), d) + g.weights[c].ln();
                    assert!((w[c * n + i] - e).abs() < 1e-12 * e.abs().max(1.0), "{:?} row {} comp {}: {} vs {}", t, i, c, w[c * n + i], e);
                }
            }
            let mut resp = vec![0.0; n * k];
            let mut lse = vec![0.0; n];
            let mean = e_step(&x, &g, &mut Scratch::new(d).unwrap(), &mut resp, &mut lse).unwrap();
            for i in 0..n {
                let e = (w[i].exp() + w[n + i].exp()).ln();
                assert!((lse[i] - e).abs() < 1e-12 * e.abs().max(1.0));
                assert!((resp[i] + resp[n + i] - 1.0).abs() < 1e-14);
            }
            assert!((mean - lse.iter().sum::<f64>() / n as f64).abs() < 1e-12);
        }
    }

    #[test]
    fn blockwise_scores_and_labels_are_the_e_step_s() {
        // several blocks and a partial one
        let (k, d, n) = (3, 2, 2 * BLOCK + 37);
        let mut rng = crate::rng::Rng::new(8);
        let xv: Vec<f64> = (0..n * d).map(|_| rng.normal() * 3.0).collect();
        let x = Data::new(&xv, n, d).unwrap();
        for t in CovarianceType::ALL {
            let cov = match t {
                CovarianceType::Full => [1.0, 0.2, 0.2, 2.0].repeat(k),
                CovarianceType::Tied => vec![1.0, 0.2, 0.2, 2.0],
                CovarianceType::Diag => vec![1.0, 2.0, 0.5, 0.7, 3.0, 1.5],
                CovarianceType::Spherical => vec![1.0, 2.0, 0.5],
            };
            let g = Gmm::from_covariances(t, k, d, vec![0.2, 0.5, 0.3], vec![-2.0, 0.0, 0.0, 1.0, 3.0, -1.0], cov).unwrap();
            let (mut resp, mut lse) = (vec![0.0; n * k], vec![0.0; n]);
            e_step(&x, &g, &mut Scratch::new(d).unwrap(), &mut resp, &mut lse).unwrap();
            let mut scores = vec![0.0; n];
            score_samples(&x, &g, &mut scores).unwrap();
            assert_eq!(scores, lse, "{:?}", t);
            let mut w = vec![0.0; n * k];
            weighted_log_prob(&x, &g, &mut w).unwrap();
            let mut labels = vec![0u32; n];
            predict(&x, &g, &mut labels).unwrap();
            for (i, &l) in labels.iter().enumerate() {
                let best = (1..k).fold(0, |b, c| if w[c * n + i] > w[b * n + i] { c } else { b });
                assert_eq!(l as usize, best, "{:?} row {}", t, i);
            }
        }
    }
}
