//! The Skellam mechanism (Agarwal, Kairouz and Liu 2021, "The Skellam
//! Mechanism for Differentially Private Federated Learning"): integer noise
//! Sk(mu) = Poisson(mu) - Poisson(mu) (mean 0, variance 2 mu) per coordinate.
//! The sum of independent Sk(mu_i) is Sk(sum mu_i) exactly, so clients that
//! each add a share under secure aggregation release a sum holding Skellam
//! noise of the total mu.
//!
//! Sampling: Poisson by inversion (sequential search from 0) below mu = 10 and
//! by Hörmann's transformed rejection with squeeze (PTRS, 1993) above, driven
//! by a ChaCha20 keystream (secure aggregation's, crate::secure_aggregation). PTRS accepts against the Poisson log-pmf written
//! in the saddle-point form (Loader's bd0 and the Stirling error), so the test
//! stays accurate to ~1e-12 where -mu + k ln mu - ln k! would lose its digits
//! to cancellation at large mu. Exact up to that floating-point evaluation and
//! the 53-bit uniforms.
//!
//! Privacy: the RDP bound of the paper's multidimensional theorem, for integer
//! vectors whose neighbours differ by at most l1 in L1 and l2 in L2 norm, at
//! integer orders alpha:
//!   eps(alpha) = alpha l2^2 / (4 mu) + min(((2 alpha - 1) l2^2 + 6 l1) / (16 mu^2), 3 l1 / (4 mu)).
//! A fractional order interpolates between its two integer neighbours:
//! (alpha - 1) D_alpha is the log moment generating function of the privacy
//! loss, convex in alpha and 0 at alpha = 1, so it lies below the chord of the
//! integer orders' bounds.
//! Its first term is the Gaussian mechanism's alpha l2^2 / (2 sigma^2) at the
//! same variance sigma^2 = 2 mu; the second is what discreteness costs.

use crate::secure_aggregation::chacha20::Stream;

/// Uniform on (0, 1) from 53 bits of the stream: never 0, so its logarithm is finite.
fn open_uniform(rng: &mut Stream) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// Uniform on [0, 1) from 53 bits of the stream.
fn uniform(rng: &mut Stream) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The largest mu a draw takes: Poisson values stay far below 2^53, where every
/// integer is an f64 and the rejection test keeps its accuracy.
pub const MAX_MU: f64 = 281_474_976_710_656.0; // 2^48

/// Below this mean, inversion; at and above it, PTRS.
const INVERSION_BELOW: f64 = 10.0;

/// ln(2 pi) / 2
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// ln k! - ((k + 1/2) ln k - k + ln(2 pi)/2), the Stirling series' error, for k >= 16.
fn stirling_error(k: f64) -> f64 {
    let r = 1.0 / k;
    let r2 = r * r;
    r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 / 1188.0))))
}

/// k ln(k / mu) + mu - k >= 0 without cancellation near k = mu (Loader 2000's bd0).
fn bd0(k: f64, mu: f64) -> f64 {
    let x = k - mu;
    if x.abs() < 0.1 * (k + mu) {
        // k ln(k/mu) = 2k atanh(v), v = x / (k + mu): x v + 2k (v^3/3 + v^5/5 + ...)
        let v = x / (k + mu);
        let v2 = v * v;
        let mut term = 2.0 * k * v * v2;
        let mut sum = x * v;
        let mut j = 3.0;
        loop {
            let next = sum + term / j;
            if next == sum {
                return sum;
            }
            sum = next;
            term *= v2;
            j += 2.0;
        }
    }
    k * (k / mu).ln() + mu - k
}

/// ln P(Poisson(mu) = k) for an integer k >= 0, mu > 0.
pub fn poisson_ln_pmf(k: f64, mu: f64) -> f64 {
    if k < 16.0 {
        let mut ln_factorial = 0.0;
        let mut j = 2.0;
        while j <= k {
            ln_factorial += f64::ln(j);
            j += 1.0;
        }
        return -mu + k * mu.ln() - ln_factorial;
    }
    -HALF_LN_2PI - 0.5 * k.ln() - stirling_error(k) - bd0(k, mu)
}

/// A Poisson(mu) draw, 0 <= mu <= MAX_MU (the caller checks).
pub fn poisson(rng: &mut Stream, mu: f64) -> u64 {
    debug_assert!((0.0..=MAX_MU).contains(&mu));
    if mu <= 0.0 {
        return 0;
    }
    if mu < INVERSION_BELOW {
        return poisson_inversion(rng, mu);
    }
    poisson_ptrs(rng, mu)
}

