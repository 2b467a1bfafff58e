//! Dense networks: a network handle (architecture, flat parameters and
//! gradients), training-set handles whose rows stay in WASM memory across
//! epochs (TypeScript writes them straight into the buffers the set owns,
//! then seals it), and optimizer handles holding momentum or Adam's moments.
//! Values cross as f32, rows row-major.

use super::{f64s_mut, seed, status};
use fedmix_core::nn::{optim, Activation, Architecture, Init, Loss, Network, Optimizer, OptimizerSpec, Order, Regularization, TargetKind, TrainingSet};
use fedmix_core::{alloc as buffers, Error, Rng};
use std::slice;

unsafe fn f32s<'a>(ptr: *const f32, len: usize) -> &'a [f32] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn f32s_mut<'a>(ptr: *mut f32, len: usize) -> &'a mut [f32] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

/// A vector given as (pointer, length), or None for a null pointer.
unsafe fn optional_f32s<'a>(ptr: *const f32, len: usize) -> Option<&'a [f32]> {
    if ptr.is_null() {
        None
    } else {
        Some(f32s(ptr, len))
    }
}

fn handle<T>(value: T, out: *mut usize) {
    unsafe { *out = Box::into_raw(Box::new(value)) as usize };
}

/// A network with layer widths `sizes` (n_sizes u32 values, input and output
/// included), activation codes for the hidden layers and the output, a loss
/// code and an init code, its parameters drawn from the seed.
///
/// # Safety
/// `sizes` covers n_sizes values; `out_handle` receives the handle.
pub unsafe extern "C" fn fm_nn_new(sizes: *const u32, options: *const crate::NnNewOptions, out_handle: *mut usize) -> i32 {
    let crate::NnNewOptions { n_sizes, hidden, output, loss, init, seed_lo, seed_hi } = *options;
    let n_sizes = n_sizes as usize;
    status(|| {
        let widths = buffers::collect(super::u32s(sizes, n_sizes).iter().map(|&s| s as usize))?;
        let arch = Architecture::new(widths, Activation::from_code(hidden)?, Activation::from_code(output)?, Loss::from_code(loss)?)?;
        let net = Network::new(arch, Init::from_code(init)?, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        handle(net, out_handle);
        Ok(())
    })
}

/// # Safety
/// `h` is a live network handle, freed once.
pub unsafe extern "C" fn fm_nn_free(h: *mut Network) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// # Safety
/// `h` is a live network handle.
pub unsafe extern "C" fn fm_nn_parameter_count(h: *const Network) -> usize {
    (*h).n_parameters()
}

/// Copies the parameters (PyTorch's order) to `out`.
///
/// # Safety
/// `h` is live; `out` holds fm_nn_parameter_count values.
pub unsafe extern "C" fn fm_nn_get_parameters(h: *const Network, out: *mut f32) {
    let p = &(*h).params;
    f32s_mut(out, p.len()).copy_from_slice(p);
}

/// Copies the gradient of the last batch to `out`.
///
/// # Safety
/// `h` is live; `out` holds fm_nn_parameter_count values.
pub unsafe extern "C" fn fm_nn_get_gradients(h: *const Network, out: *mut f32) {
    let g = &(*h).grads;
    f32s_mut(out, g.len()).copy_from_slice(g);
}

/// Replaces the parameters: `len` must be the parameter count, every value finite.
///
/// # Safety
/// `h` is live; `p` covers len values.
pub unsafe extern "C" fn fm_nn_set_parameters(h: *mut Network, p: *const f32, len: usize) -> i32 {
    let net = &mut *h;
    status(|| net.set_parameters(f32s(p, len)))
}

/// Bytes a call on batches of `rows` rows allocates for its buffers (at most).
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_call_bytes(h: *const Network, rows: usize) -> f64 {
    fedmix_core::nn::train::Workspace::bytes(&*h, rows)
}

/// Room for a training set of n rows of d inputs; `kind` a target kind code
/// (values: `width` per row; labels; the inputs themselves). TypeScript
/// writes the rows at fm_nn_set_inputs and the targets at fm_nn_set_targets,
/// then calls fm_nn_set_seal.
///
/// # Safety
/// `out_handle` receives the handle.
pub unsafe extern "C" fn fm_nn_set_new(n: usize, d: usize, kind: i32, width: usize, out_handle: *mut usize) -> i32 {
    status(|| {
        let set = TrainingSet::new(n, d, TargetKind::from_code(kind)?, width)?;
        handle(set, out_handle);
        Ok(())
    })
}

/// # Safety
/// `h` is a live set handle, freed once.
pub unsafe extern "C" fn fm_nn_set_free(h: *mut TrainingSet) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Where the set's n x d input rows (f32, row-major) are written.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_set_inputs(h: *mut TrainingSet) -> *mut f32 {
    (*h).x.as_mut_ptr()
}

