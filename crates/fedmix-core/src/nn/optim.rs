//! SGD and Adam as torch.optim 1.13 defines them (its single-tensor code
//! paths), over the flat parameter and gradient buffers. Hyperparameters are
//! f64 (Python floats); the scalar factors are rounded to f32 where PyTorch
//! hands them to an f32 kernel, and the step-dependent ones (Adam's bias
//! corrections) are computed in f64 as torch does in Python.
//!
//! SGD, with d = g + weight_decay p:
//!   b = d on the first step, else momentum b + (1 - dampening) d
//!   d = d + momentum b (nesterov) or b (momentum != 0)
//!   p = p - lr d
//! Adam, with d = g + weight_decay p (L2, not decoupled):
//!   m = beta1 m + (1 - beta1) d;  v = beta2 v + (1 - beta2) d d
//!   p = p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//! in torch's order of operations, except that sqrt(v) is multiplied by the
//! f32 reciprocal of sqrt(1 - beta2^t) rather than divided by it (one
//! division less per value: a quarter of the step's time; the two differ by
//! at most an ulp of the denominator).

use super::activation::zip_lanes;
use super::lanes::F4;
use crate::alloc;
use crate::error::{show, Error, Result};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptimizerSpec {
    Sgd { lr: f64, momentum: f64, dampening: f64, nesterov: bool, weight_decay: f64 },
    Adam { lr: f64, beta1: f64, beta2: f64, eps: f64, weight_decay: f64 },
}

/// Codes of the optimizer kinds across the C ABI.
pub const SGD: i32 = 0;
pub const ADAM: i32 = 1;

fn require(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::param(message()))
    }
}

impl OptimizerSpec {
    /// torch.optim's checks, and a learning rate > 0 (torch allows 0, which trains nothing).
    pub fn validate(&self) -> Result<()> {
        let lr = match *self {
            OptimizerSpec::Sgd { lr, .. } | OptimizerSpec::Adam { lr, .. } => lr,
        };
        require(lr > 0.0 && lr.is_finite(), || format!("learningRate must be a finite number > 0, got {}; try 1e-3", show(lr)))?;
        match *self {
            OptimizerSpec::Sgd { momentum, dampening, nesterov, weight_decay, .. } => {
                require(momentum >= 0.0 && momentum.is_finite(), || format!("momentum must be a finite number >= 0, got {}", show(momentum)))?;
                require(dampening.is_finite(), || format!("dampening must be a finite number, got {}", show(dampening)))?;
                require(weight_decay >= 0.0 && weight_decay.is_finite(), || format!("weightDecay must be a finite number >= 0, got {}", show(weight_decay)))?;
                require(!nesterov || (momentum > 0.0 && dampening == 0.0), || {
                    format!("Nesterov momentum needs momentum > 0 and dampening 0, got momentum {} and dampening {}", show(momentum), show(dampening))
                })
            }
            OptimizerSpec::Adam { beta1, beta2, eps, weight_decay, .. } => {
                require((0.0..1.0).contains(&beta1), || format!("beta1 must be in [0, 1), got {}", show(beta1)))?;
                require((0.0..1.0).contains(&beta2), || format!("beta2 must be in [0, 1), got {}", show(beta2)))?;
                require(eps >= 0.0 && eps.is_finite(), || format!("eps must be a finite number >= 0, got {}", show(eps)))?;
                require(weight_decay >= 0.0 && weight_decay.is_finite(), || format!("weightDecay must be a finite number >= 0, got {}", show(weight_decay)))
            }
        }
    }
}

/// An optimizer's state for a network of `n` parameters.
pub struct Optimizer {
    pub spec: OptimizerSpec,
    n: usize,
    /// steps taken since creation or reset
    pub steps: u64,
    /// SGD's momentum buffer or Adam's first moment (empty for plain SGD)
    m: Vec<f32>,
    /// Adam's second moment
    v: Vec<f32>,
}

