//! The FedGEM server's computations over the balls the clients report: which
//! overlap, the collaborative update, and the merge into super-clusters.
//!
//! Components are the rows of `centers` (m x d, row-major) with `radii` and the
//! client that owns each (`owners`). Two components overlap when they belong to
//! different clients and ||c_a - c_b|| <= r_a + r_b (compared squared). The
//! overlaps are found through a k-d tree (each component asks for the centers
//! within r_a + max r) or, as the reference, by testing all pairs; both test
//! every candidate with the same arithmetic, so they give identical pairs.

use crate::alloc;
use crate::error::{show, Error, Result};
use crate::kdtree::{sq_distance, KdTree};

/// The balls of one round, validated.
pub struct Components<'a> {
    pub centers: &'a [f64],
    pub radii: &'a [f64],
    pub owners: &'a [u32],
    pub d: usize,
}

/// Two overlapping components (a < b) and their squared distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overlap {
    pub a: u32,
    pub b: u32,
    pub sq_dist: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    AllPairs,
    KdTree,
}

impl<'a> Components<'a> {
    pub fn new(centers: &'a [f64], radii: &'a [f64], owners: &'a [u32], d: usize) -> Result<Self> {
        if d < 1 {
            return Err(Error::param("centers need at least one feature"));
        }
        let m = radii.len();
        if centers.len() != m * d || owners.len() != m {
            return Err(Error::param(format!(
                "{} radii need {} center values ({} x {}) and {} owners; got {} and {}",
                m,
                m * d,
                m,
                d,
                m,
                centers.len(),
                owners.len()
            )));
        }
        if let Some(i) = centers.iter().position(|v| !v.is_finite()) {
            return Err(Error::data(format!("center {} holds {}; centers must be finite", i / d, show(centers[i]))));
        }
        if let Some(i) = radii.iter().position(|r| !(*r >= 0.0) || !r.is_finite()) {
            return Err(Error::data(format!("radius {} is {}; radii must be finite and non-negative", i, show(radii[i]))));
        }
        Ok(Components { centers, radii, owners, d })
    }

    pub fn len(&self) -> usize {
        self.radii.len()
    }

    pub fn is_empty(&self) -> bool {
        self.radii.is_empty()
    }

    pub fn center(&self, i: usize) -> &[f64] {
        &self.centers[i * self.d..(i + 1) * self.d]
    }

    /// The pair (a, b), a < b, if it overlaps.
    fn test(&self, a: usize, b: usize) -> Option<Overlap> {
        if self.owners[a] == self.owners[b] {
            return None;
        }
        let reach = self.radii[a] + self.radii[b];
        let (ca, cb) = (self.center(a), self.center(b));
        let sq = sq_distance(ca, cb);
        let rr = reach * reach;
        let touch = if sq > TINY_SQUARE && sq.is_finite() && rr > TINY_SQUARE && rr.is_finite() {
            sq <= rr
        } else {
            touching_scaled(ca, cb, reach)
        };
        if touch {
            Some(Overlap { a: a as u32, b: b as u32, sq_dist: sq })
        } else {
            None
        }
    }

    /// Every overlapping pair, ascending by (a, b); an error past MAX_OVERLAPS
    /// pairs (radii that let nearly everything touch), before memory runs out.
    pub fn overlaps(&self, search: Search) -> Result<Vec<Overlap>> {
        let m = self.len();
        let mut out = Vec::new();
        let too_many = || {
            Error::data(format!(
                "more than {} overlapping pairs among {} components: the radii let nearly every ball touch every other; lower phi or check the clients' radii",
                MAX_OVERLAPS, m
            ))
        };
        match search {
            Search::AllPairs => {
                for a in 0..m {
                    for b in a + 1..m {
                        if let Some(o) = self.test(a, b) {
                            alloc::push(&mut out, o)?;
                        }
                    }
                    if out.len() > MAX_OVERLAPS {
                        return Err(too_many());
                    }
                }
            }
            Search::KdTree => {
                // the tree keeps each node's largest radius: one large ball slows only the queries near it
                let tree = KdTree::with_radii(self.centers, self.radii, self.d)?;
                for a in 0..m {
                    let start = out.len();
                    let mut failed = Ok(());
                    tree.candidates_within(self.center(a), self.radii[a], |b| {
                        if b > a && failed.is_ok() {
                            if let Some(o) = self.test(a, b) {
                                failed = alloc::push(&mut out, o);
                            }
                        }
                    });
                    failed?;
                    out[start..].sort_unstable_by_key(|o| o.b);
                    if out.len() > MAX_OVERLAPS {
                        return Err(too_many());
                    }
                }
            }
        }
        Ok(out)
    }