/// The least k with u < P(X <= k), summing the pmf from 0 (about mu + 1 steps).
fn poisson_inversion(rng: &mut Stream, mu: f64) -> u64 {
    let p0 = (-mu).exp();
    loop {
        let u = uniform(rng);
        let (mut k, mut p, mut cdf) = (0u64, p0, p0);
        while u >= cdf {
            k += 1;
            p *= mu / k as f64;
            cdf += p;
            // the sum's rounding left a sliver below 1 that u fell in (chance ~1e-16): draw again
            if p == 0.0 {
                break;
            }
        }
        if u < cdf {
            return k;
        }
    }
}

/// Hörmann (1993), "The transformed rejection method for generating Poisson
/// random variables", algorithm PTRS, for mu >= 10.
fn poisson_ptrs(rng: &mut Stream, mu: f64) -> u64 {
    let root = mu.sqrt();
    let b = 0.931 + 2.53 * root;
    let a = -0.059 + 0.02483 * b;
    let ln_inv_alpha = (1.1239 + 1.1328 / (b - 3.4)).ln();
    let v_r = 0.9277 - 3.6224 / (b - 2.0);
    // k = floor(mu + t) as floor(mu) + floor(frac(mu) + t): exact at any mu
    let (whole, frac) = (mu.floor(), mu - mu.floor());
    loop {
        let u = open_uniform(rng) - 0.5;
        let v = open_uniform(rng);
        let us = 0.5 - u.abs();
        let t = (2.0 * a / us + b) * u + 0.43;
        let k = whole + (frac + t).floor();
        if us >= 0.07 && v <= v_r {
            return k as u64;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        if v.ln() + ln_inv_alpha - (a / (us * us) + b).ln() <= poisson_ln_pmf(k, mu) {
            return k as u64;
        }
    }
}

/// A Skellam draw Sk(mu) = Poisson(mu) - Poisson(mu).
pub fn skellam(rng: &mut Stream, mu: f64) -> i64 {
    poisson(rng, mu) as i64 - poisson(rng, mu) as i64
}

/// Adds an independent Sk(mu) to every little-endian u64 word of `words`, mod 2^64.
pub fn add_skellam_words(rng: &mut Stream, mu: f64, words: &mut [u8]) {
    for w in words.chunks_exact_mut(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let v = u64::from_le_bytes(b).wrapping_add(skellam(rng, mu) as u64);
        w.copy_from_slice(&v.to_le_bytes());
    }
}

/// The RDP at order `alpha` > 1 of adding Sk(mu) to each coordinate of an
/// integer vector whose neighbours differ by at most `l1` (L1) and `l2` (L2)
/// (see the module's note; fractional orders on the chord of their integer neighbours).
pub fn rdp_skellam(mu: f64, l1: f64, l2: f64, alpha: f64) -> f64 {
    if l1 == 0.0 && l2 == 0.0 {
        return 0.0;
    }
    if !(mu > 0.0) || alpha.is_infinite() {
        return f64::INFINITY;
    }
    let at_integer = |a: f64| a * l2 * l2 / (4.0 * mu) + (((2.0 * a - 1.0) * l2 * l2 + 6.0 * l1) / (16.0 * mu * mu)).min(3.0 * l1 / (4.0 * mu));
    if alpha.fract() == 0.0 {
        return at_integer(alpha);
    }
    // (a - 1) eps(a) at the integers either side (0 at a = 1), joined by a chord
    let (a0, a1) = (alpha.floor(), alpha.floor() + 1.0);
    let f0 = if a0 <= 1.0 { 0.0 } else { (a0 - 1.0) * at_integer(a0) };
    let f1 = (a1 - 1.0) * at_integer(a1);
    ((a1 - alpha) * f0 + (alpha - a0) * f1) / (alpha - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(tag: u8) -> Stream {
        let mut key = [7u8; 32];
        key[0] = tag;
        Stream::new(&key, &[0; 12])
    }

    /// Sample mean, variance and third central moment of n draws.
    fn moments(draws: &[f64]) -> (f64, f64, f64) {
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<f64>() / n;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let third = draws.iter().map(|x| (x - mean).powi(3)).sum::<f64>() / n;
        (mean, var, third)
    }

    #[test]
    fn poisson_moments_on_both_sides_of_the_switch() {
        let n = 200_000;
        for (i, &mu) in [0.05, 0.7, 3.0, 9.99, 10.0, 37.5, 1e3, 1e6, 1e12, MAX_MU].iter().enumerate() {
            let mut r = rng(i as u8);
            let draws: Vec<f64> = (0..n).map(|_| poisson(&mut r, mu) as f64).collect();
            let (mean, var, third) = moments(&draws);
            let nf = n as f64;
            // 5 standard errors: Var(mean) = mu/n, Var(s^2) ~ (mu + 2 mu^2)/n, Var(m3) ~ (6 mu^3 + 18 mu^2 + mu)/n
            assert!((mean - mu).abs() < 5.0 * (mu / nf).sqrt(), "mu {}: mean {}", mu, mean);
            assert!((var - mu).abs() < 5.0 * ((mu + 2.0 * mu * mu) / nf).sqrt(), "mu {}: variance {}", mu, var);
            let m3_se = ((mu + 18.0 * mu * mu + 6.0 * mu.powi(3)) / nf).sqrt();
            assert!((third - mu).abs() < 5.0 * m3_se, "mu {}: third moment {}", mu, third);
        }
    }

    #[test]
    fn skellam_is_symmetric_with_variance_two_mu() {
        let n = 200_000;
        for (i, &mu) in [0.3, 4.0, 25.0, 5e4, 1e10].iter().enumerate() {
            let mut r = rng(100 + i as u8);
            let draws: Vec<f64> = (0..n).map(|_| skellam(&mut r, mu) as f64).collect();
            let (mean, var, third) = moments(&draws);
            let nf = n as f64;
            let v = 2.0 * mu;
            assert!(mean.abs() < 5.0 * (v / nf).sqrt(), "mu {}: mean {}", mu, mean);
            // Sk(mu): fourth central moment 2 mu + 3 (2 mu)^2
            assert!((var - v).abs() < 5.0 * ((2.0 * mu + 2.0 * v * v) / nf).sqrt(), "mu {}: variance {} for {}", mu, var, v);
            assert!(third.abs() < 5.0 * ((18.0 * v.powi(3) + 9.0 * v * v + v) / nf).sqrt(), "mu {}: third {}", mu, third);
        }
    }

    #[test]
    fn the_ln_pmf_joins_its_two_forms_and_sums_to_one() {
        // the saddle-point form at k >= 16 against the direct one where the direct one is still accurate
        for &mu in &[10.0, 20.0, 40.0] {
            for k in 16..60 {
                let k = k as f64;
                let direct = -mu + k * f64::ln(mu) - crate::special::lgamma(k + 1.0);
                let saddle = poisson_ln_pmf(k, mu);
                assert!((direct - saddle).abs() < 1e-12 * direct.abs().max(1.0), "mu {} k {}: {} {}", mu, k, direct, saddle);
            }
        }
        for &mu in &[12.5f64, 1e4, 1e9] {
            let sd = mu.sqrt();
            let lo = (mu - 12.0 * sd).max(0.0).floor() as u64;
            let hi = (mu + 12.0 * sd).ceil() as u64;
            let total: f64 = (lo..=hi).map(|k| poisson_ln_pmf(k as f64, mu).exp()).sum();
            assert!((total - 1.0).abs() < 1e-9, "mu {}: {}", mu, total);
        }
    }

    #[test]
    fn adding_to_words_wraps_mod_two_to_the_64() {
        let mut words = vec![0u8; 8 * 1000];
        add_skellam_words(&mut rng(9), 50.0, &mut words);
        let mut again = rng(9);
        let expected: Vec<i64> = (0..1000).map(|_| skellam(&mut again, 50.0)).collect();
        for (w, e) in words.chunks_exact(8).zip(&expected) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            assert_eq!(i64::from_le_bytes(b), *e);
        }
        assert!(expected.iter().any(|&x| x < 0), "some shares are negative, stored as two's complement");
    }

    #[test]
    fn the_rdp_bound_is_the_gaussian_one_plus_a_discreteness_term() {
        let (mu, l2) = (1e6, 100.0);
        let l1 = l2 * l2;
        let r = rdp_skellam(mu, l1, l2, 8.0);
        let gaussian = 8.0 * l2 * l2 / (2.0 * 2.0 * mu);
        assert!(r > gaussian && r < gaussian * 1.001, "{} {}", r, gaussian);
        // a fractional order: on the chord of (alpha - 1) eps at its integer neighbours, below the next integer's bound
        let chord = (0.5 * 6.0 * rdp_skellam(mu, l1, l2, 7.0) + 0.5 * 7.0 * r) / 6.5;
        assert!((rdp_skellam(mu, l1, l2, 7.5) - chord).abs() < 1e-15 * chord);
        assert!(rdp_skellam(mu, l1, l2, 7.5) < r);
        assert_eq!(rdp_skellam(mu, l1, l2, 1.5), rdp_skellam(mu, l1, l2, 2.0));
        assert_eq!(rdp_skellam(0.0, 1.0, 1.0, 2.0), f64::INFINITY);
        assert_eq!(rdp_skellam(0.0, 0.0, 0.0, 2.0), 0.0);
        assert!(rdp_skellam(mu, l1, l2, 9.0) > r);
    }
}
