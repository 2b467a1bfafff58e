//! Four f32 lanes, the unit every network kernel computes in. The SIMD128
//! build holds them in one v128 (core::arch::wasm32); every other build, the
//! scalar WASM build and native tests included, holds them in a [f32; 4] and
//! does each operation lane by lane. Every operation is one IEEE operation per
//! lane in both (no fused multiply-add: SIMD128 has none; `madd` is fused only
//! in the relaxed-SIMD build, which agrees within rounding), and the kernels are
//! written once over this type, so the scalar build is the SIMD kernels' twin
//! operation for operation: the two builds compute bit-identical networks, and
//! `cargo test` on the host exercises the very loops (blocking, packing, edge
//! tiles) that run vectorized in the browser.

/// Rounding to the nearest integer, ties to even: adding and subtracting
/// 1.5 * 2^23 (exact for |x| < 2^22); the same in both builds.
const ROUND_MAGIC: f32 = 12_582_912.0;
/// 2^23 + 127: an integer k plus this holds k + 127 in its low mantissa bits,
/// which a shift by 23 moves into the exponent field (2^k as a float).
const EXPONENT_MAGIC: f32 = 8_388_735.0;
const INV_LN2: f32 = 1.442_695_04;
/// ln 2 split so that k * LN2_HI is exact for the k that occur (|k| < 2^8).
const LN2_HI: f32 = 0.693_145_751_953_125;
const LN2_LO: f32 = 1.428_606_765_330_187e-6;
/// Below this exp rounds to 0 in f32; above EXP_HI it overflows.
pub(crate) const EXP_LO: f32 = -103.972_08;
pub(crate) const EXP_HI: f32 = 88.722_83;
/// 1/n! for n = 2..=7: e^r = 1 + r + r^2 (c2 + c3 r + ... + c7 r^5) on
/// |r| <= ln2 / 2, truncation below 6e-9 relative.
const EXP_TAYLOR: [f32; 6] = [0.5, 0.166_666_67, 0.041_666_668, 0.008_333_334, 0.001_388_888_9, 0.000_198_412_7];

#[cfg(target_feature = "simd128")]
mod imp {
    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub struct F4(v128);

