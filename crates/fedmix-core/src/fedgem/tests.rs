use super::client::{bisection_radius, Isotropic, RadiusMethod};
use super::server::{capped_radii, final_merge, informative, join_closer_than, meeting_point, round_update, smallest_separation, weighted_centers, Components, Overlap, Search};
use crate::data::Data;
use crate::gmm::estep::{self, Scratch};
use crate::kdtree::sq_distance;
use crate::rng::Rng;

/// n points per center (rows of `centers`, d features), N(center, I); column-major.
fn blobs(centers: &[f64], d: usize, n: usize, rng: &mut Rng) -> Vec<f64> {
    let k = centers.len() / d;
    let mut x = vec![0.0; k * n * d];
    for c in 0..k {
        for i in 0..n {
            for j in 0..d {
                x[j * k * n + c * n + i] = centers[c * d + j] + rng.normal();
            }
        }
    }
    x
}

fn model(k: usize, d: usize, means: Vec<f64>) -> Isotropic {
    Isotropic::new(k, d, vec![1.0 / k as f64; k], 1.0, means).unwrap()
}

#[test]
fn a_local_step_is_the_em_step_on_the_means() {
    let mut rng = Rng::new(1);
    let (d, n) = (2, 200);
    let x = blobs(&[0.0, 0.0, 5.0, 5.0, -4.0, 6.0], d, n, &mut rng);
    let data = Data::new(&x, 3 * n, d).unwrap();
    let start = vec![0.5, 0.5, 4.0, 4.0, -3.0, 5.0];
    let mut m = model(3, d, start.clone());
    let round = m.local_steps(&data, 1, RadiusMethod::ClosedForm).unwrap();
    // the M-step by hand: responsibilities under the start, weighted means
    let (mut resp, mut lse) = (vec![0.0; 3 * n * 3], vec![0.0; 3 * n]);
    estep::e_step(&data, &model(3, d, start.clone()).gmm().unwrap(), &mut Scratch::new(d).unwrap(), &mut resp, &mut lse).unwrap();
    for c in 0..3 {
        let r = &resp[c * 3 * n..(c + 1) * 3 * n];
        let nk: f64 = r.iter().sum();
        assert!((round.counts[c] - nk).abs() < 1e-9 * nk);
        let mut sq = 0.0;
        for j in 0..d {
            let mean = (0..3 * n).map(|i| r[i] * data.get(i, j)).sum::<f64>() / nk;
            assert!((round.maximizers[c * d + j] - mean).abs() < 1e-10, "component {} feature {}", c, j);
            sq += (mean - start[c * d + j]).powi(2);
        }
        assert!((round.radii[c] - sq.sqrt()).abs() < 1e-10);
    }
    assert_eq!(m.means, round.maximizers);
    assert!((round.log_likelihood - lse.iter().sum::<f64>() / (3 * n) as f64).abs() < 1e-12);
}

#[test]
fn local_steps_never_lower_the_likelihood_and_the_radii_shrink() {
    let mut rng = Rng::new(2);
    let (d, n) = (3, 150);
    let x = blobs(&[0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 6.0, 6.0], d, n, &mut rng);
    let data = Data::new(&x, 3 * n, d).unwrap();
    let mut m = model(3, d, vec![1.0, 1.0, 1.0, 4.0, 1.0, 0.0, 1.0, 4.0, 4.0]);
    let mut last = f64::NEG_INFINITY;
    let mut first_radius = 0.0;
    for t in 0..60 {
        let r = m.local_steps(&data, 1, RadiusMethod::ClosedForm).unwrap();
        assert!(r.log_likelihood >= last - 1e-12, "round {}: {} < {}", t, r.log_likelihood, last);
        last = r.log_likelihood;
        if t == 0 {
            first_radius = r.radii.iter().cloned().fold(0.0, f64::max);
        }
        if t == 59 {
            assert!(r.radii.iter().all(|&v| v < 1e-6 * first_radius), "radii at convergence: {:?}", r.radii);
        }
    }
}

