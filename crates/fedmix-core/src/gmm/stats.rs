//! Sufficient statistics of the M-step: for each component, the responsibility
//! mass nk and the first two moments of its rows about a shift,
//!   s1 = sum_i r_ik (x_i - shift_k),   s2 = sum_i r_ik (x_i - shift_k)(x_i - shift_k)^T
//! (only the diagonal for diag/spherical; not needed for tied, whose covariance
//! comes from the data scatter). Sums add across row blocks, so an EM iteration
//! is one pass over the data (the E-step of a block feeds its statistics while
//! the block is in cache), and across clients, which is what distributed EM sends.
//!
//! The shift is the component means of the E-step: the new means are
//! shift + s1/nk, and covariances s2/nk - m m^T with m = s1/nk small, so the
//! subtraction loses about eps * (|m| / sigma)^2, negligible when the means move
//! less than thousands of standard deviations per step. Initialization, whose
//! means can be anywhere, makes a second pass about the exact means.
//!
//! Statistics about one shift move exactly to another (add_component), which is
//! how k-FED pools clients' local clusters; on the wire a full s2 travels as its
//! upper triangle (wire_s2_len).

use super::estep::{self, BlockBuffers, Prepared};
use super::{CovarianceType, Gmm};
use crate::alloc;
use crate::data::Data;
use crate::error::{show, Error, Result};
use crate::kernels;
use crate::linalg;

/// Rows per tile in the full-covariance accumulation.
pub const TILE: usize = 128;

#[derive(Clone, Debug, PartialEq)]
pub struct SuffStats {
    pub cov_type: CovarianceType,
    pub k: usize,
    pub d: usize,
    /// (k, d)
    pub shift: Vec<f64>,
    /// (k,)
    pub nk: Vec<f64>,
    /// (k, d)
    pub s1: Vec<f64>,
    /// full: (k, d, d), upper triangle; diag and spherical: (k, d); tied: empty
    /// (so tied statistics are the first moments alone)
    pub s2: Vec<f64>,
}

/// Row tiles reused across blocks.
pub struct Tiles {
    t: Vec<f64>,
    w: Vec<f64>,
}

impl Tiles {
    pub fn new(d: usize) -> Result<Self> {
        Ok(Tiles { t: alloc::zeros(d * TILE)?, w: alloc::zeros(d * TILE)? })
    }
}

/// Column means and centered scatter (X - xbar)^T (X - xbar) of the data: the
/// part of the tied covariance that does not change across iterations.
pub struct DataScatter {
    pub n: usize,
    pub mean: Vec<f64>,
    pub scatter: Vec<f64>,
}

impl DataScatter {
    pub fn new(x: &Data, tiles: &mut Tiles) -> Result<Self> {
        let mean = x.column_means();
        let (_, scatter) = moments_about(x, &mean, tiles)?;
        Ok(DataScatter { n: x.n, mean, scatter })
    }
}

/// Column sums of x - center and the scatter sum_i (x_i - center)(x_i - center)^T
/// (full d x d), for one center shared by every row.
pub(crate) fn moments_about(x: &Data, center: &[f64], tiles: &mut Tiles) -> Result<(Vec<f64>, Vec<f64>)> {
    let (n, d) = (x.n, x.d);
    let mut sum = vec![0.0; d];
    let mut scatter = alloc::zeros(d * d)?;
    let mut i0 = 0;
    while i0 < n {
        let len = TILE.min(n - i0);
        for j in 0..d {
            let xs = &x.col(j)[i0..i0 + len];
            let t = &mut tiles.t[j * len..(j + 1) * len];
            for (t, v) in t.iter_mut().zip(xs) {
                *t = v - center[j];
            }
            sum[j] += kernels::sum(t);
        }
        kernels::scatter_tile(&tiles.t, &tiles.t, d, len, &mut scatter);
        i0 += len;
    }
    mirror_upper(&mut scatter, d);
    Ok((sum, scatter))
}

