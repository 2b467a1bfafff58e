//! The linear sum assignment problem with scipy.optimize.linear_sum_assignment's
//! semantics: given an nr x nc cost matrix (row-major), choose min(nr, nc) cells,
//! at most one per row and per column, of least (or, with `maximize`, greatest)
//! total. +inf marks a forbidden pair (-inf when maximizing); NaN and the other
//! infinity are rejected.
//!
//! Method: shortest augmenting paths with dual variables, the Jonker-Volgenant
//! scheme in the form Crouse gives for rectangular matrices ("On implementing 2D
//! rectangular assignment algorithms", IEEE TAES 2016), which is also scipy's:
//! each row in turn is assigned by a Dijkstra search over
//! reduced costs c[i][j] - u[i] - v[j] from that row to a free column, then the
//! duals are updated so that reduced costs stay non-negative and are zero on the
//! assignment, and the path is flipped. With rows <= columns (the matrix is
//! transposed otherwise), every row is assigned and free columns keep v = 0,
//! which makes the result optimal for the rectangular problem. A square
//! matrix of finite costs first goes through LAPJV's initial reduction
//! (Solver::reduce), which assigns most rows cheaply; the searches do the rest.
//!
//! What differs from the textbook loop is the data layout of the hot loop: the
//! search keeps no list of unscanned columns to gather from. Each step relaxes a
//! whole cost row, contiguously (kernels::lsa_relax, f64x2 lanes, which writes
//! only the blocks of 8 columns where a distance improves: after a search's
//! first row, a tenth to a quarter of them on random costs), and a column is retired from the search
//! by setting its v to -inf, which makes its reduced cost +inf, so it is neither
//! relaxed again nor chosen. Its true v is stashed and restored, updated, when
//! the search ends. As in scipy's implementation, retired columns leave the
//! scan: each block of 8 columns counts its live ones, and a block whose
//! columns are all retired is skipped, its cache line of the cost row unread
//! (long searches, the last rows' on random costs, retire most columns). The
//! relaxation also reports which block of 8 columns holds
//! the smallest distance, so choosing the next column looks at 8 columns, not
//! m. Nothing is allocated per search, and nothing is reset between searches
//! (a search's first row overwrites every distance).

use crate::alloc;
use crate::error::{Error, Result};
use crate::kernels::{self, LSA_BLOCK};

/// The chosen cells: `rows` ascending, `cols[k]` the column of row `rows[k]`,
/// and `cost` the sum of their original entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
    pub cost: f64,
}

const FREE: usize = usize::MAX;

/// The augmenting row reduction's cap, in scans of a cost row per row. Its
/// first scans each assign a row; later ones mostly pass a column along long
/// chains of evictions, where the searches do better (on uniform random costs
/// at n = 1024 and 2048, uncapped it scans 27n and 61n rows, about as much as
/// the searches it saves; capped at 2n it leaves 5% of the rows to them).
const ARR_SCANS_PER_ROW: usize = 2;

