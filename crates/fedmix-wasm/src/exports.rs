//! The C ABI of fedmix, declared once: every export with the module that
//! holds it (`"core"`, a feature of modules.json, `every` module, or `lent`:
//! the core's heap, which the feature modules import), its parameters and
//! result; and the option structs that carry the scalar arguments of the
//! exports that would otherwise take more than 8 positional ones.
//!
//! Rust reads this through the macros of lib.rs (each entry becomes the
//! `#[no_mangle]` function that calls its implementation, of the same name,
//! in the module named, under the module's cargo feature); scripts/gen-wasm-abi.mjs
//! reads it to generate ts/wasm/abi.generated.ts (the TypeScript interface,
//! the module placement map, the writers of the option structs, the constants'
//! names). Keep each entry in the form `export!(module fn path::name(params) -> result);`.
//! Changing an entry's meaning is an ABI change: bump ABI_VERSION in lib.rs.

#![allow(clippy::missing_safety_doc)]

#[cfg(any(feature = "core", feature = "dem", feature = "float32"))]
use crate::gmm_handle::GmmHandle;
#[cfg(any(feature = "core", feature = "dirichlet"))]
use fedmix_core::Rng;
#[cfg(feature = "dem")]
use crate::gmm_shards::EmWorkspace;
#[cfg(feature = "svm")]
use crate::ocsvm::OcsvmHandle;
#[cfg(feature = "nn")]
use fedmix_core::nn::{Network, Optimizer, TrainingSet};
#[cfg(feature = "dirichlet")]
use fedmix_core::mdm::client::Prepared;
#[cfg(feature = "dirichlet")]
use fedmix_core::mdm::Histograms;
#[cfg(feature = "fedgem")]
use crate::fedgem::FedGemClient;


// codes.rs
export!(every fn codes::fm_abi_version() -> i32);
export!(every fn codes::fm_simd() -> i32);

// heap.rs
export!("core" fn heap::fm_heap_in_use() -> usize);
export!("core" fn heap::fm_last_error_ptr() -> *const u8);
export!("core" fn heap::fm_last_error_len() -> usize);
export!("core" fn heap::fm_clear_error());
export!("core" fn heap::fm_alloc(bytes: usize) -> *mut u8);
export!("core" fn heap::fm_free(ptr: *mut u8, bytes: usize));
export!(lent fn heap::fm_heap_alloc(size: usize, align: usize) -> *mut u8);
export!(lent fn heap::fm_heap_dealloc(ptr: *mut u8, size: usize, align: usize));
export!(lent fn heap::fm_heap_realloc(ptr: *mut u8, size: usize, align: usize, new_size: usize) -> *mut u8);
export!(lent fn heap::fm_heap_hold_reserve() -> i32);
export!(lent fn heap::fm_heap_set_error(ptr: *mut u8, len: usize, capacity: usize));

// constants.rs
export!("core" fn constants::fm_constant_count() -> usize);
export!("core" fn constants::fm_constant_name_ptr(i: usize) -> *const u8);
export!("core" fn constants::fm_constant_name_len(i: usize) -> usize);
export!("core" fn constants::fm_constant_value(i: usize) -> f64);

