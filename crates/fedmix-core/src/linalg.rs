//! Small dense linear algebra on row-major d x d matrices (covariances,
//! precisions and their Cholesky factors; d is the feature count). A d x d
//! buffer can be large (8 MB at d = 1000): callers pass scratch they allocated
//! fallibly, or the function allocates through crate::alloc.

use crate::alloc;
use crate::error::{Error, Result};

/// Lower Cholesky factor L of a symmetric positive-definite `a` (only its lower
/// triangle is read), written to `out` with the strict upper triangle zeroed.
/// Err(j) names the first pivot that is not positive (or not finite).
pub fn cholesky_lower(a: &[f64], d: usize, out: &mut [f64]) -> std::result::Result<(), usize> {
    cholesky_lower_floor(a, d, out, None)
}

/// As `cholesky_lower`, but a squared pivot must also exceed `floor[j]`: a pivot
/// below the rounding noise of the data is a singular matrix in disguise.
pub fn cholesky_lower_floor(a: &[f64], d: usize, out: &mut [f64], floor: Option<&[f64]>) -> std::result::Result<(), usize> {
    for v in out[..d * d].iter_mut() {
        *v = 0.0;
    }
    for j in 0..d {
        let mut diag = a[j * d + j];
        for m in 0..j {
            diag -= out[j * d + m] * out[j * d + m];
        }
        if !(diag > floor.map_or(0.0, |f| f[j])) || !diag.is_finite() {
            return Err(j);
        }
        let ljj = diag.sqrt();
        out[j * d + j] = ljj;
        for i in j + 1..d {
            let mut s = a[i * d + j];
            for m in 0..j {
                s -= out[i * d + m] * out[j * d + m];
            }
            out[i * d + j] = s / ljj;
        }
    }
    Ok(())
}

/// Inverse of a lower-triangular matrix with non-zero diagonal, by forward
/// substitution on each unit vector (what solve_triangular(L, I, lower=True) does).
pub fn invert_lower(l: &[f64], d: usize, out: &mut [f64]) {
    for v in out[..d * d].iter_mut() {
        *v = 0.0;
    }
    for c in 0..d {
        for i in c..d {
            let mut s = if i == c { 1.0 } else { 0.0 };
            for m in c..i {
                s -= l[i * d + m] * out[m * d + c];
            }
            out[i * d + c] = s / l[i * d + i];
        }
    }
}

pub fn transpose(a: &[f64], d: usize, out: &mut [f64]) {
    for i in 0..d {
        for j in 0..d {
            out[j * d + i] = a[i * d + j];
        }
    }
}

/// out = a a^T
pub fn mul_transpose_self(a: &[f64], d: usize, out: &mut [f64]) {
    for i in 0..d {
        for j in 0..d {
            let mut s = 0.0;
            for m in 0..d {
                s += a[i * d + m] * a[j * d + m];
            }
            out[i * d + j] = s;
        }
    }
}

/// Inverse of a symmetric positive-definite matrix through its Cholesky factor;
/// `scratch` holds 2 d x d values.
pub fn invert_spd(a: &[f64], d: usize, out: &mut [f64], scratch: &mut [f64]) -> std::result::Result<(), usize> {
    let (l, li) = scratch[..2 * d * d].split_at_mut(d * d);
    cholesky_lower(a, d, l)?;
    invert_lower(l, d, li);
    // a^-1 = L^-T L^-1
    for i in 0..d {
        for j in 0..d {
            let mut s = 0.0;
            for m in i.max(j)..d {
                s += li[m * d + i] * li[m * d + j];
            }
            out[i * d + j] = s;
        }
    }
    Ok(())
}

/// numpy.allclose(a, a.T) with its default tolerances (rtol 1e-5, atol 1e-8).
pub fn is_symmetric(a: &[f64], d: usize) -> bool {
    for i in 0..d {
        for j in 0..d {
            let (x, y) = (a[i * d + j], a[j * d + i]);
            if !((x - y).abs() <= 1e-8 + 1e-5 * y.abs()) {
                return false;
            }
        }
    }
    true
}

