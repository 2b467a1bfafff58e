use super::*;
use crate::error::ErrorKind;
use crate::rng::Rng;

/// n rows of d features, column-major: two blobs and a few far rows.
fn sample(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let mut v = vec![0.0; n * d];
    for i in 0..n {
        let shift = if i % 3 == 0 { 3.0 } else { 0.0 };
        let far = if i % 17 == 5 { 6.0 } else { 1.0 };
        for j in 0..d {
            v[j * n + i] = far * rng.normal() + shift * (j % 2) as f64;
        }
    }
    v
}

fn kernel_value(x: &Data, i: usize, y: &Data, k: usize, kind: KernelType, gamma: f64) -> f64 {
    match kind {
        KernelType::Rbf => (-gamma * (0..x.d).map(|j| (x.get(i, j) - y.get(k, j)).powi(2)).sum::<f64>()).exp(),
        KernelType::Linear => (0..x.d).map(|j| x.get(i, j) * y.get(k, j)).sum(),
    }
}

fn opts(nu: f64) -> OcsvmOptions {
    OcsvmOptions { nu, ..Default::default() }
}

/// The dual's constraints and the optimality conditions within tol: with
/// G = Q a, a_i < 1 needs -G_i <= -rho + tol, a_i > 0 needs G_i <= rho + tol
/// (the same as max_{up} -G + max_{low} G < tol around the shared rho).
fn check_kkt(x: &Data, m: &OneClassSvm, nu: f64, tol: f64) {
    let n = x.n;
    let mut alpha = vec![0.0; n];
    for (k, &i) in m.support.iter().enumerate() {
        alpha[i as usize] = m.coef[k];
    }
    let sum: f64 = alpha.iter().sum();
    assert!((sum - nu * n as f64).abs() < 1e-9 * n as f64, "sum {} vs nu l {}", sum, nu * n as f64);
    assert!(alpha.iter().all(|&a| (0.0..=1.0).contains(&a)));
    let q: Vec<Vec<f64>> = (0..n).map(|t| (0..n).map(|s| kernel_value(x, t, x, s, m.kernel, m.gamma)).collect()).collect();
    let g: Vec<f64> = (0..n).map(|t| (0..n).map(|s| alpha[s] * q[t][s]).sum()).collect();
    let up = (0..n).filter(|&t| alpha[t] < 1.0).map(|t| -g[t]).fold(f64::NEG_INFINITY, f64::max);
    let low = (0..n).filter(|&t| alpha[t] > 0.0).map(|t| g[t]).fold(f64::NEG_INFINITY, f64::max);
    // the solver's gradient comes from f32 kernel values: off by about 1e-7 of sum_s a_s |Q_ts|
    let qmax = q.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
    let slack = 1e-6 * sum * qmax;
    assert!(up + low < tol + slack, "gap {} (m {} M {})", up + low, up, -low);
    let obj = 0.5 * alpha.iter().zip(&g).map(|(a, g)| a * g).sum::<f64>();
    assert!((obj - m.objective).abs() <= 1e-6 * obj.abs() + slack * sum, "objective {} vs {}", m.objective, obj);
    // rho lies where the conditions put it: G_t <= rho where a_t > 0, G_t >= rho where a_t < 1 (within tol)
    assert!(low - tol - slack <= m.rho && (m.rho <= -up + tol + slack || up == f64::NEG_INFINITY), "rho {} outside [{}, {}]", m.rho, low, -up);
}