/// Where the targets are written: n x width f32 values, or n i32 labels;
/// null when the targets are the inputs.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_set_targets(h: *mut TrainingSet) -> *mut u8 {
    let set = &mut *h;
    match set.kind {
        TargetKind::Values => set.t.as_mut_ptr() as *mut u8,
        TargetKind::Labels => set.labels.as_mut_ptr() as *mut u8,
        TargetKind::Inputs => std::ptr::null_mut(),
    }
}

/// Checks the written values (finite, labels >= 0); a set trains only once sealed.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_set_seal(h: *mut TrainingSet) -> i32 {
    let set = &mut *h;
    status(|| set.seal())
}

/// Whether the set fits the network (widths, kind of targets, label range, BCE's [0, 1]).
///
/// # Safety
/// Both handles are live.
pub unsafe extern "C" fn fm_nn_set_check(net: *const Network, set: *const TrainingSet) -> i32 {
    let (net, set) = (&*net, &*set);
    status(|| set.check_for(net))
}

/// An optimizer for `net`'s parameters: `kind` SGD or ADAM (optim::SGD,
/// optim::ADAM), with torch.optim's hyperparameters (those of the other kind
/// are ignored; `nesterov` 0 or 1).
///
/// # Safety
/// `net` is live; `out_handle` receives the handle.
pub unsafe extern "C" fn fm_nn_optimizer_new(
    net: *const Network,
    options: *const crate::NnOptimizerNewOptions,
    out_handle: *mut usize,
) -> i32 {
    let crate::NnOptimizerNewOptions { kind, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps } = *options;
    let n = (*net).n_parameters();
    status(|| {
        let spec = match kind {
            optim::SGD => OptimizerSpec::Sgd { lr, momentum, dampening, nesterov: nesterov != 0, weight_decay },
            optim::ADAM => OptimizerSpec::Adam { lr, beta1, beta2, eps, weight_decay },
            _ => return Err(Error::param(format!("unknown optimizer code {}; use 0 sgd, 1 adam", kind))),
        };
        handle(Optimizer::new(spec, n)?, out_handle);
        Ok(())
    })
}

/// Forgets the optimizer's momentum, moments and step count.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_optimizer_reset(h: *mut Optimizer) {
    (*h).reset();
}

/// Steps taken since creation or reset.
///
/// # Safety
/// `h` is live.
pub unsafe extern "C" fn fm_nn_optimizer_steps(h: *const Optimizer) -> f64 {
    (*h).steps as f64
}

