//! The one seedable generator used for every random choice in fedmix:
//! xoshiro256++ (Blackman & Vigna), seeded through SplitMix64 so that any u64,
//! including 0, gives a well-mixed state. Pure integer arithmetic plus libm calls
//! that are identical in the SIMD and scalar builds, so a seed means the same
//! stream everywhere.
//!
//! This file holds the bit source and its uniform draws; every distribution
//! built on them (normal, gamma, Dirichlet, binomial, multinomial, categorical,
//! sampling without replacement, permutations) lives in `distributions.rs`.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    /// Second value of the last polar-method pair, consumed by the next `normal()`.
    pub(crate) spare_normal: Option<f64>,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s, spare_normal: None }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1] on the same 2^-53 grid: safe to take the logarithm of.
    pub fn next_f64_nonzero(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject). n > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// The whole state: the four words of xoshiro256++ and the spare normal
    /// held for the next `normal()`, so that a saved run can continue the
    /// stream exactly where it stopped (`from_state`).
    pub fn state(&self) -> ([u64; 4], Option<f64>) {
        (self.s, self.spare_normal)
    }

    /// A generator continuing from `state()`. The all-zero state (from which
    /// xoshiro never leaves) and a spare normal that is not finite are refused:
    /// no seed gives either.
    pub fn from_state(s: [u64; 4], spare_normal: Option<f64>) -> crate::Result<Rng> {
        if s == [0; 4] {
            return Err(crate::Error::param("a generator's state cannot be all zeros"));
        }
        if let Some(z) = spare_normal {
            if !z.is_finite() {
                return Err(crate::Error::param("a generator's spare normal must be finite"));
            }
        }
        Ok(Rng { s, spare_normal })
    }

    /// A generator for an independent sub-task (one EM restart, one k-means run),
    /// so that adding work to one task does not shift the stream of the next.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trip_continues_the_stream() {
        let mut a = Rng::new(11);
        a.next_u64();
        let _ = a.normal();
        let (s, spare) = a.state();
        assert!(spare.is_some());
        let mut b = Rng::from_state(s, spare).unwrap();
        assert_eq!(a.normal().to_bits(), b.normal().to_bits());
        assert_eq!(a.next_u64(), b.next_u64());
        assert!(Rng::from_state([0; 4], None).is_err());
        assert!(Rng::from_state([1, 0, 0, 0], Some(f64::NAN)).is_err());
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn uniform_moments() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
            s += u;
            s2 += u * u;
        }
        let mean = s / n as f64;
        assert!((mean - 0.5).abs() < 0.005);
        assert!((s2 / n as f64 - mean * mean - 1.0 / 12.0).abs() < 0.002);
        for _ in 0..n {
            let u = r.next_f64_nonzero();
            assert!(u > 0.0 && u <= 1.0);
        }
    }

    #[test]
    fn below_is_in_range_and_covers() {
        let mut r = Rng::new(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[r.below(7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 850 && c < 1150), "{:?}", seen);
    }
}
