use super::*;
use crate::error::ErrorKind;
use crate::testing::fixture;

fn ctype(name: &str) -> CovarianceType {
    CovarianceType::ALL.iter().copied().find(|t| t.name() == name).unwrap()
}

/// The fixture's full lower covariances in the form the type takes (diagonals for diag and spherical).
fn lower_covs(full: &[f64], n: usize, d: usize, t: CovarianceType) -> Vec<f64> {
    if full_form(t) {
        return full.to_vec();
    }
    (0..n).flat_map(|i| (0..d).map(move |l| full[i * d * d + l * d + l])).collect()
}

fn opts<'a>(k: usize, t: CovarianceType, nv: f64) -> Options<'a> {
    Options { k, covariance_type: t, virtual_samples: nv, tol: 1e-3, max_iter: 100, reg_covar: 1e-6, n_init: 1, means_init: None }
}

#[test]
fn matches_the_numpy_reference_to_1e_9() {
    let f = fixture("hem.json");
    for c in f.get("cases").array() {
        let name = c.get("name").str();
        let (d, n, k) = (c.get("d").num() as usize, c.get("n").num() as usize, c.get("k").num() as usize);
        let t = ctype(c.get("covarianceType").str());
        let (w, m, s) = (c.get("weights").numbers(), c.get("means").numbers(), c.get("covariances").numbers());
        let covs = lower_covs(&s, n, d, t);
        let init = c.get("meansInit").numbers();
        let o = Options {
            k,
            covariance_type: t,
            virtual_samples: c.get("virtualSamples").num(),
            tol: 0.0,
            max_iter: c.get("maxIter").num() as usize,
            reg_covar: c.get("regCovar").num(),
            n_init: 1,
            means_init: Some(&init),
        };
        let r = reduce(d, &Lower { n, weights: &w, means: &m, covariances: &covs }, &o, &mut Rng::new(0)).unwrap();
        let want = c.get("result");
        for (what, got, exp) in [("weights", &r.weights, want.get("weights").numbers()), ("means", &r.means, want.get("means").numbers()), ("covariances", &r.covariances, want.get("covariances").numbers())] {
            assert_eq!(got.len(), exp.len(), "{}: {}", name, what);
            for (a, b) in got.iter().zip(&exp) {
                assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{}: {} {} vs {}", name, what, a, b);
            }
        }
        let lb = want.get("lowerBound").num();
        assert!((r.lower_bound - lb).abs() <= 1e-9 * lb.abs().max(1.0), "{}: objective {} vs {}", name, r.lower_bound, lb);
        let ll = want.get("logLikelihood").num();
        assert!((r.log_likelihood - ll).abs() <= 1e-9 * ll.abs().max(1.0), "{}: log-likelihood {} vs {}", name, r.log_likelihood, ll);
        assert!(!r.converged && r.n_iter == o.max_iter);
    }
}

#[test]
fn identical_copies_reduce_to_the_original() {
    // three clients with the same two components: the reduction is those two (reg_covar 0)
    let d = 2;
    let means = [0.0, 0.0, 5.0, -3.0];
    let covs = [1.0, 0.3, 0.3, 2.0, 0.5, -0.1, -0.1, 0.4];
    let weights = [0.7, 0.3];
    let (mut w, mut m, mut s) = (vec![], vec![], vec![]);
    for _ in 0..3 {
        w.extend(weights.iter().map(|x| x / 3.0));
        m.extend_from_slice(&means);
        s.extend_from_slice(&covs);
    }
    for t in [CovarianceType::Full, CovarianceType::Diag] {
        let lc = lower_covs(&s, 6, d, t);
        let mut o = opts(2, t, 1000.0);
        o.reg_covar = 0.0;
        o.n_init = 3;
        let r = reduce(d, &Lower { n: 6, weights: &w, means: &m, covariances: &lc }, &o, &mut Rng::new(7)).unwrap();
        let order: Vec<usize> = if r.means[0] < 1.0 { vec![0, 1] } else { vec![1, 0] };
        let size = lower_size(t, d);
        let want_c = lower_covs(&covs, 2, d, t);
        for (j, &src) in order.iter().enumerate() {
            assert!((r.weights[j] - weights[src]).abs() < 1e-12);
            for l in 0..d {
                assert!((r.means[j * d + l] - means[src * d + l]).abs() < 1e-12);
            }
            for l in 0..size {
                assert!((r.covariances[j * size + l] - want_c[src * size + l]).abs() < 1e-12, "{:?}", r.covariances);
            }
        }
        assert!(r.converged);
    }
}

