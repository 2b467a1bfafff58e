use super::*;
use crate::error::ErrorKind;
use crate::testing::{fixture, Json};

fn set<'a>(j: &'a Json) -> (Vec<f64>, Vec<f64>) {
    (j.get("means").numbers(), j.get("covariances").numbers())
}

fn matrix(cost: Cost, form: Form, d: usize, a: &Gaussians, b: &Gaussians) -> Vec<f64> {
    let mut out = vec![0.0; a.n * b.n];
    cost_matrix(cost, form, d, a, b, &mut out).unwrap();
    out
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1e-300)
}

#[test]
fn matches_scipy_to_1e_9_relative() {
    let f = fixture("gaussian_costs.json");
    for c in f.get("cases").array() {
        let name = c.get("name").str();
        let d = c.get("d").num() as usize;
        let form = if c.get("form").str() == "full" { Form::Full } else { Form::Diagonal };
        let (na, nb) = (c.get("na").num() as usize, c.get("nb").num() as usize);
        let (am, ac) = set(c.get("a"));
        let (bm, bc) = set(c.get("b"));
        let a = Gaussians { n: na, means: &am, covariances: &ac, labels: None };
        let b = Gaussians { n: nb, means: &bm, covariances: &bc, labels: None };
        for cost in Cost::ALL {
            let want = match c.opt(cost.name()) {
                Some(w) => w.numbers(),
                None => continue,
            };
            let got = matrix(cost, form, d, &a, &b);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(close(*g, *w, 1e-9), "{} {}: cell {} is {} but scipy gives {}", name, cost.name(), k, g, w);
            }
        }
    }
}

#[test]
fn eigenvalues_alone_are_those_of_the_full_decomposition() {
    let mut s = 7u64;
    for d in [1usize, 2, 3, 8, 17] {
        let x: Vec<f64> = (0..d * d).map(|_| lcg(&mut s)).collect();
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                a[i * d + j] = x[i * d + j] + x[j * d + i];
            }
        }
        let (want, _) = linalg::symmetric_eigen(&a, d).unwrap();
        let (mut v, mut values, mut off) = (vec![0.0; d * d], vec![0.0; d], vec![0.0; d]);
        linalg::symmetric_eigenvalues(&a, d, &mut v, &mut values, &mut off).unwrap();
        values.sort_by(|p, q| q.total_cmp(p));
        assert_eq!(values, want, "d = {}", d);
    }
}

/// Three 2-d Gaussians, full and as their diagonals.
fn three() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let means = vec![0.0, 0.0, 3.0, 1.0, -1.0, 2.0];
    let full = vec![2.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 1.0, 0.3, 0.0, 0.0, 4.0];
    let diag = vec![2.0, 0.5, 1.0, 1.0, 0.3, 4.0];
    (means, full, diag)
}

#[test]
fn diagonal_form_equals_full_form_on_diagonal_matrices() {
    let (means, full, diag) = three();
    for cost in Cost::ALL {
        let f = Gaussians { n: 3, means: &means, covariances: &full, labels: None };
        let g = Gaussians { n: 3, means: &means, covariances: &diag, labels: None };
        let a = matrix(cost, Form::Full, 2, &f, &f);
        let b = matrix(cost, Form::Diagonal, 2, &g, &g);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{}: {} vs {}", cost.name(), x, y);
        }
        // a Gaussian against itself costs nothing; the costs are symmetric
        for i in 0..3 {
            assert!(a[i * 3 + i].abs() < 1e-7, "{} self cost {}", cost.name(), a[i * 3 + i]);
            for j in 0..3 {
                assert!((a[i * 3 + j] - a[j * 3 + i]).abs() <= 1e-12 * a[i * 3 + j].max(1.0));
            }
        }
    }
}

#[test]
fn different_task_labels_are_forbidden_and_not_computed() {
    let (means, full, _) = three();
    let la = [1, 2, 1];
    let lb = [2, 1, 1];
    let a = Gaussians { n: 3, means: &means, covariances: &full, labels: Some(&la) };
    let b = Gaussians { n: 3, means: &means, covariances: &full, labels: Some(&lb) };
    let free = Gaussians { labels: None, ..a };
    for cost in Cost::ALL {
        let m = matrix(cost, Form::Full, 2, &a, &b);
        let plain = matrix(cost, Form::Full, 2, &free, &Gaussians { labels: None, ..b });
        for i in 0..3 {
            for j in 0..3 {
                if la[i] != lb[j] {
                    assert_eq!(m[i * 3 + j], f64::INFINITY);
                } else {
                    assert_eq!(m[i * 3 + j], plain[i * 3 + j]);
                }
            }
        }
        let mut out = vec![0.0; 9];
        assert_eq!(cost_matrix(cost, Form::Full, 2, &a, &free, &mut out).unwrap_err().kind, ErrorKind::InvalidParameter);
    }
}

#[test]
fn undefined_costs_are_nan_and_bad_input_is_an_error() {
    let means = vec![0.0, 0.0, 1.0, 1.0];
    // the second covariance is indefinite
    let full = vec![1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 1.0];
    let g = Gaussians { n: 2, means: &means, covariances: &full, labels: None };
    let m = matrix(Cost::Bhattacharyya, Form::Full, 2, &g, &g);
    assert!(m[0].is_finite() && m[1].is_nan() && m[2].is_nan() && m[3].is_nan());
    // W2 stays defined: the indefinite part counts as zero, as a floored sqrtm does
    assert!(matrix(Cost::Wasserstein, Form::Full, 2, &g, &g).iter().all(|v| v.is_finite()));
    let diag = vec![1.0, 1.0, -1.0, 1.0];
    let g = Gaussians { n: 2, means: &means, covariances: &diag, labels: None };
    for cost in Cost::ALL {
        let m = matrix(cost, Form::Diagonal, 2, &g, &g);
        assert!(m[0].is_finite() && m[1].is_nan() && m[3].is_nan(), "{}", cost.name());
    }
    let mut out = vec![0.0; 4];
    let nan = vec![0.0, f64::NAN, 1.0, 1.0];
    let bad = Gaussians { n: 2, means: &nan, covariances: &full, labels: None };
    let e = cost_matrix(Cost::Wasserstein, Form::Full, 2, &bad, &bad, &mut out).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidData);
    assert!(e.message.contains("mean of Gaussian 0"), "{}", e.message);
    let short = Gaussians { n: 2, means: &means, covariances: &full[..7], labels: None };
    assert_eq!(cost_matrix(Cost::Wasserstein, Form::Full, 2, &short, &short, &mut out).unwrap_err().kind, ErrorKind::InvalidData);
    let g = Gaussians { n: 2, means: &means, covariances: &full, labels: None };
    assert_eq!(cost_matrix(Cost::Wasserstein, Form::Full, 2, &g, &g, &mut out[..3]).unwrap_err().kind, ErrorKind::InvalidData);
    assert!(Cost::from_code(2).is_err() && Form::from_code(-1).is_err());
    // empty sets give an empty matrix
    let none = Gaussians { n: 0, means: &[], covariances: &[], labels: None };
    assert!(cost_matrix(Cost::Wasserstein, Form::Full, 2, &none, &g, &mut []).is_ok());
}

fn lcg(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
}
