//! Mixtures of Dirichlet-multinomials (fedmix_core::mdm). A model crosses the
//! boundary as (k, c, n_max, tau, alpha, pi): tau (k), alpha (k x c) and pi
//! (k x n_max), row-major, and is checked on every call (it is small). Client
//! histograms are m x c row-major counts with their sizes (m). Sums are written,
//! not added, to the outputs. Histograms that serve many calls (a user group's,
//! a central fit's) can be copied in and checked once (fm_mdm_histograms): the
//! `_held` exports read that copy and check only its fit to the model.

use super::{buffers, f64s, f64s_mut, seed, status, u32s, u32s_mut};
use fedmix_core::mdm::client::{self as mdm_client, InitStats, Prepared, RoundStats};
use fedmix_core::mdm::{self, sample as mdm_sample, server as mdm_server, Histograms, Mdm};
use fedmix_core::{Error, Result, Rng};

/// The model's shapes are checked before any slice is taken from them.
unsafe fn mdm_model(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64) -> Result<Mdm> {
    mdm::check_shape(k, c, n_max)?;
    Mdm::new(k, c, n_max, buffers::copy(f64s(tau, k))?, buffers::copy(f64s(alpha, k * c))?, buffers::copy(f64s(pi, k * n_max))?)
}

fn mdm_cells(m: usize, c: usize) -> Result<usize> {
    m.checked_mul(c).filter(|&v| v <= isize::MAX as usize / 8).ok_or_else(|| Error::param(format!("{} histograms of {} categories do not fit in memory", m, c)))
}

/// Checks a model (fedmix_core::mdm::Mdm::new).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_check(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64) -> i32 {
    status(|| mdm_model(k, c, n_max, tau, alpha, pi).map(|_| ()))
}

/// Checks m client histograms (m x c counts) and their sizes against N = n_max
/// (fedmix_core::mdm::check_histograms).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_check_histograms(counts: *const f64, sizes: *const f64, m: usize, c: usize, n_max: usize) -> i32 {
    status(|| {
        let cells = mdm_cells(m, c)?;
        mdm::check_histograms(f64s(counts, cells), f64s(sizes, m), m, c, n_max)
    })
}

/// ln q(c_i, n_i) of m clients into out_ll (m; -inf where the model gives the
/// size probability 0) and, unless out_resp is null, their responsibilities (m x k).
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_log_pmf(
    options: *const crate::MdmLogPmfOptions,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    counts: *const f64,
    sizes: *const f64,
    out_ll: *mut f64,
    out_resp: *mut f64,
) -> i32 {
    let crate::MdmLogPmfOptions { k, c, n_max, m } = *options;
    let k = k as usize; let c = c as usize; let n_max = n_max as usize; let m = m as usize;
    status(|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let cells = mdm_cells(m, c)?;
        let resp = if out_resp.is_null() { None } else { Some(f64s_mut(out_resp, mdm_cells(m, k)?)) };
        mdm_client::log_pmf(&Prepared::for_batch(&model, m)?, f64s(counts, cells), f64s(sizes, m), m, f64s_mut(out_ll, m), resp)
    })
}

/// m new clients: histograms (m x c), sizes (m) and components (m).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_sample(
    options: *const crate::MdmSampleOptions,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    out_counts: *mut f64,
    out_sizes: *mut f64,
    out_components: *mut u32,
) -> i32 {
    let crate::MdmSampleOptions { k, c, n_max, m, seed_lo, seed_hi } = *options;
    let k = k as usize; let c = c as usize; let n_max = n_max as usize; let m = m as usize;
    status(|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let cells = mdm_cells(m, c)?;
        mdm_sample::sample(&model, m, &mut Rng::new(seed(seed_lo, seed_hi)), f64s_mut(out_counts, cells), f64s_mut(out_sizes, m), u32s_mut(out_components, m))
    })
}

/// Algorithm 1's sums of m clients (client i chose components[i]): E (k x n_max), P and Q (k x c).
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_init_stats(
    options: *const crate::MdmInitStatsOptions,
    counts: *const f64,
    sizes: *const f64,
    components: *const u32,
    out_e: *mut f64,
    out_p: *mut f64,
    out_q: *mut f64,
) -> i32 {
    let crate::MdmInitStatsOptions { k, c, n_max, m } = *options;
    let k = k as usize; let c = c as usize; let n_max = n_max as usize; let m = m as usize;
    status(|| {
        mdm::check_shape(k, c, n_max)?;
        let cells = mdm_cells(m, c)?;
        let mut acc = InitStats::zeros(k, c, n_max)?;
        mdm_client::init_contributions(f64s(counts, cells), f64s(sizes, m), m, u32s(components, m), &mut acc)?;
        f64s_mut(out_e, k * n_max).copy_from_slice(&acc.e);
        f64s_mut(out_p, k * c).copy_from_slice(&acc.p);
        f64s_mut(out_q, k * c).copy_from_slice(&acc.q);
        Ok(())
    })
}

