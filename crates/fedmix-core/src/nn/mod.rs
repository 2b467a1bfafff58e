//! Small dense networks in f32, as PyTorch computes them: fully connected
//! layers (y = x Wᵀ + b, W out x in, row-major, as nn.Linear), activations
//! relu / sigmoid / tanh / identity, a softmax output fused with the
//! cross-entropy, the MSE and BCE losses, SGD and Adam as torch.optim, and
//! PyTorch's or Xavier's initialization from the core's seeded Rng.
//!
//! All parameters live in one flat buffer in PyTorch's order (layer 0 weight,
//! layer 0 bias, layer 1 weight, ...) and the gradients in another of the same
//! shape, so that federated averaging, proximal terms and control variates are
//! vector operations on them. Training data stays resident (TrainingSet) and
//! each call sizes its buffers once (Workspace): no allocation per batch.
//!
//! Layout: lanes.rs (the four-lane type both builds compute with), gemm.rs
//! (the blocked matrix product), activation.rs, loss.rs, optim.rs, and
//! train.rs (forward, backward, epochs, prediction).

pub mod activation;
pub mod gemm;
pub mod lanes;
pub mod loss;
pub mod optim;
pub mod train;
#[cfg(test)]
mod tests;

pub use activation::Activation;
pub use loss::Loss;
pub use optim::{Optimizer, OptimizerSpec};
pub use train::{Order, Regularization, TargetKind, TrainingSet};

use crate::alloc;
use crate::error::{Error, Result};
use crate::rng::Rng;

/// How the parameters start: PyTorch's nn.Linear default (kaiming_uniform_
/// with a = sqrt(5), so weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)))
/// or Xavier/Glorot uniform weights U(-sqrt(6 / (fan_in + fan_out)), ...) with
/// zero biases (Keras' Dense default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    PyTorch,
    Xavier,
}

impl Init {
    pub const ALL: [Init; 2] = [Init::PyTorch, Init::Xavier];

    pub const fn code(self) -> i32 {
        match self {
            Init::PyTorch => 0,
            Init::Xavier => 1,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Init::PyTorch => "pytorch",
            Init::Xavier => "xavier",
        }
    }

    pub fn from_code(code: i32) -> Result<Init> {
        Init::ALL.iter().copied().find(|i| i.code() == code).ok_or_else(|| Error::param(format!("unknown init code {}; use 0 pytorch, 1 xavier", code)))
    }
}

/// The shape and functions of a network.
#[derive(Clone, Debug, PartialEq)]
pub struct Architecture {
    /// widths of every layer, input and output included (at least two)
    pub sizes: Vec<usize>,
    /// activation of the hidden layers (not softmax)
    pub hidden: Activation,
    /// activation of the output layer
    pub output: Activation,
    pub loss: Loss,
}

/// Where one layer's parameters sit in the flat buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    pub fan_in: usize,
    pub fan_out: usize,
    /// offset of the fan_out x fan_in weight, row-major
    pub w: usize,
    /// offset of the fan_out biases
    pub b: usize,
}

impl Architecture {
    pub fn new(sizes: Vec<usize>, hidden: Activation, output: Activation, loss: Loss) -> Result<Architecture> {
        if sizes.len() < 2 {
            return Err(Error::param(format!("sizes must hold at least an input and an output width, got {} value(s)", sizes.len())));
        }
        if let Some(i) = sizes.iter().position(|&s| s == 0) {
            return Err(Error::param(format!("sizes[{}] is 0; every layer needs at least one unit", i)));
        }
        if hidden == Activation::Softmax {
            return Err(Error::param("activation 'softmax' is only an output activation (with loss 'softmax-cross-entropy'); use relu, sigmoid, tanh or identity"));
        }
        match (output, loss) {
            (Activation::Softmax, Loss::SoftmaxCrossEntropy) => {}
            (Activation::Softmax, _) => {
                return Err(Error::param(format!("outputActivation 'softmax' goes with loss 'softmax-cross-entropy' (fused, on logits), not '{}'", loss.name())))
            }
            (_, Loss::SoftmaxCrossEntropy) => {
                return Err(Error::param(format!(
                    "loss 'softmax-cross-entropy' needs outputActivation 'softmax' (the softmax is fused with the loss), got '{}'",
                    output.name()
                )))
            }
            (Activation::Sigmoid, Loss::Bce) => {}
            (_, Loss::Bce) => {
                return Err(Error::param(format!("loss 'bce' needs outputs in [0, 1]: use outputActivation 'sigmoid', not '{}'", output.name())))
            }
            _ => {}
        }
        let a = Architecture { sizes, hidden, output, loss };
        a.parameter_count()?;
        Ok(a)
    }