    impl F4 {
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4(f32x4_splat(x))
        }
        /// # Safety
        /// `p` is valid for reading 4 values (any alignment: v128.load allows it).
        #[inline(always)]
        pub unsafe fn load(p: *const f32) -> F4 {
            F4(v128_load(p as *const v128))
        }
        /// # Safety
        /// `p` is valid for writing 4 values.
        #[inline(always)]
        pub unsafe fn store(self, p: *mut f32) {
            v128_store(p as *mut v128, self.0)
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(f32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn sub(self, o: F4) -> F4 {
            F4(f32x4_sub(self.0, o.0))
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4(f32x4_mul(self.0, o.0))
        }
        #[inline(always)]
        pub fn div(self, o: F4) -> F4 {
            F4(f32x4_div(self.0, o.0))
        }
        /// self * b + c: fused in the relaxed-SIMD build, a multiply then an add otherwise.
        #[inline(always)]
        pub fn madd(self, b: F4, c: F4) -> F4 {
            #[cfg(fedmix_relaxed)]
            let r = F4(crate::kernels::relaxed::f32x4_madd(self.0, b.0, c.0));
            #[cfg(not(fedmix_relaxed))]
            let r = F4(f32x4_add(c.0, f32x4_mul(self.0, b.0)));
            r
        }
        #[inline(always)]
        pub fn sqrt(self) -> F4 {
            F4(f32x4_sqrt(self.0))
        }
        /// `o` where self < o, else self (SIMD128's pmax).
        #[inline(always)]
        pub fn pmax(self, o: F4) -> F4 {
            F4(f32x4_pmax(self.0, o.0))
        }
        /// self where `mask` > 0, else 0.
        #[inline(always)]
        pub fn where_positive(self, mask: F4) -> F4 {
            F4(v128_and(self.0, f32x4_gt(mask.0, f32x4_splat(0.0))))
        }
        /// 0 where `x` < `bound`, else self.
        #[inline(always)]
        pub fn zero_below(self, x: F4, bound: F4) -> F4 {
            F4(v128_andnot(self.0, f32x4_lt(x.0, bound.0)))
        }
        /// +inf where `x` > `bound`, else self.
        #[inline(always)]
        pub fn inf_above(self, x: F4, bound: F4) -> F4 {
            F4(v128_bitselect(f32x4_splat(f32::INFINITY), self.0, f32x4_gt(x.0, bound.0)))
        }
        /// Reinterprets (self + magic)'s bits shifted left by 23 as floats.
        #[inline(always)]
        pub fn shifted_bits(self, magic: f32) -> F4 {
            F4(i32x4_shl(f32x4_add(self.0, f32x4_splat(magic)), 23))
        }
        #[inline(always)]
        pub fn floor(self) -> F4 {
            F4(f32x4_floor(self.0))
        }
        /// For positive normal lanes x = 2^e m with m in [1, 2): (e, m), e as a float.
        #[inline(always)]
        pub fn exponent_mantissa(self) -> (F4, F4) {
            let e = i32x4_sub(u32x4_shr(self.0, 23), i32x4_splat(127));
            let m = v128_or(v128_and(self.0, i32x4_splat(0x007f_ffff)), i32x4_splat(0x3f80_0000));
            (F4(f32x4_convert_i32x4(e)), F4(m))
        }
        /// (l0 + l1) + (l2 + l3)
        #[inline(always)]
        pub fn sum(self) -> f32 {
            let v = self.0;
            (f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v)) + (f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v))
        }
        /// The transpose of the 4 x 4 matrix whose rows are r: lane j of row i
        /// becomes lane i of row j (eight shuffles, no arithmetic).
        #[inline(always)]
        pub fn transpose(r: [F4; 4]) -> [F4; 4] {
            let t0 = i32x4_shuffle::<0, 4, 1, 5>(r[0].0, r[1].0);
            let t1 = i32x4_shuffle::<0, 4, 1, 5>(r[2].0, r[3].0);
            let t2 = i32x4_shuffle::<2, 6, 3, 7>(r[0].0, r[1].0);
            let t3 = i32x4_shuffle::<2, 6, 3, 7>(r[2].0, r[3].0);
            [
                F4(i32x4_shuffle::<0, 1, 4, 5>(t0, t1)),
                F4(i32x4_shuffle::<2, 3, 6, 7>(t0, t1)),
                F4(i32x4_shuffle::<0, 1, 4, 5>(t2, t3)),
                F4(i32x4_shuffle::<2, 3, 6, 7>(t2, t3)),
            ]
        }
    }
}

#[cfg(not(target_feature = "simd128"))]
mod imp {
    #[derive(Clone, Copy)]
    pub struct F4([f32; 4]);

