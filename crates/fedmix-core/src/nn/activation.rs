//! Activations, applied in place to a layer's outputs, and their derivatives
//! taken from those outputs (as PyTorch's backward functions take them):
//! relu' = [y > 0], sigmoid' = (1 - y) y, tanh' = 1 - y^2. Softmax is only
//! an output activation, fused with the cross-entropy (see loss.rs); here it is
//! what predict() reports.

use super::lanes::{self, F4};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Relu,
    Sigmoid,
    Tanh,
    Identity,
    /// only at the output, only with the softmax cross-entropy
    Softmax,
}

impl Activation {
    pub const ALL: [Activation; 5] = [Activation::Relu, Activation::Sigmoid, Activation::Tanh, Activation::Identity, Activation::Softmax];

    /// Stable code across the C ABI.
    pub const fn code(self) -> i32 {
        match self {
            Activation::Relu => 0,
            Activation::Sigmoid => 1,
            Activation::Tanh => 2,
            Activation::Identity => 3,
            Activation::Softmax => 4,
        }
    }

    /// The name TypeScript spells.
    pub const fn name(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::Identity => "identity",
            Activation::Softmax => "softmax",
        }
    }

    pub fn from_code(code: i32) -> Result<Activation> {
        Activation::ALL
            .iter()
            .copied()
            .find(|a| a.code() == code)
            .ok_or_else(|| Error::param(format!("unknown activation code {}; use 0 relu, 1 sigmoid, 2 tanh, 3 identity, 4 softmax (output only)", code)))
    }
}

/// Applies `f` to every value of `v`, four at a time; the last partial group
/// goes through the same lane operations in a padded copy.
#[inline(always)]
pub(crate) fn map_lanes(v: &mut [f32], f: impl Fn(F4) -> F4) {
    let n = v.len();
    let p = v.as_mut_ptr();
    let mut i = 0;
    unsafe {
        while i + 4 <= n {
            f(F4::load(p.add(i))).store(p.add(i));
            i += 4;
        }
        if i < n {
            let mut t = [0.0f32; 4];
            t[..n - i].copy_from_slice(&v[i..]);
            f(F4::load(t.as_ptr())).store(t.as_mut_ptr());
            v[i..].copy_from_slice(&t[..n - i]);
        }
    }
}

/// g[i] = f(y[i], g[i]) four at a time, the tail as in map_lanes.
#[inline(always)]
pub(crate) fn zip_lanes(y: &[f32], g: &mut [f32], f: impl Fn(F4, F4) -> F4) {
    let n = g.len();
    assert!(y.len() >= n);
    let (py, pg) = (y.as_ptr(), g.as_mut_ptr());
    let mut i = 0;
    unsafe {
        while i + 4 <= n {
            f(F4::load(py.add(i)), F4::load(pg.add(i))).store(pg.add(i));
            i += 4;
        }
        if i < n {
            let (mut ty, mut tg) = ([0.0f32; 4], [0.0f32; 4]);
            ty[..n - i].copy_from_slice(&y[i..n]);
            tg[..n - i].copy_from_slice(&g[i..]);
            f(F4::load(ty.as_ptr()), F4::load(tg.as_ptr())).store(tg.as_mut_ptr());
            g[i..].copy_from_slice(&tg[..n - i]);
        }
    }
}

/// g[i] = f(a[i], b[i], g[i]) four at a time, the tail as in map_lanes.
#[inline(always)]
pub(crate) fn zip2_lanes(a: &[f32], b: &[f32], g: &mut [f32], f: impl Fn(F4, F4, F4) -> F4) {
    let n = g.len();
    assert!(a.len() >= n && b.len() >= n);
    let (pa, pb, pg) = (a.as_ptr(), b.as_ptr(), g.as_mut_ptr());
    let mut i = 0;
    unsafe {
        while i + 4 <= n {
            f(F4::load(pa.add(i)), F4::load(pb.add(i)), F4::load(pg.add(i))).store(pg.add(i));
            i += 4;
        }
        if i < n {
            let (mut ta, mut tb, mut tg) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
            ta[..n - i].copy_from_slice(&a[i..n]);
            tb[..n - i].copy_from_slice(&b[i..n]);
            tg[..n - i].copy_from_slice(&g[i..]);
            f(F4::load(ta.as_ptr()), F4::load(tb.as_ptr()), F4::load(tg.as_ptr())).store(tg.as_mut_ptr());
            g[i..].copy_from_slice(&tg[..n - i]);
        }
    }
}

