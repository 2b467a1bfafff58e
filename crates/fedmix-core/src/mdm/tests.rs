use super::client::{init_contributions, init_contributions_held, log_pmf, log_pmf_held, round_statistics, round_statistics_held, InitStats, Prepared, RoundStats};
use super::sample::sample;
use super::server::{self, initialize, update};
use super::*;
use crate::special::{digamma, lgamma};
use crate::Rng;

fn model(tau: &[f64], alpha: &[f64], pi: &[f64]) -> Mdm {
    let k = tau.len();
    Mdm::new(k, alpha.len() / k, pi.len() / k, tau.to_vec(), alpha.to_vec(), pi.to_vec()).unwrap()
}

fn draw(m: &Mdm, count: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<u32>) {
    let mut counts = vec![0.0; count * m.c];
    let mut sizes = vec![0.0; count];
    let mut comps = vec![0u32; count];
    sample(m, count, &mut Rng::new(seed), &mut counts, &mut sizes, &mut comps).unwrap();
    (counts, sizes, comps)
}

fn stats(m: &Mdm, counts: &[f64], sizes: &[f64]) -> RoundStats {
    let mut acc = RoundStats::zeros(m.k, m.c, m.n_max).unwrap();
    round_statistics(&Prepared::for_batch(m, sizes.len()).unwrap(), counts, sizes, sizes.len(), f64::INFINITY, &mut acc).unwrap();
    acc
}

/// Algorithm 1 with components drawn uniformly from `seed`.
fn init_from(counts: &[f64], sizes: &[f64], k: usize, c: usize, n_max: usize, seed: u64) -> (Mdm, u32) {
    let mut rng = Rng::new(seed);
    let comps: Vec<u32> = sizes.iter().map(|_| rng.below(k as u64) as u32).collect();
    let mut acc = InitStats::zeros(k, c, n_max).unwrap();
    init_contributions(counts, sizes, sizes.len(), &comps, &mut acc).unwrap();
    initialize(&acc, false).unwrap()
}

/// Every histogram of size n over c categories.
fn compositions(n: usize, c: usize) -> Vec<Vec<f64>> {
    if c == 1 {
        return vec![vec![n as f64]];
    }
    let mut out = Vec::new();
    for first in 0..=n {
        for mut rest in compositions(n - first, c - 1) {
            rest.insert(0, first as f64);
            out.push(rest);
        }
    }
    out
}

#[test]
fn the_pmf_sums_to_one_over_histograms_and_sizes() {
    let m = model(&[0.3, 0.7], &[0.5, 1.5, 2.0, 0.05, 0.2, 4.0], &[0.2, 0.0, 0.3, 0.5, 0.6, 0.1, 0.3, 0.0]);
    let prep = Prepared::new(&m).unwrap();
    let mut total = 0.0;
    for n in 1..=4 {
        let hs = compositions(n, 3);
        let counts: Vec<f64> = hs.concat();
        let sizes = vec![n as f64; hs.len()];
        let mut ll = vec![0.0; hs.len()];
        log_pmf(&prep, &counts, &sizes, hs.len(), &mut ll, None).unwrap();
        total += ll.iter().map(|l| l.exp()).sum::<f64>();
    }
    assert!((total - 1.0).abs() < 1e-13, "{}", total);
}

