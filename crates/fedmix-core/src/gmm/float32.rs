//! EM in single precision (GaussianMixture's `precision: 'float32'`): the
//! rows are copied to f32 once per fit, and each E-step (log densities,
//! log-sum-exp, responsibilities) and the statistics it feeds are computed on
//! four f32 lanes (nn::lanes::F4: f32x4 in the SIMD build, its scalar twin
//! otherwise, the same operations in the same order, so the two builds agree
//! to the bit). Everything else is fit.rs's f64 code: initialization, the
//! M-step (per-block f32 sums are added into f64 statistics, about the
//! component means, so the f64 M-step's cancellation stays small), the
//! Cholesky factors and the stored model.
//!
//! Speed comes from twice the lanes per operation, from diagonal scores that
//! load each row chunk once for four components (as kernels::sq_dist_many
//! does for two in f64), from keeping subnormal numbers out of the hot loops
//! (responsibilities below e^-64 flushed to zero, exponentials below e^-70
//! taken as zero: subnormal results are slow on every CPU) and from skipping,
//! per block, the statistics of a component every row of the block gives no
//! mass. The
//! per-block work is in functions called once per block (not one loop per
//! fit) so that V8 optimizes them early: it tiers up a WASM function when it
//! is called again, never in the middle of a call.
//!
//! Where f32 is not enough: log densities carry about 6e-8 of their
//! magnitude in rounding, and the squared Mahalanobis distances of a full
//! covariance whose condition number approaches 1e6 lose most of their
//! digits (the precision factor's entries are then large and cancel).

use super::estep::BLOCK;
use super::fit::{self, FitOptions, FitResult};
use super::stats::SuffStats;
use super::{CovarianceType, Gmm};
use crate::alloc;
use crate::data::Data;
use crate::error::Result;
use crate::nn::lanes::F4;
use crate::rng::Rng;

/// The smallest responsibility kept, e^-64: far above f32's smallest normal
/// number (1.2e-38), also after a product with a data value.
const FLUSH_BELOW: f32 = 1.603_810_9e-28;

/// Where the log-sum-exp takes e^(lp - top) as 0: a responsibility that
/// small (e^-70 over a row sum of at least 1) is flushed anyway, and exp is
/// never asked for less. Below about -87.3 the exponential is subnormal, and
/// an operation that makes a subnormal number is many times slower (a
/// microcode assist on x86): with such lanes in most rows (components far
/// from the rows, bench/gmm-float32.mjs at d = 10) they cost about a fifth of
/// an iteration. Only the row sums could see the values dropped (each below
/// 4e-31, and the sum ends at 1 or more), so the results stay the same to the
/// bit but for exact rounding ties (tests: the_exp_floor_changes_no_responsibility).
const EXP_FLOOR: f32 = -70.0;

/// The rows as f32, column-major, each column padded with zeros to a
/// multiple of 8 rows (the kernels' unit), so no kernel has a tail.
pub struct Rows32 {
    x: Vec<f32>,
    n: usize,
    stride: usize,
}

impl Rows32 {
    pub fn new(x: &Data) -> Result<Self> {
        let stride = (x.n + 7) / 8 * 8;
        let mut v = alloc::filled(0.0f32, alloc::cells(stride, x.d, 4)?)?;
        for j in 0..x.d {
            for (o, &a) in v[j * stride..j * stride + x.n].iter_mut().zip(x.col(j)) {
                *o = a as f32;
            }
        }
        Ok(Rows32 { x: v, n: x.n, stride })
    }

    /// Bytes a copy of n rows of d features takes (for the callers' memory checks).
    pub fn bytes(n: usize, d: usize) -> usize {
        4 * ((n + 7) / 8 * 8) * d
    }
}

/// One E-step's model in f32.
struct Model32 {
    cov_type: CovarianceType,
    k: usize,
    d: usize,
    means: Vec<f32>,
    /// per component: -0.5 d ln 2 pi + log det P + log w
    constant: Vec<f32>,
    /// diag/spherical: precisions (k x d, spherical expanded); full/tied: the
    /// factor's columns, column l of component c at (c d + l) d, and the rows
    /// [lo, hi) of column l that can be nonzero (upper or lower triangle)
    prec: Vec<f32>,
    range: Vec<(usize, usize)>,
}