    /// The collaborative step: every component moves to the average of its own
    /// center and the meeting points of its overlaps (`meeting_point`). Each of
    /// those points lies in the component's ball, and so does their average (a
    /// ball is convex): the client's next iterate stays in its uncertainty set.
    pub fn collaborative_update(&self, pairs: &[Overlap]) -> Result<Vec<f64>> {
        let d = self.d;
        let mut sums = alloc::copy(self.centers)?;
        let mut counts = alloc::filled(1.0, self.len())?;
        let mut v = vec![0.0; d];
        for o in pairs {
            let (a, b) = (o.a as usize, o.b as usize);
            meeting_point(self.center(a), self.center(b), self.radii[a], self.radii[b], o.sq_dist.sqrt(), &mut v);
            for &c in &[a, b] {
                for j in 0..d {
                    sums[c * d + j] += v[j];
                }
                counts[c] += 1.0;
            }
        }
        for (c, n) in counts.iter().enumerate() {
            for j in 0..d {
                sums[c * d + j] /= n;
            }
        }
        Ok(sums)
    }

    /// Super-clusters: overlapping pairs are joined closest first (ties by
    /// index), skipping any join that would put two components of one client
    /// together. Returns each component's super-cluster, numbered in order of
    /// first appearance, and their count (the estimated global K).
    pub fn super_clusters(&self, pairs: &[Overlap]) -> Result<(Vec<u32>, usize)> {
        let m = self.len();
        // distances are non-negative, so their bit patterns sort as the numbers do:
        // plain integer keys sort several times faster than a float comparator
        let mut order = alloc::collect(pairs.iter().map(|o| (o.sq_dist.to_bits(), o.a, o.b)))?;
        order.sort_unstable();
        let mut sets = DisjointSets::new(self.owners)?;
        for (_, a, b) in order {
            sets.join_if_disjoint(a as usize, b as usize)?;
        }
        let mut label = alloc::filled(u32::MAX, m)?;
        let mut of_root = alloc::filled(u32::MAX, m)?;
        let mut k = 0;
        for (c, l) in label.iter_mut().enumerate() {
            let root = sets.find(c);
            if of_root[root] == u32::MAX {
                of_root[root] = k as u32;
                k += 1;
            }
            *l = of_root[root];
        }
        Ok((label, k))
    }
}

/// The most overlapping pairs a round may have (24 bytes each: 480 MB).
pub const MAX_OVERLAPS: usize = 20_000_000;

/// A component whose count is below this share of its client's rows (or
/// zero) says nothing about where a cluster is: it takes no part in overlaps.
pub const MIN_SHARE: f64 = 1e-9;

/// Nor does one with fewer rows than this (its responsibilities summed): a
/// cluster of one row is that row, not a cluster (clients need two rows per
/// component for the same reason). On real data such components sit on
/// outliers (glass: a third of the super-clusters of the paper's merge).
pub const MIN_ROWS: f64 = 2.0;

/// A round's radii are capped at this multiple of their median.
pub const RADIUS_CAP: f64 = 2.0;

/// Each radius capped at RADIUS_CAP times the median of the positive radii
/// (zero radii, converged components, say nothing about the round's scale).
/// Reported radii are otherwise taken on trust: one client's huge radius
/// would reach every ball and link components of every cluster. A capped
/// ball lies inside the reported one, so the update stays in it.
pub fn capped_radii(radii: &[f64]) -> Result<Vec<f64>> {
    let mut positive = alloc::collect(radii.iter().cloned().filter(|r| *r > 0.0))?;
    if positive.is_empty() {
        return alloc::copy(radii);
    }
    positive.sort_unstable_by(|a, b| a.total_cmp(b));
    let h = positive.len() / 2;
    let median = if positive.len() % 2 == 1 { positive[h] } else { positive[h - 1] / 2.0 + positive[h] / 2.0 };
    let cap = RADIUS_CAP * median;
    alloc::collect(radii.iter().map(|r| r.min(cap)))
}

