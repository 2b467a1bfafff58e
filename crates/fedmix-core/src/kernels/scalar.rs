//! Scalar twins of the SIMD kernels. The operation order mirrors simd.rs lane for
//! lane (see mod.rs); change both together. Also the tails of the SIMD loops.

use super::{Cols, LogDensity, Nearest, TwoSmallest, LSA_BLOCK};

// exp: argument reduction x = k ln2 + r with |r| <= ln2/2, then
// e^r = 1 + (r + r^2 q(r)) with q the Taylor polynomial 1/2! + r/3! + ... + r^11/13!
// (truncation error below 1e-17) evaluated by Estrin's scheme (depth 4, where
// Horner's is 11 dependent steps), then scaling by 2^k as two factors 2^k1 2^k2
// so that subnormal results come out right. Each 2^ki is built by adding
// 2^52 + 1023 to ki as a float, which puts ki + 1023 in the low bits, and
// shifting those into the exponent field: no float-to-int conversions, which
// engines lower poorly for f64x2. Out-of-range arguments are computed with
// garbage and then masked to 0 or +inf; NaN stays NaN. Within 1 ulp (tested).
pub(crate) const EXP_LO: f64 = -745.2; // below this exp(x) rounds to 0
pub(crate) const EXP_HI: f64 = 709.8; // above ln(f64::MAX) = 709.78 it overflows to inf
pub(crate) const INV_LN2: f64 = 1.442_695_040_888_963_387_00e+00;
pub(crate) const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
pub(crate) const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
/// Adding and subtracting 1.5 * 2^52 rounds to the nearest integer, ties to even,
/// the same in both builds (f64::round rounds ties away from zero).
pub(crate) const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// 2^52 + 1023: integer k + this has k + 1023 in its low mantissa bits.
pub(crate) const EXPONENT_MAGIC: f64 = 4_503_599_627_371_519.0;
/// 1/n! for n = 2..=13
pub(crate) const EXP_TAYLOR: [f64; 12] = [
    0.5,
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
];

#[inline(always)]
fn pow2_int(kf: f64) -> f64 {
    f64::from_bits((kf + EXPONENT_MAGIC).to_bits() << 52)
}

#[inline(always)]
pub fn exp(x: f64) -> f64 {
    let kf = (x * INV_LN2 + ROUND_MAGIC) - ROUND_MAGIC;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    // Estrin's scheme (mirrored in simd.rs)
    let c = &EXP_TAYLOR;
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let p0 = c[0] + c[1] * r;
    let p1 = c[2] + c[3] * r;
    let p2 = c[4] + c[5] * r;
    let p3 = c[6] + c[7] * r;
    let p4 = c[8] + c[9] * r;
    let p5 = c[10] + c[11] * r;
    let q0 = p0 + p1 * r2;
    let q1 = p2 + p3 * r2;
    let q2 = p4 + p5 * r2;
    let q = (q0 + q1 * r4) + q2 * r8;
    let y = 1.0 + (r + r2 * q);
    let k1 = (kf * 0.5).floor();
    let k2 = kf - k1;
    let v = y * pow2_int(k1) * pow2_int(k2);
    if x < EXP_LO {
        0.0
    } else if EXP_HI < x {
        f64::INFINITY
    } else {
        v
    }
}

// exp_lse: the exp of log-sum-exp (log_normalize), whose arguments are
// x - max <= 0 (or NaN). Cheaper than exp where that range allows: the same
// reduction, a degree-11 minimax polynomial (relative error 3.7e-18 on
// |r| <= ln2/2 + 0.001, from a Remez fit in mpmath) in place of the degree-13
// Taylor one, and one scaling by 2^k whose bits come straight from the
// rounding sum t = x / ln2 + 1.5 * 2^52 (its low mantissa bits hold k; shifted
// into the exponent field and biased by an integer add): no floor, no second
// factor, no overflow mask. Results below 2^-1022 (x < EXP_LSE_LO) are flushed
// to 0 where exp would give a subnormal: a responsibility below 2.2e-308.
// Within 0.95 ulp of mpmath over [-708.39, 0] (500,000 points; scripts/exp-lse-error.py).
pub(crate) const EXP_LSE_LO: f64 = -708.39; // above ln(f64::MIN_POSITIVE) = -708.3964: k >= -1022
/// c2..c11 of e^r ~ 1 + r + r^2 (c2 + c3 r + ... + c11 r^9), minimax on |r| <= ln2/2 + 0.001
pub(crate) const EXP_MINIMAX: [f64; 10] = [
    0.5000000000000011,
    0.16666666666666405,
    0.04166666666652714,
    0.008333333333498082,
    0.0013888888944539647,
    0.0001984126950093998,
    2.4801492055793116e-05,
    2.755758937945233e-06,
    2.7630651830480813e-07,
    2.4999763365861458e-08,
];

