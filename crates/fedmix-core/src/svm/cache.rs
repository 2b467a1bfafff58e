//! The SVM solver's kernel-column cache: columns of Q by position, each a
//! prefix of its full length (the solver asks for the entries of its active
//! positions only), least recently used evicted first once the budget is
//! spent. Entries are f32, as libsvm keeps them (its `Qfloat`): half the
//! memory of f64 and, what matters more here, the same rounded values libsvm
//! solves with, so that the solver takes scikit-learn's steps (see mod.rs).
//!
//! The solver permutes positions as it shrinks (it swaps two positions);
//! `swap` keeps every cached column consistent with that: the two columns
//! trade places, and inside every column both entries are exchanged, or the
//! column is dropped when it holds only one of them.
//!
//! Columns are allocated one by one and fallibly: when memory runs out, older
//! columns are dropped and the allocation retried; only when none is left to
//! drop is it an allocation error.

use crate::error::{Error, Result};

/// Marks "no column" in the links of the LRU list.
const NONE: usize = usize::MAX;

pub(crate) struct Cache {
    cols: Vec<Vec<f32>>,
    /// LRU list through the cached columns: `head` least recently used.
    prev: Vec<usize>,
    next: Vec<usize>,
    head: usize,
    tail: usize,
    /// Values the columns may hold together, and hold now.
    budget: usize,
    used: usize,
    /// A column that must not be evicted (the one the solver holds while it
    /// asks for a second).
    pinned: usize,
}

impl Cache {
    /// A cache for `l` positions holding at most `budget` values (at least two
    /// full columns are always allowed, as the solver needs two at once).
    pub(crate) fn new(l: usize, budget: usize) -> Result<Cache> {
        let mut cols = crate::alloc::with_capacity(l)?;
        cols.resize_with(l, Vec::new);
        Ok(Cache {
            cols,
            prev: crate::alloc::filled(NONE, l)?,
            next: crate::alloc::filled(NONE, l)?,
            head: NONE,
            tail: NONE,
            budget: budget.max(l.saturating_mul(2)),
            used: 0,
            pinned: NONE,
        })
    }

    /// How many entries column `i` holds.
    #[inline]
    pub(crate) fn len(&self, i: usize) -> usize {
        self.cols[i].len()
    }

    /// Column i's entries.
    #[inline]
    pub(crate) fn col(&self, i: usize) -> &[f32] {
        &self.cols[i]
    }

    /// Column i taken out to be filled (put it back with `put`); other
    /// columns stay readable meanwhile.
    pub(crate) fn take(&mut self, i: usize) -> Vec<f32> {
        std::mem::take(&mut self.cols[i])
    }

    pub(crate) fn put(&mut self, i: usize, col: Vec<f32>) {
        self.cols[i] = col;
    }

    /// Values the columns may hold together.
    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    pub(crate) fn pin(&mut self, i: usize) {
        self.pinned = i;
    }

    pub(crate) fn unpin(&mut self) {
        self.pinned = NONE;
    }

