/**
 * fedmix/fedgem: FedGEM, with the files of the WebAssembly modules its clients and
 * server can call ('dem', 'dirichlet', 'fedgem'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/fedgem.md).
 *
 * @module fedmix/fedgem
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-dem.generated.js';
import '../wasm/files-dirichlet.generated.js';
import '../wasm/files-fedgem.generated.js';

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
} from '../federated/fedgem/index.js';
