//! Whole-network checks: gradients against finite differences of an f64
//! reference, training, determinism, prediction and refusals.

use super::*;
use crate::error::ErrorKind;

fn lcg(s: &mut u64) -> f64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*s >> 11) as f64 / (1u64 << 53) as f64
}

fn net(sizes: &[usize], hidden: Activation, output: Activation, loss: Loss, seed: u64) -> Network {
    Network::new(Architecture::new(sizes.to_vec(), hidden, output, loss).unwrap(), Init::PyTorch, &mut Rng::new(seed)).unwrap()
}

fn act64(a: Activation, x: f64) -> f64 {
    match a {
        Activation::Relu => x.max(0.0),
        Activation::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Activation::Tanh => x.tanh(),
        Activation::Identity | Activation::Softmax => x,
    }
}

/// The loss of `rows` rows in f64, written independently of the f32 engine.
fn reference_loss(arch: &Architecture, p: &[f64], x: &[f32], rows: usize, t: &[f32], labels: &[i32]) -> f64 {
    let layers = arch.layers();
    let mut total = 0.0;
    for r in 0..rows {
        let mut a: Vec<f64> = x[r * arch.inputs()..(r + 1) * arch.inputs()].iter().map(|&v| v as f64).collect();
        for (k, l) in layers.iter().enumerate() {
            let z: Vec<f64> = (0..l.fan_out).map(|o| p[l.b + o] + (0..l.fan_in).map(|i| p[l.w + o * l.fan_in + i] * a[i]).sum::<f64>()).collect();
            let act = arch.activation(k + 1);
            a = z.iter().map(|&v| act64(act, v)).collect();
        }
        let out = arch.outputs();
        total += match arch.loss {
            Loss::Mse => (0..out).map(|j| (a[j] - t[r * out + j] as f64).powi(2)).sum::<f64>() / out as f64,
            Loss::Bce => (0..out).map(|j| {
                let q = t[r * out + j] as f64;
                -(q * a[j].ln() + (1.0 - q) * (1.0 - a[j]).ln())
            }).sum::<f64>() / out as f64,
            Loss::SoftmaxCrossEntropy => {
                let m = a.iter().cloned().fold(f64::MIN, f64::max);
                let lse = m + a.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                lse - a[labels[r] as usize]
            }
        };
    }
    total / rows as f64
}

struct Case {
    sizes: Vec<usize>,
    hidden: Activation,
    output: Activation,
    loss: Loss,
}

fn cases() -> Vec<Case> {
    vec![
        Case { sizes: vec![6, 5, 4, 6], hidden: Activation::Relu, output: Activation::Sigmoid, loss: Loss::Mse },
        Case { sizes: vec![5, 8, 3], hidden: Activation::Tanh, output: Activation::Softmax, loss: Loss::SoftmaxCrossEntropy },
        Case { sizes: vec![4, 3, 4], hidden: Activation::Tanh, output: Activation::Sigmoid, loss: Loss::Bce },
        Case { sizes: vec![3, 7, 2], hidden: Activation::Sigmoid, output: Activation::Identity, loss: Loss::Mse },
        Case { sizes: vec![40, 17, 9], hidden: Activation::Identity, output: Activation::Tanh, loss: Loss::Mse },
    ]
}

fn batch(arch: &Architecture, rows: usize, s: &mut u64) -> (Vec<f32>, Vec<f32>, Vec<i32>) {
    let x: Vec<f32> = (0..rows * arch.inputs()).map(|_| (lcg(s) * 2.0 - 1.0) as f32).collect();
    let t: Vec<f32> = (0..rows * arch.outputs()).map(|_| (lcg(s) * 0.8 + 0.1) as f32).collect();
    let labels: Vec<i32> = (0..rows).map(|_| (lcg(s) * arch.outputs() as f64) as i32).collect();
    (x, t, labels)
}

