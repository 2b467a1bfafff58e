/**
 * fedGEM: the one-call form of FedGEM, in process. For clients elsewhere
 * (worker threads, an MQTT broker) run a FedGEMServer with runFederation.
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { LIMITS, isArray, readArray, readOptions } from '../../validate.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type RunHooks, type Traffic } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { FedGEMClient } from './client.js';
import { checkClientOptions, checkServerOptions, fedGEMOptions, serverOptions, TOP_LEVEL_SERVER_OPTIONS, type FedGEMOptions } from './options.js';
import { FedGEMServer, type FedGEMOutcome, type RoundSummary, type VarianceEstimate } from './server.js';

export type { FedGEMOptions } from './options.js';

export interface FedGEMResult {
  /** super-clusters counted: the paper's merge, then the separation step's joins (server.separation) */
  estimatedK: number;
  /** joins made by the separation step (0 when server.separation is false) */
  separationJoins: number;
  /** the distance it joined below (the smallest distance between two counted components of one client) */
  separation?: number;
  /** components with fewer than two rows, in the nearest super-cluster but not counted */
  uncounted: number;
  phi: number;
  /** mean validation silhouette of each candidate phi (when tuned) */
  phiScores?: FedGEMOutcome['phiScores'];
  /** the federated estimate of sigma^2, when some client had no variance of its own */
  varianceEstimate?: VarianceEstimate;
  /** estimatedK x d, row-major */
  globalCenters: Float64Array;
  /** the clients that finished, with their personalized models (the caller disposes them) */
  clients: FedGEMClient[];
  /** per client id: the super-cluster of each of its components */
  memberships: Map<string, Int32Array>;
  history: RoundSummary[];
  traffic: Traffic;
  excluded: ExcludedClient[];
  /** wall time of the server's part */
  serverSeconds: number;
  /** the runtime's account: bytes per client, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

export function fedGEM(data: MatrixLike[], given: FedGEMOptions): FedGEMResult {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object');
  // read once: the caller's objects are not read again (getters, Proxies)
  const options = fedGEMOptions.check(given);
  // the server's own settings here; rounds, phi, phiTolerance and tol are top-level options
  const serverKeys = serverOptions.keys.filter((k) => !(TOP_LEVEL_SERVER_OPTIONS as readonly string[]).includes(k));
  const serverGiven = readOptions(options.server as FedGEMOptions['server'], serverKeys as (keyof NonNullable<FedGEMOptions['server']>)[], 'options.server');
  const clientGiven = options.client !== undefined && isArray('options.client', options.client) ? readArray('options.client', options.client) : options.client;
  // each client's options checked once, named where the caller wrote them: a bad one is the caller's error, not a client that fails to be made (and is left out)
  const clientOptions = Array.isArray(clientGiven)
    ? clientGiven.map((c, i) => checkClientOptions(c, `options.client[${i}]`))
    : checkClientOptions(clientGiven, 'options.client');
  const validation = options.validation === undefined ? undefined : (readArray('options.validation', options.validation) as MatrixLike[]);
  const clientData = readArray('clientData', data, LIMITS.clients) as MatrixLike[];
  const throwOnBad = serverGiven.onInvalidClient === 'throw';
  const policy = oneCallPolicy(serverGiven.onInvalidClient, options.maxExcludedShare as number | undefined, options.hooks as RunHooks | undefined);
  const nGiven = serverGiven.nFeatures;
  const nFeatures = clientFeatures('clientData', clientData, { expected: nGiven === undefined ? undefined : { nFeatures: nGiven, what: 'server.nFeatures' } });
  // the estimate round only when some client lacks a variance: with every variance given the run is the paper's
  const listed = Array.isArray(clientOptions) ? clientOptions : [clientOptions];
  const allGiven = listed.every((o) => o.variance !== undefined);
  // one variance for all: the server knows it for its separation step (it is not sent)
  const shared = allGiven ? new Set(listed.map((o) => o.variance)) : undefined;
  const server = new FedGEMServer(
    checkServerOptions({
      variance: allGiven ? 'clients' : 'estimate',
      ...(shared?.size === 1 && (serverGiven.variance ?? 'clients') === 'clients' ? { clientVariance: [...shared][0] } : {}),
      ...serverGiven,
      nFeatures,
      rounds: options.rounds,
      phi: options.phi,
      phiTolerance: options.phiTolerance,
      tol: options.tol,
    }),
  );
  // a client that cannot be created never joins: it is reported with its reason
  const { clients, unborn } = makeClients(
    clientData.length,
    (i, id) => {
      const opts = Array.isArray(clientOptions) ? clientOptions[i] : clientOptions;
      if (!opts) throw new InvalidParameterError(`no client options for client ${id}`);
      return new FedGEMClient(id, clientData[i]!, opts, validation?.[i]);
    },
    throwOnBad,
  );
  let finished: FedGEMClient[] = [];
  try {
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding: options.encoding as FedGEMOptions['encoding'] }), { ...policy, excludedBefore: unborn });
    const { model: outcome, ...federation } = run;
    const out = new Set(run.excluded.map((e) => e.client));
    finished = clients.filter((c) => outcome.memberships.has(c.id) && !out.has(c.id));
    return {
      estimatedK: outcome.estimatedK,
      separationJoins: outcome.separationJoins,
      ...(outcome.separation === undefined ? {} : { separation: outcome.separation }),
      uncounted: outcome.uncounted,
      phi: outcome.phi,
      phiScores: outcome.phiScores,
      varianceEstimate: outcome.varianceEstimate,
      globalCenters: outcome.globalCenters,
      clients: finished,
      memberships: outcome.memberships,
      history: server.history,
      traffic: { ...run.traffic },
      excluded: run.excluded,
      serverSeconds: run.history.reduce((t, r) => t + r.ms.configure + r.ms.accept + r.ms.aggregate, 0) / 1000,
      federation,
    };
  } finally {
    for (const c of clients) if (!finished.includes(c)) c.dispose();
  }
}
