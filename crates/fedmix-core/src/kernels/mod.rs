//! Hot loops of the core. Each kernel has a SIMD128 version (f64x2 lanes across
//! samples) and a scalar twin that performs the same IEEE operations in the same
//! order, lane for lane: per-sample kernels are bit-identical between the builds,
//! and reductions keep four partial sums in the scalar twin exactly as the two
//! f64x2 accumulators of the SIMD version do. So SIMD and scalar builds agree to
//! the last bit, which the TypeScript tests check.
//!
//! Data access is column-major: a `Cols` names where column j of a block starts.

pub mod scalar;
#[cfg(target_feature = "simd128")]
pub(crate) mod simd;

/// A read-only column-major block: column j, row i is `data[offset + j * stride + i]`.
#[derive(Clone, Copy)]
pub struct Cols<'a> {
    pub data: &'a [f64],
    pub stride: usize,
    pub offset: usize,
}

impl<'a> Cols<'a> {
    pub fn new(data: &'a [f64], stride: usize, offset: usize) -> Self {
        Cols { data, stride, offset }
    }
    /// Panics (a trap in WASM, never UB) if `d` columns of `len` rows do not fit.
    #[inline]
    pub(crate) fn check(&self, d: usize, len: usize) {
        if d > 0 && len > 0 {
            assert!(self.offset + (d - 1) * self.stride + len <= self.data.len(), "Cols out of bounds");
        }
    }
    #[inline]
    pub fn col(&self, j: usize, len: usize) -> &'a [f64] {
        let s = self.offset + j * self.stride;
        &self.data[s..s + len]
    }
}

/// True when this build runs the SIMD128 kernels.
pub const SIMD: bool = cfg!(target_feature = "simd128");

macro_rules! dispatch {
    ($name:ident $(::<$g:tt>)? ( $($arg:expr),* )) => {{
        #[cfg(target_feature = "simd128")]
        let r = unsafe { simd::$name$(::<$g>)?($($arg),*) };
        #[cfg(not(target_feature = "simd128"))]
        let r = scalar::$name$(::<$g>)?($($arg),*);
        r
    }};
}

/// Turns a squared Mahalanobis distance q into a weighted log density:
/// (-0.5 * (d_log_2pi + q) + log_det) + log_w, scikit-learn's order of operations.
#[derive(Clone, Copy, Debug)]
pub struct LogDensity {
    pub d_log_2pi: f64,
    pub log_det: f64,
    pub log_w: f64,
}

impl LogDensity {
    #[inline(always)]
    pub fn apply(&self, q: f64) -> f64 {
        (-0.5 * (self.d_log_2pi + q) + self.log_det) + self.log_w
    }
}

/// out[i] = sum_j w_j (x_j[i] - c_j)^2 for i < len; `w = None` means unit weights.
/// With `post`, out[i] is that distance turned into a log density.
pub fn sq_dist(x: Cols, d: usize, len: usize, c: &[f64], w: Option<&[f64]>, post: Option<LogDensity>, out: &mut [f64]) {
    x.check(d, len);
    assert!(c.len() >= d && out.len() >= len && w.map_or(true, |w| w.len() >= d));
    dispatch!(sq_dist(x, d, len, c, w, post, out))
}

/// sq_dist for k components at once: centre c (and its weights, and its log
/// density map) at cs[c * d..], ws[c * d..], posts[c]; its distances at
/// out[c * stride..c * stride + len]. The same numbers as k calls of sq_dist, bit
/// for bit; the SIMD build loads each block of rows once for two components.
#[allow(clippy::too_many_arguments)]
pub fn sq_dist_many(x: Cols, d: usize, len: usize, k: usize, cs: &[f64], ws: Option<&[f64]>, posts: Option<&[LogDensity]>, out: &mut [f64], stride: usize) {
    x.check(d, len);
    assert!(cs.len() >= k * d && ws.map_or(true, |w| w.len() >= k * d) && posts.map_or(true, |p| p.len() >= k));
    assert!(k == 0 || (stride >= len && (k - 1) * stride + len <= out.len()));
    dispatch!(sq_dist_many(x, d, len, k, cs, ws, posts, out, stride))
}