// gmm.rs
export!("core" fn gmm::fm_gmm_fit(x: *const f64, options: *const GmmFitOptions, weights_init: *const f64, means_init: *const f64, precisions_init: *const f64, warm: *const GmmHandle, out_handle: *mut usize) -> i32);
export!("float32" fn float32::fm_gmm_fit_f32(x: *const f64, options: *const GmmFitOptions, weights_init: *const f64, means_init: *const f64, precisions_init: *const f64, warm: *const GmmHandle, out_handle: *mut usize) -> i32);
export!("core" fn gmm::fm_gmm_initial(x: *const f64, options: *const GmmFitOptions, weights_init: *const f64, means_init: *const f64, precisions_init: *const f64, warm: *const GmmHandle, run: usize, out_handle: *mut usize) -> i32);
export!("dem" fn gmm_shards::fm_gmm_em_workspace(x: *const f64, n: usize, d: usize, cov_type: i32, out_handle: *mut usize) -> i32);
export!("dem" fn gmm_shards::fm_gmm_em_workspace_free(h: *mut EmWorkspace));
export!("dem" fn gmm_shards::fm_gmm_shard_stats(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64, out_loglik: *mut f64) -> i32);
export!("dem" fn gmm_shards::fm_gmm_em_step(ws: *const EmWorkspace, h: *const GmmHandle, options: *const GmmEmStepOptions, loglik: *const f64, nk: *const f64, s1: *const f64, s2: *const f64, out_handle: *mut usize) -> i32);
export!("dem" fn kmeans_shards::fm_kmeans_start(x: *const f64, options: *const KmeansFitOptions, centers: *const f64, run: usize, out_centers: *mut f64, out_tol: *mut f64) -> i32);
export!("dem" fn kmeans_shards::fm_kmeans_shard_step(x: *const f64, n: usize, d: usize, centers: *const f64, k: usize, labels: *mut u32, out_dist: *mut f64, out_stats: *mut f64) -> i32);
export!("core" fn gmm::fm_gmm_from_parts(options: *const GmmFromPartsOptions, weights: *const f64, means: *const f64, precisions_chol: *const f64, covariances: *const f64, out_handle: *mut usize) -> i32);
export!("core" fn gmm::fm_gmm_from_covariances(options: *const GmmFromCovariancesOptions, weights: *const f64, means: *const f64, covariances: *const f64, out_handle: *mut usize) -> i32);
export!("core" fn gmm::fm_gmm_free(h: *mut GmmHandle));
export!("core" fn gmm::fm_gmm_info(h: *const GmmHandle, out: *mut f64));
export!("core" fn gmm::fm_gmm_read(h: *const GmmHandle, which: i32, out: *mut f64) -> i32);
export!("core" fn gmm::fm_gmm_score_samples(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_lse: *mut f64) -> i32);
export!("core" fn gmm::fm_gmm_predict_proba(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_resp: *mut f64, out_lse: *mut f64) -> i32);
export!("core" fn gmm::fm_gmm_predict(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_labels: *mut u32) -> i32);
export!("core" fn gmm::fm_gmm_sample(h: *const GmmHandle, n: usize, seed_lo: u32, seed_hi: u32, out_x: *mut f64, out_labels: *mut u32) -> i32);
export!("core" fn gmm::fm_gmm_set_stats(h: *mut GmmHandle, converged: i32, n_iter: usize, lower_bound: f64));

// kernels.rs
export!("core" fn kernels::fm_exp(p: *mut f64, n: usize));
export!("core" fn kernels::fm_madd_peak(iters: f64, seed: f64) -> f64);

// linalg.rs
export!("core" fn linalg::fm_cholesky(a: *const f64, d: usize, out: *mut f64) -> i32);
export!("assignment" fn linalg::fm_symmetric_eigen(a: *const f64, d: usize, out_values: *mut f64, out_vectors: *mut f64) -> i32);
export!("assignment" fn linalg::fm_sqrtm(a: *const f64, d: usize, out: *mut f64) -> i32);
export!("assignment" fn linalg::fm_symmetric_floor(a: *const f64, d: usize, floor: f64, out: *mut f64) -> i32);

// kmeans.rs
export!("core" fn kmeans::fm_kmeans_fit(x: *const f64, options: *const KmeansFitOptions, centers: *const f64, out_centers: *mut f64, out_labels: *mut u32, out_stats: *mut f64) -> i32);
export!("core" fn kmeans::fm_kmeans_predict(x: *const f64, n: usize, d: usize, centers: *const f64, k: usize, out_labels: *mut u32, out_dist: *mut f64) -> i32);

// pca.rs
export!("assignment" fn pca::fm_pca_fit(x: *const f64, options: *const PcaFitOptions, out_mean: *mut f64, out_components: *mut f64, out_variance: *mut f64, out_ratio: *mut f64, out_noise: *mut f64) -> i32);
export!("assignment" fn pca::fm_pca_transform(x: *const f64, n: usize, d: usize, mean: *const f64, mean_len: usize, components: *const f64, k: usize, out: *mut f64) -> i32);