#[test]
fn the_same_seed_gives_the_same_reduction() {
    let n = 30;
    let d = 3;
    let mut rng = Rng::new(3);
    let m: Vec<f64> = (0..n * d).map(|i| rng.next_f64() * 10.0 + (i % 3) as f64).collect();
    let s: Vec<f64> = (0..n * d).map(|_| 0.5 + rng.next_f64()).collect();
    let w: Vec<f64> = (0..n).map(|_| 0.1 + rng.next_f64()).collect();
    let lower = Lower { n, weights: &w, means: &m, covariances: &s };
    let mut o = opts(4, CovarianceType::Diag, 500.0);
    o.n_init = 3;
    let a = reduce(d, &lower, &o, &mut Rng::new(11)).unwrap();
    let b = reduce(d, &lower, &o, &mut Rng::new(11)).unwrap();
    assert_eq!(a.means, b.means);
    assert_eq!(a.covariances, b.covariances);
    assert_eq!(a.weights, b.weights);
    assert!((a.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn bad_input_is_refused() {
    let d = 2;
    let m = [0.0, 0.0, 1.0, 1.0];
    let full = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
    let w = [0.5, 0.5];
    let run = |m: &[f64], s: &[f64], w: &[f64], o: &Options| reduce(d, &Lower { n: 2, weights: w, means: m, covariances: s }, o, &mut Rng::new(0)).map(|_| ()).unwrap_err().kind;
    let o = opts(2, CovarianceType::Full, 100.0);
    assert_eq!(run(&m, &full, &w, &opts(3, CovarianceType::Full, 100.0)), ErrorKind::InvalidParameter);
    assert_eq!(run(&[0.0, f64::NAN, 1.0, 1.0], &full, &w, &o), ErrorKind::InvalidData);
    assert_eq!(run(&m, &[1.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 1.0], &w, &o), ErrorKind::InvalidData);
    assert_eq!(run(&m, &[1.0, 0.5, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0], &w, &o), ErrorKind::InvalidData);
    assert_eq!(run(&m, &[1.0, 0.0, -1.0, 1.0], &w, &opts(2, CovarianceType::Diag, 100.0)), ErrorKind::InvalidData);
    assert_eq!(run(&m, &full, &[0.5, 0.0], &o), ErrorKind::InvalidData);
    assert_eq!(run(&m, &full, &w, &opts(2, CovarianceType::Full, 0.0)), ErrorKind::InvalidParameter);
    assert_eq!(run(&m, &full[..6], &w, &o), ErrorKind::InvalidData);
}

#[test]
fn trace_outer_matches_its_definition() {
    for d in 1..6 {
        let p: Vec<f64> = (0..d * d).map(|i| (i as f64 * 0.37).sin()).collect();
        let s: Vec<f64> = (0..d * d).map(|i| (i as f64 * 0.11).cos()).collect();
        let u: Vec<f64> = (0..d).map(|i| i as f64 - 1.5).collect();
        let mut want = 0.0;
        for r in 0..d {
            for c in 0..d {
                want += p[r * d + c] * (s[r * d + c] + u[r] * u[c]);
            }
        }
        assert!((kernels::trace_outer(&p, &s, &u, d) - want).abs() < 1e-12);
        // diagonal: k = d upper components against one lower, feature-major
        let k = d;
        let mut out = vec![0.0; k];
        kernels::trace_outer_diag(&p, &s, &s[..d], &u, d, k, &mut out);
        for j in 0..k {
            let want: f64 = (0..d).map(|l| p[l * k + j] * (s[l] + (u[l] - s[l * k + j]).powi(2))).sum();
            assert!((out[j] - want).abs() < 1e-12);
        }
    }
}