#[test]
fn client_statistics_match_the_formulas() {
    let m = model(&[0.4, 0.6], &[0.1, 0.2, 0.6, 2.5, 2.6, 2.7], &[0.5, 0.5, 0.0, 0.2, 0.3, 0.5]);
    let row = [2.0, 0.0, 1.0];
    let n = 3.0;
    let acc = stats(&m, &row, &[n]);
    // eq 12 with the four-lgamma DM pmf
    let dm = |a: &[f64]| {
        let a0: f64 = a.iter().sum();
        let mut v = lgamma(a0) + lgamma(n + 1.0) - lgamma(n + a0);
        for (&cj, &aj) in row.iter().zip(a) {
            v += lgamma(cj + aj) - lgamma(aj) - lgamma(cj + 1.0);
        }
        v
    };
    let j: Vec<f64> = (0..2).map(|q| m.tau[q] * m.pi[q * 3 + 2] * dm(m.alpha_row(q)).exp()).collect();
    let z = j[0] + j[1];
    for q in 0..2 {
        let w = j[q] / z;
        assert!((acc.omega[q] - w).abs() < 1e-14);
        assert_eq!(acc.e[q * 3 + 2], acc.omega[q]);
        assert_eq!(acc.e[q * 3], 0.0);
        let a = m.alpha_row(q);
        let a0: f64 = a.iter().sum();
        for jj in 0..3 {
            let want = w * (digamma(row[jj] + a[jj]) - digamma(a[jj]));
            assert!((acc.u[q * 3 + jj] - want).abs() < 1e-13 * want.abs().max(1.0), "u {} {}", acc.u[q * 3 + jj], want);
        }
        assert!((acc.v[q] - w * (digamma(n + a0) - digamma(a0))).abs() < 1e-13);
    }
    assert!((acc.log_likelihood - z.ln()).abs() < 1e-13);
    assert_eq!(acc.clients, 1.0);
}

