//! Shamir secret sharing of 32-byte secrets over the prime field GF(p),
//! p = 2^61 - 1 (a Mersenne prime: reduction is a shift and an add).
//!
//! A secret is cut into five limbs of at most 7 bytes (56 bits < 61: every
//! limb is a field element, and a limb of 2^56 or more can only come from
//! inconsistent shares); each limb is the constant term of its own random
//! polynomial of degree t - 1, so a share for party x is the five values at x:
//! 40 bytes, five u64 little-endian words. Parties are x = 1..65,535.
//! Any t shares determine the polynomials (Lagrange interpolation); t - 1
//! shares leave every secret equally likely (perfect secrecy per limb).

use super::chacha20::Stream;
use crate::{Error, Result};

pub const P: u64 = (1 << 61) - 1;
pub const SECRET_BYTES: usize = 32;
pub const LIMBS: usize = 5;
pub const SHARE_BYTES: usize = 8 * LIMBS;
/// The largest party number: shares are addressed to the clients of a round, at most this many.
pub const MAX_PARTIES: u32 = 65_535;
const LIMB_BYTES: usize = 7;

/// s mod p for any u64 (s & p <= p and s >> 61 <= 7: one conditional subtraction).
#[inline]
fn reduce(s: u64) -> u64 {
    let r = (s & P) + (s >> 61);
    if r >= P {
        r - P
    } else {
        r
    }
}

#[inline]
fn add(a: u64, b: u64) -> u64 {
    reduce(a + b)
}

#[inline]
fn sub(a: u64, b: u64) -> u64 {
    reduce(a + P - b)
}

#[inline]
fn mul(a: u64, b: u64) -> u64 {
    let prod = a as u128 * b as u128;
    // prod < 2^122: its low 61 bits plus the rest (< 2^61) is < 2^62
    reduce(((prod as u64) & P) + (prod >> 61) as u64)
}

