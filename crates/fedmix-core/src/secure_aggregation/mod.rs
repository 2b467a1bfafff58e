//! The primitives of secure aggregation (SecAgg+, Bell et al. 2020; Bonawitz
//! et al. 2017): arithmetic in Z_{2^64} over vectors of u64 words, masks
//! expanded from 256-bit seeds by ChaCha20, Shamir secret sharing of 32-byte
//! secrets, and the seeded permutation under the neighbour graph. The
//! protocol's state machines are TypeScript (ts/privacy/secure-aggregation/).

pub mod chacha20;
pub mod shamir;

pub use chacha20::apply_mask;

/// acc += v mod 2^64, word by word.
pub fn add_into(acc: &mut [u64], v: &[u64]) {
    for (a, &b) in acc.iter_mut().zip(v) {
        *a = a.wrapping_add(b);
    }
}

/// acc -= v mod 2^64, word by word.
pub fn subtract_into(acc: &mut [u64], v: &[u64]) {
    for (a, &b) in acc.iter_mut().zip(v) {
        *a = a.wrapping_sub(b);
    }
}

/// A uniformly random permutation of 0..out.len() drawn from the public 32-byte
/// `seed` (Fisher-Yates with ChaCha20's integers, rejection-sampled: no bias),
/// so every client and the server derive the same neighbour graph.
pub fn permutation(seed: &[u8; 32], out: &mut [u32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u32;
    }
    let mut stream = chacha20::Stream::new(seed, b"fedmix-graph");
    for i in (1..out.len()).rev() {
        let j = stream.below(i as u32 + 1) as usize;
        out.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_wrap_mod_2_64_and_subtracting_undoes_adding() {
        let mut acc = vec![u64::MAX, 1, 0];
        add_into(&mut acc, &[1, 2, (-5i64) as u64]);
        assert_eq!(acc, vec![0, 3, (-5i64) as u64]);
        subtract_into(&mut acc, &[1, 2, (-5i64) as u64]);
        assert_eq!(acc, vec![u64::MAX, 1, 0]);
    }

    #[test]
    fn permutation_is_one_and_depends_on_the_seed() {
        let mut a = vec![0u32; 1000];
        permutation(&[1; 32], &mut a);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
        let mut b = vec![0u32; 1000];
        permutation(&[2; 32], &mut b);
        assert_ne!(a, b);
        let mut c = vec![0u32; 1000];
        permutation(&[1; 32], &mut c);
        assert_eq!(a, c);
    }
}