#[test]
fn kernels_match_their_definitions() {
    let mut rng = Rng::new(3);
    for &(d, n) in &[(1usize, 1usize), (2, 3), (5, 9), (8, 17), (13, 40)] {
        let width = d + d % 2;
        let mut rows = vec![0.0; n * width];
        for i in 0..n {
            for j in 0..d {
                rows[i * width + j] = rng.normal();
            }
        }
        let row = |i: usize| &rows[i * width..(i + 1) * width];
        let naive = |a: &[f64], b: &[f64]| {
            let even: f64 = (0..width).step_by(2).fold(0.0, |s, f| s + a[f] * b[f]);
            let odd: f64 = (1..width).step_by(2).fold(0.0, |s, f| s + a[f] * b[f]);
            even + odd
        };
        for i in 0..n {
            for k in 0..n {
                assert_eq!(kernels::dot(row(i), row(k)), naive(row(i), row(k)));
                assert_eq!(kernels::dot(row(i), row(k)), kernels::dot(row(k), row(i)));
            }
        }
        let idx: Vec<u32> = (0..n as u32).rev().collect();
        for k in 1..=kernels::GATHER_ROWS {
            let xs: Vec<&[f64]> = (0..k).map(|c| row(c % n)).collect();
            let ld = n + 1;
            let mut many = vec![-1.0; k * ld];
            kernels::dots_gather(&xs, &rows, width, &idx, n, &mut many, ld);
            for c in 0..k {
                for t in 0..n {
                    assert_eq!(many[c * ld + t], naive(row(c % n), row(n - 1 - t)));
                }
                assert_eq!(many[c * ld + n], -1.0);
            }
        }
        let mut out = vec![0.0; n];
        kernels::dots_gather(&[row(0)], &rows, width, &idx, n, &mut out, n);
        let ld = n + 3;
        let mut cross = vec![-1.0; n * ld];
        kernels::cross_dots(&rows, n, &rows, n, width, &mut cross, ld);
        for r in 0..n {
            for s in 0..n {
                assert_eq!(cross[r * ld + s], naive(row(r), row(s)));
            }
            assert_eq!(cross[r * ld + n], -1.0);
        }
        let sq: Vec<f64> = (0..n).map(|i| naive(row(i), row(i))).collect();
        let mut k = out.clone();
        kernels::rbf_from_dots(&mut k, sq[0], &sq.iter().rev().cloned().collect::<Vec<_>>(), 0.3);
        for t in 0..n {
            let dist: f64 = (0..d).map(|j| (row(0)[j] - row(n - 1 - t)[j]).powi(2)).sum();
            assert!((k[t] - (-0.3 * dist).exp()).abs() < 1e-12, "{} vs {}", k[t], (-0.3 * dist).exp());
        }
    }
    // a pair of equal rows is at distance 0 even where rounding says otherwise
    let mut v = [1.0 + 1e-16];
    kernels::rbf_from_dots(&mut v, 1.0, &[1.0], 2.0);
    assert_eq!(v[0], 1.0);
    let q = [0.5f32, -0.25, 2.0];
    let mut g = [1.0, 2.0, 3.0];
    kernels::axpy2_f32(&mut g, &q, 2.0, &[1.0, 1.0, 1.0], -1.0);
    assert_eq!(g, [1.0, 0.5, 6.0]);
    kernels::axpy_f32(&mut g, &q, -1.0);
    assert_eq!(g, [0.5, 0.75, 4.0]);
}

#[test]
fn solution_satisfies_the_constraints_and_optimality() {
    for &(n, d, nu, kind) in &[(60usize, 3usize, 0.5, KernelType::Rbf), (80, 5, 0.1, KernelType::Rbf), (45, 2, 0.9, KernelType::Rbf), (50, 4, 0.3, KernelType::Linear)] {
        let v = sample(n, d, n as u64);
        let x = Data::new(&v, n, d).unwrap();
        let m = fit(&x, &OcsvmOptions { kernel: kind, ..opts(nu) }).unwrap();
        assert!(m.converged);
        assert!(m.support.windows(2).all(|w| w[0] < w[1]));
        assert!((m.sv.n as f64) >= (nu * n as f64).floor());
        check_kkt(&x, &m, nu, 1e-3);
        // decision values against the definition
        let mut dec = vec![0.0; n];
        m.decision_function(&x, &mut dec).unwrap();
        for i in 0..n {
            let s: f64 = m.support.iter().zip(&m.coef).map(|(&k, &a)| a * kernel_value(&x, i, &x, k as usize, kind, m.gamma)).sum();
            assert!((dec[i] - (s - m.rho)).abs() < 1e-9 * s.abs().max(1.0), "row {}: {} vs {}", i, dec[i], s - m.rho);
        }
        // at most nu of the rows are outliers, at least nu are support vectors (Schölkopf's nu property, up to tol)
        let outliers = dec.iter().filter(|&&v| v < -2e-3).count();
        assert!(outliers as f64 <= nu * n as f64 + 1.0, "{} outliers for nu {}", outliers, nu);
    }
}