/// (sum_i r_i t_i, sum_i r_i t_i^2) with t_i = x_i - shift: the first two moments
/// of a feature about a shift, as sufficient statistics of one component.
pub fn shifted_moments(r: &[f64], x: &[f64], shift: f64) -> (f64, f64) {
    assert_eq!(r.len(), x.len());
    dispatch!(shifted_moments(r, x, shift))
}

/// out[j * d + l] += sum_i w[j * len + i] * t[l * len + i] for l >= j: the upper
/// triangle of W T^T for two d x len row-major tiles.
pub fn scatter_tile(w: &[f64], t: &[f64], d: usize, len: usize, out: &mut [f64]) {
    assert!(w.len() >= d * len && t.len() >= d * len && out.len() >= d * d);
    dispatch!(scatter_tile(w, t, d, len, out))
}

/// tile[j * len + i] = sum over l in tri(j) of (x_l[i] - shift_l) * p[l * d + j]: row i of
/// (X - shift) times the d x d triangular matrix p (upper: l <= j, lower: l >= j).
/// `scratch` needs 8 * d values.
pub fn tri_product(x: Cols, d: usize, len: usize, shift: &[f64], p: &[f64], upper: bool, scratch: &mut [f64], tile: &mut [f64]) {
    x.check(d, len);
    assert!(shift.len() >= d && p.len() >= d * d && scratch.len() >= 8 * d && tile.len() >= d * len);
    dispatch!(tri_product(x, d, len, shift, p, upper, scratch, tile))
}

/// sum_i a_i
pub fn sum(a: &[f64]) -> f64 {
    dispatch!(sum(a))
}

/// sum_i (x_i - mu)^2
pub fn sq_dev(x: &[f64], mu: f64) -> f64 {
    dispatch!(sq_dev(x, mu))
}

/// Column-wise log-sum-exp over k columns of `len` rows (column c at c * stride):
/// lse[i] = log sum_c exp(w[c][i]); then w[c][i] becomes exp(w[c][i] - lse[i]),
/// the normalized responsibility.
pub fn log_normalize(w: &mut [f64], stride: usize, k: usize, len: usize, lse: &mut [f64]) {
    assert!(k >= 1 && (k - 1) * stride + len <= w.len() && lse.len() >= len);
    dispatch!(log_normalize(w, stride, k, len, lse))
}

/// In-place exp (<= 1 ulp; see scalar::exp).
pub fn exp_in_place(a: &mut [f64]) {
    dispatch!(exp_in_place(a))
}

/// In-place natural log of positive normal numbers (<= 1 ulp; see scalar::ln).
pub fn ln_in_place(a: &mut [f64]) {
    dispatch!(ln_in_place(a))
}

/// The dot product of two rows of `width` values (`width` even) as every row
/// kernel computes it: the products of even-indexed and of odd-indexed
/// features summed separately, in order (the two lanes of one f64x2
/// accumulator), then the two sums added. So dot(a, b) == dot(b, a) to the
/// bit, and the builds agree to the bit. Rows are padded with zeros to an
/// even width (crate::svm keeps its rows so).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert!(a.len() == b.len() && a.len() % 2 == 0);
    scalar::dot(a, b)
}

/// Most rows dots_gather takes at once.
pub const GATHER_ROWS: usize = 4;

