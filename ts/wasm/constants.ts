/**
 * Numbers that belong to the core: the codes of the C ABI's enumerations, the
 * status codes, and limits and thresholds TypeScript applies around a call.
 * The core exports them as a table of (name, value) rows
 * (crates/fedmix-wasm/src/constants.rs) that the loader reads once at init();
 * TypeScript asks for them by name here instead of copying the numbers.
 *
 * A few copies remain where a value is needed before init() or is public API
 * as a plain number (MDM_MAX_CELLS, MDM_GUARDS, ABI_VERSION in the loader);
 * test/wasm-constants.test.ts compares each with the core's.
 */
import { WasmError } from '../errors.js';
import { instance } from './loader.js';

/** Every row TypeScript reads, by group. test/wasm-constants.test.ts checks that the core exports exactly these. */
export const CORE_CONSTANTS = {
  /** the i32 a call returns: ok, or ErrorKind::code */
  status: ['ok', 'invalid_data', 'invalid_parameter', 'numerical', 'allocation'],
  /** CovarianceType::code */
  covariance_type: ['full', 'tied', 'diag', 'spherical'],
  /** InitParams::code (fm_gmm_fit's initParams) */
  init_params: ['kmeans', 'k-means++', 'random', 'random_from_data'],
  /** fm_gmm_read's `which` */
  gmm_read: ['weights', 'means', 'covariances', 'precisions_cholesky', 'precisions'],
  /** fm_kmeans_fit's `init` */
  kmeans_init: ['k-means++', 'random', 'given'],
  /** fm_gamma_differences' `which` */
  gamma_differences: ['digamma', 'lgamma'],
  /** distributions::MIN_SHAPE, the smallest gamma shape and Dirichlet concentration */
  distributions: ['min_shape'],
  /** the bytes the core keeps free for every call's small buffers (RESERVE in crates/fedmix-wasm), not counted as in use */
  memory: ['reserve'],
  /** mdm::MAX_CELLS, the largest K x C and K x N */
  mdm: ['max_cells'],
  /** the bits of the MDM server's guard flags (mdm::server) */
  mdm_guard: ['empty_component', 'degenerate_moments', 'alpha_floored', 'alpha_capped', 'component_kept', 'clamped', 'alpha_kept'],
  /** fedgem::server::MIN_SHARE and MIN_ROWS: a component below that share of its client's rows, or with fewer rows, takes no part in overlaps */
  fedgem: ['min_share', 'min_rows'],
  /** fm_fedgem_client_new's `init` */
  fedgem_init: ['k-means++', 'kmeans'],
  /** fm_fedgem_client_steps' `method` */
  fedgem_radius: ['closed_form', 'bisection'],
  /** nn::Activation::code (fm_nn_new's hidden and output activations) */
  nn_activation: ['relu', 'sigmoid', 'tanh', 'identity', 'softmax'],
  /** nn::Loss::code */
  nn_loss: ['mse', 'bce', 'softmax-cross-entropy'],
  /** nn::Init::code */
  nn_init: ['pytorch', 'xavier'],
  /** fm_nn_optimizer_new's `kind` */
  nn_optimizer: ['sgd', 'adam'],
  /** nn::TargetKind::code (fm_nn_set_new's `kind`) */
  nn_targets: ['values', 'labels', 'inputs'],
  /** fm_ocsvm_fit's and fm_ocsvm_from_parts' `kernel` (svm::KernelType::code) */
  ocsvm_kernel: ['rbf', 'linear'],
  /** fm_ocsvm_fit's `gammaCode`: 'scale', 'auto', or the number passed as `gamma` */
  ocsvm_gamma: ['scale', 'auto', 'value'],
  /** fm_ocsvm_read's `which` */
  ocsvm_read: ['support_vectors', 'dual_coef', 'support'],
  /** fm_gaussian_costs' `cost` (gaussian_costs::Cost::code) */
  gaussian_cost: ['wasserstein', 'bhattacharyya'],
  /** fm_gaussian_costs' `form` (gaussian_costs::Form::code) */
  covariance_form: ['full', 'diagonal'],
} as const;

export type ConstantGroup = keyof typeof CORE_CONSTANTS;
export type ConstantMember<G extends ConstantGroup> = (typeof CORE_CONSTANTS)[G][number];

/** The core's value of `group.member`. Needs init(). */
export function coreConstant<G extends ConstantGroup>(group: G, member: ConstantMember<G>): number {
  const v = instance().constants.get(`${group}.${member}`);
  if (v === undefined) throw new WasmError(`the WASM core has no constant ${group}.${member}; rebuild it with scripts/build-wasm.sh`);
  return v;
}

/** The member of `group` whose value is `value`, or undefined. Needs init(). */
export function coreConstantName<G extends ConstantGroup>(group: G, value: number): ConstantMember<G> | undefined {
  const table = instance().constants;
  return (CORE_CONSTANTS[group] as readonly ConstantMember<G>[]).find((m) => table.get(`${group}.${m}`) === value);
}

/**
 * The codes of `group` as an object whose properties read the core when
 * used (so it can be created at module load, before init()).
 */
export function codeTable<G extends ConstantGroup>(group: G): Readonly<Record<ConstantMember<G>, number>> {
  const out = {} as Record<ConstantMember<G>, number>;
  for (const m of CORE_CONSTANTS[group] as readonly ConstantMember<G>[]) {
    Object.defineProperty(out, m, { enumerable: true, get: () => coreConstant(group, m) });
  }
  return Object.freeze(out);
}
