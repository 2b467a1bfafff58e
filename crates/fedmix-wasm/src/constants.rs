//! The numbers TypeScript needs from the core, as one table of (name, value)
//! rows: the codes of the C ABI's enumerations, the status codes, and the
//! limits and thresholds that TypeScript applies before or around a call.
//! The loader reads the table once at init() (ts/wasm/constants.ts), so the
//! numbers live here and nowhere else. A name is `group.member`, the member
//! spelled as TypeScript spells the option (`covariance_type.full`,
//! `init_params.k-means++`) or as the Rust constant in lower case
//! (`mdm.max_cells`). Adding a row changes no export; renaming or removing one
//! is an ABI change (bump ABI_VERSION). scripts/gen-wasm-abi.mjs reads the
//! rows' names (and the comment above each group's first row) into
//! TypeScript's CORE_CONSTANTS: keep one row a line.

use super::heap::RESERVE;
use super::codes::*;
use super::{gmm, kmeans, OK};
use fedmix_core::distributions::MIN_SHAPE;
use fedmix_core::error::ErrorKind;
use fedmix_core::fedgem::server::{MIN_ROWS, MIN_SHARE};
use fedmix_core::gaussian_costs::{Cost, Form};
use fedmix_core::gmm::fit::InitParams;
use fedmix_core::gmm::CovarianceType;
use fedmix_core::mdm::server::{ALPHA_CAPPED, ALPHA_FLOORED, ALPHA_KEPT, CLAMPED, COMPONENT_KEPT, DEGENERATE_MOMENTS, EMPTY_COMPONENT};
use fedmix_core::mdm::MAX_CELLS;
use fedmix_core::nn::{optim, Activation, Init, Loss, TargetKind};
use fedmix_core::svm::{Gamma, KernelType};