#[inline(always)]
pub(crate) fn exp_lse(x: f64) -> f64 {
    let t = x * INV_LN2 + ROUND_MAGIC;
    let kf = t - ROUND_MAGIC;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    // Estrin's scheme (mirrored in simd.rs)
    let c = &EXP_MINIMAX;
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let p0 = c[0] + c[1] * r;
    let p1 = c[2] + c[3] * r;
    let p2 = c[4] + c[5] * r;
    let p3 = c[6] + c[7] * r;
    let p4 = c[8] + c[9] * r;
    let q = ((p0 + p1 * r2) + (p2 + p3 * r2) * r4) + p4 * r8;
    let y = 1.0 + (r + r2 * q);
    let v = y * f64::from_bits((t.to_bits() << 52).wrapping_add(ONE_BITS));
    if x < EXP_LSE_LO {
        0.0
    } else {
        v
    }
}

// ln for positive normal numbers (what log-sum-exp needs: sums of exps that
// include exp(0) = 1): x = 2^e m with m in [sqrt(2)/2, sqrt(2)), f = m - 1,
// s = f / (2 + f), and fdlibm's e_log.c polynomial in s^2 (below 1 ulp).
// The exponent and mantissa come from bit operations, e as a float through the
// same magic-number trick as exp. NaN and infinity propagate; zero, negative and
// subnormal inputs are outside its domain.
pub(crate) const LG: [f64; 7] = [
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
];
pub(crate) const SQRT2: f64 = std::f64::consts::SQRT_2;
pub(crate) const MANTISSA_MASK: u64 = 0x000F_FFFF_FFFF_FFFF;
pub(crate) const ONE_BITS: u64 = 0x3FF0_0000_0000_0000;
/// 2^52 as bits: or-ing a small integer into the low bits gives 2^52 + that integer
pub(crate) const TWO52_BITS: u64 = 0x4330_0000_0000_0000;

#[inline(always)]
pub fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = f64::from_bits((bits >> 52) | TWO52_BITS) - EXPONENT_MAGIC;
    let mut m = f64::from_bits((bits & MANTISSA_MASK) | ONE_BITS);
    if m > SQRT2 {
        m *= 0.5;
        e += 1.0;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    let v = e * LN2_HI - ((hfsq - (s * (hfsq + r) + e * LN2_LO)) - f);
    v + x * 0.0 // NaN and infinity propagate
}

pub fn ln_in_place(a: &mut [f64]) {
    for v in a.iter_mut() {
        *v = ln(*v);
    }
}

#[inline(always)]
pub(crate) fn sq_dist_one<const WEIGHTED: bool>(x: Cols, d: usize, i: usize, c: &[f64], w: &[f64]) -> f64 {
    let mut acc = 0.0;
    for j in 0..d {
        let t = x.data[x.offset + j * x.stride + i] - c[j];
        if WEIGHTED {
            acc += w[j] * (t * t);
        } else {
            acc += t * t;
        }
    }
    acc
}

