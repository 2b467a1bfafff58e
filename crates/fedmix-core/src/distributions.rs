//! Every distribution fedmix draws from, built on the one generator (rng.rs):
//! standard normal, gamma, Dirichlet, binomial, multinomial, categorical,
//! sampling without replacement and permutations. All are exact samplers (no
//! approximation beyond f64 rounding) and use only integer arithmetic, IEEE
//! basic operations and libm functions that are the same code in the SIMD and
//! scalar WASM builds, so a seed gives the same draws in both.
//!
//! Distributions with parameters are validated once by a constructor that
//! returns a typed error (`Gamma::new`, `Dirichlet::new`, `Binomial::new`,
//! `Multinomial::new`, `Categorical::new`), then sampled any number of times.

use crate::alloc;
use crate::error::{show, Error, Result};
use crate::rng::Rng;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Probability vectors must sum to 1 within this absolute tolerance (scikit-learn's
/// check on mixture weights); the samplers then use them divided by their sum.
pub const PROBABILITY_SUM_TOLERANCE: f64 = 1e-8;

/// Largest number of trials of a binomial or multinomial: counts up to 2^53 are
/// exact in the f64 arithmetic of the samplers and in TypeScript numbers.
pub const MAX_TRIALS: u64 = 1 << 53;

/// Smallest gamma shape (and Dirichlet concentration): below it the log of a
/// draw, about -1/shape, would overflow f64.
pub const MIN_SHAPE: f64 = 1e-300;

/// `p` is a probability vector: not empty, each entry finite and >= 0, summing
/// to 1 within PROBABILITY_SUM_TOLERANCE. `name` is the caller's parameter name.
pub fn check_probabilities(name: &str, p: &[f64]) -> Result<()> {
    if p.is_empty() {
        return Err(Error::param(format!("{} is empty; give at least one probability", name)));
    }
    if let Some((i, v)) = p.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0)) {
        return Err(Error::param(format!("{}[{}] = {}; probabilities must be finite and >= 0", name, i, show(*v))));
    }
    let s: f64 = p.iter().sum();
    if !((s - 1.0).abs() <= PROBABILITY_SUM_TOLERANCE) {
        return Err(Error::param(format!("{} must sum to 1 (within {}); they sum to {}", name, show(PROBABILITY_SUM_TOLERANCE), show(s))));
    }
    Ok(())
}

fn check_trials(n: u64) -> Result<()> {
    if n > MAX_TRIALS {
        return Err(Error::param(format!("trials = {} exceeds 2^53 = {}, the largest count exact in f64", n, MAX_TRIALS)));
    }
    Ok(())
}

fn check_shape(name: &str, shape: f64) -> Result<()> {
    if !(shape.is_finite() && shape >= MIN_SHAPE) {
        return Err(Error::param(format!("{} must be a finite number >= {}, got {}", name, show(MIN_SHAPE), show(shape))));
    }
    Ok(())
}

