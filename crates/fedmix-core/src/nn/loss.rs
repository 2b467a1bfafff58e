//! Losses as PyTorch 1.13 reduces them ('mean'), and the gradient with respect
//! to the network's output that its backward pass starts from:
//! - MSE: mean over every element; d/dy = (2 / numel) (y - t).
//! - BCE (BCELoss on sigmoid outputs): mean over every element of
//!   -(t max(ln y, -100) + (1 - t) max(ln(1 - y), -100)); d/dy = (y - t) /
//!   max((1 - y) y, 1e-12) / numel, then through the sigmoid as PyTorch does
//!   (unfused).
//! - Softmax cross-entropy (CrossEntropyLoss on logits z, class labels):
//!   mean over rows of -log_softmax(z)[t]; d/dz = (softmax(z) - onehot(t)) / rows,
//!   fused with the softmax.
//! Loss values are summed in f64 from the f32 terms.

use super::activation::log_softmax_row;
use super::lanes::{self, F4};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    Mse,
    Bce,
    SoftmaxCrossEntropy,
}

impl Loss {
    pub const ALL: [Loss; 3] = [Loss::Mse, Loss::Bce, Loss::SoftmaxCrossEntropy];

    pub const fn code(self) -> i32 {
        match self {
            Loss::Mse => 0,
            Loss::Bce => 1,
            Loss::SoftmaxCrossEntropy => 2,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Loss::Mse => "mse",
            Loss::Bce => "bce",
            Loss::SoftmaxCrossEntropy => "softmax-cross-entropy",
        }
    }

    pub fn from_code(code: i32) -> Result<Loss> {
        Loss::ALL
            .iter()
            .copied()
            .find(|l| l.code() == code)
            .ok_or_else(|| Error::param(format!("unknown loss code {}; use 0 mse, 1 bce, 2 softmax-cross-entropy", code)))
    }

    /// Whether the targets are class labels (else values shaped as the outputs).
    pub fn takes_labels(self) -> bool {
        self == Loss::SoftmaxCrossEntropy
    }
}

/// BCELoss's floor of the logarithms.
const LOG_FLOOR: f32 = -100.0;
/// BCELoss's floor of (1 - y) y in the gradient.
const BCE_EPSILON: f32 = 1e-12;

/// Mean squared error of outputs `y` against targets `t` (same length), and
/// its gradient into `g`. Returns the mean.
pub fn mse(y: &[f32], t: &[f32], g: &mut [f32]) -> f64 {
    let n = y.len();
    assert!(t.len() >= n && g.len() >= n);
    let norm = F4::splat((2.0 / n as f64) as f32);
    // four independent f64 sums: a single one waits on its additions
    let mut s = [0.0f64; 4];
    let mut i = 0;
    while i + 4 <= n {
        for (k, acc) in s.iter_mut().enumerate() {
            let d = y[i + k] as f64 - t[i + k] as f64;
            *acc += d * d;
        }
        i += 4;
    }
    for (k, j) in (i..n).enumerate() {
        let d = y[j] as f64 - t[j] as f64;
        s[k] += d * d;
    }
    let sum = (s[0] + s[1]) + (s[2] + s[3]);
    lanes::copy(&mut g[..n], &y[..n]);
    super::activation::zip_lanes(t, &mut g[..n], |t, y| y.sub(t).mul(norm));
    sum / n as f64
}

/// Binary cross-entropy of probabilities `y` against targets `t` in [0, 1],
/// and its gradient with respect to y into `g`. Returns the mean.
pub fn bce(y: &[f32], t: &[f32], g: &mut [f32]) -> f64 {
    let n = y.len();
    assert!(t.len() >= n && g.len() >= n);
    let numel = n as f32;
    let mut sum = 0.0f64;
    for i in 0..n {
        let (p, q) = (y[i], t[i]);
        let lp = p.ln().max(LOG_FLOOR);
        let lq = (1.0 - p).ln().max(LOG_FLOOR);
        sum -= q as f64 * lp as f64 + (1.0 - q as f64) * lq as f64;
        let denom = ((1.0 - p) * p).max(BCE_EPSILON);
        g[i] = ((p - q) / denom) / numel;
    }
    sum / n as f64
}