impl Model32 {
    fn new(g: &Gmm) -> Result<Self> {
        let (k, d) = (g.k, g.d);
        let log_det = g.log_det_chol();
        let d_log_2pi = d as f64 * (2.0 * std::f64::consts::PI).ln();
        let constant = alloc::collect((0..k).map(|c| (-0.5 * d_log_2pi + log_det[c] + g.weights[c].ln()) as f32))?;
        let pc = &g.precisions_chol;
        let (prec, range) = match g.cov_type {
            CovarianceType::Diag => (alloc::collect(pc.iter().map(|v| (v * v) as f32))?, Vec::new()),
            CovarianceType::Spherical => (alloc::collect((0..k * d).map(|i| (pc[i / d] * pc[i / d]) as f32))?, Vec::new()),
            CovarianceType::Full | CovarianceType::Tied => {
                let m = if g.cov_type == CovarianceType::Full { k } else { 1 };
                let mut cols = alloc::filled(0.0f32, m * d * d)?;
                let mut range = Vec::with_capacity(m * d);
                for c in 0..m {
                    let p = &pc[c * d * d..(c + 1) * d * d];
                    let upper = crate::linalg::triangle(p, d) == Some(true);
                    for l in 0..d {
                        for j in 0..d {
                            cols[(c * d + l) * d + j] = p[j * d + l] as f32;
                        }
                        range.push(if upper { (0, l + 1) } else { (l, d) });
                    }
                }
                (cols, range)
            }
        };
        Ok(Model32 { cov_type: g.cov_type, k, d, means: alloc::collect(g.means.iter().map(|&v| v as f32))?, constant, prec, range })
    }
}

/// Buffers of one fit: a block's log densities, then responsibilities (k x
/// BLOCK), its per-row log-likelihoods, and the centered (t) and weighted (w)
/// rows of one component (d x BLOCK).
pub struct Buffers32 {
    lp: Vec<f32>,
    lse: Vec<f32>,
    t: Vec<f32>,
    w: Vec<f32>,
}

impl Buffers32 {
    pub fn new(k: usize, d: usize) -> Result<Self> {
        Ok(Buffers32 { lp: alloc::filled(0.0f32, k * BLOCK)?, lse: alloc::filled(0.0f32, BLOCK)?, t: alloc::filled(0.0f32, d * BLOCK)?, w: alloc::filled(0.0f32, d * BLOCK)? })
    }
}

/// t[j][i] = x[j][i0 + i] - mu[j] for the `len` rows (a multiple of 8) of a block.
#[inline(always)]
unsafe fn center(x: &Rows32, i0: usize, len: usize, mu: &[f32], t: *mut f32) {
    for (j, &m) in mu.iter().enumerate() {
        let src = x.x.as_ptr().add(j * x.stride + i0);
        let dst = t.add(j * BLOCK);
        let m = F4::splat(m);
        let mut i = 0;
        while i < len {
            F4::load(src.add(i)).sub(m).store(dst.add(i));
            F4::load(src.add(i + 4)).sub(m).store(dst.add(i + 4));
            i += 8;
        }
    }
}