/// Solves the assignment problem for the nr x nc row-major `cost`.
pub fn linear_sum_assignment(cost: &[f64], nr: usize, nc: usize, maximize: bool) -> Result<Assignment> {
    if nr.checked_mul(nc) != Some(cost.len()) {
        return Err(Error::data(format!("cost has {} values but the shape {} x {} needs {}", cost.len(), nr, nc, nr.saturating_mul(nc))));
    }
    let forbidden = check_entries(cost, nc, maximize)?;
    if nr == 0 || nc == 0 {
        // scipy returns two empty index arrays
        return Ok(Assignment { rows: Vec::new(), cols: Vec::new(), cost: 0.0 });
    }
    // The solver minimizes over a matrix with rows <= columns: transpose and/or
    // negate into a working copy when needed; otherwise use the input as is.
    let transposed = nr > nc;
    let owned: Option<Vec<f64>> = if transposed || maximize {
        let mut w = if transposed { transpose(cost, nr, nc)? } else { alloc::copy(cost)? };
        if maximize {
            for x in w.iter_mut() {
                *x = -*x;
            }
        }
        Some(w)
    } else {
        None
    };
    let work = owned.as_deref().unwrap_or(cost);
    let (n, m) = if transposed { (nc, nr) } else { (nr, nc) };

    let mut solver = Solver::new(n, m)?;
    // LAPJV's initial reduction needs a square matrix (rectangular problems
    // keep the free columns' v at 0) and finite costs (+inf - +inf is NaN)
    let reduce = n == m && !forbidden;
    if reduce {
        solver.reduce(work)?;
    }
    let mut solved = solver.solve(work);
    if solved.is_err() && reduce {
        // finite costs always admit an assignment: only a reduced cost that
        // overflowed to +inf (costs near f64::MAX apart) can get here, so solve
        // again without the reduction, as scipy does
        solver = Solver::new(n, m)?;
        solved = solver.solve(work);
    }
    solved.map_err(|failed| infeasible(failed, n, transposed, maximize))?;
    let col4row = solver.col4row;

    let (rows, cols): (Vec<usize>, Vec<usize>) = if transposed {
        // solver row k is original column k, assigned to original row col4row[k]
        let mut col_of = alloc::filled(FREE, nr)?;
        for (k, &r) in col4row.iter().enumerate() {
            col_of[r] = k;
        }
        let rows = alloc::collect((0..nr).filter(|&r| col_of[r] != FREE))?;
        let cols = alloc::collect(rows.iter().map(|&r| col_of[r]))?;
        (rows, cols)
    } else {
        (alloc::collect(0..nr)?, col4row)
    };
    let total = neumaier_sum(rows.iter().zip(&cols).map(|(&r, &c)| cost[r * nc + c]));
    Ok(Assignment { rows, cols, cost: total })
}

/// Rejects NaN and the infinity that cannot mean "forbidden", naming the first
/// such cell. One branch-free pass per row, then a search only in a bad row.
/// Ok(true) when some entry is the forbidden mark.
fn check_entries(cost: &[f64], nc: usize, maximize: bool) -> Result<bool> {
    if nc == 0 {
        return Ok(false);
    }
    let mut forbidden = false;
    // minimizing: -inf and NaN fail `x > -inf`; maximizing: +inf and NaN fail `x < inf`
    let bad = |x: f64| if maximize { !(x < f64::INFINITY) } else { !(x > f64::NEG_INFINITY) };
    for (i, row) in cost.chunks_exact(nc).enumerate() {
        let (any_bad, any_infinite) = row.iter().fold((false, false), |(b, f), &x| (b | bad(x), f | (x.abs() == f64::INFINITY)));
        forbidden |= any_infinite;
        if any_bad {
            let j = row.iter().position(|&x| bad(x)).unwrap_or(0);
            let x = row[j];
            let message = if x.is_nan() {
                format!(
                    "cost contains NaN at row {}, column {}; every entry must be a number ({} marks a forbidden pair)",
                    i,
                    j,
                    if maximize { "-Infinity" } else { "+Infinity" }
                )
            } else if maximize {
                format!("cost contains +Infinity at row {}, column {}; with maximize, -Infinity marks a forbidden pair and +Infinity is not allowed", i, j)
            } else {
                format!("cost contains -Infinity at row {}, column {}; +Infinity marks a forbidden pair and -Infinity is not allowed (use maximize for a profit matrix)", i, j)
            };
            return Err(Error::data(message));
        }
    }
    Ok(forbidden)
}

fn infeasible(failed: usize, n: usize, transposed: bool, maximize: bool) -> Error {
    let what = if transposed { "columns" } else { "rows" };
    Error::data(format!(
        "the cost matrix is infeasible: its forbidden ({}) entries leave no assignment of all {} {}; already the first {} {} cannot all be assigned",
        if maximize { "-Infinity" } else { "+Infinity" },
        n,
        what,
        failed + 1,
        what
    ))
}

/// Row-major nr x nc into row-major nc x nr, in tiles that stay in cache.
fn transpose(a: &[f64], nr: usize, nc: usize) -> Result<Vec<f64>> {
    const T: usize = 32;
    let mut out = alloc::zeros(nr * nc)?;
    for i0 in (0..nr).step_by(T) {
        for j0 in (0..nc).step_by(T) {
            for i in i0..(i0 + T).min(nr) {
                for j in j0..(j0 + T).min(nc) {
                    out[j * nr + i] = a[i * nc + j];
                }
            }
        }
    }
    Ok(out)
}

