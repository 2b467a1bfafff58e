//! SMO for the one-class dual, min 1/2 a'Qa subject to 0 <= a_i <= 1 and
//! sum a_i = nu l (libsvm's scaling of Schölkopf's problem), as libsvm's
//! solver runs it (Chang and Lin, "LIBSVM: a library for support vector
//! machines", 2011, sections 4.1 and 5.1; Fan, Chen and Lin, "Working set
//! selection using second order information", JMLR 2005):
//!
//! - working set: i maximizes -G_t over the variables that can grow (a_t < 1);
//!   j, among those that can shrink (a_t > 0) with b_it = -G_i + G_t > 0,
//!   minimizes -b_it^2 / a_it, a_it = Q_ii + Q_tt - 2 Q_it (1e-12 where that
//!   is not positive): the second-order choice (WSS 3). Ties go to the later
//!   position, as libsvm's `>=` and `<=` comparisons do;
//! - stop when m(a) - M(a) = max_{up} -G_t + max_{low} G_t < eps (tol);
//! - the two-variable step is solved exactly and clipped to the box, keeping
//!   a_i + a_j;
//! - shrinking: every min(l, 1000) iterations, variables at a bound whose
//!   gradient says they will stay there leave the active set (positions are
//!   permuted so the active ones come first); the gradient of the inactive
//!   ones is rebuilt from G_bar (the part owed to variables at the upper
//!   bound) when the gap first falls below 10 eps, and at the end;
//! - rho: the mean gradient over free variables, or the middle of the
//!   bounds' interval when none is free.
//!
//! Kernel columns come from the cache (f32 entries, as libsvm's); gradients,
//! alphas and everything derived from them are f64.

use super::cache::Cache;
use super::{Kernel, Rows};
use crate::alloc;
use crate::error::Result;
use crate::kernels;

const TAU: f64 = 1e-12;
const LOWER: u8 = 0;
const UPPER: u8 = 1;
const FREE: u8 = 2;

/// The solver's result, alphas in the rows' own order.
pub(crate) struct Solution {
    pub alpha: Vec<f64>,
    pub rho: f64,
    /// 1/2 a'Qa, from the final gradient (libsvm's `obj`)
    pub objective: f64,
    pub n_iter: usize,
    /// false when the iteration limit stopped it
    pub converged: bool,
}

pub(crate) struct Settings {
    pub nu: f64,
    pub eps: f64,
    pub shrinking: bool,
    /// cache budget in f32 values
    pub cache_values: usize,
    /// None: libsvm's own limit, max(10^7, 100 l)
    pub max_iter: Option<usize>,
}

struct Smo<'a> {
    rows: &'a Rows,
    kernel: Kernel,
    l: usize,
    active: usize,
    alpha: Vec<f64>,
    g: Vec<f64>,
    g_bar: Vec<f64>,
    status: Vec<u8>,
    qd: Vec<f64>,
    /// the row at each position
    perm: Vec<u32>,
    /// squared norms by position
    sqp: Vec<f64>,
    cache: Cache,
    eps: f64,
    unshrink: bool,
    /// scratch for kernel columns: positions to compute, their rows, norms, values
    todo: Vec<usize>,
    idx: Vec<u32>,
    sq_buf: Vec<f64>,
    buf: Vec<f64>,
}

fn status_of(a: f64) -> u8 {
    if a >= 1.0 {
        UPPER
    } else if a <= 0.0 {
        LOWER
    } else {
        FREE
    }
}

