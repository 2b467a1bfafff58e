//! SIMD128 digamma: both lanes take the scalar path's steps, selected by masks,
//! with the same IEEE operations in the same order as the scalar functions in
//! mod.rs (which run any pair holding a non-positive, infinite or NaN lane).

use super::coefficients::{DIGAMMA_ASYMPTOTIC, DIGAMMA_R_POLY, DIGAMMA_SHIFTED_POLY, X0_HI, X0_LO};
use super::{digamma, ESTRIN_MAX};
use crate::kernels::simd::{ld, ln_v, splat, st};
use core::arch::wasm32::*;

/// scalar estrin, lane for lane
#[inline(always)]
unsafe fn estrin_v(c: &[f64], x: v128) -> v128 {
    let mut buf = [splat(0.0); ESTRIN_MAX];
    let mut len = (c.len() + 1) / 2;
    for i in 0..len {
        buf[i] = if 2 * i + 1 < c.len() { f64x2_add(splat(c[2 * i]), f64x2_mul(splat(c[2 * i + 1]), x)) } else { splat(c[2 * i]) };
    }
    let mut p = f64x2_mul(x, x);
    while len > 1 {
        let half = (len + 1) / 2;
        for i in 0..half {
            buf[i] = if 2 * i + 1 < len { f64x2_add(buf[2 * i], f64x2_mul(buf[2 * i + 1], p)) } else { buf[2 * i] };
        }
        len = half;
        p = f64x2_mul(p, p);
    }
    buf[0]
}

/// scalar digamma_series, lane for lane
#[inline(always)]
unsafe fn series_v(z: v128) -> v128 {
    f64x2_mul(z, estrin_v(&DIGAMMA_ASYMPTOTIC, z))
}

#[inline(always)]
unsafe fn asymptotic_v(x: v128) -> v128 {
    let r = f64x2_div(splat(1.0), x);
    f64x2_sub(f64x2_sub(ln_v(x), f64x2_mul(splat(0.5), r)), series_v(f64x2_mul(r, r)))
}

#[inline(always)]
unsafe fn digamma_1_2_v(y: v128) -> v128 {
    let t = f64x2_sub(f64x2_sub(y, splat(X0_HI)), splat(X0_LO));
    f64x2_mul(t, estrin_v(&DIGAMMA_R_POLY, f64x2_sub(f64x2_mul(splat(2.0), y), splat(3.0))))
}

/// scalar shift_sum, lane for lane
#[inline(always)]
unsafe fn shift_sum_v(x: v128) -> v128 {
    let pair = |k: f64| {
        let (a, b) = (f64x2_add(x, splat(k)), f64x2_add(x, splat(k + 1.0)));
        (f64x2_add(a, b), f64x2_mul(a, b))
    };
    let ((n1, d1), (n2, d2)) = (pair(0.0), pair(2.0));
    f64x2_div(f64x2_add(f64x2_mul(n1, d2), f64x2_mul(n2, d1)), f64x2_mul(d1, d2))
}

/// scalar digamma_2_10, lane for lane
#[inline(always)]
unsafe fn digamma_2_10_v(x: v128) -> v128 {
    let t = f64x2_mul(f64x2_sub(x, splat(6.0)), splat(0.25));
    f64x2_sub(estrin_v(&DIGAMMA_SHIFTED_POLY, t), shift_sum_v(x))
}

/// digamma of two finite positive lanes: scalar digamma_positive, lane for lane.
/// Each of the three methods runs only when some lane needs it.
#[inline(always)]
unsafe fn digamma_positive_v(x: v128) -> v128 {
    let ge10 = f64x2_ge(x, splat(10.0));
    if i64x2_all_true(ge10) {
        return asymptotic_v(x);
    }
    let lt2 = f64x2_lt(x, splat(2.0));
    let mut r = splat(0.0);
    if !i64x2_all_true(lt2) {
        let mid = digamma_2_10_v(x);
        r = if v128_any_true(ge10) { v128_bitselect(asymptotic_v(x), mid, ge10) } else { mid };
    }
    if v128_any_true(lt2) {
        let lt1 = f64x2_lt(x, splat(1.0));
        let core = digamma_1_2_v(v128_bitselect(f64x2_add(x, splat(1.0)), x, lt1));
        let small = v128_bitselect(f64x2_sub(core, f64x2_div(splat(1.0), x)), core, lt1);
        r = v128_bitselect(small, r, lt2);
    }
    r
}

#[inline(always)]
unsafe fn positive_finite(x: v128) -> v128 {
    v128_and(f64x2_gt(x, splat(0.0)), f64x2_lt(x, splat(f64::INFINITY)))
}

#[inline(always)]
unsafe fn all_positive_finite(x: v128) -> bool {
    i64x2_all_true(positive_finite(x))
}

#[inline(always)]
unsafe fn at_least_10(x: v128) -> v128 {
    v128_and(f64x2_ge(x, splat(10.0)), f64x2_lt(x, splat(f64::INFINITY)))
}

pub unsafe fn digamma_in_place(a: &mut [f64]) {
    let p = a.as_mut_ptr();
    let n = a.len();
    let mut i = 0;
    // Four vectors per step: their dependency chains are independent, and
    // interleaving them is what keeps the execution units busy (a one-vector loop
    // ran at half the speed). NaN fails every comparison, so it never passes the
    // range tests and goes to the scalar function.
    while i + 8 <= n {
        let (xa, xb, xc, xd) = (ld(p.add(i)), ld(p.add(i + 2)), ld(p.add(i + 4)), ld(p.add(i + 6)));
        if i64x2_all_true(v128_and(v128_and(at_least_10(xa), at_least_10(xb)), v128_and(at_least_10(xc), at_least_10(xd)))) {
            let (ra, rb, rc, rd) = (asymptotic_v(xa), asymptotic_v(xb), asymptotic_v(xc), asymptotic_v(xd));
            st(p.add(i), ra);
            st(p.add(i + 2), rb);
            st(p.add(i + 4), rc);
            st(p.add(i + 6), rd);
        } else if i64x2_all_true(v128_and(v128_and(positive_finite(xa), positive_finite(xb)), v128_and(positive_finite(xc), positive_finite(xd)))) {
            let (ra, rb, rc, rd) = (digamma_positive_v(xa), digamma_positive_v(xb), digamma_positive_v(xc), digamma_positive_v(xd));
            st(p.add(i), ra);
            st(p.add(i + 2), rb);
            st(p.add(i + 4), rc);
            st(p.add(i + 6), rd);
        } else {
            one_vector(p, i);
            one_vector(p, i + 2);
            one_vector(p, i + 4);
            one_vector(p, i + 6);
        }
        i += 8;
    }
    while i + 2 <= n {
        one_vector(p, i);
        i += 2;
    }
    if i < n {
        *p.add(i) = digamma(*p.add(i));
    }
}

/// One vector: the masked general path, or the scalar function for lanes outside (0, inf).
#[inline(always)]
unsafe fn one_vector(p: *mut f64, i: usize) {
    let x = ld(p.add(i));
    if all_positive_finite(x) {
        st(p.add(i), digamma_positive_v(x));
    } else {
        *p.add(i) = digamma(*p.add(i));
        *p.add(i + 1) = digamma(*p.add(i + 1));
    }
}
