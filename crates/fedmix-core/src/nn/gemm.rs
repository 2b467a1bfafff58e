//! C (m x n, row-major) = A (m x k) B (k x n), or C += A B: the matrix products
//! of the forward pass (X Wᵀ), the backward pass (δ W) and the weight gradient
//! (δᵀ X), all through one cache-blocked kernel in the manner of Goto's GEMM.
//! A and B are strided views, so transposes cost nothing but their packing:
//! blocks of B (KC x NC) and A (MC x KC) are copied into contiguous panels
//! NR columns and MR rows wide (zero-padded at the edges), and a 4 x 8
//! micro-kernel keeps its tile of C in eight F4 accumulators while it streams
//! through the panels. Every sum runs over k in increasing order, KC terms at
//! a time, so results do not depend on the build (see lanes.rs).

use super::lanes::F4;
use crate::alloc;
use crate::error::Result;

/// Rows of a micro-tile (one A value broadcast per row).
pub const MR: usize = 4;
/// Columns of a micro-tile (two F4 lanes).
pub const NR: usize = 8;
/// Depth of a packed block: an MR x KC and a KC x NR panel (4 + 8 KiB) stay in L1.
const KC: usize = 256;
/// Rows of A packed at a time (MC x KC = 64 KiB, in L2).
const MC: usize = 64;
/// Columns of B packed at a time (KC x NC = 256 KiB, in L2).
const NC: usize = 256;

/// A read-only strided matrix: element (i, j) is `data[i * rs + j * cs]`.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub rs: usize,
    pub cs: usize,
}

impl<'a> View<'a> {
    /// A row-major matrix with `cols` columns.
    pub fn rows(data: &'a [f32], cols: usize) -> Self {
        View { data, rs: cols, cs: 1 }
    }
    /// The transpose of a row-major matrix with `cols` columns.
    pub fn transposed(data: &'a [f32], cols: usize) -> Self {
        View { data, rs: 1, cs: cols }
    }
    /// Panics (a trap in WASM, never undefined behaviour) unless rows x cols fit.
    fn check(&self, rows: usize, cols: usize) {
        if rows > 0 && cols > 0 {
            assert!((rows - 1) * self.rs + (cols - 1) * self.cs < self.data.len(), "gemm operand out of bounds");
        }
    }
}

/// The packing buffers, sized once for the largest product of a call.
pub struct Packs {
    a: Vec<f32>,
    b: Vec<f32>,
}

fn round_up(x: usize, to: usize) -> usize {
    (x + to - 1) / to * to
}

impl Packs {
    /// Room for products with at most `m` rows, `n` columns and depth `k`.
    pub fn new(m: usize, n: usize, k: usize) -> Result<Packs> {
        let kc = k.min(KC).max(1);
        Ok(Packs {
            a: alloc::filled(0.0f32, round_up(m.min(MC).max(1), MR) * kc)?,
            b: alloc::filled(0.0f32, kc * round_up(n.min(NC).max(1), NR))?,
        })
    }

    /// Bytes that `new(m, n, k)` allocates.
    pub fn bytes(m: usize, n: usize, k: usize) -> usize {
        let kc = k.min(KC).max(1);
        4 * (round_up(m.min(MC).max(1), MR) * kc + kc * round_up(n.min(NC).max(1), NR))
    }
}

/// C = A B (`accumulate` false) or C += A B, C row-major with row stride `ldc`.
#[allow(clippy::too_many_arguments)]
pub fn gemm(m: usize, n: usize, k: usize, a: View, b: View, c: &mut [f32], ldc: usize, accumulate: bool, packs: &mut Packs) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(ldc >= n && (m - 1) * ldc + n <= c.len(), "gemm output out of bounds");
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                c[i * ldc..i * ldc + n].iter_mut().for_each(|v| *v = 0.0);
            }
        }
        return;
    }
    a.check(m, k);
    b.check(k, n);
    let (mc_max, nc_max, kc_max) = (round_up(m.min(MC), MR), round_up(n.min(NC), NR), k.min(KC));
    assert!(packs.a.len() >= mc_max * kc_max && packs.b.len() >= kc_max * nc_max, "gemm packs too small");
    let mut jc = 0;
    while jc < n {
        let nc = NC.min(n - jc);
        let mut pc = 0;
        while pc < k {
            let kc = KC.min(k - pc);
            unsafe { pack_b(b, pc, kc, jc, nc, &mut packs.b) };
            let overwrite = !accumulate && pc == 0;
            let mut ic = 0;
            while ic < m {
                let mc = MC.min(m - ic);
                unsafe { pack_a(a, ic, mc, pc, kc, &mut packs.a) };
                let mut jr = 0;
                while jr < nc {
                    let nr = NR.min(nc - jr);
                    let pb = packs.b[jr * kc..].as_ptr();
                    let mut ir = 0;
                    while ir < mc {
                        let mr = MR.min(mc - ir);
                        let pa = packs.a[ir * kc..].as_ptr();
                        let out = &mut c[(ic + ir) * ldc + jc + jr..];
                        unsafe { micro(kc, pa, pb, out, ldc, mr, nr, overwrite) };
                        ir += MR;
                    }
                    jr += NR;
                }
                ic += MC;
            }
            pc += KC;
        }
        jc += NC;
    }
}

