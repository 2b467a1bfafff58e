/**
 * fedmix/networks: the neural networks (Network, MLPClassifier, Autoencoder),
 * with the 'nn' WebAssembly module's files, relaxed-SIMD build included (import
 * init and Matrix from fedmix/core; docs/browsers-and-workers.md).
 *
 * @module fedmix/networks
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-nn.generated.js';

export {
  Network,
  ACTIVATIONS,
  OUTPUT_ACTIVATIONS,
  LOSSES,
  type Activation,
  type OutputActivation,
  type Loss,
  type NetworkInit,
  type NetworkSpec,
  type NetworkJSON,
  type OptimizerSpec,
  type Optimizer,
  type TrainOptions,
  type TrainingSet,
  type BatchGradient,
} from '../models/network.js';
export { Autoencoder, type AutoencoderOptions, type AutoencoderJSON, type ResolvedAutoencoderOptions } from '../models/autoencoder.js';
export { MLPClassifier, MLP_ACTIVATIONS, type MLPActivation, type MLPClassifierOptions, type MLPClassifierJSON, type ResolvedMLPClassifierOptions } from '../models/mlp-classifier.js';
export type { EarlyStopping } from '../models/early-stopping.js';
