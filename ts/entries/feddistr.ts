/**
 * fedmix/feddistr: FedDistr, with the files of the WebAssembly modules its clients and
 * server can call ('assignment', 'dem', 'dirichlet', 'nn'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/feddistr.md).
 *
 * @module fedmix/feddistr
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-assignment.generated.js';
import '../wasm/files-dem.generated.js';
import '../wasm/files-dirichlet.generated.js';
import '../wasm/files-nn.generated.js';
// GaussianMixture's precision: 'float32' is the 'float32' module's
import '../wasm/files-float32.generated.js';

export {
  fedDistr,
  FedDistrClient,
  FedDistrServer,
  FEDDISTR_PROTOCOL,
  BaseDistributionClassifier,
  sampleBaseDistributions,
  wasserstein2,
  bhattacharyya,
  entangledCoefficient,
  averageEntanglement,
  type FedDistrClientData,
  type FedDistrClientOptions,
  type FedDistrPrivacy,
  type FedDistrOptions,
  type FedDistrResult,
  type FedDistrEvaluation,
  type FedDistrOutcome,
  type FedDistrServerOptions,
  type FedDistrCost,
  type ConsolidatedBase,
  type MatchedPair,
  type PcaEncoder,
  type BaseDistributionClassifierOptions,
  type LabelledGaussian,
  type SampleBaseOptions,
  type SampledRows,
  type Gaussian,
  type CovarianceKind,
  type Shrinkage,
} from '../federated/feddistr/index.js';