/// Compensated sum, so the reported total does not depend on summation order
/// more than one rounding.
fn neumaier_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut comp) = (0.0f64, 0.0f64);
    for x in values {
        let t = s + x;
        comp += if s.abs() >= x.abs() { (s - t) + x } else { (x - t) + s };
        s = t;
    }
    s + comp
}

/// State of the shortest augmenting path method for n <= m.
struct Solver {
    n: usize,
    m: usize,
    /// row duals
    u: Vec<f64>,
    /// column duals; -inf while a column is retired from the current search
    v: Vec<f64>,
    /// shortest-path distance of each column in the current search (set afresh
    /// by its first row); +inf once retired
    dist: Vec<f64>,
    /// minimum of dist over each block of LSA_BLOCK columns
    block_min: Vec<f64>,
    /// columns of each block not retired from the current search; the
    /// relaxation skips a block at 0
    live: Vec<u8>,
    /// row from which each column was last reached (u64: one f64x2 lane per column)
    pred: Vec<u64>,
    col4row: Vec<usize>,
    row4col: Vec<usize>,
    /// columns retired in the current search: (column, its distance, its true v)
    retired: Vec<(usize, f64, f64)>,
    /// rows relaxed so far, over all searches (the work done, for tests)
    relaxed: usize,
    /// row scans of the augmenting row reduction, and their cap
    scans: usize,
    budget: usize,
}

impl Solver {
    fn new(n: usize, m: usize) -> Result<Self> {
        Ok(Solver {
            n,
            m,
            u: alloc::zeros(n)?,
            v: alloc::zeros(m)?,
            dist: alloc::filled(f64::INFINITY, m)?,
            block_min: alloc::filled(f64::INFINITY, (m + LSA_BLOCK - 1) / LSA_BLOCK)?,
            live: alloc::collect((0..(m + LSA_BLOCK - 1) / LSA_BLOCK).map(|b| ((b + 1) * LSA_BLOCK).min(m) - b * LSA_BLOCK).map(|k| k as u8))?,
            pred: alloc::filled(0, m)?,
            col4row: alloc::filled(FREE, n)?,
            row4col: alloc::filled(FREE, m)?,
            // a search retires only assigned columns: at most n
            retired: alloc::with_capacity(n)?,
            relaxed: 0,
            scans: 0,
            budget: ARR_SCANS_PER_ROW * n,
        })
    }

    /// Assigns every row still free (every row unless `reduce` ran); Err(row)
    /// names the first row that cannot be assigned together with those before
    /// it. The column of row i is then col4row[i].
    fn solve(&mut self, c: &[f64]) -> std::result::Result<(), usize> {
        debug_assert!(self.n <= self.m && c.len() == self.n * self.m);
        for cur in 0..self.n {
            if self.col4row[cur] != FREE {
                continue;
            }
            let sink = self.search(c, cur)?;
            self.augment(cur, sink);
        }
        Ok(())
    }

    /// Dijkstra from row `cur` over reduced costs until a free column is reached;
    /// then updates the duals of everything it scanned. Returns that column.
    fn search(&mut self, c: &[f64], cur: usize) -> std::result::Result<usize, usize> {
        let m = self.m;
        let mut i = cur;
        let mut min_val = 0.0;
        let sink = loop {
            let h = min_val - self.u[i];
            let near = kernels::lsa_relax(&c[i * m..(i + 1) * m], &self.v, h, i as u64, i == cur, &mut self.dist, &mut self.pred, &mut self.block_min, &self.live);
            self.relaxed += 1;
            if near.value == f64::INFINITY {
                return Err(cur);
            }
            let j = self.nearest(near);
            min_val = self.dist[j];
            if self.row4col[j] == FREE {
                break j;
            }
            self.retired.push((j, min_val, self.v[j]));
            self.v[j] = f64::NEG_INFINITY;
            self.dist[j] = f64::INFINITY;
            let b = j / LSA_BLOCK;
            self.live[b] -= 1;
            self.block_min[b] = self.block(b).fold(f64::INFINITY, |a, k| if self.dist[k] < a { self.dist[k] } else { a });
            i = self.row4col[j];
        };
        // Dual update: every scanned row and column moves by how much closer than
        // the sink it was, which keeps reduced costs >= 0 and zero on the path.
        self.u[cur] += min_val;
        for &(j, d, vj) in &self.retired {
            let delta = min_val - d;
            self.u[self.row4col[j]] += delta;
            self.v[j] = vj - delta;
            self.live[j / LSA_BLOCK] += 1;
        }
        self.retired.clear();
        Ok(sink)
    }