/// out[k * ld + t] = dot(xs[k], row idx[t] of `rows`) for k < xs.len() (1 to
/// GATHER_ROWS) and t < n: the dot products behind up to four kernel columns
/// at once, over rows picked by index (`rows` row-major, rows `width` apart,
/// `width` even). Several columns share each row they load; the SIMD build
/// skips the pairs of features where every one of xs is 0, which changes no
/// bit of the sums (simd::NonzeroPairs).
pub fn dots_gather(xs: &[&[f64]], rows: &[f64], width: usize, idx: &[u32], n: usize, out: &mut [f64], ld: usize) {
    assert!(width % 2 == 0 && (1..=GATHER_ROWS).contains(&xs.len()) && xs.iter().all(|x| x.len() == width));
    assert!(idx.len() >= n && n <= ld && out.len() >= (xs.len() - 1) * ld + n);
    let nrows = if width == 0 { 0 } else { rows.len() / width };
    assert!(idx[..n].iter().all(|&r| (r as usize) < nrows), "dots_gather: row index out of bounds");
    dispatch!(dots_gather(xs, rows, width, idx, n, out, ld))
}

/// out[r * ld + s] = dot(row r of a, row s of b) for r < na, s < nb: every
/// dot product between two blocks of rows (row-major, `width` apart, `width`
/// even), as a small matrix product tiled for registers. As dots_gather, the
/// SIMD build skips the pairs of features where a's rows of a tile are all 0.
pub fn cross_dots(a: &[f64], na: usize, b: &[f64], nb: usize, width: usize, out: &mut [f64], ld: usize) {
    assert!(width % 2 == 0 && a.len() >= na * width && b.len() >= nb * width && nb <= ld);
    assert!(na == 0 || out.len() >= (na - 1) * ld + nb);
    dispatch!(cross_dots(a, na, b, nb, width, out, ld))
}

/// The RBF kernel from dot products, in place: v[t] = exp(-gamma * q) with
/// q = (sq_x + sq[t]) - 2 v[t], the squared distance between rows whose
/// squared norms are sq_x and sq[t], taken as 0 where rounding makes it
/// negative (or NaN).
pub fn rbf_from_dots(v: &mut [f64], sq_x: f64, sq: &[f64], gamma: f64) {
    assert!(sq.len() >= v.len());
    dispatch!(rbf_from_dots(v, sq_x, sq, gamma))
}

/// g[k] += (qi[k] as f64) * ai + (qj[k] as f64) * aj for k < g.len(): the
/// gradient update of a two-variable step of the SVM solver, whose kernel
/// columns are cached in f32.
pub fn axpy2_f32(g: &mut [f64], qi: &[f32], ai: f64, qj: &[f32], aj: f64) {
    assert!(qi.len() >= g.len() && qj.len() >= g.len());
    dispatch!(axpy2_f32(g, qi, ai, qj, aj))
}

/// y[k] += x[k] * a for k < y.len(): the inner loop of a row-major matrix
/// product (crate::gaussian_costs). No reduction, so the builds agree to the bit.
pub fn axpy(y: &mut [f64], x: &[f64], a: f64) {
    assert!(x.len() >= y.len());
    dispatch!(axpy(y, x, a))
}

/// sum over r, c < d of p[r * d + c] * (s[r * d + c] + u[r] * u[c]): tr(P (S + u u'))
/// for d x d row-major P and S, the cost of one lower component under one
/// upper component in hierarchical EM (crate::hem). Two lane sums run over
/// every row's pairs of columns and a third takes odd widths' last column;
/// then (lane 0 + lane 1) + tail, the same in both builds.
pub fn trace_outer(p: &[f64], s: &[f64], u: &[f64], d: usize) -> f64 {
    assert!(p.len() >= d * d && s.len() >= d * d && u.len() >= d);
    dispatch!(trace_outer(p, s, u, d))
}

/// out[j] = sum over l < d, in order, of p[l * k + j] * (s[l] + (m[l] - c[l * k + j])^2)
/// for j < k: tr(P_j (S + (m - c_j)(m - c_j)')) for one diagonal S (d
/// variances) with mean m against k diagonal P_j with means c_j, stored
/// feature-major (d rows of k). Lanes run across j, so no sum is split.
pub fn trace_outer_diag(p: &[f64], c: &[f64], s: &[f64], m: &[f64], d: usize, k: usize, out: &mut [f64]) {
    assert!(p.len() >= d * k && c.len() >= d * k && s.len() >= d && m.len() >= d && out.len() >= k);
    dispatch!(trace_outer_diag(p, c, s, m, d, k, out))
}

