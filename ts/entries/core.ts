/**
 * fedmix/core: the library of the core WebAssembly module alone: init(),
 * Matrix, GaussianMixture, KMeans, the scalers, the metrics of one machine's
 * fits, random numbers and data helpers. A bundler emits only the files (SIMD
 * and scalar) of the core module, of the 'dem' module, which holds the steps
 * GaussianMixture and KMeans take on threads (`threads`), and of the
 * 'dirichlet' module, which holds Rng's gamma, Dirichlet and categorical
 * draws, for a program that imports this entry alone (docs/browsers-and-workers.md); init({
 * features: [] }) loads the core alone. Every name here is also
 * `fedmix`'s; the other entries (fedmix/svm, fedmix/networks,
 * fedmix/federation and one per federated algorithm) add their modules.
 *
 * @module fedmix/core
 */
import '../wasm/files-core.generated.js';
// GaussianMixture's and KMeans's steps on threads (fitAsync with threads) are the 'dem' module's
import '../wasm/files-dem.generated.js';
// Rng's gamma, Dirichlet and categorical draws are the 'dirichlet' module's (out of the core every program loads)
import '../wasm/files-dirichlet.generated.js';
// GaussianMixture's precision: 'float32' is the 'float32' module's
import '../wasm/files-float32.generated.js';

export { init, backendInfo, type InitInfo, type InitOptions, type Backend, type BuildSource, type Feature, type ModuleName, type WasmSource, type WasmSources } from '../wasm/loader.js';
export {
  FedmixError,
  InvalidDataError,
  InvalidParameterError,
  NumericalError,
  NotFittedError,
  DisposedError,
  WasmError,
  ArrowNotLoadedError,
  WasmAllocationError,
  type FedmixErrorCode,
} from '../errors.js';
export { Matrix, type MatrixLike } from '../data/matrix.js';
export { isArrowTable, isArrowVector, isArrowIPC, toArrowVector, type ArrowTableLike, type ArrowVectorLike, type ArrowColumnsOptions, type NullPolicy } from '../data/arrow.js';
export { toArrowTable, type ArrowColumnInput } from '../data/arrow-table.js';
export { loadArrow } from '../data/arrow-library.js';
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
} from '../models/gaussian-mixture.js';
export type { FitThreads, Threads } from '../parallel/threads.js';
export { KMeans, nearestCenters, type KMeansJSON, type KMeansOptions } from '../models/kmeans.js';
export { selectGaussianMixture, type SelectOptions, type Selection, type CandidateScore } from '../models/select.js';
export { averagePrecision, rocAuc } from '../metrics/ranking.js';
export { scoreMixture, anomalyScores, type MixtureScores } from '../metrics/mixture.js';
export { MinMaxScaler, StandardScaler, type MinMaxScalerJSON, type ScalerJSON, type StandardScalerJSON } from '../data/scale.js';
export { parseCsv, csvToMatrix, type CsvTable, type CsvOptions } from '../data/csv.js';
export { Rng, clientSeed, type RngState } from '../random.js';
export { makeBlobs, type BlobOptions, type Blobs } from '../data/synthetic.js';
export { coordinateMedian, trimmedMean } from '../federated/robust.js';
export { LIMITS, type NumericArray } from '../validate.js';