/// A model prepared for client statistics (fedmix_core::mdm::client::Prepared),
/// kept in WASM memory across calls: the clients of a round in one process
/// share it, and once enough have used it, the per-count terms are tabulated.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_prepare(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64, out_handle: *mut usize) -> i32 {
    status(|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        *out_handle = Box::into_raw(Box::new(Prepared::new(&model)?)) as usize;
        Ok(())
    })
}

/// # Safety
/// `h` is 0 or a handle from fm_mdm_prepare, freed once.
pub unsafe extern "C" fn fm_mdm_prepared_free(h: *mut Prepared) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Algorithm 2's sums of m clients under a prepared model: omega (k), E
/// (k x n_max), u (k x c), v (k), and out_extra = [log-likelihood of the
/// supported clients, unsupported clients, clients]. `clip` bounds each
/// client's (u, v) norm (Infinity: no clipping).
///
/// # Safety
/// `h` is a live handle from fm_mdm_prepare; pointers cover the model's shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_round_stats(
    h: *mut Prepared,
    counts: *const f64,
    sizes: *const f64,
    options: *const crate::MdmRoundStatsOptions,
    out_omega: *mut f64,
    out_e: *mut f64,
    out_u: *mut f64,
    out_v: *mut f64,
    out_extra: *mut f64,
) -> i32 {
    let crate::MdmRoundStatsOptions { m, clip } = *options;
    let m = m as usize;
    status(|| {
        let prep = &mut *h;
        let (k, c, n_max) = (prep.model.k, prep.model.c, prep.model.n_max);
        let cells = mdm_cells(m, c)?;
        prep.serve(m);
        let mut acc = RoundStats::zeros(k, c, n_max)?;
        mdm_client::round_statistics(prep, f64s(counts, cells), f64s(sizes, m), m, clip, &mut acc)?;
        write_round(&acc, out_omega, out_e, out_u, out_v, out_extra);
        Ok(())
    })
}

/// m client histograms (m x c counts) and their sizes, copied into WASM memory
/// and checked once (fedmix_core::mdm::Histograms): the `_held` exports read
/// this copy, which nothing outside the core can write, without checking it again.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_histograms(counts: *const f64, sizes: *const f64, m: usize, c: usize, out_handle: *mut usize) -> i32 {
    status(|| {
        let cells = mdm_cells(m, c)?;
        let h = Histograms::new(buffers::copy(f64s(counts, cells))?, buffers::copy(f64s(sizes, m))?, m, c)?;
        *out_handle = Box::into_raw(Box::new(h)) as usize;
        Ok(())
    })
}

/// # Safety
/// `h` is 0 or a handle from fm_mdm_histograms, freed once.
pub unsafe extern "C" fn fm_mdm_histograms_free(h: *mut Histograms) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// fm_mdm_init_stats over histograms checked once (`hist`, from fm_mdm_histograms).
///
/// # Safety
/// `hist` is a live handle from fm_mdm_histograms; pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_init_stats_held(hist: *const Histograms, k: usize, n_max: usize, components: *const u32, out_e: *mut f64, out_p: *mut f64, out_q: *mut f64) -> i32 {
    status(|| {
        let h = &*hist;
        let c = h.c();
        mdm::check_shape(k, c, n_max)?;
        let mut acc = InitStats::zeros(k, c, n_max)?;
        mdm_client::init_contributions_held(h, u32s(components, h.m()), &mut acc)?;
        f64s_mut(out_e, k * n_max).copy_from_slice(&acc.e);
        f64s_mut(out_p, k * c).copy_from_slice(&acc.p);
        f64s_mut(out_q, k * c).copy_from_slice(&acc.q);
        Ok(())
    })
}

/// fm_mdm_round_stats over histograms checked once (`hist`, from fm_mdm_histograms).
///
/// # Safety
/// `h` and `hist` are live handles from fm_mdm_prepare and fm_mdm_histograms; pointers cover the model's shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_round_stats_held(
    h: *mut Prepared,
    hist: *const Histograms,
    clip: f64,
    out_omega: *mut f64,
    out_e: *mut f64,
    out_u: *mut f64,
    out_v: *mut f64,
    out_extra: *mut f64,
) -> i32 {
    status(|| {
        let (prep, hist) = (&mut *h, &*hist);
        let (k, c, n_max) = (prep.model.k, prep.model.c, prep.model.n_max);
        prep.serve(hist.m());
        let mut acc = RoundStats::zeros(k, c, n_max)?;
        mdm_client::round_statistics_held(prep, hist, clip, &mut acc)?;
        write_round(&acc, out_omega, out_e, out_u, out_v, out_extra);
        Ok(())
    })
}