/// Log densities of rows [i0, i0 + len) (len a multiple of 8) into b.lp.
#[inline(never)]
fn score_block(x: &Rows32, i0: usize, len: usize, m: &Model32, b: &mut Buffers32) {
    let (k, d) = (m.k, m.d);
    assert!(len % 8 == 0 && len <= BLOCK && i0 + len <= x.stride && b.lp.len() >= k * BLOCK);
    if matches!(m.cov_type, CovarianceType::Diag | CovarianceType::Spherical) {
        // components four at a time while they last, then two, then one
        let lp = b.lp.as_mut_ptr();
        let mut c = 0;
        unsafe {
            while c + 4 <= k {
                diag_scores::<4>(x, i0, len, m, c, lp);
                c += 4;
            }
            if c + 2 <= k {
                diag_scores::<2>(x, i0, len, m, c, lp);
                c += 2;
            }
            if c < k {
                diag_scores::<1>(x, i0, len, m, c, lp);
            }
        }
        return;
    }
    let half = F4::splat(-0.5);
    let t = b.t.as_mut_ptr();
    unsafe {
        for c in 0..k {
            let out = b.lp.as_mut_ptr().add(c * BLOCK);
            let konst = F4::splat(m.constant[c]);
            let mu = &m.means[c * d..(c + 1) * d];
            let f = if m.cov_type == CovarianceType::Full { c } else { 0 };
            center(x, i0, len, mu, t);
            let range = &m.range[f * d..(f + 1) * d];
            let cols = m.prec.as_ptr().add(f * d * d);
            let mut i = 0;
            while i < len {
                let (mut q0, mut q1) = (F4::zero(), F4::zero());
                // two columns of the factor at a time: each load of t serves both
                // (four independent sums), then each column's rows the other lacks
                let mut l = 0;
                while l + 2 <= d {
                    let ((alo, ahi), (blo, bhi)) = (range[l], range[l + 1]);
                    let (ca, cb) = (cols.add(l * d), cols.add((l + 1) * d));
                    let (lo, hi) = (alo.max(blo), ahi.min(bhi));
                    let (mut za0, mut za1, mut zb0, mut zb1) = (F4::zero(), F4::zero(), F4::zero(), F4::zero());
                    for j in lo..hi {
                        let (pa, pb) = (F4::splat(*ca.add(j)), F4::splat(*cb.add(j)));
                        let tj = t.add(j * BLOCK + i);
                        let (t0, t1) = (F4::load(tj), F4::load(tj.add(4)));
                        za0 = za0.add(t0.mul(pa));
                        za1 = za1.add(t1.mul(pa));
                        zb0 = zb0.add(t0.mul(pb));
                        zb1 = zb1.add(t1.mul(pb));
                    }
                    for j in (alo..lo).chain(hi.max(alo)..ahi) {
                        let pa = F4::splat(*ca.add(j));
                        let tj = t.add(j * BLOCK + i);
                        za0 = za0.add(F4::load(tj).mul(pa));
                        za1 = za1.add(F4::load(tj.add(4)).mul(pa));
                    }
                    for j in (blo..lo).chain(hi.max(blo)..bhi) {
                        let pb = F4::splat(*cb.add(j));
                        let tj = t.add(j * BLOCK + i);
                        zb0 = zb0.add(F4::load(tj).mul(pb));
                        zb1 = zb1.add(F4::load(tj.add(4)).mul(pb));
                    }
                    q0 = q0.add(za0.mul(za0)).add(zb0.mul(zb0));
                    q1 = q1.add(za1.mul(za1)).add(zb1.mul(zb1));
                    l += 2;
                }
                if l < d {
                    let (lo, hi) = range[l];
                    let col = cols.add(l * d);
                    let (mut z0, mut z1) = (F4::zero(), F4::zero());
                    for j in lo..hi {
                        let pj = F4::splat(*col.add(j));
                        let tj = t.add(j * BLOCK + i);
                        z0 = z0.add(F4::load(tj).mul(pj));
                        z1 = z1.add(F4::load(tj.add(4)).mul(pj));
                    }
                    q0 = q0.add(z0.mul(z0));
                    q1 = q1.add(z1.mul(z1));
                }
                konst.add(half.mul(q0)).store(out.add(i));
                konst.add(half.mul(q1)).store(out.add(i + 4));
                i += 8;
            }
        }
    }
}