/// Which components are informative: a count of at least MIN_ROWS rows and
/// of MIN_SHARE of the counts of their client (all of them if none is,
/// rather than nothing).
pub fn informative(counts: &[f64], owners: &[u32]) -> Result<Vec<bool>> {
    let mut totals = std::collections::HashMap::new();
    totals.try_reserve(owners.len()).map_err(|_| Error::allocation(owners.len() as f64 * 16.0))?;
    for (c, &o) in counts.iter().zip(owners) {
        *totals.entry(o).or_insert(0.0) += c;
    }
    let mut keep = alloc::collect(counts.iter().zip(owners).map(|(c, o)| *c > 0.0 && *c >= MIN_ROWS && *c >= MIN_SHARE * totals[o]))?;
    if !keep.iter().any(|&k| k) {
        keep.iter_mut().for_each(|k| *k = true);
    }
    Ok(keep)
}

/// The collaborative step of a round (radii capped): the updated centers and
/// the number of overlapping pairs.
pub fn round_update(centers: &[f64], radii: &[f64], owners: &[u32], d: usize, search: Search) -> Result<(Vec<f64>, usize)> {
    Components::new(centers, radii, owners, d)?; // checks before capping
    let radii = capped_radii(radii)?;
    let c = Components::new(centers, &radii, owners, d)?;
    let pairs = c.overlaps(search)?;
    Ok((c.collaborative_update(&pairs)?, pairs.len()))
}

/// The outcome of the final merge.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// each component's super-cluster
    pub labels: Vec<u32>,
    /// the number of super-clusters (the estimated global K)
    pub k: usize,
    /// k x d: their centers, averaged by `weights`
    pub centers: Vec<f64>,
    /// joins made by the separation step (0 when it is off)
    pub separation_joins: usize,
    /// the distance it joined below: the smaller of the smallest distance
    /// between two informative components of one client and sigma sqrt(d)
    /// (None when off or when no client has two)
    pub separation: Option<f64>,
    /// uninformative components, placed in the nearest super-cluster without counting in K
    pub uncounted: usize,
}

/// The final merge: super-clusters of the informative components and their
/// weighted centers; an uninformative component, which could otherwise link
/// two clusters, joins the super-cluster of the nearest center without
/// counting in K. The radii are not capped here: the final radius follows a
/// client's own centers and rows, and capping it at twice the median
/// overestimated K in the blob experiments: single linkage trusts clients.
/// With `separation` (the clusters' shared variance sigma^2), the
/// super-clusters are then joined by `join_closer_than` below the smaller of
/// the smallest distance between two components of one client
/// (`smallest_separation`) and sigma sqrt(d), the root-mean-square distance of
/// a cluster's rows from its center under the model: two clusters farther
/// apart than that are apart by the model's own measure.
pub fn final_merge(centers: &[f64], radii: &[f64], owners: &[u32], weights: &[f64], d: usize, search: Search, separation: Option<f64>) -> Result<Merged> {
    Components::new(centers, radii, owners, d)?;
    let m = radii.len();
    if weights.len() != m {
        return Err(Error::param(format!("{} components need {} weights, got {}", m, m, weights.len())));
    }
    if let Some(i) = weights.iter().position(|w| !(*w >= 0.0) || !w.is_finite()) {
        return Err(Error::data(format!("weight {} is {}; weights must be finite and non-negative", i, show(weights[i]))));
    }
    let keep = informative(weights, owners)?;
    let kept = alloc::collect((0..m).filter(|&i| keep[i]))?;
    let pick = |v: &[f64], w: usize| alloc::collect((0..kept.len() * w).map(|p| v[kept[p / w] * w + p % w]));
    let (sub_centers, sub_weights) = (pick(centers, d)?, pick(weights, 1)?);
    let sub_radii = pick(radii, 1)?;
    let sub_owners = alloc::collect(kept.iter().map(|&i| owners[i]))?;
    let c = Components::new(&sub_centers, &sub_radii, &sub_owners, d)?;
    let (mut sub_labels, mut k) = c.super_clusters(&c.overlaps(search)?)?;
    let mut merged = weighted_centers(&sub_centers, d, &sub_labels, k, &sub_weights)?;
    let (mut separation_joins, mut used) = (0, None);
    if let Some(variance) = separation {
        if !(variance > 0.0 && variance.is_finite()) {
            return Err(Error::param(format!("the separation step needs a finite variance > 0, got {}", show(variance))));
        }
        // no client with two components: no evidence of how close two clusters may be
        let closest = smallest_separation(&sub_centers, &sub_owners, d)?;
        let delta = closest.min(variance.sqrt() * (d as f64).sqrt());
        if closest.is_finite() {
            used = Some(delta);
        }
        if delta > 0.0 && closest.is_finite() {
            let (labels, joins) = join_closer_than(&merged, d, &sub_labels, k, &sub_owners, &sub_weights, delta, search)?;
            if joins > 0 {
                k -= joins;
                sub_labels = labels;
                merged = weighted_centers(&sub_centers, d, &sub_labels, k, &sub_weights)?;
            }
            separation_joins = joins;
        }
    }
    let mut labels = alloc::filled(0u32, m)?;
    for (j, &i) in kept.iter().enumerate() {
        labels[i] = sub_labels[j];
    }
    for i in (0..m).filter(|&i| !keep[i]) {
        let ci = &centers[i * d..(i + 1) * d];
        let nearest = (0..k).map(|l| (sq_distance(ci, &merged[l * d..(l + 1) * d]), l)).fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
        labels[i] = nearest.1 as u32;
    }
    Ok(Merged { labels, k, centers: merged, separation_joins, separation: used, uncounted: m - kept.len() })
}

