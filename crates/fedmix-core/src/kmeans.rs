//! k-means with scikit-learn 1.2 semantics: k-means++ seeding with 2 + ln(k) local
//! trials, Lloyd iterations that stop on unchanged labels or on a squared center
//! shift below tol * mean feature variance, empty clusters re-seeded with the
//! points farthest from their centers, best of n_init runs by inertia.

use crate::alloc;
use crate::data::Data;
use crate::error::{Error, Result};
use crate::kernels;
use crate::rng::Rng;

const BLOCK: usize = 256;

#[derive(Clone, Debug, PartialEq)]
pub enum KMeansInit {
    PlusPlus,
    /// k distinct rows chosen uniformly at random
    Random,
    /// k x d row-major starting centers; forces a single run
    Given(Vec<f64>),
}

#[derive(Clone, Debug)]
pub struct KMeansOptions {
    pub n_clusters: usize,
    pub init: KMeansInit,
    pub n_init: usize,
    pub max_iter: usize,
    pub tol: f64,
}

impl Default for KMeansOptions {
    fn default() -> Self {
        KMeansOptions { n_clusters: 8, init: KMeansInit::PlusPlus, n_init: 10, max_iter: 300, tol: 1e-4 }
    }
}

#[derive(Clone, Debug)]
pub struct KMeansResult {
    /// k x d row-major
    pub centers: Vec<f64>,
    pub labels: Vec<u32>,
    pub inertia: f64,
    pub n_iter: usize,
}

/// Nearest center (first on ties) and squared distance for every row; true
/// when a row's new label differs from the one `labels` held (Lloyd's stop).
pub fn assign(x: &Data, centers: &[f64], k: usize, labels: &mut [u32], dist: &mut [f64]) -> Result<bool> {
    let (n, d) = (x.n, x.d);
    let mut changed = false;
    let mut tmp = alloc::zeros(alloc::cells(k, BLOCK, 8)?)?;
    let mut i0 = 0;
    while i0 < n {
        let len = BLOCK.min(n - i0);
        kernels::sq_dist_many(x.cols_from(i0), d, len, k, centers, None, None, &mut tmp, BLOCK);
        for i in 0..len {
            let mut best = 0;
            let mut bd = tmp[i];
            for c in 1..k {
                let v = tmp[c * BLOCK + i];
                if v < bd {
                    bd = v;
                    best = c;
                }
            }
            changed |= labels[i0 + i] != best as u32;
            labels[i0 + i] = best as u32;
            dist[i0 + i] = bd;
        }
        i0 += len;
    }
    Ok(changed)
}

fn row(x: &Data, i: usize) -> Vec<f64> {
    (0..x.d).map(|j| x.get(i, j)).collect()
}

fn dist_to_row(x: &Data, r: &[f64], out: &mut [f64]) {
    kernels::sq_dist(x.cols_from(0), x.d, x.n, r, None, None, out);
}

/// k-means++ seeding (Arthur & Vassilvitskii) with greedy local trials, as
/// scikit-learn's kmeans_plusplus. Returns k x d centers and their row indices.
pub fn kmeans_plusplus(x: &Data, k: usize, rng: &mut Rng) -> Result<(Vec<f64>, Vec<usize>)> {
    let (n, d) = (x.n, x.d);
    let trials = 2 + (k as f64).ln() as usize;
    let mut centers = alloc::with_capacity(alloc::cells(k, d, 8)?)?;
    let mut indices = alloc::with_capacity(k)?;
    let first = rng.below(n as u64) as usize;
    centers.extend(row(x, first));
    indices.push(first);
    let mut closest = alloc::zeros(n)?;
    dist_to_row(x, &centers[0..d], &mut closest);
    let mut pot: f64 = closest.iter().sum();
    let mut cumsum = alloc::zeros(n)?;
    let mut cand_dist = alloc::with_capacity(trials)?;
    for _ in 0..trials {
        cand_dist.push(alloc::zeros(n)?);
    }
    for _ in 1..k {
        let mut acc = 0.0;
        for i in 0..n {
            acc += closest[i];
            cumsum[i] = acc;
        }
        let mut best_t = 0;
        let mut best_pot = f64::INFINITY;
        let mut cand_ids = vec![0usize; trials];
        for t in 0..trials {
            let v = rng.next_f64() * pot;
            // first index whose cumulative sum reaches v (numpy searchsorted, side left)
            let id = cumsum.partition_point(|&c| c < v).min(n - 1);
            cand_ids[t] = id;
            dist_to_row(x, &row(x, id), &mut cand_dist[t]);
            let mut p = 0.0;
            for i in 0..n {
                let m = if cand_dist[t][i] < closest[i] { cand_dist[t][i] } else { closest[i] };
                cand_dist[t][i] = m;
                p += m;
            }
            if p < best_pot {
                best_pot = p;
                best_t = t;
            }
        }
        pot = best_pot;
        std::mem::swap(&mut closest, &mut cand_dist[best_t]);
        centers.extend(row(x, cand_ids[best_t]));
        indices.push(cand_ids[best_t]);
    }
    Ok((centers, indices))
}

