//! Special functions: digamma, lgamma, trigamma, the digamma difference
//! psi(x + n) - psi(x) that Dirichlet updates take, and the Dirichlet-multinomial
//! log-pmf. Conventions at poles and infinities follow scipy.special (digamma,
//! gammaln, polygamma(1, .)):
//!
//! | x            | digamma | lgamma | trigamma |
//! |--------------|---------|--------|----------|
//! | +0           | -inf    | +inf   | +inf     |
//! | -0           | +inf    | +inf   | +inf     |
//! | -1, -2, ...  | NaN     | +inf   | +inf     |
//! | +inf         | +inf    | +inf   | 0        |
//! | -inf         | NaN     | -inf   | +inf     |
//! | NaN          | NaN     | NaN    | NaN      |
//!
//! (One deliberate difference: scipy's gammaln gives +inf for subnormal x such
//! as 5e-324, whose lgamma is a finite -ln x = 744.44; fedmix returns that.)
//!
//! Methods (coefficients from scripts/gen-special-coefficients.py):
//! - digamma: psi(x) = (x - x0) R(x) on [1, 2], with x0 the positive root and R
//!   a polynomial (Chebyshev interpolant), so the error stays relative through the
//!   root; below 1 psi(x + 1) - 1/x; on [2, 10) psi(x + 4) - sum_{k<4} 1/(x + k)
//!   with psi(x + 4) a polynomial on [6, 14] (a cancellation of at most 4x);
//!   from 10 on the asymptotic series;
//!   negative x by reflection psi(x) = psi(1 - x) - pi cot(pi x).
//! - lgamma: lgamma(2 + t) = t S(t) for |t| <= 1/2 (S from zeta(k) - 1, relative
//!   accuracy at the root 2), lgamma(1 + t) = lgamma(2 + t) - log1p(t) (root 1),
//!   a product of logs down to [1.5, 2.5), Stirling's series from 10 on,
//!   reflection for negative x.
//! - trigamma: recurrence up to 10 (all terms positive), asymptotic series,
//!   reflection.
//! The scalar functions use the kernels' ln (kernels::scalar::ln) so that the
//! vectorized versions, which use its SIMD twin, agree with them bit for bit.

pub mod coefficients;
mod erfc;
pub use self::erfc::{erfc, ln_erfc};
#[cfg(target_feature = "simd128")]
mod simd;

use self::coefficients::*;
use crate::kernels::scalar::ln;
use std::f64::consts::PI;

/// Longest polynomial `estrin` takes.
pub(crate) const ESTRIN_MAX: usize = 32;

/// c[0] + c[1] x + c[2] x^2 + ... by Estrin's scheme: pairs c[2i] + c[2i+1] x,
/// then pairs of those with x^2, x^4, ...: depth log2(len) instead of Horner's len,
/// which is what a vectorized loop is bound by. The SIMD twin (simd.rs) performs
/// the same operations in the same order.
#[inline(always)]
pub(crate) fn estrin(c: &[f64], x: f64) -> f64 {
    let mut buf = [0.0f64; ESTRIN_MAX];
    let mut len = (c.len() + 1) / 2;
    for i in 0..len {
        buf[i] = if 2 * i + 1 < c.len() { c[2 * i] + c[2 * i + 1] * x } else { c[2 * i] };
    }
    let mut p = x * x;
    while len > 1 {
        let half = (len + 1) / 2;
        for i in 0..half {
            buf[i] = if 2 * i + 1 < len { buf[2 * i] + buf[2 * i + 1] * p } else { buf[2 * i] };
        }
        len = half;
        p = p * p;
    }
    buf[0]
}

/// Horner's scheme, c[0] + c[1] z + c[2] z^2 + ...
#[inline(always)]
pub(crate) fn poly(c: &[f64], z: f64) -> f64 {
    let mut acc = c[c.len() - 1];
    for &ck in c[..c.len() - 1].iter().rev() {
        acc = ck + z * acc;
    }
    acc
}

/// ln(1 + t) accurate for small t: ln(u) t / (u - 1) with u = 1 + t corrects the
/// rounding of u (Goldberg's method), with the kernels' ln.
#[inline(always)]
pub(crate) fn log1p(t: f64) -> f64 {
    let u = 1.0 + t;
    if u == 1.0 {
        t
    } else {
        ln(u) * (t / (u - 1.0))
    }
}