impl Rng {
    /// Standard normal by Marsaglia's polar method. Each accepted pair gives two
    /// draws; the second is kept for the next call. Measured in the SIMD WASM
    /// build: 13.7 ns per draw, against 8.0 for a 128-layer ziggurat and 4.1 for
    /// a bare uniform; the table-free method stays until sampling time matters.
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare_normal = Some(v * f);
                return u * f;
            }
        }
    }

    /// `k` distinct indices from [0, n) in the order drawn, every ordered k-tuple
    /// equally likely: the first k steps of a Fisher-Yates shuffle of 0..n (step i
    /// swaps position i with a uniform j in [i, n)). The virtual array is stored
    /// densely when k is a sizeable fraction of n (O(n) time and memory), else as
    /// a hash map of the displaced positions (O(k)). Both storages consume the
    /// same draws and return the same indices, so the choice is invisible.
    pub fn sample_without_replacement(&mut self, n: usize, k: usize) -> Result<Vec<usize>> {
        if k > n {
            return Err(Error::param(format!("cannot draw k = {} distinct items from n = {}; k must be <= n", k, n)));
        }
        // dense costs n writes, sparse about four hash-map operations per draw
        if n / DENSE_WHEN_N_OVER_K_BELOW < k {
            self.partial_shuffle_dense(n, k)
        } else {
            self.partial_shuffle_sparse(n, k)
        }
    }

    fn partial_shuffle_dense(&mut self, n: usize, k: usize) -> Result<Vec<usize>> {
        let mut out = alloc::with_capacity(k)?;
        let mut a = alloc::collect(0..n)?;
        for i in 0..k {
            let j = i + self.below((n - i) as u64) as usize;
            a.swap(i, j);
            out.push(a[i]);
        }
        Ok(out)
    }

    /// The virtual array is the identity except at the positions in `moved`.
    fn partial_shuffle_sparse(&mut self, n: usize, k: usize) -> Result<Vec<usize>> {
        let mut out = alloc::with_capacity(k)?;
        let mut moved: HashMap<usize, usize, BuildHasherDefault<IndexHasher>> = HashMap::default();
        // an entry costs about two words and a control byte
        moved.try_reserve(k).map_err(|_| Error::allocation(k as f64 * (2 * std::mem::size_of::<usize>() + 1) as f64))?;
        for i in 0..k {
            let j = i + self.below((n - i) as u64) as usize;
            let value_j = moved.get(&j).copied().unwrap_or(j);
            // position i is final after this step: forget it, so at most k entries live
            let value_i = moved.remove(&i).unwrap_or(i);
            if j != i {
                moved.insert(j, value_i);
            }
            out.push(value_j);
        }
        Ok(out)
    }

    /// Shuffles `items` uniformly in place (Fisher-Yates, from the last position down).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below((i + 1) as u64) as usize;
            items.swap(i, j);
        }
    }

    /// A uniformly random permutation of [0, n).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        self.shuffle(&mut p);
        p
    }
}

/// Sampling without replacement stores the shuffle densely when n < 16 k.
/// Measured natively at k = 1000: dense and sparse cost the same per draw near
/// n = 50 k (about 12 ns); 16 keeps the dense array (n words) within 16 times
/// the output, for at most ~1.6x the time between n = 16 k and 50 k.
const DENSE_WHEN_N_OVER_K_BELOW: usize = 16;