/// Each cluster's row count and sum of rows (k x d, row-major) under `labels`,
/// rows added in order: the update half of a Lloyd iteration (lloyd, and each
/// shard of k-means over row shards).
pub fn accumulate(x: &Data, labels: &[u32], sums: &mut [f64], counts: &mut [usize]) {
    let d = x.d;
    sums.iter_mut().for_each(|v| *v = 0.0);
    counts.iter_mut().for_each(|v| *v = 0);
    for &l in labels {
        counts[l as usize] += 1;
    }
    for j in 0..d {
        let col = x.col(j);
        for (i, &l) in labels.iter().enumerate() {
            sums[l as usize * d + j] += col[i];
        }
    }
}

/// Lloyd iterations from `centers`, scikit-learn's stopping rules.
pub fn lloyd(x: &Data, mut centers: Vec<f64>, k: usize, max_iter: usize, tol_abs: f64) -> Result<KMeansResult> {
    let (n, d) = (x.n, x.d);
    // no row has label u32::MAX: the first assignment always counts as a change
    let mut labels = alloc::filled(u32::MAX, n)?;
    let mut dist = alloc::zeros(n)?;
    let mut sums = alloc::zeros(centers.len())?;
    let mut counts = alloc::filled(0usize, k)?;
    let mut n_iter = 0;
    for it in 0..max_iter {
        let changed = assign(x, &centers, k, &mut labels, &mut dist)?;
        accumulate(x, &labels, &mut sums, &mut counts);
        let empty: Vec<usize> = (0..k).filter(|&c| counts[c] == 0).collect();
        if !empty.is_empty() {
            // farthest points from their own centers seed the empty clusters
            let mut order = alloc::collect(0..n)?;
            order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
            for (idx, &c_new) in empty.iter().enumerate() {
                let far = order[idx];
                let old = labels[far] as usize;
                for j in 0..d {
                    let v = x.get(far, j);
                    sums[old * d + j] -= v;
                    sums[c_new * d + j] = v;
                }
                counts[old] -= 1;
                counts[c_new] = 1;
            }
        }
        let mut shift = 0.0;
        for c in 0..k {
            if counts[c] == 0 {
                continue; // a cluster drained by re-seeding keeps its center
            }
            for j in 0..d {
                let v = sums[c * d + j] / counts[c] as f64;
                let delta = v - centers[c * d + j];
                shift += delta * delta;
                centers[c * d + j] = v;
            }
        }
        n_iter = it + 1;
        if !changed || shift <= tol_abs {
            break;
        }
    }
    // labels and inertia consistent with the final centers
    assign(x, &centers, k, &mut labels, &mut dist)?;
    let inertia = dist.iter().sum();
    Ok(KMeansResult { centers, labels, inertia, n_iter })
}

/// scikit-learn's data-dependent tolerance: tol times the mean feature variance.
pub fn absolute_tolerance(x: &Data, tol: f64) -> f64 {
    if tol == 0.0 {
        return 0.0;
    }
    x.column_variances().iter().sum::<f64>() / x.d as f64 * tol
}

