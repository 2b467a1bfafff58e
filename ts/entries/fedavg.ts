/**
 * fedmix/fedavg: FedAvg, FedProx and SCAFFOLD, with the files of the WebAssembly modules its clients and
 * server can call ('nn', 'dirichlet'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/fedavg.md).
 *
 * @module fedmix/fedavg
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-nn.generated.js';
import '../wasm/files-dirichlet.generated.js';

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
} from '../federated/fedavg/index.js';