    /// LAPJV's initialization (Jonker and Volgenant 1987) for a square matrix
    /// of finite costs: column reduction, reduction transfer and two passes of
    /// augmenting row reduction. It assigns most rows with a few scans of a
    /// cost row each and leaves duals that are feasible (reduced costs >= 0,
    /// zero on the assignment), from which the searches go on. One change from
    /// the paper: where a row's two smallest reduced costs tie and both columns
    /// are taken, the row stays free for the search rather than evicting the
    /// owner of the second (the search prefers a free column among ties, so an
    /// all-equal matrix still gets the identity in one step per row).
    fn reduce(&mut self, c: &[f64]) -> Result<()> {
        let n = self.n;
        debug_assert!(n == self.m && c.len() == n * n);
        // column reduction: v[j] = the column's minimum, first[j] the first row reaching it
        let mut first = alloc::filled(0u32, n)?;
        self.v.copy_from_slice(&c[..n]);
        for i in 1..n {
            kernels::column_minima(&c[i * n..(i + 1) * n], i as u32, &mut self.v, &mut first);
        }
        // each column to its row while that row is free, columns in order
        let mut matches = alloc::filled(0u32, n)?;
        for j in 0..n {
            let i = first[j] as usize;
            matches[i] += 1;
            if self.col4row[i] == FREE {
                self.col4row[i] = j;
                self.row4col[j] = i;
            }
        }
        // reduction transfer: a row that is the minimum of one column only lends
        // that column the gap to its next smallest reduced cost
        let mut free = first; // reused: the rows left free
        free.clear();
        for i in 0..n {
            let j = self.col4row[i];
            if j == FREE {
                free.push(i as u32);
            } else if matches[i] == 1 && n > 1 {
                let t = kernels::two_smallest(&c[i * n..(i + 1) * n], &self.v);
                let gap = if t.first == j { t.second_value } else { t.value };
                if gap < f64::INFINITY {
                    self.v[j] -= gap;
                }
            }
        }
        drop(matches);
        // augmenting row reduction: a free row takes its nearest column at the
        // gap to its second nearest (lowering that column's v by the gap) and
        // evicts the owner, who goes next
        for _pass in 0..2 {
            let (mut k, mut kept) = (0, 0);
            let count = free.len();
            while k < count {
                if self.scans >= self.budget {
                    // out of budget: the rest stays free for the search
                    while k < count {
                        free[kept] = free[k];
                        kept += 1;
                        k += 1;
                    }
                    break;
                }
                let i = free[k] as usize;
                k += 1;
                let t = kernels::two_smallest(&c[i * n..(i + 1) * n], &self.v);
                self.scans += 1;
                if !(t.second_value < f64::INFINITY) {
                    free[kept] = i as u32; // an overflowed reduced cost: left to the search
                    kept += 1;
                    continue;
                }
                let (mut j, mut owner) = (t.first, self.row4col[t.first]);
                if t.value < t.second_value {
                    self.v[j] -= t.second_value - t.value;
                } else if owner != FREE {
                    if self.row4col[t.second] != FREE {
                        free[kept] = i as u32; // a tie between taken columns: left to the search
                        kept += 1;
                        continue;
                    }
                    j = t.second;
                    owner = FREE;
                }
                self.col4row[i] = j;
                self.row4col[j] = i;
                if owner != FREE {
                    self.col4row[owner] = FREE;
                    // the evicted row goes next, in the slot just read
                    k -= 1;
                    free[k] = owner as u32;
                }
            }
            free.truncate(kept);
        }
        // the row duals the assignment implies; a free row's starts at 0
        for i in 0..n {
            let j = self.col4row[i];
            self.u[i] = if j == FREE { 0.0 } else { c[i * n + j] - self.v[j] };
        }
        Ok(())
    }

