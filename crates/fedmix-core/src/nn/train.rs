//! Forward and backward passes, training epochs, evaluation and prediction.
//!
//! A batch of `rows` rows lives in a Workspace: the outputs of every layer
//! (the input rows first), two gradient buffers used in turn going backwards,
//! the batch's targets and the GEMM packs. For layer l (W: out x in):
//!   forward   Z = A Wᵀ + b, A_l = act(Z)                (gemm: A_{l-1}, Wᵀ)
//!   backward  dW = δᵀ A_{l-1}, db = Σ_rows δ,           (gemm: δᵀ, A_{l-1})
//!             δ_{l-1} = (δ W) act'(A_{l-1})             (gemm: δ, W)
//! Each call sizes one workspace for its largest batch and frees it on return.

use super::activation::{self, Activation};
use super::gemm::{gemm, Packs, View};
use super::lanes::{self, F4};
use super::loss::{self, Loss};
use super::optim::Optimizer;
use super::{sizes_text, Network};
use crate::alloc;
use crate::error::{show, Error, Result};
use crate::rng::Rng;

/// Rows per pass when evaluating or predicting.
pub const CHUNK: usize = 256;

/// What a training set's targets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// f32 values, rows x width (MSE, BCE)
    Values,
    /// one class label per row (softmax cross-entropy)
    Labels,
    /// the input rows themselves (an autoencoder): nothing stored
    Inputs,
}

impl TargetKind {
    pub const ALL: [TargetKind; 3] = [TargetKind::Values, TargetKind::Labels, TargetKind::Inputs];

    pub const fn code(self) -> i32 {
        match self {
            TargetKind::Values => 0,
            TargetKind::Labels => 1,
            TargetKind::Inputs => 2,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            TargetKind::Values => "values",
            TargetKind::Labels => "labels",
            TargetKind::Inputs => "inputs",
        }
    }

    pub fn from_code(code: i32) -> Result<TargetKind> {
        TargetKind::ALL
            .iter()
            .copied()
            .find(|k| k.code() == code)
            .ok_or_else(|| Error::param(format!("unknown target kind {}; use 0 values, 1 labels, 2 the inputs", code)))
    }
}

/// Rows resident for training: inputs (n x d, row-major f32), targets, and
/// the buffer an epoch's row order is drawn into.
pub struct TrainingSet {
    pub n: usize,
    pub d: usize,
    pub kind: TargetKind,
    /// targets per row (Values; 1 for Labels; d for Inputs)
    pub width: usize,
    pub x: Vec<f32>,
    /// Values: n x width; empty otherwise
    pub t: Vec<f32>,
    /// Labels: n; empty otherwise
    pub labels: Vec<i32>,
    order: Vec<u32>,
    /// set by seal(): the values are finite and what they allow
    sealed: Option<Seal>,
}

#[derive(Clone, Copy, Debug)]
struct Seal {
    /// largest label (Labels)
    max_label: i32,
    /// every target in [0, 1] (what BCE needs)
    unit_targets: bool,
}

fn first_non_finite(v: &[f32], width: usize) -> Option<(usize, usize, f32)> {
    v.iter().position(|x| !x.is_finite()).map(|i| (i / width, i % width, v[i]))
}

fn non_finite_error(what: &str, (r, c, v): (usize, usize, f32)) -> Error {
    Error::data(format!(
        "{} row {}, column {} is {} as f32 (networks compute in f32: values beyond ±3.4e38 overflow); remove or impute non-finite values",
        what,
        r,
        c,
        show(v as f64)
    ))
}

impl TrainingSet {
    /// Room for n rows of d inputs and their targets, for the caller to fill
    /// (inputs(), targets_values(), target_labels()) and then seal().
    pub fn new(n: usize, d: usize, kind: TargetKind, width: usize) -> Result<TrainingSet> {
        if n < 1 || d < 1 {
            return Err(Error::data(format!("a training set needs at least one row and one column, got {} x {}", n, d)));
        }
        if n > u32::MAX as usize {
            return Err(Error::data(format!("a training set holds at most {} rows, got {}", u32::MAX, n)));
        }
        let width = match kind {
            TargetKind::Values => {
                if width < 1 {
                    return Err(Error::data("targets need at least one column"));
                }
                width
            }
            TargetKind::Labels => 1,
            TargetKind::Inputs => d,
        };
        let x = alloc::filled(0.0f32, alloc::cells(n, d, 4)?)?;
        let t = if kind == TargetKind::Values { alloc::filled(0.0f32, alloc::cells(n, width, 4)?)? } else { Vec::new() };
        let labels = if kind == TargetKind::Labels { alloc::filled(0i32, n)? } else { Vec::new() };
        let order = alloc::filled(0u32, n)?;
        Ok(TrainingSet { n, d, kind, width, x, t, labels, order, sealed: None })
    }