/// Packs rows ic..ic+mc, columns pc..pc+kc of A into panels of MR rows:
/// panel p holds, for each kk, the MR values A(ic + p MR + r, pc + kk).
///
/// # Safety
/// The block lies inside `a` (View::check) and `out` holds ceil(mc / MR) MR kc values.
unsafe fn pack_a(a: View, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut [f32]) {
    let src = a.data.as_ptr();
    let dst = out.as_mut_ptr();
    let mut p = 0;
    while p * MR < mc {
        let panel = dst.add(p * MR * kc);
        let rows = MR.min(mc - p * MR);
        let first = src.add((ic + p * MR) * a.rs + pc * a.cs);
        let mut done = 0;
        if rows == MR && a.rs == 1 {
            // A transposed: the MR values of each kk are contiguous
            for kk in 0..kc {
                F4::load(first.add(kk * a.cs)).store(panel.add(kk * MR));
            }
            done = kc;
        } else if rows == MR && a.cs == 1 {
            // A row-major: four rows of four kk at a time, transposed
            while done + 4 <= kc {
                let r = [F4::load(first.add(done)), F4::load(first.add(a.rs + done)), F4::load(first.add(2 * a.rs + done)), F4::load(first.add(3 * a.rs + done))];
                for (j, col) in F4::transpose(r).iter().enumerate() {
                    col.store(panel.add((done + j) * MR));
                }
                done += 4;
            }
        }
        for r in 0..MR {
            if r < rows {
                let row = first.add(r * a.rs);
                for kk in done..kc {
                    *panel.add(kk * MR + r) = *row.add(kk * a.cs);
                }
            } else {
                for kk in done..kc {
                    *panel.add(kk * MR + r) = 0.0;
                }
            }
        }
        p += 1;
    }
}

/// Packs rows pc..pc+kc, columns jc..jc+nc of B into panels of NR columns:
/// panel q holds, for each kk, the NR values B(pc + kk, jc + q NR + c).
///
/// # Safety
/// The block lies inside `b` and `out` holds kc ceil(nc / NR) NR values.
unsafe fn pack_b(b: View, pc: usize, kc: usize, jc: usize, nc: usize, out: &mut [f32]) {
    let src = b.data.as_ptr();
    let dst = out.as_mut_ptr();
    let mut q = 0;
    while q * NR < nc {
        let panel = dst.add(q * NR * kc);
        let width = NR.min(nc - q * NR);
        let first = src.add(pc * b.rs + (jc + q * NR) * b.cs);
        let mut done = 0;
        if width == NR && b.cs == 1 {
            // rows of B are contiguous: two lane copies per kk
            for kk in 0..kc {
                let s = first.add(kk * b.rs);
                F4::load(s).store(panel.add(kk * NR));
                F4::load(s.add(4)).store(panel.add(kk * NR + 4));
            }
            done = kc;
        } else if width == NR && b.rs == 1 {
            // B transposed (columns contiguous): 4 x 4 blocks, transposed
            while done + 4 <= kc {
                for h in 0..2 {
                    let c = first.add(done + 4 * h * b.cs);
                    let r = [F4::load(c), F4::load(c.add(b.cs)), F4::load(c.add(2 * b.cs)), F4::load(c.add(3 * b.cs))];
                    for (j, row) in F4::transpose(r).iter().enumerate() {
                        row.store(panel.add((done + j) * NR + 4 * h));
                    }
                }
                done += 4;
            }
        }
        for c in 0..NR {
            if c < width {
                let col = first.add(c * b.cs);
                for kk in done..kc {
                    *panel.add(kk * NR + c) = *col.add(kk * b.rs);
                }
            } else {
                for kk in done..kc {
                    *panel.add(kk * NR + c) = 0.0;
                }
            }
        }
        q += 1;
    }
}