/// Softmax cross-entropy of logits `z` (rows x width) against class labels,
/// and its gradient with respect to the logits into `g`. Returns the mean
/// over rows. Labels are in [0, width) (checked when the data arrived).
pub fn softmax_cross_entropy(z: &[f32], width: usize, labels: &[i32], g: &mut [f32]) -> f64 {
    let rows = labels.len();
    assert!(z.len() >= rows * width && g.len() >= rows * width);
    // nll_loss's gradient at the label, then log_softmax's backward:
    // g_j = [j = t] gt - exp(log_softmax_j) gt
    let gt = -(1.0 / rows as f32);
    let mut sum = 0.0f64;
    for r in 0..rows {
        let t = labels[r] as usize;
        let row = &z[r * width..(r + 1) * width];
        let out = &mut g[r * width..(r + 1) * width];
        log_softmax_row(row, |j, l| {
            if j == t {
                sum -= l as f64;
            }
            let own = if j == t { gt } else { 0.0 };
            out[j] = own - lanes::exp(l) * gt;
        });
    }
    sum / rows as f64
}

/// Per-row mean squared error between `y` and `t` (rows of `width`), in f64.
pub fn row_squared_errors(y: &[f32], t: &[f32], width: usize, out: &mut [f64]) {
    for (r, o) in out.iter_mut().enumerate() {
        let mut s = 0.0f64;
        for j in 0..width {
            let d = (y[r * width + j] - t[r * width + j]) as f64;
            s += d * d;
        }
        *o = s / width as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_and_gradients_against_their_formulas() {
        let y = [0.2f32, 0.9, 0.5, 1e-30, 0.999];
        let t = [0.0f32, 1.0, 0.3, 1.0, 0.0];
        let mut g = [0.0f32; 5];
        let m = mse(&y, &t, &mut g);
        let want: f64 = y.iter().zip(&t).map(|(&a, &b)| ((a - b) as f64).powi(2)).sum::<f64>() / 5.0;
        assert!((m - want).abs() < 1e-12);
        for i in 0..5 {
            assert!((g[i] as f64 - 0.4 * (y[i] - t[i]) as f64).abs() < 1e-7);
        }
        let b = bce(&y, &t, &mut g);
        // y = 1e-30 against t = 1: ln y = -69.08 (not clamped); y = 0.999 against 0
        let terms: Vec<f64> = y.iter().zip(&t).map(|(&p, &q)| -(q as f64 * (p as f64).ln().max(-100.0) + (1.0 - q as f64) * (1.0 - p as f64).ln().max(-100.0))).collect();
        assert!((b - terms.iter().sum::<f64>() / 5.0).abs() < 1e-5);
        assert!((g[0] as f64 - (0.2 / (0.8 * 0.2)) / 5.0).abs() < 1e-6);
        // the floor of (1 - y) y: y = 1e-30 gives (y - 1) / 1e-12 / 5
        assert!((g[3] as f64 + 1e12 / 5.0).abs() < 1e6);
        // clamp of the log: y = 0 exactly against t = 1 costs 100
        let mut g1 = [0.0f32; 1];
        assert_eq!(bce(&[0.0], &[1.0], &mut g1), 100.0);
    }

    #[test]
    fn cross_entropy_is_mean_negative_log_softmax() {
        let z = [1.0f32, 2.0, 0.5, -1.0, 0.0, 3.0];
        let labels = [1, 2];
        let mut g = [0.0f32; 6];
        let l = softmax_cross_entropy(&z, 3, &labels, &mut g);
        let mut want = 0.0;
        for r in 0..2 {
            let row: Vec<f64> = z[r * 3..r * 3 + 3].iter().map(|&v| v as f64).collect();
            let lse = row.iter().map(|v| v.exp()).sum::<f64>().ln();
            want += lse - row[labels[r] as usize];
            for j in 0..3 {
                let p = (row[j] - lse).exp();
                let e = (p - if j == labels[r] as usize { 1.0 } else { 0.0 }) / 2.0;
                assert!((g[r * 3 + j] as f64 - e).abs() < 1e-7);
            }
        }
        assert!((l - want / 2.0).abs() < 1e-6);
    }
}
