//! C ABI of fedmix-core for WebAssembly. Thin by design: it owns allocation,
//! turns `Result` into an i32 status (0 ok, else ErrorKind::code) with the message
//! readable through fm_last_error_*, and hands models out as opaque handles that
//! TypeScript frees. Inputs that a user shapes (initial parameters, imported
//! models) travel as (pointer, length) pairs and the core checks their shapes;
//! a null pointer means "not given". Data and output buffers are sized by the
//! shapes passed alongside them.

use fedmix_core::distributions::{Categorical, Dirichlet, Gamma, Multinomial, MAX_TRIALS};
use fedmix_core::gmm::fit::{self, FitOptions, InitParams};
use fedmix_core::gmm::dem::{self, DataSummary};
use fedmix_core::gmm::stats::{packed_len, pack_upper, unpack_symmetric, wire_s2_len, SuffStats, Tiles};
use fedmix_core::gmm::{estep, sample, CovarianceType, Gmm};
use fedmix_core::kmeans::{self, KMeansInit, KMeansOptions};
use fedmix_core::mdm::client::{self as mdm_client, InitStats, Prepared, RoundStats};
use fedmix_core::mdm::{self, sample as mdm_sample, server as mdm_server, Mdm};
use fedmix_core::{assignment, dirichlet_multinomial, kernels, pca, special, Data, Error, Result, Rng};
use std::alloc::{alloc, dealloc, GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::slice;
use std::sync::atomic::{AtomicUsize, Ordering};

mod fedgem;

/// The system allocator, counting bytes in use so tests can prove that every
/// call, failed ones included, gives back all it took.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            IN_USE.fetch_add(l.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, l, new_size);
        if !q.is_null() {
            IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes currently allocated on the Rust heap (models, buffers, the error text).
#[no_mangle]
pub extern "C" fn fm_heap_in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// Bumped whenever an export changes meaning; the loader checks it.
const ABI_VERSION: i32 = 8;

thread_local! {
    static LAST_ERROR: RefCell<String> = RefCell::new(String::new());
}

fn status(r: Result<()>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            let code = e.kind.code();
            LAST_ERROR.with(|s| *s.borrow_mut() = e.message);
            code
        }
    }
}

#[no_mangle]
pub extern "C" fn fm_abi_version() -> i32 {
    ABI_VERSION
}

#[no_mangle]
pub extern "C" fn fm_simd() -> i32 {
    kernels::SIMD as i32
}

#[no_mangle]
pub extern "C" fn fm_last_error_ptr() -> *const u8 {
    LAST_ERROR.with(|s| s.borrow().as_ptr())
}

#[no_mangle]
pub extern "C" fn fm_last_error_len() -> usize {
    LAST_ERROR.with(|s| s.borrow().len())
}

/// Frees the last error message once TypeScript has read it.
#[no_mangle]
pub extern "C" fn fm_clear_error() {
    LAST_ERROR.with(|s| *s.borrow_mut() = String::new());
}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), 16).ok()
}

/// 16-byte aligned block of `bytes` bytes, or null when memory cannot grow.
#[no_mangle]
pub extern "C" fn fm_alloc(bytes: usize) -> *mut u8 {
    match layout(bytes) {
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// `ptr` must come from fm_alloc with the same `bytes`, and be freed once.
#[no_mangle]
pub unsafe extern "C" fn fm_free(ptr: *mut u8, bytes: usize) {
    if !ptr.is_null() {
        if let Some(l) = layout(bytes) {
            dealloc(ptr, l);
        }
    }
}

unsafe fn f64s<'a>(ptr: *const f64, len: usize) -> &'a [f64] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn f64s_mut<'a>(ptr: *mut f64, len: usize) -> &'a mut [f64] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn u32s_mut<'a>(ptr: *mut u32, len: usize) -> &'a mut [u32] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn u32s<'a>(ptr: *const u32, len: usize) -> &'a [u32] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn optional(ptr: *const f64, len: usize) -> Option<Vec<f64>> {
    if ptr.is_null() {
        None
    } else {
        Some(f64s(ptr, len).to_vec())
    }
}

unsafe fn data<'a>(ptr: *const f64, n: usize, d: usize) -> Result<Data<'a>> {
    Data::new(f64s(ptr, n * d), n, d)
}

fn seed(lo: u32, hi: u32) -> u64 {
    (hi as u64) << 32 | lo as u64
}

/// A fitted Gaussian mixture and its fit statistics, owned by TypeScript.
pub struct GmmHandle {
    gmm: Gmm,
    converged: bool,
    n_iter: usize,
    lower_bound: f64,
}

fn into_handle(h: GmmHandle, out: *mut usize) {
    unsafe { *out = Box::into_raw(Box::new(h)) as usize };
}

/// # Safety
/// Pointers must cover the shapes given; `warm` is 0 or a live handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gmm_fit(
    x: *const f64,
    n: usize,
    d: usize,
    k: usize,
    cov_type: i32,
    tol: f64,
    reg_covar: f64,
    max_iter: usize,
    n_init: usize,
    init_params: i32,
    weights_init: *const f64,
    weights_init_len: usize,
    means_init: *const f64,
    means_init_len: usize,
    precisions_init: *const f64,
    precisions_init_len: usize,
    warm: *const GmmHandle,
    seed_lo: u32,
    seed_hi: u32,
    out_handle: *mut usize,
) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let opts = FitOptions {
            n_components: k,
            covariance_type: t,
            tol,
            reg_covar,
            max_iter,
            n_init,
            init_params: InitParams::from_code(init_params)?,
            weights_init: optional(weights_init, weights_init_len),
            means_init: optional(means_init, means_init_len),
            precisions_init: optional(precisions_init, precisions_init_len),
        };
        let warm = warm.as_ref().map(|h| (&h.gmm, h.lower_bound));
        let r = fit::fit(&data(x, n, d)?, &opts, warm, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        into_handle(GmmHandle { gmm: r.gmm, converged: r.converged, n_iter: r.n_iter, lower_bound: r.lower_bound }, out_handle);
        Ok(())
    })())
}