/// The smallest distance between two components of one client (centers m x d,
/// `owners` their clients): the closest two clusters any client tells apart,
/// since a client's components are its K_c distinct clusters. Infinity when
/// no client has two components.
pub fn smallest_separation(centers: &[f64], owners: &[u32], d: usize) -> Result<f64> {
    let mut order = alloc::collect(0..owners.len())?;
    order.sort_unstable_by_key(|&i| (owners[i], i));
    let mut best = f64::INFINITY;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && owners[order[end]] == owners[order[start]] {
            end += 1;
        }
        for p in start..end {
            for q in p + 1..end {
                let (a, b) = (order[p], order[q]);
                best = best.min(distance(&centers[a * d..(a + 1) * d], &centers[b * d..(b + 1) * d]));
            }
        }
        start = end;
    }
    Ok(best)
}

/// ||a - b||, without overflow or underflow in the squares.
fn distance(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale * a.iter().zip(b).map(|(x, y)| ((x - y) / scale).powi(2)).sum::<f64>().sqrt()
}

/// (||a - b|| / delta)^2, finite or +infinity.
fn relative_square(a: &[f64], b: &[f64], delta: f64) -> f64 {
    let r = a.iter().zip(b).map(|(x, y)| ((x - y) / delta).powi(2)).sum::<f64>();
    if r.is_nan() {
        f64::INFINITY
    } else {
        r
    }
}

