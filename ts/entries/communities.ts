/**
 * fedmix/communities: the community detectors (associate), with the files of the WebAssembly modules its clients and
 * server can call ('assignment', 'dem', 'dirichlet', 'nn', 'svm'; 'dirichlet' for the runtime's secure aggregation
 * and privacy accounting) beside the core's. Import init from fedmix/core and the runtime (runFederation,
 * transports) from fedmix/federation; a bundler emits only these modules' files
 * (docs/browsers-and-workers.md, docs/algorithms/communities.md).
 *
 * @module fedmix/communities
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-assignment.generated.js';
import '../wasm/files-dem.generated.js';
import '../wasm/files-dirichlet.generated.js';
import '../wasm/files-nn.generated.js';
import '../wasm/files-svm.generated.js';
// GaussianMixture's precision: 'float32' is the 'float32' module's
import '../wasm/files-float32.generated.js';

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
} from '../federated/communities/index.js';