#[test]
fn bisection_finds_the_closed_form_radius() {
    let mut rng = Rng::new(3);
    for &(d, k) in &[(1usize, 2usize), (2, 3), (5, 4)] {
        let centers: Vec<f64> = (0..k * d).map(|i| 5.0 * ((i * 7919) % 11) as f64 - 20.0).collect();
        let n = 120;
        let x = blobs(&centers, d, n, &mut rng);
        let data = Data::new(&x, k * n, d).unwrap();
        let start: Vec<f64> = centers.iter().map(|c| c + 0.8 * rng.normal()).collect();
        for steps in [1, 3] {
            let mut a = Isotropic::new(k, d, vec![1.0 / k as f64; k], 2.0, start.clone()).unwrap();
            let mut b = a.clone();
            let ra = a.local_steps(&data, steps, RadiusMethod::ClosedForm).unwrap();
            let rb = b.local_steps(&data, steps, RadiusMethod::Bisection { iterations: 80 }).unwrap();
            assert_eq!(ra.maximizers, rb.maximizers);
            for c in 0..k {
                let (x1, x2) = (ra.radii[c], rb.radii[c]);
                assert!((x1 - x2).abs() <= 1e-7 * x1 + 1e-12, "d {} k {} steps {} component {}: closed {} bisection {}", d, k, steps, c, x1, x2);
            }
        }
    }
}

#[test]
fn bisection_radius_is_zero_at_the_maximizer() {
    let x = vec![0.0, 1.0, 2.0];
    let data = Data::new(&x, 3, 1).unwrap();
    assert_eq!(bisection_radius(&data, &[1.0, 1.0, 1.0], &[1.0], &[1.0], 40).unwrap(), 0.0);
}

#[test]
fn bad_client_parameters_are_refused_and_a_failed_round_changes_nothing() {
    assert!(Isotropic::new(2, 1, vec![0.5, 0.5], 0.0, vec![0.0, 1.0]).is_err());
    assert!(Isotropic::new(2, 1, vec![0.5, 0.5], 1.0, vec![0.0, f64::NAN]).is_err());
    assert!(Isotropic::new(2, 1, vec![0.7, 0.5], 1.0, vec![0.0, 1.0]).is_err());
    let mut m = model(2, 1, vec![0.0, 1.0]);
    let x = vec![0.0, f64::INFINITY];
    assert!(m.local_steps(&Data::new(&x, 2, 1).unwrap(), 1, RadiusMethod::ClosedForm).is_err());
    let y = vec![0.0, 1.0];
    assert!(m.local_steps(&Data::new(&y, 1, 2).unwrap(), 1, RadiusMethod::ClosedForm).is_err());
    assert_eq!(m.means, vec![0.0, 1.0]);
    assert!(m.set_means(&[0.0]).is_err());
    assert!(m.set_means(&[0.0, f64::NAN]).is_err());
    assert_eq!(m.means, vec![0.0, 1.0]);
    // a refused variance leaves the known one; an accepted one changes the E-step
    let v = m.variance;
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(m.set_variance(bad).is_err());
        assert_eq!(m.variance, v);
    }
    let z = vec![0.4, 0.6, 0.5];
    let data = Data::new(&z, 3, 1).unwrap();
    let before = m.score_samples(&data).unwrap();
    m.set_variance(4.0 * v).unwrap();
    assert_eq!(m.variance, 4.0 * v);
    assert_ne!(m.score_samples(&data).unwrap(), before);
}

fn random_balls(m: usize, d: usize, clients: u32, rng: &mut Rng) -> (Vec<f64>, Vec<f64>, Vec<u32>) {
    let centers: Vec<f64> = (0..m * d).map(|_| rng.next_f64() * 20.0).collect();
    let radii: Vec<f64> = (0..m).map(|i| if i % 13 == 0 { 0.0 } else { rng.next_f64() * 0.8 }).collect();
    let owners: Vec<u32> = (0..m).map(|_| rng.below(clients as u64) as u32).collect();
    (centers, radii, owners)
}