#[test]
fn gradients_match_finite_differences_of_an_f64_reference() {
    let mut s = 1u64;
    for c in cases() {
        let mut nw = net(&c.sizes, c.hidden, c.output, c.loss, 5);
        let rows = 7;
        let (x, t, labels) = batch(&nw.arch, rows, &mut s);
        let total: usize = c.sizes[1..].iter().map(|w| w * rows).sum();
        let mut outputs = vec![0.0f32; total];
        let takes_labels = c.loss.takes_labels();
        let loss = nw.batch_gradient(&x, rows, if takes_labels { None } else { Some(&t) }, if takes_labels { Some(&labels) } else { None }, &mut outputs).unwrap();
        let p: Vec<f64> = nw.params.iter().map(|&v| v as f64).collect();
        let want_loss = reference_loss(&nw.arch, &p, &x, rows, &t, &labels);
        assert!((loss - want_loss).abs() < 1e-5 * want_loss.abs().max(1.0), "{:?}: loss {} vs {}", c.sizes, loss, want_loss);
        let scale = nw.grads.iter().fold(0.0f64, |m, &g| m.max((g as f64).abs()));
        assert!(scale > 0.0);
        for i in 0..p.len() {
            let h = 1e-6 * p[i].abs().max(1.0);
            let mut q = p.clone();
            q[i] = p[i] + h;
            let up = reference_loss(&nw.arch, &q, &x, rows, &t, &labels);
            q[i] = p[i] - h;
            let down = reference_loss(&nw.arch, &q, &x, rows, &t, &labels);
            let fd = (up - down) / (2.0 * h);
            let g = nw.grads[i] as f64;
            assert!((g - fd).abs() <= 1e-5 * scale + 1e-4 * fd.abs(), "{:?} {} ({}): {} vs finite difference {}", c.sizes, i, nw.describe(i), g, fd);
        }
    }
}

#[test]
fn initialization_follows_pytorch_and_xavier_bounds() {
    let arch = Architecture::new(vec![100, 20, 3], Activation::Relu, Activation::Identity, Loss::Mse).unwrap();
    let n = Network::new(arch.clone(), Init::PyTorch, &mut Rng::new(1)).unwrap();
    let layers = arch.layers();
    assert_eq!(n.n_parameters(), 100 * 20 + 20 + 20 * 3 + 3);
    assert_eq!(layers[1], Layer { fan_in: 20, fan_out: 3, w: 2020, b: 2080 });
    for l in &layers {
        let bound = 1.0 / (l.fan_in as f32).sqrt();
        let w = &n.params[l.w..l.b + l.fan_out];
        assert!(w.iter().all(|v| v.abs() <= bound));
        // spread over the range: the largest within 5% of the bound
        assert!(w.iter().fold(0.0f32, |m, v| m.max(v.abs())) > 0.95 * bound);
    }
    let x = Network::new(arch, Init::Xavier, &mut Rng::new(1)).unwrap();
    let l = layers[0];
    let bound = (6.0f32 / 120.0).sqrt();
    assert!(x.params[l.w..l.b].iter().all(|v| v.abs() <= bound));
    assert!(x.params[l.b..l.b + 20].iter().all(|&v| v == 0.0));
    // same seed, same parameters
    let again = Network::new(n.arch.clone(), Init::PyTorch, &mut Rng::new(1)).unwrap();
    assert_eq!(again.params, n.params);
}

fn toy_set(n: usize, d: usize, kind: TargetKind, width: usize, s: &mut u64) -> TrainingSet {
    let mut set = TrainingSet::new(n, d, kind, width).unwrap();
    for i in 0..n {
        let c = i % 2;
        for j in 0..d {
            set.x[i * d + j] = (lcg(s) * 0.4 + if (j + c) % 2 == 0 { 0.6 } else { 0.0 }) as f32;
        }
        match kind {
            TargetKind::Labels => set.labels[i] = c as i32,
            TargetKind::Values => {
                for j in 0..width {
                    set.t[i * width + j] = if j % 2 == c { 1.0 } else { 0.0 };
                }
            }
            TargetKind::Inputs => {}
        }
    }
    set.seal().unwrap();
    set
}