// rng.rs: the generator and the draws that the core's programs take (GaussianMixture's samples, the
// federated runtime's sampling) in the core; gamma, Dirichlet and categorical draws in 'dirichlet'
export!("core" fn rng::fm_rng_new(seed_lo: u32, seed_hi: u32) -> *mut Rng);
export!("core" fn rng::fm_rng_free(h: *mut Rng));
export!("core" fn rng::fm_rng_get_state(h: *const Rng, out: *mut f64));
export!("core" fn rng::fm_rng_set_state(h: *mut Rng, state: *const f64) -> i32);
export!("core" fn rng::fm_rng_uniform(h: *mut Rng, n: usize, out: *mut f64));
export!("core" fn rng::fm_rng_normal(h: *mut Rng, n: usize, out: *mut f64));
export!("dirichlet" fn rng::fm_rng_gamma(h: *mut Rng, shape: f64, scale: f64, n: usize, out: *mut f64) -> i32);
export!("dirichlet" fn rng::fm_rng_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32);
export!("dirichlet" fn rng::fm_rng_log_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32);
export!("core" fn rng::fm_rng_multinomial(h: *mut Rng, trials: f64, probs: *const f64, k: usize, n: usize, out: *mut f64) -> i32);
export!("dirichlet" fn rng::fm_rng_categorical(h: *mut Rng, probs: *const f64, k: usize, n: usize, out: *mut u32) -> i32);
export!("core" fn rng::fm_rng_choice(h: *mut Rng, n: usize, k: usize, out: *mut u32) -> i32);
export!("core" fn rng::fm_rng_permutation(h: *mut Rng, n: usize, out: *mut u32));

// dem.rs
export!("dem" fn dem::fm_dem_client_stats(h: *const GmmHandle, x: *const f64, n: usize, d: usize, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64, out_loglik: *mut f64) -> i32);
export!("dem" fn dem::fm_dem_client_summary(x: *const f64, n: usize, d: usize, shift: *const f64, tied: i32, out_abs_max: *mut f64, out_sum: *mut f64, out_scatter: *mut f64) -> i32);
export!("dem" fn dem::fm_dem_check_stats(options: *const DemCheckStatsOptions, shift: *const f64, nk: *const f64, s1: *const f64, s2: *const f64) -> i32);
export!("dem" fn dem::fm_dem_check_summary(d: usize, tied: i32, rows: f64, shift: *const f64, abs_max: *const f64, sum: *const f64, scatter: *const f64) -> i32);
export!("dem" fn dem::fm_dem_check_log_likelihood(h: *const GmmHandle, options: *const DemCheckLogLikelihoodOptions, nk: *const f64, s1: *const f64, s2: *const f64, summary_shift: *const f64, abs_max: *const f64, sum: *const f64, scatter: *const f64) -> i32);
export!("dem" fn dem::fm_dem_server_step(h: *const GmmHandle, options: *const DemServerStepOptions, rows: *const f64, loglik: *const f64, nk: *const f64, s1: *const f64, s2: *const f64, summary_shift: *const f64, abs_max: *const f64, sums: *const f64, scatters: *const f64, out_handle: *mut usize) -> i32);
export!("dem" fn dem::fm_dem_separated_init(cov_type: i32, k: usize, d: usize, lo: *const f64, hi: *const f64, reg_covar: f64, out_handle: *mut usize) -> i32);
export!("dem" fn dem::fm_dem_kfed_local(x: *const f64, options: *const DemKfedLocalOptions, out_k: *mut f64, out_centers: *mut f64, out_nk: *mut f64, out_s1: *mut f64, out_s2: *mut f64) -> i32);
export!("dem" fn dem::fm_dem_kfed_server(options: *const DemKfedServerOptions, counts: *const f64, centers: *const f64, nk: *const f64, s1: *const f64, s2: *const f64, out_handle: *mut usize) -> i32);

// hem.rs
export!("dem" fn hem::fm_hem_reduce(options: *const HemReduceOptions, weights: *const f64, means: *const f64, covariances: *const f64, means_init: *const f64, out_weights: *mut f64, out_means: *mut f64, out_covariances: *mut f64, out_stats: *mut f64) -> i32);