#[test]
fn the_tree_and_all_pairs_find_the_same_overlaps() {
    let mut rng = Rng::new(4);
    for &(m, d) in &[(1usize, 2usize), (40, 1), (2000, 2), (1500, 3), (400, 6)] {
        let (mut centers, radii, owners) = random_balls(m, d, 25, &mut rng);
        // exact ties: a center repeated, and two balls that touch exactly
        if m > 10 {
            let (a, b) = (centers[..d].to_vec(), centers[d..2 * d].to_vec());
            centers[5 * d..6 * d].copy_from_slice(&a);
            centers[6 * d..7 * d].copy_from_slice(&b);
        }
        let c = Components::new(&centers, &radii, &owners, d).unwrap();
        let all = c.overlaps(Search::AllPairs).unwrap();
        let tree = c.overlaps(Search::KdTree).unwrap();
        assert_eq!(all, tree, "m {} d {}", m, d);
        if m >= 400 {
            assert!(!all.is_empty());
        }
        for o in &all {
            assert!(o.a < o.b && owners[o.a as usize] != owners[o.b as usize]);
        }
        assert_eq!(c.super_clusters(&all).unwrap(), c.super_clusters(&tree).unwrap());
    }
}

#[test]
fn meeting_points_lie_in_both_balls() {
    let mut rng = Rng::new(5);
    let mut v = vec![0.0; 3];
    for _ in 0..2000 {
        let ca: Vec<f64> = (0..3).map(|_| rng.normal()).collect();
        let cb: Vec<f64> = (0..3).map(|_| rng.normal()).collect();
        let dist = sq_distance(&ca, &cb).sqrt();
        let ra = rng.next_f64() * dist * 1.5;
        let rb = (dist - ra).max(0.0) + rng.next_f64() * dist;
        meeting_point(&ca, &cb, ra, rb, dist, &mut v);
        let tol = 1e-12 * (1.0 + dist);
        assert!(sq_distance(&v, &ca).sqrt() <= ra + tol && sq_distance(&v, &cb).sqrt() <= rb + tol);
    }
    // both balls reach the midpoint: the midpoint; a certain ball: its center
    meeting_point(&[0.0], &[2.0], 1.5, 1.5, 2.0, &mut v[..1]);
    assert_eq!(v[0], 1.0);
    meeting_point(&[0.0], &[2.0], 0.0, 2.0, 2.0, &mut v[..1]);
    assert_eq!(v[0], 0.0);
    meeting_point(&[0.0], &[2.0], 1.8, 0.5, 2.0, &mut v[..1]);
    assert!((v[0] - 1.5).abs() < 1e-15);
}

#[test]
fn the_collaborative_update_stays_in_every_ball() {
    let mut rng = Rng::new(6);
    let (centers, radii, owners) = random_balls(600, 2, 10, &mut rng);
    let c = Components::new(&centers, &radii, &owners, 2).unwrap();
    let pairs = c.overlaps(Search::KdTree).unwrap();
    let updated = c.collaborative_update(&pairs).unwrap();
    let mut moved = 0;
    for i in 0..600 {
        let shift = sq_distance(&updated[i * 2..i * 2 + 2], c.center(i)).sqrt();
        assert!(shift <= radii[i] * (1.0 + 1e-12) + 1e-12, "component {} moved {} > radius {}", i, shift, radii[i]);
        if shift > 0.0 {
            moved += 1;
        }
    }
    assert!(moved > 0);
    // no overlaps: nothing moves
    assert_eq!(c.collaborative_update(&[]).unwrap(), centers);
}

#[test]
fn super_clusters_never_hold_two_components_of_one_client() {
    // a chain a1 - b1 - a2 on a line: client 0 owns components 0 and 2
    let centers = vec![0.0, 1.0, 2.0];
    let radii = vec![0.6, 0.6, 0.6];
    let owners = vec![0, 1, 0];
    let c = Components::new(&centers, &radii, &owners, 1).unwrap();
    let pairs = c.overlaps(Search::AllPairs).unwrap();
    assert_eq!(pairs.len(), 2);
    let (labels, k) = c.super_clusters(&pairs).unwrap();
    assert_eq!(k, 2);
    assert_ne!(labels[0], labels[2]);
    // component 1 joins the closer of the two (the first on a tie)
    assert_eq!(labels[1], labels[0]);
    let centers = vec![0.0, 1.05, 2.0];
    let c = Components::new(&centers, &radii, &owners, 1).unwrap();
    let (labels, _) = c.super_clusters(&c.overlaps(Search::AllPairs).unwrap()).unwrap();
    assert_eq!(labels[1], labels[2]);
}