pub fn validate_options(opts: &KMeansOptions, d: usize) -> Result<()> {
    if opts.n_clusters < 1 {
        return Err(Error::param(format!("nClusters must be at least 1, got {}", opts.n_clusters)));
    }
    if opts.n_init < 1 {
        return Err(Error::param(format!("nInit must be at least 1, got {}", opts.n_init)));
    }
    if opts.max_iter < 1 {
        return Err(Error::param(format!("maxIter must be at least 1, got {}", opts.max_iter)));
    }
    if !(opts.tol >= 0.0) || !opts.tol.is_finite() {
        return Err(Error::param(format!("tol must be a finite number >= 0, got {}", crate::error::display(opts.tol))));
    }
    if let KMeansInit::Given(c) = &opts.init {
        if c.len() != opts.n_clusters * d {
            return Err(Error::param(format!(
                "init centers have {} values; expected nClusters x nFeatures = {} x {} = {}",
                c.len(),
                opts.n_clusters,
                d,
                opts.n_clusters * d
            )));
        }
        if c.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("init centers contain NaN or infinity"));
        }
    }
    Ok(())
}

/// Checks shared by every clustering of `x` into `k` groups.
pub fn require_clusterable(x: &Data, k: usize, what: &str) -> Result<()> {
    x.require_finite("X")?;
    if x.n < k {
        return Err(Error::data(format!("X has {} rows but {} = {}; pass at least {} rows or lower {}", x.n, what, k, k, what)));
    }
    let distinct = x.distinct_rows_up_to(k);
    if distinct < k {
        return Err(Error::data(format!(
            "X has only {} distinct row(s), fewer than {} = {}; lower {} to at most {}",
            distinct, what, k, what, distinct
        )));
    }
    Ok(())
}

/// A run's starting centers (k x d, row-major), drawn from the run's own `rng`.
fn start_centers(x: &Data, opts: &KMeansOptions, rng: &mut Rng) -> Result<Vec<f64>> {
    let k = opts.n_clusters;
    Ok(match &opts.init {
        KMeansInit::PlusPlus => kmeans_plusplus(x, k, rng)?.0,
        KMeansInit::Random => {
            let rows = rng.sample_without_replacement(x.n, k)?;
            alloc::collect((0..k * x.d).map(|i| x.get(rows[i / x.d], i % x.d)))?
        }
        KMeansInit::Given(c) => alloc::copy(c)?,
    })
}

/// Run `run`'s starting centers as fit draws them from `rng` (every run forks
/// it in turn), after fit's checks: for Lloyd iterations driven elsewhere
/// (k-means over row shards), which then start where fit would.
pub fn run_start(x: &Data, opts: &KMeansOptions, run: usize, rng: &mut Rng) -> Result<Vec<f64>> {
    validate_options(opts, x.d)?;
    require_clusterable(x, opts.n_clusters, "nClusters")?;
    for _ in 0..run {
        rng.fork();
    }
    start_centers(x, opts, &mut rng.fork())
}

pub fn fit(x: &Data, opts: &KMeansOptions, rng: &mut Rng) -> Result<KMeansResult> {
    validate_options(opts, x.d)?;
    require_clusterable(x, opts.n_clusters, "nClusters")?;
    let k = opts.n_clusters;
    let tol_abs = absolute_tolerance(x, opts.tol);
    let runs = if let KMeansInit::Given(_) = opts.init { 1 } else { opts.n_init };
    let mut best: Option<KMeansResult> = None;
    for _ in 0..runs {
        let centers = start_centers(x, opts, &mut rng.fork())?;
        let r = lloyd(x, centers, k, opts.max_iter, tol_abs)?;
        if best.as_ref().map_or(true, |b| r.inertia < b.inertia) {
            best = Some(r);
        }
    }
    Ok(best.expect("at least one run"))
}