/// g[k] += (q[k] as f64) * a for k < g.len().
pub fn axpy_f32(g: &mut [f64], q: &[f32], a: f64) {
    assert!(q.len() >= g.len());
    dispatch!(axpy_f32(g, q, a))
}

/// Columns per block of the assignment solver's distance array (see lsa_relax).
pub const LSA_BLOCK: usize = 8;

/// Where the smallest distance is after a relaxation: its value, the first block
/// holding it, and whether a later block holds the same value too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest {
    pub value: f64,
    pub block: usize,
    pub tied: bool,
}

impl Nearest {
    pub(crate) const NONE: Nearest = Nearest { value: f64::INFINITY, block: 0, tied: false };

    /// Takes block b's minimum x into account (blocks in increasing order).
    #[inline(always)]
    pub(crate) fn see(&mut self, b: usize, x: f64) {
        if x < self.value {
            *self = Nearest { value: x, block: b, tied: false };
        } else if x == self.value {
            self.tied = true;
        }
    }
}

/// The hot loop of the assignment solver (crate::assignment): one row's
/// relaxation of the shortest-path distances. For every column j < dist.len(),
/// r = (c[j] - v[j]) + h; where r < dist[j], or for every column when `first`
/// (a search's first row, which saves resetting dist between searches),
/// dist[j] = r and pred[j] = row. `block_min[b]` is the minimum of dist over
/// columns b * LSA_BLOCK .. + LSA_BLOCK (the last block may be shorter) and is
/// kept so (unless `first`, it must be so on entry). Returns where the smallest
/// distance is, so the caller looks at one block instead of every column. Both
/// builds write the same values (a block minimum may differ in the sign of a
/// zero, which no comparison sees) and return the same Nearest.
///
/// `live[b]` counts the columns of block b still in the search. A block whose
/// count is 0 is skipped, cost row included (one cache line of 8 values): all
/// its columns are retired (v = -inf, dist = +inf, block minimum +inf), where
/// the relaxation would change nothing. `first` reads no count.
#[allow(clippy::too_many_arguments)]
pub fn lsa_relax(c: &[f64], v: &[f64], h: f64, row: u64, first: bool, dist: &mut [f64], pred: &mut [u64], block_min: &mut [f64], live: &[u8]) -> Nearest {
    let m = dist.len();
    assert!(c.len() >= m && v.len() >= m && pred.len() >= m && block_min.len() == (m + LSA_BLOCK - 1) / LSA_BLOCK && live.len() == block_min.len());
    if first {
        dispatch!(lsa_relax::<true>(c, v, h, row, dist, pred, block_min, live))
    } else {
        dispatch!(lsa_relax::<false>(c, v, h, row, dist, pred, block_min, live))
    }
}

/// The assignment solver's column reduction, one cost row at a time: where
/// c[j] < minima[j], minima[j] = c[j] and rows[j] = row (so that after every
/// row, minima holds the column minima and rows the first row reaching each).
pub fn column_minima(c: &[f64], row: u32, minima: &mut [f64], rows: &mut [u32]) {
    assert!(c.len() == minima.len() && rows.len() == minima.len());
    dispatch!(column_minima(c, row, minima, rows))
}

/// The two smallest of c[j] - v[j] and their columns, ties to the lower
/// column: `value` at `first`, then `second_value` at `second` (the next in
/// (value, column) order; +inf at column 0 when c has one column).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoSmallest {
    pub value: f64,
    pub first: usize,
    pub second_value: f64,
    pub second: usize,
}

/// The assignment solver's scan of one row's reduced costs (see TwoSmallest).
pub fn two_smallest(c: &[f64], v: &[f64]) -> TwoSmallest {
    assert!(c.len() == v.len());
    dispatch!(two_smallest(c, v))
}