/// A model from its parameters (JSON import). `covariances` may be null.
///
/// # Safety
/// Pointers must cover the shapes given.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gmm_from_parts(
    cov_type: i32,
    k: usize,
    d: usize,
    weights: *const f64,
    weights_len: usize,
    means: *const f64,
    means_len: usize,
    precisions_chol: *const f64,
    precisions_chol_len: usize,
    covariances: *const f64,
    covariances_len: usize,
    out_handle: *mut usize,
) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let gmm = Gmm::from_parts(
            t,
            k,
            d,
            f64s(weights, weights_len).to_vec(),
            f64s(means, means_len).to_vec(),
            f64s(precisions_chol, precisions_chol_len).to_vec(),
            optional(covariances, covariances_len),
        )?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })())
}

/// A model from weights, means and covariances (what federated clients send),
/// rejecting a covariance that is not positive definite.
///
/// # Safety
/// Pointers cover their lengths.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gmm_from_covariances(
    cov_type: i32,
    k: usize,
    d: usize,
    weights: *const f64,
    weights_len: usize,
    means: *const f64,
    means_len: usize,
    covariances: *const f64,
    covariances_len: usize,
    out_handle: *mut usize,
) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let gmm = Gmm::from_covariances(
            t,
            k,
            d,
            f64s(weights, weights_len).to_vec(),
            f64s(means, means_len).to_vec(),
            f64s(covariances, covariances_len).to_vec(),
        )?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })())
}

/// # Safety
/// `h` is a live handle; it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_free(h: *mut GmmHandle) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Writes [k, d, covariance type, converged, n_iter, lower_bound, n_parameters].
///
/// # Safety
/// `h` is a live handle, `out` holds 7 values.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_info(h: *const GmmHandle, out: *mut f64) {
    let h = &*h;
    let g = &h.gmm;
    let v = [g.k as f64, g.d as f64, g.cov_type.code() as f64, h.converged as i32 as f64, h.n_iter as f64, h.lower_bound, g.n_parameters() as f64];
    f64s_mut(out, 7).copy_from_slice(&v);
}

/// Copies a parameter array out: 0 weights, 1 means, 2 covariances,
/// 3 precisions_cholesky, 4 precisions. Returns the number of values.
///
/// # Safety
/// `h` is a live handle and `out` is large enough (see the shapes).
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_read(h: *const GmmHandle, which: i32, out: *mut f64) -> i32 {
    let g = &(*h).gmm;
    let owned;
    let src: &[f64] = match which {
        0 => &g.weights,
        1 => &g.means,
        2 => &g.covariances,
        3 => &g.precisions_chol,
        4 => {
            owned = g.precisions();
            &owned
        }
        _ => return -1,
    };
    f64s_mut(out, src.len()).copy_from_slice(src);
    src.len() as i32
}

fn require_features(g: &Gmm, x: &Data) -> Result<()> {
    if x.d != g.d {
        return Err(Error::data(format!("X has {} features but the model was fitted with {}; pass data with {} columns", x.d, g.d, g.d)));
    }
    x.require_finite("X")
}

/// Per-row log-likelihood log sum_c w_c N(x | c) into `out_lse` (n).
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_score_samples(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_lse: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        let mut resp = vec![0.0; n * g.k];
        estep::e_step(&x, g, &mut estep::Scratch::new(d), &mut resp, f64s_mut(out_lse, n));
        Ok(())
    })())
}

/// Responsibilities (n x k, column-major) into `out_resp`, and per-row
/// log-likelihood into `out_lse`.
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_predict_proba(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_resp: *mut f64, out_lse: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        estep::e_step(&x, g, &mut estep::Scratch::new(d), f64s_mut(out_resp, n * g.k), f64s_mut(out_lse, n));
        Ok(())
    })())
}

/// Most probable component per row into `out_labels` (n).
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_predict(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_labels: *mut u32) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        let x = data(x, n, d)?;
        require_features(g, &x)?;
        estep::predict(&x, g, u32s_mut(out_labels, n));
        Ok(())
    })())
}

/// n draws (n x d, column-major, grouped by component) and their components.
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_sample(h: *const GmmHandle, n: usize, seed_lo: u32, seed_hi: u32, out_x: *mut f64, out_labels: *mut u32) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        if n < 1 {
            return Err(Error::param(format!("sample needs n >= 1, got {}", n)));
        }
        sample::sample(g, n, &mut Rng::new(seed(seed_lo, seed_hi)), f64s_mut(out_x, n * g.d), u32s_mut(out_labels, n))
    })())
}