    /// Values held by all columns.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n] = p;
        }
        self.prev[i] = NONE;
        self.next[i] = NONE;
    }

    /// Appends i as the most recently used.
    fn link(&mut self, i: usize) {
        self.prev[i] = self.tail;
        self.next[i] = NONE;
        if self.tail == NONE {
            self.head = i;
        } else {
            self.next[self.tail] = i;
        }
        self.tail = i;
    }

    /// Drops the least recently used column that is neither `keep` nor
    /// pinned; false when there is none.
    fn evict(&mut self, keep: usize) -> bool {
        let mut h = self.head;
        while h != NONE && (h == keep || h == self.pinned) {
            h = self.next[h];
        }
        if h == NONE {
            return false;
        }
        self.unlink(h);
        self.used -= self.cols[h].len();
        self.cols[h] = Vec::new();
        true
    }

    /// Makes column i hold `len` entries, the ones past its current length
    /// zero for the caller to compute, and marks it most recently used.
    /// Returns how many entries were already there (valid).
    pub(crate) fn reserve(&mut self, i: usize, len: usize) -> Result<usize> {
        let have = self.cols[i].len();
        if have > 0 {
            self.unlink(i);
        }
        if have < len {
            let more = len - have;
            while self.used + more > self.budget && self.evict(i) {}
            loop {
                if self.cols[i].try_reserve_exact(more).is_ok() {
                    break;
                }
                if !self.evict(i) {
                    if have > 0 {
                        self.link(i);
                    }
                    return Err(Error::allocation(len as f64 * 4.0));
                }
            }
            self.cols[i].resize(len, 0.0);
            self.used += more;
        }
        self.link(i);
        Ok(have)
    }

    /// Gives column i, which holds nothing yet, room for `len` entries (zero,
    /// for the caller to compute) without dropping any other column: false,
    /// leaving it empty, when the budget or memory has no room for it.
    pub(crate) fn reserve_spare(&mut self, i: usize, len: usize) -> bool {
        debug_assert!(self.cols[i].is_empty());
        if self.used + len > self.budget || self.cols[i].try_reserve_exact(len).is_err() {
            return false;
        }
        self.cols[i].resize(len, 0.0);
        self.used += len;
        self.link(i);
        true
    }

    /// Drops column i (reserved, but its values never computed).
    pub(crate) fn discard(&mut self, i: usize) {
        let len = self.cols[i].len();
        if len > 0 {
            self.unlink(i);
            self.used -= len;
            self.cols[i] = Vec::new();
        }
    }

    /// Exchanges positions i and j: their columns trade places, and in every
    /// column long enough to hold both entries they are exchanged too; a
    /// column holding only the first of them is dropped.
    pub(crate) fn swap(&mut self, i: usize, j: usize) {
        if i == j {
            return;
        }
        let (ci, cj) = (self.cols[i].len() > 0, self.cols[j].len() > 0);
        if ci {
            self.unlink(i);
        }
        if cj {
            self.unlink(j);
        }
        self.cols.swap(i, j);
        if cj {
            self.link(i);
        }
        if ci {
            self.link(j);
        }
        let (lo, hi) = if i < j { (i, j) } else { (j, i) };
        let mut h = self.head;
        while h != NONE {
            let next = self.next[h];
            let len = self.cols[h].len();
            if len > hi {
                self.cols[h].swap(lo, hi);
            } else if len > lo {
                self.unlink(h);
                self.used -= len;
                self.cols[h] = Vec::new();
            }
            h = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(c: &mut Cache, i: usize, len: usize, f: impl Fn(usize) -> f32) {
        let start = c.reserve(i, len).unwrap();
        let mut col = c.take(i);
        for t in start..len {
            col[t] = f(t);
        }
        c.put(i, col);
    }

    #[test]
    fn evicts_the_least_recently_used_within_budget() {
        let mut c = Cache::new(4, 8).unwrap();
        fill(&mut c, 0, 4, |t| t as f32);
        fill(&mut c, 1, 4, |t| 10.0 + t as f32);
        assert_eq!(c.used(), 8);
        // touching 0 makes 1 the oldest
        assert_eq!(c.reserve(0, 4).unwrap(), 4);
        fill(&mut c, 2, 4, |t| 20.0 + t as f32);
        assert_eq!(c.len(1), 0);
        assert_eq!(c.col(0), &[0.0, 1.0, 2.0, 3.0]);
        assert_eq!(c.used(), 8);
        // a pinned column survives
        c.pin(2);
        assert_eq!(c.reserve(0, 4).unwrap(), 4);
        fill(&mut c, 3, 4, |_| 1.0);
        assert_eq!(c.len(2), 4);
        assert_eq!(c.len(0), 0);
        c.unpin();
    }

    #[test]
    fn spare_room_drops_nothing() {
        let mut c = Cache::new(3, 6).unwrap();
        fill(&mut c, 0, 3, |t| t as f32);
        assert!(c.reserve_spare(1, 3));
        assert!(!c.reserve_spare(2, 3));
        assert_eq!((c.len(0), c.len(2), c.used()), (3, 0, 6));
        c.discard(1);
        assert_eq!((c.len(1), c.used()), (0, 3));
        assert!(c.reserve_spare(2, 3));
    }

    #[test]
    fn columns_grow_from_their_prefix() {
        let mut c = Cache::new(5, 100).unwrap();
        fill(&mut c, 3, 2, |t| t as f32);
        assert_eq!(c.reserve(3, 5).unwrap(), 2);
        assert_eq!(c.col(3), &[0.0, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!(c.used(), 5);
    }

    #[test]
    fn swaps_keep_columns_consistent() {
        // column i holds K(i, t) = 10 i + t for positions; swapping positions 1 and 3
        let mut c = Cache::new(5, 100).unwrap();
        for i in 0..5 {
            fill(&mut c, i, if i == 4 { 2 } else { 5 }, |t| (10 * i + t) as f32);
        }
        c.swap(3, 1);
        // the columns traded places
        assert_eq!(c.col(1), &[30.0, 33.0, 32.0, 31.0, 34.0]);
        assert_eq!(c.col(3), &[10.0, 13.0, 12.0, 11.0, 14.0]);
        assert_eq!(c.col(0), &[0.0, 3.0, 2.0, 1.0, 4.0]);
        // a column of 2 entries holds position 1 but not 3: dropped
        assert_eq!(c.len(4), 0);
        assert_eq!(c.used(), 20);
    }
}