/// Diagonal (and spherical) log densities of components c0..c0 + C for rows
/// [i0, i0 + len) (len a multiple of 8) into lp (component c at c BLOCK):
/// each pair of four-row loads of a feature serves the C components, so a
/// block's rows are read k / C times instead of k. Every output keeps the
/// one-component order (features ascending, then constant - q / 2), so C
/// changes no bit.
#[inline(always)]
unsafe fn diag_scores<const C: usize>(x: &Rows32, i0: usize, len: usize, m: &Model32, c0: usize, lp: *mut f32) {
    let d = m.d;
    assert!(len % 8 == 0 && len <= BLOCK && i0 + len <= x.stride && (c0 + C) * d <= m.means.len() && (c0 + C) * d <= m.prec.len());
    let half = F4::splat(-0.5);
    let (mu, p) = (m.means.as_ptr().add(c0 * d), m.prec.as_ptr().add(c0 * d));
    let mut i = 0;
    while i < len {
        let mut q = [[F4::zero(); 2]; C];
        let src = x.x.as_ptr().add(i0 + i);
        for j in 0..d {
            let s = src.add(j * x.stride);
            let (x0, x1) = (F4::load(s), F4::load(s.add(4)));
            for (c, q) in q.iter_mut().enumerate() {
                let (mj, pj) = (F4::splat(*mu.add(c * d + j)), F4::splat(*p.add(c * d + j)));
                let (a, e) = (x0.sub(mj), x1.sub(mj));
                q[0] = q[0].add(a.mul(a).mul(pj));
                q[1] = q[1].add(e.mul(e).mul(pj));
            }
        }
        for (c, q) in q.iter().enumerate() {
            let konst = F4::splat(m.constant[c0 + c]);
            let out = lp.add((c0 + c) * BLOCK + i);
            konst.add(half.mul(q[0])).store(out);
            konst.add(half.mul(q[1])).store(out.add(4));
        }
        i += 8;
    }
}

/// Turns b.lp (len rows, a multiple of 8) into responsibilities in place and
/// b.lse into each row's log-likelihood: the log-sum-exp about each row's
/// largest log density (one exp per value: e^(lp - top), kept, then divided
/// by the row's sum); responsibilities below e^-64 become 0, and so does
/// e^(lp - top) below e^EXP_FLOOR (its responsibility would be flushed).
#[inline(never)]
fn normalize_block(k: usize, len: usize, b: &mut Buffers32) {
    assert!(len % 4 == 0 && len <= BLOCK && b.lp.len() >= k * BLOCK);
    let lp = b.lp.as_mut_ptr();
    let flush = F4::splat(FLUSH_BELOW);
    let floor = F4::splat(EXP_FLOOR);
    let one = F4::splat(1.0);
    unsafe {
        let mut i = 0;
        while i < len {
            let mut top = F4::load(lp.add(i));
            for c in 1..k {
                top = top.pmax(F4::load(lp.add(c * BLOCK + i)));
            }
            let mut s = F4::zero();
            for c in 0..k {
                let p = lp.add(c * BLOCK + i);
                let v = F4::load(p).sub(top);
                let e = v.pmax(floor).exp_in_range().zero_below(v, floor);
                e.store(p);
                s = s.add(e);
            }
            top.add(s.ln()).store(b.lse.as_mut_ptr().add(i));
            let inv = one.div(s);
            for c in 0..k {
                let p = lp.add(c * BLOCK + i);
                let r = F4::load(p).mul(inv);
                r.zero_below(r, flush).store(p);
            }
            i += 4;
        }
    }
}

/// Sum of the `len` values at p (a multiple of 8), as two four-lane accumulators.
#[inline(always)]
unsafe fn sum8(p: *const f32, len: usize) -> f32 {
    let (mut a, mut b) = (F4::zero(), F4::zero());
    let mut i = 0;
    while i < len {
        a = a.add(F4::load(p.add(i)));
        b = b.add(F4::load(p.add(i + 4)));
        i += 8;
    }
    a.add(b).sum()
}