/// The server step of k-FED (Dennis, Li and Smith, "Heterogeneity for the Win:
/// One-Shot Federated Clustering", ICML 2021) on the local centers the devices
/// sent (row-major, `owners[z]` the rows of device z): the centers of device
/// `first` seed the k groups; the others are added one at a time, each the local
/// center farthest from all seeds so far (farthest-point traversal, which finds
/// the clusters no seed device saw); then every local center joins its nearest
/// seed (first on ties; a seed always joins itself). Returns each local center's
/// group. Errors when device `first` sent more than k centers, or the centers
/// hold fewer than k distinct points.
pub fn kfed_groups(points: &[f64], d: usize, owners: &[std::ops::Range<usize>], k: usize, first: usize) -> Result<Vec<usize>> {
    let m = points.len() / d;
    let mut seeds: Vec<usize> = owners[first].clone().collect();
    if seeds.len() > k {
        return Err(Error::param(format!("the seed device sent {} local centers, more than the {} clusters asked for", seeds.len(), k)));
    }
    let sq = |a: usize, b: usize| -> f64 { (0..d).map(|j| (points[a * d + j] - points[b * d + j]).powi(2)).sum() };
    let mut near = alloc::collect((0..m).map(|p| seeds.iter().map(|&s| sq(p, s)).fold(f64::INFINITY, f64::min)))?;
    while seeds.len() < k {
        let mut best = 0;
        for p in 1..m {
            if near[p] > near[best] {
                best = p;
            }
        }
        if m == 0 || !(near[best] > 0.0) {
            return Err(Error::data(format!(
                "the clients' local clusters have {} distinct centers, fewer than the {} clusters asked for; lower nComponents",
                seeds.len(),
                k
            )));
        }
        seeds.push(best);
        for p in 0..m {
            near[p] = near[p].min(sq(p, best));
        }
    }
    let mut group = alloc::collect((0..m).map(|p| {
        let mut g = 0;
        for s in 1..k {
            if sq(p, seeds[s]) < sq(p, seeds[g]) {
                g = s;
            }
        }
        g
    }))?;
    for (g, &s) in seeds.iter().enumerate() {
        group[s] = g;
    }
    Ok(group)
}