/// k-means. `init`: 0 k-means++, 1 random rows, 2 the k x d centers at `centers`.
/// Writes centers (k x d), labels (n) and [inertia, n_iter] to `out_stats`.
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_kmeans_fit(
    x: *const f64,
    n: usize,
    d: usize,
    k: usize,
    init: i32,
    centers: *const f64,
    centers_len: usize,
    n_init: usize,
    max_iter: usize,
    tol: f64,
    seed_lo: u32,
    seed_hi: u32,
    out_centers: *mut f64,
    out_labels: *mut u32,
    out_stats: *mut f64,
) -> i32 {
    status((|| {
        let init = match init {
            0 => KMeansInit::PlusPlus,
            1 => KMeansInit::Random,
            2 => KMeansInit::Given(f64s(centers, centers_len).to_vec()),
            _ => return Err(Error::param(format!("unknown k-means init code {}; use 0 k-means++, 1 random, 2 given centers", init))),
        };
        let opts = KMeansOptions { n_clusters: k, init, n_init, max_iter, tol };
        let r = kmeans::fit(&data(x, n, d)?, &opts, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        f64s_mut(out_centers, k * d).copy_from_slice(&r.centers);
        u32s_mut(out_labels, n).copy_from_slice(&r.labels);
        f64s_mut(out_stats, 2).copy_from_slice(&[r.inertia, r.n_iter as f64]);
        Ok(())
    })())
}

/// Nearest of k centers (k x d) per row, and the squared distance to it.
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_kmeans_predict(x: *const f64, n: usize, d: usize, centers: *const f64, k: usize, out_labels: *mut u32, out_dist: *mut f64) -> i32 {
    status((|| {
        let x = data(x, n, d)?;
        x.require_finite("X")?;
        kmeans::assign(&x, f64s(centers, k * d), k, u32s_mut(out_labels, n), f64s_mut(out_dist, n));
        Ok(())
    })())
}

/// Linear sum assignment of the nr x nc row-major `cost` (scipy semantics;
/// `maximize` 0 or 1). Writes min(nr, nc) row indices (ascending) and their
/// columns, and the total cost of those cells to `out_cost`.
///
/// # Safety
/// `cost` covers nr * nc values, `out_rows` and `out_cols` min(nr, nc) each,
/// `out_cost` one.
#[no_mangle]
pub unsafe extern "C" fn fm_linear_sum_assignment(
    cost: *const f64,
    nr: usize,
    nc: usize,
    maximize: i32,
    out_rows: *mut u32,
    out_cols: *mut u32,
    out_cost: *mut f64,
) -> i32 {
    status((|| {
        let n = nr.checked_mul(nc).ok_or_else(|| Error::data(format!("a {} x {} cost matrix is too large", nr, nc)))?;
        let a = assignment::linear_sum_assignment(f64s(cost, n), nr, nc, maximize != 0)?;
        let k = a.rows.len();
        for (o, &r) in u32s_mut(out_rows, k).iter_mut().zip(&a.rows) {
            *o = r as u32;
        }
        for (o, &c) in u32s_mut(out_cols, k).iter_mut().zip(&a.cols) {
            *o = c as u32;
        }
        *out_cost = a.cost;
        Ok(())
    })())
}

/// PCA of the n x d column-major `x` with k components. Writes the mean (d),
/// the components (k x d row-major), the explained variances and their ratios
/// (k each) and the noise variance (1).
///
/// # Safety
/// Pointers cover the shapes given.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_pca_fit(
    x: *const f64,
    n: usize,
    d: usize,
    k: usize,
    out_mean: *mut f64,
    out_components: *mut f64,
    out_variance: *mut f64,
    out_ratio: *mut f64,
    out_noise: *mut f64,
) -> i32 {
    status((|| {
        let p = pca::fit(&data(x, n, d)?, k)?;
        f64s_mut(out_mean, d).copy_from_slice(&p.mean);
        f64s_mut(out_components, k * d).copy_from_slice(&p.components);
        f64s_mut(out_variance, k).copy_from_slice(&p.explained_variance);
        f64s_mut(out_ratio, k).copy_from_slice(&p.explained_variance_ratio);
        *out_noise = p.noise_variance;
        Ok(())
    })())
}

/// (x - mean) @ components^T for a fitted PCA: `mean` has `mean_len` values
/// (the fitted feature count), `components` k x mean_len; `out` is n x k
/// column-major.
///
/// # Safety
/// Pointers cover the shapes given.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_pca_transform(x: *const f64, n: usize, d: usize, mean: *const f64, mean_len: usize, components: *const f64, k: usize, out: *mut f64) -> i32 {
    status((|| {
        let cells = k.checked_mul(mean_len).ok_or_else(|| Error::param("the PCA shape is too large"))?;
        pca::transform(&data(x, n, d)?, f64s(mean, mean_len), f64s(components, cells), k, f64s_mut(out, n * k))
    })())
}

