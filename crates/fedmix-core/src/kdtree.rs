//! A k-d tree over balls in R^d (centers row-major, a radius each; points are
//! balls of radius 0), answering "every ball that may touch the ball (q, r)".
//! Built once in O(m log m) by median splits on the widest dimension; each node
//! keeps the bounding box of its centers and their largest radius, so a query
//! visits only the nodes that come within r + that radius: close to
//! O(log m + hits) for well-spread balls in few dimensions, and one large ball
//! slows only the queries near it.
//!
//! The tree only prunes: a candidate's distance is checked by the caller with
//! its own arithmetic, so searches through the tree and exhaustive loops give
//! bit-identical answers (boxes are pruned with a margin, never on a tie).

use crate::alloc;
use crate::error::Result;

/// Points per leaf: below this, scanning beats descending.
const LEAF: usize = 16;

struct Node {
    /// indices into `order`: the node's points are order[start..end]
    start: usize,
    end: usize,
    /// children (0 = none; the root is never a child)
    left: usize,
    right: usize,
    /// the largest radius of the node's balls
    reach: f64,
}

pub struct KdTree<'a> {
    points: &'a [f64],
    radii: Option<&'a [f64]>,
    d: usize,
    order: Vec<usize>,
    nodes: Vec<Node>,
    /// each node's bounding box, lo then hi (2 d values per node, in node order)
    boxes: Vec<f64>,
}

impl<'a> KdTree<'a> {
    /// A tree over `points` (m x d, row-major, finite).
    pub fn new(points: &'a [f64], d: usize) -> Result<Self> {
        KdTree::build_over(points, None, d)
    }

    /// A tree over balls: centers (m x d, row-major, finite) and radii (m, finite, >= 0).
    pub fn with_radii(centers: &'a [f64], radii: &'a [f64], d: usize) -> Result<Self> {
        assert_eq!(radii.len() * d, centers.len());
        KdTree::build_over(centers, Some(radii), d)
    }

    fn build_over(points: &'a [f64], radii: Option<&'a [f64]>, d: usize) -> Result<Self> {
        assert!(d > 0 && points.len() % d == 0);
        let m = points.len() / d;
        // a node of more than LEAF points splits in halves, so leaves hold at
        // least LEAF / 2 (or all m): the tree's size is known before it is built
        let max_nodes = 2 * (m / (LEAF / 2) + 1);
        let boxes = alloc::with_capacity(alloc::cells(max_nodes, 2 * d, 8)?)?;
        let mut tree = KdTree { points, radii, d, order: alloc::collect(0..m)?, nodes: alloc::with_capacity(max_nodes)?, boxes };
        if m > 0 {
            tree.build(0, m);
        }
        debug_assert!(tree.nodes.len() <= max_nodes);
        Ok(tree)
    }

    fn point(&self, i: usize) -> &[f64] {
        &self.points[i * self.d..(i + 1) * self.d]
    }

    /// Node `id`'s bounding box: (lo, hi).
    fn bounds(&self, id: usize) -> (&[f64], &[f64]) {
        self.boxes[2 * id * self.d..2 * (id + 1) * self.d].split_at(self.d)
    }

    /// Builds the subtree over order[start..end]; returns its node index.
    fn build(&mut self, start: usize, end: usize) -> usize {
        let d = self.d;
        let id = self.nodes.len();
        let at = self.boxes.len();
        self.boxes.extend((0..2 * d).map(|j| if j < d { f64::INFINITY } else { f64::NEG_INFINITY }));
        let (lo, hi) = self.boxes[at..].split_at_mut(d);
        let mut reach = 0.0f64;
        for &i in &self.order[start..end] {
            for (j, &v) in self.points[i * d..(i + 1) * d].iter().enumerate() {
                lo[j] = lo[j].min(v);
                hi[j] = hi[j].max(v);
            }
            if let Some(r) = self.radii {
                reach = reach.max(r[i]);
            }
        }
        self.nodes.push(Node { start, end, left: 0, right: 0, reach });
        if end - start <= LEAF {
            return id;
        }
        let (lo, hi) = self.bounds(id);
        let axis = (0..d).max_by(|&a, &b| (hi[a] - lo[a]).partial_cmp(&(hi[b] - lo[b])).unwrap()).unwrap();
        if hi[axis] == lo[axis] {
            return id; // all points equal: a leaf, however many
        }
        let mid = start + (end - start) / 2;
        let points = self.points;
        self.order[start..end].select_nth_unstable_by(mid - start, |&a, &b| points[a * d + axis].partial_cmp(&points[b * d + axis]).unwrap());
        let left = self.build(start, mid);
        let right = self.build(mid, end);
        self.nodes[id].left = left;
        self.nodes[id].right = right;
        id
    }