/// The fraction of x nearest 0, in [-1/2, 1/2] (exact for |x| < 2^52): sin(pi x)
/// and cot(pi x) depend on it alone (up to sign).
fn frac_nearest(x: f64) -> f64 {
    x - x.round()
}

/// cot(pi x) = sign(f) tan(pi (1/2 - |f|)): exactly 0 at half-integers, where
/// 1 / tan(pi/2) would leave 6e-17.
fn cot_pi(x: f64) -> f64 {
    let f = frac_nearest(x);
    let c = (PI * (0.5 - f.abs())).tan();
    if f < 0.0 {
        -c
    } else {
        c
    }
}

#[inline(always)]
pub(crate) fn digamma_1_2(y: f64) -> f64 {
    ((y - X0_HI) - X0_LO) * estrin(&DIGAMMA_R_POLY, 2.0 * y - 3.0)
}

/// sum_k B_2k / (2k) z^k, the asymptotic series of digamma in z = 1/x^2.
#[inline(always)]
pub(crate) fn digamma_series(z: f64) -> f64 {
    z * estrin(&DIGAMMA_ASYMPTOTIC, z)
}

#[inline(always)]
pub(crate) fn digamma_asymptotic(x: f64) -> f64 {
    let r = 1.0 / x;
    (ln(x) - 0.5 * r) - digamma_series(r * r)
}

/// sum_{k=0}^{3} 1/(x + k) in one division: pairs 1/a + 1/b = (a + b)/(a b)
/// kept as (numerator, denominator) and the two pairs joined into one fraction
/// (about five roundings); a fixed shape, so the vectorized twin does not
/// diverge between lanes.
#[inline(always)]
pub(crate) fn shift_sum(x: f64) -> f64 {
    let pair = |k: f64| {
        let (a, b) = (x + k, x + (k + 1.0));
        (a + b, a * b)
    };
    let ((n1, d1), (n2, d2)) = (pair(0.0), pair(2.0));
    (n1 * d2 + n2 * d1) / (d1 * d2)
}

/// digamma on [2, 10): psi(x + 4) from its polynomial on [6, 14] minus
/// sum_{k<4} 1/(x + k); no logarithm and one division, so about a third
/// cheaper than the asymptotic series at x + 8. The subtraction cancels by a
/// factor of at most 4 (at x = 2), leaving a few 1e-16 of relative error.
#[inline(always)]
pub(crate) fn digamma_2_10(x: f64) -> f64 {
    estrin(&DIGAMMA_SHIFTED_POLY, (x - 6.0) * 0.25) - shift_sum(x)
}

/// digamma for finite x > 0: the asymptotic series from 10 on; on [1, 2) the
/// root-centred polynomial, below 1 the polynomial at x + 1 minus 1/x; on
/// [2, 10) digamma_2_10.
#[inline(always)]
pub(crate) fn digamma_positive(x: f64) -> f64 {
    if x >= 10.0 {
        digamma_asymptotic(x)
    } else if x < 1.0 {
        digamma_1_2(x + 1.0) - 1.0 / x
    } else if x < 2.0 {
        digamma_1_2(x)
    } else {
        digamma_2_10(x)
    }
}