/// In-place vectorized exp over `n` values (exposed for tests and benchmarks).
///
/// # Safety
/// `p` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_exp(p: *mut f64, n: usize) {
    kernels::exp_in_place(f64s_mut(p, n));
}

/// Floating-point operations of `iters` rounds of independent multiply-adds;
/// timed from JavaScript to measure the machine's SIMD peak.
#[no_mangle]
pub extern "C" fn fm_madd_peak(iters: f64, seed: f64) -> f64 {
    let mut sink = 0.0;
    let flops = kernels::madd_peak(iters as u64, seed, &mut sink);
    if sink == 1.2345 {
        return -flops; // never true; keeps the loop observable
    }
    flops
}

/// Restores fit statistics on an imported model (JSON round trip), so a warm
/// start continues from the saved lower bound.
///
/// # Safety
/// `h` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn fm_gmm_set_stats(h: *mut GmmHandle, converged: i32, n_iter: usize, lower_bound: f64) {
    let h = &mut *h;
    h.converged = converged != 0;
    h.n_iter = n_iter;
    h.lower_bound = lower_bound;
}

// The seeded generator of the TypeScript Rng class: a handle whose stream
// continues from call to call. Every draw validates its parameters before it
// consumes anything, so a failed call leaves the stream where it was. Matrices
// come out n x k column-major, as the Matrix class holds them.

/// A new generator from the seed; freed with fm_rng_free.
#[no_mangle]
pub extern "C" fn fm_rng_new(seed_lo: u32, seed_hi: u32) -> *mut Rng {
    Box::into_raw(Box::new(Rng::new(seed(seed_lo, seed_hi))))
}

/// # Safety
/// `h` is a live generator; it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_free(h: *mut Rng) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// In-place digamma over n values (vectorized in the SIMD build).
///
/// # Safety
/// `p` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_digamma(p: *mut f64, n: usize) {
    special::digamma_in_place(f64s_mut(p, n));
}

/// In-place ln |Gamma| over n values.
///
/// # Safety
/// `p` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_lgamma(p: *mut f64, n: usize) {
    special::lgamma_in_place(f64s_mut(p, n));
}

/// In-place trigamma over n values.
///
/// # Safety
/// `p` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_trigamma(p: *mut f64, n: usize) {
    special::trigamma_in_place(f64s_mut(p, n));
}

/// out[i] = psi(x[i] + n[i]) - psi(x[i]) (`which` 0), or
/// ln Gamma(x[i] + n[i]) - ln Gamma(x[i]) (`which` 1); NaN outside x > 0, n >= 0.
///
/// # Safety
/// Pointers cover len values.
#[no_mangle]
pub unsafe extern "C" fn fm_gamma_differences(which: i32, x: *const f64, nv: *const f64, out: *mut f64, len: usize) {
    let f = if which == 0 { special::digamma_diff } else { special::ln_rising_factorial };
    for ((o, &a), &b) in f64s_mut(out, len).iter_mut().zip(f64s(x, len)).zip(f64s(nv, len)) {
        *o = f(a, b);
    }
}

/// Dirichlet-multinomial log-pmf of m count vectors (m x c, row-major) under k
/// parameter vectors (k x c) into out (m x k), with the multinomial coefficient
/// when `with_coefficient` is 1.
///
/// # Safety
/// Pointers cover the shapes given.
#[no_mangle]
pub unsafe extern "C" fn fm_dm_log_pmf(counts: *const f64, m: usize, c: usize, alphas: *const f64, k: usize, with_coefficient: i32, out: *mut f64) -> i32 {
    status(dirichlet_multinomial::log_pmf(f64s(counts, m * c), m, c, f64s(alphas, k * c), k, with_coefficient != 0, f64s_mut(out, m * k)))
}

/// n uniforms in [0, 1).
///
/// # Safety
/// Live handle; `out` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_uniform(h: *mut Rng, n: usize, out: *mut f64) {
    let r = &mut *h;
    for o in f64s_mut(out, n) {
        *o = r.next_f64();
    }
}

/// n standard normals.
///
/// # Safety
/// Live handle; `out` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_normal(h: *mut Rng, n: usize, out: *mut f64) {
    let r = &mut *h;
    for o in f64s_mut(out, n) {
        *o = r.normal();
    }
}

/// n draws of Gamma(shape, scale).
///
/// # Safety
/// Live handle; `out` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_gamma(h: *mut Rng, shape: f64, scale: f64, n: usize, out: *mut f64) -> i32 {
    let r = &mut *h;
    status((|| {
        let g = Gamma::new(shape, scale)?;
        for o in f64s_mut(out, n) {
            *o = g.sample(r);
        }
        Ok(())
    })())
}

fn cells(n: usize, k: usize) -> Result<usize> {
    n.checked_mul(k).ok_or_else(|| Error::param(format!("{} draws of {} values do not fit in memory; draw fewer", n, k)))
}

/// n draws of Dirichlet(alpha), alpha of length k: an n x k matrix.
///
/// # Safety
/// Live handle; `alpha` covers k values, `out` n * k.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    dirichlet_draws(h, alpha, k, n, out, Dirichlet::sample_into)
}

