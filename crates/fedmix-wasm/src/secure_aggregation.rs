//! Secure aggregation's primitives (fedmix_core::secure_aggregation): masks,
//! sums mod 2^64, Shamir shares and the neighbour graph's permutation. In the
//! 'dirichlet' module with the privacy accountant: the privacy exports share
//! one module, loaded by whoever asks for privacy, whatever the algorithm.

use super::{status, u32s, u32s_mut};
use fedmix_core::secure_aggregation::{self as secagg, shamir};
use fedmix_core::Error;
use std::slice;

unsafe fn u64s_mut<'a>(ptr: *mut u64, len: usize) -> &'a mut [u64] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn u64s<'a>(ptr: *const u64, len: usize) -> &'a [u64] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn bytes_mut<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn key(ptr: *const u8) -> [u8; 32] {
    let mut k = [0u8; 32];
    k.copy_from_slice(bytes(ptr, 32));
    k
}

/// acc[i] += v[i] (or -= when `subtract` is 1) mod 2^64 over n words.
///
/// # Safety
/// `acc` and `v` cover n u64 words.
pub unsafe extern "C" fn fm_secagg_add(acc: *mut u64, v: *const u64, n: usize, subtract: i32) {
    if subtract != 0 {
        secagg::subtract_into(u64s_mut(acc, n), u64s(v, n));
    } else {
        secagg::add_into(u64s_mut(acc, n), u64s(v, n));
    }
}

/// vector += mask (or -= when `subtract` is 1) mod 2^64, the mask being the
/// ChaCha20 stream of the 32-byte `seed` (nonce 0, counter from 0) as u64 LE words.
///
/// # Safety
/// `vector` covers n words, `seed` 32 bytes.
pub unsafe extern "C" fn fm_secagg_mask(vector: *mut u64, n: usize, seed: *const u8, subtract: i32) {
    secagg::apply_mask(u64s_mut(vector, n), &key(seed), subtract != 0);
}

/// A uniformly random permutation of 0..n into `out`, drawn from the public 32-byte `seed`.
///
/// # Safety
/// `seed` covers 32 bytes, `out` n u32.
pub unsafe extern "C" fn fm_secagg_permutation(seed: *const u8, n: usize, out: *mut u32) {
    secagg::permutation(&key(seed), u32s_mut(out, n));
}

/// Shamir shares (40 bytes each, in the order of `xs`) of the 32-byte `secret`
/// for the m parties `xs`, any `threshold` of which reconstruct it; the
/// coefficients from ChaCha20 keyed with the 32 random bytes of `randomness`.
///
/// # Safety
/// `secret` and `randomness` cover 32 bytes, `xs` m u32, `out` 40 m bytes.
pub unsafe extern "C" fn fm_shamir_split(secret: *const u8, threshold: usize, xs: *const u32, m: usize, randomness: *const u8, out: *mut u8) -> i32 {
    status(|| {
        let out = bytes_mut(out, m.checked_mul(shamir::SHARE_BYTES).ok_or_else(|| Error::param("too many parties"))?);
        shamir::split(&key(secret), threshold, u32s(xs, m), &key(randomness), out)
    })
}

/// From `count` shares (40 bytes each) of the parties `xs`: the 32-byte secret
/// when `at` is 0 (refused with fewer than `threshold` shares; only the first
/// `threshold` are used), else the 40-byte share of party `at` on the
/// polynomials through the first `threshold` shares.
///
/// # Safety
/// `xs` covers count u32, `shares` 40 count bytes, `out` 32 bytes (at = 0) or 40.
pub unsafe extern "C" fn fm_shamir_combine(xs: *const u32, shares: *const u8, count: usize, threshold: usize, at: u32, out: *mut u8) -> i32 {
    status(|| {
        if threshold < 1 || count < threshold {
            return Err(Error::param(format!("{} shares cannot reconstruct a secret of threshold {}", count, threshold)));
        }
        let xs = u32s(xs, count);
        let shares = bytes(shares, count.checked_mul(shamir::SHARE_BYTES).ok_or_else(|| Error::param("too many shares"))?);
        if at == 0 {
            let mut secret = [0u8; 32];
            shamir::combine(xs, shares, threshold, &mut secret)?;
            bytes_mut(out, 32).copy_from_slice(&secret);
        } else {
            let values = shamir::interpolate(&xs[..threshold], &shares[..threshold * shamir::SHARE_BYTES], at)?;
            for (w, v) in bytes_mut(out, shamir::SHARE_BYTES).chunks_mut(8).zip(values.iter()) {
                w.copy_from_slice(&v.to_le_bytes());
            }
        }
        Ok(())
    })
}