    /// Checks the values once they are written: finite inputs and targets,
    /// labels >= 0. Writing through the buffers afterwards is the caller's
    /// contract not to.
    pub fn seal(&mut self) -> Result<()> {
        self.sealed = None;
        if let Some(bad) = first_non_finite(&self.x, self.d) {
            return Err(non_finite_error("X", bad));
        }
        let mut seal = Seal { max_label: -1, unit_targets: true };
        match self.kind {
            TargetKind::Values => {
                if let Some(bad) = first_non_finite(&self.t, self.width) {
                    return Err(non_finite_error("the targets", bad));
                }
                seal.unit_targets = self.t.iter().all(|v| (0.0..=1.0).contains(v));
            }
            TargetKind::Labels => {
                if let Some(i) = self.labels.iter().position(|&l| l < 0) {
                    return Err(Error::data(format!("label {} (row {}) is negative; class labels are 0, 1, ..., nClasses - 1", self.labels[i], i)));
                }
                seal.max_label = self.labels.iter().copied().max().unwrap_or(0);
            }
            TargetKind::Inputs => seal.unit_targets = self.x.iter().all(|v| (0.0..=1.0).contains(v)),
        }
        self.sealed = Some(seal);
        Ok(())
    }

    /// Whether this set can train or score `net`: sealed, the widths, the
    /// kind of targets and their values.
    pub fn check_for(&self, net: &Network) -> Result<()> {
        let seal = self.sealed.ok_or_else(|| Error::data("the training set's values were not checked (seal) or failed the check"))?;
        let a = &net.arch;
        if self.d != a.inputs() {
            return Err(Error::data(format!("X has {} columns but the network ({}) takes {} inputs", self.d, sizes_text(&a.sizes), a.inputs())));
        }
        if a.loss.takes_labels() {
            if self.kind != TargetKind::Labels {
                return Err(Error::data("loss 'softmax-cross-entropy' trains on class labels: pass an Int32Array of labels 0..nClasses - 1 as the targets"));
            }
            if seal.max_label >= a.outputs() as i32 {
                let row = self.labels.iter().position(|&l| l == seal.max_label).unwrap_or(0);
                return Err(Error::data(format!(
                    "label {} (row {}) is outside the network's {} classes; labels must be 0..{}",
                    seal.max_label,
                    row,
                    a.outputs(),
                    a.outputs() - 1
                )));
            }
            return Ok(());
        }
        if self.kind == TargetKind::Labels {
            return Err(Error::data(format!("loss '{}' trains on target values shaped as the outputs (a Matrix), not class labels", a.loss.name())));
        }
        if self.width != a.outputs() {
            return Err(Error::data(format!("the targets have {} columns but the network ({}) has {} outputs", self.width, sizes_text(&a.sizes), a.outputs())));
        }
        if a.loss == Loss::Bce && !seal.unit_targets {
            return Err(Error::data("loss 'bce' needs targets in [0, 1]; scale the targets (e.g. MinMaxScaler) or use loss 'mse'"));
        }
        Ok(())
    }

    /// The targets of row i: values (Values), the label (Labels) or the inputs.
    fn copy_targets(&self, i: usize, r: usize, ws: &mut Workspace) {
        match self.kind {
            TargetKind::Values => ws.t[r * self.width..(r + 1) * self.width].copy_from_slice(&self.t[i * self.width..(i + 1) * self.width]),
            TargetKind::Labels => ws.labels[r] = self.labels[i],
            TargetKind::Inputs => {}
        }
    }
}

/// How an epoch orders its rows.
pub enum Order<'a> {
    /// a uniformly random permutation from this seed (a new one per epoch)
    Seeded(u64),
    /// this permutation of 0..n
    Given(&'a [u32]),
}

/// Terms added to every batch's gradient before the optimizer step.
#[derive(Default)]
pub struct Regularization<'a> {
    /// scikit-learn's alpha: (l2 / rows) W added to the weights' gradients (not
    /// the biases'), and 0.5 l2 |W|^2 / rows to the reported loss
    pub l2: f64,
    /// FedProx: mu (w - anchor) added to the gradient
    pub proximal: Option<(f64, &'a [f32])>,
    /// SCAFFOLD: this vector (c - c_i) added to the gradient
    pub correction: Option<&'a [f32]>,
}