/// The digamma function psi(x) = d/dx ln Gamma(x).
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 {
        return if x.is_sign_positive() { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x < 0.0 {
        if x == f64::NEG_INFINITY || x == x.floor() {
            return f64::NAN;
        }
        return digamma_positive(1.0 - x) - PI * cot_pi(x);
    }
    digamma_positive(x)
}

/// ln of any positive finite x: the kernels' ln takes normal numbers, so a
/// subnormal is scaled by 2^54 first.
fn ln_any(x: f64) -> f64 {
    if x < f64::MIN_POSITIVE {
        ln(x * 18_014_398_509_481_984.0) - 54.0 * std::f64::consts::LN_2
    } else {
        ln(x)
    }
}

/// lgamma(1 + t) for |t| <= 1/2 (relative accuracy at t = 0 and t = 1).
#[inline(always)]
fn lgamma_1p(t: f64) -> f64 {
    t * poly(&LGAMMA2_TAYLOR, t) - log1p(t)
}

fn lgamma_positive(x: f64) -> f64 {
    if x >= 10.0 {
        let r = 1.0 / x;
        return ((x - 0.5) * ln(x) - x) + (HALF_LN_2PI + r * poly(&LGAMMA_ASYMPTOTIC, r * r));
    }
    if x < 0.5 {
        return lgamma_1p(x) - ln_any(x);
    }
    if x < 1.5 {
        return lgamma_1p(x - 1.0);
    }
    let mut y = x;
    let mut prod = 1.0;
    while y >= 2.5 {
        y -= 1.0;
        prod *= y;
    }
    let t = y - 2.0;
    let core = t * poly(&LGAMMA2_TAYLOR, t);
    if prod == 1.0 {
        core
    } else {
        core + ln(prod)
    }
}

/// ln |Gamma(x)|.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() {
        return x; // scipy: gammaln(+inf) = +inf, gammaln(-inf) = -inf
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::INFINITY;
        }
        // Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        return (LN_PI - (PI * frac_nearest(x)).sin().abs().ln()) - lgamma_positive(1.0 - x);
    }
    lgamma_positive(x)
}

fn trigamma_positive(x: f64) -> f64 {
    let mut y = x;
    let mut acc = 0.0;
    while y < 10.0 {
        acc += 1.0 / (y * y);
        y += 1.0;
    }
    let r = 1.0 / y;
    let z = r * r;
    acc + (r + z * (0.5 + r * poly(&TRIGAMMA_ASYMPTOTIC, z)))
}

/// The trigamma function psi'(x).
pub fn trigamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::INFINITY; // poles, and -inf as scipy
        }
        let s = (PI * frac_nearest(x)).sin();
        return (PI * PI) / (s * s) - trigamma_positive(1.0 - x);
    }
    trigamma_positive(x)
}

/// Largest integer n for which digamma_diff sums 1/(x + k) term by term.
pub const DIGAMMA_DIFF_SUM_MAX: f64 = 32.0;

/// psi(x + n) - psi(x) for x > 0, n >= 0, accurate where the plain difference
/// cancels: a finite sum of 1/(x + k) for small integer n (exact in spirit, and
/// right for tiny x where psi(x) ~ -1/x), and for x >= 10 a difference of
/// asymptotic series with log1p. NaN outside the domain.
pub fn digamma_diff(x: f64, n: f64) -> f64 {
    digamma_diff_with(x, n, DIGAMMA_DIFF_SUM_MAX, || digamma_positive(x))
}

/// Largest integer n for which digamma_diff_known sums 1/(x + k) term by term.
pub const DIGAMMA_DIFF_KNOWN_SUM_MAX: f64 = 8.0;

/// psi(x + n) - psi(x) given psi(x) (`psi_x`, the caller's digamma(x)): what a
/// Dirichlet update needs for every count of every client against the same x,
/// so psi(x) is computed once. Sums 1/(x + k) only up to n = 8 and otherwise
/// takes one digamma: for x < 10 and n >= 9 the difference is at least 1/2
/// while |psi(x + n)| + |psi(x)| <= ln(n + 10) + 1/x + 2.3, so the plain
/// difference keeps a relative error of a few 1e-15 (tested against
/// digamma_diff); for x >= 10 the same asymptotic difference as digamma_diff.
pub fn digamma_diff_known(x: f64, psi_x: f64, n: f64) -> f64 {
    digamma_diff_with(x, n, DIGAMMA_DIFF_KNOWN_SUM_MAX, || psi_x)
}

/// digamma_diff_known with psi(x) computed only if the branch needs it (the
/// same value as digamma_diff_known(x, digamma(x), n), bit for bit).
pub fn digamma_diff_lazy(x: f64, n: f64) -> f64 {
    digamma_diff_with(x, n, DIGAMMA_DIFF_KNOWN_SUM_MAX, || digamma_positive(x))
}

