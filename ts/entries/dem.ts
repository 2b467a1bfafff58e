/**
 * fedmix/dem: distributed EM (DistributedEM, k-FED), with the files of the WebAssembly modules its clients and
 * server can call ('dem', 'dirichlet'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/dem.md).
 *
 * @module fedmix/dem
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-dem.generated.js';
import '../wasm/files-dirichlet.generated.js';
// GaussianMixture's precision: 'float32' is the 'float32' module's
import '../wasm/files-float32.generated.js';

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
} from '../federated/dem/index.js';