impl<'a> Regularization<'a> {
    fn validate(&self, n: usize) -> Result<()> {
        if !(self.l2 >= 0.0 && self.l2.is_finite()) {
            return Err(Error::param(format!("alpha (the L2 penalty) must be a finite number >= 0, got {}", show(self.l2))));
        }
        let vector = |name: &str, v: &[f32]| -> Result<()> {
            if v.len() != n {
                return Err(Error::param(format!("the {} has {} values; the network has {} parameters", name, v.len(), n)));
            }
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::param(format!("the {} is {} at {}; it must be finite", name, show(v[i] as f64), i)));
            }
            Ok(())
        };
        if let Some((mu, anchor)) = self.proximal {
            if !(mu >= 0.0 && mu.is_finite()) {
                return Err(Error::param(format!("the proximal mu must be a finite number >= 0, got {}", show(mu))));
            }
            vector("proximal anchor", anchor)?;
        }
        if let Some(c) = self.correction {
            vector("correction", c)?;
        }
        Ok(())
    }
}

/// The buffers of one call, for batches of at most `cap` rows.
pub struct Workspace {
    cap: usize,
    /// layer l's outputs start at offsets[l] (cap x sizes[l])
    acts: Vec<f32>,
    offsets: Vec<usize>,
    delta: [Vec<f32>; 2],
    t: Vec<f32>,
    labels: Vec<i32>,
    packs: Packs,
}

impl Workspace {
    pub fn new(net: &Network, cap: usize, kind: TargetKind) -> Result<Workspace> {
        let a = &net.arch;
        let mut offsets = alloc::with_capacity(a.sizes.len())?;
        let mut at = 0usize;
        for &s in &a.sizes {
            offsets.push(at);
            at = alloc::cells(cap, s, 4)?.checked_add(at).ok_or_else(|| Error::allocation(Workspace::bytes(net, cap)))?;
        }
        let wide = alloc::cells(cap, a.widest().max(a.inputs()), 4)?;
        let (m, n, k) = Workspace::product_bounds(net, cap);
        Ok(Workspace {
            cap,
            acts: alloc::filled(0.0f32, at)?,
            offsets,
            delta: [alloc::filled(0.0f32, wide)?, alloc::filled(0.0f32, wide)?],
            t: if kind == TargetKind::Values { alloc::filled(0.0f32, alloc::cells(cap, a.outputs(), 4)?)? } else { Vec::new() },
            labels: if kind == TargetKind::Labels { alloc::filled(0i32, cap)? } else { Vec::new() },
            packs: Packs::new(m, n, k)?,
        })
    }

    /// The largest rows, columns and depth of a product with batches of `cap` rows.
    fn product_bounds(net: &Network, cap: usize) -> (usize, usize, usize) {
        let widest = *net.arch.sizes.iter().max().unwrap_or(&1);
        (cap.max(widest), widest, cap.max(widest))
    }

    /// Bytes `new(net, cap, _)` allocates, at most.
    pub fn bytes(net: &Network, cap: usize) -> f64 {
        let a = &net.arch;
        let sum: f64 = a.sizes.iter().map(|&s| s as f64).sum();
        let wide = a.widest().max(a.inputs()) as f64;
        let (m, n, k) = Workspace::product_bounds(net, cap);
        4.0 * cap as f64 * (sum + 2.0 * wide + a.outputs() as f64 + 1.0) + Packs::bytes(m, n, k) as f64
    }

    fn layer(&self, l: usize, rows: usize, sizes: &[usize]) -> &[f32] {
        &self.acts[self.offsets[l]..self.offsets[l] + rows * sizes[l]]
    }
}

impl Network {
    /// Copies rows of `x` (n x d, row-major) into the workspace's input layer.
    fn load_rows(&self, ws: &mut Workspace, x: &[f32], rows: impl Iterator<Item = usize>) {
        let d = self.arch.inputs();
        let input = &mut ws.acts[..ws.cap * d];
        for (r, i) in rows.enumerate() {
            lanes::copy(&mut input[r * d..(r + 1) * d], &x[i * d..(i + 1) * d]);
        }
    }

