/**
 * fedmix/fedgengmm: FedGenGMM, with the files of the WebAssembly modules its clients and
 * server can call ('dem', 'dirichlet'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/fedgengmm.md).
 *
 * @module fedmix/fedgengmm
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-dem.generated.js';
import '../wasm/files-dirichlet.generated.js';
// GaussianMixture's precision: 'float32' is the 'float32' module's
import '../wasm/files-float32.generated.js';

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
} from '../federated/fedgengmm/index.js';