/// Hash of the sparse shuffle's usize keys: one multiply by an odd constant with
/// the high half folded down, so both the bucket (low bits) and the tag (top
/// bits) vary. std's default SipHash is several times slower and randomly keyed.
#[derive(Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn write(&mut self, bytes: &[u8]) {
        // only usize keys are hashed here; bytes are folded in for completeness
        for &b in bytes {
            self.write_usize(self.0 as usize ^ b as usize);
        }
    }
    fn write_usize(&mut self, i: usize) {
        let z = (i as u64 ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = z ^ (z >> 32);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Gamma(shape, scale) by Marsaglia & Tsang (2000), "A simple method for
/// generating gamma variables": for shape a >= 1, with d = a - 1/3 and
/// c = 1/sqrt(9d), d (1 + c x)^3 for a standard normal x, accepted by a squeeze
/// and a log test. For a < 1 the boost Gamma(a) = Gamma(a + 1) U^(1/a), taken
/// in logs: ln G = ln Gamma(a + 1) + ln(U) / a, finite for every shape >= 1e-300
/// even where G itself is far below the smallest f64.
#[derive(Clone, Debug)]
pub struct Gamma {
    shape: f64,
    scale: f64,
    ln_scale: f64,
    /// Marsaglia-Tsang constants for the shape max(a, a + 1 when a < 1)
    d: f64,
    c: f64,
    ln_d: f64,
}

impl Gamma {
    pub fn new(shape: f64, scale: f64) -> Result<Self> {
        check_shape("gamma shape", shape)?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::param(format!("gamma scale must be a finite number > 0, got {}", show(scale))));
        }
        // A draw is at most d (1 + 12 c)^3 scale < 205 (shape + 1) scale: the
        // polar normal never exceeds 12 in size (its s >= 2^-104).
        if !((shape + 1.0) * scale <= f64::MAX / 256.0) {
            return Err(Error::param(format!("gamma shape * scale = {} is too large: draws would overflow f64", show(shape * scale))));
        }
        Ok(Gamma::unchecked(shape, scale))
    }

    fn unchecked(shape: f64, scale: f64) -> Self {
        let a = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        Gamma { shape, scale, ln_scale: scale.ln(), d, c: 1.0 / (9.0 * d).sqrt(), ln_d: d.ln() }
    }

    /// v = (1 + c x)^3 of an accepted proposal; the Gamma(d + 1/3, 1) draw is d v.
    fn marsaglia_tsang(&self, rng: &mut Rng) -> f64 {
        loop {
            let x = rng.normal();
            let t = 1.0 + self.c * x;
            if t <= 0.0 {
                continue;
            }
            let v = t * t * t;
            let u = rng.next_f64_nonzero();
            let x2 = x * x;
            // the squeeze accepts about 98% of proposals without a logarithm
            if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + self.d * (1.0 - v + v.ln()) {
                return v;
            }
        }
    }

    /// One draw. For shape < 1 it is exp of `ln_sample`, so a draw below the
    /// smallest subnormal (about 4.9e-324) comes back as 0.0, its correctly
    /// rounded value. That happens with probability about
    /// (4.9e-324 / scale)^shape / Gamma(shape + 1): 6e-4 at shape 0.01,
    /// 0.47 at shape 0.001, never at shape >= 0.05 in practice (4e-17).
    /// Use `ln_sample` where the size of such draws matters (Dirichlet does).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        if self.shape < 1.0 {
            self.ln_sample(rng).exp()
        } else {
            self.d * self.marsaglia_tsang(rng) * self.scale
        }
    }

    /// The natural log of one draw, always finite. Consumes the same numbers
    /// from `rng` as `sample`.
    pub fn ln_sample(&self, rng: &mut Rng) -> f64 {
        let ln_g = self.ln_d + self.marsaglia_tsang(rng).ln();
        let ln_g = if self.shape < 1.0 { ln_g + rng.next_f64_nonzero().ln() / self.shape } else { ln_g };
        ln_g + self.ln_scale
    }
}

/// Dirichlet(alpha) as normalized Gamma(alpha_i, 1) draws, computed from their
/// logs: l_i = ln G_i, then exp(l_i - max l) / sum_j exp(l_j - max l). With
/// alphas such as 0.05 or 0.001 the gamma draws themselves would underflow to 0
/// (all of them, at times, giving 0/0); in logs the largest component is exactly
/// exp(0) = 1 before normalizing, so the vector is never NaN or all zero and
/// sums to 1 up to rounding. Components more than ~745 e-folds below the
/// largest come out as 0.0, their correctly rounded value.
#[derive(Clone, Debug)]
pub struct Dirichlet {
    gammas: Vec<Gamma>,
}

impl Dirichlet {
    pub fn new(alpha: &[f64]) -> Result<Self> {
        if alpha.is_empty() {
            return Err(Error::param("alpha is empty; give at least one concentration"));
        }
        for (i, &a) in alpha.iter().enumerate() {
            check_shape(&format!("alpha[{}]", i), a)?;
        }
        // no overflow bound: only logs of the gamma draws are used
        Ok(Dirichlet { gammas: alloc::collect(alpha.iter().map(|&a| Gamma::unchecked(a, 1.0)))? })
    }

    pub fn len(&self) -> usize {
        self.gammas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gammas.is_empty()
    }