pub fn sq_dist(x: Cols, d: usize, len: usize, c: &[f64], w: Option<&[f64]>, post: Option<LogDensity>, out: &mut [f64]) {
    sq_dist_from(x, d, 0, len, c, w, post, out)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn sq_dist_from(x: Cols, d: usize, start: usize, len: usize, c: &[f64], w: Option<&[f64]>, post: Option<LogDensity>, out: &mut [f64]) {
    for i in start..len {
        let q = match w {
            Some(w) => sq_dist_one::<true>(x, d, i, c, w),
            None => sq_dist_one::<false>(x, d, i, c, &[]),
        };
        out[i] = match post {
            Some(p) => p.apply(q),
            None => q,
        };
    }
}

/// Component c of k (centre and weights at c * d) into out[c * stride..]: sq_dist
/// per component. The SIMD twin pairs components over each load; its every output
/// has the same operations in the same order as here.
#[allow(clippy::too_many_arguments)]
pub fn sq_dist_many(x: Cols, d: usize, len: usize, k: usize, cs: &[f64], ws: Option<&[f64]>, posts: Option<&[LogDensity]>, out: &mut [f64], stride: usize) {
    for c in 0..k {
        let o = &mut out[c * stride..c * stride + len];
        sq_dist_from(x, d, 0, len, &cs[c * d..(c + 1) * d], ws.map(|w| &w[c * d..(c + 1) * d]), posts.map(|p| p[c]), o);
    }
}

pub fn tri_product(x: Cols, d: usize, len: usize, shift: &[f64], p: &[f64], upper: bool, scratch: &mut [f64], tile: &mut [f64]) {
    tri_product_from(x, d, 0, len, shift, p, upper, scratch, tile)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn tri_product_from(
    x: Cols, d: usize, start: usize, len: usize, shift: &[f64], p: &[f64], upper: bool, scratch: &mut [f64], tile: &mut [f64],
) {
    for i in start..len {
        for l in 0..d {
            scratch[l] = x.data[x.offset + l * x.stride + i] - shift[l];
        }
        for j in 0..d {
            let (lo, hi) = if upper { (0, j + 1) } else { (j, d) };
            let mut a = 0.0;
            for l in lo..hi {
                a += p[l * d + j] * scratch[l];
            }
            tile[j * len + i] = a;
        }
    }
}

/// Four partial sums s[i % 4], combined as (s0 + s2) + (s1 + s3), then the tail:
/// the same association as two f64x2 accumulators.
#[inline(always)]
fn reduce4(n: usize, mut term: impl FnMut(usize) -> f64) -> f64 {
    let mut s = [0.0f64; 4];
    let body = n - n % 4;
    let mut i = 0;
    while i < body {
        s[0] += term(i);
        s[1] += term(i + 1);
        s[2] += term(i + 2);
        s[3] += term(i + 3);
        i += 4;
    }
    let mut total = (s[0] + s[2]) + (s[1] + s[3]);
    while i < n {
        total += term(i);
        i += 1;
    }
    total
}

pub fn sum(a: &[f64]) -> f64 {
    reduce4(a.len(), |i| a[i])
}


/// Two sums in one pass, each with reduce4's association.
pub fn shifted_moments(r: &[f64], x: &[f64], shift: f64) -> (f64, f64) {
    let n = r.len();
    let mut s1 = [0.0f64; 4];
    let mut s2 = [0.0f64; 4];
    let body = n - n % 4;
    let mut i = 0;
    while i < body {
        for m in 0..4 {
            let rt = r[i + m] * (x[i + m] - shift);
            s1[m] += rt;
            s2[m] += rt * (x[i + m] - shift);
        }
        i += 4;
    }
    let mut t1 = (s1[0] + s1[2]) + (s1[1] + s1[3]);
    let mut t2 = (s2[0] + s2[2]) + (s2[1] + s2[3]);
    while i < n {
        let t = x[i] - shift;
        let rt = r[i] * t;
        t1 += rt;
        t2 += rt * t;
        i += 1;
    }
    (t1, t2)
}

/// Per entry: two partial sums by row parity (the two lanes of an f64x2),
/// combined lane 0 + lane 1, then the odd last row.
pub fn scatter_tile(w: &[f64], t: &[f64], d: usize, len: usize, out: &mut [f64]) {
    let body = len - len % 2;
    for j in 0..d {
        let wj = &w[j * len..(j + 1) * len];
        for l in j..d {
            let tl = &t[l * len..(l + 1) * len];
            let (mut a, mut b) = (0.0, 0.0);
            let mut i = 0;
            while i < body {
                a += wj[i] * tl[i];
                b += wj[i + 1] * tl[i + 1];
                i += 2;
            }
            let mut s = a + b;
            if body < len {
                s += wj[body] * tl[body];
            }
            out[j * d + l] += s;
        }
    }
}

pub fn sq_dev(x: &[f64], mu: f64) -> f64 {
    reduce4(x.len(), |i| {
        let t = x[i] - mu;
        t * t
    })
}

pub(crate) fn log_normalize_from(w: &mut [f64], stride: usize, k: usize, start: usize, len: usize, lse: &mut [f64]) {
    for i in start..len {
        let mut m = w[i];
        for c in 1..k {
            let v = w[c * stride + i];
            if m < v {
                m = v;
            }
        }
        let mut s = 0.0;
        for c in 0..k {
            let e = exp_lse(w[c * stride + i] - m);
            w[c * stride + i] = e;
            s += e;
        }
        lse[i] = m + ln(s);
        let inv = 1.0 / s;
        for c in 0..k {
            w[c * stride + i] *= inv;
        }
    }
}

pub fn log_normalize(w: &mut [f64], stride: usize, k: usize, len: usize, lse: &mut [f64]) {
    log_normalize_from(w, stride, k, 0, len, lse)
}

pub fn exp_in_place(a: &mut [f64]) {
    for v in a.iter_mut() {
        *v = exp(*v);
    }
}

/// See mod.rs. Per column a branch on r < dist: improvements are rare after a
/// search's first row (a few percent of columns).
#[allow(clippy::too_many_arguments)]
pub fn lsa_relax<const FIRST: bool>(c: &[f64], v: &[f64], h: f64, row: u64, dist: &mut [f64], pred: &mut [u64], block_min: &mut [f64], live: &[u8]) -> Nearest {
    let mut near = Nearest::NONE;
    for b in 0..block_min.len() {
        if !FIRST && live[b] == 0 {
            continue; // every column retired: nothing would change
        }
        lsa_relax_block::<FIRST>(c, v, h, row, dist, pred, block_min, b);
        near.see(b, block_min[b]);
    }
    near
}

/// lsa_relax of block b alone (also the SIMD version's partial last block).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn lsa_relax_block<const FIRST: bool>(c: &[f64], v: &[f64], h: f64, row: u64, dist: &mut [f64], pred: &mut [u64], block_min: &mut [f64], b: usize) {
    let end = (b * LSA_BLOCK + LSA_BLOCK).min(dist.len());
    let mut lowest = if FIRST { f64::INFINITY } else { block_min[b] };
    for j in b * LSA_BLOCK..end {
        let r = (c[j] - v[j]) + h;
        if FIRST || r < dist[j] {
            dist[j] = r;
            pred[j] = row;
            if r < lowest {
                lowest = r;
            }
        }
    }
    block_min[b] = lowest;
}

pub fn column_minima(c: &[f64], row: u32, minima: &mut [f64], rows: &mut [u32]) {
    for j in 0..c.len() {
        if c[j] < minima[j] {
            minima[j] = c[j];
            rows[j] = row;
        }
    }
}

pub fn two_smallest(c: &[f64], v: &[f64]) -> TwoSmallest {
    let mut t = TwoSmallest { value: f64::INFINITY, first: 0, second_value: f64::INFINITY, second: 0 };
    for j in 0..c.len() {
        two_smallest_see(&mut t, c[j] - v[j], j);
    }
    t
}

/// Takes the reduced cost h of column j into t (columns in increasing order).
#[inline(always)]
pub(crate) fn two_smallest_see(t: &mut TwoSmallest, h: f64, j: usize) {
    if h < t.second_value {
        if h < t.value {
            *t = TwoSmallest { value: h, first: j, second_value: t.value, second: t.first };
        } else {
            t.second_value = h;
            t.second = j;
        }
    }
}

/// See mod.rs: two sums, even and odd features, in order; then added.
#[inline(always)]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (mut s0, mut s1) = (0.0, 0.0);
    let mut f = 0;
    while f + 2 <= a.len() {
        s0 += a[f] * b[f];
        s1 += a[f + 1] * b[f + 1];
        f += 2;
    }
    s0 + s1
}