/// fm_mdm_log_pmf under a prepared model (`h`, from fm_mdm_prepare) over
/// histograms checked once (`hist`): out_ll (m) and, unless null, out_resp (m x k).
///
/// # Safety
/// `h` and `hist` are live handles from fm_mdm_prepare and fm_mdm_histograms; pointers cover the shapes.
pub unsafe extern "C" fn fm_mdm_log_pmf_held(h: *mut Prepared, hist: *const Histograms, out_ll: *mut f64, out_resp: *mut f64) -> i32 {
    status(|| {
        let (prep, hist) = (&mut *h, &*hist);
        let m = hist.m();
        // as fm_mdm_log_pmf's Prepared::for_batch: the tables once the batch repays them
        prep.serve(m);
        let resp = if out_resp.is_null() { None } else { Some(f64s_mut(out_resp, mdm_cells(m, prep.model.k)?)) };
        mdm_client::log_pmf_held(prep, hist, f64s_mut(out_ll, m), resp)
    })
}

unsafe fn write_round(acc: &RoundStats, out_omega: *mut f64, out_e: *mut f64, out_u: *mut f64, out_v: *mut f64, out_extra: *mut f64) {
    let (k, c, n_max) = (acc.k, acc.c, acc.n_max);
    f64s_mut(out_omega, k).copy_from_slice(&acc.omega);
    f64s_mut(out_e, k * n_max).copy_from_slice(&acc.e);
    f64s_mut(out_u, k * c).copy_from_slice(&acc.u);
    f64s_mut(out_v, k).copy_from_slice(&acc.v);
    f64s_mut(out_extra, 3).copy_from_slice(&[acc.log_likelihood, acc.unsupported, acc.clients]);
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
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_initialize(
    options: *const crate::MdmInitializeOptions,
    e: *const f64,
    p: *const f64,
    q: *const f64,
    out_tau: *mut f64,
    out_alpha: *mut f64,
    out_pi: *mut f64,
    out_flags: *mut f64,
) -> i32 {
    let crate::MdmInitializeOptions { k, c, n_max, clients, noisy } = *options;
    let k = k as usize; let c = c as usize; let n_max = n_max as usize;
    status(|| {
        mdm::check_shape(k, c, n_max)?;
        let agg = InitStats { k, c, n_max, e: buffers::copy(f64s(e, k * n_max))?, p: buffers::copy(f64s(p, k * c))?, q: buffers::copy(f64s(q, k * c))?, clients };
        let (model, flags) = mdm_server::initialize(&agg, noisy != 0)?;
        write_model(&model, out_tau, out_alpha, out_pi);
        *out_flags = flags as f64;
        Ok(())
    })
}

/// Algorithm 2, server side: the model after a round with the sums of `clients`
/// clients (noisy 1: Gaussian noise was added to them); the guards that acted
/// in out_flags[0].
///
/// # Safety
/// Pointers cover the shapes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_mdm_update(
    options: *const crate::MdmUpdateOptions,
    tau: *const f64,
    alpha: *const f64,
    pi: *const f64,
    omega: *const f64,
    e: *const f64,
    u: *const f64,
    v: *const f64,
    out_tau: *mut f64,
    out_alpha: *mut f64,
    out_pi: *mut f64,
    out_flags: *mut f64,
) -> i32 {
    let crate::MdmUpdateOptions { k, c, n_max, clients, noisy } = *options;
    let k = k as usize; let c = c as usize; let n_max = n_max as usize;
    status(|| {
        let model = mdm_model(k, c, n_max, tau, alpha, pi)?;
        let agg = RoundStats {
            k,
            c,
            n_max,
            omega: buffers::copy(f64s(omega, k))?,
            e: buffers::copy(f64s(e, k * n_max))?,
            u: buffers::copy(f64s(u, k * c))?,
            v: buffers::copy(f64s(v, k))?,
            log_likelihood: 0.0,
            unsupported: 0.0,
            clients,
        };
        let (next, flags) = mdm_server::update(&model, &agg, noisy != 0)?;
        write_model(&next, out_tau, out_alpha, out_pi);
        *out_flags = flags as f64;
        Ok(())
    })
}