/// Values of s2 on the wire: the upper triangle of each full matrix row by row
/// (j <= l), the (k, d) second moments of diag and spherical, none for tied.
pub fn wire_s2_len(cov_type: CovarianceType, k: usize, d: usize) -> usize {
    match cov_type {
        CovarianceType::Full => k * packed_len(d),
        CovarianceType::Diag | CovarianceType::Spherical => k * d,
        CovarianceType::Tied => 0,
    }
}

/// What the M-step adds to every component's count (scikit-learn's 10 eps), so
/// that an empty component divides by something.
const COUNT_FLOOR: f64 = 10.0 * f64::EPSILON;

/// The most statistics one M-step adds up (the clients of a round: a signed
/// 32-bit count).
const MAX_SUMMANDS: f64 = 2147483647.0;

/// The relative rounding of a scatter about a mean, s2 - s1 s1^T / n, summed
/// from `rows` rows as the statistics here are (weights r times deviations t,
/// s1 = sum r t, s2 = sum (r t) t^T, n = sum r, in any order): entry (j, l) is
/// within this times sqrt(s2_jj s2_ll) of the exact scatter of the rounded r and
/// t, which is positive semidefinite. Each sum of `rows` terms is off by at most
/// (rows - 1) eps times the sum of its terms' magnitudes, which Cauchy-Schwarz
/// bounds by sqrt(s2_jj s2_ll) (s1 s1^T / n likewise); the products, the division
/// and the subtraction add a few eps. A worst case: sums as computed are far
/// closer.
pub fn scatter_rounding(rows: f64) -> f64 {
    (4.0 * rows + 9.0) * f64::EPSILON
}

/// Values in the upper triangle of a d x d matrix.
pub fn packed_len(d: usize) -> usize {
    d * (d + 1) / 2
}

/// The upper triangle of `a` (d x d), row by row, into `out` (packed_len(d) values).
pub fn pack_upper_into(a: &[f64], d: usize, out: &mut [f64]) {
    let mut i = 0;
    for j in 0..d {
        out[i..i + d - j].copy_from_slice(&a[j * d + j..(j + 1) * d]);
        i += d - j;
    }
}

/// The d x d matrix of a packed upper triangle, mirrored.
pub fn unpack_symmetric(p: &[f64], d: usize) -> Result<Vec<f64>> {
    let mut a = alloc::zeros(d * d)?;
    let mut i = 0;
    for j in 0..d {
        for l in j..d {
            a[j * d + l] = p[i];
            a[l * d + j] = p[i];
            i += 1;
        }
    }
    Ok(a)
}

fn mirror_upper(a: &mut [f64], d: usize) {
    for j in 0..d {
        for l in 0..j {
            a[j * d + l] = a[l * d + j];
        }
    }
}

/// What a tied covariance needs beyond the statistics.
#[derive(Clone, Copy)]
pub struct TiedInput<'a> {
    pub data: &'a DataScatter,
    /// every row's responsibilities sum to one (EM steps, k-means and random
    /// initializations), as opposed to k one-hot rows (k-means++, random_from_data)
    pub rows_sum_to_one: bool,
}

/// Component sizes (plus 10 eps, as scikit-learn), means and covariances.
pub struct Estimates {
    pub nk: Vec<f64>,
    pub means: Vec<f64>,
    pub covariances: Vec<f64>,
}

