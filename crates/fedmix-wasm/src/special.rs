//! Special functions over arrays: digamma, ln Gamma, trigamma and their differences.

use super::codes::{DIGAMMA_DIFFERENCE};
use super::{f64s, f64s_mut, status};
use fedmix_core::secure_aggregation::chacha20::Stream;
use fedmix_core::privacy::skellam;
use fedmix_core::Error;
use fedmix_core::{privacy, special};

/// In-place digamma over n values (vectorized in the SIMD build).
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_digamma(p: *mut f64, n: usize) {
    special::digamma_in_place(f64s_mut(p, n));
}

/// In-place ln |Gamma| over n values.
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_lgamma(p: *mut f64, n: usize) {
    special::lgamma_in_place(f64s_mut(p, n));
}

/// In-place trigamma over n values.
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_trigamma(p: *mut f64, n: usize) {
    special::trigamma_in_place(f64s_mut(p, n));
}

/// out[i] = psi(x[i] + n[i]) - psi(x[i]) (`which` DIGAMMA_DIFFERENCE), or
/// ln Gamma(x[i] + n[i]) - ln Gamma(x[i]) (LGAMMA_DIFFERENCE, or any other
/// code); NaN outside x > 0, n >= 0.
///
/// # Safety
/// Pointers cover len values.
pub unsafe extern "C" fn fm_gamma_differences(which: i32, x: *const f64, nv: *const f64, out: *mut f64, len: usize) {
    let f = if which == DIGAMMA_DIFFERENCE { special::digamma_diff } else { special::ln_rising_factorial };
    for ((o, &a), &b) in f64s_mut(out, len).iter_mut().zip(f64s(x, len)).zip(f64s(nv, len)) {
        *o = f(a, b);
    }
}

/// In-place ln erfc over n values (finite where erfc underflows).
///
/// # Safety
/// `p` covers n values.
pub unsafe extern "C" fn fm_ln_erfc(p: *mut f64, n: usize) {
    for v in f64s_mut(p, n) {
        *v = special::ln_erfc(*v);
    }
}

/// out[i] = the RDP of one step of the sampled Gaussian mechanism (sampling rate q,
/// noise multiplier sigma) at orders[i] (fedmix_core::privacy).
///
/// # Safety
/// `orders` and `out` cover n values.
pub unsafe extern "C" fn fm_rdp_sampled_gaussian(q: f64, sigma: f64, orders: *const f64, n: usize, out: *mut f64) {
    for (o, &a) in f64s_mut(out, n).iter_mut().zip(f64s(orders, n)) {
        *o = privacy::rdp_sampled_gaussian(q, sigma, a);
    }
}

/// epsilon at `delta` for the total RDP rdp[i] at orders[i], the least over the orders
/// (Balle et al. 2020); the index of its order in `out_order` (n when every order is infinite).
///
/// # Safety
/// `orders` and `rdp` cover n values; `out_order` one.
pub unsafe extern "C" fn fm_epsilon_from_rdp(orders: *const f64, rdp: *const f64, n: usize, delta: f64, out_order: *mut usize) -> f64 {
    let (eps, i) = privacy::epsilon_from_rdp(f64s(orders, n), f64s(rdp, n), delta);
    *out_order = if i == usize::MAX { n } else { i };
    eps
}

/// Adds an independent Skellam(mu) draw to each of the n little-endian u64 words
/// at `words`, mod 2^64, from the ChaCha20 keystream of the 32-byte `key`
/// (nonce 0, counter from 0; fedmix_core::privacy::skellam). Refuses mu outside [0, MAX_MU].
///
/// # Safety
/// `key` covers 32 bytes, `words` 8 n bytes.
pub unsafe extern "C" fn fm_skellam_add(key: *const u8, mu: f64, words: *mut u8, n: usize) -> i32 {
    status(|| {
        if !(mu >= 0.0 && mu <= skellam::MAX_MU) {
            return Err(Error::param(format!("a Skellam share's mu must be a number in [0, {}], got {}", fedmix_core::error::display(skellam::MAX_MU), fedmix_core::error::display(mu))));
        }
        let mut k = [0u8; 32];
        k.copy_from_slice(core::slice::from_raw_parts(key, 32));
        let mut rng = Stream::new(&k, &[0; 12]);
        if n > 0 {
            skellam::add_skellam_words(&mut rng, mu, core::slice::from_raw_parts_mut(words, 8 * n));
        }
        Ok(())
    })
}

/// out[i] = the RDP at orders[i] of Skellam(mu) noise on integer vectors with
/// sensitivities l1 (L1) and l2 (L2) (fedmix_core::privacy::skellam).
///
/// # Safety
/// `orders` and `out` cover n values.
pub unsafe extern "C" fn fm_rdp_skellam(mu: f64, l1: f64, l2: f64, orders: *const f64, n: usize, out: *mut f64) {
    for (o, &a) in f64s_mut(out, n).iter_mut().zip(f64s(orders, n)) {
        *o = skellam::rdp_skellam(mu, l1, l2, a);
    }
}