#[test]
fn a_tighter_tolerance_reaches_the_same_optimum() {
    let (n, d) = (120, 4);
    let v = sample(n, d, 9);
    let x = Data::new(&v, n, d).unwrap();
    let loose = fit(&x, &opts(0.2)).unwrap();
    let tight = fit(&x, &OcsvmOptions { tol: 1e-9, ..opts(0.2) }).unwrap();
    assert!(tight.objective <= loose.objective * (1.0 + 1e-12));
    assert!((loose.objective - tight.objective).abs() < 1e-4 * tight.objective);
    check_kkt(&x, &tight, 0.2, 1e-6);
}

#[test]
fn cache_size_and_shrinking_do_not_change_the_steps() {
    // many iterations (a narrow kernel), so that shrinking runs several times
    let (n, d) = (150, 3);
    let v = sample(n, d, 4);
    let x = Data::new(&v, n, d).unwrap();
    let base = OcsvmOptions { gamma: Gamma::Value(30.0), ..opts(0.3) };
    let full = fit(&x, &base).unwrap();
    assert!(full.n_iter > 2 * n, "only {} iterations", full.n_iter);
    // a cache of two columns: every column is recomputed, swaps drop columns
    let tiny = fit(&x, &OcsvmOptions { cache_mb: 1e-9, ..base.clone() }).unwrap();
    assert_eq!((tiny.n_iter, tiny.rho, tiny.objective), (full.n_iter, full.rho, full.objective));
    assert_eq!(tiny.coef, full.coef);
    let some = fit(&x, &OcsvmOptions { cache_mb: 150.0 * 40.0 * 4.0 / (1u64 << 20) as f64, ..base.clone() }).unwrap();
    assert_eq!((some.n_iter, some.rho, &some.coef), (full.n_iter, full.rho, &full.coef));
    let unshrunk = fit(&x, &OcsvmOptions { shrinking: false, ..base }).unwrap();
    assert!((unshrunk.objective - full.objective).abs() < 1e-9 * full.objective);
    check_kkt(&x, &full, 0.3, 1e-3);
}

#[test]
fn the_iteration_limit_stops_early() {
    let (n, d) = (100, 3);
    let v = sample(n, d, 2);
    let x = Data::new(&v, n, d).unwrap();
    let m = fit(&x, &OcsvmOptions { max_iter: Some(3), ..opts(0.5) }).unwrap();
    assert_eq!(m.n_iter, 3);
    assert!(!m.converged);
    let m = fit(&x, &OcsvmOptions { max_iter: Some(0), ..opts(0.5) }).unwrap();
    assert_eq!(m.n_iter, 0);
    // the start: the first nu l rows at 1
    assert_eq!(m.support, (0..50).collect::<Vec<u32>>());
}

#[test]
fn edge_cases() {
    // one row: a = nu, rho = nu K(x, x)
    let x = Data::new(&[2.0, 3.0], 1, 2).unwrap();
    let m = fit(&x, &opts(0.5)).unwrap();
    assert_eq!((m.coef.clone(), m.rho), (vec![0.5], 0.5));
    // constant data: 'scale' falls back to gamma 1
    let v = vec![4.0; 20];
    let x = Data::new(&v, 10, 2).unwrap();
    let m = fit(&x, &opts(0.3)).unwrap();
    assert_eq!(m.gamma, 1.0);
    assert!((m.coef.iter().sum::<f64>() - 3.0).abs() < 1e-12);
    // nu = 1: every row at the bound, rho finite
    let v = sample(30, 2, 1);
    let x = Data::new(&v, 30, 2).unwrap();
    let m = fit(&x, &opts(1.0)).unwrap();
    assert!(m.rho.is_finite() && m.coef.iter().all(|&a| a == 1.0) && m.sv.n == 30);
    let mut dec = vec![0.0; 30];
    m.decision_function(&x, &mut dec).unwrap();
    assert!(dec.iter().all(|&v| v <= 1e-6 * m.rho));
    // gamma 'auto'
    let m = fit(&x, &OcsvmOptions { gamma: Gamma::Auto, ..opts(0.5) }).unwrap();
    assert_eq!(m.gamma, 0.5);
}