    fn block(&self, b: usize) -> std::ops::Range<usize> {
        b * LSA_BLOCK..((b + 1) * LSA_BLOCK).min(self.m)
    }

    /// The column of smallest distance: the first one, except that a free column
    /// at the same distance is preferred (the first such): the search ends there
    /// instead of scanning more rows, which keeps degenerate matrices, e.g. all
    /// costs equal, at one step per row.
    fn nearest(&self, near: kernels::Nearest) -> usize {
        let lowest = near.value;
        let mut columns = self.block(near.block).filter(|&j| self.dist[j] == lowest);
        let j = columns.next().unwrap_or(0);
        if self.row4col[j] == FREE {
            return j;
        }
        if let Some(f) = columns.find(|&f| self.row4col[f] == FREE) {
            return f;
        }
        if near.tied {
            for b in near.block + 1..self.block_min.len() {
                if self.block_min[b] == lowest {
                    if let Some(f) = self.block(b).find(|&f| self.dist[f] == lowest && self.row4col[f] == FREE) {
                        return f;
                    }
                }
            }
        }
        j
    }

    /// Flips the path that ends at the free column `sink`; row `cur` joins the assignment.
    fn augment(&mut self, cur: usize, sink: usize) {
        let mut j = sink;
        loop {
            let i = self.pred[j] as usize;
            self.row4col[j] = i;
            let previous = std::mem::replace(&mut self.col4row[i], j);
            if i == cur {
                break;
            }
            j = previous;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    /// The best total over all assignments of min(nr, nc) cells that avoid
    /// forbidden entries, and the first assignment reaching it (as (row, col)
    /// pairs, rows ascending), by enumerating injections; None when there is none.
    fn brute_force(c: &[f64], nr: usize, nc: usize, maximize: bool) -> Option<(f64, Vec<(usize, usize)>)> {
        struct Search<'a> {
            c: &'a [f64],
            nr: usize,
            nc: usize,
            maximize: bool,
            chosen: Vec<(usize, usize)>,
            used: Vec<bool>,
            best: Option<(f64, Vec<(usize, usize)>)>,
        }
        impl<'a> Search<'a> {
            // k-th index of the smaller side gets an unused index of the larger side
            fn go(&mut self, k: usize, acc: f64) {
                let (n, m) = if self.nr <= self.nc { (self.nr, self.nc) } else { (self.nc, self.nr) };
                if k == n {
                    let better = match &self.best {
                        None => true,
                        Some((b, _)) => (self.maximize && acc > *b) || (!self.maximize && acc < *b),
                    };
                    if better {
                        let mut pairs = self.chosen.clone();
                        pairs.sort_unstable();
                        self.best = Some((acc, pairs));
                    }
                    return;
                }
                for j in 0..m {
                    let (r, col) = if self.nr <= self.nc { (k, j) } else { (j, k) };
                    let x = self.c[r * self.nc + col];
                    if !self.used[j] && x.is_finite() {
                        self.used[j] = true;
                        self.chosen.push((r, col));
                        self.go(k + 1, acc + x);
                        self.chosen.pop();
                        self.used[j] = false;
                    }
                }
            }
        }
        let mut s = Search { c, nr, nc, maximize, chosen: Vec::new(), used: vec![false; nr.max(nc)], best: None };
        s.go(0, 0.0);
        s.best
    }

    /// The assignment is well-formed: rows ascending, distinct columns, min(nr, nc)
    /// cells, none forbidden, and `cost` is their total.
    fn check_shape(a: &Assignment, c: &[f64], nr: usize, nc: usize) {
        let k = nr.min(nc);
        assert_eq!(a.rows.len(), k);
        assert_eq!(a.cols.len(), k);
        assert!(a.rows.windows(2).all(|w| w[0] < w[1]));
        let mut seen = vec![false; nc];
        for (&r, &col) in a.rows.iter().zip(&a.cols) {
            assert!(r < nr && col < nc && !seen[col]);
            seen[col] = true;
            assert!(c[r * nc + col].is_finite(), "forbidden cell chosen");
        }
        let total: f64 = a.rows.iter().zip(&a.cols).map(|(&r, &col)| c[r * nc + col]).sum();
        assert!((total - a.cost).abs() <= 1e-12 * total.abs().max(1.0));
    }

    enum Kind {
        Uniform,
        SmallIntegers,
        /// small integers, each cell forbidden with this probability
        Forbidden(f64),
    }

    fn matrix(rng: &mut Rng, nr: usize, nc: usize, kind: &Kind) -> Vec<f64> {
        (0..nr * nc)
            .map(|_| match kind {
                Kind::Uniform => rng.next_f64() * 10.0 - 3.0,
                Kind::SmallIntegers => rng.below(4) as f64,
                Kind::Forbidden(p) => {
                    if rng.next_f64() < *p {
                        f64::INFINITY
                    } else {
                        rng.below(10) as f64
                    }
                }
            })
            .collect()
    }

    #[test]
    fn optimal_against_brute_force_for_every_shape_up_to_8x8() {
        let mut rng = Rng::new(2016);
        let mut infeasible_seen = 0;
        for nr in 1..=8 {
            for nc in 1..=8 {
                for kind in [Kind::Uniform, Kind::SmallIntegers, Kind::Forbidden(0.3), Kind::Forbidden(0.6)] {
                    for maximize in [false, true] {
                        for _ in 0..3 {
                            let mut c = matrix(&mut rng, nr, nc, &kind);
                            if maximize {
                                // a maximizer's forbidden mark is -inf
                                c.iter_mut().filter(|x| x.is_infinite()).for_each(|x| *x = f64::NEG_INFINITY);
                            }
                            let expected = brute_force(&c, nr, nc, maximize);
                            match (linear_sum_assignment(&c, nr, nc, maximize), expected) {
                                (Ok(a), Some((best, _))) => {
                                    check_shape(&a, &c, nr, nc);
                                    let integers = !matches!(kind, Kind::Uniform);
                                    if integers {
                                        assert_eq!(a.cost, best, "{}x{} maximize={}", nr, nc, maximize);
                                    } else {
                                        assert!((a.cost - best).abs() <= 1e-12 * best.abs().max(1.0), "{}x{}: {} vs {}", nr, nc, a.cost, best);
                                    }
                                }
                                (Err(e), None) => {
                                    assert!(e.message.contains("infeasible"), "{}", e.message);
                                    infeasible_seen += 1;
                                }
                                (got, want) => panic!("{}x{} maximize={}: got {:?}, brute force {:?}", nr, nc, maximize, got, want),
                            }
                        }
                    }
                }
            }
        }
        assert!(infeasible_seen > 10, "the forbidden matrices should include infeasible ones ({})", infeasible_seen);
    }

    #[test]
    fn unique_optimum_gives_the_brute_force_assignment() {
        // continuous random costs: the optimum is unique (with probability 1)
        let mut rng = Rng::new(7);
        for nr in 1..=8 {
            for nc in 1..=8 {
                for maximize in [false, true] {
                    let c = matrix(&mut rng, nr, nc, &Kind::Uniform);
                    let a = linear_sum_assignment(&c, nr, nc, maximize).unwrap();
                    let (_, pairs) = brute_force(&c, nr, nc, maximize).unwrap();
                    let got: Vec<(usize, usize)> = a.rows.iter().copied().zip(a.cols.iter().copied()).collect();
                    assert_eq!(got, pairs, "{}x{} maximize={}", nr, nc, maximize);
                }
            }
        }
    }

    #[test]
    fn known_small_cases() {
        // scipy's documentation example
        let c = [4.0, 1.0, 3.0, 2.0, 0.0, 5.0, 3.0, 2.0, 2.0];
        let a = linear_sum_assignment(&c, 3, 3, false).unwrap();
        assert_eq!((a.rows, a.cols, a.cost), (vec![0, 1, 2], vec![1, 0, 2], 5.0));
        let a = linear_sum_assignment(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3, true).unwrap();
        assert_eq!((a.rows, a.cols, a.cost), (vec![0, 1], vec![2, 1], 8.0));
        // tall: 3 rows, 2 columns, rows 0 and 1 win
        let a = linear_sum_assignment(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2, false).unwrap();
        assert_eq!((a.rows, a.cols, a.cost), (vec![0, 1], vec![0, 1], 5.0));
        let a = linear_sum_assignment(&[9.0, 1.0, 9.0, 9.0, 2.0, 9.0], 3, 2, false).unwrap();
        assert_eq!((a.rows, a.cols, a.cost), (vec![0, 2], vec![1, 0], 3.0));
        // forbidden cells force the anti-diagonal
        let inf = f64::INFINITY;
        let a = linear_sum_assignment(&[inf, 1.0, 1.0, inf], 2, 2, false).unwrap();
        assert_eq!((a.rows, a.cols), (vec![0, 1], vec![1, 0]));
        // maximize: -inf is the forbidden mark
        let a = linear_sum_assignment(&[f64::NEG_INFINITY, 1.0, 1.0, 2.0], 2, 2, true).unwrap();
        assert_eq!((a.rows, a.cols, a.cost), (vec![0, 1], vec![1, 0], 2.0));
        // a one-by-one and negative costs
        assert_eq!(linear_sum_assignment(&[-3.5], 1, 1, false).unwrap().cost, -3.5);
    }

    #[test]
    fn all_equal_costs_take_one_step_per_row() {
        // the tie rule (prefer the first free column) gives the identity, one
        // relaxation per row; without it row k would scan k rows first
        let n = 300;
        let c = vec![1.0; n * n];
        let mut s = Solver::new(n, n).unwrap();
        s.solve(&c).unwrap();
        assert_eq!(s.relaxed, n);
        assert_eq!(s.col4row, (0..n).collect::<Vec<_>>());
        assert_eq!(linear_sum_assignment(&c, n, n, false).unwrap().cost, n as f64);
    }

    #[test]
    fn the_initial_reduction_keeps_the_optimum_and_the_tie_rule() {
        // all-equal costs: column reduction assigns row 0, the row reduction
        // row 1, and every other row is left to one search step (the identity)
        let n = 300;
        let c = vec![1.0; n * n];
        let mut s = Solver::new(n, n).unwrap();
        s.reduce(&c).unwrap();
        s.solve(&c).unwrap();
        assert_eq!(s.relaxed, n - 2);
        assert_eq!(s.col4row, (0..n).collect::<Vec<_>>());
        // random square matrices: the same (unique) optimum with and without it,
        // with fewer rows relaxed; small integers (many ties): the same total
        let mut rng = Rng::new(27);
        for &(n, ref kind) in &[(1usize, Kind::Uniform), (2, Kind::Uniform), (64, Kind::Uniform), (257, Kind::Uniform), (120, Kind::SmallIntegers)] {
            let c = matrix(&mut rng, n, n, kind);
            let mut plain = Solver::new(n, n).unwrap();
            plain.solve(&c).unwrap();
            let mut reduced = Solver::new(n, n).unwrap();
            reduced.reduce(&c).unwrap();
            assert!(reduced.scans <= ARR_SCANS_PER_ROW * n);
            reduced.solve(&c).unwrap();
            let total = |s: &Solver| neumaier_sum(s.col4row.iter().enumerate().map(|(i, &j)| c[i * n + j]));
            if let Kind::Uniform = kind {
                assert_eq!(reduced.col4row, plain.col4row, "n = {}", n);
                if n > 64 {
                    assert!(reduced.relaxed < plain.relaxed / 2, "n = {}: {} rows relaxed against {}", n, reduced.relaxed, plain.relaxed);
                }
            } else {
                assert_eq!(total(&reduced), total(&plain));
            }
        }
    }

    #[test]
    fn empty_dimensions_give_an_empty_assignment() {
        for &(nr, nc) in &[(0usize, 0usize), (0, 3), (4, 0)] {
            let a = linear_sum_assignment(&[], nr, nc, false).unwrap();
            assert_eq!(a, Assignment { rows: vec![], cols: vec![], cost: 0.0 });
        }
    }

    #[test]
    fn bad_entries_and_shapes_are_errors_naming_the_cell() {
        let e = linear_sum_assignment(&[1.0, 2.0, 3.0, f64::NAN], 2, 2, false).unwrap_err();
        assert!(e.message.contains("NaN at row 1, column 1"), "{}", e.message);
        let e = linear_sum_assignment(&[1.0, f64::NEG_INFINITY, 3.0, 4.0, 5.0, 6.0], 2, 3, false).unwrap_err();
        assert!(e.message.contains("-Infinity at row 0, column 1"), "{}", e.message);
        let e = linear_sum_assignment(&[1.0, 2.0, 3.0, 4.0, f64::INFINITY, 6.0], 3, 2, true).unwrap_err();
        assert!(e.message.contains("+Infinity at row 2, column 0"), "{}", e.message);
        let e = linear_sum_assignment(&[1.0, 2.0, 3.0], 2, 2, false).unwrap_err();
        assert!(e.message.contains("3 values but the shape 2 x 2 needs 4"), "{}", e.message);
        assert_eq!(e.kind, crate::ErrorKind::InvalidData);
    }

    #[test]
    fn infeasible_matrices_are_reported() {
        let inf = f64::INFINITY;
        // row 1 has no allowed cell
        let e = linear_sum_assignment(&[1.0, 2.0, inf, inf], 2, 2, false).unwrap_err();
        assert!(e.message.contains("infeasible") && e.message.contains("first 2 rows"), "{}", e.message);
        // every row allows only column 0
        let e = linear_sum_assignment(&[1.0, inf, inf, 2.0, inf, inf], 2, 3, false).unwrap_err();
        assert!(e.message.contains("infeasible"), "{}", e.message);
        // tall: two columns, but only one row allows either (solved transposed)
        let e = linear_sum_assignment(&[inf, inf, 1.0, 2.0, inf, inf], 3, 2, false).unwrap_err();
        assert!(e.message.contains("2 columns"), "{}", e.message);
        // maximize: -inf forbids
        let e = linear_sum_assignment(&[f64::NEG_INFINITY; 4], 2, 2, true).unwrap_err();
        assert!(e.message.contains("-Infinity"), "{}", e.message);
    }

    #[test]
    fn larger_random_matrices_admit_no_improving_exchange() {
        // Beyond brute force (the TypeScript tests compare with scipy): no swap of
        // two rows' columns and no move of a row to an unused column lowers the
        // total; the transposed problem has the same optimum; maximizing the
        // negated matrix gives the same assignment.
        let mut rng = Rng::new(99);
        for &(nr, nc) in &[(50usize, 50usize), (40, 70), (70, 40), (200, 200)] {
            let c = matrix(&mut rng, nr, nc, &Kind::Uniform);
            let a = linear_sum_assignment(&c, nr, nc, false).unwrap();
            check_shape(&a, &c, nr, nc);
            let at = |r: usize, col: usize| c[r * nc + col];
            let mut used = vec![false; nc];
            a.cols.iter().for_each(|&col| used[col] = true);
            for x in 0..a.rows.len() {
                let (rx, cx) = (a.rows[x], a.cols[x]);
                for y in 0..a.rows.len() {
                    let (ry, cy) = (a.rows[y], a.cols[y]);
                    assert!(at(rx, cy) + at(ry, cx) >= at(rx, cx) + at(ry, cy) - 1e-12);
                }
                for col in (0..nc).filter(|&col| !used[col]) {
                    assert!(at(rx, col) >= at(rx, cx));
                }
            }
            let b = linear_sum_assignment(&transpose(&c, nr, nc).unwrap(), nc, nr, false).unwrap();
            assert!((a.cost - b.cost).abs() < 1e-12 * a.cost.abs());
            let mx = linear_sum_assignment(&c.iter().map(|x| -x).collect::<Vec<_>>(), nr, nc, true).unwrap();
            assert_eq!((&mx.rows, &mx.cols), (&a.rows, &a.cols));
        }
    }
}
