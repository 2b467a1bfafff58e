/**
 * The WebAssembly core comes in modules (crates/fedmix-wasm, one cargo feature
 * each; scripts/build-wasm.sh): the core module, which every program loads,
 * and one module per feature, loaded when init() asks for it. They share one
 * memory and the core's heap, so a Matrix or a model made by one is used by
 * the others as it is. Which export lives in which module, and the memory
 * they need, are read from here.
 */
import layout from '../../crates/fedmix-wasm/modules.json';

/** A module beside the core, as `init({ features })` names it. */
export type Feature = 'dem' | 'svm' | 'nn' | 'dirichlet' | 'fedgem' | 'assignment';

/** Every feature, in the order of crates/fedmix-wasm/modules.json (each has its slot of memory). */
export const FEATURES: readonly Feature[] = layout.features as Feature[];

/** What each feature brings, for the error that asks for it. */
export const FEATURE_USES: Readonly<Record<Feature, string>> = {
  dem: 'distributed EM (DistributedEM, k-FED) and FedGenGMM\'s hierarchical server step',
  svm: 'OneClassSVM',
  nn: 'the neural networks (MLPClassifier, Autoencoder, FedAvg, FedProx, SCAFFOLD, the community detectors)',
  dirichlet: 'the special functions (digamma, lgamma, ...), Dirichlet-multinomial distributions and their mixtures (MDM)',
  fedgem: 'FedGEM',
  assignment: 'linearSumAssignment and the Gaussian matching costs of FedDistr',
};

/** The export prefixes of each feature's module; everything else is the core's. */
const PREFIXES: Readonly<Record<Feature, readonly string[]>> = {
  dem: ['fm_dem_', 'fm_hem_'],
  svm: ['fm_ocsvm_'],
  nn: ['fm_nn_', 'fm_peak_probe_'],
  dirichlet: ['fm_digamma', 'fm_lgamma', 'fm_trigamma', 'fm_gamma_differences', 'fm_dm_', 'fm_mdm_'],
  fedgem: ['fm_fedgem_'],
  assignment: ['fm_linear_sum_assignment', 'fm_gaussian_costs'],
};

/** The feature whose module exports `name`, or undefined for the core's. */
export function featureOf(name: string): Feature | undefined {
  return FEATURES.find((f) => PREFIXES[f].some((p) => name.startsWith(p)));
}

/**
 * Pages (64 KiB) of the memory all modules share before anything is
 * allocated: the core's stack and data, then one slot per feature for its
 * data and stack (the heap grows above).
 */
export const INITIAL_PAGES = (layout.featureBase + FEATURES.length * layout.slotBytes) / 65536;

/** The functions the core exports for the feature modules' heap (crates/fedmix-wasm/src/heap.rs). */
export const HEAP_IMPORTS = ['fm_heap_alloc', 'fm_heap_dealloc', 'fm_heap_realloc', 'fm_heap_hold_reserve', 'fm_heap_set_error'] as const;