/// Runs `iters` rounds of 8 independent f64x2 multiply-adds (scalar twin: 16 scalar)
/// and returns the number of floating-point operations done; used to measure the
/// machine's peak for the benchmark's efficiency figure. `seed` keeps it from being
/// folded away; the result is returned through `sink`.
pub fn madd_peak(iters: u64, seed: f64, sink: &mut f64) -> f64 {
    dispatch!(madd_peak(iters, seed, sink))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64) / ((1u64 << 53) as f64) * 4.0 - 2.0
    }

    #[test]
    fn exp_matches_libm_within_one_ulp() {
        let mut s = 1u64;
        let mut xs: Vec<f64> = (0..20000).map(|_| lcg(&mut s) * 350.0).collect();
        xs.extend_from_slice(&[0.0, -0.0, 1.0, -1.0, 709.78, -708.0, -744.0, -745.0, 1e-300, -1e-300, 0.5 * std::f64::consts::LN_2]);
        let mut ys = xs.clone();
        exp_in_place(&mut ys);
        for (&x, &y) in xs.iter().zip(&ys) {
            let e = x.exp();
            if e == 0.0 || !e.is_normal() {
                assert!((y - e).abs() <= f64::MIN_POSITIVE * 1e-300 || (y - e).abs() <= 5e-324 * 2.0, "x={} y={} e={}", x, y, e);
            } else {
                let ulp = (y.to_bits() as i64 - e.to_bits() as i64).abs();
                assert!(ulp <= 1, "x={} y={} libm={} ulp={}", x, y, e, ulp);
            }
        }
        let mut special = [f64::NEG_INFINITY, f64::INFINITY, 710.0, -746.0, -1000.0, f64::NAN];
        exp_in_place(&mut special);
        assert_eq!(special[0], 0.0);
        assert_eq!(special[1], f64::INFINITY);
        assert_eq!(special[2], f64::INFINITY);
        assert_eq!(special[3], 0.0);
        assert_eq!(special[4], 0.0);
        assert!(special[5].is_nan());
    }

    #[test]
    fn exp_lse_matches_libm_within_one_ulp_and_flushes_below_normal() {
        // log_normalize's exp, through log_normalize itself: one component at
        // value x and one at 0, so the first responsibility is exp(x) / (1 + exp(x))
        // and, for x < -37, exactly exp(x) (1 + exp(x) rounds to 1).
        let mut s = 23u64;
        let mut xs: Vec<f64> = (0..20000).map(|_| (lcg(&mut s) - 2.0) * 177.0975).collect();
        xs.extend_from_slice(&[-37.5, -100.0, -700.0, -708.0, -708.39, -708.3899, -708.4, -745.0, -800.0, f64::NEG_INFINITY]);
        let n = xs.len();
        let mut w = xs.clone();
        w.extend(std::iter::repeat(0.0).take(n));
        let mut lse = vec![0.0; n];
        log_normalize(&mut w, n, 2, n, &mut lse);
        for (i, &x) in xs.iter().enumerate() {
            let y = w[i];
            if x < -708.39 {
                assert_eq!(y, 0.0, "x={}", x);
            } else if x < -37.0 {
                let e = x.exp();
                let ulp = (y.to_bits() as i64 - e.to_bits() as i64).abs();
                assert!(ulp <= 1 || (y - e).abs() <= 5e-324, "x={} y={} libm={} ulp={}", x, y, e, ulp);
                assert_eq!(w[n + i], 1.0);
            }
        }
        // NaN stays NaN
        let mut w = [f64::NAN, 0.0];
        let mut lse = [0.0];
        log_normalize(&mut w, 1, 2, 1, &mut lse);
        assert!(w[0].is_nan() && lse[0].is_nan());
    }

    #[test]
    fn ln_matches_libm_within_one_ulp() {
        let mut s = 17u64;
        let mut xs: Vec<f64> = (0..20000).map(|_| (lcg(&mut s) * 300.0).exp()).collect();
        xs.extend_from_slice(&[1.0, 2.0, 0.5, std::f64::consts::E, std::f64::consts::SQRT_2, 1.0 + 1e-15, 1.0 - 1e-16, f64::MAX, f64::MIN_POSITIVE, 15.0]);
        let mut ys = xs.clone();
        ln_in_place(&mut ys);
        for (&x, &y) in xs.iter().zip(&ys) {
            let e = x.ln();
            let ulp = (y.to_bits() as i64 - e.to_bits() as i64).abs();
            assert!(ulp <= 1 || (y - e).abs() < 1e-300, "x={} y={} libm={} ulp={}", x, y, e, ulp);
        }
        let mut special = [f64::NAN, f64::INFINITY];
        ln_in_place(&mut special);
        assert!(special[0].is_nan());
        assert!(special[1].is_nan() || special[1] == f64::INFINITY);
    }

    #[test]
    fn reductions_match_naive() {
        let mut s = 5u64;
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 31, 1000] {
            let a: Vec<f64> = (0..n).map(|_| lcg(&mut s)).collect();
            let b: Vec<f64> = (0..n).map(|_| lcg(&mut s)).collect();
            let naive_sum: f64 = a.iter().sum();
            let naive_dev: f64 = b.iter().map(|x| (x - 0.3) * (x - 0.3)).sum();
            assert!((sum(&a) - naive_sum).abs() < 1e-12);
            assert!((sq_dev(&b, 0.3) - naive_dev).abs() < 1e-12);
        }
    }

    #[test]
    fn sq_dist_and_tri_product_match_naive() {
        let mut s = 11u64;
        for &(n, d) in &[(1usize, 1usize), (13, 3), (37, 5), (8, 2)] {
            let x: Vec<f64> = (0..n * d).map(|_| lcg(&mut s)).collect();
            let c: Vec<f64> = (0..d).map(|_| lcg(&mut s)).collect();
            let w: Vec<f64> = (0..d).map(|_| lcg(&mut s).abs()).collect();
            let p: Vec<f64> = (0..d * d).map(|_| lcg(&mut s)).collect();
            // a block starting at row 1 of the matrix, to exercise offsets
            let len = n - 1;
            let cols = Cols::new(&x, n, 1);
            let mut out = vec![0.0; len];
            sq_dist(cols, d, len, &c, Some(&w), None, &mut out);
            let post = LogDensity { d_log_2pi: 1.5, log_det: -0.25, log_w: -2.0 };
            let mut dens = vec![0.0; len];
            sq_dist(cols, d, len, &c, Some(&w), Some(post), &mut dens);
            for i in 0..len {
                assert_eq!(dens[i], post.apply(out[i]));
            }
            for i in 0..len {
                let e: f64 = (0..d).map(|j| w[j] * (x[j * n + 1 + i] - c[j]).powi(2)).sum();
                assert!((out[i] - e).abs() < 1e-12);
            }
            for &upper in &[true, false] {
                let mut scratch = vec![0.0; 8 * d];
                let mut tile = vec![0.0; d * len];
                tri_product(cols, d, len, &c, &p, upper, &mut scratch, &mut tile);
                for i in 0..len {
                    for j in 0..d {
                        let range: Vec<usize> = if upper { (0..=j).collect() } else { (j..d).collect() };
                        let e: f64 = range.iter().map(|&l| (x[l * n + 1 + i] - c[l]) * p[l * d + j]).sum();
                        assert!((tile[j * len + i] - e).abs() < 1e-12);
                    }
                }
            }
        }
    }

    #[test]
    fn sq_dist_many_is_sq_dist_per_component() {
        let mut s = 13u64;
        for &(n, d, k) in &[(1usize, 1usize, 1usize), (20, 3, 2), (37, 5, 3), (300, 4, 5)] {
            let x: Vec<f64> = (0..n * d).map(|_| lcg(&mut s)).collect();
            let cs: Vec<f64> = (0..k * d).map(|_| lcg(&mut s)).collect();
            let ws: Vec<f64> = (0..k * d).map(|_| lcg(&mut s).abs()).collect();
            let posts: Vec<LogDensity> = (0..k).map(|c| LogDensity { d_log_2pi: 1.5, log_det: -0.25 * c as f64, log_w: -2.0 }).collect();
            let len = n - 1;
            let cols = Cols::new(&x, n, 1);
            // columns apart by more than len, so that a write past a column would show
            let stride = len + 3;
            for &(w, p) in &[(None, None), (Some(&ws[..]), None), (None, Some(&posts[..])), (Some(&ws[..]), Some(&posts[..]))] {
                let mut many = vec![7.0; k * stride];
                sq_dist_many(cols, d, len, k, &cs, w, p, &mut many, stride);
                for c in 0..k {
                    let mut one = vec![0.0; len];
                    sq_dist(cols, d, len, &cs[c * d..(c + 1) * d], w.map(|w| &w[c * d..(c + 1) * d]), p.map(|p| p[c]), &mut one);
                    assert_eq!(&many[c * stride..c * stride + len], &one[..]);
                    assert!(many[c * stride + len..(c + 1) * stride].iter().all(|&v| v == 7.0));
                }
            }
        }
    }

    #[test]
    fn moments_and_scatter_match_naive() {
        let mut s = 21u64;
        for &(d, len) in &[(1usize, 1usize), (3, 7), (4, 128), (5, 33), (2, 2)] {
            let w: Vec<f64> = (0..d * len).map(|_| lcg(&mut s)).collect();
            let t: Vec<f64> = (0..d * len).map(|_| lcg(&mut s)).collect();
            let mut out = vec![0.5; d * d];
            scatter_tile(&w, &t, d, len, &mut out);
            for j in 0..d {
                for l in 0..d {
                    let e: f64 = 0.5 + if l >= j { (0..len).map(|i| w[j * len + i] * t[l * len + i]).sum::<f64>() } else { 0.0 };
                    assert!((out[j * d + l] - e).abs() < 1e-12, "d={} len={} ({}, {})", d, len, j, l);
                }
            }
            let (m1, m2) = shifted_moments(&w[..len], &t[..len], 0.25);
            let e1: f64 = (0..len).map(|i| w[i] * (t[i] - 0.25)).sum();
            let e2: f64 = (0..len).map(|i| w[i] * (t[i] - 0.25).powi(2)).sum();
            assert!((m1 - e1).abs() < 1e-12 && (m2 - e2).abs() < 1e-12);
        }
    }

    #[test]
    fn column_minima_and_two_smallest_take_the_first_of_ties() {
        for &m in &[1usize, 2, 7, 8, 9, 23, 40] {
            // values in {0, 1, 2}: ties everywhere
            let rows: Vec<Vec<f64>> = (0..6).map(|i| (0..m).map(|j| ((i * 7 + j * 5) % 3) as f64).collect()).collect();
            let mut minima = rows[0].clone();
            let mut first = vec![0u32; m];
            for (i, r) in rows.iter().enumerate().skip(1) {
                column_minima(r, i as u32, &mut minima, &mut first);
            }
            for j in 0..m {
                let lo = rows.iter().map(|r| r[j]).fold(f64::INFINITY, f64::min);
                assert_eq!((minima[j], first[j] as usize), (lo, rows.iter().position(|r| r[j] == lo).unwrap()), "m={} j={}", m, j);
            }
            let v: Vec<f64> = (0..m).map(|j| ((j * 3) % 2) as f64).collect();
            for r in &rows {
                let h: Vec<f64> = r.iter().zip(&v).map(|(c, v)| c - v).collect();
                let mut order: Vec<usize> = (0..m).collect();
                order.sort_by(|&a, &b| h[a].partial_cmp(&h[b]).unwrap().then(a.cmp(&b)));
                let t = two_smallest(r, &v);
                assert_eq!((t.value, t.first), (h[order[0]], order[0]), "m={}", m);
                if m > 1 {
                    assert_eq!((t.second_value, t.second), (h[order[1]], order[1]), "m={}", m);
                } else {
                    assert_eq!(t.second_value, f64::INFINITY);
                }
            }
        }
    }

    #[test]
    fn lsa_relax_keeps_block_minima_and_finds_the_first_smallest() {
        let mut s = 9u64;
        for m in [1usize, 7, 8, 9, 16, 29, 64] {
            let nb = (m + LSA_BLOCK - 1) / LSA_BLOCK;
            // coarse values make ties across blocks; some columns retired (v = -inf)
            let row = |s: &mut u64| -> Vec<f64> { (0..m).map(|_| (lcg(s) * 4.0).round()).collect() };
            let v: Vec<f64> = (0..m).map(|j| if j % 5 == 3 { f64::NEG_INFINITY } else { (lcg(&mut s) * 2.0).round() }).collect();
            let (mut dist, mut pred, mut block_min) = (vec![0.0; m], vec![99u64; m], vec![0.0; nb]);
            let live = vec![LSA_BLOCK as u8; nb];
            let mut expect_dist = vec![f64::INFINITY; m];
            let mut expect_pred = vec![99u64; m];
            for (k, h) in [0.5, -1.0, 2.0, 0.0].iter().enumerate() {
                let c = row(&mut s);
                let near = lsa_relax(&c, &v, *h, k as u64, k == 0, &mut dist, &mut pred, &mut block_min, &live);
                for j in 0..m {
                    let r = (c[j] - v[j]) + h;
                    if k == 0 || r < expect_dist[j] {
                        expect_dist[j] = r;
                        expect_pred[j] = k as u64;
                    }
                }
                assert_eq!(dist, expect_dist, "m={} step {}", m, k);
                for j in 0..m {
                    if expect_dist[j] < f64::INFINITY {
                        assert_eq!(pred[j], expect_pred[j]);
                    }
                }
                for b in 0..nb {
                    let lo = expect_dist[b * LSA_BLOCK..((b + 1) * LSA_BLOCK).min(m)].iter().cloned().fold(f64::INFINITY, f64::min);
                    assert_eq!(block_min[b], lo);
                }
                let lowest = expect_dist.iter().cloned().fold(f64::INFINITY, f64::min);
                let first = expect_dist.iter().position(|&d| d == lowest).unwrap() / LSA_BLOCK;
                let blocks_at_lowest = (0..nb).filter(|&b| block_min[b] == lowest).count();
                assert_eq!(near, Nearest { value: lowest, block: first, tied: blocks_at_lowest > 1 }, "m={} step {}", m, k);
            }
        }
    }

    #[test]
    fn log_normalize_matches_naive() {
        let mut s = 3u64;
        let (n, k) = (11, 4);
        let w0: Vec<f64> = (0..n * k).map(|_| lcg(&mut s) * 300.0).collect();
        let mut w = w0.clone();
        let mut lse = vec![0.0; n];
        log_normalize(&mut w, n, k, n, &mut lse);
        for i in 0..n {
            let m = (0..k).map(|c| w0[c * n + i]).fold(f64::NEG_INFINITY, f64::max);
            let e = m + (0..k).map(|c| (w0[c * n + i] - m).exp()).sum::<f64>().ln();
            assert!((lse[i] - e).abs() < 1e-12 * e.abs().max(1.0));
            let total: f64 = (0..k).map(|c| w[c * n + i]).sum();
            assert!((total - 1.0).abs() < 1e-14);
            for c in 0..k {
                let r = (w0[c * n + i] - lse[i]).exp();
                assert!((w[c * n + i] - r).abs() <= 1e-13 * r.max(1e-300));
            }
        }
    }
}

// Last in the file, so that no line above moves (panic locations are in the builds' data).
#[cfg(fedmix_relaxed)]
pub(crate) mod relaxed;

/// True in the relaxed-SIMD build (scripts/build-wasm.sh passes `--cfg fedmix_relaxed`
/// to the modules it builds a third time), whose kernels fuse multiply-adds.
pub const RELAXED: bool = cfg!(fedmix_relaxed);