impl<'a> Smo<'a> {
    /// Makes column i hold entries for positions 0..len, computing those it
    /// lacks. An entry the column of another position already holds (Q is
    /// symmetric, to the bit) is copied from there instead of computed.
    ///
    /// A new column takes up to three more new ones along when the cache has
    /// room for them without dropping any: those of the positions that can
    /// grow with the smallest gradients, which the working-set selection
    /// picks next (its i maximizes -G over them), so that each row loaded
    /// serves several columns (kernels::dots_gather). The values are the same
    /// whenever a column is computed, so this changes no result.
    fn column(&mut self, i: usize, len: usize) -> Result<()> {
        let start = self.cache.reserve(i, len)?;
        if start >= len {
            return Ok(());
        }
        let mut batch = [i; kernels::GATHER_ROWS];
        let mut nb = if start == 0 { self.companions(i, len, &mut batch) } else { 1 };
        // companions only where memory has room: none is worth dropping a column for
        let mut kept = 1;
        for k in 1..nb {
            if self.cache.reserve_spare(batch[k], len) {
                batch[kept] = batch[k];
                kept += 1;
            }
        }
        nb = kept;
        let mut cols: [Vec<f32>; kernels::GATHER_ROWS] = Default::default();
        for k in 0..nb {
            cols[k] = self.cache.take(batch[k]);
        }
        let last = batch[..nb].iter().copied().max().unwrap_or(i);
        self.todo.clear();
        for t in start..len {
            let have = self.cache.len(t);
            if have > last {
                let q = self.cache.col(t);
                for k in 0..nb {
                    cols[k][t] = q[batch[k]];
                }
            } else {
                self.todo.push(t);
            }
        }
        let m = self.todo.len();
        if m > 0 {
            for (q, &t) in self.todo.iter().enumerate() {
                self.idx[q] = self.perm[t];
                self.sq_buf[q] = self.sqp[t];
            }
            let (l, rows) = (self.l, self.rows);
            let mut xs: [&[f64]; kernels::GATHER_ROWS] = [&[]; kernels::GATHER_ROWS];
            for k in 0..nb {
                xs[k] = rows.row(self.perm[batch[k]] as usize);
            }
            kernels::dots_gather(&xs[..nb], &rows.values, rows.width, &self.idx[..m], m, &mut self.buf, l);
            for k in 0..nb {
                let v = &mut self.buf[k * l..k * l + m];
                self.kernel.from_dots(v, self.sqp[batch[k]], &self.sq_buf[..m]);
                for (q, &t) in self.todo.iter().enumerate() {
                    cols[k][t] = v[q] as f32;
                }
            }
        }
        for k in 0..nb {
            self.cache.put(batch[k], std::mem::take(&mut cols[k]));
        }
        Ok(())
    }

    /// Fills batch[1..] with the positions below `len`, other than i, that
    /// can grow (a < 1), have no column yet and have the smallest gradients,
    /// as many as the cache holds without dropping a column; returns the batch
    /// size.
    fn companions(&self, i: usize, len: usize, batch: &mut [usize; kernels::GATHER_ROWS]) -> usize {
        let room = self.cache.budget().saturating_sub(self.cache.used()) / len.max(1);
        let want = (kernels::GATHER_ROWS - 1).min(room);
        if want == 0 {
            return 1;
        }
        let mut n = 1;
        for t in 0..len {
            if t == i || self.status[t] == UPPER || self.cache.len(t) > 0 {
                continue;
            }
            // insertion into batch[1..n], kept by increasing gradient
            let g = self.g[t];
            if n <= want {
                batch[n] = t;
                n += 1;
            } else if g < self.g[batch[n - 1]] {
                batch[n - 1] = t;
            } else {
                continue;
            }
            let mut k = n - 1;
            while k > 1 && self.g[batch[k]] < self.g[batch[k - 1]] {
                batch.swap(k, k - 1);
                k -= 1;
            }
        }
        n
    }