#[test]
fn sums_add_across_clients() {
    let m = model(&[0.5, 0.5], &[0.5, 1.0, 2.0, 3.0, 0.2, 0.1], &[0.25, 0.25, 0.25, 0.25, 0.1, 0.2, 0.3, 0.4]);
    // 100 clients: the batch tabulates small counts, one client at a time does not; the sums are the same, bit for bit
    let (counts, sizes, _) = draw(&m, 100, 3);
    let all = stats(&m, &counts, &sizes);
    let mut parts = RoundStats::zeros(2, 3, 4).unwrap();
    let prep = Prepared::new(&m).unwrap();
    for i in 0..100 {
        round_statistics(&prep, &counts[i * 3..i * 3 + 3], &sizes[i..i + 1], 1, f64::INFINITY, &mut parts).unwrap();
    }
    assert_eq!(all, parts);
    assert!((all.omega.iter().sum::<f64>() - 100.0).abs() < 1e-12);
    let (mut a, mut b) = (vec![0.0; 100], vec![0.0; 100]);
    log_pmf(&Prepared::for_batch(&m, 100).unwrap(), &counts, &sizes, 100, &mut a, None).unwrap();
    log_pmf(&prep, &counts, &sizes, 100, &mut b, None).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_shared_prepared_model_tabulates_midway_without_changing_any_client() {
    let m = model(&[0.5, 0.5], &[0.5, 1.0, 2.0, 3.0, 0.2, 0.1], &[0.25, 0.25, 0.25, 0.25, 0.1, 0.2, 0.3, 0.4]);
    let (counts, sizes, _) = draw(&m, 100, 5);
    // one client at a time through a shared handle (tables from the 64th on) against each client alone
    let mut shared = Prepared::new(&m).unwrap();
    for i in 0..100 {
        shared.serve(1);
        let (row, size) = (&counts[i * 3..i * 3 + 3], &sizes[i..i + 1]);
        let mut via_shared = RoundStats::zeros(2, 3, 4).unwrap();
        round_statistics(&shared, row, size, 1, f64::INFINITY, &mut via_shared).unwrap();
        let mut alone = RoundStats::zeros(2, 3, 4).unwrap();
        round_statistics(&Prepared::new(&m).unwrap(), row, size, 1, f64::INFINITY, &mut alone).unwrap();
        assert_eq!(via_shared, alone, "client {}", i);
    }
}

#[test]
fn clipping_bounds_each_clients_u_and_v() {
    let m = model(&[1.0], &[0.01, 0.01, 0.01], &[0.0, 0.0, 0.0, 1.0]);
    let mut acc = RoundStats::zeros(1, 3, 4).unwrap();
    round_statistics(&Prepared::new(&m).unwrap(), &[2.0, 1.0, 1.0], &[4.0], 1, 0.5, &mut acc).unwrap();
    let norm = (acc.u.iter().map(|x| x * x).sum::<f64>() + acc.v[0] * acc.v[0]).sqrt();
    assert!((norm - 0.5).abs() < 1e-12, "{}", norm);
    // the direction is kept: u / v as without clipping
    let free = stats(&m, &[2.0, 1.0, 1.0], &[4.0]);
    assert!((acc.u[0] / acc.v[0] - free.u[0] / free.v[0]).abs() < 1e-12);
}

#[test]
fn full_batch_iterations_never_decrease_the_likelihood_and_recover_the_parameters() {
    // sizes 20..=39 in component 0, 40..=59 in component 1
    let mut pi = vec![0.0; 2 * 60];
    for n in 20..40 {
        pi[n - 1] = 0.05;
        pi[60 + n + 19] = 0.05;
    }
    let truth = model(&[0.4, 0.6], &[0.1, 0.2, 0.6, 1.0, 2.0, 2.5, 2.6, 2.7, 2.8, 3.0], &pi);
    let (counts, sizes, _) = draw(&truth, 2000, 11);
    let (mut m, _) = init_from(&counts, &sizes, 2, 5, 60, 5);
    let mut last = f64::NEG_INFINITY;
    for _ in 0..100 {
        let s = stats(&m, &counts, &sizes);
        assert_eq!(s.unsupported, 0.0);
        assert!(s.log_likelihood >= last - 1e-9 * last.abs(), "{} after {}", s.log_likelihood, last);
        last = s.log_likelihood;
        m = update(&m, &s, false).unwrap().0;
    }
    // components may come out in either order
    let swap = (m.alpha[0] - truth.alpha[0]).abs() > (m.alpha[5] - truth.alpha[0]).abs();
    for q in 0..2 {
        let r = if swap { 1 - q } else { q };
        assert!((m.tau[r] - truth.tau[q]).abs() < 0.03, "tau {:?}", m.tau);
        for j in 0..5 {
            let rel = (m.alpha[r * 5 + j] - truth.alpha[q * 5 + j]).abs() / truth.alpha[q * 5 + j];
            assert!(rel < 0.2, "alpha {:?} vs {:?}", m.alpha, truth.alpha);
        }
    }
}

#[test]
fn initialization_follows_equations_6_and_9() {
    // one component, three clients with known normalized histograms
    let counts = [1.0, 3.0, 2.0, 2.0, 3.0, 1.0];
    let sizes = [4.0, 4.0, 4.0];
    let (m, flags) = init_from(&counts, &sizes, 1, 2, 5, 0);
    assert_eq!(flags, 0);
    let p1: f64 = (0.25 + 0.5 + 0.75) / 3.0;
    let q1: f64 = (0.0625 + 0.25 + 0.5625) / 3.0;
    let a0 = (p1 - q1) / (q1 - p1 * p1);
    assert!((m.alpha[0] - a0 * p1).abs() < 1e-14 && (m.alpha[1] - a0 * (1.0 - p1)).abs() < 1e-14);
    assert_eq!(m.pi, vec![0.0, 0.0, 0.0, 1.0, 0.0]);
    assert_eq!(m.tau, vec![1.0]);
}

#[test]
fn initialization_guards() {
    // category 1 never seen: eq 9 is 0/0; another category gives alpha_0, category 1 gets ALPHA_MIN
    let counts = [0.0, 1.0, 3.0, 0.0, 2.0, 2.0, 0.0, 3.0, 1.0];
    let (m, flags) = init_from(&counts, &[4.0; 3], 1, 3, 4, 0);
    assert_eq!(flags & server::DEGENERATE_MOMENTS, server::DEGENERATE_MOMENTS);
    assert_eq!(flags & server::ALPHA_FLOORED, server::ALPHA_FLOORED);
    assert_eq!(m.alpha[0], ALPHA_MIN);
    assert!(m.alpha[1] > 0.1 && m.alpha.iter().all(|a| a.is_finite()));
    // identical histograms: zero variance, alpha_0 at the upper bound
    let (m, flags) = init_from(&[1.0, 3.0, 1.0, 3.0], &[4.0, 4.0], 1, 2, 4, 0);
    assert_ne!(flags & server::DEGENERATE_MOMENTS, 0);
    assert!((m.alpha.iter().sum::<f64>() - server::INIT_CONCENTRATION_MAX).abs() < 1e-9);
    // a component nobody chose takes the pooled moments
    let mut acc = InitStats::zeros(2, 2, 4).unwrap();
    init_contributions(&[1.0, 3.0, 2.0, 2.0, 4.0, 0.0], &[4.0; 3], 3, &[0, 0, 0], &mut acc).unwrap();
    let (m, flags) = initialize(&acc, false).unwrap();
    assert_ne!(flags & server::EMPTY_COMPONENT, 0);
    assert_eq!(m.alpha_row(0), m.alpha_row(1));
    assert_eq!(m.pi_row(1), m.pi_row(0));
    // a component of single-class clients among others: alpha_0 at the lower bound
    let mut acc = InitStats::zeros(2, 2, 4).unwrap();
    init_contributions(&[4.0, 0.0, 0.0, 4.0, 1.0, 3.0, 2.0, 2.0], &[4.0; 4], 4, &[0, 0, 1, 1], &mut acc).unwrap();
    let (m, flags) = initialize(&acc, false).unwrap();
    assert_ne!(flags & server::DEGENERATE_MOMENTS, 0);
    assert!((m.alpha_row(0).iter().sum::<f64>() - server::INIT_CONCENTRATION_MIN).abs() < 1e-12);
}

#[test]
fn initialization_errors_say_what_to_change() {
    // only single-class clients
    let mut acc = InitStats::zeros(1, 3, 5).unwrap();
    init_contributions(&[5.0, 0.0, 0.0, 0.0, 2.0, 0.0], &[5.0, 2.0], 2, &[0, 0], &mut acc).unwrap();
    assert!(initialize(&acc, false).unwrap_err().message.contains("single class"));
    // the same sums with noise declared: a guard, not an error
    let (m, _) = initialize(&acc, true).unwrap();
    assert!(m.alpha.iter().all(|a| a.is_finite() && *a > 0.0));
    // K larger than the cohort
    let mut acc = InitStats::zeros(3, 2, 4).unwrap();
    init_contributions(&[1.0, 3.0, 2.0, 2.0], &[4.0; 2], 2, &[0, 1], &mut acc).unwrap();
    let e = initialize(&acc, false).unwrap_err();
    assert!(e.message.contains("K = 3 components is larger than the initialization cohort of 2 clients"), "{}", e.message);
    // empty cohort
    let e = initialize(&InitStats::zeros(2, 2, 4).unwrap(), false).unwrap_err();
    assert!(e.message.contains("cohort is empty"), "{}", e.message);
    // non-finite sums
    let mut acc = InitStats::zeros(1, 2, 4).unwrap();
    acc.clients = 1.0;
    acc.p[0] = f64::NAN;
    assert!(initialize(&acc, true).unwrap_err().message.contains("P[0] is NaN"));
}

#[test]
fn histograms_checked_once_give_the_raw_path_bit_for_bit() {
    let m = model(&[0.3, 0.7], &[0.5, 1.0, 2.0, 3.0, 0.2, 0.1], &[0.25, 0.25, 0.25, 0.25, 0.1, 0.2, 0.3, 0.4]);
    for &count in &[3usize, 100] {
        let (counts, sizes, comps) = draw(&m, count, 6);
        let held = Histograms::new(counts.clone(), sizes.clone(), count, 3).unwrap();
        for &clip in &[f64::INFINITY, 0.3] {
            let prep = Prepared::for_batch(&m, count).unwrap();
            let (mut raw, mut once) = (RoundStats::zeros(2, 3, 4).unwrap(), RoundStats::zeros(2, 3, 4).unwrap());
            round_statistics(&prep, &counts, &sizes, count, clip, &mut raw).unwrap();
            round_statistics_held(&prep, &held, clip, &mut once).unwrap();
            // bits, so that signed zeros and NaN would differ too
            let bits = |s: &RoundStats| s.omega.iter().chain(&s.e).chain(&s.u).chain(&s.v).chain(&[s.log_likelihood, s.unsupported, s.clients]).map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&raw), bits(&once), "{} clients, clip {}", count, clip);
        }
        let (mut raw, mut once) = (InitStats::zeros(2, 3, 4).unwrap(), InitStats::zeros(2, 3, 4).unwrap());
        init_contributions(&counts, &sizes, count, &comps, &mut raw).unwrap();
        init_contributions_held(&held, &comps, &mut once).unwrap();
        assert_eq!(raw, once);
        let prep = Prepared::for_batch(&m, count).unwrap();
        let (mut ll_raw, mut ll_once) = (vec![0.0; count], vec![0.0; count]);
        let (mut r_raw, mut r_once) = (vec![0.0; count * 2], vec![0.0; count * 2]);
        log_pmf(&prep, &counts, &sizes, count, &mut ll_raw, Some(&mut r_raw)).unwrap();
        log_pmf_held(&prep, &held, &mut ll_once, Some(&mut r_once)).unwrap();
        assert_eq!(ll_raw.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), ll_once.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        assert_eq!(r_raw, r_once);
    }
}

