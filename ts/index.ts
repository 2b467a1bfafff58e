/**
 * fedmix: federated mixture models on a Rust/WebAssembly SIMD core.
 * Call `await init()` once, then use the estimators.
 *
 * @module fedmix
 */
// every WebAssembly module's files, so that init() finds each: a bundler emits them all into a program that
// imports `fedmix` (the entries fedmix/core, fedmix/fedavg, ... carry only their own; docs/browsers-and-workers.md)
import './wasm/files-all.generated.js';
// every entry's names (fedmix/core, fedmix/svm, ...): the barrel is their union plus what no entry carries
export * from './entries/core.js';
export * from './entries/svm.js';
export * from './entries/networks.js';
export * from './entries/federation.js';
export * from './entries/dem.js';
export * from './entries/fedgengmm.js';
export * from './entries/fedgem.js';
export * from './entries/mdm.js';
export * from './entries/fedavg.js';
export * from './entries/feddistr.js';
export * from './entries/communities.js';
// the rest: what no single-feature entry carries
export { PCA, type PCAJSON, type PCAOptions } from './data/pca.js';
export {
  DirichletMultinomialMixture,
  type DirichletMultinomialMixtureJSON,
  type DirichletMultinomialMixtureParameters,
  type MdmSample,
  type MdmCentralFitOptions,
} from './models/dirichlet-multinomial-mixture.js';
export { LocalDetector, DETECTOR_KINDS, type DetectorKind, type LocalDetectorOptions, type LocalDetectorJSON } from './models/detectors.js';
export { normalizedError, mdmRecoveryError, type MdmRecovery } from './metrics/recovery.js';
export { histogramEnergyDistance } from './metrics/histograms.js';
export { adjustedRandScore, silhouetteSamples, silhouetteScore } from './metrics/clustering.js';
export { gaussianNoiseOod } from './metrics/ood.js';
export { digamma, lgamma, trigamma, digammaDiff, lnRisingFactorial } from './special/gamma.js';
export {
  RdpAccountant,
  privacyEpsilon,
  rdpSampledGaussian,
  rdpSkellam,
  epsilonFromRdp,
  DEFAULT_RDP_ORDERS,
  type MechanismSteps,
  type SkellamSteps,
  type SkellamHistory,
  type SkellamEpsilonOptions,
  type PrivacySpent,
  type PrivacyEpsilonOptions,
  type AccountantHistory,
  type RdpAccountantJSON,
} from './privacy/accountant.js';
export { addSkellamNoise, skellamNoise, MAX_SKELLAM_MU, type SkellamNoiseOptions } from './privacy/skellam.js';
export { distributedNoise, type DistributedNoise, type DistributedNoiseOptions, type NoisedFixedPoint } from './privacy/distributed-noise.js';
export { secureSum, type SecureSumOptions, type SecureSumDrops } from './privacy/secure-aggregation/secure-sum.js';
export {
  SecureAggregationClient,
  SecureAggregationServer,
  type SecureAggregationParams,
  type AdvertisedKeys,
  type SecureAggregationResult,
  type SecureAggregationDrops,
  type SecureAggregationTesting,
} from './privacy/secure-aggregation/protocol.js';
export { type RandomSource } from './privacy/secure-aggregation/shamir.js';
export { fixedPoint, quantize, dequantize, quantizationBound, type FixedPoint } from './privacy/secure-aggregation/fixed-point.js';
export { defaultNeighbours, defaultThreshold } from './privacy/secure-aggregation/graph.js';
export { type Curve } from './privacy/secure-aggregation/keys.js';
export { detectSignatureScheme, type SignatureScheme } from './privacy/secure-aggregation/signatures.js';
export { composeReleases, type CalibratedReleases, type ReleasesPrivacy } from './privacy/gaussian-noise.js';
export { dirichletMultinomialLogPmf } from './distributions/dirichlet-multinomial.js';
export {
  AssignmentCost,
  linearSumAssignment,
  type LinearSumAssignment,
  type LinearSumAssignmentOptions,
} from './assignment/linear-sum-assignment.js';
export { partitionToArrow } from './data/arrow.js';
export {
  partition,
  type Label,
  type LabelsLike,
  type Partition,
  type IidOptions,
  type DirichletOptions,
  type DirichletPartition,
  type QuantityOptions,
  type QuantityImbalance,
  type QuantityPartition,
  type ShiftOptions,
  type ShiftParameters,
  type ShiftPartition,
  type ShiftedRows,
  type HistogramDealOptions,
  type ConditionallyIidOptions,
  type MdmPartitionOptions,
  type MdmPartition,
  type FullyIidOptions,
  type ContaminatedOptions,
  type ContaminatedPartition,
  type EntangledOptions,
  type EntangledPartition,
} from './partition/index.js';
// the algorithms by name: one descriptor each, in one registry (a user's own registers the same way)
export {
  defineAlgorithm,
  registerAlgorithm,
  algorithm,
  algorithms,
  algorithmNames,
  loadResult,
  saveCheckpoint,
  restoreServer,
  type SavedRunCheckpoint,
  type AlgorithmDescriptor,
  type AnyAlgorithm,
  type ClientInput,
  type CliOption,
  type CliPart,
  type CliClientPart,
  type CliContext,
  type CliClientContext,
  type CliClientData,
  type CliTable,
  type CliValues,
} from './federated/registry/index.js';
// one saved-model format for every algorithm (what `fedmix server --out` writes)
export { loadModel, modelArtifact, clientModelArtifact, MODEL_KIND, MODEL_VERSION, type LoadedModel, type ModelArtifact } from './federated/registry/model-file.js';
export { WebWorkerTransport, type WebWorkerTransportOptions } from './federated/transport/web-workers.js';
export { FedmixWorker, type FedmixWorkerOptions, type GaussianMixtureFit } from './federated/transport/fedmix-worker.js';
export type { GaussianMixtureFitData } from './federated/transport/lane.js';
export type { LaneOptions, LaneBudget } from './federated/transport/lanes.js';
export { GMM_PARAMS, gmmParams, receiveGmmParams, type GmmParams } from './federated/gmm-params.js';
export type { DetectorNoise } from './models/detectors.js';
export {
  fashionMnist,
  FASHION_MNIST_CLASSES,
  FASHION_MNIST_FILES,
  type FashionMnist,
  type FashionMnistOptions,
  type FashionMnistSource,
  type FashionMnistFile,
  type FashionMnistSplit,
} from './data/datasets/fashion-mnist.js';
export {
  ClientGraph,
  communities,
  modularity,
  COMMUNITY_METHODS,
  type GraphEdge,
  type GraphInput,
  type CommunityMethod,
  type CommunitiesOptions,
  type Communities,
  type CommunityPartition,
} from './graph/index.js';
export type { ClientSpec, MatrixData, AlgorithmName } from './federated/algorithms.js';
export type { FedDistrEncoder } from './federated/feddistr/encoder.js';
