/**
 * The WebAssembly core comes in modules (crates/fedmix-wasm, one cargo feature
 * each; scripts/build-wasm.sh): the core module, which every program loads,
 * and one module per feature, loaded when init() asks for it. They share one
 * memory and the core's heap, so a Matrix or a model made by one is used by
 * the others as it is. Which export lives in which module, and the memory
 * they need, are read from here.
 */
import layout from '../../crates/fedmix-wasm/modules.json';
import { EXPORT_MODULES, FEATURES, HEAP_EXPORTS, type Feature } from './abi.generated.js';

export { FEATURES, type Feature };

/** What each feature brings, for the error that asks for it. */
export const FEATURE_USES: Readonly<Record<Feature, string>> = {
  dem: 'distributed EM (DistributedEM, k-FED) and FedGenGMM\'s hierarchical server step',
  svm: 'OneClassSVM',
  nn: 'the neural networks (MLPClassifier, Autoencoder, FedAvg, FedProx, SCAFFOLD, the community detectors)',
  dirichlet: 'the special functions (digamma, lgamma, ...), Dirichlet-multinomial distributions and their mixtures (MDM)',
  fedgem: 'FedGEM',
  assignment: 'linearSumAssignment and the Gaussian matching costs of FedDistr',
};

/** The feature whose module exports `name` (crates/fedmix-wasm/src/exports.rs), or undefined for the core's, every module's, or a name not exported. */
export function featureOf(name: string): Feature | undefined {
  const module = Object.prototype.hasOwnProperty.call(EXPORT_MODULES, name) ? EXPORT_MODULES[name as keyof typeof EXPORT_MODULES] : undefined;
  return module === undefined || module === 'core' || module === 'every' ? undefined : module;
}

/**
 * Pages (64 KiB) of the memory all modules share before anything is
 * allocated: the core's stack and data, then one slot per feature for its
 * data and stack (the heap grows above).
 */
export const INITIAL_PAGES = (layout.featureBase + FEATURES.length * layout.slotBytes) / 65536;

/** The functions the core exports for the feature modules' heap (crates/fedmix-wasm/src/heap.rs). */
export const HEAP_IMPORTS: readonly (typeof HEAP_EXPORTS)[number][] = HEAP_EXPORTS;