#[test]
fn well_separated_clusters_give_the_true_count() {
    // 10 clusters, 8 clients each holding 4 of them with a small estimation error
    let mut rng = Rng::new(7);
    let d = 3;
    let truth: Vec<f64> = (0..10 * d).map(|i| 10.0 * ((i * 37) % 10) as f64 + (i / d) as f64 * 3.0).collect();
    let (mut centers, mut radii, mut owners, mut true_id) = (vec![], vec![], vec![], vec![]);
    for client in 0..8u32 {
        for t in rng.sample_without_replacement(10, 4).unwrap() {
            for j in 0..d {
                centers.push(truth[t * d + j] + 0.05 * rng.normal());
            }
            radii.push(0.3);
            owners.push(client);
            true_id.push(t);
        }
    }
    let c = Components::new(&centers, &radii, &owners, d).unwrap();
    let (labels, k) = c.super_clusters(&c.overlaps(Search::KdTree).unwrap()).unwrap();
    let held: std::collections::BTreeSet<usize> = true_id.iter().cloned().collect();
    assert_eq!(k, held.len());
    for a in 0..labels.len() {
        for b in 0..labels.len() {
            assert_eq!(labels[a] == labels[b], true_id[a] == true_id[b]);
        }
    }
    let weights: Vec<f64> = (0..labels.len()).map(|i| 1.0 + i as f64).collect();
    let merged = weighted_centers(&centers, d, &labels, k, &weights).unwrap();
    for (i, &l) in labels.iter().enumerate() {
        assert!(sq_distance(&merged[l as usize * d..(l as usize + 1) * d], &truth[true_id[i] * d..(true_id[i] + 1) * d]).sqrt() < 0.2);
    }
}

#[test]
fn weighted_centers_weigh_and_fall_back_to_plain_averages() {
    let centers = vec![0.0, 4.0, 10.0];
    let merged = weighted_centers(&centers, 1, &[0, 0, 1], 2, &[1.0, 3.0, 0.0]).unwrap();
    assert_eq!(merged, vec![3.0, 10.0]);
    assert!(weighted_centers(&centers, 1, &[0, 0, 1], 2, &[1.0, f64::NAN, 0.0]).is_err());
}

#[test]
fn bad_balls_are_refused() {
    assert!(Components::new(&[0.0, f64::NAN], &[1.0, 1.0], &[0, 1], 1).is_err());
    assert!(Components::new(&[0.0, 1.0], &[1.0, -1.0], &[0, 1], 1).is_err());
    assert!(Components::new(&[0.0, 1.0], &[1.0, f64::NAN], &[0, 1], 1).is_err());
    assert!(Components::new(&[0.0, 1.0], &[1.0], &[0, 1], 1).is_err());
    let none: Vec<Overlap> = Components::new(&[], &[], &[], 2).unwrap().overlaps(Search::KdTree).unwrap();
    assert!(none.is_empty());
}

#[test]
fn overlaps_at_extreme_scales_are_exact() {
    for &scale in &[1e-300, 1e-200, 1.0, 1e200, 1e300] {
        // three balls on a line: 0-1 touch (distance 2, radii 1 + 1), 1-2 do not (distance 3, radii 1 + 1)
        let centers = vec![0.0, 2.0 * scale, 5.0 * scale];
        let radii = vec![scale, scale, scale];
        let owners = vec![0, 1, 2];
        let c = Components::new(&centers, &radii, &owners, 1).unwrap();
        let found: Vec<(u32, u32)> = c.overlaps(Search::AllPairs).unwrap().iter().map(|o| (o.a, o.b)).collect();
        assert_eq!(found, vec![(0, 1)], "scale {}", scale);
        assert_eq!(c.overlaps(Search::KdTree).unwrap(), c.overlaps(Search::AllPairs).unwrap());
    }
    // differences that overflow never touch
    let c = Components::new(&[-1.5e308, 1.5e308], &[1e307, 1e307], &[0, 1], 1).unwrap();
    assert!(c.overlaps(Search::AllPairs).unwrap().is_empty());
}