    #[inline(always)]
    fn map(a: [f32; 4], f: impl Fn(f32) -> f32) -> F4 {
        F4([f(a[0]), f(a[1]), f(a[2]), f(a[3])])
    }
    #[inline(always)]
    fn zip(a: [f32; 4], b: [f32; 4], f: impl Fn(f32, f32) -> f32) -> F4 {
        F4([f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])])
    }

    impl F4 {
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4([x; 4])
        }
        /// # Safety
        /// `p` is valid for reading 4 values.
        #[inline(always)]
        pub unsafe fn load(p: *const f32) -> F4 {
            F4([*p, *p.add(1), *p.add(2), *p.add(3)])
        }
        /// # Safety
        /// `p` is valid for writing 4 values.
        #[inline(always)]
        pub unsafe fn store(self, p: *mut f32) {
            for (i, v) in self.0.iter().enumerate() {
                *p.add(i) = *v;
            }
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            zip(self.0, o.0, |a, b| a + b)
        }
        #[inline(always)]
        pub fn sub(self, o: F4) -> F4 {
            zip(self.0, o.0, |a, b| a - b)
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            zip(self.0, o.0, |a, b| a * b)
        }
        #[inline(always)]
        pub fn div(self, o: F4) -> F4 {
            zip(self.0, o.0, |a, b| a / b)
        }
        /// self * b + c, a multiply then an add (as the SIMD128 build).
        #[inline(always)]
        pub fn madd(self, b: F4, c: F4) -> F4 {
            c.add(self.mul(b))
        }
        #[inline(always)]
        pub fn sqrt(self) -> F4 {
            map(self.0, f32::sqrt)
        }
        #[inline(always)]
        pub fn pmax(self, o: F4) -> F4 {
            zip(self.0, o.0, |a, b| if a < b { b } else { a })
        }
        #[inline(always)]
        pub fn where_positive(self, mask: F4) -> F4 {
            zip(self.0, mask.0, |a, m| if m > 0.0 { a } else { 0.0 })
        }
        #[inline(always)]
        pub fn zero_below(self, x: F4, bound: F4) -> F4 {
            let under = zip(x.0, bound.0, |x, b| if x < b { 1.0 } else { 0.0 }).0;
            zip(self.0, under, |a, u| if u == 1.0 { 0.0 } else { a })
        }
        #[inline(always)]
        pub fn inf_above(self, x: F4, bound: F4) -> F4 {
            let over = zip(x.0, bound.0, |x, b| if x > b { 1.0 } else { 0.0 }).0;
            zip(self.0, over, |a, o| if o == 1.0 { f32::INFINITY } else { a })
        }
        #[inline(always)]
        pub fn shifted_bits(self, magic: f32) -> F4 {
            map(self.0, |a| f32::from_bits((a + magic).to_bits().wrapping_shl(23)))
        }
        #[inline(always)]
        pub fn floor(self) -> F4 {
            map(self.0, f32::floor)
        }
        #[inline(always)]
        pub fn exponent_mantissa(self) -> (F4, F4) {
            let e = map(self.0, |a| ((a.to_bits() >> 23) as i32 - 127) as f32);
            let m = map(self.0, |a| f32::from_bits(a.to_bits() & 0x007f_ffff | 0x3f80_0000));
            (e, m)
        }
        #[inline(always)]
        pub fn sum(self) -> f32 {
            let v = self.0;
            (v[0] + v[1]) + (v[2] + v[3])
        }
        #[inline(always)]
        pub fn transpose(r: [F4; 4]) -> [F4; 4] {
            let mut out = [[0.0f32; 4]; 4];
            for (i, row) in r.iter().enumerate() {
                for (j, col) in out.iter_mut().enumerate() {
                    col[i] = row.0[j];
                }
            }
            [F4(out[0]), F4(out[1]), F4(out[2]), F4(out[3])]
        }
    }
}

pub use imp::F4;

impl F4 {
    #[inline(always)]
    pub fn zero() -> F4 {
        F4::splat(0.0)
    }

    /// e^x on four lanes, within 2 ulp of the true value for results that are
    /// normal numbers (subnormal ones lose bits; below EXP_LO it is 0, above
    /// EXP_HI +inf; NaN stays NaN). x = k ln2 + r with |r| <= ln2/2, a Taylor
    /// polynomial for e^r, then scaling by 2^k as two factors 2^k1 2^k2 so
    /// that neither leaves the normal range.
    #[inline(always)]
    pub fn exp(self) -> F4 {
        self.exp_in_range().zero_below(self, F4::splat(EXP_LO)).inf_above(self, F4::splat(EXP_HI))
    }