#[test]
fn training_lowers_the_loss_and_repeats_bit_for_bit() {
    let mut s = 3u64;
    let mut set = toy_set(203, 12, TargetKind::Inputs, 12, &mut s);
    let run = |set: &mut TrainingSet, spec: OptimizerSpec| -> (Vec<f64>, Vec<f32>) {
        let mut nw = net(&[12, 8, 4, 8, 12], Activation::Relu, Activation::Sigmoid, Loss::Mse, 9);
        let mut opt = Optimizer::new(spec, nw.n_parameters()).unwrap();
        let losses = (0..15).map(|e| nw.train_epoch(set, &mut opt, 16, Order::Seeded(e), &Regularization::default()).unwrap()).collect();
        (losses, nw.params.clone())
    };
    let adam = OptimizerSpec::Adam { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 };
    let (losses, params) = run(&mut set, adam);
    assert!(losses[14] < 0.5 * losses[0], "{:?}", losses);
    let (again, params_again) = run(&mut set, adam);
    assert_eq!(losses, again);
    assert_eq!(params, params_again);
    let sgd = OptimizerSpec::Sgd { lr: 0.5, momentum: 0.9, dampening: 0.0, nesterov: true, weight_decay: 1e-4 };
    let (losses, _) = run(&mut set, sgd);
    assert!(losses[14] < 0.7 * losses[0], "{:?}", losses);
}

#[test]
fn a_classifier_learns_two_classes() {
    let mut s = 4u64;
    let mut set = toy_set(100, 6, TargetKind::Labels, 1, &mut s);
    let mut nw = net(&[6, 10, 2], Activation::Relu, Activation::Softmax, Loss::SoftmaxCrossEntropy, 2);
    let mut opt = Optimizer::new(OptimizerSpec::Adam { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }, nw.n_parameters()).unwrap();
    let before = nw.evaluate(&set).unwrap();
    for e in 0..30 {
        nw.train_epoch(&mut set, &mut opt, 10, Order::Seeded(e), &Regularization { l2: 1e-4, ..Default::default() }).unwrap();
    }
    let after = nw.evaluate(&set).unwrap();
    assert!(after < 0.2 * before, "{} -> {}", before, after);
    let mut probs = vec![0.0f32; 200];
    nw.predict(&set.x, 100, 2, &mut probs).unwrap();
    let correct = (0..100).filter(|&i| (probs[2 * i + 1] > probs[2 * i]) as i32 == set.labels[i]).count();
    assert!(correct >= 98, "{}", correct);
    for i in 0..100 {
        assert!((probs[2 * i] + probs[2 * i + 1] - 1.0).abs() < 1e-6);
    }
}

#[test]
fn a_given_order_is_followed_and_checked() {
    let mut s = 5u64;
    let mut set = toy_set(10, 3, TargetKind::Values, 2, &mut s);
    let spec = OptimizerSpec::Sgd { lr: 0.1, momentum: 0.0, dampening: 0.0, nesterov: false, weight_decay: 0.0 };
    let order: Vec<u32> = vec![3, 1, 4, 0, 5, 9, 2, 6, 8, 7];
    // the same as training batch by batch on those rows
    let mut a = net(&[3, 4, 2], Activation::Tanh, Activation::Sigmoid, Loss::Bce, 1);
    let mut b = net(&[3, 4, 2], Activation::Tanh, Activation::Sigmoid, Loss::Bce, 1);
    let mut opt = Optimizer::new(spec, a.n_parameters()).unwrap();
    let loss = a.train_epoch(&mut set, &mut opt, 4, Order::Given(&order), &Regularization::default()).unwrap();
    let mut opt_b = Optimizer::new(spec, b.n_parameters()).unwrap();
    let mut weighted = 0.0;
    for chunk in order.chunks(4) {
        let x: Vec<f32> = chunk.iter().flat_map(|&i| set.x[i as usize * 3..i as usize * 3 + 3].to_vec()).collect();
        let t: Vec<f32> = chunk.iter().flat_map(|&i| set.t[i as usize * 2..i as usize * 2 + 2].to_vec()).collect();
        let mut outs = vec![0.0f32; chunk.len() * 6];
        weighted += b.batch_gradient(&x, chunk.len(), Some(&t), None, &mut outs).unwrap() * chunk.len() as f64;
        let mut g = b.grads.clone();
        opt_b.step(&mut b.params, &mut g);
    }
    assert_eq!(a.params, b.params);
    assert!((loss - weighted / 10.0).abs() < 1e-12);
    let bad: Vec<u32> = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 8];
    let e = a.train_epoch(&mut set, &mut opt, 4, Order::Given(&bad), &Regularization::default()).unwrap_err();
    assert!(e.message.contains("permutation"), "{}", e.message);
}