#[test]
fn huge_weights_do_not_overflow_the_merged_centers() {
    let merged = weighted_centers(&[0.0, 100.0, 0.1, 100.1], 2, &[0, 0], 1, &[1.5e308, 1.5e308]).unwrap();
    assert_eq!(merged, vec![0.05, 100.05]);
}

#[test]
fn radii_are_capped_at_twice_the_median_of_the_positive_ones() {
    assert_eq!(capped_radii(&[1.0, 2.0, 3.0, 100.0]).unwrap(), vec![1.0, 2.0, 3.0, 5.0]);
    // zeros (converged components) do not pull the median down
    assert_eq!(capped_radii(&[0.0, 0.0, 0.0, 1.0, 1.0, 9.0]).unwrap(), vec![0.0, 0.0, 0.0, 1.0, 1.0, 2.0]);
    assert_eq!(capped_radii(&[0.0, 0.0]).unwrap(), vec![0.0, 0.0]);
    assert!(capped_radii(&[]).unwrap().is_empty());
}

#[test]
fn one_huge_radius_does_not_reach_every_ball_in_a_round() {
    // clients 0 and 1 hold a cluster at 0, clients 2 and 3 one at 10 (radius
    // 0.5 each); client 4 reports one component halfway with a radius of 100
    let centers = vec![0.0, 0.1, 10.0, 10.1, 5.0];
    let radii = vec![0.5, 0.5, 0.5, 0.5, 100.0];
    let owners = vec![0, 1, 2, 3, 4];
    // as reported, the big ball meets all four
    let raw = Components::new(&centers, &radii, &owners, 1).unwrap();
    assert_eq!(raw.overlaps(Search::AllPairs).unwrap().len(), 4 + 2);
    // capped (at 2 x 0.5), it meets none and stays put
    for search in [Search::KdTree, Search::AllPairs] {
        let (updated, pairs) = round_update(&centers, &radii, &owners, 1, search).unwrap();
        assert_eq!(pairs, 2);
        assert_eq!(updated[4], 5.0);
        // the others move halfway to the meeting point with their partner
        for (u, want) in updated[..4].iter().zip([0.025, 0.075, 10.025, 10.075]) {
            assert!((u - want).abs() < 1e-12, "{} vs {}", u, want);
        }
    }
}

#[test]
fn components_without_rows_are_uninformative() {
    // client 0: counts 10 and 0; client 1: 1e-12 of its rows; client 2: all zero (then all count)
    let keep = informative(&[10.0, 0.0, 1e-11, 10.0, 0.0, 0.0], &[0, 0, 1, 1, 2, 2]).unwrap();
    assert_eq!(keep, vec![true, false, false, true, false, false]);
    // fewer than two rows: a row, not a cluster
    assert_eq!(informative(&[10.0, 1.5, 2.0], &[0, 0, 0]).unwrap(), vec![true, false, true]);
    assert_eq!(informative(&[0.0, 0.0], &[0, 1]).unwrap(), vec![true, true]);
}

#[test]
fn an_empty_component_bridges_nothing_and_joins_the_nearest_cluster() {
    // clients 0 and 1 hold a cluster at 0, clients 2 and 3 one at 10; client 4
    // one at 30 and an empty component halfway between the first two, whose
    // radius would reach both sides
    let centers = vec![0.0, 0.1, 10.0, 10.1, 30.0, 5.0];
    let radii = vec![2.0, 2.0, 2.0, 2.0, 5.0, 5.0];
    let owners = vec![0, 1, 2, 3, 4, 4];
    let weights = vec![50.0, 50.0, 50.0, 50.0, 50.0, 0.0];
    // with it, 0 and 10 are one cluster, capped radii or not
    for r in [radii.clone(), capped_radii(&radii).unwrap()] {
        let c = Components::new(&centers, &r, &owners, 1).unwrap();
        assert_eq!(c.super_clusters(&c.overlaps(Search::AllPairs).unwrap()).unwrap().1, 2);
    }
    let merged = final_merge(&centers, &radii, &owners, &weights, 1, Search::KdTree, None).unwrap();
    assert_eq!(merged.k, 3);
    assert_eq!(merged.labels, vec![0, 0, 1, 1, 2, 0]);
    assert_eq!(merged.centers, vec![0.05, 10.05, 30.0]);
    assert_eq!(merged.uncounted, 1);
    // a share below 1e-9 of the client's rows is as good as none, and so is one row
    let tiny = vec![50.0, 50.0, 50.0, 50.0, 50.0, 1e-10];
    assert_eq!(final_merge(&centers, &radii, &owners, &tiny, 1, Search::AllPairs, None).unwrap(), merged);
    let one_row = vec![50.0, 50.0, 50.0, 50.0, 50.0, 1.9];
    assert_eq!(final_merge(&centers, &radii, &owners, &one_row, 1, Search::AllPairs, None).unwrap(), merged);
}

