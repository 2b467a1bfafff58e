//! SIMD128 kernels: f64x2 lanes run across samples. Every function mirrors its
//! scalar twin in scalar.rs operation for operation (see mod.rs), and hands the
//! rows that do not fill a vector to that twin.

use super::scalar::{
    self, EXPONENT_MAGIC, EXP_HI, EXP_LO, EXP_LSE_LO, EXP_MINIMAX, EXP_TAYLOR, INV_LN2, LG, LN2_HI, LN2_LO, MANTISSA_MASK, ONE_BITS, ROUND_MAGIC, SQRT2, TWO52_BITS,
};
use super::{Cols, LogDensity, Nearest, TwoSmallest, LSA_BLOCK};
use core::arch::wasm32::*;

#[inline(always)]
pub(crate) unsafe fn ld(p: *const f64) -> v128 {
    v128_load(p as *const v128)
}
#[inline(always)]
pub(crate) unsafe fn st(p: *mut f64, v: v128) {
    v128_store(p as *mut v128, v)
}
#[inline(always)]
pub(crate) fn splat(x: f64) -> v128 {
    f64x2_splat(x)
}

#[inline(always)]
unsafe fn pow2_int(kf: v128) -> v128 {
    i64x2_shl(f64x2_add(kf, splat(EXPONENT_MAGIC)), 52)
}

/// exp on two lanes; see scalar::exp for the method. Mirrors it operation for operation.
#[inline(always)]
unsafe fn exp_v(x: v128) -> v128 {
    let magic = splat(ROUND_MAGIC);
    let kf = f64x2_sub(f64x2_add(f64x2_mul(x, splat(INV_LN2)), magic), magic);
    let r = f64x2_sub(f64x2_sub(x, f64x2_mul(kf, splat(LN2_HI))), f64x2_mul(kf, splat(LN2_LO)));
    let c = &EXP_TAYLOR;
    let r2 = f64x2_mul(r, r);
    let r4 = f64x2_mul(r2, r2);
    let r8 = f64x2_mul(r4, r4);
    let p0 = f64x2_add(splat(c[0]), f64x2_mul(splat(c[1]), r));
    let p1 = f64x2_add(splat(c[2]), f64x2_mul(splat(c[3]), r));
    let p2 = f64x2_add(splat(c[4]), f64x2_mul(splat(c[5]), r));
    let p3 = f64x2_add(splat(c[6]), f64x2_mul(splat(c[7]), r));
    let p4 = f64x2_add(splat(c[8]), f64x2_mul(splat(c[9]), r));
    let p5 = f64x2_add(splat(c[10]), f64x2_mul(splat(c[11]), r));
    let q0 = f64x2_add(p0, f64x2_mul(p1, r2));
    let q1 = f64x2_add(p2, f64x2_mul(p3, r2));
    let q2 = f64x2_add(p4, f64x2_mul(p5, r2));
    let q = f64x2_add(f64x2_add(q0, f64x2_mul(q1, r4)), f64x2_mul(q2, r8));
    let y = f64x2_add(splat(1.0), f64x2_add(r, f64x2_mul(r2, q)));
    let k1 = f64x2_floor(f64x2_mul(kf, splat(0.5)));
    let k2 = f64x2_sub(kf, k1);
    let v = f64x2_mul(f64x2_mul(y, pow2_int(k1)), pow2_int(k2));
    let v = v128_andnot(v, f64x2_lt(x, splat(EXP_LO)));
    v128_bitselect(splat(f64::INFINITY), v, f64x2_lt(splat(EXP_HI), x))
}

/// exp_lse on two lanes; see scalar::exp_lse. Mirrors it operation for operation.
#[inline(always)]
unsafe fn exp_lse_v(x: v128) -> v128 {
    let magic = splat(ROUND_MAGIC);
    let t = f64x2_add(f64x2_mul(x, splat(INV_LN2)), magic);
    let kf = f64x2_sub(t, magic);
    let r = f64x2_sub(f64x2_sub(x, f64x2_mul(kf, splat(LN2_HI))), f64x2_mul(kf, splat(LN2_LO)));
    let c = &EXP_MINIMAX;
    let r2 = f64x2_mul(r, r);
    let r4 = f64x2_mul(r2, r2);
    let r8 = f64x2_mul(r4, r4);
    let p0 = f64x2_add(splat(c[0]), f64x2_mul(splat(c[1]), r));
    let p1 = f64x2_add(splat(c[2]), f64x2_mul(splat(c[3]), r));
    let p2 = f64x2_add(splat(c[4]), f64x2_mul(splat(c[5]), r));
    let p3 = f64x2_add(splat(c[6]), f64x2_mul(splat(c[7]), r));
    let p4 = f64x2_add(splat(c[8]), f64x2_mul(splat(c[9]), r));
    let q = f64x2_add(f64x2_add(f64x2_add(p0, f64x2_mul(p1, r2)), f64x2_mul(f64x2_add(p2, f64x2_mul(p3, r2)), r4)), f64x2_mul(p4, r8));
    let y = f64x2_add(splat(1.0), f64x2_add(r, f64x2_mul(r2, q)));
    let v = f64x2_mul(y, i64x2_add(i64x2_shl(t, 52), u64x2_splat(ONE_BITS)));
    v128_andnot(v, f64x2_lt(x, splat(EXP_LSE_LO)))
}