/// Adds the block's statistics (responsibilities in b.lp, rows [i0, i0 + len))
/// to `st`: each sum over the block in f32, added to the f64 totals.
#[inline(never)]
fn add_block_stats(x: &Rows32, i0: usize, len: usize, m: &Model32, b: &mut Buffers32, st: &mut SuffStats) {
    let (k, d) = (m.k, m.d);
    assert!(len % 8 == 0 && len <= BLOCK && i0 + len <= x.stride && b.t.len() >= d * BLOCK && b.w.len() >= d * BLOCK);
    let (t, w) = (b.t.as_mut_ptr(), b.w.as_mut_ptr());
    unsafe {
        for c in 0..k {
            let r = b.lp.as_ptr().add(c * BLOCK);
            let nk = sum8(r, len);
            if nk == 0.0 {
                continue; // the block gives this component nothing: every sum below is 0
            }
            st.nk[c] += nk as f64;
            let mu = &m.means[c * d..(c + 1) * d];
            if matches!(m.cov_type, CovarianceType::Diag | CovarianceType::Spherical) {
                // one pass per feature, nothing stored: t = x - mu, w = r t, sums of w and w t
                for (j, &mj) in mu.iter().enumerate() {
                    let src = x.x.as_ptr().add(j * x.stride + i0);
                    let mj = F4::splat(mj);
                    let (mut a0, mut a1, mut b0, mut b1) = (F4::zero(), F4::zero(), F4::zero(), F4::zero());
                    let mut i = 0;
                    while i < len {
                        let t0 = F4::load(src.add(i)).sub(mj);
                        let t1 = F4::load(src.add(i + 4)).sub(mj);
                        let w0 = F4::load(r.add(i)).mul(t0);
                        let w1 = F4::load(r.add(i + 4)).mul(t1);
                        a0 = a0.add(w0);
                        a1 = a1.add(w1);
                        b0 = b0.add(w0.mul(t0));
                        b1 = b1.add(w1.mul(t1));
                        i += 8;
                    }
                    st.s1[c * d + j] += a0.add(a1).sum() as f64;
                    st.s2[c * d + j] += b0.add(b1).sum() as f64;
                }
                continue;
            }
            center(x, i0, len, mu, t);
            for j in 0..d {
                let (tj, wj) = (t.add(j * BLOCK), w.add(j * BLOCK));
                let (mut a0, mut a1) = (F4::zero(), F4::zero());
                let mut i = 0;
                while i < len {
                    let w0 = F4::load(r.add(i)).mul(F4::load(tj.add(i)));
                    let w1 = F4::load(r.add(i + 4)).mul(F4::load(tj.add(i + 4)));
                    w0.store(wj.add(i));
                    w1.store(wj.add(i + 4));
                    a0 = a0.add(w0);
                    a1 = a1.add(w1);
                    i += 8;
                }
                st.s1[c * d + j] += a0.add(a1).sum() as f64;
            }
            match m.cov_type {
                CovarianceType::Tied | CovarianceType::Diag | CovarianceType::Spherical => {}
                CovarianceType::Full => {
                    let s2 = &mut st.s2[c * d * d..(c + 1) * d * d];
                    for j in 0..d {
                        let wj = w.add(j * BLOCK);
                        // four columns at a time: one load of w_j serves four products
                        let mut l = j;
                        while l + 4 <= d {
                            let v = dot4(wj, t.add(l * BLOCK), len);
                            for (a, x) in v.iter().enumerate() {
                                s2[j * d + l + a] += *x as f64;
                            }
                            l += 4;
                        }
                        while l < d {
                            s2[j * d + l] += dot(wj, t.add(l * BLOCK), len) as f64;
                            l += 1;
                        }
                    }
                }
            }
        }
    }
}

/// sum_i a[i] b[i] over `len` values (a multiple of 8).
#[inline(always)]
unsafe fn dot(a: *const f32, b: *const f32, len: usize) -> f32 {
    let (mut s0, mut s1) = (F4::zero(), F4::zero());
    let mut i = 0;
    while i < len {
        s0 = s0.add(F4::load(a.add(i)).mul(F4::load(b.add(i))));
        s1 = s1.add(F4::load(a.add(i + 4)).mul(F4::load(b.add(i + 4))));
        i += 8;
    }
    s0.add(s1).sum()
}

/// dot(a, t + a' BLOCK) for a' in 0..4: four rows of t (each BLOCK apart) against a.
#[inline(always)]
unsafe fn dot4(a: *const f32, t: *const f32, len: usize) -> [f32; 4] {
    let mut s = [F4::zero(); 4];
    let mut i = 0;
    while i < len {
        let v = F4::load(a.add(i));
        for (q, s) in s.iter_mut().enumerate() {
            *s = s.add(v.mul(F4::load(t.add(q * BLOCK + i))));
        }
        i += 4;
    }
    [s[0].sum(), s[1].sum(), s[2].sum(), s[3].sum()]
}