    /// One draw as natural logs of its components into `out`: always finite,
    /// also for components that `sample_into` returns as 0.0 (their relative
    /// sizes matter when a draw is normalized along another axis, as the
    /// Dir(alpha) partitioner does). Consumes the same numbers as `sample_into`.
    pub fn ln_sample_into(&self, rng: &mut Rng, out: &mut [f64]) {
        assert_eq!(out.len(), self.gammas.len());
        let mut max = f64::NEG_INFINITY;
        for (o, g) in out.iter_mut().zip(&self.gammas) {
            *o = g.ln_sample(rng);
            max = max.max(*o);
        }
        // relative to the largest first: ln G itself can be -1000, and its
        // rounding would swamp the log of a component near 1
        let ln_sum = out.iter().map(|&l| (l - max).exp()).sum::<f64>().ln();
        for o in out.iter_mut() {
            *o = (*o - max) - ln_sum;
        }
    }

    /// One draw into `out` (len() values).
    pub fn sample_into(&self, rng: &mut Rng, out: &mut [f64]) {
        assert_eq!(out.len(), self.gammas.len());
        let mut max = f64::NEG_INFINITY;
        for (o, g) in out.iter_mut().zip(&self.gammas) {
            *o = g.ln_sample(rng);
            max = max.max(*o);
        }
        let mut sum = 0.0;
        for o in out.iter_mut() {
            *o = (*o - max).exp();
            sum += *o;
        }
        for o in out.iter_mut() {
            *o /= sum;
        }
    }
}

/// Binomial(n, p), exact. With p' = min(p, 1 - p) (counting failures when
/// p > 1/2): inversion by the pmf recurrence when n p' < 10 (fewer than 11
/// steps on average), else Hörmann's BTRS, "The generation of binomial random
/// variates" (J. Statist. Comput. Simul. 46, 1993): transformed rejection with a
/// squeeze, O(1) expected time for any n. The acceptance test needs
/// ln(f(k) / f(mode)); it is computed from Stirling's series written as
/// differences (see `ln_pmf_ratio`), so it stays accurate to ~1e-8 for n up
/// to 2^53, where the textbook lgamma(n - k + 1) terms alone would lose units.
#[derive(Clone, Debug)]
pub struct Binomial {
    n: u64,
    /// the draw counts failures (p > 1/2 was replaced by 1 - p)
    flipped: bool,
    method: BinomialMethod,
}

#[derive(Clone, Debug)]
enum BinomialMethod {
    /// n = 0 or p' = 0
    Zero,
    /// P(0) = q^n, P(x) = P(x - 1) (a / x - s) with s = p/q, a = (n + 1) s
    Inversion { q_n: f64, s: f64, a: f64 },
    Btrs(Btrs),
}

#[derive(Clone, Debug)]
struct Btrs {
    n: f64,
    /// p / q
    odds: f64,
    /// the mode floor((n + 1) p)
    m: f64,
    a: f64,
    b: f64,
    c: f64,
    v_r: f64,
    alpha: f64,
}

impl Binomial {
    pub fn new(n: u64, p: f64) -> Result<Self> {
        check_trials(n)?;
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::param(format!("binomial p must lie in [0, 1], got {}", show(p))));
        }
        Ok(Binomial::unchecked(n, p))
    }

    fn unchecked(n: u64, p: f64) -> Self {
        let flipped = p > 0.5;
        let p = if flipped { 1.0 - p } else { p };
        let nf = n as f64;
        let method = if n == 0 || p == 0.0 {
            BinomialMethod::Zero
        } else if nf * p < 10.0 {
            let q = 1.0 - p;
            let s = p / q;
            // q^n >= e^-15 here (p <= 1/2, n p < 10): no underflow
            BinomialMethod::Inversion { q_n: (nf * (-p).ln_1p()).exp(), s, a: (nf + 1.0) * s }
        } else {
            let q = 1.0 - p;
            let spq = (nf * p * q).sqrt();
            let b = 1.15 + 2.53 * spq;
            BinomialMethod::Btrs(Btrs {
                n: nf,
                odds: p / q,
                m: ((nf + 1.0) * p).floor(),
                a: -0.0873 + 0.0248 * b + 0.01 * p,
                b,
                c: nf * p + 0.5,
                v_r: 0.92 - 4.2 / b,
                alpha: (2.83 + 5.1 / b) * spq,
            })
        };
        Binomial { n, flipped, method }
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match &self.method {
            BinomialMethod::Zero => 0,
            BinomialMethod::Inversion { q_n, s, a } => inversion(self.n, *q_n, *s, *a, rng),
            BinomialMethod::Btrs(t) => t.sample(rng),
        };
        if self.flipped {
            self.n - x
        } else {
            x
        }
    }
}