#[test]
fn proximal_and_correction_terms_enter_the_gradient() {
    let mut s = 6u64;
    let mut set = toy_set(8, 3, TargetKind::Values, 2, &mut s);
    let spec = OptimizerSpec::Sgd { lr: 0.1, momentum: 0.0, dampening: 0.0, nesterov: false, weight_decay: 0.0 };
    let start = net(&[3, 2], Activation::Relu, Activation::Identity, Loss::Mse, 1).params;
    let train = |set: &mut TrainingSet, reg: &Regularization| {
        let mut nw = net(&[3, 2], Activation::Relu, Activation::Identity, Loss::Mse, 1);
        let mut opt = Optimizer::new(spec, nw.n_parameters()).unwrap();
        nw.train_epoch(set, &mut opt, 8, Order::Seeded(0), reg).unwrap();
        nw.params
    };
    let plain = train(&mut set, &Regularization::default());
    // mu = 0 is plain training bit for bit
    let anchor: Vec<f32> = start.iter().map(|v| v + 1.0).collect();
    assert_eq!(train(&mut set, &Regularization { proximal: Some((0.0, &anchor)), ..Default::default() }), plain);
    // one full batch, one step: the proximal term moves each parameter by lr mu (anchor - w) = 0.1 * 0.5 * 1
    let prox = train(&mut set, &Regularization { proximal: Some((0.5, &anchor)), ..Default::default() });
    for i in 0..plain.len() {
        assert!((prox[i] - plain[i] - 0.05).abs() < 1e-6);
    }
    let c = vec![2.0f32; plain.len()];
    let corrected = train(&mut set, &Regularization { correction: Some(&c), ..Default::default() });
    for i in 0..plain.len() {
        assert!((corrected[i] - plain[i] + 0.2).abs() < 1e-6);
    }
    let short = vec![0.0f32; 3];
    let mut nw = net(&[3, 2], Activation::Relu, Activation::Identity, Loss::Mse, 1);
    let mut opt = Optimizer::new(spec, nw.n_parameters()).unwrap();
    let e = nw.train_epoch(&mut set, &mut opt, 8, Order::Seeded(0), &Regularization { correction: Some(&short), ..Default::default() }).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidParameter);
}