static TABLE: &[(&str, f64)] = &[
    // the i32 a call returns: ok, or ErrorKind::code
    ("status.ok", OK as f64),
    ("status.invalid_data", ErrorKind::InvalidData.code() as f64),
    ("status.invalid_parameter", ErrorKind::InvalidParameter.code() as f64),
    ("status.numerical", ErrorKind::Numerical.code() as f64),
    ("status.allocation", ErrorKind::Allocation.code() as f64),
    // CovarianceType::code
    ("covariance_type.full", CovarianceType::Full.code() as f64),
    ("covariance_type.tied", CovarianceType::Tied.code() as f64),
    ("covariance_type.diag", CovarianceType::Diag.code() as f64),
    ("covariance_type.spherical", CovarianceType::Spherical.code() as f64),
    // InitParams::code (fm_gmm_fit's initParams)
    ("init_params.kmeans", InitParams::KMeans.code() as f64),
    ("init_params.k-means++", InitParams::KMeansPlusPlus.code() as f64),
    ("init_params.random", InitParams::Random.code() as f64),
    ("init_params.random_from_data", InitParams::RandomFromData.code() as f64),
    // fm_gmm_read's `which`
    ("gmm_read.weights", gmm::READ_WEIGHTS as f64),
    ("gmm_read.means", gmm::READ_MEANS as f64),
    ("gmm_read.covariances", gmm::READ_COVARIANCES as f64),
    ("gmm_read.precisions_cholesky", gmm::READ_PRECISIONS_CHOLESKY as f64),
    ("gmm_read.precisions", gmm::READ_PRECISIONS as f64),
    // fm_kmeans_fit's `init`
    ("kmeans_init.k-means++", kmeans::INIT_PLUS_PLUS as f64),
    ("kmeans_init.random", kmeans::INIT_RANDOM as f64),
    ("kmeans_init.given", kmeans::INIT_GIVEN as f64),
    // fm_gamma_differences' `which`
    ("gamma_differences.digamma", DIGAMMA_DIFFERENCE as f64),
    ("gamma_differences.lgamma", LGAMMA_DIFFERENCE as f64),
    // distributions::MIN_SHAPE, the smallest gamma shape and Dirichlet concentration
    ("distributions.min_shape", MIN_SHAPE),
    // the bytes the core keeps free for every call's small buffers (RESERVE in crates/fedmix-wasm), not counted as in use
    ("memory.reserve", RESERVE as f64),
    // mdm::MAX_CELLS, the largest K x C and K x N
    ("mdm.max_cells", MAX_CELLS as f64),
    // the bits of the MDM server's guard flags (mdm::server)
    ("mdm_guard.empty_component", EMPTY_COMPONENT as f64),
    ("mdm_guard.degenerate_moments", DEGENERATE_MOMENTS as f64),
    ("mdm_guard.alpha_floored", ALPHA_FLOORED as f64),
    ("mdm_guard.alpha_capped", ALPHA_CAPPED as f64),
    ("mdm_guard.component_kept", COMPONENT_KEPT as f64),
    ("mdm_guard.clamped", CLAMPED as f64),
    ("mdm_guard.alpha_kept", ALPHA_KEPT as f64),
    // fedgem::server::MIN_SHARE and MIN_ROWS: a component below that share of its client's rows, or with fewer rows, takes no part in overlaps
    ("fedgem.min_share", MIN_SHARE),
    ("fedgem.min_rows", MIN_ROWS),
    // fm_fedgem_client_new's `init`
    ("fedgem_init.k-means++", INIT_SEEDS as f64),
    ("fedgem_init.kmeans", INIT_KMEANS as f64),
    // fm_fedgem_client_steps' `method`
    ("fedgem_radius.closed_form", RADIUS_CLOSED_FORM as f64),
    ("fedgem_radius.bisection", RADIUS_BISECTION as f64),
    // nn::Activation::code (fm_nn_new's hidden and output activations)
    ("nn_activation.relu", Activation::Relu.code() as f64),
    ("nn_activation.sigmoid", Activation::Sigmoid.code() as f64),
    ("nn_activation.tanh", Activation::Tanh.code() as f64),
    ("nn_activation.identity", Activation::Identity.code() as f64),
    ("nn_activation.softmax", Activation::Softmax.code() as f64),
    // nn::Loss::code
    ("nn_loss.mse", Loss::Mse.code() as f64),
    ("nn_loss.bce", Loss::Bce.code() as f64),
    ("nn_loss.softmax-cross-entropy", Loss::SoftmaxCrossEntropy.code() as f64),
    // nn::Init::code
    ("nn_init.pytorch", Init::PyTorch.code() as f64),
    ("nn_init.xavier", Init::Xavier.code() as f64),
    // fm_nn_optimizer_new's `kind`
    ("nn_optimizer.sgd", optim::SGD as f64),
    ("nn_optimizer.adam", optim::ADAM as f64),
    // nn::TargetKind::code (fm_nn_set_new's `kind`)
    ("nn_targets.values", TargetKind::Values.code() as f64),
    ("nn_targets.labels", TargetKind::Labels.code() as f64),
    ("nn_targets.inputs", TargetKind::Inputs.code() as f64),
    // fm_ocsvm_fit's and fm_ocsvm_from_parts' `kernel` (svm::KernelType::code)
    ("ocsvm_kernel.rbf", KernelType::Rbf.code() as f64),
    ("ocsvm_kernel.linear", KernelType::Linear.code() as f64),
    // fm_ocsvm_fit's `gammaCode`: 'scale', 'auto', or the number passed as `gamma`
    ("ocsvm_gamma.scale", Gamma::SCALE as f64),
    ("ocsvm_gamma.auto", Gamma::AUTO as f64),
    ("ocsvm_gamma.value", Gamma::VALUE as f64),
    // fm_ocsvm_read's `which`
    ("ocsvm_read.support_vectors", READ_SUPPORT_VECTORS as f64),
    ("ocsvm_read.dual_coef", READ_DUAL_COEF as f64),
    ("ocsvm_read.support", READ_SUPPORT as f64),
    // fm_gaussian_costs' `cost` (gaussian_costs::Cost::code)
    ("gaussian_cost.wasserstein", Cost::Wasserstein.code() as f64),
    ("gaussian_cost.bhattacharyya", Cost::Bhattacharyya.code() as f64),
    // fm_gaussian_costs' `form` (gaussian_costs::Form::code)
    ("covariance_form.full", Form::Full.code() as f64),
    ("covariance_form.diagonal", Form::Diagonal.code() as f64),
];

/// Number of rows in the table.
pub extern "C" fn fm_constant_count() -> usize {
    TABLE.len()
}

