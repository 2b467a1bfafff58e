/**
 * The WebAssembly core comes in modules (crates/fedmix-wasm, one cargo feature
 * each; scripts/build-wasm.sh): the core module, which every program loads,
 * and one module per feature, loaded when init() asks for it. They share one
 * memory and the core's heap, so a Matrix or a model made by one is used by
 * the others as it is. Which export lives in which module, and the memory
 * they need, are read from here.
 */
import { FEATURE_EXPORTS, FEATURES, HEAP_EXPORTS, INITIAL_PAGES, type Feature } from './abi.generated.js';

export { FEATURES, INITIAL_PAGES, type Feature };

/** What each feature brings, for the error that asks for it. */
export const FEATURE_USES: Readonly<Record<Feature, string>> = {
  dem: 'distributed EM (DistributedEM, k-FED) and FedGenGMM\'s hierarchical server step',
  svm: 'OneClassSVM',
  nn: 'the neural networks (MLPClassifier, Autoencoder, FedAvg, FedProx, SCAFFOLD, the community detectors)',
  dirichlet: "the special functions (digamma, lgamma, ...), the privacy accountant, secure aggregation, Dirichlet-multinomial distributions and their mixtures (MDM), Rng's gamma, dirichlet, logDirichlet and categorical draws (and partition.dirichlet, and partition.quantity with an imbalance, which take them)",
  fedgem: 'FedGEM',
  assignment: "linearSumAssignment, the Gaussian matching costs of FedDistr, PCA and the symmetric eigendecomposition (FedDistr's server, the Gaussian noise of private full covariances)",
  float32: "GaussianMixture's precision: 'float32' (and the local fits of FedGenGMM clients given it)",
};

/** The feature whose module exports `name` (crates/fedmix-wasm/src/exports.rs), or undefined for the core's, every module's, or a name not exported. */
export function featureOf(name: string): Feature | undefined {
  const bare = name.slice(3);
  return name.startsWith('fm_') ? FEATURES.find((f) => FEATURE_EXPORTS[f].split(' ').includes(bare)) : undefined;
}

/** The functions the core exports for the feature modules' heap (crates/fedmix-wasm/src/heap.rs). */
export const HEAP_IMPORTS: readonly (typeof HEAP_EXPORTS)[number][] = HEAP_EXPORTS;
