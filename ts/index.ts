/**
 * fedmix: federated mixture models on a Rust/WebAssembly SIMD core.
 * Call `await init()` once, then use the estimators.
 *
 * @module fedmix
 */
// every WebAssembly module's files, so that init() finds each: a bundler emits them all into a program that
// imports `fedmix` (the entries fedmix/core, fedmix/fedavg, ... carry only their own; docs/browsers-and-workers.md)
import './wasm/files-all.generated.js';
export { init, backendInfo, type InitInfo, type InitOptions, type Backend, type BuildSource, type Feature, type ModuleName, type WasmSource, type WasmSources } from './wasm/loader.js';
export {
  FedmixError,
  InvalidDataError,
  InvalidParameterError,
  NumericalError,
  InvalidMessageError,
  ContributionError,
  OtherRunError,
  FederationError,
  BrokerError,
  UntrustedBrokerError,
  PrivacyBudgetError,
  SecureAggregationError,
  NotFittedError,
  DisposedError,
  WasmError,
  ArrowNotLoadedError,
  WasmAllocationError,
  type FedmixErrorCode,
} from './errors.js';
export { Matrix, type MatrixLike } from './data/matrix.js';
export {
  isArrowTable,
  isArrowVector,
  isArrowIPC,
  toArrowVector,
  partitionToArrow,
  type ArrowTableLike,
  type ArrowVectorLike,
  type ArrowColumnsOptions,
  type NullPolicy,
} from './data/arrow.js';
export { toArrowTable, type ArrowColumnInput } from './data/arrow-table.js';
export { loadArrow } from './data/arrow-library.js';
export { coordinateMedian, trimmedMean } from './federated/robust.js';
export { PCA, type PCAJSON, type PCAOptions } from './data/pca.js';
export {
  GaussianMixture,
  COVARIANCE_TYPES,
  INIT_PARAMS,
  PRECISIONS,
  informationCriteria,
  type CovarianceType,
  type InitParams,
  type Precision,
  type GaussianMixtureOptions,
  type ResolvedGaussianMixtureOptions,
  type GaussianMixtureJSON,
} from './models/gaussian-mixture.js';
export type { Threads } from './parallel/threads.js';
export {
  DirichletMultinomialMixture,
  type DirichletMultinomialMixtureJSON,
  type DirichletMultinomialMixtureParameters,
  type MdmSample,
  type MdmCentralFitOptions,
} from './models/dirichlet-multinomial-mixture.js';
export { KMeans, nearestCenters, type KMeansJSON, type KMeansOptions } from './models/kmeans.js';
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
} from './models/network.js';
export { Autoencoder, type AutoencoderOptions, type AutoencoderJSON, type ResolvedAutoencoderOptions } from './models/autoencoder.js';
export { MLPClassifier, MLP_ACTIVATIONS, type MLPActivation, type MLPClassifierOptions, type MLPClassifierJSON, type ResolvedMLPClassifierOptions } from './models/mlp-classifier.js';
export {
  OneClassSVM,
  OCSVM_KERNELS,
  type OneClassSVMKernel,
  type OneClassSVMOptions,
  type ResolvedOneClassSVMOptions,
  type OneClassSVMJSON,
  type OneClassSVMArraysJSON,
} from './models/one-class-svm.js';
export { LocalDetector, DETECTOR_KINDS, type DetectorKind, type LocalDetectorOptions, type LocalDetectorJSON } from './models/detectors.js';
export { selectGaussianMixture, type SelectOptions, type Selection, type CandidateScore } from './models/select.js';
export { averagePrecision, rocAuc } from './metrics/ranking.js';
export { normalizedError, mdmRecoveryError, type MdmRecovery } from './metrics/recovery.js';
export { histogramEnergyDistance } from './metrics/histograms.js';
export { adjustedRandScore, silhouetteSamples, silhouetteScore } from './metrics/clustering.js';
export { scoreMixture, anomalyScores, type MixtureScores } from './metrics/mixture.js';
export { gaussianNoiseOod } from './metrics/ood.js';
export { MinMaxScaler, StandardScaler, type MinMaxScalerJSON, type ScalerJSON, type StandardScalerJSON } from './data/scale.js';
export { parseCsv, csvToMatrix, type CsvTable, type CsvOptions } from './data/csv.js';
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
export { type RoundPrivacy, type RunPrivacy } from './federated/runtime/privacy-ledger.js';
export { dirichletMultinomialLogPmf } from './distributions/dirichlet-multinomial.js';
export { Rng, clientSeed, type RngState } from './random.js';
export {
  AssignmentCost,
  linearSumAssignment,
  type LinearSumAssignment,
  type LinearSumAssignmentOptions,
} from './assignment/linear-sum-assignment.js';
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
// the federation runtime: roles, the round loop, messages, transports
export {
  runFederation,
  runFederationSync,
  type FederationResult,
  type RoundRecord,
  type RunOptions,
  type RunHooks,
  type RoundReport,
  type RunCheckpoint,
  type Traffic,
  type ClientTraffic,
} from './federated/runtime/run.js';
export type { MissedRoundsState } from './federated/runtime/missed-rounds.js';
export {
  defineProtocol,
  type Protocol,
  type ServerRole,
  type ClientRole,
  type RoundContext,
  type Failure,
  type FailureKind,
  type ExcludedClient,
} from './federated/runtime/roles.js';
export { resolvePolicy, type FederationPolicy, type ResolvedPolicy, type SecureAggregationPolicy } from './federated/runtime/policy.js';
export { sumLayout, type SumLayoutOptions, type AdditiveLayout, type AdditiveField } from './federated/secure-aggregation/layout.js';
export { type SecureRoundRecord } from './federated/secure-aggregation/round.js';
export { type SecureNoiseRecord } from './federated/secure-aggregation/noise.js';
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
export { ClientHost, REFUSAL } from './federated/runtime/client-host.js';
export { ClientBudget, MemoryLedgerStore, LEDGER_FORMAT, LEDGER_VERSION, type ClientBudgetOptions, type BudgetRefusal, type LedgerStore, type LedgerEntry, type SavedLedger } from './federated/runtime/client-budget.js';
export { IndexedDbLedgerStore } from './federated/ledger-indexeddb.js';
export { InProcessTransport, type InProcessOptions } from './federated/transport/in-process.js';
export { WebWorkerTransport, type WebWorkerTransportOptions } from './federated/transport/web-workers.js';
export { FedmixWorker, type FedmixWorkerOptions, type GaussianMixtureFit } from './federated/transport/fedmix-worker.js';
export type { GaussianMixtureFitData } from './federated/transport/lane.js';
export type { LaneOptions, LaneBudget } from './federated/transport/lanes.js';
export { MqttTransport, join, type MqttTransportOptions, type JoinOptions, type JoinResult } from './federated/transport/mqtt.js';
export type { Certificates } from './federated/transport/tls.js';
export {
  federationTopics,
  clientTopics,
  topicGrants,
  mayAccess,
  mosquittoAcl,
  validateId,
  type FederationTopics,
  type ClientTopics,
  type BrokerUser,
  type BrokerAccount,
  type BrokerRole,
  type TopicGrant,
  type TopicAction,
} from './federated/transport/topics.js';
export type { Transport, SyncTransport, Exchange, ExchangeOptions, Interruption, Received } from './federated/transport/transport.js';
export type { ConnectionChange } from './federated/transport/reconnect.js';
export { message, checkEnvelope, withPrivacy, readPrivacyStep, PROTOCOL, PROTOCOL_VERSION, type Message, type PrivacyStep } from './federated/messages/envelope.js';
export { encodeMessage, decodeMessage, copyMessage, wireBytes, DEFAULT_MAX_MESSAGE_BYTES, ENCODINGS, type Encoding, type DecodeOptions } from './federated/messages/codec.js';
export {
  defineMessage,
  parsePayload,
  f64Array,
  f32Array,
  i32Array,
  u32Array,
  finiteNumber,
  wholeNumber,
  oneOf,
  flag,
  record,
  listOf,
  type MessageType,
  type MessageOf,
  type PayloadOf,
  type PayloadIn,
  type AnySchema,
} from './federated/messages/schema.js';
export { GMM_PARAMS, gmmParams, receiveGmmParams, type GmmParams } from './federated/gmm-params.js';
export { LIMITS, type NumericArray } from './validate.js';
export {
  distributedEM,
  DemClient,
  DemServer,
  DEM_INITS,
  DEM_KINDS,
  DEM_PROTOCOL,
  type DemInitMethod,
  type DemInitialParameters,
  type DemOptions,
  type DemServerOptions,
  type DemRoundMetrics,
  type QuantizationRidge,
  type DemInitialization,
  type DistributedEMOptions,
  type DistributedEMResult,
} from './federated/dem/index.js';
export {
  fitMdm,
  selectMdm,
  MdmClient,
  MdmUserGroup,
  MdmAggregator,
  MdmServer,
  MDM_KINDS,
  MDM_PROTOCOL,
  MDM_GUARDS,
  MDM_MAX_CELLS,
  mdmSensitivity,
  type MdmClientOptions,
  type MdmUserGroupOptions,
  type MdmAggregatorOptions,
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
export {
  fedGenGMM,
  FedGenGMMClient,
  FedGenGMMServer,
  FEDGENGMM_PROTOCOL,
  type FedGenGMMOptions,
  type FedGenGMMResult,
  type FedGenGMMClientOptions,
  type FedGenGMMServerOptions,
  type FedGenGMMAggregate,
  type ServerStep as FedGenGMMServerStep,
} from './federated/fedgengmm/index.js';
export {
  fedGEM,
  FedGEMClient,
  FedGEMServer,
  FEDGEM_PROTOCOL,
  PHI_GRID,
  centerNoiseStd,
  type FedGEMOptions,
  type FedGEMResult,
  type FedGEMClientOptions,
  type FedGEMServerOptions,
  type FedGEMOutcome,
  type Merge,
  type RoundSummary,
  type PrivacyOptions,
  type VarianceEstimate,
} from './federated/fedgem/index.js';
export {
  fedAvg,
  FedAvgClient,
  FedAvgServer,
  FedProxServer,
  ScaffoldServer,
  DEFAULT_EPOCHS as FEDAVG_DEFAULT_EPOCHS,
  DEFAULT_OPTIMIZER as FEDAVG_DEFAULT_OPTIMIZER,
  type EarlyStoppingOptions,
  FEDAVG_PROTOCOL,
  type FedAvgAlgorithm,
  type FedAvgClientData,
  type FedAvgClientOptions,
  type FedAvgOptions,
  type FedAvgOutcome,
  type FedAvgResult,
  type FedAvgRound,
  type FedAvgServerOptions,
  type FedProxServerOptions,
  type ScaffoldServerOptions,
} from './federated/fedavg/index.js';
export {
  associate,
  CommunitiesClient,
  CommunitiesServer,
  COMMUNITIES_PROTOCOL,
  type AssociateOptions,
  type AssociateResult,
  type Association,
  type AssociationDecision,
  type CommunitiesClientOptions,
  type CommunitiesServerOptions,
} from './federated/communities/index.js';
export type { DetectorNoise } from './models/detectors.js';
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
} from './federated/feddistr/index.js';
export { makeBlobs, type BlobOptions, type Blobs } from './data/synthetic.js';
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
export type { EarlyStopping } from './models/early-stopping.js';
export type { FedDistrEncoder } from './federated/feddistr/encoder.js';