    /// exp without its two masks, the same operations otherwise: the same
    /// value for x in [EXP_LO, EXP_HI] (and NaN), meaningless outside, for
    /// callers whose arguments are in range by construction.
    #[inline(always)]
    pub fn exp_in_range(self) -> F4 {
        let x = self;
        let magic = F4::splat(ROUND_MAGIC);
        let kf = x.mul(F4::splat(INV_LN2)).add(magic).sub(magic);
        let r = x.sub(kf.mul(F4::splat(LN2_HI))).sub(kf.mul(F4::splat(LN2_LO)));
        let c = &EXP_TAYLOR;
        let mut q = F4::splat(c[5]);
        for &ci in c[..5].iter().rev() {
            q = q.mul(r).add(F4::splat(ci));
        }
        let y = F4::splat(1.0).add(r.add(r.mul(r).mul(q)));
        let k1 = kf.mul(F4::splat(0.5)).floor();
        let k2 = kf.sub(k1);
        y.mul(k1.shifted_bits(EXPONENT_MAGIC)).mul(k2.shifted_bits(EXPONENT_MAGIC))
    }

    /// ln x on four lanes for positive normal x (what the float32 Gaussian
    /// mixture's log-sum-exp takes the log of: sums of exponentials in
    /// [1, k]), within 2 ulp of the f64 value: x = 2^e m with m in
    /// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(f / (2 + f)) for f = m - 1 (exact),
    /// whose series to s^9 truncates below 3e-9 relative.
    #[inline(always)]
    pub fn ln(self) -> F4 {
        let (e, m) = self.exponent_mantissa();
        let one = F4::splat(1.0);
        let big = one.where_positive(m.sub(F4::splat(core::f32::consts::SQRT_2)));
        let m = m.mul(one.sub(big.mul(F4::splat(0.5))));
        let e = e.add(big);
        let f = m.sub(one);
        let s = f.div(F4::splat(2.0).add(f));
        let s2 = s.mul(s);
        let mut q = F4::splat(1.0 / 9.0);
        for c in [1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0] {
            q = q.mul(s2).add(F4::splat(c));
        }
        let r = s.add(s.mul(s2.mul(q)));
        e.mul(F4::splat(LN2_HI)).add(r.add(r).add(e.mul(F4::splat(LN2_LO))))
    }

    /// 1 / (1 + e^-x)
    #[inline(always)]
    pub fn sigmoid(self) -> F4 {
        let one = F4::splat(1.0);
        one.div(one.add(F4::zero().sub(self).exp()))
    }
}

/// dst = src, four values at a time.
#[inline]
pub fn copy(dst: &mut [f32], src: &[f32]) {
    let n = dst.len();
    assert!(src.len() >= n);
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let mut i = 0;
    unsafe {
        while i + 4 <= n {
            F4::load(s.add(i)).store(d.add(i));
            i += 4;
        }
        while i < n {
            *d.add(i) = *s.add(i);
            i += 1;
        }
    }
}

/// e^x for one value, the same operations as one lane of F4::exp.
#[inline]
pub fn exp(x: f32) -> f32 {
    let mut a = [0.0f32; 4];
    unsafe { F4::splat(x).exp().store(a.as_mut_ptr()) };
    a[0]
}

/// ln x for one value, the same operations as one lane of F4::ln.
#[inline]
pub fn ln(x: f32) -> f32 {
    let mut a = [0.0f32; 4];
    unsafe { F4::splat(x).ln().store(a.as_mut_ptr()) };
    a[0]
}

/// Independent accumulators of madd_peak: a multiply then an add per round
/// (latency about 6 cycles on current x86 and ARM cores), enough chains to
/// keep two multiply and two add pipes busy, few enough to stay in registers.
const PEAK_CHAINS: usize = 12;

