/** Distributed EM (DEM) for Gaussian mixtures: client and server roles, their messages, and the one-call form. */
export { DemClient } from './client.js';
export { DemServer, DEM_INITS, type DemInitMethod, type DemInitialParameters, type DemOptions, type DemServerOptions, type DemRoundMetrics, type QuantizationRidge, type DemInitialization } from './server.js';
export { distributedEM, type DistributedEMOptions, type DistributedEMResult } from './run.js';
export {
  DEM_PROTOCOL,
  DEM_KINDS,
  s2Length,
  type ModelBroadcast,
  type StatsReply,
  type DataSummaryPayload,
  type KfedRequest,
  type KfedLocalReply,
  type CountReply,
  type SubsetRequest,
  type SubsetReply,
} from './messages.js';