#[test]
fn the_smallest_separation_is_the_closest_pair_of_one_client() {
    // client 0 at 0, 4 and 10; client 1 at 1 and 2.5; client 2 alone at 3
    let centers = [0.0, 4.0, 10.0, 1.0, 2.5, 3.0];
    let owners = [0, 0, 0, 1, 1, 2];
    assert_eq!(smallest_separation(&centers, &owners, 1).unwrap(), 1.5);
    assert_eq!(smallest_separation(&[0.0, 1.0], &[0, 1], 1).unwrap(), f64::INFINITY);
    // no overflow in the squares
    let far = smallest_separation(&[0.0, 0.0, 3e200, 4e200], &[0, 0], 2).unwrap();
    assert!((far / 5e200 - 1.0).abs() < 1e-15);
}

#[test]
fn the_separation_step_joins_closest_first_never_within_a_client() {
    // four super-clusters on a line: A at 0 (clients 0, 1), B at 0.6 (client 2),
    // C at 1.0 (client 0), D at 5 (client 3); delta 1: B and C are the closest
    // pair (0.4), and once joined they hold client 0, as A does
    let centers = [0.0, 0.6, 1.0, 5.0];
    // components: 0, 1 -> A; 2 -> B; 3 -> C; 4 -> D
    let labels = [0, 0, 1, 2, 3];
    let owners = [0, 1, 2, 0, 3];
    let weights = [1.0, 1.0, 2.0, 1.0, 1.0];
    for search in [Search::KdTree, Search::AllPairs] {
        let (out, joins) = join_closer_than(&centers, 1, &labels, 4, &owners, &weights, 1.0, search).unwrap();
        assert_eq!(joins, 1);
        assert_eq!(out, vec![0, 0, 1, 1, 2]);
    }
    // at exactly delta nothing joins: closer than, not as close as
    let (out, joins) = join_closer_than(&[0.0, 1.0], 1, &[0, 1], 2, &[0, 1], &[1.0, 1.0], 1.0, Search::AllPairs).unwrap();
    assert_eq!((out, joins), (vec![0, 1], 0));
}

#[test]
fn a_join_moves_the_center_and_inherits_the_candidates_of_both() {
    // 0, 1 and 1.95 with weights 1, 10, 1 and delta 1.1: 0 and 1.95 are no
    // pair, 1 and 1.95 join first (0.95) at 1.086..., which is within 1.1 of 0,
    // a candidate it inherits from 1
    let centers = [0.0, 1.0, 1.95];
    let weights = [1.0, 10.0, 1.0];
    for search in [Search::KdTree, Search::AllPairs] {
        let (out, joins) = join_closer_than(&centers, 1, &[0, 1, 2], 3, &[0, 1, 2], &weights, 1.1, search).unwrap();
        assert_eq!((out, joins), (vec![0, 0, 0], 2));
    }
    // with delta 1.05 the joined center (1.086...) is too far from 0
    let (out, joins) = join_closer_than(&centers, 1, &[0, 1, 2], 3, &[0, 1, 2], &weights, 1.05, Search::KdTree).unwrap();
    assert_eq!((out, joins), (vec![0, 1, 1], 1));
}