/// The MR x NR tile at `c` (the first `mr` rows and `nr` columns of it are
/// real) gets the product of an A panel and a B panel of depth kc, added to it
/// or (`overwrite`) in place of it.
///
/// # Safety
/// Panels hold kc MR and kc NR values; `c` covers (mr - 1) ldc + nr values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn micro(kc: usize, pa: *const f32, pb: *const f32, c: &mut [f32], ldc: usize, mr: usize, nr: usize, overwrite: bool) {
    let z = F4::zero();
    let (mut c00, mut c01, mut c10, mut c11, mut c20, mut c21, mut c30, mut c31) = (z, z, z, z, z, z, z, z);
    for kk in 0..kc {
        let b0 = F4::load(pb.add(kk * NR));
        let b1 = F4::load(pb.add(kk * NR + 4));
        let a = pa.add(kk * MR);
        let a0 = F4::splat(*a);
        c00 = a0.madd(b0, c00);
        c01 = a0.madd(b1, c01);
        let a1 = F4::splat(*a.add(1));
        c10 = a1.madd(b0, c10);
        c11 = a1.madd(b1, c11);
        let a2 = F4::splat(*a.add(2));
        c20 = a2.madd(b0, c20);
        c21 = a2.madd(b1, c21);
        let a3 = F4::splat(*a.add(3));
        c30 = a3.madd(b0, c30);
        c31 = a3.madd(b1, c31);
    }
    let acc = [[c00, c01], [c10, c11], [c20, c21], [c30, c31]];
    let out = c.as_mut_ptr();
    if nr == NR {
        for (r, row) in acc.iter().enumerate().take(mr) {
            let p = out.add(r * ldc);
            if overwrite {
                row[0].store(p);
                row[1].store(p.add(4));
            } else {
                F4::load(p).add(row[0]).store(p);
                F4::load(p.add(4)).add(row[1]).store(p.add(4));
            }
        }
    } else {
        let mut tile = [0.0f32; MR * NR];
        for (r, row) in acc.iter().enumerate() {
            row[0].store(tile.as_mut_ptr().add(r * NR));
            row[1].store(tile.as_mut_ptr().add(r * NR + 4));
        }
        for r in 0..mr {
            for j in 0..nr {
                let p = out.add(r * ldc + j);
                *p = if overwrite { tile[r * NR + j] } else { *p + tile[r * NR + j] };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> f32 {
        *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// The product in f64, element by element.
    fn naive(m: usize, n: usize, k: usize, a: View, b: View) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a.data[i * a.rs + l * a.cs] as f64 * b.data[l * b.rs + j * b.cs] as f64).sum();
            }
        }
        c
    }

    #[test]
    fn blocked_products_match_the_naive_one_for_every_edge_and_transpose() {
        let mut s = 3u64;
        // shapes around the tile and block sizes: partial tiles, several k blocks, several n blocks
        let shapes = [(1, 1, 1), (3, 5, 2), (4, 8, 1), (5, 9, 7), (17, 33, 300), (64, 8, 256), (65, 257, 513), (128, 64, 784), (33, 784, 32)];
        for &(m, n, k) in &shapes {
            for &(ta, tb) in &[(false, false), (true, false), (false, true), (true, true)] {
                let av: Vec<f32> = (0..m * k).map(|_| lcg(&mut s)).collect();
                let bv: Vec<f32> = (0..k * n).map(|_| lcg(&mut s)).collect();
                let a = if ta { View::transposed(&av, m) } else { View::rows(&av, k) };
                let b = if tb { View::transposed(&bv, k) } else { View::rows(&bv, n) };
                let want = naive(m, n, k, a, b);
                let mut packs = Packs::new(m, n, k).unwrap();
                // the output sits in a wider matrix (ldc > n), whose other columns stay untouched
                let ldc = n + 3;
                let init: Vec<f32> = (0..m * ldc).map(|_| lcg(&mut s)).collect();
                for &accumulate in &[false, true] {
                    let mut c = init.clone();
                    gemm(m, n, k, a, b, &mut c, ldc, accumulate, &mut packs);
                    for i in 0..m {
                        for j in 0..ldc {
                            let got = c[i * ldc + j] as f64;
                            if j >= n {
                                assert_eq!(c[i * ldc + j], init[i * ldc + j]);
                                continue;
                            }
                            let e = want[i * n + j] + if accumulate { init[i * ldc + j] as f64 } else { 0.0 };
                            // f32 sums of k products of values below 1
                            assert!((got - e).abs() <= 2e-7 * (k as f64 + 4.0), "{}x{}x{} ta={} tb={} acc={} ({}, {}): {} vs {}", m, n, k, ta, tb, accumulate, i, j, got, e);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn packs_are_sized_by_what_they_hold() {
        assert_eq!(Packs::bytes(1, 1, 1), 4 * (MR + NR));
        assert_eq!(Packs::bytes(1000, 1000, 1000), 4 * (MC * KC + KC * NC));
        let p = Packs::new(5, 9, 3).unwrap();
        assert_eq!(4 * (p.a.len() + p.b.len()), Packs::bytes(5, 9, 3));
    }
}
