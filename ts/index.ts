/**
 * fedmix: federated mixture models on a Rust/WebAssembly SIMD core.
 * Call `await init()` once, then use the estimators.
 */
export { init, backendInfo, type InitInfo, type InitOptions, type Backend } from './wasm/loader.js';
export {
  FedmixError,
  InvalidDataError,
  InvalidParameterError,
  NumericalError,
  InvalidMessageError,
  NotFittedError,
  WasmError,
  type FedmixErrorCode,
} from './errors.js';
export { Matrix, type MatrixLike } from './data/matrix.js';
export { PCA, type PCAOptions } from './data/pca.js';
export {
  GaussianMixture,
  COVARIANCE_TYPES,
  INIT_PARAMS,
  informationCriteria,
  type CovarianceType,
  type InitParams,
  type GaussianMixtureOptions,
  type GaussianMixtureJSON,
} from './models/gaussian-mixture.js';
export {
  DirichletMultinomialMixture,
  type DirichletMultinomialMixtureJSON,
  type DirichletMultinomialMixtureParameters,
  type MdmSample,
} from './models/dirichlet-multinomial-mixture.js';
export { KMeans, nearestCenters, type KMeansOptions } from './models/kmeans.js';
export { selectGaussianMixture, type SelectOptions, type Selection, type CandidateScore } from './models/select.js';
export { averagePrecision, rocAuc } from './metrics/ranking.js';
export { normalizedError, mdmRecoveryError, type MdmRecovery } from './metrics/recovery.js';
export { histogramEnergyDistance } from './metrics/histograms.js';
export { adjustedRandScore, silhouetteSamples, silhouetteScore } from './metrics/clustering.js';
export { scoreMixture, anomalyScores, type MixtureScores } from './metrics/mixture.js';
export { gaussianNoiseOod } from './metrics/ood.js';
export { MinMaxScaler, StandardScaler } from './data/scale.js';
export { parseCsv, csvToMatrix, type CsvTable } from './data/csv.js';
export { digamma, lgamma, trigamma, digammaDiff, lnRisingFactorial } from './special/gamma.js';
export { dirichletMultinomialLogPmf } from './distributions/dirichlet-multinomial.js';
export { Rng } from './random.js';
export {
  linearSumAssignment,
  type LinearSumAssignment,
  type LinearSumAssignmentOptions,
} from './assignment/linear-sum-assignment.js';
export {
  partition,
  type Label,
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
} from './partition/index.js';
export {
  distributedEM,
  runDem,
  DemClient,
  DemServer,
  DEM_INITS,
  DEM_KINDS,
  type DemClientLike,
  type DemInitMethod,
  type DemInitialParameters,
  type DemOptions,
  type DemServerOptions,
  type DemReply,
  type DistributedEMOptions,
  type DistributedEMResult,
} from './federated/dem/index.js';
export { InProcessTransport, type Traffic, type ExcludedClient } from './federated/transport.js';
export { SecureSum } from './federated/aggregate.js';
export {
  fitMdm,
  runMdm,
  selectMdm,
  MdmClient,
  MdmAggregator,
  MdmServer,
  MDM_KINDS,
  MDM_GUARDS,
  MDM_MAX_CELLS,
  mdmSensitivity,
  type MdmClientLike,
  type MdmClientOptions,
  type MdmAggregatorOptions,
  type MdmReply,
  type MdmOptions,
  type MdmServerOptions,
  type MdmPrivacy,
  type MdmRound,
  type MdmFitOptions,
  type MdmFitResult,
  type SelectMdmOptions,
  type SelectMdmResult,
  type MdmCandidate,
  type MdmParams,
} from './federated/mdm/index.js';
export { message, encodeMessage, decodeMessage, type Message } from './federated/message.js';
export type { GmmParams } from './federated/gmm-params.js';
export type { NumericArray } from './validate.js';
export {
  fedGenGMM,
  FedGenGMMClient,
  FedGenGMMServer,
  type FedGenGMMOptions,
  type FedGenGMMResult,
  type FedGenGMMClientOptions,
  type FedGenGMMServerOptions,
} from './federated/fedgengmm/index.js';
export {
  fedGEM,
  FedGEMClient,
  FedGEMServer,
  PHI_GRID,
  centerNoiseStd,
  type FedGEMOptions,
  type FedGEMResult,
  type FedGEMClientOptions,
  type FedGEMServerOptions,
  type Merge,
  type RoundSummary,
  type PrivacyOptions,
} from './federated/fedgem/index.js';
export { makeBlobs, type BlobOptions, type Blobs } from './data/synthetic.js';
