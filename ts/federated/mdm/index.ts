/** Federated inference of a mixture of Dirichlet-multinomials: client, aggregator and server roles, their messages, the one-call forms and K selection. */
export { MdmClient, type MdmClientOptions } from './client.js';
export { MdmUserGroup, type MdmUserGroupOptions } from './group.js';
export { MdmAggregator, type MdmAggregatorOptions } from './aggregator.js';
export { MdmServer, GUARDS as MDM_GUARDS, type MdmOptions, type MdmServerOptions, type MdmPrivacy, type MdmRound } from './server.js';
export { fitMdm, type MdmFitOptions, type MdmFitResult } from './run.js';
export { selectMdm, type SelectMdmOptions, type SelectMdmResult, type MdmCandidate } from './select.js';
export {
  MDM_PROTOCOL,
  MDM_KINDS,
  MDM_MAX_CELLS,
  sensitivity as mdmSensitivity,
  type MdmParams,
  type InitRequest as MdmInitRequest,
  type InitStatsReply as MdmInitStatsReply,
  type ModelBroadcast as MdmModelBroadcast,
  type StatsReply as MdmStatsReply,
  type EvaluateRequest as MdmEvaluateRequest,
  type EvaluationReply as MdmEvaluationReply,
  type AggregatePayload as MdmAggregatePayload,
} from './messages.js';