    /// Layers 1..=upto on the `rows` rows in the workspace's input layer.
    /// The output layer's softmax is left to the loss (logits stay).
    fn forward(&self, ws: &mut Workspace, rows: usize, upto: usize) {
        for l in 1..=upto {
            let layer = self.layers[l - 1];
            let (n_in, n_out) = (layer.fan_in, layer.fan_out);
            let w = &self.params[layer.w..layer.b];
            let bias = &self.params[layer.b..layer.b + n_out];
            let Workspace { acts, offsets, packs, .. } = &mut *ws;
            let (lo, hi) = acts.split_at_mut(offsets[l]);
            let prev = &lo[offsets[l - 1]..offsets[l - 1] + rows * n_in];
            let cur = &mut hi[..rows * n_out];
            for r in 0..rows {
                lanes::copy(&mut cur[r * n_out..(r + 1) * n_out], bias);
            }
            gemm(rows, n_out, n_in, View::rows(prev, n_in), View::transposed(w, n_in), cur, n_out, true, packs);
            activation::forward(self.arch.activation(l), cur);
        }
    }

    /// The loss of the batch in the workspace and its gradient with respect to
    /// the output layer's pre-activations, into delta[0]. Returns the mean loss.
    fn output_delta(&self, ws: &mut Workspace, rows: usize, kind: TargetKind) -> f64 {
        let a = &self.arch;
        let (l, out) = (a.n_layers(), a.outputs());
        let y = &ws.acts[ws.offsets[l]..ws.offsets[l] + rows * out];
        let t: &[f32] = match kind {
            TargetKind::Values => &ws.t[..rows * out],
            TargetKind::Inputs => &ws.acts[..rows * out],
            TargetKind::Labels => &[],
        };
        let g = &mut ws.delta[0][..rows * out];
        match a.loss {
            Loss::Mse => {
                let v = loss::mse(y, t, g);
                activation::backward(a.output, y, g);
                v
            }
            Loss::Bce => {
                let v = loss::bce(y, t, g);
                activation::backward(a.output, y, g);
                v
            }
            Loss::SoftmaxCrossEntropy => loss::softmax_cross_entropy(y, out, &ws.labels[..rows], g),
        }
    }

    /// Gradients of every parameter from delta[0] (set by output_delta) into self.grads.
    fn backward(&mut self, ws: &mut Workspace, rows: usize) {
        let mut cur = 0;
        for l in (1..=self.arch.n_layers()).rev() {
            let layer = self.layers[l - 1];
            let (n_in, n_out) = (layer.fan_in, layer.fan_out);
            let prev = &ws.acts[ws.offsets[l - 1]..ws.offsets[l - 1] + rows * n_in];
            let (d0, d1) = ws.delta.split_at_mut(1);
            let (delta, below) = if cur == 0 { (&d0[0][..rows * n_out], &mut d1[0][..]) } else { (&d1[0][..rows * n_out], &mut d0[0][..]) };
            gemm(n_out, n_in, rows, View::transposed(delta, n_out), View::rows(prev, n_in), &mut self.grads[layer.w..layer.b], n_in, false, &mut ws.packs);
            column_sums(delta, rows, n_out, &mut self.grads[layer.b..layer.b + n_out]);
            if l > 1 {
                let below = &mut below[..rows * n_in];
                gemm(rows, n_in, n_out, View::rows(delta, n_out), View::rows(&self.params[layer.w..layer.b], n_in), below, n_in, false, &mut ws.packs);
                activation::backward(self.arch.hidden, prev, below);
                cur = 1 - cur;
            }
        }
    }

    /// Adds the regularization terms to the gradients; returns the penalty
    /// added to the loss (the L2 term).
    fn regularize(&mut self, reg: &Regularization, rows: usize) -> f64 {
        let mut penalty = 0.0;
        if reg.l2 > 0.0 {
            let c = F4::splat((reg.l2 / rows as f64) as f32);
            let mut sq = 0.0f64;
            for layer in &self.layers {
                let w = &self.params[layer.w..layer.b];
                sq += w.iter().map(|&v| v as f64 * v as f64).sum::<f64>();
                activation::zip_lanes(w, &mut self.grads[layer.w..layer.b], |w, g| g.add(c.mul(w)));
            }
            penalty = 0.5 * reg.l2 * sq / rows as f64;
        }
        if let Some((mu, anchor)) = reg.proximal {
            if mu != 0.0 {
                let mu = F4::splat(mu as f32);
                activation::zip2_lanes(&self.params, anchor, &mut self.grads, |p, a, g| g.add(mu.mul(p.sub(a))));
            }
        }
        if let Some(c) = reg.correction {
            activation::zip_lanes(c, &mut self.grads, |c, g| g.add(c));
        }
        penalty
    }

