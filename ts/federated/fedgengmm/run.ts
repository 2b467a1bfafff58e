/**
 * fedGenGMM: the one-call form of FedGenGMM, in process. For clients elsewhere
 * (worker threads, an MQTT broker) run a FedGenGMMServer with runFederation.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { clientSeed } from '../../random.js';
import { LIMITS, isArray, optionKeys, readArray, readOptions } from '../../validate.js';
import type { MatrixLike } from '../../data/matrix.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type RoundRecord, type RunHooks, type Traffic } from '../runtime/run.js';
import { clientFeatures, oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { FEDGENGMM_CLIENT_KEYS, FedGenGMMClient, type FedGenGMMClientOptions } from './client.js';
import { FEDGENGMM_SERVER_KEYS, FedGenGMMServer, type FedGenGMMServerOptions } from './server.js';

export interface FedGenGMMOptions {
  /**
   * every client's options, or one per client (clients may differ); a client
   * without a seed gets one derived from server.seed and its id
   * (clientSeed), so server.seed alone reproduces the run
   */
  client?: FedGenGMMClientOptions | FedGenGMMClientOptions[];
  /** the global fit, and the run's seed (nFeatures defaults to the clients' column count; a client with another is an InvalidDataError before the run) */
  server: Omit<FedGenGMMServerOptions, 'nFeatures'> & { nFeatures?: number };
  /** keep the clients' local models (for the local-models baseline); default false */
  keepLocalModels?: boolean;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** Every option of FedGenGMMOptions, for readOptions (the compiler checks it is complete). */
const FEDGENGMM_KEYS = optionKeys<FedGenGMMOptions>()({ client: true, server: true, keepLocalModels: true, encoding: true, maxExcludedShare: true, hooks: true });

export interface FedGenGMMResult {
  model: GaussianMixture;
  traffic: Traffic;
  /** clients that failed to train or whose upload was rejected, with the reason */
  excluded: ExcludedClient[];
  /** the local models, when keepLocalModels (owned by the caller) */
  localModels: { client: string; model: GaussianMixture; nSamples: number }[];
  /** rows drawn by the 'sample' server step (0 with 'hierarchical') */
  syntheticRows: number;
  /** the virtual rows of the 'hierarchical' server step (0 with 'sample') */
  virtualSamples: number;
  incomingComponents: number;
  /** wall time of the server's part: checking the uploads and aggregating */
  serverSeconds: number;
  /** the runtime's account: bytes per client, the round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

/** The server's share of a run's wall time: configuring its requests, judging the replies, aggregating. */
export function serverSeconds(history: readonly RoundRecord[]): number {
  return history.reduce((t, r) => t + r.ms.configure + r.ms.accept + r.ms.aggregate, 0) / 1000;
}

export function fedGenGMM(data: MatrixLike[], given: FedGenGMMOptions): FedGenGMMResult {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be an object with client and server, got ${formatValue(given)}`);
  // read once: the caller's objects are not read again (getters, Proxies)
  const options = { ...(readOptions(given, FEDGENGMM_KEYS) as FedGenGMMOptions) };
  options.server = readOptions(options.server, FEDGENGMM_SERVER_KEYS, 'options.server') as FedGenGMMOptions['server'];
  if (options.client !== undefined && isArray('options.client', options.client)) options.client = readArray('options.client', options.client) as FedGenGMMOptions['client'];
  // named where the caller wrote them (each client checks its options again)
  if (Array.isArray(options.client)) options.client.forEach((c, i) => readOptions(c, FEDGENGMM_CLIENT_KEYS, `options.client[${i}]`));
  else if (options.client !== undefined) readOptions(options.client, FEDGENGMM_CLIENT_KEYS, 'options.client');
  const policy = oneCallPolicy(options.server.onInvalidClient, options.maxExcludedShare, options.hooks);
  const clientData = readArray('clientData', data, LIMITS.clients) as MatrixLike[];
  const nGiven = options.server.nFeatures;
  const nFeatures = clientFeatures('clientData', clientData, { expected: nGiven === undefined ? undefined : { nFeatures: nGiven, what: 'server.nFeatures' } });
  const server = new FedGenGMMServer({ ...options.server, nFeatures });
  // a declared range bounds variances by the server's regCovar: a client regularizing more would be refused for it, honestly
  if (options.server.featureRange !== undefined) {
    const serverReg = options.server.regCovar ?? 1e-6;
    const clientOptions = Array.isArray(options.client) ? options.client : clientData.map(() => options.client as FedGenGMMClientOptions | undefined);
    clientOptions.forEach((c, i) => {
      const reg = c?.regCovar ?? 1e-6;
      if (reg > serverReg) {
        throw new InvalidParameterError(
          `options.client${Array.isArray(options.client) ? `[${i}]` : ''}.regCovar is ${reg}, above server.regCovar ${serverReg}: with a featureRange the server bounds each variance by (max - min)^2 / 4 + its regCovar, so give the server at least the clients' regCovar`,
        );
      }
    });
  }
  // checked by the server: the run's seed, from which clients without their own derive theirs
  const runSeed = options.server.seed;
  const clients: FedGenGMMClient[] = [];
  try {
    clientData.forEach((data, c) => {
      const opts = Array.isArray(options.client) ? options.client[c] ?? {} : options.client ?? {};
      const id = String(c);
      const seed = opts.seed ?? (runSeed === undefined ? undefined : clientSeed(runSeed, id));
      clients.push(new FedGenGMMClient(id, data, { ...opts, seed }));
    });
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding: options.encoding }), policy);
    const { model: agg, ...federation } = run;
    const used = new Set(agg.clients);
    const localModels: FedGenGMMResult['localModels'] = [];
    if (options.keepLocalModels) {
      for (const c of clients) {
        if (!used.has(c.id)) continue;
        localModels.push({ client: c.id, model: c.takeModel(), nSamples: c.nSamples });
      }
    }
    return {
      model: agg.model,
      traffic: { ...run.traffic },
      excluded: run.excluded,
      localModels,
      syntheticRows: agg.syntheticRows,
      virtualSamples: agg.virtualSamples,
      incomingComponents: agg.incomingComponents,
      serverSeconds: serverSeconds(run.history),
      federation,
    };
  } finally {
    server.dispose();
    for (const c of clients) c.dispose();
  }
}