/// n draws into the column-major n x k `out`, each by `draw`.
unsafe fn dirichlet_draws(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64, draw: fn(&Dirichlet, &mut Rng, &mut [f64])) -> i32 {
    let r = &mut *h;
    status((|| {
        let dir = Dirichlet::new(f64s(alpha, k))?;
        let out = f64s_mut(out, cells(n, k)?);
        let mut x = vec![0.0; k];
        for i in 0..n {
            draw(&dir, r, &mut x);
            for (j, &v) in x.iter().enumerate() {
                out[j * n + i] = v;
            }
        }
        Ok(())
    })())
}

/// n draws of Dirichlet(alpha) as natural logs of the components (finite even
/// where the component underflows to 0): an n x k matrix.
///
/// # Safety
/// Live handle; `alpha` covers k values, `out` n * k.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_log_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    dirichlet_draws(h, alpha, k, n, out, Dirichlet::ln_sample_into)
}

/// n histograms of Multinomial(trials, probs), probs of length k: an n x k
/// matrix of counts. `trials` travels as an f64 (exact up to 2^53).
///
/// # Safety
/// Live handle; `probs` covers k values, `out` n * k.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_multinomial(h: *mut Rng, trials: f64, probs: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    let r = &mut *h;
    status((|| {
        if !(trials >= 0.0 && trials <= MAX_TRIALS as f64 && trials.fract() == 0.0) {
            return Err(Error::param(format!("trials must be an integer in [0, 2^53], got {}", fedmix_core::error::show(trials))));
        }
        let m = Multinomial::new(trials as u64, f64s(probs, k))?;
        let out = f64s_mut(out, cells(n, k)?);
        let mut counts = vec![0u64; k];
        for i in 0..n {
            m.sample_into(r, &mut counts);
            for (j, &c) in counts.iter().enumerate() {
                out[j * n + i] = c as f64;
            }
        }
        Ok(())
    })())
}

/// n categories drawn with probabilities `probs` (k values).
///
/// # Safety
/// Live handle; `probs` covers k values, `out` n.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_categorical(h: *mut Rng, probs: *const f64, k: usize, n: usize, out: *mut u32) -> i32 {
    let r = &mut *h;
    status((|| {
        let cat = Categorical::new(f64s(probs, k))?;
        for o in u32s_mut(out, n) {
            *o = cat.sample(r) as u32;
        }
        Ok(())
    })())
}

/// k distinct indices of 0..n, in the order drawn.
///
/// # Safety
/// Live handle; `out` covers k values.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_choice(h: *mut Rng, n: usize, k: usize, out: *mut u32) -> i32 {
    let r = &mut *h;
    status((|| {
        let v = r.sample_without_replacement(n, k)?;
        for (o, i) in u32s_mut(out, k).iter_mut().zip(v) {
            *o = i as u32;
        }
        Ok(())
    })())
}

/// A uniformly random permutation of 0..n, shuffled in `out` itself.
///
/// # Safety
/// Live handle; `out` covers n values.
#[no_mangle]
pub unsafe extern "C" fn fm_rng_permutation(h: *mut Rng, n: usize, out: *mut u32) {
    let out = u32s_mut(out, n);
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u32;
    }
    (*h).shuffle(out);
}

// Distributed EM (fedmix_core::gmm::dem). Statistics cross the boundary in
// their wire form: nk (k), s1 (k x d) and s2 of wire_s2_len values (a full
// matrix as its packed upper triangle); per-client arrays are concatenated in
// client order. TypeScript checks the messages' shapes first; the checks here
// are about what the numbers mean.

fn cov_lens(t: CovarianceType, k: usize, d: usize) -> (usize, usize, usize) {
    (k, k * d, wire_s2_len(t, k, d))
}

/// A DEM client's answer to the model `h`: statistics of its n rows about the
/// model's means into out_nk, out_s1, out_s2, and the sum of the rows'
/// log-likelihoods into out_loglik.
///
/// # Safety
/// Live handle; pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_dem_client_stats(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64, out_loglik: *mut f64) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        let (stats, total) = dem::client_statistics(&data(x, n, d)?, g)?;
        write_stats(&stats, out_nk, out_s1, out_s2);
        *out_loglik = total;
        Ok(())
    })())
}

/// Sufficient statistics in wire form: nk (k), s1 (k x d), s2 (as cov_lens says).
unsafe fn write_stats(s: &SuffStats, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64) {
    let (a, b, c) = cov_lens(s.cov_type, s.k, s.d);
    f64s_mut(out_nk, a).copy_from_slice(&s.nk);
    f64s_mut(out_s1, b).copy_from_slice(&s.s1);
    f64s_mut(out_s2, c).copy_from_slice(&s.s2_wire());
}

/// A DEM client's summary of its rows about `shift` (d): per-feature largest
/// magnitude into out_abs_max (d); with `tied` 1 also the column sums of
/// x - shift (d) and their scatter (packed, d (d + 1) / 2).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_client_summary(x: *const f64, n: usize, d: usize, shift: *const f64, tied: i32, out_abs_max: *mut f64, out_sum: *mut f64, out_scatter: *mut f64) -> i32 {
    status((|| {
        let x = data(x, n, d)?;
        if n > 0 {
            x.require_finite("the client's rows")?;
        }
        let s = DataSummary::of(&x, f64s(shift, d), tied != 0, &mut Tiles::new(d));
        f64s_mut(out_abs_max, d).copy_from_slice(&s.abs_max);
        if tied != 0 {
            f64s_mut(out_sum, d).copy_from_slice(&s.sum);
            let mut p = Vec::with_capacity(packed_len(d));
            pack_upper(&s.scatter, d, &mut p);
            f64s_mut(out_scatter, packed_len(d)).copy_from_slice(&p);
        }
        Ok(())
    })())
}