fn inversion(n: u64, q_n: f64, s: f64, a: f64, rng: &mut Rng) -> u64 {
    loop {
        let mut u = rng.next_f64();
        let mut r = q_n;
        let mut x = 0u64;
        loop {
            if u < r {
                return x;
            }
            // Rounding can leave u above the summed mass; once the pmf has run out
            // (x = n, or r underflowed, which with n = 2^50 would come long before
            // x = n) draw again. The mass given up is below 1e-300.
            if x == n || r == 0.0 {
                break;
            }
            u -= r;
            x += 1;
            r *= a / x as f64 - s;
        }
    }
}

impl Btrs {
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = rng.next_f64() - 0.5;
            let v = rng.next_f64();
            let us = 0.5 - u.abs();
            let k = ((2.0 * self.a / us + self.b) * u + self.c).floor();
            // also rejects the NaN/inf of us = 0
            if !(k >= 0.0 && k <= self.n) {
                continue;
            }
            if us >= 0.07 && v <= self.v_r {
                return k as u64;
            }
            let lhs = (v * self.alpha / (self.a / (us * us) + self.b)).ln();
            if lhs <= self.ln_pmf_ratio(k) {
                return k as u64;
            }
        }
    }

    /// ln(f(k) / f(m)) for the binomial pmf f. With Stirling's
    /// ln Gamma(x) = (x - 1/2) ln x - x + ln(2 pi)/2 + tail(x) and delta = k - m,
    /// the differences of log-factorials collapse to
    ///   (m + 1/2) ln1p(-delta / (k + 1)) + (n - m + 1/2) ln1p(delta / (n - k + 1))
    ///   + delta ln((n - k + 1) p / ((k + 1) q)) + the four tails,
    /// every term of the size of the result, not of ln(n!).
    fn ln_pmf_ratio(&self, k: f64) -> f64 {
        let (n, m) = (self.n, self.m);
        let delta = k - m;
        let (x1, y1, x2, y2) = (m + 1.0, k + 1.0, n - m + 1.0, n - k + 1.0);
        (x1 - 0.5) * (-delta / y1).ln_1p() + (x2 - 0.5) * (delta / y2).ln_1p() + delta * (y2 * self.odds / y1).ln() + stirling_tail(x1)
            - stirling_tail(y1)
            + stirling_tail(x2)
            - stirling_tail(y2)
    }
}

const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// ln Gamma(x) - [(x - 1/2) ln x - x + ln(2 pi)/2] for an integer x >= 1: exactly
/// (through (x - 1)!, exact in f64 up to 17!) below 19, else the series
/// 1/(12x) - 1/(360x^3) + 1/(1260x^5) - 1/(1680x^7), whose next term is < 3e-15.
fn stirling_tail(x: f64) -> f64 {
    if x < 19.0 {
        let mut f = 1.0;
        let mut i = 2.0;
        while i < x {
            f *= i;
            i += 1.0;
        }
        f.ln() - ((x - 0.5) * x.ln() - x + HALF_LN_2PI)
    } else {
        let r = 1.0 / x;
        let r2 = r * r;
        r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 / 1680.0)))
    }
}