/// The E-step under `g` in f32 and its statistics (about the model's means, as
/// SuffStats::from_e_step), and the sum of the rows' log-likelihoods (in f64).
pub fn e_step(x: &Rows32, g: &Gmm, b: &mut Buffers32) -> Result<(SuffStats, f64)> {
    let m = Model32::new(g)?;
    let mut st = SuffStats::new(g.cov_type, g.k, g.d, alloc::copy(&g.means)?)?;
    let mut total = 0.0f64;
    let mut i0 = 0;
    while i0 < x.n {
        let len = BLOCK.min(x.stride - i0);
        let rows = len.min(x.n - i0);
        score_block(x, i0, len, &m, b);
        normalize_block(m.k, len, b);
        // the padding rows (past n) count for nothing
        for c in 0..m.k {
            b.lp[c * BLOCK + rows..c * BLOCK + len].iter_mut().for_each(|r| *r = 0.0);
        }
        total += b.lse[..rows].iter().map(|&v| v as f64).sum::<f64>();
        add_block_stats(x, i0, len, &m, b, &mut st);
        i0 += len;
    }
    Ok((st, total))
}

/// fit::fit with the E-step in f32 (the same checks, initialization, restarts
/// and M-steps in f64).
pub fn fit(x: &Data, o: &FitOptions, warm: Option<(&Gmm, f64)>, rng: &mut Rng) -> Result<FitResult> {
    fit::check_fit(x, o, warm.map(|(g, _)| g))?;
    let rows = Rows32::new(x)?;
    let mut b = Buffers32::new(o.n_components, x.d)?;
    fit::fit_with(x, o, warm, rng, &mut |g, _| e_step(&rows, g, &mut b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmm::estep::BlockBuffers;
    use crate::gmm::stats::Tiles;

    fn blobs(n: usize, d: usize, k: usize, rng: &mut Rng) -> Vec<f64> {
        let mut v = vec![0.0; n * d];
        for i in 0..n {
            let c = i % k;
            for j in 0..d {
                v[j * n + i] = 4.0 * ((c * 7 + j * 3) % 5) as f64 + rng.normal() * (1.0 + 0.2 * j as f64);
            }
        }
        v
    }

    /// One f32 E-step agrees with the f64 one (statistics and log-likelihood)
    /// to f32 rounding, for every covariance type, with a partial last block
    /// and padding rows.
    #[test]
    fn e_step_agrees_with_f64() {
        let (n, d, k) = (2 * BLOCK + 45, 5, 3);
        let mut rng = Rng::new(3);
        let v = blobs(n, d, k, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        let rows = Rows32::new(&x).unwrap();
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: k, covariance_type: t, max_iter: 2, ..Default::default() };
            let g = fit::fit(&x, &o, None, &mut Rng::new(1)).unwrap().gmm;
            let (a, ta) = SuffStats::from_e_step(&x, &g, &mut BlockBuffers::new(k, d).unwrap(), &mut Tiles::new(d).unwrap()).unwrap();
            let (b, tb) = e_step(&rows, &g, &mut Buffers32::new(k, d).unwrap()).unwrap();
            assert!((ta - tb).abs() < 1e-5 * ta.abs(), "{:?}: {} vs {}", t, ta, tb);
            for (p, q) in a.nk.iter().zip(&b.nk) {
                assert!((p - q).abs() < 1e-4 * p.max(1.0), "{:?} nk {} vs {}", t, p, q);
            }
            let scale: f64 = a.s2.iter().fold(1.0, |m, v| m.max(v.abs()));
            for (p, q) in a.s1.iter().chain(&a.s2).zip(b.s1.iter().chain(&b.s2)) {
                assert!((p - q).abs() < 1e-4 * scale, "{:?}: {} vs {}", t, p, q);
            }
        }
    }

    #[test]
    fn fit_agrees_with_f64() {
        let (n, d, k) = (1500, 4, 3);
        let mut rng = Rng::new(11);
        let v = blobs(n, d, k, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        for t in CovarianceType::ALL {
            let o = FitOptions { n_components: k, covariance_type: t, tol: 1e-6, max_iter: 200, ..Default::default() };
            let a = fit::fit(&x, &o, None, &mut Rng::new(2)).unwrap();
            let b = fit(&x, &o, None, &mut Rng::new(2)).unwrap();
            assert!((a.lower_bound - b.lower_bound).abs() < 1e-5 * a.lower_bound.abs(), "{:?}: {} vs {}", t, a.lower_bound, b.lower_bound);
            for (p, q) in a.gmm.means.iter().zip(&b.gmm.means) {
                assert!((p - q).abs() < 1e-3, "{:?}: means {} vs {}", t, p, q);
            }
        }
    }

    /// Components scored four, two or one at a time (k = 7: one group of
    /// each) give the same bits as one at a time.
    #[test]
    fn grouped_components_change_no_bit() {
        let (n, d, k) = (2 * BLOCK + 40, 7, 7);
        let mut rng = Rng::new(5);
        let v = blobs(n, d, k, &mut rng);
        let x = Data::new(&v, n, d).unwrap();
        let rows = Rows32::new(&x).unwrap();
        for t in [CovarianceType::Diag, CovarianceType::Spherical] {
            let o = FitOptions { n_components: k, covariance_type: t, max_iter: 2, ..Default::default() };
            let m = Model32::new(&fit::fit(&x, &o, None, &mut Rng::new(1)).unwrap().gmm).unwrap();
            let mut b = Buffers32::new(k, d).unwrap();
            let mut one = vec![0.0f32; k * BLOCK];
            for i0 in [0, BLOCK, 2 * BLOCK] {
                let len = BLOCK.min(rows.stride - i0);
                score_block(&rows, i0, len, &m, &mut b);
                for c in 0..k {
                    unsafe { diag_scores::<1>(&rows, i0, len, &m, c, one.as_mut_ptr()) };
                }
                for c in 0..k {
                    let (p, q) = (&b.lp[c * BLOCK..c * BLOCK + len], &one[c * BLOCK..c * BLOCK + len]);
                    assert!(p.iter().zip(q).all(|(p, q)| p.to_bits() == q.to_bits()), "{:?} block {} component {}", t, i0, c);
                }
            }
        }
    }

    /// e^(lp - top) below e^EXP_FLOOR taken as 0 leaves every responsibility
    /// and row log-likelihood as exp's own small values give them (rows whose
    /// log densities spread over [-200, 0], so every case occurs).
    #[test]
    fn the_exp_floor_changes_no_responsibility() {
        let k = 6;
        let mut rng = Rng::new(8);
        let mut b = Buffers32::new(k, 1).unwrap();
        for v in b.lp.iter_mut() {
            *v = (-200.0 * rng.next_f64().powi(3)) as f32;
        }
        let lp0 = b.lp.clone();
        normalize_block(k, BLOCK, &mut b);
        let mut subnormal = 0;
        for i in 0..BLOCK {
            let top = (0..k).map(|c| lp0[c * BLOCK + i]).fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = (0..k).map(|c| crate::nn::lanes::exp(lp0[c * BLOCK + i] - top)).collect();
            subnormal += e.iter().filter(|e| **e != 0.0 && !e.is_normal()).count();
            let s = e.iter().fold(0.0f32, |s, e| s + e);
            let (inv, lse) = (1.0 / s, top + crate::nn::lanes::ln(s));
            assert_eq!(b.lse[i].to_bits(), lse.to_bits(), "row {}", i);
            for c in 0..k {
                let r = e[c] * inv;
                let r = if r < FLUSH_BELOW { 0.0 } else { r };
                assert_eq!(b.lp[c * BLOCK + i].to_bits(), r.to_bits(), "row {} component {}", i, c);
            }
        }
        assert!(subnormal > 20, "{} subnormal exponentials", subnormal);
    }

    #[test]
    fn tiny_responsibilities_are_flushed_to_zero() {
        // two far blobs: every row's responsibility for the other is below e^-64
        let n = 64;
        let v: Vec<f64> = (0..n).map(|i| if i < 32 { i as f64 * 0.01 } else { 100.0 + i as f64 * 0.01 }).collect();
        let x = Data::new(&v, n, 1).unwrap();
        let g = Gmm::from_covariances(CovarianceType::Diag, 2, 1, vec![0.5, 0.5], vec![0.15, 100.5], vec![0.1, 0.1]).unwrap();
        let rows = Rows32::new(&x).unwrap();
        let mut b = Buffers32::new(2, 1).unwrap();
        let (st, _) = e_step(&rows, &g, &mut b).unwrap();
        assert_eq!(st.nk, vec![32.0, 32.0]);
    }
}