#[test]
fn histograms_are_checked_when_kept_and_against_each_model() {
    let kept = |counts: &[f64], sizes: &[f64]| Histograms::new(counts.to_vec(), sizes.to_vec(), sizes.len(), 2);
    assert!(kept(&[f64::NAN, 2.0], &[2.0]).unwrap_err().message.contains("non-negative integers"));
    assert!(kept(&[-1.0, 2.0], &[1.0]).unwrap_err().message.contains("non-negative integers"));
    assert!(kept(&[0.5, 0.5], &[1.0]).unwrap_err().message.contains("non-negative integers"));
    assert!(kept(&[1.0, 0.0], &[2.0]).unwrap_err().message.contains("sums to 1 but its size n is 2"));
    assert!(kept(&[0.0, 0.0], &[0.0]).unwrap_err().message.contains("whole number >= 1"));
    assert!(Histograms::new(vec![1.0, 1.0], vec![2.0, 2.0], 1, 2).unwrap_err().message.contains("2 sizes for 1 histograms"));
    assert_eq!(kept(&[], &[]).unwrap_err().kind, crate::ErrorKind::InvalidData);
    // sizes are bounded by each model's N, when it is used
    let h = kept(&[1.0, 0.0, 2.0, 1.0, 1.0, 1.0], &[1.0, 3.0, 2.0]).unwrap();
    let e = h.fits(2, 2).unwrap_err();
    assert_eq!(e.kind, crate::ErrorKind::InvalidData);
    assert!(e.message.starts_with("client 1: n = 3 exceeds N = 2"), "{}", e.message);
    assert!(h.fits(3, 3).unwrap_err().message.contains("2 categories but the model has 3"));
    assert!(h.fits(2, 3).is_ok());
    let m = model(&[1.0], &[1.0, 1.0], &[0.5, 0.5]);
    let mut acc = RoundStats::zeros(1, 2, 2).unwrap();
    assert!(round_statistics_held(&Prepared::new(&m).unwrap(), &h, f64::INFINITY, &mut acc).unwrap_err().message.contains("exceeds N = 2"));
    assert_eq!(acc.clients, 0.0);
}