/// Runs `iters` rounds of PEAK_CHAINS independent four-lane multiply-adds
/// (acc = acc m + a: a multiply and an add each, no fusion, as the network
/// kernels compute) and returns the floating-point operations done (2 per lane
/// per chain per round): timed from JavaScript, the f32x4 peak the benchmark
/// measures the network kernels against. The result goes through `sink` so
/// that the loop cannot be folded away.
pub fn madd_peak(iters: u64, seed: f32, sink: &mut f32) -> f64 {
    let m = F4::splat(0.999_999_9);
    let a = F4::splat(1e-7);
    let mut acc = [F4::splat(seed); PEAK_CHAINS];
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = c.mul(m).add(a);
        }
    }
    *sink = acc.iter().map(|c| c.sum()).sum();
    iters as f64 * (PEAK_CHAINS * 4 * 2) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_probe_counts_its_operations() {
        let mut sink = 0.0;
        assert_eq!(madd_peak(10, 1.0, &mut sink), 960.0);
        assert!(sink > 40.0 && sink < 48.1);
    }

    #[test]
    fn ln_is_within_two_ulp_of_the_f64_value() {
        let mut worst = 0i64;
        let mut x = 1e-30f32;
        while x < 1e30 {
            for v in [x, x * 1.000_1, x * 1.414, x * 1.414_3] {
                let got = ln(v);
                let want = (v as f64).ln() as f32;
                worst = worst.max((got.to_bits() as i64 - want.to_bits() as i64).abs());
                assert!((got as f64 - (v as f64).ln()).abs() <= 2e-7 * (v as f64).ln().abs().max(1.0), "ln {}: {} vs {}", v, got, (v as f64).ln());
            }
            x *= 1.37;
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(worst <= 4, "worst {} ulp", worst);
    }

    #[test]
    fn exp_is_within_two_ulp_of_the_f64_value() {
        let mut worst = 0i64;
        let mut x = -103.0f32;
        while x < 88.7 {
            let got = exp(x);
            let want = (x as f64).exp() as f32;
            if want.is_normal() {
                let ulp = (got.to_bits() as i64 - want.to_bits() as i64).abs();
                worst = worst.max(ulp);
            } else {
                assert!((got as f64 - (x as f64).exp()).abs() < 1.5e-45 * 64.0, "x={} got={} want={}", x, got, want);
            }
            x += 0.001_37;
        }
        assert!(worst <= 2, "worst {} ulp", worst);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-200.0), 0.0);
        assert_eq!(exp(-f32::INFINITY), 0.0);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn transposes_and_copies() {
        let rows: Vec<F4> = (0..4).map(|i| unsafe { F4::load([i as f32 * 4.0, i as f32 * 4.0 + 1.0, i as f32 * 4.0 + 2.0, i as f32 * 4.0 + 3.0].as_ptr()) }).collect();
        let t = F4::transpose([rows[0], rows[1], rows[2], rows[3]]);
        for (j, col) in t.iter().enumerate() {
            let mut a = [0.0f32; 4];
            unsafe { col.store(a.as_mut_ptr()) };
            assert_eq!(a, [j as f32, 4.0 + j as f32, 8.0 + j as f32, 12.0 + j as f32]);
        }
        let src: Vec<f32> = (0..11).map(|i| i as f32).collect();
        let mut dst = vec![0.0f32; 11];
        copy(&mut dst, &src);
        assert_eq!(dst, src);
    }

    #[test]
    fn masks_and_reductions() {
        let v = |a: [f32; 4]| unsafe { F4::load(a.as_ptr()) };
        let out = |f: F4| {
            let mut a = [0.0f32; 4];
            unsafe { f.store(a.as_mut_ptr()) };
            a
        };
        assert_eq!(out(v([1.0, -2.0, 3.0, -0.0]).where_positive(v([1.0, 1.0, -1.0, 0.0]))), [1.0, -2.0, 0.0, 0.0]);
        assert_eq!(out(v([1.0, 5.0, 3.0, -1.0]).pmax(v([2.0, 2.0, 3.0, -2.0]))), [2.0, 5.0, 3.0, -1.0]);
        assert_eq!(v([1.0, 2.0, 3.0, 4.0]).sum(), 10.0);
        let s = out(v([0.0, 100.0, -100.0, 1.0]).sigmoid());
        assert_eq!(s[0], 0.5);
        assert_eq!(s[1], 1.0);
        assert!(s[2] >= 0.0 && s[2] < 1e-43);
        assert!((s[3] as f64 - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-7);
    }
}
