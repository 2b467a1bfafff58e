//! Privacy accounting: the Rényi differential privacy (RDP) of the sampled
//! Gaussian mechanism, and its conversion to (epsilon, delta).
//!
//! The mechanism: each record is in a step's sample with probability q, the
//! sum of the sample (each contribution of norm at most 1) gets N(0, sigma^2)
//! noise per coordinate. Its RDP at order alpha > 1 (Mironov, Talwar and Zhang
//! 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism") is
//! ln(A_alpha) / (alpha - 1) with
//!
//!   A_alpha = E_{z ~ N(0, sigma^2)} [ ((1 - q) + q exp((2z - 1) / (2 sigma^2)))^alpha ].
//!
//! - Integer alpha: the binomial expansion is finite and every term positive,
//!   A = sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2)).
//! - Fractional alpha: split the integral at z0 = sigma^2 ln(1/q - 1) + 1/2, where
//!   (1-q) N(0, sigma^2) = q N(1, sigma^2), and expand the binomial on each side in
//!   the direction that converges. Each term is a Gaussian tail mass:
//!     below z0: C(alpha, k) (1-q)^(alpha-k) q^k e^((k^2-k)/(2 sigma^2)) erfc((k - z0)/(sqrt 2 sigma)) / 2,
//!     above z0: C(alpha, k) q^(alpha-k) (1-q)^k e^((j^2-j)/(2 sigma^2)) erfc((z0 - j)/(sqrt 2 sigma)) / 2, j = alpha - k.
//!   The coefficients change sign past k = alpha, so positive and negative
//!   terms are summed apart, in log space (e^7000 is an ordinary exponent here).
//!
//! RDP composes by addition over steps. The conversion to (epsilon, delta) is
//! Balle, Barthe, Gaboardi, Hsu and Sato 2020 (Theorem 21), the one Opacus uses:
//!   epsilon = rdp + ln((alpha - 1) / alpha) - (ln delta + ln alpha) / (alpha - 1),
//! minimized over the orders.
//!
//! The Skellam mechanism's RDP (distributed DP under secure aggregation) and
//! its sampler: skellam.rs.

pub mod skellam;

use crate::special::ln_erfc;

/// ln(e^a + e^b), exact at -inf.
fn ln_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// ln(e^a - e^b) for a >= b (-inf when equal).
fn ln_sub(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    if b >= a {
        return f64::NEG_INFINITY;
    }
    a + (-(b - a).exp()).ln_1p()
}

/// ln A_alpha for an integer order (alpha >= 2).
fn ln_a_integer(q: f64, sigma: f64, alpha: u64) -> f64 {
    let (ln_q, ln_1mq) = (q.ln(), (-q).ln_1p());
    let two_s2 = 2.0 * sigma * sigma;
    let mut total = f64::NEG_INFINITY;
    let mut ln_binom = 0.0; // ln C(alpha, 0)
    for k in 0..=alpha {
        if k > 0 {
            ln_binom += ((alpha - k + 1) as f64).ln() - (k as f64).ln();
        }
        let kf = k as f64;
        let term = ln_binom + kf * ln_q + (alpha - k) as f64 * ln_1mq + (kf * kf - kf) / two_s2;
        total = ln_add(total, term);
    }
    total
}

/// ln A_alpha for a fractional order (alpha > 1).
fn ln_a_fractional(q: f64, sigma: f64, alpha: f64) -> f64 {
    let (ln_q, ln_1mq) = (q.ln(), (-q).ln_1p());
    let two_s2 = 2.0 * sigma * sigma;
    let z0 = sigma * sigma * ((1.0 / q) - 1.0).ln() + 0.5;
    let scale = core::f64::consts::SQRT_2 * sigma;
    let ln_half = -core::f64::consts::LN_2;
    // positive and negative terms apart, each side of z0
    let (mut pos, mut neg) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut ln_binom = 0.0; // ln |C(alpha, k)|
    let mut negative = false; // the sign of C(alpha, k)
    let mut k = 0u64;
    loop {
        if k > 0 {
            let factor = alpha - (k - 1) as f64;
            ln_binom += factor.abs().ln() - (k as f64).ln();
            if factor < 0.0 {
                negative = !negative;
            }
        }
        let i = k as f64;
        let j = alpha - i;
        let below = ln_binom + i * ln_q + j * ln_1mq + (i * i - i) / two_s2 + ln_half + ln_erfc((i - z0) / scale);
        let above = ln_binom + j * ln_q + i * ln_1mq + (j * j - j) / two_s2 + ln_half + ln_erfc((z0 - j) / scale);
        let both = ln_add(below, above);
        // a term of inf - inf: a noise so small that e^((k^2 - k)/(2 sigma^2)) overflows; no privacy to speak of
        if both.is_nan() {
            return f64::INFINITY;
        }
        if negative {
            neg = ln_add(neg, both);
        } else {
            pos = ln_add(pos, both);
        }
        k += 1;
        // A >= 1 (ln A >= 0): once past alpha, terms below e^-40 of it no longer move the sum
        if (k as f64) > alpha + 1.0 && both < ln_sub(pos, neg).max(0.0) - 40.0 {
            break;
        }
        if k > 1_000_000 {
            break;
        }
    }
    ln_sub(pos, neg)
}