#[inline(always)]
fn digamma_diff_with(x: f64, n: f64, sum_max: f64, psi_x: impl FnOnce() -> f64) -> f64 {
    if !(x > 0.0) || !(n >= 0.0) || x.is_infinite() || n.is_infinite() {
        return f64::NAN;
    }
    if n == 0.0 {
        return 0.0;
    }
    if n <= sum_max && n == n.floor() {
        let mut s = 0.0;
        let mut k = n - 1.0;
        // smallest terms first
        while k >= 0.0 {
            s += 1.0 / (x + k);
            k -= 1.0;
        }
        return s;
    }
    if x >= 10.0 {
        // ln((x+n)/x) + (1/(2x) - 1/(2(x+n))) - sum_k c_k (x^-2k - (x+n)^-2k)
        let y = x + n;
        let (rx, ry) = (1.0 / x, 1.0 / y);
        let (zx, zy) = (rx * rx, ry * ry);
        let half = 0.5 * n * rx * ry;
        // psi ~ ln - 1/2x - S: the difference is ln(y/x) + (1/2x - 1/2y) + (S(x) - S(y))
        let series = digamma_series(zx) - digamma_series(zy);
        return (log1p(n / x) + half) + series;
    }
    digamma_positive(x + n) - psi_x()
}

/// Largest integer n for which ln_rising_factorial multiplies the terms directly.
const RISING_PRODUCT_MAX: f64 = 32.0;

/// ln Gamma(x + n) - ln Gamma(x) = ln (x (x+1) ... (x+n-1)) for x > 0, n >= 0: the
/// log rising factorial of the Dirichlet-multinomial pmf. For small integer n a
/// product of the terms (one ln), for x >= 10 a difference of Stirling series
/// with log1p, which keeps its precision when x is large and n small (where the
/// plain lgamma difference cancels); NaN outside the domain.
pub fn ln_rising_factorial(x: f64, n: f64) -> f64 {
    ln_rising_factorial_with(x, n, || lgamma_positive(x))
}

/// ln Gamma(x + n) - ln Gamma(x) given ln Gamma(x) (`lgamma_x`, the caller's
/// lgamma(x)), for scoring many counts against the same x: the same branches
/// and accuracy as ln_rising_factorial (below 10 its last branch is the
/// difference lgamma(x + n) - lgamma(x) anyway), one lgamma instead of two.
pub fn ln_rising_factorial_known(x: f64, lgamma_x: f64, n: f64) -> f64 {
    ln_rising_factorial_with(x, n, || lgamma_x)
}

#[inline(always)]
fn ln_rising_factorial_with(x: f64, n: f64, lgamma_x: impl FnOnce() -> f64) -> f64 {
    if !(x > 0.0) || !(n >= 0.0) || x.is_infinite() || n.is_infinite() {
        return f64::NAN;
    }
    if n == 0.0 {
        return 0.0;
    }
    if n <= RISING_PRODUCT_MAX && n == n.floor() {
        // at most 32 factors below 2^1023 each cannot overflow... unless x is huge:
        // then fall through to Stirling
        if x < 1e9 {
            let mut p = 1.0;
            let mut k = 0.0;
            while k < n {
                p *= x + k;
                k += 1.0;
            }
            // p is subnormal when x is (the kernels' ln takes normal numbers)
            return ln_any(p);
        }
    }
    if x >= 10.0 {
        let y = x + n;
        let (rx, ry) = (1.0 / x, 1.0 / y);
        let series = ry * poly(&LGAMMA_ASYMPTOTIC, ry * ry) - rx * poly(&LGAMMA_ASYMPTOTIC, rx * rx);
        // (y - 1/2) ln y - y - (x - 1/2) ln x + x = (x - 1/2) ln(y/x) + n (ln y - 1)
        return ((x - 0.5) * log1p(n / x) + n * (ln(y) - 1.0)) + series;
    }
    lgamma_positive(x + n) - lgamma_x()
}

macro_rules! in_place {
    ($name:ident, $scalar:ident, $doc:expr) => {
        #[doc = $doc]
        pub fn $name(a: &mut [f64]) {
            #[cfg(target_feature = "simd128")]
            unsafe {
                simd::$name(a)
            }
            #[cfg(not(target_feature = "simd128"))]
            for v in a.iter_mut() {
                *v = $scalar(*v);
            }
        }
    };
}

in_place!(digamma_in_place, digamma, "digamma of every element, vectorized where the engine has SIMD128.");