#[test]
fn bad_architectures_data_and_calls_are_refused() {
    let arch = |s: Vec<usize>, h, o, l| Architecture::new(s, h, o, l);
    assert!(arch(vec![3], Activation::Relu, Activation::Identity, Loss::Mse).unwrap_err().message.contains("at least"));
    assert!(arch(vec![3, 0, 2], Activation::Relu, Activation::Identity, Loss::Mse).unwrap_err().message.contains("sizes[1]"));
    assert!(arch(vec![3, 2], Activation::Relu, Activation::Softmax, Loss::Mse).is_err());
    assert!(arch(vec![3, 2], Activation::Relu, Activation::Identity, Loss::SoftmaxCrossEntropy).is_err());
    assert!(arch(vec![3, 2], Activation::Relu, Activation::Relu, Loss::Bce).is_err());
    assert!(arch(vec![3, 2], Activation::Softmax, Activation::Identity, Loss::Mse).is_err());
    let huge = arch(vec![usize::MAX / 2, 4, 2], Activation::Relu, Activation::Identity, Loss::Mse).unwrap_err();
    assert_eq!(huge.kind, ErrorKind::Allocation);

    let mut s = 7u64;
    let mut nw = net(&[3, 4, 2], Activation::Relu, Activation::Softmax, Loss::SoftmaxCrossEntropy, 1);
    // parameters: length and finiteness
    assert!(nw.set_parameters(&[0.0; 5]).unwrap_err().message.contains("has 26"));
    let mut p = nw.params.clone();
    p[17] = f32::NAN;
    let e = nw.set_parameters(&p).unwrap_err();
    assert!(e.message.contains("layer 1 weight[0][1]"), "{}", e.message);
    // labels outside the classes, and values where labels are needed
    let mut set = toy_set(6, 3, TargetKind::Labels, 1, &mut s);
    set.labels[4] = 2;
    set.seal().unwrap();
    let e = set.check_for(&nw).unwrap_err();
    assert!(e.message.contains("label 2 (row 4)"), "{}", e.message);
    let values = toy_set(6, 3, TargetKind::Values, 2, &mut s);
    assert!(values.check_for(&nw).unwrap_err().message.contains("class labels"));
    // non-finite inputs
    let mut bad = TrainingSet::new(2, 3, TargetKind::Inputs, 0).unwrap();
    bad.x[4] = f32::INFINITY;
    assert!(bad.seal().unwrap_err().message.contains("row 1, column 1 is Infinity"));
    assert!(bad.check_for(&nw).is_err());
    // batch larger than the data
    let mut set = toy_set(6, 3, TargetKind::Labels, 1, &mut s);
    let mut opt = Optimizer::new(OptimizerSpec::Adam { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }, nw.n_parameters()).unwrap();
    let e = nw.train_epoch(&mut set, &mut opt, 7, Order::Seeded(0), &Regularization::default()).unwrap_err();
    assert!(e.message.contains("batchSize must be in [1, 6]"), "{}", e.message);
    // the network still trains afterwards
    nw.train_epoch(&mut set, &mut opt, 6, Order::Seeded(0), &Regularization::default()).unwrap();
    let mut out = vec![0.0f32; 2];
    assert!(nw.predict(&[0.0, f32::NAN, 0.0], 1, 2, &mut out).is_err());
    assert!(nw.predict(&[0.0, 1.0, 0.0], 1, 3, &mut out).is_err());
}

#[test]
fn predict_reconstruct_and_layer_outputs_agree_with_the_batch_pass() {
    let mut s = 8u64;
    let nw0 = net(&[5, 4, 2, 4, 5], Activation::Relu, Activation::Sigmoid, Loss::Mse, 3);
    let mut nw = net(&[5, 4, 2, 4, 5], Activation::Relu, Activation::Sigmoid, Loss::Mse, 3);
    let rows = 300; // more than one chunk
    let (x, _, _) = batch(&nw.arch, rows, &mut s);
    let mut outs = vec![0.0f32; rows * 15];
    nw.batch_gradient(&x, rows, Some(&x), None, &mut outs).unwrap();
    let mut code = vec![0.0f32; rows * 2];
    nw0.predict(&x, rows, 2, &mut code).unwrap();
    assert_eq!(&code[..], &outs[rows * 4..rows * 6]);
    let mut y = vec![0.0f32; rows * 5];
    nw0.predict(&x, rows, 4, &mut y).unwrap();
    assert_eq!(&y[..], &outs[rows * 10..]);
    let mut err = vec![0.0f64; rows];
    nw0.reconstruction_errors(&x, rows, &mut err).unwrap();
    for r in 0..rows {
        let e: f64 = (0..5).map(|j| ((y[r * 5 + j] - x[r * 5 + j]) as f64).powi(2)).sum::<f64>() / 5.0;
        assert!((err[r] - e).abs() < 1e-12);
    }
}