/// The activation in place. Softmax is left to softmax_rows (it needs rows).
pub fn forward(act: Activation, v: &mut [f32]) {
    match act {
        Activation::Relu => map_lanes(v, |x| x.where_positive(x)),
        Activation::Sigmoid => map_lanes(v, F4::sigmoid),
        // libm's tanhf, the same call in both builds
        Activation::Tanh => v.iter_mut().for_each(|x| *x = x.tanh()),
        Activation::Identity | Activation::Softmax => {}
    }
}

/// g *= the activation's derivative, from the activation's outputs y
/// (PyTorch's order of operations: (g (1 - y)) y and g (1 - y y)).
pub fn backward(act: Activation, y: &[f32], g: &mut [f32]) {
    let one = F4::splat(1.0);
    match act {
        Activation::Relu => zip_lanes(y, g, |y, g| g.where_positive(y)),
        Activation::Sigmoid => zip_lanes(y, g, |y, g| g.mul(one.sub(y)).mul(y)),
        Activation::Tanh => zip_lanes(y, g, |y, g| g.mul(one.sub(y.mul(y)))),
        Activation::Identity | Activation::Softmax => {}
    }
}

/// Per row of `width` values: m = max, s = sum exp(z - m) (in order), and
/// ln s; calls `each(j, z_j - m - ln s)` for every entry (the log-softmax).
#[inline]
pub(crate) fn log_softmax_row(z: &[f32], mut each: impl FnMut(usize, f32)) {
    let m = z.iter().fold(f32::NEG_INFINITY, |m, &v| if m < v { v } else { m });
    let mut s = 0.0f32;
    for &v in z {
        s += lanes::exp(v - m);
    }
    let ls = s.ln();
    for (j, &v) in z.iter().enumerate() {
        each(j, (v - m) - ls);
    }
}

/// Softmax of every row of `v` (rows of `width`), in place.
pub fn softmax_rows(v: &mut [f32], width: usize) {
    for row in v.chunks_exact_mut(width) {
        let mut probs = [0.0f32; 16];
        if width <= probs.len() {
            log_softmax_row(row, |j, l| probs[j] = lanes::exp(l));
            row.copy_from_slice(&probs[..width]);
        } else {
            let m = row.iter().fold(f32::NEG_INFINITY, |m, &v| if m < v { v } else { m });
            let mut s = 0.0f32;
            for &v in row.iter() {
                s += lanes::exp(v - m);
            }
            let ls = s.ln();
            for v in row.iter_mut() {
                *v = lanes::exp((*v - m) - ls);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations_and_derivatives_match_their_formulas() {
        let xs: Vec<f32> = (0..23).map(|i| (i as f32 - 11.0) * 0.37).collect();
        for act in [Activation::Relu, Activation::Sigmoid, Activation::Tanh, Activation::Identity] {
            let mut y = xs.clone();
            forward(act, &mut y);
            let mut g = vec![1.5f32; xs.len()];
            backward(act, &y, &mut g);
            for i in 0..xs.len() {
                let x = xs[i] as f64;
                let (fy, fd) = match act {
                    Activation::Relu => (x.max(0.0), if x > 0.0 { 1.0 } else { 0.0 }),
                    Activation::Sigmoid => {
                        let s = 1.0 / (1.0 + (-x).exp());
                        (s, s * (1.0 - s))
                    }
                    Activation::Tanh => (x.tanh(), 1.0 - x.tanh().powi(2)),
                    _ => (x, 1.0),
                };
                assert!((y[i] as f64 - fy).abs() < 2e-7, "{:?} {}", act, x);
                assert!((g[i] as f64 - 1.5 * fd).abs() < 1e-6, "{:?}' {}", act, x);
            }
        }
    }

    #[test]
    fn softmax_rows_sum_to_one_narrow_and_wide() {
        for width in [3usize, 16, 17, 40] {
            let mut v: Vec<f32> = (0..2 * width).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
            let z = v.clone();
            softmax_rows(&mut v, width);
            for r in 0..2 {
                let row = &z[r * width..(r + 1) * width];
                let m = row.iter().cloned().fold(f32::MIN, f32::max) as f64;
                let s: f64 = row.iter().map(|&x| (x as f64 - m).exp()).sum();
                for j in 0..width {
                    let want = (row[j] as f64 - m).exp() / s;
                    assert!((v[r * width + j] as f64 - want).abs() < 1e-6 * want.max(1e-3));
                }
            }
        }
    }

    #[test]
    fn codes_round_trip() {
        for a in Activation::ALL {
            assert_eq!(Activation::from_code(a.code()).unwrap(), a);
        }
        assert!(Activation::from_code(9).is_err());
    }
}