/// Which triangle of `a` holds its non-zeros: Some(true) upper, Some(false) lower
/// (a diagonal matrix counts as lower), None when both triangles have entries.
pub fn triangle(a: &[f64], d: usize) -> Option<bool> {
    let mut has_upper = false;
    let mut has_lower = false;
    for i in 0..d {
        for j in 0..d {
            if a[i * d + j] != 0.0 {
                if j > i {
                    has_upper = true;
                } else if j < i {
                    has_lower = true;
                }
            }
        }
    }
    match (has_upper, has_lower) {
        (true, true) => None,
        (true, false) => Some(true),
        _ => Some(false),
    }
}

/// Eigendecomposition of a symmetric d x d matrix `a` (row-major; only its
/// lower triangle is read): the eigenvalues in descending order, and the
/// eigenvectors as the rows of a d x d row-major matrix, in the same order.
/// Householder reduction to tridiagonal form, then the QL algorithm with
/// implicit shifts (EISPACK tred2/tql2, as in JAMA): O(d^3), backward stable,
/// so eigenvalues are accurate to about eps * ||a|| and an eigenvector to about
/// eps * ||a|| / (its gap to the nearest other eigenvalue). Signs of the
/// eigenvectors are whatever the algorithm yields; callers that need a
/// convention impose it. An eigenvalue that did not converge (only possible
/// for non-finite input) is a numerical error naming it.
pub fn symmetric_eigen(a: &[f64], d: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    assert!(a.len() >= d * d);
    if d == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    // v holds the symmetric matrix (from the lower triangle), then the eigenvectors as columns
    let mut v = alloc::zeros(d * d)?;
    for i in 0..d {
        for j in 0..=i {
            v[i * d + j] = a[i * d + j];
            v[j * d + i] = a[i * d + j];
        }
    }
    let mut diag = vec![0.0; d];
    let mut off = vec![0.0; d];
    tridiagonalize(&mut v, d, &mut diag, &mut off, true);
    tridiagonal_ql(&mut v, d, &mut diag, &mut off, true).map_err(|i| Error::numerical(format!("the eigenvalue iteration did not converge at eigenvalue {}", i)))?;
    // descending; a stable sort keeps equal eigenvalues in the algorithm's order
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&p, &q| diag[q].total_cmp(&diag[p]));
    let values = order.iter().map(|&i| diag[i]).collect();
    // the rows of the result are v's columns; v itself is no longer needed after
    let mut vectors = alloc::zeros(d * d)?;
    for (r, &i) in order.iter().enumerate() {
        for k in 0..d {
            vectors[r * d + k] = v[k * d + i];
        }
    }
    Ok((values, vectors))
}

/// V diag(f(lambda)) V' of a symmetric d x d `a` (row-major; only its lower
/// triangle is read), from its eigen-decomposition: a matrix function, such as
/// the square root (f = sqrt of the eigenvalue floored at 0) or the nearest
/// matrix with eigenvalues at least a floor (f = max(lambda, floor)).
pub fn symmetric_function(a: &[f64], d: usize, f: impl Fn(f64) -> f64) -> Result<Vec<f64>> {
    let (values, vectors) = symmetric_eigen(a, d)?;
    let mut out = alloc::zeros(d * d)?;
    for (r, &value) in values.iter().enumerate() {
        let fr = f(value);
        if fr == 0.0 {
            continue;
        }
        let v = &vectors[r * d..(r + 1) * d];
        for i in 0..d {
            let vi = v[i] * fr;
            for j in 0..d {
                out[i * d + j] += vi * v[j];
            }
        }
    }
    Ok(out)
}

/// The symmetric positive semi-definite square root of a symmetric matrix
/// (scipy.linalg.sqrtm for a positive semi-definite one; negative eigenvalues,
/// rounding noise of a singular matrix, count as 0).
pub fn sqrtm(a: &[f64], d: usize) -> Result<Vec<f64>> {
    symmetric_function(a, d, |x| x.max(0.0).sqrt())
}