/// The separation step: joins super-clusters (`labels` of the components, k
/// of them, `centers` k x d weighted by the components' `weights`) whose
/// centers are closer than `delta`, closest pair first, never two that hold
/// components of one client, each join moving the joined center to the
/// weighted mean of both. The candidate pairs are those closer than delta at
/// the start (found as overlaps of balls of radius delta / 2) and, after a
/// join, the joined cluster's candidates are the union of both: a bounded
/// graph, searched with a heap. Returns the new labels (numbered in order of
/// first appearance) and the number of joins.
#[allow(clippy::too_many_arguments)]
pub fn join_closer_than(centers: &[f64], d: usize, labels: &[u32], k: usize, owners: &[u32], weights: &[f64], delta: f64, search: Search) -> Result<(Vec<u32>, usize)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut mean = alloc::copy(centers)?;
    // each cluster's weight (relative to the largest, so sums stay finite) and sorted clients
    let top = weights.iter().cloned().fold(0.0, f64::max);
    let mut mass = alloc::zeros(k)?;
    let mut clients: Vec<Vec<u32>> = alloc::collect((0..k).map(|_| Vec::new()))?;
    for (c, &l) in labels.iter().enumerate() {
        mass[l as usize] += if top > 0.0 { weights[c] / top } else { 0.0 };
        alloc::push(&mut clients[l as usize], owners[c])?;
    }
    for set in clients.iter_mut() {
        set.sort_unstable();
        set.dedup();
    }
    let radii = alloc::filled(delta / 2.0, k)?;
    let ids = alloc::collect(0..k as u32)?;
    let balls = Components::new(centers, &radii, &ids, d)?;
    let mut neighbours: Vec<Vec<u32>> = alloc::collect((0..k).map(|_| Vec::new()))?;
    let mut heap = BinaryHeap::new();
    let mut version = alloc::filled(0u32, k)?;
    for o in balls.overlaps(search)? {
        let (a, b) = (o.a as usize, o.b as usize);
        alloc::push(&mut neighbours[a], o.b)?;
        alloc::push(&mut neighbours[b], o.a)?;
        let r = relative_square(&mean[a * d..(a + 1) * d], &mean[b * d..(b + 1) * d], delta);
        if r < 1.0 && disjoint(&clients[a], &clients[b]) {
            heap.try_reserve(1).map_err(|_| Error::allocation(32.0))?;
            heap.push(Reverse((r.to_bits(), o.a, o.b, 0u32, 0u32)));
        }
    }
    let mut parent = alloc::collect(0..k)?;
    let mut joins = 0;
    while let Some(Reverse((_, a, b, va, vb))) = heap.pop() {
        let (a, b) = (a as usize, b as usize);
        if parent[a] != a || parent[b] != b || version[a] != va || version[b] != vb {
            continue; // stale: one of them has moved or been joined since
        }
        // b joins a
        let (wa, wb) = (mass[a], mass[b]);
        let t = if wa + wb > 0.0 { wb / (wa + wb) } else { 0.5 };
        for j in 0..d {
            mean[a * d + j] += t * (mean[b * d + j] - mean[a * d + j]);
        }
        mass[a] = wa + wb;
        let moved = std::mem::take(&mut clients[b]);
        clients[a] = merge_sorted(&clients[a], &moved)?;
        parent[b] = a;
        version[a] += 1;
        joins += 1;
        let theirs = std::mem::take(&mut neighbours[b]);
        let mut around = std::mem::take(&mut neighbours[a]);
        around.try_reserve(theirs.len()).map_err(|_| Error::allocation(4.0 * theirs.len() as f64))?;
        around.extend(theirs);
        for x in around.iter_mut() {
            *x = root(&mut parent, *x as usize) as u32;
        }
        around.sort_unstable();
        around.dedup();
        around.retain(|&x| x as usize != a);
        for &x in &around {
            let x = x as usize;
            let r = relative_square(&mean[a * d..(a + 1) * d], &mean[x * d..(x + 1) * d], delta);
            if r < 1.0 && disjoint(&clients[a], &clients[x]) {
                let (lo, hi) = if a < x { (a, x) } else { (x, a) };
                heap.try_reserve(1).map_err(|_| Error::allocation(32.0))?;
                heap.push(Reverse((r.to_bits(), lo as u32, hi as u32, version[lo], version[hi])));
            }
        }
        neighbours[a] = around;
    }
    let mut of_root = alloc::filled(u32::MAX, k)?;
    let mut next = 0u32;
    let mut out = alloc::filled(0u32, labels.len())?;
    for (c, &l) in labels.iter().enumerate() {
        let r = root(&mut parent, l as usize);
        if of_root[r] == u32::MAX {
            of_root[r] = next;
            next += 1;
        }
        out[c] = of_root[r];
    }
    Ok((out, joins))
}

/// The root of c in a union-find forest, halving the path on the way.
fn root(parent: &mut [usize], mut c: usize) -> usize {
    while parent[c] != c {
        parent[c] = parent[parent[c]];
        c = parent[c];
    }
    c
}

/// The union of two ascending lists without repeats, ascending.
fn merge_sorted(p: &[u32], q: &[u32]) -> Result<Vec<u32>> {
    let mut merged = alloc::with_capacity(p.len() + q.len())?;
    let (mut i, mut j) = (0, 0);
    while i < p.len() || j < q.len() {
        if j == q.len() || (i < p.len() && p[i] < q[j]) {
            merged.push(p[i]);
            i += 1;
        } else {
            if i < p.len() && p[i] == q[j] {
                i += 1;
            }
            merged.push(q[j]);
            j += 1;
        }
    }
    Ok(merged)
}

/// Two ascending lists share no element.
fn disjoint(x: &[u32], y: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i] == y[j] {
            return false;
        }
        if x[i] < y[j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    true
}

/// Below this a square may have lost digits to underflow (and above f64::MAX
/// it has overflowed): such pairs are tested on scaled values.
const TINY_SQUARE: f64 = 1e-280;