pub fn dots_gather(xs: &[&[f64]], rows: &[f64], width: usize, idx: &[u32], n: usize, out: &mut [f64], ld: usize) {
    for (k, x) in xs.iter().enumerate() {
        for t in 0..n {
            let r = idx[t] as usize * width;
            out[k * ld + t] = dot(x, &rows[r..r + width]);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub fn cross_dots(a: &[f64], na: usize, b: &[f64], nb: usize, width: usize, out: &mut [f64], ld: usize) {
    for r in 0..na {
        let ar = &a[r * width..(r + 1) * width];
        for s in 0..nb {
            out[r * ld + s] = dot(ar, &b[s * width..(s + 1) * width]);
        }
    }
}

/// One RBF value from a dot product (see mod.rs); `m` is -gamma.
#[inline(always)]
pub(crate) fn rbf_one(dot: f64, sq_x: f64, sq_t: f64, m: f64) -> f64 {
    let q = (sq_x + sq_t) - 2.0 * dot;
    let q = if 0.0 < q { q } else { 0.0 };
    exp(m * q)
}

pub fn rbf_from_dots(v: &mut [f64], sq_x: f64, sq: &[f64], gamma: f64) {
    rbf_from_dots_from(v, 0, sq_x, sq, -gamma)
}

pub(crate) fn rbf_from_dots_from(v: &mut [f64], start: usize, sq_x: f64, sq: &[f64], m: f64) {
    for t in start..v.len() {
        v[t] = rbf_one(v[t], sq_x, sq[t], m);
    }
}

pub fn axpy2_f32(g: &mut [f64], qi: &[f32], ai: f64, qj: &[f32], aj: f64) {
    for k in 0..g.len() {
        g[k] += qi[k] as f64 * ai + qj[k] as f64 * aj;
    }
}

pub fn axpy(y: &mut [f64], x: &[f64], a: f64) {
    for k in 0..y.len() {
        y[k] += x[k] * a;
    }
}

/// See mod.rs: lanes 0 and 1 over pairs of columns of every row, the odd
/// column into the tail; mirrored by simd.rs.
pub fn trace_outer(p: &[f64], s: &[f64], u: &[f64], d: usize) -> f64 {
    let (mut a0, mut a1, mut tail) = (0.0, 0.0, 0.0);
    for r in 0..d {
        let (pr, sr, ur) = (&p[r * d..(r + 1) * d], &s[r * d..(r + 1) * d], u[r]);
        let mut c = 0;
        while c + 2 <= d {
            a0 += pr[c] * (sr[c] + ur * u[c]);
            a1 += pr[c + 1] * (sr[c + 1] + ur * u[c + 1]);
            c += 2;
        }
        if c < d {
            tail += pr[c] * (sr[c] + ur * u[c]);
        }
    }
    (a0 + a1) + tail
}

pub fn trace_outer_diag(p: &[f64], c: &[f64], s: &[f64], m: &[f64], d: usize, k: usize, out: &mut [f64]) {
    trace_outer_diag_from(p, c, s, m, d, k, 0, out)
}

/// trace_outer_diag for j in start..k (the SIMD version's odd last column).
#[allow(clippy::too_many_arguments)]
pub(crate) fn trace_outer_diag_from(p: &[f64], c: &[f64], s: &[f64], m: &[f64], d: usize, k: usize, start: usize, out: &mut [f64]) {
    for j in start..k {
        let mut acc = 0.0;
        for l in 0..d {
            let u = m[l] - c[l * k + j];
            acc += p[l * k + j] * (s[l] + u * u);
        }
        out[j] = acc;
    }
}

pub fn axpy_f32(g: &mut [f64], q: &[f32], a: f64) {
    for k in 0..g.len() {
        g[k] += q[k] as f64 * a;
    }
}

pub fn madd_peak(iters: u64, seed: f64, sink: &mut f64) -> f64 {
    let mut acc = [seed; 16];
    let m = 0.999_999_9;
    let a = 1e-9;
    for _ in 0..iters {
        for v in acc.iter_mut() {
            *v = *v * m + a;
        }
    }
    *sink = acc.iter().sum();
    iters as f64 * 32.0
}