#[test]
fn bad_histograms_are_typed_errors() {
    let m = model(&[1.0], &[1.0, 1.0], &[0.5, 0.5]);
    let prep = Prepared::new(&m).unwrap();
    let mut acc = RoundStats::zeros(1, 2, 2).unwrap();
    let mut run = |counts: &[f64], sizes: &[f64]| round_statistics(&prep, counts, sizes, sizes.len(), f64::INFINITY, &mut acc).unwrap_err();
    assert!(run(&[-1.0, 2.0], &[1.0]).message.contains("non-negative integers"));
    assert!(run(&[0.5, 0.5], &[1.0]).message.contains("non-negative integers"));
    let e = run(&[1.0, 0.0], &[2.0]);
    assert!(e.message.contains("sums to 1 but its size n is 2"), "{}", e.message);
    let e = run(&[2.0, 1.0], &[3.0]);
    assert!(e.message.contains("n = 3 exceeds N = 2"), "{}", e.message);
    assert_eq!(e.kind, crate::ErrorKind::InvalidData);
    assert!(run(&[0.0, 0.0], &[0.0]).message.contains("whole number >= 1"));
    assert_eq!(acc.clients, 0.0); // nothing was added by failed calls
    assert!(check_shape(1, 1, 4).unwrap_err().message.contains("at least 2"));
    // sizes from a message cannot ask for unbounded memory
    assert!(check_shape(1, 2, MAX_CELLS).is_ok());
    assert!(check_shape(2, 2, MAX_CELLS / 2 + 1).unwrap_err().message.contains("exceed the limit of 10000000 cells"));
    assert!(check_shape(MAX_CELLS, MAX_CELLS, 1).is_err());
    assert!(Mdm::new(1, 2, 2, vec![1.0], vec![1.0, 0.0], vec![0.5, 0.5]).unwrap_err().message.contains("positive"));
    assert!(Mdm::new(1, 2, 2, vec![0.9], vec![1.0, 1.0], vec![0.5, 0.5]).unwrap_err().message.contains("tau must sum to 1"));
    assert!(Mdm::new(1, 2, 2, vec![1.0], vec![1.0, 1.0], vec![0.5, 0.6]).unwrap_err().message.contains("pi[0]"));
}

