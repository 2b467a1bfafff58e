//! The complementary error function, in log space where the value underflows:
//! what the privacy accountant's tail masses need (erfc(40) is 1e-697, which
//! no f64 holds, while its logarithm is an ordinary number).
//!
//! Two methods, each where it is accurate:
//! - |x| small: erf by its series of positive terms,
//!   erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 * 3 * ... * (2n+1)),
//!   and erfc = 1 - erf (at most a digit lost below the switch point);
//! - x large: the continued fraction of erfc (Lentz's method),
//!   erfc(x) = e^(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
//!   whose logarithm is taken term by term, so it never underflows;
//! - x very negative: erfc(x) = 2 - erfc(-x).

/// Where the continued fraction takes over from the series.
const SWITCH: f64 = 1.5;
const LN_SQRT_PI: f64 = 0.572_364_942_924_700_1;
const FRAC_2_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// erf(x) by the series of positive terms (accurate for |x| up to a few).
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term.abs() > 1e-17 * sum.abs() {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
        if n > 500.0 {
            break;
        }
    }
    FRAC_2_SQRT_PI * (-x2).exp() * sum
}

/// ln of the continued fraction K(x) = erfc(x) sqrt(pi) e^(x^2), for x >= SWITCH.
fn ln_erfc_fraction(x: f64) -> f64 {
    // K = 1/(x + a1/(x + a2/(x + ...))), a_n = n/2: Lentz's method on b0 = x, a_n, b_n = x
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for n in 1..10_000 {
        let a = n as f64 / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    -f.ln()
}

/// erfc(x) (0 where it underflows).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= SWITCH {
        return (ln_erfc(x)).exp();
    }
    if x <= -SWITCH {
        return 2.0 - erfc(-x);
    }
    1.0 - erf_series(x)
}

/// ln erfc(x), finite for every finite x (erfc(x) > 0 for all x; it is about -x^2 for large x).
pub fn ln_erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    if x >= SWITCH {
        return -x * x - LN_SQRT_PI + ln_erfc_fraction(x);
    }
    erfc(x).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_identities() {
        assert_eq!(erfc(0.0), 1.0);
        // erfc(x) + erfc(-x) = 2, across the switch point
        for &x in &[0.1, 0.7, 1.4, 1.5, 1.6, 2.5, 4.0] {
            assert!((erfc(x) + erfc(-x) - 2.0).abs() < 1e-15, "{}", x);
        }
        // both methods agree near the switch point (continuity)
        let below = 1.0 - erf_series(SWITCH);
        let above = (-SWITCH * SWITCH - LN_SQRT_PI + ln_erfc_fraction(SWITCH)).exp();
        assert!((below - above).abs() < 1e-14 * above, "{} {}", below, above);
        // where erfc underflows, its logarithm is still about -x^2 - ln(x sqrt(pi))
        let x = 40.0;
        let asymptotic = -x * x - (x * core::f64::consts::PI.sqrt()).ln();
        assert!((ln_erfc(x) - asymptotic).abs() < 1e-3);
        assert_eq!(erfc(40.0), 0.0);
        assert!(ln_erfc(-30.0) - 2f64.ln() < 1e-15);
        assert!(erfc(f64::NAN).is_nan() && ln_erfc(f64::NAN).is_nan());
    }
}