impl SuffStats {
    /// The E-step under `gmm` fused with the statistics it feeds: one pass over
    /// the rows, each block's responsibilities added to the statistics (about the
    /// model's means) while the block is in cache. Also returns the sum of the
    /// rows' log-likelihoods. The E-step of EM, and what a distributed-EM client
    /// computes on its rows.
    pub fn from_e_step(x: &Data, gmm: &Gmm, bufs: &mut BlockBuffers, tiles: &mut Tiles) -> Result<(SuffStats, f64)> {
        let (n, k) = (x.n, gmm.k);
        let mut stats = SuffStats::new(gmm.cov_type, k, gmm.d, alloc::copy(&gmm.means)?)?;
        let mut total = 0.0;
        let prep = Prepared::new(gmm)?;
        let mut i0 = 0;
        while i0 < n {
            let len = estep::BLOCK.min(n - i0);
            estep::block_weighted_log_prob(x, i0, len, &prep, &mut bufs.scratch, &mut bufs.resp, estep::BLOCK);
            kernels::log_normalize(&mut bufs.resp, estep::BLOCK, k, len, &mut bufs.lse[..len]);
            total += kernels::sum(&bufs.lse[..len]);
            stats.add_block(x, i0, len, &bufs.resp, estep::BLOCK, tiles);
            i0 += len;
        }
        Ok((stats, total))
    }

    pub fn new(cov_type: CovarianceType, k: usize, d: usize, shift: Vec<f64>) -> Result<Self> {
        assert_eq!(shift.len(), k * d);
        let s2_len = match cov_type {
            CovarianceType::Full => k * d * d,
            CovarianceType::Diag | CovarianceType::Spherical => k * d,
            CovarianceType::Tied => 0,
        };
        Ok(SuffStats { cov_type, k, d, shift, nk: alloc::zeros(k)?, s1: alloc::zeros(k * d)?, s2: alloc::zeros(s2_len)? })
    }

    /// Adds rows [i0, i0 + len) of `x`; `resp` holds their responsibilities,
    /// component c of row i0 + i at resp[c * stride + i].
    pub fn add_block(&mut self, x: &Data, i0: usize, len: usize, resp: &[f64], stride: usize, tiles: &mut Tiles) {
        let (k, d) = (self.k, self.d);
        for c in 0..k {
            let r = &resp[c * stride..c * stride + len];
            self.nk[c] += kernels::sum(r);
            let shift = &self.shift[c * d..(c + 1) * d];
            match self.cov_type {
                CovarianceType::Diag | CovarianceType::Spherical => {
                    for j in 0..d {
                        let (a, b) = kernels::shifted_moments(r, &x.col(j)[i0..i0 + len], shift[j]);
                        self.s1[c * d + j] += a;
                        self.s2[c * d + j] += b;
                    }
                }
                CovarianceType::Tied => {
                    for j in 0..d {
                        let (a, _) = kernels::shifted_moments(r, &x.col(j)[i0..i0 + len], shift[j]);
                        self.s1[c * d + j] += a;
                    }
                }
                CovarianceType::Full => {
                    let mut s = 0;
                    while s < len {
                        let tl = TILE.min(len - s);
                        for j in 0..d {
                            let xs = &x.col(j)[i0 + s..i0 + s + tl];
                            let t = &mut tiles.t[j * tl..(j + 1) * tl];
                            let w = &mut tiles.w[j * tl..(j + 1) * tl];
                            for i in 0..tl {
                                t[i] = xs[i] - shift[j];
                                w[i] = r[s + i] * t[i];
                            }
                            self.s1[c * d + j] += kernels::sum(w);
                        }
                        kernels::scatter_tile(&tiles.w, &tiles.t, d, tl, &mut self.s2[c * d * d..(c + 1) * d * d]);
                        s += tl;
                    }
                }
            }
        }
    }

    /// Adds statistics gathered elsewhere (another block range, another client)
    /// about the same shift.
    pub fn merge(&mut self, other: &SuffStats) {
        assert!(self.cov_type == other.cov_type && self.k == other.k && self.d == other.d && self.shift == other.shift);
        for (a, b) in self.nk.iter_mut().zip(&other.nk) {
            *a += b;
        }
        for (a, b) in self.s1.iter_mut().zip(&other.s1) {
            *a += b;
        }
        for (a, b) in self.s2.iter_mut().zip(&other.s2) {
            *a += b;
        }
    }