#[test]
fn update_guards_keep_parameters_finite() {
    let m = model(&[0.5, 0.5], &[1.0, 1.0, 1.0, 1.0], &[0.5, 0.5, 0.5, 0.5]);
    // every client holds class 0 only in component 0's view: u[0][1] = 0 -> floored
    let mut agg = stats(&m, &[2.0, 0.0, 1.0, 0.0], &[2.0, 1.0]);
    let (next, flags) = update(&m, &agg, false).unwrap();
    assert_ne!(flags & server::ALPHA_FLOORED, 0);
    assert_eq!(next.alpha[1], ALPHA_MIN);
    // a component without mass keeps its pi and alpha
    agg.omega[1] = 0.0;
    agg.v[1] = 0.0;
    agg.e[2] = 0.0;
    agg.e[3] = 0.0;
    let (next, flags) = update(&m, &agg, false).unwrap();
    assert_ne!(flags & server::COMPONENT_KEPT, 0);
    assert_eq!(next.tau[1], 0.0);
    assert_eq!(next.pi_row(1), m.pi_row(1));
    assert_eq!(next.alpha_row(1), m.alpha_row(1));
    // noise: negative sums are clamped, nothing becomes NaN
    let mut noisy = stats(&m, &[2.0, 0.0, 1.0, 0.0], &[2.0, 1.0]);
    noisy.u[0] = -3.0;
    noisy.e[1] = -0.2;
    noisy.v[1] = -1.0;
    let (next, flags) = update(&m, &noisy, true).unwrap();
    assert_ne!(flags & server::CLAMPED, 0);
    assert!(next.alpha.iter().chain(&next.pi).chain(&next.tau).all(|x| x.is_finite() && *x >= 0.0));
    // a noisy u <= 0 keeps its alpha; exact sums floor it
    assert_ne!(flags & server::ALPHA_KEPT, 0);
    assert_eq!(next.alpha[0], m.alpha[0]);
    let (exact, flags) = update(&m, &noisy, false).unwrap();
    assert_eq!((flags & server::ALPHA_KEPT, exact.alpha[0]), (0, ALPHA_MIN));
    // an empty round is an error
    assert!(update(&m, &RoundStats::zeros(2, 2, 2).unwrap(), false).unwrap_err().message.contains("cohort is empty"));
}