// ocsvm.rs
export!("svm" fn ocsvm::fm_ocsvm_fit(x: *const f64, options: *const OcsvmFitOptions, out_handle: *mut usize) -> i32);
export!("svm" fn ocsvm::fm_ocsvm_from_parts(options: *const OcsvmFromPartsOptions, sv: *const f64, coef: *const f64, support: *const u32, out_handle: *mut usize) -> i32);
export!("svm" fn ocsvm::fm_ocsvm_set_stats(h: *mut OcsvmHandle, n_iter: usize, objective: f64, converged: i32));
export!("svm" fn ocsvm::fm_ocsvm_free(h: *mut OcsvmHandle));
export!("svm" fn ocsvm::fm_ocsvm_info(h: *const OcsvmHandle, out: *mut f64));
export!("svm" fn ocsvm::fm_ocsvm_read(h: *const OcsvmHandle, which: i32, out: *mut f64) -> i32);
export!("svm" fn ocsvm::fm_ocsvm_decision_function(h: *const OcsvmHandle, x: *const f64, n: usize, d: usize, out: *mut f64) -> i32);

// nn.rs
export!("nn" fn nn::fm_nn_new(sizes: *const u32, options: *const NnNewOptions, out_handle: *mut usize) -> i32);
export!("nn" fn nn::fm_nn_free(h: *mut Network));
export!("nn" fn nn::fm_nn_parameter_count(h: *const Network) -> usize);
export!("nn" fn nn::fm_nn_get_parameters(h: *const Network, out: *mut f32));
export!("nn" fn nn::fm_nn_get_gradients(h: *const Network, out: *mut f32));
export!("nn" fn nn::fm_nn_set_parameters(h: *mut Network, p: *const f32, len: usize) -> i32);
export!("nn" fn nn::fm_nn_call_bytes(h: *const Network, rows: usize) -> f64);
export!("nn" fn nn::fm_nn_set_new(n: usize, d: usize, kind: i32, width: usize, out_handle: *mut usize) -> i32);
export!("nn" fn nn::fm_nn_set_free(h: *mut TrainingSet));
export!("nn" fn nn::fm_nn_set_inputs(h: *mut TrainingSet) -> *mut f32);
export!("nn" fn nn::fm_nn_set_targets(h: *mut TrainingSet) -> *mut u8);
export!("nn" fn nn::fm_nn_set_seal(h: *mut TrainingSet) -> i32);
export!("nn" fn nn::fm_nn_set_check(net: *const Network, set: *const TrainingSet) -> i32);
export!("nn" fn nn::fm_nn_optimizer_new(net: *const Network, options: *const NnOptimizerNewOptions, out_handle: *mut usize) -> i32);
export!("nn" fn nn::fm_nn_optimizer_reset(h: *mut Optimizer));
export!("nn" fn nn::fm_nn_optimizer_steps(h: *const Optimizer) -> f64);
export!("nn" fn nn::fm_nn_optimizer_free(h: *mut Optimizer));
export!("nn" fn nn::fm_nn_train_epoch(net: *mut Network, set: *mut TrainingSet, opt: *mut Optimizer, options: *const NnTrainEpochOptions, order: *const u32, anchor: *const f32, correction: *const f32, out_loss: *mut f64) -> i32);
export!("nn" fn nn::fm_nn_evaluate(net: *const Network, set: *const TrainingSet, out_loss: *mut f64) -> i32);
export!("nn" fn nn::fm_nn_predict(net: *const Network, x: *const f32, n: usize, layer: usize, out: *mut f32) -> i32);
export!("nn" fn nn::fm_nn_reconstruction_errors(net: *const Network, x: *const f32, n: usize, out: *mut f64) -> i32);
export!("nn" fn nn::fm_nn_batch_gradient(net: *mut Network, x: *const f32, rows: usize, t: *const f32, labels: *const i32, out_outputs: *mut f32, out_loss: *mut f64) -> i32);
export!("nn" fn nn::fm_peak_probe_f32x4(iters: f64) -> f64);