/// Checks statistics a client sent (SuffStats::check_client): from `rows` rows,
/// every count at least `min_count`. `shift` (k x d) may be null (zeros).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_check_stats(cov_type: i32, k: usize, d: usize, rows: f64, shift: *const f64, nk: *const f64, s1: *const f64, s2: *const f64, min_count: f64) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let (a, b, c) = cov_lens(t, k, d);
        let shift = optional(shift, k * d).unwrap_or_else(|| vec![0.0; k * d]);
        SuffStats::from_wire(t, k, d, shift, f64s(nk, a), f64s(s1, b), f64s(s2, c))?.check_client(rows, min_count)
    })())
}

/// Checks a summary a client sent about `shift` (DataSummary::check); `tied` 1
/// when it carries sums and a packed scatter.
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_check_summary(d: usize, tied: i32, rows: f64, shift: *const f64, abs_max: *const f64, sum: *const f64, scatter: *const f64) -> i32 {
    status(summary_from_wire(d, tied != 0, rows, f64s(shift, d), f64s(abs_max, d), sum, scatter).check())
}

unsafe fn summary_from_wire(d: usize, tied: bool, rows: f64, shift: &[f64], abs_max: &[f64], sum: *const f64, scatter: *const f64) -> DataSummary {
    let (sum, scatter) = if tied { (f64s(sum, d).to_vec(), unpack_symmetric(f64s(scatter, packed_len(d)), d)) } else { (Vec::new(), Vec::new()) };
    DataSummary { n: rows, abs_max: abs_max.to_vec(), shift: shift.to_vec(), sum, scatter }
}

/// The DEM server's round on the answers of m clients to the model `h`: merges
/// their statistics (about h's means) and summaries (about `summary_shift`, d;
/// sums and packed scatters only for tied), runs the M-step, and writes the new
/// model's handle, whose lower bound is the pooled mean log-likelihood of the
/// rows under `h` and whose n_iter and converged are those given.
///
/// # Safety
/// Live handle; pointers cover the shapes (m clients).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_server_step(
    h: *const GmmHandle,
    m: usize,
    rows: *const f64,
    loglik: *const f64,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    summary_shift: *const f64,
    abs_max: *const f64,
    sums: *const f64,
    scatters: *const f64,
    reg_covar: f64,
    n_iter: usize,
    converged: i32,
    out_handle: *mut usize,
) -> i32 {
    let g = &(*h).gmm;
    status((|| {
        if m == 0 {
            return Err(Error::data("a DEM round needs the statistics of at least one client"));
        }
        let (t, k, d) = (g.cov_type, g.k, g.d);
        let tied = t == CovarianceType::Tied;
        let (a, b, c) = cov_lens(t, k, d);
        let (rows, loglik) = (f64s(rows, m), f64s(loglik, m));
        let shift = f64s(summary_shift, d);
        let mut stats = SuffStats::new(t, k, d, g.means.clone());
        let mut summary = DataSummary::empty(d, shift, tied);
        for i in 0..m {
            let si = SuffStats::from_wire(t, k, d, g.means.clone(), f64s(nk.add(i * a), a), f64s(s1.add(i * b), b), f64s(s2.add(i * c), c))?;
            stats.merge(&si);
            let (sum, scatter) = if tied { (sums.add(i * d), scatters.add(i * packed_len(d))) } else { (sums, scatters) };
            summary.merge(&summary_from_wire(d, tied, rows[i], shift, f64s(abs_max.add(i * d), d), sum, scatter));
        }
        let gmm = dem::server_step(&stats, &summary, reg_covar)?;
        let lower_bound = loglik.iter().sum::<f64>() / rows.iter().sum::<f64>();
        into_handle(GmmHandle { gmm, converged: converged != 0, n_iter, lower_bound }, out_handle);
        Ok(())
    })())
}

/// DEM's maximally separated initial model in the box [lo, hi] (d each).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_dem_separated_init(cov_type: i32, k: usize, d: usize, lo: *const f64, hi: *const f64, reg_covar: f64, out_handle: *mut usize) -> i32 {
    status((|| {
        let gmm = dem::separated_init(CovarianceType::from_code(cov_type)?, k, f64s(lo, d), f64s(hi, d), reg_covar)?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })())
}