    /// Adds component `oc` of `other` (statistics of the same type about another
    /// shift) to component `c`, moved exactly to this shift: with delta = the old
    /// shift minus the new, x - new = (x - old) + delta, so
    ///   s1 += s1' + n delta,   s2 += s2' + s1' delta^T + delta s1'^T + n delta delta^T.
    pub fn add_component(&mut self, c: usize, other: &SuffStats, oc: usize) {
        assert!(self.cov_type == other.cov_type && self.d == other.d && c < self.k && oc < other.k);
        let d = self.d;
        let n = other.nk[oc];
        let delta: Vec<f64> = (0..d).map(|j| other.shift[oc * d + j] - self.shift[c * d + j]).collect();
        let s1 = &other.s1[oc * d..(oc + 1) * d];
        match self.cov_type {
            CovarianceType::Full => {
                for j in 0..d {
                    for l in j..d {
                        self.s2[c * d * d + j * d + l] +=
                            other.s2[oc * d * d + j * d + l] + s1[j] * delta[l] + delta[j] * s1[l] + n * delta[j] * delta[l];
                    }
                }
            }
            CovarianceType::Diag | CovarianceType::Spherical => {
                for j in 0..d {
                    self.s2[c * d + j] += other.s2[oc * d + j] + 2.0 * s1[j] * delta[j] + n * delta[j] * delta[j];
                }
            }
            CovarianceType::Tied => {}
        }
        for j in 0..d {
            self.s1[c * d + j] += s1[j] + n * delta[j];
        }
        self.nk[c] += n;
    }

    /// s2 as it travels (see wire_s2_len) into `out`.
    pub fn s2_wire_into(&self, out: &mut [f64]) {
        match self.cov_type {
            CovarianceType::Full => {
                let (d, p) = (self.d, packed_len(self.d));
                for c in 0..self.k {
                    pack_upper_into(&self.s2[c * d * d..(c + 1) * d * d], d, &mut out[c * p..(c + 1) * p]);
                }
            }
            _ => out.copy_from_slice(&self.s2),
        }
    }

    /// Statistics received from elsewhere, s2 in its wire form; checks the lengths.
    pub fn from_wire(cov_type: CovarianceType, k: usize, d: usize, shift: Vec<f64>, nk: &[f64], s1: &[f64], s2: &[f64]) -> Result<SuffStats> {
        let want = [("shift", shift.len(), k * d), ("nk", nk.len(), k), ("s1", s1.len(), k * d), ("s2", s2.len(), wire_s2_len(cov_type, k, d))];
        for (name, got, len) in want {
            if got != len {
                return Err(Error::data(format!("{} has {} values; {} components of {} features need {}", name, got, k, d, len)));
            }
        }
        let mut st = SuffStats::new(cov_type, k, d, shift)?;
        st.nk.copy_from_slice(nk);
        st.s1.copy_from_slice(s1);
        match cov_type {
            CovarianceType::Full => {
                let p = packed_len(d);
                for c in 0..k {
                    let mut i = c * p;
                    for j in 0..d {
                        for l in j..d {
                            st.s2[c * d * d + j * d + l] = s2[i];
                            i += 1;
                        }
                    }
                }
            }
            _ => st.s2.copy_from_slice(s2),
        }
        Ok(st)
    }

    /// Checks that statistics a client sent could come from `rows` rows: finite,
    /// every nk at least `min_count` and at most `rows`, the nk summing to `rows`
    /// (each row's responsibilities sum to one), and no negative variance (for
    /// full, each component's scatter about its mean positive semidefinite).
    ///
    /// What honest statistics can be off by, and so what passes:
    /// - the rounding of their sums (scatter_rounding), relative to each
    ///   feature's second moment: a component with fewer effective rows than
    ///   features has a singular scatter, positive semidefinite only up to this;
    /// - a client's share of half the M-step's ridge, reg_covar / 2 times its
    ///   count (plus its share of the count floor, COUNT_FLOOR / MAX_SUMMANDS): a
    ///   component the rows barely touch (counts of 1e-150 and less, down to
    ///   subnormal numbers, whose products round far coarser than eps) is judged
    ///   by what it can do to the model. The M-step's covariance is the clients'
    ///   summed scatter over their summed counts plus COUNT_FLOOR, plus reg_covar,
    ///   so scatters each short of positive semidefinite by at most their share
    ///   take away at most half the ridge: the covariance stays positive definite,
    ///   moved by less than reg_covar / 2 in any direction.
    pub fn check_client(&self, rows: f64, min_count: f64, reg_covar: f64) -> Result<()> {
        self.check_sum(rows, min_count, reg_covar, 0.0)
    }