/// Multinomial(n, p) by conditional binomials: x_0 ~ Bin(n, p_0), then
/// x_i ~ Bin(n - x_0 - ... - x_{i-1}, p_i / (p_i + ... + p_{k-1})), the last
/// category taking the rest. O(k) binomial draws of O(1) expected cost each,
/// whatever n; stops early once all n trials are placed. The ratios use tail
/// sums taken from the end, so each is <= 1 in floating point and a zero
/// probability gives a ratio of exactly 0 (that category never gets a count).
#[derive(Clone, Debug)]
pub struct Multinomial {
    n: u64,
    ratio: Vec<f64>,
}

impl Multinomial {
    /// `p` must pass `check_probabilities` (named "probs" in messages).
    pub fn new(n: u64, p: &[f64]) -> Result<Self> {
        check_trials(n)?;
        check_probabilities("probs", p)?;
        let mut ratio = alloc::zeros(p.len())?;
        let mut tail = 0.0;
        for i in (0..p.len()).rev() {
            tail += p[i];
            ratio[i] = if tail > 0.0 { (p[i] / tail).min(1.0) } else { 0.0 };
        }
        Ok(Multinomial { n, ratio })
    }

    pub fn len(&self) -> usize {
        self.ratio.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ratio.is_empty()
    }

    /// One histogram into `counts` (len() values, summing to n).
    pub fn sample_into(&self, rng: &mut Rng, counts: &mut [u64]) {
        assert_eq!(counts.len(), self.ratio.len());
        let mut left = self.n;
        let (last, head) = counts.split_last_mut().expect("a multinomial has at least one category");
        for (c, &ratio) in head.iter_mut().zip(&self.ratio) {
            *c = if left == 0 { 0 } else { Binomial::unchecked(left, ratio).sample(rng) };
            left -= *c;
        }
        *last = left;
    }
}

/// Categorical(p) by Walker's alias method in Vose's stable form: O(k) setup,
/// then each draw is one uniform index and one uniform comparison. The table
/// holds only the categories with p_i > 0, so a zero-probability category can
/// never be drawn, not even through rounding in the table.
#[derive(Clone, Debug)]
pub struct Categorical {
    /// the original index of each positive category
    index: Vec<usize>,
    /// probability of keeping slot j rather than taking its alias
    keep: Vec<f64>,
    alias: Vec<usize>,
}

impl Categorical {
    /// `p` must pass `check_probabilities` (named "probs" in messages).
    pub fn new(p: &[f64]) -> Result<Self> {
        check_probabilities("probs", p)?;
        let index = alloc::collect((0..p.len()).filter(|&i| p[i] > 0.0))?;
        let m = index.len();
        let total: f64 = index.iter().map(|&i| p[i]).sum();
        let mut scaled = alloc::collect(index.iter().map(|&i| p[i] * m as f64 / total))?;
        let mut keep = alloc::filled(1.0, m)?;
        let mut alias = alloc::collect(0..m)?;
        // each reserves m, so the pushes below never reallocate
        let mut small = alloc::collect((0..m).filter(|&j| scaled[j] < 1.0))?;
        let mut large = alloc::collect((0..m).filter(|&j| !(scaled[j] < 1.0)))?;
        while !small.is_empty() && !large.is_empty() {
            let (l, g) = (small.pop().unwrap(), large.pop().unwrap());
            keep[l] = scaled[l];
            alias[l] = g;
            scaled[g] = (scaled[g] + scaled[l]) - 1.0;
            if scaled[g] < 1.0 {
                small.push(g);
            } else {
                large.push(g);
            }
        }
        // slots left over keep themselves (probability 1): in exact arithmetic
        // only large ones at exactly 1 remain; small leftovers are rounding
        Ok(Categorical { index, keep, alias })
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let j = rng.below(self.keep.len() as u64) as usize;
        let slot = if rng.next_f64() < self.keep[j] { j } else { self.alias[j] };
        self.index[slot]
    }
}

#[cfg(test)]
mod tests;