    /// Calls `visit(i)` for every ball i that may touch the ball (q, radius),
    /// i.e. whose center may lie within radius + r_i of q (for points: within
    /// radius): a superset of them (those in leaves the box test cannot rule
    /// out), each once.
    pub fn candidates_within(&self, q: &[f64], radius: f64, mut visit: impl FnMut(usize)) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0usize];
        while let Some(id) = stack.pop() {
            let node = &self.nodes[id];
            let (lo, hi) = self.bounds(id);
            let mut gap = 0.0;
            for j in 0..self.d {
                let g = if q[j] < lo[j] {
                    lo[j] - q[j]
                } else if q[j] > hi[j] {
                    q[j] - hi[j]
                } else {
                    0.0
                };
                gap += g * g;
            }
            // a box is skipped only when clearly out of reach, so rounding in this
            // test never drops a ball the caller's exact test would keep
            let r = radius + node.reach;
            if gap > r * r * (1.0 + 1e-9) + f64::MIN_POSITIVE {
                continue;
            }
            if node.left == 0 {
                for &i in &self.order[node.start..node.end] {
                    visit(i);
                }
            } else {
                stack.push(node.right);
                stack.push(node.left);
            }
        }
    }

    /// Points within `radius` of `q` (squared distance <= radius^2), ascending.
    pub fn within(&self, q: &[f64], radius: f64) -> Vec<usize> {
        let mut out = Vec::new();
        self.candidates_within(q, radius, |i| {
            if sq_distance(self.point(i), q) <= radius * radius {
                out.push(i);
            }
        });
        out.sort_unstable();
        out
    }
}

/// Squared Euclidean distance, summed in feature order (the one arithmetic
/// both the tree's users and their exhaustive references use).
pub fn sq_distance(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for j in 0..a.len() {
        let t = a[j] - b[j];
        s += t * t;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn brute(points: &[f64], d: usize, q: &[f64], r: f64) -> Vec<usize> {
        (0..points.len() / d).filter(|&i| sq_distance(&points[i * d..(i + 1) * d], q) <= r * r).collect()
    }

    #[test]
    fn matches_exhaustive_search() {
        let mut rng = Rng::new(7);
        for &(m, d) in &[(1usize, 1usize), (5, 2), (100, 2), (1000, 3), (500, 8), (300, 1)] {
            // clustered points with duplicates, so splits see ties
            let points: Vec<f64> = (0..m * d).map(|i| if i % 7 == 0 { 0.5 } else { (rng.next_f64() * 10.0).floor() / 3.0 }).collect();
            let tree = KdTree::new(&points, d).unwrap();
            for t in 0..50 {
                let q: Vec<f64> = (0..d).map(|_| rng.next_f64() * 4.0).collect();
                let r = [0.0, 0.1, 0.5, 1.0, 3.0][t % 5];
                assert_eq!(tree.within(&q, r), brute(&points, d, &q, r), "m {} d {} r {}", m, d, r);
            }
            // every point finds itself at radius 0
            for i in 0..m {
                assert!(tree.within(&points[i * d..(i + 1) * d], 0.0).contains(&i));
            }
        }
    }

    #[test]
    fn balls_touching_a_ball_match_exhaustive_search() {
        let mut rng = Rng::new(8);
        for &(m, d) in &[(300usize, 2usize), (1000, 3), (50, 1)] {
            let centers: Vec<f64> = (0..m * d).map(|_| rng.next_f64() * 20.0).collect();
            // mostly small radii and a few huge ones
            let radii: Vec<f64> = (0..m).map(|i| if i % 97 == 0 { 50.0 } else { rng.next_f64() * 0.5 }).collect();
            let tree = KdTree::with_radii(&centers, &radii, d).unwrap();
            for a in 0..m {
                let q = &centers[a * d..(a + 1) * d];
                let mut got = vec![];
                tree.candidates_within(q, radii[a], |b| {
                    let reach = radii[a] + radii[b];
                    if sq_distance(q, &centers[b * d..(b + 1) * d]) <= reach * reach {
                        got.push(b);
                    }
                });
                got.sort_unstable();
                let want: Vec<usize> = (0..m)
                    .filter(|&b| {
                        let reach = radii[a] + radii[b];
                        sq_distance(q, &centers[b * d..(b + 1) * d]) <= reach * reach
                    })
                    .collect();
                assert_eq!(got, want, "m {} d {} ball {}", m, d, a);
            }
        }
    }

    #[test]
    fn identical_points_make_one_leaf() {
        let points = vec![1.0; 200 * 3];
        let tree = KdTree::new(&points, 3).unwrap();
        assert_eq!(tree.within(&[1.0, 1.0, 1.0], 0.0).len(), 200);
        assert!(tree.within(&[2.0, 1.0, 1.0], 0.5).is_empty());
    }
}
