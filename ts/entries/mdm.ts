/**
 * fedmix/mdm: federated Dirichlet-multinomial mixtures (MDM), with the files of the WebAssembly modules its clients and
 * server can call ('dirichlet'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/mdm.md).
 *
 * @module fedmix/mdm
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-dirichlet.generated.js';

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
} from '../federated/mdm/index.js';