#[test]
fn unsupported_sizes_fall_back_to_the_histogram() {
    // size 1 has probability 0 in both components
    let m = model(&[0.5, 0.5], &[5.0, 0.1, 0.1, 5.0], &[0.0, 1.0, 0.0, 1.0]);
    let acc = stats(&m, &[1.0, 0.0], &[1.0]);
    assert_eq!(acc.unsupported, 1.0);
    assert_eq!(acc.log_likelihood, 0.0);
    assert!(acc.omega[0] > 0.9 && (acc.omega.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    assert!(acc.e[0] > 0.9); // E gives size 1 mass: the next Pi covers it
    let mut ll = [0.0];
    log_pmf(&Prepared::new(&m).unwrap(), &[1.0, 0.0], &[1.0], 1, &mut ll, None).unwrap();
    assert_eq!(ll[0], f64::NEG_INFINITY);
}

#[test]
fn samples_follow_the_model() {
    let m = model(&[0.25, 0.75], &[1.0, 2.0, 7.0, 5.0, 4.0, 1.0], &[0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0, 0.5]);
    let count = 20000;
    let (counts, sizes, comps) = draw(&m, count, 9);
    let share0 = comps.iter().filter(|&&q| q == 0).count() as f64 / count as f64;
    assert!((share0 - 0.25).abs() < 0.015, "{}", share0);
    for i in 0..count {
        let q = comps[i] as usize;
        let n = sizes[i];
        assert!(if q == 0 { n == 3.0 } else { n == 1.0 || n == 4.0 });
        assert_eq!(counts[i * 3..i * 3 + 3].iter().sum::<f64>(), n);
    }
    // mean proportions per component are alpha / alpha_0
    for q in 0..2 {
        let idx: Vec<usize> = (0..count).filter(|&i| comps[i] as usize == q).collect();
        let a = m.alpha_row(q);
        let a0: f64 = a.iter().sum();
        for j in 0..3 {
            let mean = idx.iter().map(|&i| counts[i * 3 + j] / sizes[i]).sum::<f64>() / idx.len() as f64;
            assert!((mean - a[j] / a0).abs() < 0.02, "component {} class {}: {} vs {}", q, j, mean, a[j] / a0);
        }
    }
    // the same seed, the same clients
    assert_eq!(draw(&m, 50, 4), draw(&m, 50, 4));
}

#[test]
#[ignore]
fn profile_round() {
    use std::time::Instant;
    let (k, c, n_max) = (3, 62, 400);
    let mut alpha = vec![0.0; k * c];
    for j in 0..c {
        alpha[j] = 0.1;
        alpha[c + j] = 1.0;
        alpha[2 * c + j] = if j < 10 { 2.0 } else { 0.2 };
    }
    let mut pi = vec![0.0; k * n_max];
    for q in 0..k {
        for n in 19..n_max {
            pi[q * n_max + n] = 1.0 / (n_max - 19) as f64;
        }
    }
    let truth = model(&[0.3, 0.3, 0.4], &alpha, &pi);
    let (counts, sizes, _) = draw(&truth, 10000, 62);
    let prep = Prepared::for_batch(&truth, 10000).unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        let s = stats(&truth, &counts, &sizes);
        println!("round stats {:?} ({})", t.elapsed(), s.clients);
        let t = Instant::now();
        let mut ll = vec![0.0; 10000];
        log_pmf(&prep, &counts, &sizes, 10000, &mut ll, None).unwrap();
        println!("log pmf (with coefficient) {:?}", t.elapsed());
        let t = Instant::now();
        let mut x = 0.0;
        for i in 0..10000 {
            x += crate::dirichlet_multinomial::ln_multinomial_coefficient(&counts[i * c..(i + 1) * c]);
        }
        println!("coefficients {:?} {}", t.elapsed(), x > 0.0);
        let t = Instant::now();
        let mut om = vec![0.0; 3];
        for i in 0..10000 {
            prep.responsibilities(&counts[i * c..(i + 1) * c], sizes[i], &mut om);
        }
        println!("responsibilities {:?}", t.elapsed());
    }
}