/// Count-weighted k-means on the local centers the devices sent (row-major,
/// `weights[p]` the rows center p stands for), as a k-FED server may group them
/// instead of seeding from one device (kfed_groups): k-means++ seeding drawn in
/// proportion to weight x squared distance, Lloyd iterations on the weighted
/// means until no center changes group (at most 300), an emptied group
/// re-seeded at the point of largest weighted distance. The best of `starts`
/// runs by cost (sum of weight x squared distance to the group's mean) is
/// kept. Returns each point's group and the cost. Errors when the points hold
/// fewer than k distinct positions with weight.
pub fn weighted_groups(points: &[f64], weights: &[f64], d: usize, k: usize, starts: usize, rng: &mut Rng) -> Result<(Vec<usize>, f64)> {
    let m = weights.len();
    let sq = |p: usize, c: &[f64]| -> f64 { (0..d).map(|j| (points[p * d + j] - c[j]).powi(2)).sum() };
    let mut best: Option<(Vec<usize>, f64)> = None;
    for _ in 0..starts.max(1) {
        // seeding: the first in proportion to weight, then weight x distance^2
        let mut centers = alloc::with_capacity(alloc::cells(k, d, 8)?)?;
        let mut near = alloc::collect((0..m).map(|_| 1.0))?;
        for c in 0..k {
            let total: f64 = (0..m).map(|p| weights[p] * near[p]).sum();
            if !(total > 0.0) {
                return Err(Error::data(format!(
                    "the clients' local clusters have {} distinct centers, fewer than the {} clusters asked for; lower nComponents",
                    c, k
                )));
            }
            let v = rng.next_f64() * total;
            let mut acc = 0.0;
            let mut pick = m - 1;
            for p in 0..m {
                acc += weights[p] * near[p];
                if acc > v && weights[p] * near[p] > 0.0 {
                    pick = p;
                    break;
                }
            }
            centers.extend_from_slice(&points[pick * d..(pick + 1) * d]);
            for p in 0..m {
                near[p] = near[p].min(sq(p, &centers[c * d..(c + 1) * d]));
            }
        }
        let mut group = alloc::collect((0..m).map(|_| usize::MAX))?;
        for _ in 0..300 {
            let mut changed = false;
            for p in 0..m {
                let mut g = 0;
                let mut dg = f64::INFINITY;
                for c in 0..k {
                    let dc = sq(p, &centers[c * d..(c + 1) * d]);
                    if dc < dg {
                        dg = dc;
                        g = c;
                    }
                }
                near[p] = dg;
                if group[p] != g {
                    group[p] = g;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            let mut w = alloc::zeros(k)?;
            let mut sum = alloc::zeros(alloc::cells(k, d, 8)?)?;
            for p in 0..m {
                w[group[p]] += weights[p];
                for j in 0..d {
                    sum[group[p] * d + j] += weights[p] * points[p * d + j];
                }
            }
            for c in 0..k {
                if w[c] > 0.0 {
                    for j in 0..d {
                        centers[c * d + j] = sum[c * d + j] / w[c];
                    }
                } else {
                    // an emptied group takes the point farthest (by weight) from its own
                    let far = (0..m).fold(0, |a, p| if weights[p] * near[p] > weights[a] * near[a] { p } else { a });
                    centers[c * d..(c + 1) * d].copy_from_slice(&points[far * d..(far + 1) * d]);
                    near[far] = 0.0;
                    group[far] = c;
                }
            }
        }
        let cost: f64 = (0..m).map(|p| weights[p] * near[p]).sum();
        if best.as_ref().map_or(true, |b| cost < b.1) {
            best = Some((group, cost));
        }
    }
    best.ok_or_else(|| Error::param("k-means needs at least one start"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs(rng: &mut Rng, centers: &[(f64, f64)], per: usize) -> Vec<f64> {
        let n = centers.len() * per;
        let mut v = vec![0.0; 2 * n];
        for (c, &(a, b)) in centers.iter().enumerate() {
            for i in 0..per {
                v[c * per + i] = a + 0.3 * rng.normal();
                v[n + c * per + i] = b + 0.3 * rng.normal();
            }
        }
        v
    }

    #[test]
    fn finds_separated_blobs() {
        let mut rng = Rng::new(1);
        let v = blobs(&mut rng, &[(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)], 50);
        let x = Data::new(&v, 150, 2).unwrap();
        let r = fit(&x, &KMeansOptions { n_clusters: 3, ..Default::default() }, &mut rng).unwrap();
        for c in 0..3 {
            let l = r.labels[c * 50];
            assert!(r.labels[c * 50..(c + 1) * 50].iter().all(|&m| m == l));
        }
        assert!(r.inertia < 150.0 * 2.0 * 0.09 * 1.5);
    }

    #[test]
    fn refuses_too_few_distinct_rows() {
        let v = vec![1.0; 20];
        let x = Data::new(&v, 10, 2).unwrap();
        let e = fit(&x, &KMeansOptions { n_clusters: 2, ..Default::default() }, &mut Rng::new(0)).unwrap_err();
        assert!(e.message.contains("distinct"), "{}", e.message);
    }

    #[test]
    fn empty_cluster_is_reseeded() {
        // two far clusters, three centers of which one starts far from any point
        let v = vec![0.0, 0.1, 0.2, 10.0, 10.1, 10.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let x = Data::new(&v, 6, 2).unwrap();
        let r = lloyd(&x, vec![0.1, 0.0, 10.1, 0.0, 100.0, 100.0], 3, 300, 0.0).unwrap();
        let mut counts = [0; 3];
        for &l in &r.labels {
            counts[l as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0), "{:?}", counts);
    }

    #[test]
    fn kfed_groups_seed_from_one_device_and_add_the_farthest() {
        // device 0 saw clusters near 0 and 10; device 1 near 10 and 20; device 2 near 20 and 30
        let pts = [0.0, 10.0, 10.5, 20.0, 19.5, 30.0];
        let owners = [0..2, 2..4, 4..6];
        let g = kfed_groups(&pts, 1, &owners, 4, 0).unwrap();
        // seeds 0 and 10 (device 0), then 30 (farthest from them), then 20 (10 away, 19.5 only 9.5)
        assert_eq!(g, vec![0, 1, 1, 3, 3, 2]);
        // too many seeds, too few distinct centers
        assert!(kfed_groups(&pts, 1, &owners, 1, 0).is_err());
        let same = [1.0, 1.0, 1.0];
        assert!(kfed_groups(&same, 1, &[0..1, 1..3], 2, 0).unwrap_err().message.contains("distinct"));
    }
}