fn inverse(a: u64) -> u64 {
    // Fermat: a^(p-2)
    let mut result = 1u64;
    let mut base = a;
    let mut e = P - 2;
    while e > 0 {
        if e & 1 == 1 {
            result = mul(result, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    result
}

fn limbs_of(secret: &[u8; SECRET_BYTES]) -> [u64; LIMBS] {
    let mut limbs = [0u64; LIMBS];
    for (i, limb) in limbs.iter_mut().enumerate() {
        let end = ((i + 1) * LIMB_BYTES).min(SECRET_BYTES);
        for (j, &b) in secret[i * LIMB_BYTES..end].iter().enumerate() {
            *limb |= (b as u64) << (8 * j);
        }
    }
    limbs
}

fn check_parties(xs: &[u32], what: &str) -> Result<()> {
    let mut seen = [0u64; (MAX_PARTIES as usize + 1 + 63) / 64];
    for &x in xs {
        if x == 0 || x > MAX_PARTIES {
            return Err(Error::param(format!("{} must be parties 1..{}, got {}", what, MAX_PARTIES, x)));
        }
        let (w, bit) = ((x / 64) as usize, 1u64 << (x % 64));
        if seen[w] & bit != 0 {
            return Err(Error::param(format!("{} names party {} twice", what, x)));
        }
        seen[w] |= bit;
    }
    Ok(())
}

/// Shares of `secret` for the parties `xs` (distinct, in 1..=65,535), any
/// `threshold` of which reconstruct it, written to `out` (40 bytes per party,
/// in the order of `xs`). The polynomials' coefficients are drawn uniformly
/// from GF(p) by ChaCha20 keyed with `randomness` (32 fresh random bytes).
pub fn split(secret: &[u8; SECRET_BYTES], threshold: usize, xs: &[u32], randomness: &[u8; 32], out: &mut [u8]) -> Result<()> {
    if threshold < 1 || threshold > xs.len() {
        return Err(Error::param(format!("the threshold must be in 1..={} (the parties), got {}", xs.len(), threshold)));
    }
    if out.len() != xs.len() * SHARE_BYTES {
        return Err(Error::param("the output must hold 40 bytes per party"));
    }
    check_parties(xs, "the parties")?;
    let mut stream = Stream::new(randomness, b"fedmix-shamr");
    let constant = limbs_of(secret);
    let mut coefficients = crate::alloc::with_capacity(LIMBS * threshold)?;
    for &c in constant.iter() {
        coefficients.push(c);
        for _ in 1..threshold {
            // 61 uniform bits, p itself (the one value past the field) rejected
            let r = loop {
                let r = stream.next_u64() & P;
                if r != P {
                    break r;
                }
            };
            coefficients.push(r);
        }
    }
    for (&x, share) in xs.iter().zip(out.chunks_mut(SHARE_BYTES)) {
        for (l, word) in share.chunks_mut(8).enumerate() {
            let poly = &coefficients[l * threshold..(l + 1) * threshold];
            let y = poly.iter().rev().fold(0u64, |acc, &c| add(mul(acc, x as u64), c));
            word.copy_from_slice(&y.to_le_bytes());
        }
    }
    Ok(())
}

/// The five field values of one share, refused when one is not a field element.
fn values_of(share: &[u8], x: u32) -> Result<[u64; LIMBS]> {
    let mut v = [0u64; LIMBS];
    for (l, word) in share.chunks(8).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(word);
        v[l] = u64::from_le_bytes(b);
        if v[l] >= P {
            return Err(Error::data(format!("the share of party {} is not in the field", x)));
        }
    }
    Ok(v)
}

/// The polynomials through the shares of parties `xs` (40 bytes each, in
/// `shares`), evaluated at `at`: the five limbs of the secret for at = 0, or
/// the share of party `at`. The caller decides how many shares are enough:
/// any number of distinct parties defines a polynomial of degree count - 1.
pub fn interpolate(xs: &[u32], shares: &[u8], at: u32) -> Result<[u64; LIMBS]> {
    if xs.is_empty() || shares.len() != xs.len() * SHARE_BYTES {
        return Err(Error::param("interpolation needs at least one share of 40 bytes per party"));
    }
    check_parties(xs, "the shares")?;
    let mut ys = crate::alloc::with_capacity(xs.len())?;
    for (&x, share) in xs.iter().zip(shares.chunks(SHARE_BYTES)) {
        ys.push(values_of(share, x)?);
    }
    if let Some(i) = xs.iter().position(|&x| x == at) {
        return Ok(ys[i]);
    }
    // Lagrange: L_i(at) = prod_{j != i} (at - x_j) / (x_i - x_j)
    let mut result = [0u64; LIMBS];
    let a = at as u64;
    for (i, &xi) in xs.iter().enumerate() {
        let mut num = 1u64;
        let mut den = 1u64;
        for (j, &xj) in xs.iter().enumerate() {
            if i != j {
                num = mul(num, sub(a, xj as u64));
                den = mul(den, sub(xi as u64, xj as u64));
            }
        }
        let l = mul(num, inverse(den));
        for (r, &y) in result.iter_mut().zip(ys[i].iter()) {
            *r = add(*r, mul(l, y));
        }
    }
    Ok(result)
}

/// The secret from exactly the shares given (at least `threshold` of them;
/// fewer are refused). Limbs that cannot come from a 32-byte secret show the
/// shares are inconsistent: refused too. A wrong share that still yields
/// valid limbs yields a wrong secret; the protocol's commitments catch that.
pub fn combine(xs: &[u32], shares: &[u8], threshold: usize, out: &mut [u8; SECRET_BYTES]) -> Result<()> {
    if threshold < 1 {
        return Err(Error::param("the threshold must be at least 1"));
    }
    if xs.len() < threshold {
        return Err(Error::param(format!("{} shares cannot reconstruct a secret of threshold {}", xs.len(), threshold)));
    }
    let limbs = interpolate(&xs[..threshold], &shares[..threshold * SHARE_BYTES], 0)?;
    for (i, &limb) in limbs.iter().enumerate() {
        let end = ((i + 1) * LIMB_BYTES).min(SECRET_BYTES);
        if limb >> (8 * (end - i * LIMB_BYTES)) != 0 {
            return Err(Error::data("the shares are inconsistent (they do not interpolate to a 32-byte secret)"));
        }
        for (j, b) in out[i * LIMB_BYTES..end].iter_mut().enumerate() {
            *b = (limb >> (8 * j)) as u8;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(seed: u8) -> [u8; 32] {
        let mut s = [0u8; 32];
        let mut c = super::super::chacha20::ChaCha20::new(&[seed; 32], &[1; 12], 0);
        c.xor_into(&mut s);
        s
    }

    fn shares_of(s: &[u8; 32], t: usize, xs: &[u32]) -> Vec<u8> {
        let mut out = vec![0u8; xs.len() * SHARE_BYTES];
        split(s, t, xs, &[9; 32], &mut out).unwrap();
        out
    }

    #[test]
    fn field_arithmetic() {
        assert_eq!(mul(P - 1, P - 1), 1);
        assert_eq!(add(P - 1, 1), 0);
        assert_eq!(sub(0, 1), P - 1);
        for a in [1u64, 2, 12345, P - 2, 1 << 60] {
            assert_eq!(mul(a, inverse(a)), 1);
        }
        assert_eq!(reduce(u64::MAX), (u64::MAX % P));
    }

    #[test]
    fn any_t_of_m_reconstruct() {
        let s = secret(1);
        let xs: Vec<u32> = (1..=7).collect();
        let shares = shares_of(&s, 4, &xs);
        // every 4-subset of 7 (35 of them), in two orders
        for mask in 0u32..128 {
            if mask.count_ones() != 4 {
                continue;
            }
            let pick: Vec<usize> = (0..7).filter(|i| mask & (1 << i) != 0).collect();
            for order in [pick.clone(), pick.iter().rev().cloned().collect()] {
                let sx: Vec<u32> = order.iter().map(|&i| xs[i]).collect();
                let sy: Vec<u8> = order.iter().flat_map(|&i| shares[i * 40..i * 40 + 40].to_vec()).collect();
                let mut out = [0u8; 32];
                combine(&sx, &sy, 4, &mut out).unwrap();
                assert_eq!(out, s);
            }
        }
    }

    #[test]
    fn fewer_than_t_are_refused() {
        let s = secret(2);
        let shares = shares_of(&s, 3, &[1, 2, 3]);
        let mut out = [0u8; 32];
        let e = combine(&[1, 2], &shares[..80], 3, &mut out).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::InvalidParameter);
    }

    #[test]
    fn t_minus_one_shares_fit_every_secret() {
        // with t - 1 = 2 shares, any secret is consistent: add the share at x = 0
        // of another secret and the 3 points interpolate to it
        let s = secret(3);
        let all = shares_of(&s, 3, &[5, 9, 11]);
        let shares = all[..80].to_vec();
        let other = [0xabu8; 32];
        let limbs = limbs_of(&other);
        let mut zero = Vec::new();
        for l in limbs.iter() {
            zero.extend_from_slice(&l.to_le_bytes());
        }
        let xs = vec![5u32, 9, 1];
        let mut ys = shares.clone();
        // the value at x = 1 of the polynomial through (0, other), (5, y5), (9, y9)
        let mut poly_at_1 = [0u64; LIMBS];
        for l in 0..LIMBS {
            let y5 = u64::from_le_bytes(shares[l * 8..l * 8 + 8].try_into().unwrap());
            let y9 = u64::from_le_bytes(shares[40 + l * 8..40 + l * 8 + 8].try_into().unwrap());
            let (x0, x5, x9, x1) = (0u64, 5u64, 9u64, 1u64);
            let l0 = mul(mul(sub(x1, x5), sub(x1, x9)), inverse(mul(sub(x0, x5), sub(x0, x9))));
            let l5 = mul(mul(sub(x1, x0), sub(x1, x9)), inverse(mul(sub(x5, x0), sub(x5, x9))));
            let l9 = mul(mul(sub(x1, x0), sub(x1, x5)), inverse(mul(sub(x9, x0), sub(x9, x5))));
            poly_at_1[l] = add(add(mul(l0, limbs[l]), mul(l5, y5)), mul(l9, y9));
        }
        for v in poly_at_1.iter() {
            ys.extend_from_slice(&v.to_le_bytes());
        }
        let mut out = [0u8; 32];
        combine(&xs, &ys, 3, &mut out).unwrap();
        assert_eq!(out, other);
    }

    #[test]
    fn a_corrupted_share_gives_another_secret_or_is_refused() {
        let s = secret(4);
        let mut shares = shares_of(&s, 3, &[1, 2, 3, 4]);
        shares[40] ^= 1;
        let mut out = [0u8; 32];
        match combine(&[1, 2, 3], &shares[..120], 3, &mut out) {
            Ok(()) => assert_ne!(out, s),
            Err(e) => assert_eq!(e.kind, crate::ErrorKind::InvalidData),
        }
        // a value past the field is refused outright
        shares[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(combine(&[1, 2, 3], &shares[..120], 3, &mut out).is_err());
        // the shares that are right agree with the polynomial through the first three
        let good = shares_of(&s, 3, &[1, 2, 3, 4]);
        let at4 = interpolate(&[1, 2, 3], &good[..120], 4).unwrap();
        assert_eq!(values_of(&good[120..], 4).unwrap(), at4);
    }

    #[test]
    fn parties_up_to_65535() {
        let s = secret(5);
        let xs = [1u32, 40_000, 65_535];
        let shares = shares_of(&s, 2, &xs);
        let mut out = [0u8; 32];
        combine(&xs[1..], &shares[40..], 2, &mut out).unwrap();
        assert_eq!(out, s);
        let mut o = vec![0u8; 40];
        assert!(split(&s, 1, &[65_536], &[0; 32], &mut o).is_err());
        assert!(split(&s, 1, &[0], &[0; 32], &mut o).is_err());
        let mut o2 = vec![0u8; 80];
        assert!(split(&s, 1, &[3, 3], &[0; 32], &mut o2).is_err());
        assert!(split(&s, 3, &[3, 4], &[0; 32], &mut o2).is_err());
    }
}