impl Optimizer {
    pub fn new(spec: OptimizerSpec, n: usize) -> Result<Optimizer> {
        spec.validate()?;
        let (m, v) = match spec {
            OptimizerSpec::Sgd { momentum, .. } => (if momentum != 0.0 { alloc::filled(0.0f32, n)? } else { Vec::new() }, Vec::new()),
            OptimizerSpec::Adam { .. } => (alloc::filled(0.0f32, n)?, alloc::filled(0.0f32, n)?),
        };
        Ok(Optimizer { spec, n, steps: 0, m, v })
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Forgets the momentum, the moments and the step count.
    pub fn reset(&mut self) {
        self.steps = 0;
        self.m.iter_mut().for_each(|x| *x = 0.0);
        self.v.iter_mut().for_each(|x| *x = 0.0);
    }

    /// One step. `g` is overwritten (it becomes the weight-decayed gradient or
    /// the update direction).
    pub fn step(&mut self, p: &mut [f32], g: &mut [f32]) {
        let n = self.n;
        assert!(p.len() == n && g.len() == n);
        self.steps += 1;
        match self.spec {
            OptimizerSpec::Sgd { lr, momentum, dampening, nesterov, weight_decay } => {
                if weight_decay != 0.0 {
                    let wd = F4::splat(weight_decay as f32);
                    zip_lanes(p, g, |p, g| g.add(wd.mul(p)));
                }
                if momentum != 0.0 {
                    let mom = F4::splat(momentum as f32);
                    if self.steps == 1 {
                        self.m.copy_from_slice(g);
                    } else {
                        let keep = F4::splat((1.0 - dampening) as f32);
                        zip_lanes(g, &mut self.m, |d, b| b.mul(mom).add(keep.mul(d)));
                    }
                    if nesterov {
                        zip_lanes(&self.m, g, |b, d| d.add(mom.mul(b)));
                    } else {
                        g.copy_from_slice(&self.m);
                    }
                }
                let neg_lr = F4::splat(-lr as f32);
                zip_lanes(g, p, |d, p| p.add(neg_lr.mul(d)));
            }
            OptimizerSpec::Adam { lr, beta1, beta2, eps, weight_decay } => {
                if weight_decay != 0.0 {
                    let wd = F4::splat(weight_decay as f32);
                    zip_lanes(p, g, |p, g| g.add(wd.mul(p)));
                }
                let t = self.steps as f64;
                let bias1 = 1.0 - beta1.powf(t);
                let bias2 = 1.0 - beta2.powf(t);
                let step_size = lr / bias1;
                let (b1, c1) = (F4::splat(beta1 as f32), F4::splat((1.0 - beta1) as f32));
                let (b2, c2) = (F4::splat(beta2 as f32), F4::splat((1.0 - beta2) as f32));
                let inv_root2 = F4::splat((1.0 / bias2.sqrt()) as f32);
                let eps = F4::splat(eps as f32);
                let neg_step = F4::splat(-step_size as f32);
                let (m, v) = (self.m.as_mut_ptr(), self.v.as_mut_ptr());
                let (pp, gp) = (p.as_mut_ptr(), g.as_ptr());
                let update = |d: F4, mi: F4, vi: F4, pi: F4| -> (F4, F4, F4) {
                    let mi = mi.mul(b1).add(c1.mul(d));
                    let vi = vi.mul(b2).add(c2.mul(d).mul(d));
                    let denom = vi.sqrt().mul(inv_root2).add(eps);
                    (mi, vi, pi.add(neg_step.mul(mi).div(denom)))
                };
                let mut i = 0;
                unsafe {
                    while i + 4 <= n {
                        let (mi, vi, pi) = update(F4::load(gp.add(i)), F4::load(m.add(i)), F4::load(v.add(i)), F4::load(pp.add(i)));
                        mi.store(m.add(i));
                        vi.store(v.add(i));
                        pi.store(pp.add(i));
                        i += 4;
                    }
                    if i < n {
                        let k = n - i;
                        let mut t = [[0.0f32; 4]; 4];
                        t[0][..k].copy_from_slice(&g[i..]);
                        t[1][..k].copy_from_slice(&self.m[i..]);
                        t[2][..k].copy_from_slice(&self.v[i..]);
                        t[3][..k].copy_from_slice(&p[i..]);
                        let (mi, vi, pi) = update(F4::load(t[0].as_ptr()), F4::load(t[1].as_ptr()), F4::load(t[2].as_ptr()), F4::load(t[3].as_ptr()));
                        mi.store(t[1].as_mut_ptr());
                        vi.store(t[2].as_mut_ptr());
                        pi.store(t[3].as_mut_ptr());
                        self.m[i..].copy_from_slice(&t[1][..k]);
                        self.v[i..].copy_from_slice(&t[2][..k]);
                        p[i..].copy_from_slice(&t[3][..k]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f64], tol: f64) {
        for (x, y) in a.iter().zip(b) {
            assert!((*x as f64 - y).abs() <= tol * y.abs().max(1e-3), "{} vs {}", x, y);
        }
    }

    #[test]
    fn sgd_with_momentum_dampening_and_weight_decay_by_hand() {
        // p0 = 1, g = 0.5 both steps; lr 0.1, momentum 0.9, dampening 0.2, wd 0.01
        let spec = OptimizerSpec::Sgd { lr: 0.1, momentum: 0.9, dampening: 0.2, nesterov: false, weight_decay: 0.01 };
        let mut o = Optimizer::new(spec, 5).unwrap();
        let mut p = vec![1.0f32; 5];
        o.step(&mut p, &mut vec![0.5f32; 5]);
        // d = 0.5 + 0.01 = 0.51, b = 0.51 (first step: no dampening), p = 1 - 0.051
        close(&p, &[0.949; 5], 1e-6);
        o.step(&mut p, &mut vec![0.5f32; 5]);
        // d = 0.5 + 0.00949 = 0.50949, b = 0.9 * 0.51 + 0.8 * 0.50949 = 0.866592, p = 0.949 - 0.0866592
        close(&p, &[0.8623408; 5], 1e-6);
        o.reset();
        o.step(&mut p, &mut vec![0.0f32; 5]);
        // after reset the buffer restarts from d = wd p
        close(&p, &[0.8623408 * (1.0 - 0.001); 5], 1e-6);
    }

    #[test]
    fn nesterov_and_plain_sgd_by_hand() {
        let spec = OptimizerSpec::Sgd { lr: 0.5, momentum: 0.5, dampening: 0.0, nesterov: true, weight_decay: 0.0 };
        let mut o = Optimizer::new(spec, 3).unwrap();
        let mut p = vec![0.0f32, 1.0, 2.0];
        o.step(&mut p, &mut vec![1.0, -1.0, 2.0]);
        // b = g, d = g + 0.5 g = 1.5 g, p -= 0.75 g
        close(&p, &[-0.75, 1.75, 0.5], 1e-7);
        o.step(&mut p, &mut vec![1.0, -1.0, 2.0]);
        // b = 0.5 g + g = 1.5 g, d = g + 0.75 g = 1.75 g, p -= 0.875 g
        close(&p, &[-1.625, 2.625, -1.25], 1e-7);
        let mut plain = Optimizer::new(OptimizerSpec::Sgd { lr: 0.25, momentum: 0.0, dampening: 0.0, nesterov: false, weight_decay: 0.0 }, 1).unwrap();
        let mut q = vec![1.0f32];
        plain.step(&mut q, &mut vec![2.0]);
        assert_eq!(q[0], 0.5);
    }

    #[test]
    fn adam_two_steps_by_hand() {
        let spec = OptimizerSpec::Adam { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.1 };
        let mut o = Optimizer::new(spec, 6).unwrap();
        let mut p: Vec<f32> = vec![1.0, -2.0, 0.5, 0.0, 3.0, -1.0];
        let g1: Vec<f32> = vec![0.1, 0.25, -0.3, 0.0, 1.0, -5.0];
        let g2: Vec<f32> = vec![-0.1, 0.4, 0.3, 0.2, 1.0, 5.0];
        // the same in f64
        let mut pe: Vec<f64> = p.iter().map(|&x| x as f64).collect();
        let (mut m, mut v) = (vec![0.0f64; 6], vec![0.0f64; 6]);
        for (t, g) in [g1, g2].iter().enumerate() {
            let t = (t + 1) as f64;
            for i in 0..6 {
                let d = g[i] as f64 + 0.1 * pe[i];
                m[i] = 0.9 * m[i] + 0.1 * d;
                v[i] = 0.999 * v[i] + 0.001 * d * d;
                let denom = v[i].sqrt() / (1.0 - 0.999f64.powf(t)).sqrt() + 1e-8;
                pe[i] -= 0.01 / (1.0 - 0.9f64.powf(t)) * m[i] / denom;
            }
            o.step(&mut p, &mut g.clone());
            close(&p, &pe, 2e-6);
        }
        assert_eq!(o.steps, 2);
        // the first step moves every parameter with a nonzero gradient by about lr
        let mut o = Optimizer::new(OptimizerSpec::Adam { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }, 1).unwrap();
        let mut p = vec![0.0f32];
        o.step(&mut p, &mut vec![123.0]);
        assert!((p[0] + 0.01).abs() < 1e-8);
    }

    #[test]
    fn bad_hyperparameters_are_refused_with_their_names() {
        let sgd = |lr, momentum, dampening, nesterov| OptimizerSpec::Sgd { lr, momentum, dampening, nesterov, weight_decay: 0.0 };
        for (spec, word) in [
            (sgd(0.0, 0.0, 0.0, false), "learningRate"),
            (sgd(-1.0, 0.0, 0.0, false), "learningRate"),
            (sgd(f64::NAN, 0.0, 0.0, false), "learningRate"),
            (sgd(0.1, -0.5, 0.0, false), "momentum"),
            (sgd(0.1, 0.0, 0.0, true), "Nesterov"),
            (sgd(0.1, 0.9, 0.1, true), "Nesterov"),
            (OptimizerSpec::Adam { lr: 0.1, beta1: 1.0, beta2: 0.9, eps: 1e-8, weight_decay: 0.0 }, "beta1"),
            (OptimizerSpec::Adam { lr: 0.1, beta1: 0.9, beta2: -0.1, eps: 1e-8, weight_decay: 0.0 }, "beta2"),
            (OptimizerSpec::Adam { lr: 0.1, beta1: 0.9, beta2: 0.9, eps: -1.0, weight_decay: 0.0 }, "eps"),
            (OptimizerSpec::Adam { lr: 0.1, beta1: 0.9, beta2: 0.9, eps: 1e-8, weight_decay: f64::INFINITY }, "weightDecay"),
        ] {
            let e = Optimizer::new(spec, 1).err().unwrap();
            assert!(e.message.contains(word), "{}", e.message);
        }
    }
}