/// ln on two lanes; see scalar::ln. Mirrors it operation for operation.
#[inline(always)]
pub(crate) unsafe fn ln_v(x: v128) -> v128 {
    let e = f64x2_sub(v128_or(u64x2_shr(x, 52), u64x2_splat(TWO52_BITS)), splat(EXPONENT_MAGIC));
    let m = v128_or(v128_and(x, u64x2_splat(MANTISSA_MASK)), u64x2_splat(ONE_BITS));
    let big = f64x2_gt(m, splat(SQRT2));
    let m = v128_bitselect(f64x2_mul(m, splat(0.5)), m, big);
    let e = f64x2_add(e, v128_and(big, splat(1.0)));
    let f = f64x2_sub(m, splat(1.0));
    let s = f64x2_div(f, f64x2_add(splat(2.0), f));
    let z = f64x2_mul(s, s);
    let w = f64x2_mul(z, z);
    let t1 = f64x2_mul(w, f64x2_add(splat(LG[1]), f64x2_mul(w, f64x2_add(splat(LG[3]), f64x2_mul(w, splat(LG[5]))))));
    let t2 = f64x2_mul(
        z,
        f64x2_add(splat(LG[0]), f64x2_mul(w, f64x2_add(splat(LG[2]), f64x2_mul(w, f64x2_add(splat(LG[4]), f64x2_mul(w, splat(LG[6]))))))),
    );
    let r = f64x2_add(t2, t1);
    let hfsq = f64x2_mul(f64x2_mul(splat(0.5), f), f);
    let inner = f64x2_sub(f64x2_sub(hfsq, f64x2_add(f64x2_mul(s, f64x2_add(hfsq, r)), f64x2_mul(e, splat(LN2_LO)))), f);
    let v = f64x2_sub(f64x2_mul(e, splat(LN2_HI)), inner);
    f64x2_add(v, f64x2_mul(x, splat(0.0)))
}

pub unsafe fn ln_in_place(a: &mut [f64]) {
    let p = a.as_mut_ptr();
    let n = a.len();
    let mut i = 0;
    while i + 2 <= n {
        st(p.add(i), ln_v(ld(p.add(i))));
        i += 2;
    }
    while i < n {
        *p.add(i) = scalar::ln(*p.add(i));
        i += 1;
    }
}

pub unsafe fn sq_dist(x: Cols, d: usize, len: usize, c: &[f64], w: Option<&[f64]>, post: Option<LogDensity>, out: &mut [f64]) {
    sq_dist_rest(x, d, 0, len, c, w, post, out.as_mut_ptr());
}

/// Rows [start, len) of one component: f64x2 lanes, then the scalar twin for the rows after the last block of 8.
#[allow(clippy::too_many_arguments)]
#[inline(never)] // one copy for sq_dist and sq_dist_many
unsafe fn sq_dist_rest(x: Cols, d: usize, start: usize, len: usize, c: &[f64], w: Option<&[f64]>, post: Option<LogDensity>, out: *mut f64) {
    let done = match w {
        Some(w) => sq_dist_impl::<true>(x, d, start, len, c, w.as_ptr(), out),
        None => sq_dist_impl::<false>(x, d, start, len, c, c.as_ptr(), out),
    };
    apply_post(out, start, done, post.as_ref());
    scalar::sq_dist_from(x, d, done, len, c, w, post, core::slice::from_raw_parts_mut(out, len));
}

/// Components in pairs: each f64x2 load of a row chunk serves both components'
/// multiply-adds (8 rows x 2 components, 8 accumulators). Every output keeps
/// the single-component kernel's operations in its order (j ascending), so the
/// results are those of sq_dist, bit for bit. An odd last component and the
/// rows after the last block of 8 go through sq_dist_rest.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sq_dist_many(x: Cols, d: usize, len: usize, k: usize, cs: &[f64], ws: Option<&[f64]>, posts: Option<&[LogDensity]>, out: &mut [f64], stride: usize) {
    let o = out.as_mut_ptr();
    let mut c = 0;
    while c < k {
        let post = posts.map(|p| *p.get_unchecked(c));
        let w = ws.map(|w| w.get_unchecked(c * d..(c + 1) * d));
        let start = if c + 2 <= k {
            let post1 = posts.map(|p| *p.get_unchecked(c + 1));
            let w1 = ws.map(|w| w.get_unchecked((c + 1) * d..(c + 2) * d));
            let (cp, o0, o1) = (cs.as_ptr().add(c * d), o.add(c * stride), o.add((c + 1) * stride));
            let done = match (w, w1) {
                (Some(w), Some(w1)) => sq_dist_pair::<true>(x, d, len, cp, w.as_ptr(), w1.as_ptr(), o0, o1),
                _ => sq_dist_pair::<false>(x, d, len, cp, cp, cp, o0, o1),
            };
            apply_post(o0, 0, done, post.as_ref());
            apply_post(o1, 0, done, post1.as_ref());
            sq_dist_rest(x, d, done, len, cs.get_unchecked((c + 1) * d..(c + 2) * d), w1, post1, o1);
            done
        } else {
            0
        };
        sq_dist_rest(x, d, start, len, cs.get_unchecked(c * d..(c + 1) * d), w, post, o.add(c * stride));
        c += 2;
    }
}

/// The LogDensity map on two lanes, same operations as LogDensity::apply.
#[inline(always)]
unsafe fn log_density(q: v128, p: &LogDensity) -> v128 {
    let v = f64x2_mul(splat(-0.5), f64x2_add(splat(p.d_log_2pi), q));
    f64x2_add(f64x2_add(v, splat(p.log_det)), splat(p.log_w))
}

/// Distances [start, end) of out turned into log densities, when asked: a pass
/// over a block already in cache, so that the distance loops have no copy per case.
#[inline(never)]
unsafe fn apply_post(o: *mut f64, start: usize, end: usize, post: Option<&LogDensity>) {
    if let Some(p) = post {
        let mut i = start;
        while i + 2 <= end {
            st(o.add(i), log_density(ld(o.add(i)), p));
            i += 2;
        }
    }
}

/// One term of a distance: a + w (t t), or a + t t unweighted.
#[inline(always)]
unsafe fn term<const WEIGHTED: bool>(a: v128, t: v128, w: v128) -> v128 {
    if WEIGHTED {
        f64x2_add(a, f64x2_mul(w, f64x2_mul(t, t)))
    } else {
        f64x2_add(a, f64x2_mul(t, t))
    }
}