/// The RDP of one step of the sampled Gaussian mechanism at order `alpha` > 1:
/// sampling rate q in [0, 1], noise multiplier sigma >= 0 (infinite at sigma 0 with q > 0).
pub fn rdp_sampled_gaussian(q: f64, sigma: f64, alpha: f64) -> f64 {
    if q == 0.0 {
        return 0.0;
    }
    if sigma == 0.0 {
        return f64::INFINITY;
    }
    if q == 1.0 {
        return alpha / (2.0 * sigma * sigma);
    }
    // 1/(2 sigma^2) overflows: the exponents of every term past the first two do too
    if !(1.0 / (2.0 * sigma * sigma)).is_finite() {
        return f64::INFINITY;
    }
    if alpha.is_infinite() {
        return f64::INFINITY;
    }
    let ln_a = if alpha.fract() == 0.0 && alpha <= 1e6 { ln_a_integer(q, sigma, alpha as u64) } else { ln_a_fractional(q, sigma, alpha) };
    // A >= 1 in exact arithmetic; rounding may leave ln A a hair below 0
    ln_a.max(0.0) / (alpha - 1.0)
}

/// epsilon at `delta` for a total RDP `rdp[i]` at order `orders[i]` (Balle et al. 2020, Theorem 21),
/// the least over the orders: (epsilon, index of its order). Infinite (and index usize::MAX) when every order is;
/// 0 (and usize::MAX) when no order has any loss.
pub fn epsilon_from_rdp(orders: &[f64], rdp: &[f64], delta: f64) -> (f64, usize) {
    // no loss at any order (no steps, or no sampling): the two distributions are the same, (0, 0)-DP;
    // the conversion would still charge its slack of about (ln(1/delta) - ln alpha) / (alpha - 1)
    if !rdp.is_empty() && rdp.iter().all(|&r| r == 0.0) {
        return (0.0, usize::MAX);
    }
    let mut best = (f64::INFINITY, usize::MAX);
    for (i, (&a, &r)) in orders.iter().zip(rdp).enumerate() {
        let eps = r + ((a - 1.0) / a).ln() - (delta.ln() + a.ln()) / (a - 1.0);
        if eps < best.0 {
            best = (eps, i);
        }
    }
    if best.1 != usize::MAX && best.0 < 0.0 {
        best.0 = 0.0;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_sampling_it_is_the_gaussian_mechanism() {
        assert_eq!(rdp_sampled_gaussian(1.0, 2.0, 8.0), 1.0);
        assert_eq!(rdp_sampled_gaussian(0.0, 2.0, 8.0), 0.0);
        assert_eq!(rdp_sampled_gaussian(0.5, 0.0, 8.0), f64::INFINITY);
    }

    #[test]
    fn fractional_orders_join_the_integer_ones() {
        // the fractional series at an order next to an integer agrees with the finite sum at that integer
        for &(q, sigma) in &[(0.01, 1.1), (0.1, 0.8), (0.001, 2.0), (0.1, 0.5)] {
            for &a in &[2.0, 3.0, 8.0] {
                let exact = rdp_sampled_gaussian(q, sigma, a);
                let near = ln_a_fractional(q, sigma, a) / (a - 1.0);
                assert!((exact - near).abs() <= 1e-9 * exact.abs().max(1e-300), "q {} sigma {} alpha {}: {} {}", q, sigma, a, exact, near);
            }
        }
    }

    #[test]
    fn degenerate_noise_is_infinite_or_free_never_a_long_loop() {
        assert_eq!(rdp_sampled_gaussian(0.1, 1e-300, 2.5), f64::INFINITY);
        assert_eq!(rdp_sampled_gaussian(0.1, 1e-160, 2.5), f64::INFINITY);
        assert_eq!(rdp_sampled_gaussian(0.1, 1e-160, 3.0), f64::INFINITY);
        assert!(rdp_sampled_gaussian(0.1, 1e300, 2.5) < 1e-12);
        assert!(rdp_sampled_gaussian(1e-300, 1.0, 2.5) < 1e-12);
        let r = rdp_sampled_gaussian(0.1, 1e-3, 2.5);
        assert!(r > 1e3, "{}", r);
    }

    #[test]
    fn it_grows_with_the_order_and_the_sampling_rate() {
        let mut last = 0.0;
        for i in 0..60 {
            let r = rdp_sampled_gaussian(0.01, 1.0, 1.1 + i as f64 * 0.5);
            assert!(r >= last);
            last = r;
        }
        assert!(rdp_sampled_gaussian(0.02, 1.0, 4.0) > rdp_sampled_gaussian(0.01, 1.0, 4.0));
    }

    #[test]
    fn epsilon_takes_the_best_order() {
        let orders = [2.0, 4.0, 8.0];
        let rdp = [1.0, 1.0, 1.0];
        let (eps, i) = epsilon_from_rdp(&orders, &rdp, 1e-5);
        assert_eq!(i, 2);
        assert!((eps - (1.0 + (7.0f64 / 8.0).ln() - (1e-5f64.ln() + 8f64.ln()) / 7.0)).abs() < 1e-12);
        assert_eq!(epsilon_from_rdp(&orders, &[0.0, 0.0, 0.0], 1e-5), (0.0, usize::MAX));
    }
}