/// lgamma of every element.
pub fn lgamma_in_place(a: &mut [f64]) {
    for v in a.iter_mut() {
        *v = lgamma(*v);
    }
}

/// trigamma of every element.
pub fn trigamma_in_place(a: &mut [f64]) {
    for v in a.iter_mut() {
        *v = trigamma(*v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const EULER: f64 = 0.577_215_664_901_532_9;

    fn rel(a: f64, b: f64) -> f64 {
        if a == b {
            0.0
        } else {
            (a - b).abs() / b.abs()
        }
    }

    #[test]
    fn known_values() {
        assert!(rel(digamma(1.0), -EULER) < 1e-15);
        assert!(rel(digamma(0.5), -EULER - 2.0 * std::f64::consts::LN_2) < 1e-15);
        assert!(digamma(X0_HI).abs() < 1e-16);
        assert!(rel(lgamma(0.5), 0.5 * PI.ln()) < 1e-15);
        assert_eq!(lgamma(1.0), 0.0);
        assert_eq!(lgamma(2.0), 0.0);
        assert!(rel(lgamma(10.0), 362880f64.ln()) < 1e-15);
        assert!(rel(lgamma(171.0), (1..171).map(|k| (k as f64).ln()).sum::<f64>()) < 1e-14);
        assert!(rel(trigamma(1.0), PI * PI / 6.0) < 1e-15);
        assert!(rel(trigamma(0.5), PI * PI / 2.0) < 1e-15);
    }

    #[test]
    fn identities_hold() {
        let mut x = 1e-5;
        while x < 1e7 {
            // psi(x + 1) = psi(x) + 1/x; lgamma(x + 1) = lgamma(x) + ln x; psi'(x) = psi'(x + 1) + 1/x^2
            // each side is a sum of three terms rounded once or more: allow ~5 ulps
            let d = digamma(x + 1.0) - digamma(x) - 1.0 / x;
            assert!(d.abs() <= 1e-15 * (digamma(x).abs() + 1.0 / x), "digamma at {}: {}", x, d);
            let l = lgamma(x + 1.0) - lgamma(x) - x.ln();
            assert!(l.abs() <= 1e-15 * (lgamma(x).abs() + x.ln().abs()) + 1e-300, "lgamma at {}: {}", x, l);
            let t = trigamma(x) - trigamma(x + 1.0) - 1.0 / (x * x);
            assert!(t.abs() <= 1e-15 * trigamma(x), "trigamma at {}: {}", x, t);
            x *= 1.37;
        }
    }

    #[test]
    fn poles_and_infinities_as_scipy() {
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
        assert!(digamma(-3.0).is_nan() && digamma(f64::NEG_INFINITY).is_nan() && digamma(f64::NAN).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
        assert_eq!(lgamma(0.0), f64::INFINITY);
        assert_eq!(lgamma(-2.0), f64::INFINITY);
        assert_eq!(lgamma(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(lgamma(f64::INFINITY), f64::INFINITY);
        assert_eq!(trigamma(0.0), f64::INFINITY);
        assert_eq!(trigamma(-4.0), f64::INFINITY);
        assert_eq!(trigamma(f64::NEG_INFINITY), f64::INFINITY);
        assert_eq!(trigamma(f64::INFINITY), 0.0);
        assert_eq!(trigamma(1e-300), f64::INFINITY);
        assert!(rel(lgamma(5e-324), 744.440_071_921_381_2) < 1e-15); // scipy: inf
    }

    #[test]
    fn reflection_for_negative_arguments() {
        // psi(1 - x) - psi(x) = pi cot(pi x); lgamma(-0.5) = ln(2 sqrt(pi))
        assert!(rel(lgamma(-0.5), (2.0 * PI.sqrt()).ln()) < 1e-15);
        // psi(-1/2) = psi(3/2) = 2 - gamma - 2 ln 2 (cot(-pi/2) = 0), to 21 digits
        assert!(rel(digamma(-0.5), 0.036_489_973_978_576_520_56) < 1e-15);
        assert!(rel(digamma(-2.25), digamma(3.25) + PI) < 1e-14); // - pi cot(-2.25 pi) = + pi
        assert!(rel(trigamma(-0.5), PI * PI - trigamma(1.5)) < 1e-15);
    }

    #[test]
    fn rising_factorial_is_accurate() {
        for &x in &[1e-9f64, 1e-3, 0.5, 2.5, 9.5, 10.0, 123.4, 1e6, 1e12] {
            for &n in &[1.0f64, 3.0, 32.0, 33.0, 250.0, 1e5, 0.5, 7.25] {
                if n != n.floor() && x > 200.0 {
                    continue; // the lgamma-difference reference itself cancels there (see the fixtures)
                }
                let got = ln_rising_factorial(x, n);
                // reference: the log of the product, term by term, in a safe order, for integers
                let want = if n == n.floor() && n <= 1e5 {
                    let mut s = 0.0;
                    let mut k = n - 1.0;
                    while k >= 0.0 {
                        s += (x + k).ln();
                        k -= 1.0;
                    }
                    s
                } else {
                    lgamma(x + n) - lgamma(x)
                };
                let tol = if n == n.floor() { 1e-13 } else { 1e-11 };
                assert!(rel(got, want) < tol || (got - want).abs() < 1e-13, "x {} n {}: {} vs {}", x, n, got, want);
            }
        }
        assert_eq!(ln_rising_factorial(3.0, 0.0), 0.0);
        assert!(ln_rising_factorial(-1.0, 2.0).is_nan());
        // subnormal x: ln(x (x + 1)) = ln x to the last bit
        for &x in &[5e-324f64, 1e-310, 2e-308] {
            assert!(rel(ln_rising_factorial(x, 2.0), ln_any(x)) < 1e-15, "x {}", x);
            assert!(rel(ln_any(x), x.ln()) < 1e-15);
        }
    }

    #[test]
    fn digamma_difference_with_known_digamma_matches() {
        for &x in &[1e-8, 1e-3, 0.05, 0.5, 3.0, 9.99, 10.0, 1e3, 1e7] {
            for &n in &[1.0f64, 2.0, 8.0, 9.0, 17.0, 32.0, 33.0, 100.0, 1e4, 1e6, 0.5, 7.25] {
                let got = digamma_diff_known(x, digamma(x), n);
                assert_eq!(digamma_diff_lazy(x, n), got);
                let want = digamma_diff(x, n);
                assert!(rel(got, want) < 1e-14, "x {} n {}: {} vs {}", x, n, got, want);
            }
        }
        assert_eq!(digamma_diff_known(2.0, digamma(2.0), 0.0), 0.0);
        assert!(digamma_diff_known(0.0, f64::NEG_INFINITY, 1.0).is_nan());
    }

    #[test]
    fn rising_factorial_with_known_lgamma_matches() {
        for &x in &[1e-8, 1e-3, 0.05, 0.5, 3.0, 9.99, 10.0, 1e3, 1e7] {
            for &n in &[1.0f64, 2.0, 31.0, 32.0, 33.0, 100.0, 1e4, 1e6, 0.5, 7.25] {
                assert_eq!(ln_rising_factorial_known(x, lgamma(x), n), ln_rising_factorial(x, n), "x {} n {}", x, n);
            }
        }
    }

    #[test]
    fn digamma_difference_is_accurate() {
        for &x in &[1e-8, 1e-3, 0.05, 0.5, 3.0, 9.99, 10.0, 1e3, 1e7] {
            for &n in &[1.0f64, 2.0, 7.0, 32.0, 33.0, 100.0, 1e4, 0.5] {
                if n != n.floor() && x > 200.0 {
                    continue; // the plain-difference reference cancels there (see the fixtures)
                }
                let d = digamma_diff(x, n);
                // reference: finite sum for integers (long sums in a safe order), else plain difference
                let want = if n == n.floor() && n <= 1e4 {
                    let mut s = 0.0;
                    let mut k = n - 1.0;
                    while k >= 0.0 {
                        s += 1.0 / (x + k);
                        k -= 1.0;
                    }
                    s
                } else {
                    digamma(x + n) - digamma(x)
                };
                assert!(rel(d, want) < 2e-13, "x {} n {}: {} vs {}", x, n, d, want);
            }
        }
        assert_eq!(digamma_diff(2.0, 0.0), 0.0);
        assert!(digamma_diff(0.0, 1.0).is_nan() && digamma_diff(1.0, -1.0).is_nan());
    }
}