/// Rows [start, len) in blocks of 8; returns the rows done (the scalar twin, the
/// same operations, takes the rest: at most 7 rows).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn sq_dist_impl<const WEIGHTED: bool>(x: Cols, d: usize, start: usize, len: usize, c: &[f64], w: *const f64, o: *mut f64) -> usize {
    let base = x.data.as_ptr().add(x.offset);
    let mut i = start;
    while i + 8 <= len {
        let z = splat(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        for j in 0..d {
            let p = base.add(j * x.stride + i);
            let cj = splat(*c.get_unchecked(j));
            let wv = if WEIGHTED { splat(*w.add(j)) } else { cj };
            a0 = term::<WEIGHTED>(a0, f64x2_sub(ld(p), cj), wv);
            a1 = term::<WEIGHTED>(a1, f64x2_sub(ld(p.add(2)), cj), wv);
            a2 = term::<WEIGHTED>(a2, f64x2_sub(ld(p.add(4)), cj), wv);
            a3 = term::<WEIGHTED>(a3, f64x2_sub(ld(p.add(6)), cj), wv);
        }
        st(o.add(i), a0);
        st(o.add(i + 2), a1);
        st(o.add(i + 4), a2);
        st(o.add(i + 6), a3);
        i += 8;
    }
    i
}