// dirichlet_multinomial.rs
export!("dirichlet" fn dirichlet_multinomial::fm_dm_log_pmf(counts: *const f64, m: usize, c: usize, alphas: *const f64, k: usize, with_coefficient: i32, out: *mut f64) -> i32);

// mdm.rs
export!("dirichlet" fn mdm::fm_mdm_check(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_check_histograms(counts: *const f64, sizes: *const f64, m: usize, c: usize, n_max: usize) -> i32);
export!("dirichlet" fn mdm::fm_mdm_log_pmf(options: *const MdmLogPmfOptions, tau: *const f64, alpha: *const f64, pi: *const f64, counts: *const f64, sizes: *const f64, out_ll: *mut f64, out_resp: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_sample(options: *const MdmSampleOptions, tau: *const f64, alpha: *const f64, pi: *const f64, out_counts: *mut f64, out_sizes: *mut f64, out_components: *mut u32) -> i32);
export!("dirichlet" fn mdm::fm_mdm_init_stats(options: *const MdmInitStatsOptions, counts: *const f64, sizes: *const f64, components: *const u32, out_e: *mut f64, out_p: *mut f64, out_q: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_prepare(k: usize, c: usize, n_max: usize, tau: *const f64, alpha: *const f64, pi: *const f64, out_handle: *mut usize) -> i32);
export!("dirichlet" fn mdm::fm_mdm_prepared_free(h: *mut Prepared));
export!("dirichlet" fn mdm::fm_mdm_round_stats(h: *mut Prepared, counts: *const f64, sizes: *const f64, options: *const MdmRoundStatsOptions, out_omega: *mut f64, out_e: *mut f64, out_u: *mut f64, out_v: *mut f64, out_extra: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_histograms(counts: *const f64, sizes: *const f64, m: usize, c: usize, out_handle: *mut usize) -> i32);
export!("dirichlet" fn mdm::fm_mdm_histograms_free(h: *mut Histograms));
export!("dirichlet" fn mdm::fm_mdm_init_stats_held(hist: *const Histograms, k: usize, n_max: usize, components: *const u32, out_e: *mut f64, out_p: *mut f64, out_q: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_round_stats_held(h: *mut Prepared, hist: *const Histograms, clip: f64, out_omega: *mut f64, out_e: *mut f64, out_u: *mut f64, out_v: *mut f64, out_extra: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_log_pmf_held(h: *mut Prepared, hist: *const Histograms, out_ll: *mut f64, out_resp: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_initialize(options: *const MdmInitializeOptions, e: *const f64, p: *const f64, q: *const f64, out_tau: *mut f64, out_alpha: *mut f64, out_pi: *mut f64, out_flags: *mut f64) -> i32);
export!("dirichlet" fn mdm::fm_mdm_update(options: *const MdmUpdateOptions, tau: *const f64, alpha: *const f64, pi: *const f64, omega: *const f64, e: *const f64, u: *const f64, v: *const f64, out_tau: *mut f64, out_alpha: *mut f64, out_pi: *mut f64, out_flags: *mut f64) -> i32);

// special.rs
export!("dirichlet" fn special::fm_digamma(p: *mut f64, n: usize));
export!("dirichlet" fn special::fm_lgamma(p: *mut f64, n: usize));
export!("dirichlet" fn special::fm_trigamma(p: *mut f64, n: usize));
export!("dirichlet" fn special::fm_gamma_differences(which: i32, x: *const f64, nv: *const f64, out: *mut f64, len: usize));
export!("dirichlet" fn special::fm_ln_erfc(p: *mut f64, n: usize));
export!("dirichlet" fn special::fm_rdp_sampled_gaussian(q: f64, sigma: f64, orders: *const f64, n: usize, out: *mut f64));
export!("dirichlet" fn special::fm_epsilon_from_rdp(orders: *const f64, rdp: *const f64, n: usize, delta: f64, out_order: *mut usize) -> f64);
export!("dirichlet" fn special::fm_skellam_add(key: *const u8, mu: f64, words: *mut u8, n: usize) -> i32);
export!("dirichlet" fn special::fm_rdp_skellam(mu: f64, l1: f64, l2: f64, orders: *const f64, n: usize, out: *mut f64));

// secure_aggregation.rs
export!("dirichlet" fn secure_aggregation::fm_secagg_add(acc: *mut u64, v: *const u64, n: usize, subtract: i32));
export!("dirichlet" fn secure_aggregation::fm_secagg_mask(vector: *mut u64, n: usize, seed: *const u8, subtract: i32));
export!("dirichlet" fn secure_aggregation::fm_secagg_permutation(seed: *const u8, n: usize, out: *mut u32));
export!("dirichlet" fn secure_aggregation::fm_shamir_split(secret: *const u8, threshold: usize, xs: *const u32, m: usize, randomness: *const u8, out: *mut u8) -> i32);
export!("dirichlet" fn secure_aggregation::fm_shamir_combine(xs: *const u32, shares: *const u8, count: usize, threshold: usize, at: u32, out: *mut u8) -> i32);

// fedgem.rs
export!("fedgem" fn fedgem::fm_fedgem_client_new(x: *const f64, options: *const FedgemClientNewOptions, weights: *const f64, means: *const f64, out_handle: *mut usize) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_client_free(h: *mut FedGemClient));
export!("fedgem" fn fedgem::fm_fedgem_client_steps(h: *mut FedGemClient, steps: usize, method: i32, iterations: usize, out_maximizers: *mut f64, out_radii: *mut f64, out_counts: *mut f64, out_loglik: *mut f64) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_client_set_means(h: *mut FedGemClient, means: *const f64, len: usize) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_client_set_variance(h: *mut FedGemClient, variance: f64) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_client_means(h: *const FedGemClient, out: *mut f64));
export!("fedgem" fn fedgem::fm_fedgem_client_predict(h: *const FedGemClient, x: *const f64, n: usize, d: usize, out_labels: *mut u32, out_values: *mut f64) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_client_score(h: *const FedGemClient, out: *mut f64) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_update(centers: *const f64, radii: *const f64, owner_ids: *const u32, m: usize, d: usize, indexed: i32, out_centers: *mut f64, out_pairs: *mut f64) -> i32);
export!("fedgem" fn fedgem::fm_fedgem_merge(centers: *const f64, radii: *const f64, owner_ids: *const u32, weights: *const f64, options: *const FedgemMergeOptions, out_labels: *mut u32, out_k: *mut usize, out_centers: *mut f64, out_joins: *mut usize, out_separation: *mut f64, out_uncounted: *mut usize) -> i32);

// assignment.rs
export!("assignment" fn assignment::fm_linear_sum_assignment(cost: *const f64, nr: usize, nc: usize, maximize: i32, out_rows: *mut u32, out_cols: *mut u32, out_cost: *mut f64) -> i32);

// gaussian_costs.rs
export!("assignment" fn gaussian_costs::fm_gaussian_costs(options: *const GaussianCostsOptions, a_means: *const f64, a_covariances: *const f64, a_labels: *const i32, b_means: *const f64, b_covariances: *const f64, b_labels: *const i32, out: *mut f64) -> i32);

option_structs! {
    /// The scalar arguments of fm_gmm_fit.
    "core" struct GmmFitOptions { n: u32, d: u32, k: u32, cov_type: i32, tol: f64, reg_covar: f64, max_iter: u32, n_init: u32, init_params: i32, weights_init_len: u32, means_init_len: u32, precisions_init_len: u32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_gmm_em_step.
    "core" struct GmmEmStepOptions { m: u32, reg_covar: f64, iteration: u32 }
    /// The scalar arguments of fm_gmm_from_parts.
    "core" struct GmmFromPartsOptions { cov_type: i32, k: u32, d: u32, weights_len: u32, means_len: u32, precisions_chol_len: u32, covariances_len: u32 }
    /// The scalar arguments of fm_gmm_from_covariances.
    "core" struct GmmFromCovariancesOptions { cov_type: i32, k: u32, d: u32, weights_len: u32, means_len: u32, covariances_len: u32 }
    /// The scalar arguments of fm_kmeans_fit.
    "core" struct KmeansFitOptions { n: u32, d: u32, k: u32, init: i32, centers_len: u32, n_init: u32, max_iter: u32, tol: f64, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_pca_fit.
    "assignment" struct PcaFitOptions { n: u32, d: u32, k: u32 }
    /// The scalar arguments of fm_dem_check_stats.
    "dem" struct DemCheckStatsOptions { cov_type: i32, k: u32, d: u32, rows: f64, min_count: f64, reg_covar: f64, quantization: f64 }
    /// The scalar arguments of fm_dem_check_log_likelihood.
    "dem" struct DemCheckLogLikelihoodOptions { rows: f64, loglik: f64 }
    /// The scalar arguments of fm_dem_server_step.
    "dem" struct DemServerStepOptions { m: u32, reg_covar: f64, n_iter: u32, converged: i32 }
    /// The scalar arguments of fm_dem_kfed_local.
    "dem" struct DemKfedLocalOptions { n: u32, d: u32, k_local: u32, cov_type: i32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_dem_kfed_server.
    "dem" struct DemKfedServerOptions { cov_type: i32, k: u32, d: u32, m: u32, reg_covar: f64, starts: u32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_hem_reduce.
    "dem" struct HemReduceOptions { covariance_type: i32, d: u32, n: u32, k: u32, virtual_samples: f64, tol: f64, max_iter: u32, reg_covar: f64, n_init: u32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_ocsvm_fit.
    "svm" struct OcsvmFitOptions { n: u32, d: u32, kernel: i32, gamma_code: i32, gamma: f64, nu: f64, tol: f64, shrinking: i32, cache_mb: f64, max_iter: i32 }
    /// The scalar arguments of fm_ocsvm_from_parts.
    "svm" struct OcsvmFromPartsOptions { kernel: i32, gamma: f64, nu: f64, d: u32, sv_len: u32, n_sv: u32, rho: f64, support_len: u32 }
    /// The scalar arguments of fm_nn_new.
    "nn" struct NnNewOptions { n_sizes: u32, hidden: i32, output: i32, loss: i32, init: i32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_nn_optimizer_new.
    "nn" struct NnOptimizerNewOptions { kind: i32, lr: f64, momentum: f64, dampening: f64, nesterov: i32, weight_decay: f64, beta1: f64, beta2: f64, eps: f64 }
    /// The scalar arguments of fm_nn_train_epoch.
    "nn" struct NnTrainEpochOptions { batch: u32, seed_lo: u32, seed_hi: u32, order_len: u32, l2: f64, mu: f64, anchor_len: u32, correction_len: u32 }
    /// The scalar arguments of fm_mdm_log_pmf.
    "dirichlet" struct MdmLogPmfOptions { k: u32, c: u32, n_max: u32, m: u32 }
    /// The scalar arguments of fm_mdm_sample.
    "dirichlet" struct MdmSampleOptions { k: u32, c: u32, n_max: u32, m: u32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_mdm_init_stats.
    "dirichlet" struct MdmInitStatsOptions { k: u32, c: u32, n_max: u32, m: u32 }
    /// The scalar arguments of fm_mdm_round_stats.
    "dirichlet" struct MdmRoundStatsOptions { m: u32, clip: f64 }
    /// The scalar arguments of fm_mdm_initialize.
    "dirichlet" struct MdmInitializeOptions { k: u32, c: u32, n_max: u32, clients: f64, noisy: i32 }
    /// The scalar arguments of fm_mdm_update.
    "dirichlet" struct MdmUpdateOptions { k: u32, c: u32, n_max: u32, clients: f64, noisy: i32 }
    /// The scalar arguments of fm_fedgem_client_new.
    "fedgem" struct FedgemClientNewOptions { n: u32, d: u32, k: u32, variance: f64, init: i32, n_init: u32, seed_lo: u32, seed_hi: u32 }
    /// The scalar arguments of fm_fedgem_merge.
    "fedgem" struct FedgemMergeOptions { m: u32, d: u32, indexed: i32, separation_variance: f64 }
    /// The scalar arguments of fm_gaussian_costs.
    "assignment" struct GaussianCostsOptions { cost: i32, form: i32, d: u32, na: u32, nb: u32 }
}