/// The eigenvalues alone (unsorted) of a symmetric d x d `a` (row-major; only
/// its lower triangle is read), into `values`: the same Householder and QL
/// steps as `symmetric_eigen`, so the same values, without accumulating the
/// eigenvectors (about a third of the work). `v` (d x d) and `off` (d) are
/// scratch. Err(i) names an eigenvalue that did not converge (non-finite input).
pub fn symmetric_eigenvalues(a: &[f64], d: usize, v: &mut [f64], values: &mut [f64], off: &mut [f64]) -> std::result::Result<(), usize> {
    assert!(a.len() >= d * d && v.len() >= d * d && values.len() >= d && off.len() >= d);
    if d == 0 {
        return Ok(());
    }
    for i in 0..d {
        for j in 0..=i {
            v[i * d + j] = a[i * d + j];
            v[j * d + i] = a[i * d + j];
        }
    }
    tridiagonalize(v, d, values, off, false);
    tridiagonal_ql(v, d, values, off, false)
}

/// Householder reduction of the symmetric `v` (d x d, row-major) to tridiagonal
/// form (EISPACK tred2): on return `diag` is the diagonal, `off[1..]` the
/// subdiagonal (off[0] = 0), and, with `vectors`, `v` the orthogonal
/// transformation (without, `v` is left as scratch).
fn tridiagonalize(v: &mut [f64], d: usize, diag: &mut [f64], off: &mut [f64], vectors: bool) {
    let n = d;
    for j in 0..n {
        diag[j] = v[(n - 1) * n + j];
    }
    for i in (1..n).rev() {
        // scaling guards the sum of squares against overflow and underflow
        let scale: f64 = diag[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            off[i] = diag[i - 1];
            for j in 0..i {
                diag[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
                v[j * n + i] = 0.0;
            }
        } else {
            for x in diag[..i].iter_mut() {
                *x /= scale;
                h += *x * *x;
            }
            let mut f = diag[i - 1];
            let mut g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
            off[i] = scale * g;
            h -= f * g;
            diag[i - 1] = f - g;
            for x in off[..i].iter_mut() {
                *x = 0.0;
            }
            for j in 0..i {
                f = diag[j];
                v[j * n + i] = f;
                g = off[j] + v[j * n + j] * f;
                for k in j + 1..i {
                    g += v[k * n + j] * diag[k];
                    off[k] += v[k * n + j] * f;
                }
                off[j] = g;
            }
            f = 0.0;
            for j in 0..i {
                off[j] /= h;
                f += off[j] * diag[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                off[j] -= hh * diag[j];
            }
            for j in 0..i {
                f = diag[j];
                g = off[j];
                for k in j..i {
                    v[k * n + j] -= f * off[k] + g * diag[k];
                }
                diag[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
            }
        }
        diag[i] = h;
    }
    if !vectors {
        // the reduced diagonal sits on v's diagonal (tred2 moves it to diag while accumulating)
        for j in 0..n {
            diag[j] = v[j * n + j];
        }
        off[0] = 0.0;
        return;
    }
    // accumulate the transformations
    for i in 0..n - 1 {
        v[(n - 1) * n + i] = v[i * n + i];
        v[i * n + i] = 1.0;
        let h = diag[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                diag[k] = v[k * n + i + 1] / h;
            }
            for j in 0..=i {
                let mut g = 0.0;
                for k in 0..=i {
                    g += v[k * n + i + 1] * v[k * n + j];
                }
                for k in 0..=i {
                    v[k * n + j] -= g * diag[k];
                }
            }
        }
        for k in 0..=i {
            v[k * n + i + 1] = 0.0;
        }
    }
    for j in 0..n {
        diag[j] = v[(n - 1) * n + j];
        v[(n - 1) * n + j] = 0.0;
    }
    v[(n - 1) * n + n - 1] = 1.0;
    off[0] = 0.0;
}

/// Eigenvalues and eigenvectors of the symmetric tridiagonal matrix (`diag`,
/// `off[1..]`) by QL with implicit shifts (EISPACK tql2), rotating the columns
/// of `v` when `vectors`. Unsorted on return.
fn tridiagonal_ql(v: &mut [f64], d: usize, diag: &mut [f64], off: &mut [f64], vectors: bool) -> std::result::Result<(), usize> {
    // EISPACK converges in 1 to 2 iterations per eigenvalue in practice
    const MAX_ITER: usize = 60;
    let n = d;
    for i in 1..n {
        off[i - 1] = off[i];
    }
    off[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1: f64 = 0.0;
    let eps = f64::EPSILON;
    for l in 0..n {
        // find a negligible subdiagonal element
        tst1 = tst1.max(diag[l].abs() + off[l].abs());
        let mut m = l;
        while m < n - 1 && off[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                if iter > MAX_ITER {
                    return Err(l);
                }
                // implicit shift
                let mut g = diag[l];
                let mut p = (diag[l + 1] - g) / (2.0 * off[l]);
                let mut r = p.hypot(1.0);
                if p < 0.0 {
                    r = -r;
                }
                diag[l] = off[l] / (p + r);
                diag[l + 1] = off[l] * (p + r);
                let dl1 = diag[l + 1];
                let mut h = g - diag[l];
                for x in diag[l + 2..n].iter_mut() {
                    *x -= h;
                }
                f += h;
                // implicit QL transformation
                p = diag[m];
                let mut c = 1.0;
                let mut c2 = c;
                let mut c3 = c;
                let el1 = off[l + 1];
                let mut s = 0.0;
                let mut s2 = 0.0;
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    g = c * off[i];
                    h = c * p;
                    r = p.hypot(off[i]);
                    off[i + 1] = s * r;
                    s = off[i] / r;
                    c = p / r;
                    p = c * diag[i] - s * g;
                    diag[i + 1] = h + s * (c * g + s * diag[i]);
                    for k in 0..if vectors { n } else { 0 } {
                        let t = v[k * n + i + 1];
                        v[k * n + i + 1] = s * v[k * n + i] + c * t;
                        v[k * n + i] = c * v[k * n + i] - s * t;
                    }
                }
                p = -s * s2 * c3 * el1 * off[l] / dl1;
                off[l] = s * p;
                diag[l] = c * p;
                // written so that NaN keeps iterating into the error
                if off[l].abs() <= eps * tst1 {
                    break;
                }
            }
        }
        diag[l] += f;
        off[l] = 0.0;
    }
    Ok(())
}

/// Whether the symmetric `a` (lower triangle read) is positive semidefinite up to
/// the rounding of the sums it was computed from, and up to `abs_tol`: entry
/// (j, l) may differ from a positive semidefinite matrix's by `rel_tol`
/// sqrt(scale_j scale_l), `scale[j]` the magnitude its feature's entries were
/// computed from (a sum of squares, so every |a_jl| <= sqrt(scale_j scale_l) in
/// exact arithmetic), and eigenvalues down to -`abs_tol` are accepted.
///
/// Scaled by D = diag(sqrt(scale)), such a perturbation has spectral norm at most
/// d rel_tol, so a positive semidefinite matrix plus it, plus 2 d rel_tol D^2, is
/// positive definite with room for the factorization's own rounding (about
/// (d + 1) eps in the same scaled terms). The test: a Cholesky factorization of
/// a + (2 d rel_tol + 2 (d + 1) eps) diag(scale) + abs_tol I succeeds. A matrix
/// with an eigenvalue below minus that margin fails. With abs_tol 0, a feature
/// whose scale is 0 had nothing to round: its row must be exactly 0. `l` is
/// d x d scratch. Rank-deficient honest matrices (fewer rows than features) pass:
/// their zero eigenvalues are lifted by the margin, not judged by pivot size.
pub fn is_positive_semidefinite(a: &[f64], d: usize, scale: &[f64], rel_tol: f64, abs_tol: f64, l: &mut [f64]) -> bool {
    let margin = 2.0 * d as f64 * rel_tol + 2.0 * (d as f64 + 1.0) * f64::EPSILON;
    if !(abs_tol >= 0.0) || !abs_tol.is_finite() {
        return false;
    }
    l[..d * d].iter_mut().for_each(|v| *v = 0.0);
    for j in 0..d {
        let s = scale[j];
        if !(s >= 0.0) || !s.is_finite() {
            return false;
        }
        if s == 0.0 && abs_tol == 0.0 {
            // nothing was summed into this feature: it is a zero row, left out
            if (0..d).any(|m| a[j.max(m) * d + j.min(m)] != 0.0) {
                return false;
            }
            continue;
        }
        let mut diag = a[j * d + j] + margin * s + abs_tol;
        for m in 0..j {
            diag -= l[j * d + m] * l[j * d + m];
        }
        if !(diag > 0.0) || !diag.is_finite() {
            return false;
        }
        let ljj = diag.sqrt();
        l[j * d + j] = ljj;
        for i in j + 1..d {
            let mut v = a[i * d + j];
            for m in 0..j {
                v -= l[i * d + m] * l[j * d + m];
            }
            l[i * d + j] = v / ljj;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v_r = lambda_r v_r, the rows v_r orthonormal, eigenvalues descending.
    fn check_eigen(a: &[f64], d: usize, tol: f64) -> (Vec<f64>, Vec<f64>) {
        let (values, vectors) = symmetric_eigen(a, d).unwrap();
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
        for r in 0..d {
            if r > 0 {
                assert!(values[r] <= values[r - 1]);
            }
            for i in 0..d {
                let av: f64 = (0..d).map(|k| a[i * d + k] * vectors[r * d + k]).sum();
                assert!((av - values[r] * vectors[r * d + i]).abs() <= tol * scale, "A v != lambda v at {} {}", r, i);
            }
            for q in 0..d {
                let dot: f64 = (0..d).map(|k| vectors[r * d + k] * vectors[q * d + k]).sum();
                assert!((dot - if r == q { 1.0 } else { 0.0 }).abs() <= tol, "not orthonormal: {} {} {}", r, q, dot);
            }
        }
        (values, vectors)
    }

    #[test]
    fn symmetric_eigen_random_matrices() {
        let mut rng = crate::Rng::new(5);
        for &d in &[1usize, 2, 3, 7, 20, 60] {
            let b: Vec<f64> = (0..d * d).map(|_| rng.normal()).collect();
            let mut a = vec![0.0; d * d];
            for i in 0..d {
                for j in 0..d {
                    a[i * d + j] = (b[i * d + j] + b[j * d + i]) * 0.5;
                }
            }
            let (values, _) = check_eigen(&a, d, 1e-12);
            // the trace is the sum of the eigenvalues
            let trace: f64 = (0..d).map(|i| a[i * d + i]).sum();
            assert!((values.iter().sum::<f64>() - trace).abs() < 1e-11 * d as f64);
        }
    }

    #[test]
    fn symmetric_eigen_special_matrices() {
        assert_eq!(symmetric_eigen(&[], 0).unwrap(), (vec![], vec![]));
        // diagonal: the eigenvalues are the entries, the vectors unit vectors
        let (values, vectors) = check_eigen(&[1.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 2.0], 3, 1e-15);
        assert_eq!(values, vec![3.0, 2.0, 1.0]);
        assert_eq!(vectors[1].abs(), 1.0);
        // the zero matrix, and a repeated eigenvalue (rank one: 1 1 1 / 3 scaled)
        check_eigen(&[0.0; 16], 4, 0.0);
        let (values, _) = check_eigen(&[1.0; 9], 3, 1e-14);
        assert!((values[0] - 3.0).abs() < 1e-14 && values[1].abs() < 1e-14 && values[2].abs() < 1e-14);
        // eigenvalues spread over 15 orders of magnitude: the small ones are
        // accurate to eps * ||a|| (absolute), not relative to themselves
        let (values, _) = check_eigen(&[1e12, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1e-3], 3, 1e-15);
        assert!((values[0] / 1e12 - 1.0).abs() < 1e-15);
        assert!((values[1] - (1.0 - 1e-12)).abs() < 2.0 * f64::EPSILON * 1e12);
        assert!((values[2] - 1e-3).abs() < 2.0 * f64::EPSILON * 1e12);
        // only the lower triangle is read
        let (lower, _) = symmetric_eigen(&[2.0, 99.0, 1.0, 2.0], 2).unwrap();
        let (full, _) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2).unwrap();
        assert_eq!(lower, full);
        let e = symmetric_eigen(&[f64::NAN, 0.0, 1.0, 1.0], 2).unwrap_err();
        assert_eq!(e.message, "the eigenvalue iteration did not converge at eigenvalue 0");
    }

    #[test]
    fn matches_scipy_linalg() {
        let f = crate::testing::fixture("linalg.json");
        for c in f.get("cases").array() {
            let (name, d) = (c.get("name").str(), c.get("d").num() as usize);
            let a = c.get("a").numbers();
            let norm = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let close = |got: &[f64], want: &[f64], what: &str, abs: f64| {
                let scale = want.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
                for (k, (g, w)) in got.iter().zip(want).enumerate() {
                    assert!((g - w).abs() <= 1e-10 * scale + abs, "{} {}: [{}] is {} but scipy gives {}", name, what, k, g, w);
                }
            };
            // the square root is not smooth at a zero eigenvalue: its rounding noise e (either side of 0) becomes sqrt(e)
            let singular = c.opt("cholesky").is_none();
            close(&sqrtm(&a, d).unwrap(), &c.get("sqrtm").numbers(), "sqrtm", if singular { (d as f64 * f64::EPSILON * norm).sqrt() } else { 0.0 });
            let (values, _) = symmetric_eigen(&a, d).unwrap();
            close(&values, &c.get("eigvalsh_descending").numbers(), "eigenvalues", 4.0 * d as f64 * f64::EPSILON * norm);
            let mut l = vec![0.0; d * d];
            match c.opt("cholesky") {
                Some(want) => {
                    cholesky_lower(&a, d, &mut l).unwrap();
                    close(&l, &want.numbers(), "cholesky", 0.0);
                }
                None => assert!(cholesky_lower(&a, d, &mut l).is_err(), "{}: not positive definite", name),
            }
        }
    }

    #[test]
    fn symmetric_function_floors_the_spectrum() {
        // eigenvalues 3 and -1: floored at 0.5, the matrix keeps its eigenvectors
        let a = [1.0, 2.0, 2.0, 1.0];
        let got = symmetric_function(&a, 2, |x| x.max(0.5)).unwrap();
        let want = [1.75, 1.25, 1.25, 1.75];
        for k in 0..4 {
            assert!((got[k] - want[k]).abs() < 1e-14, "{:?}", got);
        }
        assert_eq!(sqrtm(&[], 0).unwrap(), Vec::<f64>::new());
    }

    #[test]
    fn cholesky_inverse_roundtrip() {
        let a = [4.0, 2.0, 0.6, 2.0, 2.0, 0.5, 0.6, 0.5, 3.0];
        let mut l = [0.0; 9];
        cholesky_lower(&a, 3, &mut l).unwrap();
        let mut llt = [0.0; 9];
        mul_transpose_self(&l, 3, &mut llt);
        for i in 0..9 {
            assert!((llt[i] - a[i]).abs() < 1e-14);
        }
        let mut inv = [0.0; 9];
        invert_spd(&a, 3, &mut inv, &mut [0.0; 18]).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let s: f64 = (0..3).map(|m| a[i * 3 + m] * inv[m * 3 + j]).sum();
                assert!((s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        assert_eq!(triangle(&l, 3), Some(false));
        let mut lt = [0.0; 9];
        transpose(&l, 3, &mut lt);
        assert_eq!(triangle(&lt, 3), Some(true));
        assert_eq!(triangle(&a, 3), None);
        assert!(is_symmetric(&a, 3));
    }

    #[test]
    fn cholesky_rejects_indefinite() {
        let a = [1.0, 2.0, 2.0, 1.0];
        let mut l = [0.0; 4];
        assert_eq!(cholesky_lower(&a, 2, &mut l), Err(1));
        assert_eq!(cholesky_lower(&[0.0], 1, &mut [0.0]), Err(0));
        assert_eq!(cholesky_lower(&[f64::NAN], 1, &mut [0.0]), Err(0));
    }

    fn is_positive_semidefinite(a: &[f64], d: usize, scale: &[f64], rel_tol: f64) -> bool {
        // stale scratch: the check must not depend on what it held
        super::is_positive_semidefinite(a, d, scale, rel_tol, 0.0, &mut vec![7.0; d * d])
    }

    #[test]
    fn semidefinite_up_to_rounding() {
        let ones = [1.0; 3];
        // rank one: x x^T
        let x = [1.0, -2.0, 0.5];
        let a: Vec<f64> = (0..9).map(|i| x[i / 3] * x[i % 3]).collect();
        assert!(is_positive_semidefinite(&a, 3, &ones, 1e-9));
        assert!(is_positive_semidefinite(&[0.0; 9], 3, &ones, 1e-9));
        assert!(is_positive_semidefinite(&[-1e-12, 0.0, 0.0, 1.0], 2, &ones, 1e-9));
        assert!(!is_positive_semidefinite(&[-1e-3, 0.0, 0.0, 1.0], 2, &ones, 1e-9));
        assert!(!is_positive_semidefinite(&[1.0, 2.0, 2.0, 1.0], 2, &ones, 1e-9));
        // a zero pivot with a non-zero off-diagonal entry is indefinite
        assert!(!is_positive_semidefinite(&[0.0, 1.0, 1.0, 1.0], 2, &ones, 1e-9));
        assert!(!is_positive_semidefinite(&[f64::NAN, 0.0, 0.0, 1.0], 2, &ones, 1e-9));
        // positive definite with a pivot far below the scale (a tiny variance next to
        // a large second moment) and an off-diagonal entry it allows
        let small = [1.0, 0.0, 0.0, 0.0, 5e-10, 1e-5, 0.0, 1e-5, 1.0];
        assert!(is_positive_semidefinite(&small, 3, &ones, 1e-15));
        // the same with the off-diagonal entry past sqrt(5e-10 * 1): indefinite
        assert!(!is_positive_semidefinite(&[1.0, 0.0, 0.0, 0.0, 5e-10, 1e-4, 0.0, 1e-4, 1.0], 3, &ones, 1e-15));
        // a feature of scale 0 must be a zero row
        assert!(is_positive_semidefinite(&[0.0, 0.0, 0.0, 1.0], 2, &[0.0, 1.0], 1e-15));
        assert!(!is_positive_semidefinite(&[0.0, 1e-300, 1e-300, 1.0], 2, &[0.0, 1.0], 1e-15));
        assert!(!is_positive_semidefinite(&[1.0, 0.0, 0.0, 1.0], 2, &[f64::NAN, 1.0], 1e-15));
        // an absolute tolerance accepts eigenvalues down to minus it, rows of scale 0 included
        let mut l = [0.0; 4];
        assert!(super::is_positive_semidefinite(&[-1e-7, 0.0, 0.0, 1.0], 2, &ones, 1e-15, 2e-7, &mut l));
        assert!(!super::is_positive_semidefinite(&[-1e-7, 0.0, 0.0, 1.0], 2, &ones, 1e-15, 0.5e-7, &mut l));
        assert!(super::is_positive_semidefinite(&[0.0, 1e-300, 1e-300, 1.0], 2, &[0.0, 1.0], 1e-15, 1e-10, &mut l));
        assert!(!super::is_positive_semidefinite(&[1.0, 0.0, 0.0, 1.0], 2, &ones, 1e-15, f64::NAN, &mut l));
    }
}