    /// One epoch of minibatch training: rows in `order`, batches of `batch`
    /// rows (the last may be smaller), one optimizer step per batch. Returns
    /// the mean of the batches' losses weighted by their rows (each taken
    /// before its step, the L2 penalty included).
    pub fn train_epoch(&mut self, set: &mut TrainingSet, opt: &mut Optimizer, batch: usize, order: Order, reg: &Regularization) -> Result<f64> {
        set.check_for(self)?;
        let n = set.n;
        if batch < 1 || batch > n {
            return Err(Error::param(format!("batchSize must be in [1, {}] (the training set's rows), got {}; lower it", n, batch)));
        }
        if opt.len() != self.params.len() {
            return Err(Error::param(format!("the optimizer was made for {} parameters; this network has {}", opt.len(), self.params.len())));
        }
        reg.validate(self.params.len())?;
        match order {
            Order::Seeded(seed) => {
                for (i, o) in set.order.iter_mut().enumerate() {
                    *o = i as u32;
                }
                Rng::new(seed).shuffle(&mut set.order);
            }
            Order::Given(given) => {
                check_permutation(given, n)?;
                set.order.copy_from_slice(given);
            }
        }
        let mut ws = Workspace::new(self, batch, set.kind)?;
        let mut total = 0.0f64;
        let mut start = 0;
        while start < n {
            let rows = batch.min(n - start);
            let ids = &set.order[start..start + rows];
            self.load_rows(&mut ws, &set.x, ids.iter().map(|&i| i as usize));
            for (r, &i) in ids.iter().enumerate() {
                set.copy_targets(i as usize, r, &mut ws);
            }
            self.forward(&mut ws, rows, self.arch.n_layers());
            let mut loss = self.output_delta(&mut ws, rows, set.kind);
            self.backward(&mut ws, rows);
            loss += self.regularize(reg, rows);
            opt.step(&mut self.params, &mut self.grads);
            total += loss * rows as f64;
            start += rows;
        }
        Ok(total / n as f64)
    }

    /// The mean loss over every row of `set` (no penalty).
    pub fn evaluate(&self, set: &TrainingSet) -> Result<f64> {
        set.check_for(self)?;
        let cap = set.n.min(CHUNK);
        let mut ws = Workspace::new(self, cap, set.kind)?;
        let mut total = 0.0f64;
        let mut start = 0;
        while start < set.n {
            let rows = cap.min(set.n - start);
            self.load_rows(&mut ws, &set.x, start..start + rows);
            for r in 0..rows {
                set.copy_targets(start + r, r, &mut ws);
            }
            self.forward(&mut ws, rows, self.arch.n_layers());
            total += self.output_delta(&mut ws, rows, set.kind) * rows as f64;
            start += rows;
        }
        Ok(total / set.n as f64)
    }

    fn check_rows(&self, x: &[f32], n: usize) -> Result<()> {
        let d = self.arch.inputs();
        if n < 1 {
            return Err(Error::data("X has no rows"));
        }
        assert!(x.len() >= n * d);
        if let Some(bad) = first_non_finite(&x[..n * d], d) {
            return Err(non_finite_error("X", bad));
        }
        Ok(())
    }

    /// The outputs of layer `upto` (1..=n_layers; the output layer after its
    /// activation, softmax included) for n rows of `x`, into `out` (n x width).
    pub fn predict(&self, x: &[f32], n: usize, upto: usize, out: &mut [f32]) -> Result<()> {
        let a = &self.arch;
        if upto < 1 || upto > a.n_layers() {
            return Err(Error::param(format!("layer must be in [1, {}], got {}", a.n_layers(), upto)));
        }
        self.check_rows(x, n)?;
        let width = a.sizes[upto];
        assert!(out.len() >= n * width);
        let cap = n.min(CHUNK);
        let mut ws = Workspace::new(self, cap, TargetKind::Inputs)?;
        let mut start = 0;
        while start < n {
            let rows = cap.min(n - start);
            self.load_rows(&mut ws, x, start..start + rows);
            self.forward(&mut ws, rows, upto);
            let dst = &mut out[start * width..(start + rows) * width];
            dst.copy_from_slice(ws.layer(upto, rows, &a.sizes));
            if upto == a.n_layers() && a.output == Activation::Softmax {
                activation::softmax_rows(dst, width);
            }
            start += rows;
        }
        Ok(())
    }