/// A k-FED client: k-means with up to k_local clusters on its rows, then their
/// statistics about their centers for covariance type `cov_type` (tied gathers
/// full ones). Writes the number of clusters found to out_k and, for them, the
/// centers, counts, s1 and s2 in wire form (buffers sized for k_local).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_kfed_local(
    x: *const f64,
    n: usize,
    d: usize,
    k_local: usize,
    cov_type: i32,
    seed_lo: u32,
    seed_hi: u32,
    out_k: *mut f64,
    out_centers: *mut f64,
    out_nk: *mut f64,
    out_s1: *mut f64,
    out_s2: *mut f64,
) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let s = dem::kfed_local(&data(x, n, d)?, k_local, t, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        *out_k = s.k as f64;
        f64s_mut(out_centers, s.k * d).copy_from_slice(&s.shift);
        write_stats(&s, out_nk, out_s1, out_s2);
        Ok(())
    })())
}

/// The k-FED server: the initial model with k components of type `cov_type` from
/// the local clusters of m clients (`counts` holds how many each sent; centers,
/// nk, s1 and s2 are concatenated in client order, s2 of type
/// dem::kfed_local_type). `seed` picks the client whose centers seed the groups.
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_dem_kfed_server(
    cov_type: i32,
    k: usize,
    d: usize,
    m: usize,
    counts: *const f64,
    centers: *const f64,
    nk: *const f64,
    s1: *const f64,
    s2: *const f64,
    reg_covar: f64,
    seed_lo: u32,
    seed_hi: u32,
    out_handle: *mut usize,
) -> i32 {
    status((|| {
        let t = CovarianceType::from_code(cov_type)?;
        let lt = dem::kfed_local_type(t);
        let mut locals = Vec::with_capacity(m);
        let (mut at_nk, mut at_s1, mut at_s2) = (0, 0, 0);
        for &cnt in f64s(counts, m) {
            if !(cnt >= 0.0 && cnt <= 1e9 && cnt.fract() == 0.0) {
                return Err(Error::data(format!("a client's number of local clusters must be a whole number, got {}", fedmix_core::error::show(cnt))));
            }
            let kl = cnt as usize;
            let (a, b, c) = cov_lens(lt, kl, d);
            let shift = f64s(centers.add(at_s1), b).to_vec();
            locals.push(SuffStats::from_wire(lt, kl, d, shift, f64s(nk.add(at_nk), a), f64s(s1.add(at_s1), b), f64s(s2.add(at_s2), c))?);
            at_nk += a;
            at_s1 += b;
            at_s2 += c;
        }
        let gmm = dem::kfed_server(&locals, k, t, reg_covar, &mut Rng::new(seed(seed_lo, seed_hi)))?;
        into_handle(GmmHandle { gmm, converged: false, n_iter: 0, lower_bound: f64::NEG_INFINITY }, out_handle);
        Ok(())
    })())
}

// Mixtures of Dirichlet-multinomials (fedmix_core::mdm). A model crosses the
// boundary as (k, c, n_max, tau, alpha, pi): tau (k), alpha (k x c) and pi
// (k x n_max), row-major, and is checked on every call (it is small). Client
// histograms are m x c row-major counts with their sizes (m). Sums are written,
// not added, to the outputs.

/// The model's shapes are checked before any slice is taken from them.
unsafe fn mdm_model(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64) -> Result<Mdm> {
    mdm::check_shape(k, c, n_max)?;
    Mdm::new(k, c, n_max, f64s(tau, k).to_vec(), f64s(alpha, k * c).to_vec(), f64s(pi, k * n_max).to_vec())
}

fn mdm_cells(m: usize, c: usize) -> Result<usize> {
    m.checked_mul(c).filter(|&v| v <= isize::MAX as usize / 8).ok_or_else(|| Error::param(format!("{} histograms of {} categories do not fit in memory", m, c)))
}

/// Checks a model (fedmix_core::mdm::Mdm::new).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_mdm_check(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64) -> i32 {
    status(mdm_model(k, c, n_max, tau, alpha, pi).map(|_| ()))
}

/// Checks m client histograms (m x c counts) and their sizes against N = n_max
/// (fedmix_core::mdm::check_histograms).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
pub unsafe extern "C" fn fm_mdm_check_histograms(counts: *const f64, sizes: *const f64, m: usize, c: usize, n_max: usize) -> i32 {
    status((|| {
        let cells = mdm_cells(m, c)?;
        mdm::check_histograms(f64s(counts, cells), f64s(sizes, m), m, c, n_max)
    })())
}

/// ln q(c_i, n_i) of m clients into out_ll (m; -inf where the model gives the
/// size probability 0) and, unless out_resp is null, their responsibilities (m x k).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_log_pmf(
    k: usize,
    c: usize,
    n_max: usize,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    counts: *const f64,
    sizes: *const f64,
    m: usize,
    out_ll: *mut f64,
    out_resp: *mut f64,
) -> i32 {
    status((|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let cells = mdm_cells(m, c)?;
        let resp = if out_resp.is_null() { None } else { Some(f64s_mut(out_resp, mdm_cells(m, k)?)) };
        mdm_client::log_pmf(&Prepared::for_batch(&model, m), f64s(counts, cells), f64s(sizes, m), m, f64s_mut(out_ll, m), resp)
    })())
}

/// m new clients: histograms (m x c), sizes (m) and components (m).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_sample(
    k: usize,
    c: usize,
    n_max: usize,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    m: usize,
    seed_lo: u32,
    seed_hi: u32,
    out_counts: *mut f64,
    out_sizes: *mut f64,
    out_components: *mut u32,
) -> i32 {
    status((|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let cells = mdm_cells(m, c)?;
        mdm_sample::sample(&model, m, &mut Rng::new(seed(seed_lo, seed_hi)), f64s_mut(out_counts, cells), f64s_mut(out_sizes, m), u32s_mut(out_components, m))
    })())
}