    /// Columns 0..m at full length, where the solver starts (nothing is
    /// permuted yet, so positions are rows): the dot products as tiles of a
    /// matrix product (kernels::cross_dots), each computed once for both
    /// columns it belongs to. Returns false, computing nothing, when the cache
    /// cannot hold the m columns (then `column` computes them one by one).
    fn initial_columns(&mut self, m: usize) -> Result<bool> {
        const R: usize = 16;
        const S: usize = 64;
        let (l, w) = (self.l, self.rows.width);
        if m == 0 || m.saturating_mul(l) > self.cache.budget() {
            return Ok(false);
        }
        // room for all of them, or none: a column that memory cannot hold
        // leaves the columns to `column`, which drops older ones to make room
        for i in 0..m {
            if !self.cache.reserve_spare(i, l) {
                for k in 0..i {
                    self.cache.discard(k);
                }
                return Ok(false);
            }
        }
        let mut cols: Vec<Vec<f32>> = alloc::with_capacity(m)?;
        for i in 0..m {
            cols.push(self.cache.take(i));
        }
        let mut tile = alloc::zeros(R * S)?;
        let values = &self.rows.values;
        let sq = &self.rows.sq;
        let mut r0 = 0;
        while r0 < m {
            let nr = R.min(m - r0);
            let mut s0 = r0;
            while s0 < l {
                let ns = S.min(l - s0);
                kernels::cross_dots(&values[r0 * w..(r0 + nr) * w], nr, &values[s0 * w..(s0 + ns) * w], ns, w, &mut tile, S);
                for r in 0..nr {
                    let k = &mut tile[r * S..r * S + ns];
                    self.kernel.from_dots(k, sq[r0 + r], &sq[s0..s0 + ns]);
                    for (c, v) in cols[r0 + r][s0..s0 + ns].iter_mut().zip(k.iter()) {
                        *c = *v as f32;
                    }
                }
                // the same values in the columns of later blocks (the matrix is symmetric, to the bit)
                for s in 0..ns {
                    let t = s0 + s;
                    if t >= r0 + nr && t < m {
                        for r in 0..nr {
                            cols[t][r0 + r] = tile[r * S + s] as f32;
                        }
                    }
                }
                s0 += ns;
            }
            r0 += nr;
        }
        for (i, c) in cols.into_iter().enumerate() {
            self.cache.put(i, c);
        }
        Ok(true)
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.cache.swap(i, j);
        self.alpha.swap(i, j);
        self.g.swap(i, j);
        self.g_bar.swap(i, j);
        self.status.swap(i, j);
        self.qd.swap(i, j);
        self.perm.swap(i, j);
        self.sqp.swap(i, j);
    }

    /// The gradient of the inactive positions, rebuilt: G_bar plus what the
    /// free variables contribute (variables at 0 contribute nothing).
    fn reconstruct_gradient(&mut self) -> Result<()> {
        let (l, active) = (self.l, self.active);
        if active == l {
            return Ok(());
        }
        for j in active..l {
            self.g[j] = self.g_bar[j];
        }
        let n_free = (0..active).filter(|&j| self.status[j] == FREE).count();
        // both loops add the same products in the same order (Q is symmetric);
        // this picks the one computing fewer kernel entries, as libsvm does
        if (n_free as f64) * (l as f64) > 2.0 * (active as f64) * ((l - active) as f64) {
            for i in active..l {
                self.column(i, active)?;
                let q = self.cache.col(i);
                let mut gi = self.g[i];
                for j in 0..active {
                    if self.status[j] == FREE {
                        gi += self.alpha[j] * q[j] as f64;
                    }
                }
                self.g[i] = gi;
            }
        } else {
            for i in 0..active {
                if self.status[i] == FREE {
                    self.column(i, l)?;
                    let q = &self.cache.col(i)[active..l];
                    kernels::axpy_f32(&mut self.g[active..l], q, self.alpha[i]);
                }
            }
        }
        Ok(())
    }

    fn be_shrunk(&self, i: usize, gmax1: f64, gmax2: f64) -> bool {
        match self.status[i] {
            UPPER => -self.g[i] > gmax1,
            LOWER => self.g[i] > gmax2,
            _ => false,
        }
    }