/// ||a - b|| <= reach, computed on the differences divided by their largest
/// magnitude so that neither squares underflow nor overflow.
fn touching_scaled(a: &[f64], b: &[f64], reach: f64) -> bool {
    let mut m = reach;
    for j in 0..a.len() {
        m = m.max((a[j] - b[j]).abs());
    }
    if m == 0.0 {
        return true; // the same center
    }
    if !m.is_finite() {
        // a difference overflowed: the centers are farther apart than any finite reach
        return false;
    }
    let mut s = 0.0;
    for j in 0..a.len() {
        let t = (a[j] - b[j]) / m;
        s += t * t;
    }
    let r = reach / m;
    s <= r * r
}

/// The point of B(c_a, r_a) and B(c_b, r_b) (overlapping, `dist` apart) closest
/// to both centers: minimizing ||v - c_a||^2 + ||v - c_b||^2 over the
/// intersection. Projecting any point of it onto the line through the centers
/// brings it closer to both, so the minimizer is v = c_a + lambda (c_b - c_a)
/// with lambda the midpoint 1/2 clipped to where the segment is inside both
/// balls: lambda d <= r_a and (1 - lambda) d <= r_b, i.e.
/// lambda = clip(1/2, max(0, 1 - r_b/d), min(1, r_a/d)). A certain component
/// (r = 0) stays put and pulls the other onto itself.
pub fn meeting_point(ca: &[f64], cb: &[f64], ra: f64, rb: f64, dist: f64, out: &mut [f64]) {
    let lambda = if dist > 0.0 { 0.5f64.max(1.0 - rb / dist).min(ra / dist).max(0.0).min(1.0) } else { 0.0 };
    for j in 0..ca.len() {
        out[j] = ca[j] + lambda * (cb[j] - ca[j]);
    }
}

/// Averages of the centers in each super-cluster, weighted (by sample counts).
pub fn weighted_centers(centers: &[f64], d: usize, labels: &[u32], k: usize, weights: &[f64]) -> Result<Vec<f64>> {
    if let Some(i) = weights.iter().position(|w| !(*w >= 0.0) || !w.is_finite()) {
        return Err(Error::data(format!("weight {} is {}; weights must be finite and non-negative", i, show(weights[i]))));
    }
    // weights relative to the largest, so that huge counts cannot overflow the sums
    let top = weights.iter().cloned().fold(0.0, f64::max);
    let weights = alloc::collect(weights.iter().map(|w| if top > 0.0 { w / top } else { 0.0 }))?;
    let mut sums = alloc::zeros(alloc::cells(k, d, 8)?)?;
    let mut plain = alloc::zeros(k * d)?;
    let mut totals = alloc::zeros(k)?;
    let mut members = alloc::zeros(k)?;
    for (c, &l) in labels.iter().enumerate() {
        let l = l as usize;
        totals[l] += weights[c];
        members[l] += 1.0;
        for j in 0..d {
            sums[l * d + j] += weights[c] * centers[c * d + j];
            plain[l * d + j] += centers[c * d + j];
        }
    }
    for l in 0..k {
        for j in 0..d {
            // a super-cluster of zero-weight components: the plain average
            sums[l * d + j] = if totals[l] > 0.0 { sums[l * d + j] / totals[l] } else { plain[l * d + j] / members[l] };
        }
    }
    Ok(sums)
}

/// Union-find whose sets remember which clients they hold.
struct DisjointSets {
    parent: Vec<usize>,
    /// per root: its clients, ascending
    owners: Vec<Vec<u32>>,
}

impl DisjointSets {
    fn new(owners: &[u32]) -> Result<Self> {
        let mut sets = alloc::with_capacity(owners.len())?;
        for &o in owners {
            // one allocation per component: fallible too
            let mut set = alloc::with_capacity(1)?;
            set.push(o);
            sets.push(set);
        }
        Ok(DisjointSets { parent: alloc::collect(0..owners.len())?, owners: sets })
    }

    fn find(&mut self, c: usize) -> usize {
        root(&mut self.parent, c)
    }

    /// Joins the sets of a and b unless they share a client.
    fn join_if_disjoint(&mut self, a: usize, b: usize) -> Result<()> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb || !disjoint(&self.owners[ra], &self.owners[rb]) {
            return Ok(());
        }
        // the larger set absorbs the smaller
        let (big, small) = if self.owners[ra].len() >= self.owners[rb].len() { (ra, rb) } else { (rb, ra) };
        let moved = std::mem::take(&mut self.owners[small]);
        self.owners[big] = merge_sorted(&self.owners[big], &moved)?;
        self.parent[small] = big;
        Ok(())
    }
}