#[test]
fn bad_input_is_an_error() {
    let v = sample(10, 2, 1);
    let x = Data::new(&v, 10, 2).unwrap();
    for nu in [0.0, -0.1, 1.0000001, f64::NAN] {
        assert_eq!(fit(&x, &opts(nu)).unwrap_err().kind, ErrorKind::InvalidParameter, "nu {}", nu);
    }
    for g in [0.0, -1.0, f64::INFINITY, f64::NAN] {
        assert_eq!(fit(&x, &OcsvmOptions { gamma: Gamma::Value(g), ..opts(0.5) }).unwrap_err().kind, ErrorKind::InvalidParameter);
    }
    assert_eq!(fit(&x, &OcsvmOptions { tol: 0.0, ..opts(0.5) }).unwrap_err().kind, ErrorKind::InvalidParameter);
    assert_eq!(fit(&x, &OcsvmOptions { cache_mb: 0.0, ..opts(0.5) }).unwrap_err().kind, ErrorKind::InvalidParameter);
    let mut bad = v.clone();
    bad[13] = f64::NAN;
    let e = fit(&Data::new(&bad, 10, 2).unwrap(), &opts(0.5)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidData);
    assert!(e.message.contains("row 3, column 1"), "{}", e.message);
    assert_eq!(fit(&Data::new(&[], 0, 2).unwrap(), &opts(0.5)).unwrap_err().kind, ErrorKind::InvalidData);
    let huge = vec![1e200; 4];
    let e = fit(&Data::new(&huge, 2, 2).unwrap(), &opts(0.5)).unwrap_err();
    assert!(e.message.contains("overflows"), "{}", e.message);
    let m = fit(&x, &opts(0.5)).unwrap();
    let other = sample(4, 3, 2);
    let e = m.decision_function(&Data::new(&other, 4, 3).unwrap(), &mut [0.0; 4]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidData);
    assert!(e.message.contains("3 features"), "{}", e.message);
}

#[test]
fn a_model_from_its_parts_scores_as_the_fitted_one() {
    let (n, d) = (70, 3);
    let v = sample(n, d, 12);
    let x = Data::new(&v, n, d).unwrap();
    let m = fit(&x, &opts(0.4)).unwrap();
    let mut sv = vec![0.0; m.sv.n * d];
    m.sv.unpadded_into(&mut sv);
    let back = OneClassSvm::from_parts(m.kernel, m.gamma, m.nu, d, &sv, &m.coef, m.rho, Some(&m.support)).unwrap();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    m.decision_function(&x, &mut a).unwrap();
    back.decision_function(&x, &mut b).unwrap();
    assert_eq!(a, b);
    let e = |r: Result<OneClassSvm>| r.unwrap_err().message;
    assert!(e(OneClassSvm::from_parts(KernelType::Rbf, 0.5, 0.5, d, &sv[1..], &m.coef, m.rho, None)).contains("supportVectors have"));
    let mut nan = sv.clone();
    nan[4] = f64::NAN;
    assert!(e(OneClassSvm::from_parts(KernelType::Rbf, 0.5, 0.5, d, &nan, &m.coef, m.rho, None)).contains("row 1, column 1"));
    assert!(e(OneClassSvm::from_parts(KernelType::Rbf, -1.0, 0.5, d, &sv, &m.coef, m.rho, None)).contains("gamma"));
    assert!(e(OneClassSvm::from_parts(KernelType::Rbf, 1.0, 0.5, d, &sv, &m.coef, f64::INFINITY, None)).contains("offset"));
    assert!(e(OneClassSvm::from_parts(KernelType::Rbf, 1.0, 0.5, d, &[], &[], 0.0, None)).contains("at least one support vector"));
}
