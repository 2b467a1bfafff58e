//! Costs between Gaussians, batched (FedDistr's matching).

use super::{f64s, f64s_mut, status};
use fedmix_core::gaussian_costs::{cost_matrix, Cost, Form, Gaussians};
use fedmix_core::Error;
use std::slice;

/// One set of n Gaussians from its pointers; `labels` null means none.
unsafe fn gaussians<'a>(n: usize, d: usize, size: usize, means: *const f64, covariances: *const f64, labels: *const i32) -> Result<Gaussians<'a>, Error> {
    let too_many = || Error::data(format!("{} Gaussians of {} dimensions are too many", n, d));
    let m = n.checked_mul(d).ok_or_else(too_many)?;
    let c = n.checked_mul(size).ok_or_else(too_many)?;
    let labels = if labels.is_null() {
        None
    } else if n == 0 {
        Some(&[][..])
    } else {
        Some(slice::from_raw_parts(labels, n))
    };
    Ok(Gaussians { n, means: f64s(means, m), covariances: f64s(covariances, c), labels })
}

/// The na x nb row-major matrix of costs (`cost`: a gaussian_cost code)
/// between the Gaussians of sets a and b in d dimensions, covariances in
/// `form` (a covariance_form code), into `out`. Labels (i32, one per Gaussian)
/// are given for both sets or neither (null): a pair whose labels differ is
/// +Infinity. NaN marks a cost that is undefined (see fedmix_core::gaussian_costs).
///
/// # Safety
/// Means cover n * d values, covariances n * d * d (full) or n * d (diagonal),
/// labels n, `out` na * nb.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fm_gaussian_costs(
    options: *const crate::GaussianCostsOptions,
    a_means: *const f64,
    a_covariances: *const f64,
    a_labels: *const i32,
    b_means: *const f64,
    b_covariances: *const f64,
    b_labels: *const i32,
    out: *mut f64,
) -> i32 {
    let crate::GaussianCostsOptions { cost, form, d, na, nb } = *options;
    let d = d as usize; let na = na as usize; let nb = nb as usize;
    status(|| {
        let cost = Cost::from_code(cost)?;
        let form = Form::from_code(form)?;
        let size = match form {
            Form::Full => d.checked_mul(d).ok_or_else(|| Error::data(format!("{} dimensions are too many", d)))?,
            Form::Diagonal => d,
        };
        let a = gaussians(na, d, size, a_means, a_covariances, a_labels)?;
        let b = gaussians(nb, d, size, b_means, b_covariances, b_labels)?;
        let cells = na.checked_mul(nb).ok_or_else(|| Error::data(format!("a {} x {} cost matrix is too large", na, nb)))?;
        cost_matrix(cost, form, d, &a, &b, f64s_mut(out, cells))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null;

    #[test]
    fn costs_through_the_abi_with_labels_and_errors() {
        let means = [0.0, 0.0, 3.0, 4.0];
        let covs = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let la = [1, 1];
        let lb = [1, 2];
        let mut out = [0.0; 4];
        let w = Cost::Wasserstein.code();
        let full = Form::Full.code();
        let o = |cost| crate::GaussianCostsOptions { cost, form: full, d: 2, na: 2, nb: 2 };
        let s = unsafe { fm_gaussian_costs(&o(w), means.as_ptr(), covs.as_ptr(), la.as_ptr(), means.as_ptr(), covs.as_ptr(), lb.as_ptr(), out.as_mut_ptr()) };
        assert_eq!(s, 0);
        assert!(out[0].abs() < 1e-12 && out[1] == f64::INFINITY && (out[2] - 5.0).abs() < 1e-12 && out[3] == f64::INFINITY);
        let s = unsafe { fm_gaussian_costs(&o(w), means.as_ptr(), covs.as_ptr(), la.as_ptr(), means.as_ptr(), covs.as_ptr(), null(), out.as_mut_ptr()) };
        assert_eq!(s, fedmix_core::ErrorKind::InvalidParameter.code());
        let s = unsafe { fm_gaussian_costs(&o(7), means.as_ptr(), covs.as_ptr(), null(), means.as_ptr(), covs.as_ptr(), null(), out.as_mut_ptr()) };
        assert_eq!(s, fedmix_core::ErrorKind::InvalidParameter.code());
    }
}