    fn shrink(&mut self) -> Result<()> {
        // gmax1 = m(a) = max over those that can grow of -G; gmax2 = max over those that can shrink of G
        let (mut gmax1, mut gmax2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for i in 0..self.active {
            if self.status[i] != UPPER && -self.g[i] >= gmax1 {
                gmax1 = -self.g[i];
            }
            if self.status[i] != LOWER && self.g[i] >= gmax2 {
                gmax2 = self.g[i];
            }
        }
        if !self.unshrink && gmax1 + gmax2 <= self.eps * 10.0 {
            self.unshrink = true;
            self.reconstruct_gradient()?;
            self.active = self.l;
        }
        let mut i = 0;
        while i < self.active {
            if self.be_shrunk(i, gmax1, gmax2) {
                self.active -= 1;
                while self.active > i {
                    if !self.be_shrunk(self.active, gmax1, gmax2) {
                        self.swap(i, self.active);
                        break;
                    }
                    self.active -= 1;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// The working set (i, j) by WSS 3, or None when the active variables
    /// satisfy the stopping rule.
    fn select(&mut self) -> Result<Option<(usize, usize)>> {
        let active = self.active;
        let mut gmax = f64::NEG_INFINITY;
        let mut gi = None;
        for t in 0..active {
            if self.status[t] != UPPER && -self.g[t] >= gmax {
                gmax = -self.g[t];
                gi = Some(t);
            }
        }
        let i = match gi {
            Some(i) => i,
            // nothing can grow: m(a) is -inf and no pair improves
            None => return Ok(None),
        };
        self.column(i, active)?;
        let q = self.cache.col(i);
        let mut gmax2 = f64::NEG_INFINITY;
        let mut gj = None;
        let mut best = f64::INFINITY;
        for t in 0..active {
            if self.status[t] != LOWER {
                let gt = self.g[t];
                let diff = gmax + gt;
                if gt >= gmax2 {
                    gmax2 = gt;
                }
                if diff > 0.0 {
                    let a = self.qd[i] + self.qd[t] - 2.0 * q[t] as f64;
                    let obj = if a > 0.0 { -(diff * diff) / a } else { -(diff * diff) / TAU };
                    if obj <= best {
                        gj = Some(t);
                        best = obj;
                    }
                }
            }
        }
        match gj {
            Some(j) if gmax + gmax2 >= self.eps => Ok(Some((i, j))),
            _ => Ok(None),
        }
    }

    /// One step on the pair (i, j): the two-variable problem solved exactly,
    /// clipped to the box with a_i + a_j kept; then the gradients.
    fn step(&mut self, i: usize, j: usize) -> Result<()> {
        let active = self.active;
        self.column(i, active)?;
        self.cache.pin(i);
        let r = self.column(j, active);
        self.cache.unpin();
        r?;
        let (old_i, old_j) = (self.alpha[i], self.alpha[j]);
        let qij = self.cache.col(i)[j] as f64;
        let mut a = self.qd[i] + self.qd[j] - 2.0 * qij;
        if a <= 0.0 {
            a = TAU;
        }
        let delta = (self.g[i] - self.g[j]) / a;
        let sum = old_i + old_j;
        let (mut ai, mut aj) = (old_i - delta, old_j + delta);
        // C = 1 for every variable
        if sum > 1.0 {
            if ai > 1.0 {
                ai = 1.0;
                aj = sum - 1.0;
            }
        } else if aj < 0.0 {
            aj = 0.0;
            ai = sum;
        }
        if sum > 1.0 {
            if aj > 1.0 {
                aj = 1.0;
                ai = sum - 1.0;
            }
        } else if ai < 0.0 {
            ai = 0.0;
            aj = sum;
        }
        self.alpha[i] = ai;
        self.alpha[j] = aj;
        kernels::axpy2_f32(&mut self.g[..active], self.cache.col(i), ai - old_i, self.cache.col(j), aj - old_j);
        for k in [i, j] {
            let was_upper = self.status[k] == UPPER;
            self.status[k] = status_of(self.alpha[k]);
            if was_upper != (self.status[k] == UPPER) {
                let l = self.l;
                self.column(k, l)?;
                kernels::axpy_f32(&mut self.g_bar, self.cache.col(k), if was_upper { -1.0 } else { 1.0 });
            }
        }
        Ok(())
    }

    fn rho(&self) -> f64 {
        let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut n_free, mut sum_free) = (0usize, 0.0);
        for i in 0..self.active {
            let g = self.g[i];
            match self.status[i] {
                UPPER => lb = lb.max(g),
                LOWER => ub = ub.min(g),
                _ => {
                    n_free += 1;
                    sum_free += g;
                }
            }
        }
        if n_free > 0 {
            sum_free / n_free as f64
        } else if ub.is_finite() && lb.is_finite() {
            (ub + lb) / 2.0
        } else if lb.is_finite() {
            // every variable at the upper bound (nu = 1): libsvm's midpoint would be
            // infinite; the smallest rho the optimality conditions allow is kept
            lb
        } else {
            ub
        }
    }
}

/// Solves the one-class dual over `rows` (l >= 1) with the given kernel.
pub(crate) fn solve(rows: &Rows, kernel: Kernel, s: &Settings) -> Result<Solution> {
    let l = rows.n;
    // scikit-learn's start (its libsvm takes per-row weights, all 1 here): nu
    // summed over the rows, then dealt out in order, at most 1 each: the first
    // floor(nu l) rows at 1, the next at the rest
    let mut alpha = alloc::zeros(l)?;
    let mut left = 0.0;
    for _ in 0..l {
        left += s.nu;
    }
    let mut i = 0;
    while left > 0.0 && i < l {
        alpha[i] = left.min(1.0);
        left -= alpha[i];
        i += 1;
    }
    let status = alloc::collect(alpha.iter().map(|&a| status_of(a)))?;
    let perm = alloc::collect(0..l as u32)?;
    let sqp = alloc::copy(&rows.sq)?;
    let mut qd = alloc::zeros(l)?;
    for (i, q) in qd.iter_mut().enumerate() {
        // x'x is the squared norm Rows keeps (the same kernels::dot)
        let mut v = [rows.sq[i]];
        kernel.from_dots(&mut v, rows.sq[i], &rows.sq[i..i + 1]);
        *q = v[0];
    }
    let mut smo = Smo {
        rows,
        kernel,
        l,
        active: l,
        alpha,
        g: alloc::zeros(l)?,
        g_bar: alloc::zeros(l)?,
        status,
        qd,
        perm,
        sqp,
        cache: Cache::new(l, s.cache_values)?,
        eps: s.eps,
        unshrink: false,
        todo: alloc::with_capacity(l)?,
        idx: alloc::filled(0u32, l)?,
        sq_buf: alloc::zeros(l)?,
        buf: alloc::zeros(alloc::cells(kernels::GATHER_ROWS, l, 8)?)?,
    };
    // the variables off 0 are the first ones: their columns at once
    let nonzero = smo.status.iter().take_while(|&&st| st != LOWER).count();
    smo.initial_columns(nonzero)?;
    for i in 0..l {
        if smo.status[i] != LOWER {
            smo.column(i, l)?;
            kernels::axpy_f32(&mut smo.g, smo.cache.col(i), smo.alpha[i]);
            if smo.status[i] == UPPER {
                kernels::axpy_f32(&mut smo.g_bar, smo.cache.col(i), 1.0);
            }
        }
    }
    let limit = s.max_iter.unwrap_or_else(|| 10_000_000usize.max(l.saturating_mul(100).min(i32::MAX as usize)));
    let period = l.min(1000);
    let mut counter = period + 1;
    let mut n_iter = 0;
    let mut converged = true;
    loop {
        if n_iter >= limit {
            converged = false;
            break;
        }
        counter -= 1;
        if counter == 0 {
            counter = period;
            if s.shrinking {
                smo.shrink()?;
            }
        }
        let (i, j) = match smo.select()? {
            Some(w) => w,
            None => {
                // optimal on the active set: check again with every variable
                smo.reconstruct_gradient()?;
                smo.active = l;
                match smo.select()? {
                    Some(w) => {
                        counter = 1;
                        w
                    }
                    None => break,
                }
            }
        };
        n_iter += 1;
        smo.step(i, j)?;
    }
    if smo.active < l {
        smo.reconstruct_gradient()?;
        smo.active = l;
    }
    let rho = smo.rho();
    let mut v = 0.0;
    for i in 0..l {
        v += smo.alpha[i] * smo.g[i];
    }
    // the alphas in row order, in a buffer the solver is done with: the cache
    // may have taken all the memory there was
    let mut out = std::mem::take(&mut smo.g_bar);
    for i in 0..l {
        out[smo.perm[i] as usize] = smo.alpha[i];
    }
    Ok(Solution { alpha: out, rho, objective: v / 2.0, n_iter, converged })
}