    /// Per-row mean squared error between each row of `x` and the network's
    /// output for it (an autoencoder's reconstruction error), into `out` (n).
    pub fn reconstruction_errors(&self, x: &[f32], n: usize, out: &mut [f64]) -> Result<()> {
        let a = &self.arch;
        if a.outputs() != a.inputs() {
            return Err(Error::param(format!("reconstruction errors need as many outputs as inputs; this network is {}", sizes_text(&a.sizes))));
        }
        self.check_rows(x, n)?;
        let (d, l) = (a.inputs(), a.n_layers());
        let cap = n.min(CHUNK);
        let mut ws = Workspace::new(self, cap, TargetKind::Inputs)?;
        let mut start = 0;
        while start < n {
            let rows = cap.min(n - start);
            self.load_rows(&mut ws, x, start..start + rows);
            self.forward(&mut ws, rows, l);
            let y = ws.layer(l, rows, &a.sizes);
            let mut probs;
            let y = if a.output == Activation::Softmax {
                probs = alloc::copy(y)?;
                activation::softmax_rows(&mut probs, d);
                &probs[..]
            } else {
                y
            };
            loss::row_squared_errors(y, &ws.acts[..rows * d], d, &mut out[start..start + rows]);
            start += rows;
        }
        Ok(())
    }

    /// Forward and backward on one batch (`rows` rows of `x` with targets `t`
    /// (Values, rows x outputs) or `labels`), no step: leaves the gradient in
    /// self.grads, writes every layer's outputs (layers 1..=n_layers, each rows x
    /// width, the output after its activation) into `outputs`, returns the loss.
    pub fn batch_gradient(&mut self, x: &[f32], rows: usize, t: Option<&[f32]>, labels: Option<&[i32]>, outputs: &mut [f32]) -> Result<f64> {
        let a = self.arch.clone();
        self.check_rows(x, rows)?;
        let kind = match (a.loss.takes_labels(), t, labels) {
            (true, _, Some(l)) => {
                if let Some(i) = l[..rows].iter().position(|&v| v < 0 || v as usize >= a.outputs()) {
                    return Err(Error::data(format!("label {} (row {}) is outside the network's {} classes", l[i], i, a.outputs())));
                }
                TargetKind::Labels
            }
            (false, Some(t), _) => {
                if let Some(bad) = first_non_finite(&t[..rows * a.outputs()], a.outputs()) {
                    return Err(non_finite_error("the targets", bad));
                }
                TargetKind::Values
            }
            _ => return Err(Error::data(format!("loss '{}' needs {}", a.loss.name(), if a.loss.takes_labels() { "class labels" } else { "target values" }))),
        };
        let mut ws = Workspace::new(self, rows, kind)?;
        self.load_rows(&mut ws, x, 0..rows);
        match kind {
            TargetKind::Labels => ws.labels.copy_from_slice(&labels.unwrap_or(&[])[..rows]),
            _ => ws.t.copy_from_slice(&t.unwrap_or(&[])[..rows * a.outputs()]),
        }
        self.forward(&mut ws, rows, a.n_layers());
        let loss = self.output_delta(&mut ws, rows, kind);
        self.backward(&mut ws, rows);
        let mut at = 0;
        for l in 1..=a.n_layers() {
            let len = rows * a.sizes[l];
            let dst = &mut outputs[at..at + len];
            dst.copy_from_slice(ws.layer(l, rows, &a.sizes));
            if l == a.n_layers() && a.output == Activation::Softmax {
                activation::softmax_rows(dst, a.sizes[l]);
            }
            at += len;
        }
        Ok(loss)
    }
}

/// out[j] = Σ_r δ[r width + j], rows in order.
fn column_sums(delta: &[f32], rows: usize, width: usize, out: &mut [f32]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    for r in 0..rows {
        activation::zip_lanes(&delta[r * width..(r + 1) * width], out, |d, s| s.add(d));
    }
}

fn check_permutation(order: &[u32], n: usize) -> Result<()> {
    if order.len() != n {
        return Err(Error::param(format!("the row order has {} entries; the training set has {} rows", order.len(), n)));
    }
    let mut seen = alloc::filled(false, n)?;
    for (k, &i) in order.iter().enumerate() {
        let i = i as usize;
        if i >= n || seen[i] {
            return Err(Error::param(format!("the row order is not a permutation of 0..{}: entry {} is {}", n - 1, k, i)));
        }
        seen[i] = true;
    }
    Ok(())
}