/// # Safety
/// `h` is a live optimizer handle, freed once.
pub unsafe extern "C" fn fm_nn_optimizer_free(h: *mut Optimizer) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// One epoch: batches of `batch` rows in the order of a permutation drawn from
/// the seed, or of `order` (order_len u32 row indices) when it is not null; one
/// optimizer step per batch, the gradient plus (l2 / rows) W on the weights,
/// mu (w - anchor) when `anchor` is not null and `correction` when it is not
/// null. Writes the mean loss over the batches (weighted by their rows) to `out_loss`.
///
/// # Safety
/// Handles are live; pointers cover their lengths.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_nn_train_epoch(
    net: *mut Network,
    set: *mut TrainingSet,
    opt: *mut Optimizer,
    options: *const crate::NnTrainEpochOptions,
    order: *const u32,
    anchor: *const f32,
    correction: *const f32,
    out_loss: *mut f64,
) -> i32 {
    let crate::NnTrainEpochOptions { batch, seed_lo, seed_hi, order_len, l2, mu, anchor_len, correction_len } = *options;
    let batch = batch as usize; let order_len = order_len as usize; let anchor_len = anchor_len as usize; let correction_len = correction_len as usize;
    let (net, set, opt) = (&mut *net, &mut *set, &mut *opt);
    status(|| {
        let order = if order.is_null() { Order::Seeded(seed(seed_lo, seed_hi)) } else { Order::Given(super::u32s(order, order_len)) };
        let reg = Regularization { l2, proximal: optional_f32s(anchor, anchor_len).map(|a| (mu, a)), correction: optional_f32s(correction, correction_len) };
        *out_loss = net.train_epoch(set, opt, batch, order, &reg)?;
        Ok(())
    })
}

/// The mean loss over the set into `out_loss`.
///
/// # Safety
/// Handles are live.
pub unsafe extern "C" fn fm_nn_evaluate(net: *const Network, set: *const TrainingSet, out_loss: *mut f64) -> i32 {
    let (net, set) = (&*net, &*set);
    status(|| {
        *out_loss = net.evaluate(set)?;
        Ok(())
    })
}

/// The outputs of layer `layer` (1 = the first hidden layer, the last = the
/// output after its activation) for n rows `x` (n x inputs, f32 row-major),
/// into `out` (n x that layer's width).
///
/// # Safety
/// `net` is live; `x` covers n x inputs values and `out` n x width.
pub unsafe extern "C" fn fm_nn_predict(net: *const Network, x: *const f32, n: usize, layer: usize, out: *mut f32) -> i32 {
    let net = &*net;
    status(|| {
        let a = &net.arch;
        let width = if layer >= 1 && layer <= a.n_layers() { a.sizes[layer] } else { 0 };
        net.predict(f32s(x, n * a.inputs()), n, layer, f32s_mut(out, n * width))
    })
}

/// Per-row mean squared error between each row of `x` and its reconstruction
/// (networks with as many outputs as inputs), into `out` (n f64).
///
/// # Safety
/// `net` is live; `x` covers n x inputs values and `out` n.
pub unsafe extern "C" fn fm_nn_reconstruction_errors(net: *const Network, x: *const f32, n: usize, out: *mut f64) -> i32 {
    let net = &*net;
    status(|| net.reconstruction_errors(f32s(x, n * net.arch.inputs()), n, f64s_mut(out, n)))
}

/// Forward and backward on one batch of `rows` rows, no optimizer step: the
/// gradient stays in the network (fm_nn_get_gradients), every layer's outputs
/// (layers in order, each rows x width, the output after its activation) go to
/// `out_outputs`, the loss to `out_loss`. Targets are `t` (rows x outputs f32)
/// or `labels` (rows i32); the other is null.
///
/// # Safety
/// `net` is live; pointers cover the shapes.
pub unsafe extern "C" fn fm_nn_batch_gradient(net: *mut Network, x: *const f32, rows: usize, t: *const f32, labels: *const i32, out_outputs: *mut f32, out_loss: *mut f64) -> i32 {
    let net = &mut *net;
    status(|| {
        let a = net.arch.clone();
        let total: usize = a.sizes[1..].iter().map(|w| w * rows).sum();
        let t = optional_f32s(t, rows * a.outputs());
        let labels = if labels.is_null() { None } else { Some(slice::from_raw_parts(labels, rows)) };
        *out_loss = net.batch_gradient(f32s(x, rows * a.inputs()), rows, t, labels, f32s_mut(out_outputs, total))?;
        Ok(())
    })
}