#[test]
fn the_final_merge_with_separation_joins_duplicates_closer_than_a_client_tells_its_clusters_apart() {
    // clients 0 and 1 hold clusters at 0 and 10 (10 apart: the separation);
    // client 2 saw the first at 3, client 3 the second at 7.9: the radius
    // merge (radius 1) keeps them apart, the separation step joins each to its
    // cluster, closest pair first (7.9 to 10.1, then 3 to 0.1), and the two
    // clusters, which clients 0 and 1 tell apart, stay two
    let centers = [0.0, 10.0, 0.2, 10.2, 3.0, 7.9];
    let owners = [0, 0, 1, 1, 2, 3];
    let radii = [1.0; 6];
    let weights = [10.0, 10.0, 10.0, 10.0, 20.0, 20.0];
    let plain = final_merge(&centers, &radii, &owners, &weights, 1, Search::KdTree, None).unwrap();
    assert_eq!((plain.k, plain.separation_joins, plain.separation), (4, 0, None));
    // variance 121: clusters of reach 11, more than the separation
    for search in [Search::KdTree, Search::AllPairs] {
        let m = final_merge(&centers, &radii, &owners, &weights, 1, search, Some(121.0)).unwrap();
        assert_eq!((m.k, m.separation_joins, m.separation, m.uncounted), (2, 2, Some(10.0), 0));
        assert_eq!(m.labels, vec![0, 1, 0, 1, 0, 1]);
        assert!((m.centers[0] - 1.55).abs() < 1e-12 && (m.centers[1] - 9.0).abs() < 1e-12, "{:?}", m.centers);
    }
    // variance 6.25: a cluster's rows lie 2.5 from its center on average, and the
    // center at 3 is farther than that from the one at 0.1; the one at 7.9 is not
    let m = final_merge(&centers, &radii, &owners, &weights, 1, Search::KdTree, Some(6.25)).unwrap();
    assert_eq!((m.k, m.separation_joins, m.separation), (3, 1, Some(2.5)));
    assert!(final_merge(&centers, &radii, &owners, &weights, 1, Search::KdTree, Some(-1.0)).is_err());
    // a client whose own two clusters sit 2 apart lowers the separation: nothing joins
    let mut close = centers.to_vec();
    close.extend([20.0, 22.0]);
    let owners = [0, 0, 1, 1, 2, 3, 4, 4];
    let m = final_merge(&close, &[1.0; 8], &owners, &[10.0; 8], 1, Search::KdTree, Some(121.0)).unwrap();
    assert_eq!((m.k, m.separation_joins, m.separation), (6, 0, Some(2.0)));
    // no client with two components: no separation, nothing joins
    let m = final_merge(&[0.0, 1.0], &[0.1, 0.1], &[0, 1], &[5.0, 5.0], 1, Search::KdTree, Some(121.0)).unwrap();
    assert_eq!((m.k, m.separation_joins, m.separation), (2, 0, None));
}

#[test]
fn the_separation_step_is_the_same_through_the_tree_and_never_joins_two_components_of_one_client() {
    let mut rng = Rng::new(11);
    for &(m, d, clients) in &[(300usize, 2usize, 30u32), (600, 3, 60), (200, 5, 40)] {
        let (centers, radii, owners) = random_balls(m, d, clients, &mut rng);
        let weights: Vec<f64> = (0..m).map(|_| 2.0 + rng.next_f64() * 50.0).collect();
        let tree = final_merge(&centers, &radii, &owners, &weights, d, Search::KdTree, Some(4.0)).unwrap();
        let all = final_merge(&centers, &radii, &owners, &weights, d, Search::AllPairs, Some(4.0)).unwrap();
        assert_eq!(tree, all, "m {} d {}", m, d);
        assert!(tree.separation_joins > 0, "m {} d {}", m, d);
        let plain = final_merge(&centers, &radii, &owners, &weights, d, Search::KdTree, None).unwrap();
        assert_eq!(tree.k + tree.separation_joins, plain.k);
        // joins only merge the paper's super-clusters, and never two components of one client
        for a in 0..m {
            for b in a + 1..m {
                if plain.labels[a] == plain.labels[b] {
                    assert_eq!(tree.labels[a], tree.labels[b]);
                }
                if owners[a] == owners[b] {
                    assert_ne!(tree.labels[a], tree.labels[b]);
                }
            }
        }
    }
}
