/**
 * fedGEM: the one-call form of FedGEM, in process. For clients elsewhere
 * (worker threads, an MQTT broker) run a FedGEMServer with runFederation.
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { LIMITS, guardRead, isArray, optionKeys, readArray, readOptions } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type RunHooks, type Traffic } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { FEDGEM_CLIENT_KEYS, FedGEMClient, type FedGEMClientOptions } from './client.js';
import { FEDGEM_SERVER_KEYS, FedGEMServer, type FedGEMOutcome, type FedGEMServerOptions, type RoundSummary, type VarianceEstimate } from './server.js';

export interface FedGEMOptions {
  /**
   * every client's options, or one per client (K_c usually differs); a
   * client without a `variance` takes the federated estimate (unless
   * server.variance says otherwise), and the result reports it
   */
  client: FedGEMClientOptions | FedGEMClientOptions[];
  /** collaborative rounds T (default 10) */
  rounds?: number;
  /**
   * the final-radius hyperparameter: a number (default 1), or candidates to
   * tune by the clients' validation silhouettes (e.g. PHI_GRID)
   */
  phi?: number | readonly number[];
  /** when tuning: keep the smallest phi whose silhouette is within this of the best (default: one standard error) */
  phiTolerance?: number;
  /** per client: the rows that score the candidates when phi is tuned (default: its training rows) */
  validation?: MatrixLike[];
  /** the server's own settings (nFeatures defaults to the clients' column count; a client with another is an InvalidDataError before the run) */
  server?: Omit<FedGEMServerOptions, 'nFeatures' | 'rounds' | 'phi' | 'phiTolerance' | 'tol'> & { nFeatures?: number };
  /** stop the rounds early once every radius is below this (a number > 0; default: run them all) */
  tol?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** Every option of FedGEMOptions, for readOptions (the compiler checks it is complete). */
const FEDGEM_KEYS = optionKeys<FedGEMOptions>()({ client: true, rounds: true, phi: true, phiTolerance: true, validation: true, server: true, tol: true, encoding: true, maxExcludedShare: true, hooks: true });

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
  const options = { ...(readOptions(given, FEDGEM_KEYS) as FedGEMOptions) };
  // the server's own settings here; rounds, phi, phiTolerance and tol are top-level options
  options.server = readOptions(options.server, FEDGEM_SERVER_KEYS.filter((k) => !['rounds', 'phi', 'phiTolerance', 'tol'].includes(k)) as (keyof NonNullable<FedGEMOptions['server']>)[], 'options.server') as FedGEMOptions['server'];
  if (options.client !== undefined && isArray('options.client', options.client)) options.client = readArray('options.client', options.client) as FedGEMOptions['client'];
  // a misspelt client option is the caller's error, not a client that fails to be made (and is left out)
  if (Array.isArray(options.client)) options.client.forEach((c, i) => readOptions(c, FEDGEM_CLIENT_KEYS, `options.client[${i}]`));
  else if (options.client !== undefined) readOptions(options.client, FEDGEM_CLIENT_KEYS, 'options.client');
  if (options.validation !== undefined) options.validation = readArray('options.validation', options.validation) as FedGEMOptions['validation'];
  const clientData = readArray('clientData', data, LIMITS.clients) as MatrixLike[];
  const throwOnBad = options.server?.onInvalidClient === 'throw';
  const policy = oneCallPolicy(options.server?.onInvalidClient, options.maxExcludedShare, options.hooks);
  const nGiven = options.server?.nFeatures;
  const nFeatures = clientFeatures('clientData', clientData, { expected: nGiven === undefined ? undefined : { nFeatures: nGiven, what: 'server.nFeatures' } });
  // the estimate round only when some client lacks a variance: with every variance given the run is the paper's
  const listed = Array.isArray(options.client) ? options.client : [options.client];
  const allGiven = guardRead('options.client', () => listed.every((o) => o !== null && typeof o === 'object' && o.variance !== undefined));
  // one variance for all: the server knows it for its separation step (it is not sent)
  const shared = allGiven ? guardRead('options.client', () => new Set(listed.map((o) => o.variance))) : undefined;
  const server = new FedGEMServer({
    variance: allGiven ? 'clients' : 'estimate',
    ...(shared?.size === 1 && (options.server?.variance ?? 'clients') === 'clients' ? { clientVariance: [...shared][0] } : {}),
    ...options.server,
    nFeatures,
    rounds: options.rounds,
    phi: options.phi,
    phiTolerance: options.phiTolerance,
    tol: options.tol,
  });
  // a client that cannot be created never joins: it is reported with its reason
  const { clients, unborn } = makeClients(
    clientData.length,
    (i, id) => {
      const opts = Array.isArray(options.client) ? options.client[i] : options.client;
      if (!opts) throw new InvalidParameterError(`no client options for client ${id}`);
      return new FedGEMClient(id, clientData[i]!, opts, options.validation?.[i]);
    },
    throwOnBad,
  );
  let finished: FedGEMClient[] = [];
  try {
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding: options.encoding }), { ...policy, excludedBefore: unborn });
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