/// Floating-point operations of `iters` rounds of independent f32x4
/// multiply-adds (fedmix_core::nn::lanes::madd_peak, scalar lanes in the
/// scalar build); timed from JavaScript to measure the peak the network
/// kernels are compared with (bench/nn.mjs).
pub extern "C" fn fm_peak_probe_f32x4(iters: f64) -> f64 {
    let mut sink = 0.0f32;
    let flops = fedmix_core::nn::lanes::madd_peak(iters as u64, 1.0, &mut sink);
    if sink == 1.2345 {
        return -flops; // never true; keeps the loop observable
    }
    flops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adam(kind: i32, lr: f64) -> crate::NnOptimizerNewOptions {
        crate::NnOptimizerNewOptions { kind, lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, ..Default::default() }
    }

    fn epoch(batch: u32, seed_lo: u32) -> crate::NnTrainEpochOptions {
        crate::NnTrainEpochOptions { batch, seed_lo, ..Default::default() }
    }

    // (the heap's balance is checked from TypeScript: native tests share one allocator across threads)
    #[test]
    fn a_network_trains_through_the_exports() {
        unsafe {
            let sizes = [4u32, 6, 2];
            let mut h = 0usize;
            assert_eq!(fm_nn_new(sizes.as_ptr(), &crate::NnNewOptions { n_sizes: 3, hidden: 0, output: 4, loss: 2, init: 0, seed_lo: 1, seed_hi: 0 }, &mut h), 0);
            let net = h as *mut Network;
            assert_eq!(fm_nn_parameter_count(net), 4 * 6 + 6 + 6 * 2 + 2);
            let mut s = 0usize;
            assert_eq!(fm_nn_set_new(20, 4, TargetKind::Labels.code(), 0, &mut s), 0);
            let set = s as *mut TrainingSet;
            let x = slice::from_raw_parts_mut(fm_nn_set_inputs(set), 80);
            let labels = slice::from_raw_parts_mut(fm_nn_set_targets(set) as *mut i32, 20);
            for i in 0..20 {
                labels[i] = (i % 2) as i32;
                for j in 0..4 {
                    x[i * 4 + j] = if (i + j) % 2 == 0 { 1.0 } else { 0.0 };
                }
            }
            assert_eq!(fm_nn_set_seal(set), 0);
            assert_eq!(fm_nn_set_check(net, set), 0);
            let mut o = 0usize;
            assert_eq!(fm_nn_optimizer_new(net, &adam(optim::ADAM, 0.05), &mut o), 0);
            let opt = o as *mut Optimizer;
            let mut first = 0.0;
            let mut loss = 0.0;
            for e in 0..20 {
                assert_eq!(fm_nn_train_epoch(net, set, opt, &epoch(5, e), std::ptr::null(), std::ptr::null(), std::ptr::null(), &mut loss), 0);
                if e == 0 {
                    first = loss;
                }
            }
            assert!(loss < 0.2 * first, "{} -> {}", first, loss);
            assert_eq!(fm_nn_optimizer_steps(opt), 80.0);
            // refusals are statuses: a batch larger than the set, a wrong parameter length, a bad optimizer
            assert_eq!(fm_nn_train_epoch(net, set, opt, &epoch(21, 0), std::ptr::null(), std::ptr::null(), std::ptr::null(), &mut loss), 2);
            let p = [0.0f32; 3];
            assert_eq!(fm_nn_set_parameters(net, p.as_ptr(), 3), 2);
            let mut bad = 0usize;
            assert_eq!(fm_nn_optimizer_new(net, &adam(optim::SGD, 0.0), &mut bad), 2);
            let mut out = vec![0.0f32; 40];
            assert_eq!(fm_nn_predict(net, x.as_ptr(), 20, 2, out.as_mut_ptr()), 0);
            fm_nn_optimizer_free(opt);
            fm_nn_set_free(set);
            fm_nn_free(net);
        }
    }
}