    pub fn n_layers(&self) -> usize {
        self.sizes.len() - 1
    }

    pub fn inputs(&self) -> usize {
        self.sizes[0]
    }

    pub fn outputs(&self) -> usize {
        self.sizes[self.sizes.len() - 1]
    }

    /// The activation after layer l (1-based: l = n_layers() is the output).
    pub fn activation(&self, l: usize) -> Activation {
        if l == self.n_layers() {
            self.output
        } else {
            self.hidden
        }
    }

    /// Weights and biases of every layer, or the allocation error of a count
    /// no address space holds.
    pub fn parameter_count(&self) -> Result<usize> {
        let mut total = 0usize;
        for w in self.sizes.windows(2) {
            let layer = alloc::cells(w[0], w[1], 4)?.checked_add(w[1]);
            total = layer.and_then(|l| total.checked_add(l)).ok_or_else(|| Error::allocation(self.parameter_count_f64() * 4.0))?;
        }
        alloc::cells(total, 1, 4)
    }

    /// The parameter count as a float (exact below 2^53; for messages).
    pub fn parameter_count_f64(&self) -> f64 {
        self.sizes.windows(2).map(|w| w[0] as f64 * w[1] as f64 + w[1] as f64).sum()
    }

    pub fn layers(&self) -> Vec<Layer> {
        let mut at = 0;
        self.sizes
            .windows(2)
            .map(|w| {
                let l = Layer { fan_in: w[0], fan_out: w[1], w: at, b: at + w[0] * w[1] };
                at = l.b + l.fan_out;
                l
            })
            .collect()
    }

    /// The widest layer after the input.
    pub fn widest(&self) -> usize {
        self.sizes[1..].iter().copied().max().unwrap_or(1)
    }
}

/// A network: its architecture, its parameters and their gradients.
pub struct Network {
    pub arch: Architecture,
    pub layers: Vec<Layer>,
    /// every parameter, PyTorch's order
    pub params: Vec<f32>,
    /// the gradient of the last batch, same order
    pub grads: Vec<f32>,
}

impl Network {
    /// A network with initial parameters drawn by `init` from `rng`.
    pub fn new(arch: Architecture, init: Init, rng: &mut Rng) -> Result<Network> {
        let n = arch.parameter_count()?;
        let layers = arch.layers();
        let mut params = alloc::filled(0.0f32, n)?;
        let grads = alloc::filled(0.0f32, n)?;
        for l in &layers {
            let (fi, fo) = (l.fan_in as f64, l.fan_out as f64);
            let (wb, bb) = match init {
                Init::PyTorch => (1.0 / fi.sqrt(), 1.0 / fi.sqrt()),
                Init::Xavier => ((6.0 / (fi + fo)).sqrt(), 0.0),
            };
            for v in &mut params[l.w..l.b] {
                *v = (wb * (2.0 * rng.next_f64() - 1.0)) as f32;
            }
            if bb > 0.0 {
                for v in &mut params[l.b..l.b + l.fan_out] {
                    *v = (bb * (2.0 * rng.next_f64() - 1.0)) as f32;
                }
            }
        }
        Ok(Network { arch, layers, params, grads })
    }

    pub fn n_parameters(&self) -> usize {
        self.params.len()
    }

    /// Replaces the parameters; refuses a wrong length or a non-finite value.
    pub fn set_parameters(&mut self, p: &[f32]) -> Result<()> {
        if p.len() != self.params.len() {
            return Err(Error::param(format!(
                "the parameter vector has {} values; this network ({}) has {}",
                p.len(),
                sizes_text(&self.arch.sizes),
                self.params.len()
            )));
        }
        if let Some(i) = p.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(format!("parameter {} ({}) is {}; parameters must be finite", i, self.describe(i), crate::error::show(p[i] as f64))));
        }
        self.params.copy_from_slice(p);
        Ok(())
    }

    /// Which layer's weight or bias entry i of the flat buffer is.
    pub fn describe(&self, i: usize) -> String {
        for (k, l) in self.layers.iter().enumerate() {
            if i < l.b {
                let j = i - l.w;
                return format!("layer {} weight[{}][{}]", k, j / l.fan_in, j % l.fan_in);
            }
            if i < l.b + l.fan_out {
                return format!("layer {} bias[{}]", k, i - l.b);
            }
        }
        "past the end".into()
    }
}

/// "784-64-10"
pub fn sizes_text(sizes: &[usize]) -> String {
    sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("-")
}