/// The UTF-8 name of row `i` (static; never freed), or null past the end.
pub extern "C" fn fm_constant_name_ptr(i: usize) -> *const u8 {
    TABLE.get(i).map_or(std::ptr::null(), |r| r.0.as_ptr())
}

/// The length in bytes of row `i`'s name, or 0 past the end.
pub extern "C" fn fm_constant_name_len(i: usize) -> usize {
    TABLE.get(i).map_or(0, |r| r.0.len())
}

/// The value of row `i`, or NaN past the end.
pub extern "C" fn fm_constant_value(i: usize) -> f64 {
    TABLE.get(i).map_or(f64::NAN, |r| r.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(name: &str) -> Option<f64> {
        TABLE.iter().find(|r| r.0 == name).map(|r| r.1)
    }

    #[test]
    fn names_are_unique_and_grouped() {
        for (i, (name, _)) in TABLE.iter().enumerate() {
            assert!(TABLE[..i].iter().all(|r| r.0 != *name), "{} twice", name);
            assert_eq!(name.matches('.').count(), 1, "{} is not group.member", name);
        }
    }

    #[test]
    fn every_code_of_the_core_is_in_the_table() {
        for t in CovarianceType::ALL {
            assert_eq!(value(&format!("covariance_type.{}", t.name())), Some(t.code() as f64));
            assert_eq!(CovarianceType::from_code(t.code()).unwrap(), t);
        }
        for k in KernelType::ALL {
            assert_eq!(value(&format!("ocsvm_kernel.{}", k.name())), Some(k.code() as f64));
            assert_eq!(KernelType::from_code(k.code()).unwrap(), k);
        }
        for p in InitParams::ALL {
            assert_eq!(value(&format!("init_params.{}", p.name())), Some(p.code() as f64));
        }
        for a in Activation::ALL {
            assert_eq!(value(&format!("nn_activation.{}", a.name())), Some(a.code() as f64));
        }
        for l in Loss::ALL {
            assert_eq!(value(&format!("nn_loss.{}", l.name())), Some(l.code() as f64));
        }
        for i in Init::ALL {
            assert_eq!(value(&format!("nn_init.{}", i.name())), Some(i.code() as f64));
        }
        for c in Cost::ALL {
            assert_eq!(value(&format!("gaussian_cost.{}", c.name())), Some(c.code() as f64));
        }
        for f in Form::ALL {
            assert_eq!(value(&format!("covariance_form.{}", f.name())), Some(f.code() as f64));
        }
        for k in TargetKind::ALL {
            assert_eq!(value(&format!("nn_targets.{}", k.name())), Some(k.code() as f64));
        }
        let statuses: Vec<f64> = TABLE.iter().filter(|r| r.0.starts_with("status.")).map(|r| r.1).collect();
        assert_eq!(statuses.len(), ErrorKind::ALL.len() + 1);
        for k in ErrorKind::ALL {
            assert!(statuses.contains(&(k.code() as f64)), "{:?}", k);
            assert_ne!(k.code(), OK);
        }
    }

    #[test]
    fn the_guard_flags_are_the_bits_in_order() {
        let flags: Vec<f64> = TABLE.iter().filter(|r| r.0.starts_with("mdm_guard.")).map(|r| r.1).collect();
        let bits: Vec<f64> = (0..flags.len()).map(|b| (1u32 << b) as f64).collect();
        assert_eq!(flags, bits);
    }

    #[test]
    fn values_are_finite_and_exact() {
        assert_eq!(value("mdm.max_cells").map(|v| v as usize), Some(MAX_CELLS));
        for (name, v) in TABLE {
            assert!(v.is_finite(), "{}", name);
        }
    }

    #[test]
    fn rows_read_through_the_exports() {
        assert_eq!(fm_constant_count(), TABLE.len());
        for i in 0..fm_constant_count() {
            let name = unsafe { std::slice::from_raw_parts(fm_constant_name_ptr(i), fm_constant_name_len(i)) };
            assert_eq!(std::str::from_utf8(name).unwrap(), TABLE[i].0);
            assert_eq!(fm_constant_value(i), TABLE[i].1);
        }
        assert!(fm_constant_name_ptr(TABLE.len()).is_null());
        assert_eq!(fm_constant_name_len(TABLE.len()), 0);
        assert!(fm_constant_value(TABLE.len()).is_nan());
    }
}
