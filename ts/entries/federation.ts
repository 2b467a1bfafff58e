/**
 * fedmix/federation: the federation runtime without its algorithms: runFederation, roles
 * (defineProtocol), policies, secure aggregation's layout, client hosts and budgets, the
 * in-process and MQTT transports, and the messages. It brings the files of the 'dirichlet'
 * WebAssembly module (secure aggregation, privacy accounting) beside the core's; each
 * algorithm's entry (fedmix/dem, fedmix/fedavg, ...) brings its own. WebWorkerTransport,
 * FedmixWorker and the algorithm registry (algorithms by name) run any algorithm, so they are
 * `fedmix`'s only (docs/browsers-and-workers.md, docs/federations.md).
 *
 * @module fedmix/federation
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-dirichlet.generated.js';

export {
  InvalidMessageError,
  ContributionError,
  OtherRunError,
  FederationError,
  BrokerError,
  UntrustedBrokerError,
  PrivacyBudgetError,
  SecureAggregationError,
} from '../errors.js';
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
} from '../federated/runtime/run.js';
export type { MissedRoundsState } from '../federated/runtime/missed-rounds.js';
export {
  defineProtocol,
  type Protocol,
  type ServerRole,
  type ClientRole,
  type RoundContext,
  type Failure,
  type FailureKind,
  type ExcludedClient,
} from '../federated/runtime/roles.js';
export { resolvePolicy, type FederationPolicy, type ResolvedPolicy, type SecureAggregationPolicy } from '../federated/runtime/policy.js';
export { sumLayout, type SumLayoutOptions, type AdditiveLayout, type AdditiveField } from '../federated/secure-aggregation/layout.js';
export { type SecureRoundRecord } from '../federated/secure-aggregation/round.js';
export { type SecureNoiseRecord } from '../federated/secure-aggregation/noise.js';
export { ClientHost, REFUSAL } from '../federated/runtime/client-host.js';
export { ClientBudget, MemoryLedgerStore, LEDGER_FORMAT, LEDGER_VERSION, type ClientBudgetOptions, type BudgetRefusal, type LedgerStore, type LedgerEntry, type SavedLedger } from '../federated/runtime/client-budget.js';
export { IndexedDbLedgerStore } from '../federated/ledger-indexeddb.js';
export { InProcessTransport, type InProcessOptions } from '../federated/transport/in-process.js';
export { MqttTransport, join, type MqttTransportOptions, type JoinOptions, type JoinResult } from '../federated/transport/mqtt.js';
export type { Certificates } from '../federated/transport/tls.js';
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
} from '../federated/transport/topics.js';
export type { Transport, SyncTransport, Exchange, ExchangeOptions, Interruption, Received } from '../federated/transport/transport.js';
export type { ConnectionChange } from '../federated/transport/reconnect.js';
export { message, checkEnvelope, withPrivacy, readPrivacyStep, PROTOCOL, PROTOCOL_VERSION, type Message, type PrivacyStep } from '../federated/messages/envelope.js';
export { encodeMessage, decodeMessage, copyMessage, wireBytes, DEFAULT_MAX_MESSAGE_BYTES, ENCODINGS, type Encoding, type DecodeOptions } from '../federated/messages/codec.js';
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
} from '../federated/messages/schema.js';
export { type RoundPrivacy, type RunPrivacy } from '../federated/runtime/privacy-ledger.js';