    /// check_client for a sum whose every value may be off by up to
    /// `quantization` (a secure round's fixed-point bound; 0 for a plain
    /// reply, which is then judged exactly as check_client judges it).
    ///
    /// Each component's moment matrix M = sum_i r_i [1; x_i][1; x_i]^T, with
    /// nk, s1 and s2 as its blocks, is positive semidefinite. The sum's entries
    /// are within q of the exact ones, except the counts, which the layout
    /// clamps at 0 and rescales to the rows (within (k + 1) q): the error's
    /// spectral norm is at most its Frobenius norm, at most eps = (d + k + 2) q,
    /// so M + eps I is positive semidefinite. The checks below are that test:
    /// the counts read as nk + eps, each variance and the scatter
    /// s2 - s1 s1^T / (nk + eps) allowed eps below zero.
    pub fn check_sum(&self, rows: f64, min_count: f64, reg_covar: f64, quantization: f64) -> Result<()> {
        let (k, d) = (self.k, self.d);
        if !(quantization >= 0.0) || !quantization.is_finite() {
            return Err(Error::param(format!("quantization must be a finite number >= 0, got {}", show(quantization))));
        }
        let eps = (d + k + 2) as f64 * quantization;
        if !(rows >= 1.0) || !rows.is_finite() || rows.fract() != 0.0 {
            return Err(Error::data(format!("reports {} rows; a client needs a whole number of rows, at least one", show(rows))));
        }
        if !(reg_covar >= 0.0) || !reg_covar.is_finite() {
            return Err(Error::param(format!("regCovar must be a finite number >= 0, got {}", show(reg_covar))));
        }
        for (name, v) in [("shift", &self.shift), ("nk", &self.nk), ("s1", &self.s1), ("s2", &self.s2)] {
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::data(format!("{}[{}] is {}; statistics must be finite", name, i, show(v[i]))));
            }
        }
        let rel = scatter_rounding(rows);
        // each row's responsibilities sum to one up to the E-step's rounding
        let slack = (1e-9 + rel) * rows;
        for (c, &n) in self.nk.iter().enumerate() {
            if !(n >= min_count) {
                return Err(Error::data(format!("nk[{}] is {}; a component's count must be at least {}", c, show(n), show(min_count))));
            }
            if n > rows + slack {
                return Err(Error::data(format!("nk[{}] is {} but the client reports only {} rows", c, show(n), show(rows))));
            }
        }
        let total: f64 = self.nk.iter().sum();
        if (total - rows).abs() > slack {
            return Err(Error::data(format!("the counts nk sum to {} but the client reports {} rows", show(total), show(rows))));
        }
        let second = |c: usize, j: usize| match self.cov_type {
            CovarianceType::Full => Some(self.s2[c * d * d + j * d + j]),
            CovarianceType::Diag | CovarianceType::Spherical => Some(self.s2[c * d + j]),
            CovarianceType::Tied => None,
        };
        // full: each component's scatter about its mean, then its Cholesky scratch
        let (mut w, mut l) = if self.cov_type == CovarianceType::Full { (alloc::zeros(d * d)?, alloc::zeros(d * d)?) } else { (Vec::new(), Vec::new()) };
        for c in 0..k {
            let n = self.nk[c] + eps;
            let half_ridge = 0.5 * reg_covar * (self.nk[c] + COUNT_FLOOR / MAX_SUMMANDS);
            // the mean's offset from the shift, s1 / n: divided first, so that a tiny
            // component's s1 s1^T does not underflow
            let m: Vec<f64> = (0..d).map(|j| if n > 0.0 { self.s1[c * d + j] / n } else { 0.0 }).collect();
            for j in 0..d {
                if let Some(s2) = second(c, j) {
                    let s1 = self.s1[c * d + j];
                    // Cauchy-Schwarz: (sum r t)^2 <= (sum r)(sum r t^2), i.e. n times the variance >= 0
                    let no_rows_but_moment = n == 0.0 && s1 != 0.0;
                    if s2 < -eps || no_rows_but_moment || s2 - s1 * m[j] < -(2.0 * rel * s2.max(0.0) + half_ridge + eps) {
                        return Err(Error::data(format!("the moments of component {} imply a negative variance for feature {}", c, j)));
                    }
                }
            }
            if self.cov_type == CovarianceType::Full && n > 0.0 {
                let s2 = &self.s2[c * d * d..(c + 1) * d * d];
                let s1 = &self.s1[c * d..(c + 1) * d];
                for j in 0..d {
                    for l in j..d {
                        let v = s2[j * d + l] - s1[j] * m[l];
                        w[j * d + l] = v;
                        w[l * d + j] = v;
                    }
                }
                let scale: Vec<f64> = (0..d).map(|j| s2[j * d + j].max(0.0)).collect();
                if !linalg::is_positive_semidefinite(&w, d, &scale, rel, half_ridge + eps, &mut l) {
                    return Err(Error::data(format!("the second moments of component {} are not positive semidefinite", c)));
                }
            }
        }
        Ok(())
    }

    /// Component sizes as the estimates use them: nk + COUNT_FLOOR, as scikit-learn.
    fn sizes(&self) -> Result<Vec<f64>> {
        alloc::collect(self.nk.iter().map(|v| v + COUNT_FLOOR))
    }

    /// The means shift + s1 / nk (all that the first moments give).
    pub fn means(&self) -> Result<Vec<f64>> {
        let nk = self.sizes()?;
        alloc::collect((0..self.k * self.d).map(|i| self.shift[i] + self.s1[i] / nk[i / self.d]))
    }

    /// The M-step's estimates. `tied` is needed (only) for tied covariances.
    pub fn estimates(&self, reg_covar: f64, tied: Option<TiedInput>) -> Result<Estimates> {
        let (k, d) = (self.k, self.d);
        let nk = self.sizes()?;
        // m = s1 / nk: the mean relative to the shift
        let m = alloc::collect((0..k * d).map(|i| self.s1[i] / nk[i / d]))?;
        let means = self.means()?;
        let covariances = match self.cov_type {
            CovarianceType::Diag | CovarianceType::Spherical => {
                let var = alloc::collect((0..k * d).map(|i| self.s2[i] / nk[i / d] - m[i] * m[i] + reg_covar))?;
                if self.cov_type == CovarianceType::Diag {
                    var
                } else {
                    alloc::collect((0..k).map(|c| var[c * d..(c + 1) * d].iter().sum::<f64>() / d as f64))?
                }
            }
            CovarianceType::Full => {
                let mut cov = alloc::zeros(k * d * d)?;
                for c in 0..k {
                    for j in 0..d {
                        for l in j..d {
                            let v = self.s2[c * d * d + j * d + l] / nk[c] - m[c * d + j] * m[c * d + l];
                            cov[c * d * d + j * d + l] = v + if j == l { reg_covar } else { 0.0 };
                        }
                    }
                    mirror_upper(&mut cov[c * d * d..(c + 1) * d * d], d);
                }
                cov
            }
            CovarianceType::Tied => {
                // scikit-learn: (X^T X - sum_c nk_c mu_c mu_c^T) / sum(nk). Written in the
                // frame of the column means xbar, with m_c = mu_c - xbar = (shift_c - xbar) +
                // s1_c / nk_c and D = sum_c nk_c m_c, it is
                //   Xc^T Xc - sum_c nk_c m_c m_c^T + (n - N) xbar xbar^T - xbar D^T - D xbar^T.
                // When every row's responsibilities sum to one (EM), n = N and D = sum_i
                // (x_i - xbar) = 0 exactly, and the last three terms are left out: computed,
                // they are rounding noise times |xbar|^2, which ruins data far from the
                // origin. Initialization from k one-hot rows (k-means++, random_from_data)
                // keeps them, as scikit-learn's formula does.
                let tied = tied.expect("tied covariance needs the data scatter");
                let (xbar, n) = (&tied.data.mean, tied.data.n as f64);
                let total: f64 = nk.iter().sum();
                let delta = alloc::collect((0..k * d).map(|i| (self.shift[i] - xbar[i % d]) + m[i]))?;
                let dsum: Vec<f64> = (0..d).map(|j| (0..k).map(|c| nk[c] * delta[c * d + j]).sum()).collect();
                let mut cov = alloc::zeros(d * d)?;
                for j in 0..d {
                    for l in 0..d {
                        let mut v = tied.data.scatter[j * d + l];
                        for c in 0..k {
                            v -= nk[c] * delta[c * d + j] * delta[c * d + l];
                        }
                        if !tied.rows_sum_to_one {
                            v += (n - total) * xbar[j] * xbar[l] - xbar[j] * dsum[l] - dsum[j] * xbar[l];
                        }
                        cov[j * d + l] = v / total + if j == l { reg_covar } else { 0.0 };
                    }
                }
                cov
            }
        };
        Ok(Estimates { nk, means, covariances })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// n rows of d features (column-major) near a plane of `rank` dimensions, on
    /// a grid of 1/255 as min-max scaled 8-bit pixels are (satellite.csv's bands
    /// are this correlated), and the statistics of a component that holds `heavy`
    /// of them with responsibility near 1 and the rest with responsibilities as
    /// small as an E-step gives far from a component.
    fn honest_component(n: usize, d: usize, rank: usize, heavy: usize, light: f64, shift_by: f64, seed: u64) -> SuffStats {
        let mut rng = Rng::new(seed);
        let basis: Vec<f64> = (0..rank * d).map(|_| rng.next_f64()).collect();
        let mut x = vec![0.0; n * d];
        for i in 0..n {
            let z: Vec<f64> = (0..rank).map(|_| rng.next_f64()).collect();
            for j in 0..d {
                let v: f64 = (0..rank).map(|r| z[r] * basis[r * d + j]).sum::<f64>() / rank as f64;
                x[j * n + i] = (v * 255.0).round() / 255.0;
            }
        }
        // component 0 holds the heavy rows; component 1 the rest of every row's responsibility
        let mut resp = vec![0.0; 2 * n];
        for i in 0..n {
            resp[i] = if i < heavy { 1.0 - 1e-9 * rng.next_f64() } else { light * (0.5 + rng.next_f64()) };
            resp[n + i] = 1.0 - resp[i];
        }
        // the heavy rows are near copies of the first (pixels that agree, as neighbouring
        // rows of an image do): within them most features barely vary
        for i in 1..heavy {
            for j in 0..d {
                let step = if rng.next_f64() < 0.2 { if rng.next_f64() < 0.5 { 1.0 } else { -1.0 } } else { 0.0 };
                x[j * n + i] = x[j * n] + step / 255.0;
            }
        }
        let data = Data::new(&x, n, d).unwrap();
        let shift: Vec<f64> = (0..2 * d).map(|i| if i < d { x[i * n] + shift_by } else { 0.5 }).collect();
        let mut st = SuffStats::new(CovarianceType::Full, 2, d, shift).unwrap();
        st.add_block(&data, 0, n, &resp, n, &mut Tiles::new(d).unwrap());
        st
    }

    #[test]
    fn honest_rank_deficient_second_moments_pass_the_client_check() {
        // a component with fewer effective rows than features: its scatter is
        // singular and only positive semidefinite up to rounding
        let mut seed = 0;
        for heavy in [1, 2, 3, 7, 12, 40] {
            for light in [0.0, 1e-300, 1e-14, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8] {
                seed += 1;
                let st = honest_component(1287, 36, 6, heavy, light, 0.05, seed);
                st.check_client(1287.0, 0.0, 0.0).map_err(|e| format!("{} heavy rows, light {}: {}", heavy, light, e.message)).unwrap();
            }
        }
    }

    #[test]
    fn honest_components_the_rows_barely_touch_pass_the_client_check() {
        // responsibilities of 1e-160 and less (rows far from a component): products
        // near and below the smallest normal number round far coarser than eps
        let mut seed = 100;
        for light in [1e-150, 1e-157, 1e-200, 1e-300, 1e-310, 1e-320] {
            for heavy in [0, 1] {
                seed += 1;
                let st = honest_component(1287, 36, 6, heavy, light, 0.05, seed);
                st.check_client(1287.0, 0.0, 1e-6).map_err(|e| format!("light {}, heavy {}: {}", light, heavy, e.message)).unwrap();
            }
        }
    }

    #[test]
    fn second_moments_no_rows_can_give_are_refused() {
        let d = 36;
        let honest = honest_component(1287, d, 6, 40, 1e-9, 0.05, 3);
        honest.check_client(1287.0, 0.0, 0.0).unwrap();
        // features 0 and 1 of component 0 correlated past +-1 by a hair: no data has that scatter
        let (n, s1) = (honest.nk[0], &honest.s1);
        let w = |j: usize, l: usize| honest.s2[j * d + l] - s1[j] * s1[l] / n;
        for sign in [1.0, -1.0] {
            let mut bad = honest.clone();
            bad.s2[1] = s1[0] * s1[1] / n + sign * 1.001 * (w(0, 0) * w(1, 1)).sqrt();
            let e = bad.check_client(1287.0, 0.0, 0.0).unwrap_err();
            assert_eq!(e.message, "the second moments of component 0 are not positive semidefinite");
        }
        // a variance below zero
        let mut bad = honest.clone();
        bad.s2[2 * d + 2] = s1[2] * s1[2] / n * (1.0 - 1e-6);
        assert!(bad.check_client(1287.0, 0.0, 0.0).unwrap_err().message.contains("negative variance for feature 2"));
    }

    #[test]
    fn a_secure_sum_within_its_quantization_bound_of_psd_passes_only_with_the_bound() {
        // a component of 3 rows: its scatter has rank 2, every other eigenvalue 0; each
        // second moment then short by q (a fixed-point sum is within q of the exact one)
        let (d, q) = (36, 3e-5);
        let honest = honest_component(1287, d, 6, 3, 0.0, 0.05, 11);
        honest.check_sum(1287.0, 0.0, 0.0, q).unwrap();
        let mut summed = honest.clone();
        for j in 0..d {
            summed.s2[j * d + j] -= q;
        }
        let (n, s1) = (honest.nk[0], honest.s1.clone());
        assert!(summed.check_client(1287.0, 0.0, 0.0).is_err(), "a plain reply is judged exactly");
        summed.check_sum(1287.0, 0.0, 0.0, q).unwrap();
        // the bound is no licence: far past it, still refused
        let mut bad = honest.clone();
        bad.s2[2 * d + 2] = s1[2] * s1[2] / n - 1e3 * q * d as f64;
        assert!(bad.check_sum(1287.0, 0.0, 0.0, q).unwrap_err().message.contains("negative variance for feature 2"));
        assert!(honest.check_sum(1287.0, 0.0, 0.0, f64::NAN).is_err());
    }
}