/// Algorithm 1's sums of m clients (client i chose components[i]): E (k x n_max), P and Q (k x c).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_init_stats(
    k: usize,
    c: usize,
    n_max: usize,
    counts: *const f64,
    sizes: *const f64,
    m: usize,
    components: *const u32,
    out_e: *mut f64,
    out_p: *mut f64,
    out_q: *mut f64,
) -> i32 {
    status((|| {
        mdm::check_shape(k, c, n_max)?;
        let cells = mdm_cells(m, c)?;
        let mut acc = InitStats::zeros(k, c, n_max);
        mdm_client::init_contributions(f64s(counts, cells), f64s(sizes, m), m, u32s(components, m), &mut acc)?;
        f64s_mut(out_e, k * n_max).copy_from_slice(&acc.e);
        f64s_mut(out_p, k * c).copy_from_slice(&acc.p);
        f64s_mut(out_q, k * c).copy_from_slice(&acc.q);
        Ok(())
    })())
}

/// Algorithm 2's sums of m clients under the model: omega (k), E (k x n_max),
/// u (k x c), v (k), and out_extra = [log-likelihood of the supported
/// clients, unsupported clients, clients]. `clip` bounds each client's (u, v)
/// norm (Infinity: no clipping).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_round_stats(
    k: usize,
    c: usize,
    n_max: usize,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    counts: *const f64,
    sizes: *const f64,
    m: usize,
    clip: f64,
    out_omega: *mut f64,
    out_e: *mut f64,
    out_u: *mut f64,
    out_v: *mut f64,
    out_extra: *mut f64,
) -> i32 {
    status((|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let cells = mdm_cells(m, c)?;
        let mut acc = RoundStats::zeros(k, c, n_max);
        mdm_client::round_statistics(&Prepared::for_batch(&model, m), f64s(counts, cells), f64s(sizes, m), m, clip, &mut acc)?;
        f64s_mut(out_omega, k).copy_from_slice(&acc.omega);
        f64s_mut(out_e, k * n_max).copy_from_slice(&acc.e);
        f64s_mut(out_u, k * c).copy_from_slice(&acc.u);
        f64s_mut(out_v, k).copy_from_slice(&acc.v);
        f64s_mut(out_extra, 3).copy_from_slice(&[acc.log_likelihood, acc.unsupported, acc.clients]);
        Ok(())
    })())
}

fn write_model(model: &Mdm, tau: *mut f64, alpha: *mut f64, pi: *mut f64) {
    unsafe {
        f64s_mut(tau, model.k).copy_from_slice(&model.tau);
        f64s_mut(alpha, model.k * model.c).copy_from_slice(&model.alpha);
        f64s_mut(pi, model.k * model.n_max).copy_from_slice(&model.pi);
    }
}

/// Algorithm 1, server side, from the sums of `clients` clients (noisy 1: Gaussian
/// noise was added to them); the guards that acted in out_flags[0] (server.rs bits).
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_initialize(
    k: usize,
    c: usize,
    n_max: usize,
    e: *const f64,
    p: *const f64,
    q: *const f64,
    clients: f64,
    noisy: i32,
    out_tau: *mut f64,
    out_alpha: *mut f64,
    out_pi: *mut f64,
    out_flags: *mut f64,
) -> i32 {
    status((|| {
        mdm::check_shape(k, c, n_max)?;
        let agg = InitStats { k, c, n_max, e: f64s(e, k * n_max).to_vec(), p: f64s(p, k * c).to_vec(), q: f64s(q, k * c).to_vec(), clients };
        let (model, flags) = mdm_server::initialize(&agg, noisy != 0)?;
        write_model(&model, out_tau, out_alpha, out_pi);
        *out_flags = flags as f64;
        Ok(())
    })())
}

/// Algorithm 2, server side: the model after a round with the sums of `clients`
/// clients (noisy 1: Gaussian noise was added to them); the guards that acted
/// in out_flags[0].
///
/// # Safety
/// Pointers cover the shapes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_update(
    k: usize,
    c: usize,
    n_max: usize,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    omega: *const f64,
    e: *const f64,
    u: *const f64,
    v: *const f64,
    clients: f64,
    noisy: i32,
    out_tau: *mut f64,
    out_alpha: *mut f64,
    out_pi: *mut f64,
    out_flags: *mut f64,
) -> i32 {
    status((|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let agg = RoundStats {
            k,
            c,
            n_max,
            omega: f64s(omega, k).to_vec(),
            e: f64s(e, k * n_max).to_vec(),
            u: f64s(u, k * c).to_vec(),
            v: f64s(v, k).to_vec(),
            log_likelihood: 0.0,
            unsupported: 0.0,
            clients,
        };
        let (next, flags) = mdm_server::update(&model, &agg, noisy != 0)?;
        write_model(&next, out_tau, out_alpha, out_pi);
        *out_flags = flags as f64;
        Ok(())
    })())
}
