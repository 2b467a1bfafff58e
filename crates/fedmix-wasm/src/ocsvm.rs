//! One-class SVMs: fitting, models from their parts, reading them back and
//! the decision function, over opaque handles TypeScript frees.

use super::codes::{READ_DUAL_COEF, READ_SUPPORT, READ_SUPPORT_VECTORS};
use super::{buffers, data, f64s, f64s_mut, status, u32s};
use fedmix_core::svm::{self, Gamma, KernelType, OcsvmOptions, OneClassSvm};
use fedmix_core::Error;

/// A fitted or loaded one-class SVM, owned by TypeScript.
pub struct OcsvmHandle {
    pub(crate) model: OneClassSvm,
}

fn into_handle(model: OneClassSvm, out: *mut usize) {
    unsafe { *out = Box::into_raw(Box::new(OcsvmHandle { model })) as usize };
}

/// Fits on n x d column-major rows. `kernel`: a KernelType code; `gamma_code`:
/// Gamma::SCALE, AUTO or VALUE (then `gamma` is the value); `shrinking` 0 or
/// 1; `cache_mb` the kernel cache in MiB; `max_iter` -1 for no limit.
///
/// # Safety
/// Pointers cover the shapes.
pub unsafe extern "C" fn fm_ocsvm_fit(
    x: *const f64,
    options: *const crate::OcsvmFitOptions,
    out_handle: *mut usize,
) -> i32 {
    let crate::OcsvmFitOptions { n, d, kernel, gamma_code, gamma, nu, tol, shrinking, cache_mb, max_iter } = *options;
    let n = n as usize; let d = d as usize;
    status(|| {
        let max_iter = match max_iter {
            -1 => None,
            m if m >= 0 => Some(m as usize),
            m => return Err(Error::param(format!("maxIter must be -1 (no limit) or at least 0, got {}", m))),
        };
        let opts = OcsvmOptions {
            kernel: KernelType::from_code(kernel)?,
            gamma: Gamma::from_code(gamma_code, gamma)?,
            nu,
            tol,
            shrinking: shrinking != 0,
            cache_mb,
            max_iter,
        };
        into_handle(svm::fit(&data(x, n, d)?, &opts)?, out_handle);
        Ok(())
    })
}

/// A model from its parts: `sv` n_sv x d row-major, `coef` n_sv values,
/// `support` n_sv training-row indices or null.
///
/// # Safety
/// Pointers cover their lengths.
pub unsafe extern "C" fn fm_ocsvm_from_parts(
    options: *const crate::OcsvmFromPartsOptions,
    sv: *const f64,
    coef: *const f64,
    support: *const u32,
    out_handle: *mut usize,
) -> i32 {
    let crate::OcsvmFromPartsOptions { kernel, gamma, nu, d, sv_len, n_sv, rho, support_len } = *options;
    let d = d as usize; let sv_len = sv_len as usize; let n_sv = n_sv as usize; let support_len = support_len as usize;
    status(|| {
        let support = if support.is_null() { None } else { Some(buffers::copy(u32s(support, support_len))?) };
        let m = OneClassSvm::from_parts(KernelType::from_code(kernel)?, gamma, nu, d, f64s(sv, sv_len), f64s(coef, n_sv), rho, support.as_deref())?;
        into_handle(m, out_handle);
        Ok(())
    })
}

/// Restores fit statistics on a loaded model (JSON round trip).
///
/// # Safety
/// `h` is a live handle.
pub unsafe extern "C" fn fm_ocsvm_set_stats(h: *mut OcsvmHandle, n_iter: usize, objective: f64, converged: i32) {
    let m = &mut (*h).model;
    m.n_iter = n_iter;
    m.objective = objective;
    m.converged = converged != 0;
}

/// # Safety
/// `h` is a live handle; it is dead afterwards.
pub unsafe extern "C" fn fm_ocsvm_free(h: *mut OcsvmHandle) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Writes [d, n_sv, kernel code, gamma, nu, rho, objective, n_iter,
/// converged, support indices held (0 or 1)].
///
/// # Safety
/// `h` is a live handle, `out` holds 10 values.
pub unsafe extern "C" fn fm_ocsvm_info(h: *const OcsvmHandle, out: *mut f64) {
    let m = &(*h).model;
    let v = [
        m.sv.d as f64,
        m.sv.n as f64,
        m.kernel.code() as f64,
        m.gamma,
        m.nu,
        m.rho,
        m.objective,
        m.n_iter as f64,
        m.converged as i32 as f64,
        (!m.support.is_empty()) as i32 as f64,
    ];
    f64s_mut(out, v.len()).copy_from_slice(&v);
}

/// Copies an array out (`which`: one of the READ_ codes): the support vectors
/// (n_sv x d row-major), their coefficients, or their training rows (as
/// doubles; none for a model loaded without them). Returns the number of
/// values, or -1 for an unknown code. Allocates nothing.
///
/// # Safety
/// `h` is a live handle and `out` is large enough.
pub unsafe extern "C" fn fm_ocsvm_read(h: *const OcsvmHandle, which: i32, out: *mut f64) -> i32 {
    let m = &(*h).model;
    match which {
        READ_SUPPORT_VECTORS => {
            let len = m.sv.n * m.sv.d;
            m.sv.unpadded_into(f64s_mut(out, len));
            len as i32
        }
        READ_DUAL_COEF => {
            f64s_mut(out, m.coef.len()).copy_from_slice(&m.coef);
            m.coef.len() as i32
        }
        READ_SUPPORT => {
            for (o, &i) in f64s_mut(out, m.support.len()).iter_mut().zip(&m.support) {
                *o = i as f64;
            }
            m.support.len() as i32
        }
        _ => -1,
    }
}

/// decision(x) = sum_i a_i K(x_i, x) - rho per row into `out` (n).
///
/// # Safety
/// Live handle; pointers cover the shapes.
pub unsafe extern "C" fn fm_ocsvm_decision_function(h: *const OcsvmHandle, x: *const f64, n: usize, d: usize, out: *mut f64) -> i32 {
    let m = &(*h).model;
    status(|| m.decision_function(&data(x, n, d)?, f64s_mut(out, n)))
}