/// Two components (centres c and c + d, weights w0 and w1) over blocks of 8 rows; returns the rows done.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn sq_dist_pair<const WEIGHTED: bool>(
    x: Cols, d: usize, len: usize, c: *const f64, w0: *const f64, w1: *const f64, o0: *mut f64, o1: *mut f64,
) -> usize {
    let base = x.data.as_ptr().add(x.offset);
    let mut i = 0;
    while i + 8 <= len {
        let z = splat(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let (mut b0, mut b1, mut b2, mut b3) = (z, z, z, z);
        for j in 0..d {
            let p = base.add(j * x.stride + i);
            let (ca, cb) = (splat(*c.add(j)), splat(*c.add(d + j)));
            let (wa, wb) = if WEIGHTED { (splat(*w0.add(j)), splat(*w1.add(j))) } else { (z, z) };
            let v = ld(p);
            a0 = term::<WEIGHTED>(a0, f64x2_sub(v, ca), wa);
            b0 = term::<WEIGHTED>(b0, f64x2_sub(v, cb), wb);
            let v = ld(p.add(2));
            a1 = term::<WEIGHTED>(a1, f64x2_sub(v, ca), wa);
            b1 = term::<WEIGHTED>(b1, f64x2_sub(v, cb), wb);
            let v = ld(p.add(4));
            a2 = term::<WEIGHTED>(a2, f64x2_sub(v, ca), wa);
            b2 = term::<WEIGHTED>(b2, f64x2_sub(v, cb), wb);
            let v = ld(p.add(6));
            a3 = term::<WEIGHTED>(a3, f64x2_sub(v, ca), wa);
            b3 = term::<WEIGHTED>(b3, f64x2_sub(v, cb), wb);
        }
        st(o0.add(i), a0);
        st(o0.add(i + 2), a1);
        st(o0.add(i + 4), a2);
        st(o0.add(i + 6), a3);
        st(o1.add(i), b0);
        st(o1.add(i + 2), b1);
        st(o1.add(i + 4), b2);
        st(o1.add(i + 6), b3);
        i += 8;
    }
    i
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn tri_product(x: Cols, d: usize, len: usize, shift: &[f64], p: &[f64], upper: bool, scratch: &mut [f64], tile: &mut [f64]) {
    let base = x.data.as_ptr().add(x.offset);
    let s = scratch.as_mut_ptr();
    let out = tile.as_mut_ptr();
    let pm = p.as_ptr();
    let mut i = 0;
    while i + 8 <= len {
        for l in 0..d {
            let src = base.add(l * x.stride + i);
            let sh = splat(*shift.get_unchecked(l));
            let dst = s.add(l * 8);
            st(dst, f64x2_sub(ld(src), sh));
            st(dst.add(2), f64x2_sub(ld(src.add(2)), sh));
            st(dst.add(4), f64x2_sub(ld(src.add(4)), sh));
            st(dst.add(6), f64x2_sub(ld(src.add(6)), sh));
        }
        for j in 0..d {
            let (lo, hi) = if upper { (0, j + 1) } else { (j, d) };
            let z = splat(0.0);
            let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
            for l in lo..hi {
                let cf = splat(*pm.add(l * d + j));
                let t = s.add(l * 8);
                a0 = f64x2_add(a0, f64x2_mul(cf, ld(t)));
                a1 = f64x2_add(a1, f64x2_mul(cf, ld(t.add(2))));
                a2 = f64x2_add(a2, f64x2_mul(cf, ld(t.add(4))));
                a3 = f64x2_add(a3, f64x2_mul(cf, ld(t.add(6))));
            }
            let dst = out.add(j * len + i);
            st(dst, a0);
            st(dst.add(2), a1);
            st(dst.add(4), a2);
            st(dst.add(6), a3);
        }
        i += 8;
    }
    while i + 2 <= len {
        for l in 0..d {
            st(s.add(l * 2), f64x2_sub(ld(base.add(l * x.stride + i)), splat(*shift.get_unchecked(l))));
        }
        for j in 0..d {
            let (lo, hi) = if upper { (0, j + 1) } else { (j, d) };
            let mut a = splat(0.0);
            for l in lo..hi {
                a = f64x2_add(a, f64x2_mul(splat(*pm.add(l * d + j)), ld(s.add(l * 2))));
            }
            st(out.add(j * len + i), a);
        }
        i += 2;
    }
    scalar::tri_product_from(x, d, i, len, shift, p, upper, scratch, tile);
}

/// Two f64x2 accumulators over blocks of 4, then the scalar tail (see scalar::reduce4).
#[inline(always)]
unsafe fn reduce4(n: usize, term: impl Fn(usize) -> v128, tail: impl Fn(usize) -> f64) -> f64 {
    let body = n - n % 4;
    let mut a0 = splat(0.0);
    let mut a1 = splat(0.0);
    let mut i = 0;
    while i < body {
        a0 = f64x2_add(a0, term(i));
        a1 = f64x2_add(a1, term(i + 2));
        i += 4;
    }
    let s = f64x2_add(a0, a1);
    let mut total = f64x2_extract_lane::<0>(s) + f64x2_extract_lane::<1>(s);
    while i < n {
        total += tail(i);
        i += 1;
    }
    total
}

pub unsafe fn sum(a: &[f64]) -> f64 {
    let p = a.as_ptr();
    reduce4(a.len(), |i| ld(p.add(i)), |i| *p.add(i))
}

pub unsafe fn shifted_moments(r: &[f64], x: &[f64], shift: f64) -> (f64, f64) {
    let n = r.len();
    let (p, q) = (r.as_ptr(), x.as_ptr());
    let sh = splat(shift);
    let body = n - n % 4;
    let z = splat(0.0);
    let (mut a0, mut a1, mut b0, mut b1) = (z, z, z, z);
    let mut i = 0;
    while i < body {
        let t0 = f64x2_sub(ld(q.add(i)), sh);
        let t1 = f64x2_sub(ld(q.add(i + 2)), sh);
        let rt0 = f64x2_mul(ld(p.add(i)), t0);
        let rt1 = f64x2_mul(ld(p.add(i + 2)), t1);
        a0 = f64x2_add(a0, rt0);
        a1 = f64x2_add(a1, rt1);
        b0 = f64x2_add(b0, f64x2_mul(rt0, t0));
        b1 = f64x2_add(b1, f64x2_mul(rt1, t1));
        i += 4;
    }
    let sa = f64x2_add(a0, a1);
    let sb = f64x2_add(b0, b1);
    let mut t1 = f64x2_extract_lane::<0>(sa) + f64x2_extract_lane::<1>(sa);
    let mut t2 = f64x2_extract_lane::<0>(sb) + f64x2_extract_lane::<1>(sb);
    while i < n {
        let t = *q.add(i) - shift;
        let rt = *p.add(i) * t;
        t1 += rt;
        t2 += rt * t;
        i += 1;
    }
    (t1, t2)
}

/// 2 x 2 blocks of (j, l) entries share their loads; each entry is one f64x2
/// accumulator, lanes by row parity, as the scalar twin.
pub unsafe fn scatter_tile(w: &[f64], t: &[f64], d: usize, len: usize, out: &mut [f64]) {
    let body = len - len % 2;
    let (wp, tp) = (w.as_ptr(), t.as_ptr());
    let hsum = |v: v128| f64x2_extract_lane::<0>(v) + f64x2_extract_lane::<1>(v);
    let tail = |j: usize, l: usize| if body < len { *wp.add(j * len + body) * *tp.add(l * len + body) } else { 0.0 };
    let mut j = 0;
    while j + 2 <= d {
        let (w0, w1) = (wp.add(j * len), wp.add((j + 1) * len));
        let mut l = j;
        while l + 2 <= d {
            let (t0, t1) = (tp.add(l * len), tp.add((l + 1) * len));
            let z = splat(0.0);
            let (mut a00, mut a01, mut a10, mut a11) = (z, z, z, z);
            let mut i = 0;
            while i < body {
                let (x0, x1) = (ld(w0.add(i)), ld(w1.add(i)));
                let (y0, y1) = (ld(t0.add(i)), ld(t1.add(i)));
                a00 = f64x2_add(a00, f64x2_mul(x0, y0));
                a01 = f64x2_add(a01, f64x2_mul(x0, y1));
                a10 = f64x2_add(a10, f64x2_mul(x1, y0));
                a11 = f64x2_add(a11, f64x2_mul(x1, y1));
                i += 2;
            }
            *out.get_unchecked_mut(j * d + l) += hsum(a00) + tail(j, l);
            *out.get_unchecked_mut(j * d + l + 1) += hsum(a01) + tail(j, l + 1);
            if l > j {
                // (j + 1, l) is below the diagonal when l == j: not part of the upper triangle
                *out.get_unchecked_mut((j + 1) * d + l) += hsum(a10) + tail(j + 1, l);
            }
            *out.get_unchecked_mut((j + 1) * d + l + 1) += hsum(a11) + tail(j + 1, l + 1);
            l += 2;
        }
        if l < d {
            // odd last column for both rows
            for jj in [j, j + 1] {
                let (wq, tq) = (wp.add(jj * len), tp.add(l * len));
                let mut a = splat(0.0);
                let mut i = 0;
                while i < body {
                    a = f64x2_add(a, f64x2_mul(ld(wq.add(i)), ld(tq.add(i))));
                    i += 2;
                }
                *out.get_unchecked_mut(jj * d + l) += hsum(a) + tail(jj, l);
            }
        }
        j += 2;
    }
    if j < d {
        // odd last row: only its diagonal entry is in the upper triangle
        let (wq, tq) = (wp.add(j * len), tp.add(j * len));
        let mut a = splat(0.0);
        let mut i = 0;
        while i < body {
            a = f64x2_add(a, f64x2_mul(ld(wq.add(i)), ld(tq.add(i))));
            i += 2;
        }
        *out.get_unchecked_mut(j * d + j) += hsum(a) + tail(j, j);
    }
}

pub unsafe fn sq_dev(x: &[f64], mu: f64) -> f64 {
    let q = x.as_ptr();
    let m = splat(mu);
    reduce4(
        x.len(),
        |i| {
            let t = f64x2_sub(ld(q.add(i)), m);
            f64x2_mul(t, t)
        },
        |i| {
            let t = *q.add(i) - mu;
            t * t
        },
    )
}

pub unsafe fn log_normalize(w: &mut [f64], stride: usize, k: usize, len: usize, lse: &mut [f64]) {
    let p = w.as_mut_ptr();
    let mut i = 0;
    while i + 2 <= len {
        let mut m = ld(p.add(i));
        for c in 1..k {
            m = f64x2_pmax(m, ld(p.add(c * stride + i)));
        }
        let mut s = splat(0.0);
        for c in 0..k {
            let q = p.add(c * stride + i);
            let e = exp_lse_v(f64x2_sub(ld(q), m));
            st(q, e);
            s = f64x2_add(s, e);
        }
        st(lse.as_mut_ptr().add(i), f64x2_add(m, ln_v(s)));
        let inv = f64x2_div(splat(1.0), s);
        for c in 0..k {
            let q = p.add(c * stride + i);
            st(q, f64x2_mul(ld(q), inv));
        }
        i += 2;
    }
    scalar::log_normalize_from(w, stride, k, i, len, lse);
}

pub unsafe fn exp_in_place(a: &mut [f64]) {
    let p = a.as_mut_ptr();
    let n = a.len();
    let mut i = 0;
    while i + 2 <= n {
        st(p.add(i), exp_v(ld(p.add(i))));
        i += 2;
    }
    while i < n {
        *p.add(i) = scalar::exp(*p.add(i));
        i += 1;
    }
}

/// See mod.rs. Per block of 8 columns: four f64x2 candidate vectors and, after
/// a search's first row, one branch on whether any lane improves; only then are
/// dist, pred and the block's minimum written (on random costs, for a tenth
/// to a quarter of the blocks).
#[allow(clippy::too_many_arguments)]
pub unsafe fn lsa_relax<const FIRST: bool>(c: &[f64], v: &[f64], h: f64, row: u64, dist: &mut [f64], pred: &mut [u64], block_min: &mut [f64], live: &[u8]) -> Nearest {
    let m = dist.len();
    let full = m / LSA_BLOCK;
    let (cp, vp, dp, pp) = (c.as_ptr(), v.as_ptr(), dist.as_mut_ptr(), pred.as_mut_ptr() as *mut v128);
    let hv = splat(h);
    let rowv = u64x2_splat(row);
    let mut near = Nearest::NONE;
    for b in 0..full {
        if !FIRST && *live.get_unchecked(b) == 0 {
            continue; // every column retired: nothing would change
        }
        let j = b * LSA_BLOCK;
        let r0 = f64x2_add(f64x2_sub(ld(cp.add(j)), ld(vp.add(j))), hv);
        let r1 = f64x2_add(f64x2_sub(ld(cp.add(j + 2)), ld(vp.add(j + 2))), hv);
        let r2 = f64x2_add(f64x2_sub(ld(cp.add(j + 4)), ld(vp.add(j + 4))), hv);
        let r3 = f64x2_add(f64x2_sub(ld(cp.add(j + 6)), ld(vp.add(j + 6))), hv);
        let q = pp.add(j / 2);
        if FIRST {
            st(dp.add(j), r0);
            st(dp.add(j + 2), r1);
            st(dp.add(j + 4), r2);
            st(dp.add(j + 6), r3);
            v128_store(q, rowv);
            v128_store(q.add(1), rowv);
            v128_store(q.add(2), rowv);
            v128_store(q.add(3), rowv);
            *block_min.get_unchecked_mut(b) = hmin4(r0, r1, r2, r3);
        } else {
            let d0 = ld(dp.add(j));
            let d1 = ld(dp.add(j + 2));
            let d2 = ld(dp.add(j + 4));
            let d3 = ld(dp.add(j + 6));
            let l0 = f64x2_lt(r0, d0);
            let l1 = f64x2_lt(r1, d1);
            let l2 = f64x2_lt(r2, d2);
            let l3 = f64x2_lt(r3, d3);
            if v128_any_true(v128_or(v128_or(l0, l1), v128_or(l2, l3))) {
                // pmin(d, r) = r < d ? r : d, the scalar twin's update
                let n0 = f64x2_pmin(d0, r0);
                let n1 = f64x2_pmin(d1, r1);
                let n2 = f64x2_pmin(d2, r2);
                let n3 = f64x2_pmin(d3, r3);
                st(dp.add(j), n0);
                st(dp.add(j + 2), n1);
                st(dp.add(j + 4), n2);
                st(dp.add(j + 6), n3);
                v128_store(q, v128_bitselect(rowv, v128_load(q), l0));
                v128_store(q.add(1), v128_bitselect(rowv, v128_load(q.add(1)), l1));
                v128_store(q.add(2), v128_bitselect(rowv, v128_load(q.add(2)), l2));
                v128_store(q.add(3), v128_bitselect(rowv, v128_load(q.add(3)), l3));
                *block_min.get_unchecked_mut(b) = hmin4(n0, n1, n2, n3);
            }
        }
        near.see(b, *block_min.get_unchecked(b));
    }
    if full < block_min.len() && (FIRST || live[full] > 0) {
        scalar::lsa_relax_block::<FIRST>(c, v, h, row, dist, pred, block_min, full);
        near.see(full, block_min[full]);
    }
    near
}

/// Blocks of 8 columns where no cost is below the minimum are left as they
/// are (after a few rows, most of them), the others take the scalar twin's
/// update lane for lane.
pub unsafe fn column_minima(c: &[f64], row: u32, minima: &mut [f64], rows: &mut [u32]) {
    let m = c.len();
    let full = m / LSA_BLOCK * LSA_BLOCK;
    let (cp, mp, rp) = (c.as_ptr(), minima.as_mut_ptr(), rows.as_mut_ptr() as *mut v128);
    let rowv = u32x4_splat(row);
    let mut j = 0;
    while j < full {
        let (c0, c1, c2, c3) = (ld(cp.add(j)), ld(cp.add(j + 2)), ld(cp.add(j + 4)), ld(cp.add(j + 6)));
        let (m0, m1, m2, m3) = (ld(mp.add(j)), ld(mp.add(j + 2)), ld(mp.add(j + 4)), ld(mp.add(j + 6)));
        let (l0, l1, l2, l3) = (f64x2_lt(c0, m0), f64x2_lt(c1, m1), f64x2_lt(c2, m2), f64x2_lt(c3, m3));
        if v128_any_true(v128_or(v128_or(l0, l1), v128_or(l2, l3))) {
            st(mp.add(j), v128_bitselect(c0, m0, l0));
            st(mp.add(j + 2), v128_bitselect(c1, m1, l1));
            st(mp.add(j + 4), v128_bitselect(c2, m2, l2));
            st(mp.add(j + 6), v128_bitselect(c3, m3, l3));
            // the 64-bit masks narrowed to the 32-bit lanes of the row numbers
            let q = rp.add(j / 4);
            v128_store(q, v128_bitselect(rowv, v128_load(q), i32x4_shuffle::<0, 2, 4, 6>(l0, l1)));
            v128_store(q.add(1), v128_bitselect(rowv, v128_load(q.add(1)), i32x4_shuffle::<0, 2, 4, 6>(l2, l3)));
        }
        j += LSA_BLOCK;
    }
    scalar::column_minima(&c[full..], row, &mut minima[full..], &mut rows[full..]);
}

/// Blocks of 8 columns with no reduced cost below the second smallest so far
/// change nothing and are passed over; the others go through the scalar
/// twin's update, column by column.
pub unsafe fn two_smallest(c: &[f64], v: &[f64]) -> TwoSmallest {
    let m = c.len();
    let full = m / LSA_BLOCK * LSA_BLOCK;
    let (cp, vp) = (c.as_ptr(), v.as_ptr());
    let mut t = TwoSmallest { value: f64::INFINITY, first: 0, second_value: f64::INFINITY, second: 0 };
    let mut j = 0;
    while j < full {
        let bar = splat(t.second_value);
        let h0 = f64x2_sub(ld(cp.add(j)), ld(vp.add(j)));
        let h1 = f64x2_sub(ld(cp.add(j + 2)), ld(vp.add(j + 2)));
        let h2 = f64x2_sub(ld(cp.add(j + 4)), ld(vp.add(j + 4)));
        let h3 = f64x2_sub(ld(cp.add(j + 6)), ld(vp.add(j + 6)));
        let below = v128_or(v128_or(f64x2_lt(h0, bar), f64x2_lt(h1, bar)), v128_or(f64x2_lt(h2, bar), f64x2_lt(h3, bar)));
        if v128_any_true(below) {
            for k in j..j + LSA_BLOCK {
                scalar::two_smallest_see(&mut t, *cp.add(k) - *vp.add(k), k);
            }
        }
        j += LSA_BLOCK;
    }
    for k in full..m {
        scalar::two_smallest_see(&mut t, c[k] - v[k], k);
    }
    t
}

/// The smallest of the eight lanes (no NaN among them).
#[inline(always)]
unsafe fn hmin4(a: v128, b: v128, c: v128, d: v128) -> f64 {
    let mn = f64x2_pmin(f64x2_pmin(a, b), f64x2_pmin(c, d));
    let (lo, hi) = (f64x2_extract_lane::<0>(mn), f64x2_extract_lane::<1>(mn));
    if hi < lo {
        hi
    } else {
        lo
    }
}

/// One step of dot_block: the pair of features at `f` of the R rows times
/// that of the S rows, into the accumulators.
#[inline(always)]
unsafe fn dot_step<const R: usize, const S: usize>(acc: &mut [[v128; S]; R], a: &[*const f64; R], b: &[*const f64; S], f: usize) {
    let mut av = [splat(0.0); R];
    for r in 0..R {
        av[r] = ld(a[r].add(f));
    }
    for s in 0..S {
        let bv = ld(b[s].add(f));
        for r in 0..R {
            acc[r][s] = f64x2_add(acc[r][s], f64x2_mul(av[r], bv));
        }
    }
}

#[inline(always)]
fn dot_sums<const R: usize, const S: usize>(acc: [[v128; S]; R]) -> [[f64; S]; R] {
    let mut out = [[0.0; S]; R];
    for r in 0..R {
        for s in 0..S {
            out[r][s] = f64x2_extract_lane::<0>(acc[r][s]) + f64x2_extract_lane::<1>(acc[r][s]);
        }
    }
    out
}

/// dot products of R rows (`a`) with S rows (`b`), `width` values each (even):
/// one f64x2 accumulator per pair, lanes even and odd features, as scalar::dot.
/// Each step loads the R rows' pair of values once and each of the S rows'
/// once, for R x S multiply-adds.
#[inline(always)]
unsafe fn dot_block<const R: usize, const S: usize>(a: [*const f64; R], b: [*const f64; S], width: usize) -> [[f64; S]; R] {
    let mut acc = [[splat(0.0); S]; R];
    let mut f = 0;
    while f < width {
        dot_step(&mut acc, &a, &b, f);
        f += 2;
    }
    dot_sums(acc)
}

/// Most feature pairs a list of NonzeroPairs holds (on the stack); wider rows
/// take the dense loop.
const PAIRS: usize = 1024;

/// The pairs of features (by the offset of the first) where any of R rows
/// holds a value other than 0, for dot_block_at. A pair where all of them
/// hold 0 adds only zero products to each accumulator, and x + (+-0) == x for
/// every accumulator value (one that starts at +0 never becomes -0 by
/// addition): skipping such pairs changes no bit of any dot product, so the
/// sums stay scalar::dot's. Images (Fashion-MNIST) are nearly half zeros.
struct NonzeroPairs {
    at: [u32; PAIRS],
    n: usize,
}

impl NonzeroPairs {
    /// The list for the R rows, or None when skipping would not pay: rows
    /// too wide for the list, or fewer than one pair in eight all zero.
    #[inline(always)]
    unsafe fn of<const R: usize>(a: [*const f64; R], width: usize) -> Option<NonzeroPairs> {
        if width > 2 * PAIRS {
            return None;
        }
        let mut p = NonzeroPairs { at: [0; PAIRS], n: 0 };
        let zero = splat(0.0);
        let mut f = 0;
        while f < width {
            let mut any = f64x2_ne(ld(a[0].add(f)), zero);
            for r in 1..R {
                any = v128_or(any, f64x2_ne(ld(a[r].add(f)), zero));
            }
            *p.at.get_unchecked_mut(p.n) = f as u32;
            p.n += v128_any_true(any) as usize;
            f += 2;
        }
        if 8 * p.n > 7 * (width / 2) {
            None
        } else {
            Some(p)
        }
    }
}

/// dot_block over the listed pairs only (the R rows' NonzeroPairs): the same
/// sums, to the bit.
#[inline(always)]
unsafe fn dot_block_at<const R: usize, const S: usize>(a: [*const f64; R], b: [*const f64; S], pairs: &NonzeroPairs) -> [[f64; S]; R] {
    let mut acc = [[splat(0.0); S]; R];
    for &f in pairs.at.get_unchecked(..pairs.n) {
        dot_step(&mut acc, &a, &b, f as usize);
    }
    dot_sums(acc)
}

/// dot_block, over the R rows' nonzero pairs when they have a list.
#[inline(always)]
unsafe fn dot_block_skip<const R: usize, const S: usize>(a: [*const f64; R], b: [*const f64; S], width: usize, pairs: &Option<NonzeroPairs>) -> [[f64; S]; R] {
    match pairs {
        Some(p) => dot_block_at(a, b, p),
        None => dot_block(a, b, width),
    }
}

/// dots_gather with R rows of xs: tiles of R x S dot products (S gathered
/// rows), then single gathered rows. The R rows are the same for every tile:
/// their zero pairs are found once.
#[inline(always)]
unsafe fn gather_tiles<const R: usize, const S: usize>(xs: &[&[f64]], rows: &[f64], width: usize, idx: &[u32], n: usize, out: &mut [f64], ld: usize) {
    let a: [*const f64; R] = core::array::from_fn(|k| xs[k].as_ptr());
    let pairs = NonzeroPairs::of(a, width);
    let rp = rows.as_ptr();
    let o = out.as_mut_ptr();
    let row = |t: usize| rp.add(*idx.get_unchecked(t) as usize * width);
    let mut t = 0;
    while t + S <= n {
        let b: [*const f64; S] = core::array::from_fn(|m| row(t + m));
        let v = dot_block_skip::<R, S>(a, b, width, &pairs);
        for k in 0..R {
            for m in 0..S {
                *o.add(k * ld + t + m) = v[k][m];
            }
        }
        t += S;
    }
    while t < n {
        let v = dot_block_skip::<R, 1>(a, [row(t)], width, &pairs);
        for k in 0..R {
            *o.add(k * ld + t) = v[k][0];
        }
        t += 1;
    }
}

/// One column: eight gathered rows per step, whose independent accumulators
/// hide the latency of the additions; more columns: fewer rows per step, each
/// loaded once for all of them.
#[allow(clippy::too_many_arguments)]
pub unsafe fn dots_gather(xs: &[&[f64]], rows: &[f64], width: usize, idx: &[u32], n: usize, out: &mut [f64], ld: usize) {
    match xs.len() {
        1 => gather_tiles::<1, 8>(xs, rows, width, idx, n, out, ld),
        2 => gather_tiles::<2, 4>(xs, rows, width, idx, n, out, ld),
        3 => gather_tiles::<3, 2>(xs, rows, width, idx, n, out, ld),
        _ => gather_tiles::<4, 2>(xs, rows, width, idx, n, out, ld),
    }
}

/// Tiles of 2 x 4: each pair of a's rows finds its zero pairs once, for all
/// of b's rows.
#[allow(clippy::too_many_arguments)]
pub unsafe fn cross_dots(a: &[f64], na: usize, b: &[f64], nb: usize, width: usize, out: &mut [f64], ld: usize) {
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    let o = out.as_mut_ptr();
    let arow = |r: usize| ap.add(r * width);
    let brow = |s: usize| bp.add(s * width);
    let mut r = 0;
    while r + 2 <= na {
        let ar = [arow(r), arow(r + 1)];
        let pairs = NonzeroPairs::of(ar, width);
        let mut s = 0;
        while s + 4 <= nb {
            let v = dot_block_skip::<2, 4>(ar, [brow(s), brow(s + 1), brow(s + 2), brow(s + 3)], width, &pairs);
            for (k, row) in v.iter().enumerate() {
                for (m, x) in row.iter().enumerate() {
                    *o.add((r + k) * ld + s + m) = *x;
                }
            }
            s += 4;
        }
        while s < nb {
            let v = dot_block_skip::<2, 1>(ar, [brow(s)], width, &pairs);
            *o.add(r * ld + s) = v[0][0];
            *o.add((r + 1) * ld + s) = v[1][0];
            s += 1;
        }
        r += 2;
    }
    if r < na {
        let ar = [arow(r)];
        let pairs = NonzeroPairs::of(ar, width);
        let mut s = 0;
        while s + 4 <= nb {
            let v = dot_block_skip::<1, 4>(ar, [brow(s), brow(s + 1), brow(s + 2), brow(s + 3)], width, &pairs);
            for m in 0..4 {
                *o.add(r * ld + s + m) = v[0][m];
            }
            s += 4;
        }
        while s < nb {
            *o.add(r * ld + s) = dot_block_skip::<1, 1>(ar, [brow(s)], width, &pairs)[0][0];
            s += 1;
        }
    }
}

/// See scalar::rbf_one, on two lanes: pmax(0, q) is `0 < q ? q : 0`.
pub unsafe fn rbf_from_dots(v: &mut [f64], sq_x: f64, sq: &[f64], gamma: f64) {
    let m = -gamma;
    let (p, q) = (v.as_mut_ptr(), sq.as_ptr());
    let n = v.len();
    let (sx, mv, two, zero) = (splat(sq_x), splat(m), splat(2.0), splat(0.0));
    let mut t = 0;
    while t + 2 <= n {
        let d = f64x2_sub(f64x2_add(sx, ld(q.add(t))), f64x2_mul(two, ld(p.add(t))));
        let d = f64x2_pmax(zero, d);
        st(p.add(t), exp_v(f64x2_mul(mv, d)));
        t += 2;
    }
    scalar::rbf_from_dots_from(v, t, sq_x, sq, m);
}

/// Two f32 values widened to the lanes of an f64x2.
#[inline(always)]
unsafe fn ld_f32x2(p: *const f32) -> v128 {
    f64x2_promote_low_f32x4(v128_load64_zero(p as *const u64))
}

pub unsafe fn axpy2_f32(g: &mut [f64], qi: &[f32], ai: f64, qj: &[f32], aj: f64) {
    let n = g.len();
    let (gp, ip, jp) = (g.as_mut_ptr(), qi.as_ptr(), qj.as_ptr());
    let (av, bv) = (splat(ai), splat(aj));
    let mut k = 0;
    while k + 2 <= n {
        let inc = f64x2_add(f64x2_mul(ld_f32x2(ip.add(k)), av), f64x2_mul(ld_f32x2(jp.add(k)), bv));
        st(gp.add(k), f64x2_add(ld(gp.add(k)), inc));
        k += 2;
    }
    if k < n {
        *gp.add(k) += *ip.add(k) as f64 * ai + *jp.add(k) as f64 * aj;
    }
}

pub unsafe fn axpy(y: &mut [f64], x: &[f64], a: f64) {
    let n = y.len();
    let (yp, xp) = (y.as_mut_ptr(), x.as_ptr());
    let av = splat(a);
    let mut k = 0;
    while k + 2 <= n {
        st(yp.add(k), f64x2_add(ld(yp.add(k)), f64x2_mul(ld(xp.add(k)), av)));
        k += 2;
    }
    if k < n {
        *yp.add(k) += *xp.add(k) * a;
    }
}

pub unsafe fn trace_outer(p: &[f64], s: &[f64], u: &[f64], d: usize) -> f64 {
    let (pp, sp, up) = (p.as_ptr(), s.as_ptr(), u.as_ptr());
    let mut acc = splat(0.0);
    let mut tail = 0.0;
    for r in 0..d {
        let (pr, sr, ur) = (pp.add(r * d), sp.add(r * d), *up.add(r));
        let uv = splat(ur);
        let mut c = 0;
        while c + 2 <= d {
            acc = f64x2_add(acc, f64x2_mul(ld(pr.add(c)), f64x2_add(ld(sr.add(c)), f64x2_mul(uv, ld(up.add(c))))));
            c += 2;
        }
        if c < d {
            tail += *pr.add(c) * (*sr.add(c) + ur * *up.add(c));
        }
    }
    (f64x2_extract_lane::<0>(acc) + f64x2_extract_lane::<1>(acc)) + tail
}

pub unsafe fn trace_outer_diag(p: &[f64], c: &[f64], s: &[f64], m: &[f64], d: usize, k: usize, out: &mut [f64]) {
    let (pp, cp, op) = (p.as_ptr(), c.as_ptr(), out.as_mut_ptr());
    let mut j = 0;
    while j + 2 <= k {
        let mut acc = splat(0.0);
        for l in 0..d {
            let u = f64x2_sub(splat(m[l]), ld(cp.add(l * k + j)));
            acc = f64x2_add(acc, f64x2_mul(ld(pp.add(l * k + j)), f64x2_add(splat(s[l]), f64x2_mul(u, u))));
        }
        st(op.add(j), acc);
        j += 2;
    }
    scalar::trace_outer_diag_from(p, c, s, m, d, k, j, out);
}

pub unsafe fn axpy_f32(g: &mut [f64], q: &[f32], a: f64) {
    let n = g.len();
    let (gp, qp) = (g.as_mut_ptr(), q.as_ptr());
    let av = splat(a);
    let mut k = 0;
    while k + 2 <= n {
        st(gp.add(k), f64x2_add(ld(gp.add(k)), f64x2_mul(ld_f32x2(qp.add(k)), av)));
        k += 2;
    }
    if k < n {
        *gp.add(k) += *qp.add(k) as f64 * a;
    }
}

pub unsafe fn madd_peak(iters: u64, seed: f64, sink: &mut f64) -> f64 {
    let m = splat(0.999_999_9);
    let a = splat(1e-9);
    let mut acc = [splat(seed); 8];
    for _ in 0..iters {
        acc[0] = f64x2_add(f64x2_mul(acc[0], m), a);
        acc[1] = f64x2_add(f64x2_mul(acc[1], m), a);
        acc[2] = f64x2_add(f64x2_mul(acc[2], m), a);
        acc[3] = f64x2_add(f64x2_mul(acc[3], m), a);
        acc[4] = f64x2_add(f64x2_mul(acc[4], m), a);
        acc[5] = f64x2_add(f64x2_mul(acc[5], m), a);
        acc[6] = f64x2_add(f64x2_mul(acc[6], m), a);
        acc[7] = f64x2_add(f64x2_mul(acc[7], m), a);
    }
    let mut total = 0.0;
    for v in acc.iter() {
        total += f64x2_extract_lane::<0>(*v) + f64x2_extract_lane::<1>(*v);
    }
    *sink = total;
    iters as f64 * 32.0
}
