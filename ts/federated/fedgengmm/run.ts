/**
 * fedGenGMM: the one-call form of FedGenGMM, in process. For clients elsewhere
 * (worker threads, an MQTT broker) run a FedGenGMMServer with runFederation.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { clientSeed } from '../../random.js';
import { LIMITS, isArray, readArray, readOptions } from '../../validate.js';
import type { MatrixLike } from '../../data/matrix.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type RoundRecord, type RunHooks, type Traffic } from '../runtime/run.js';
import { clientFeatures, oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { FedGenGMMClient } from './client.js';
import { checkClientOptions, checkServerOptions, clientOptions as resolvedClientOptions, fedGenGMMOptions, serverOptions, type FedGenGMMOptions, type FedGenGMMServerOptions } from './options.js';
import { FedGenGMMServer } from './server.js';

export type { FedGenGMMOptions } from './options.js';

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

/** A client's options when the caller's list has none for it. */
const DEFAULT_CLIENT = checkClientOptions({});

/** The server's share of a run's wall time: configuring its requests, judging the replies, aggregating. */
export function serverSeconds(history: readonly RoundRecord[]): number {
  return history.reduce((t, r) => t + r.ms.configure + r.ms.accept + r.ms.aggregate, 0) / 1000;
}

export function fedGenGMM(data: MatrixLike[], given: FedGenGMMOptions): FedGenGMMResult {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be an object with client and server, got ${formatValue(given)}`);
  // read once: the caller's objects are not read again (getters, Proxies)
  const options = fedGenGMMOptions.check(given);
  const serverGiven = readOptions(options.server as FedGenGMMOptions['server'], serverOptions.keys, 'options.server');
  const clientGiven = options.client !== undefined && isArray('options.client', options.client) ? readArray('options.client', options.client) : options.client;
  // each client's options checked once, named where the caller wrote them
  const clientOptions = Array.isArray(clientGiven)
    ? clientGiven.map((c, i) => checkClientOptions(c, `options.client[${i}]`))
    : checkClientOptions(clientGiven, 'options.client');
  const policy = oneCallPolicy(serverGiven.onInvalidClient, options.maxExcludedShare as number | undefined, options.hooks as RunHooks | undefined);
  const clientData = readArray('clientData', data, LIMITS.clients) as MatrixLike[];
  const nGiven = serverGiven.nFeatures;
  const nFeatures = clientFeatures('clientData', clientData, { expected: nGiven === undefined ? undefined : { nFeatures: nGiven, what: 'server.nFeatures' } });
  const serverResolved = checkServerOptions({ ...serverGiven, nFeatures });
  // a declared range bounds variances by the server's regCovar: a client regularizing more would be refused for it, honestly
  if (serverResolved.featureRange !== undefined) {
    const serverReg = serverResolved.regCovar;
    clientData.forEach((_, i) => {
      const reg = (Array.isArray(clientOptions) ? clientOptions[i] ?? DEFAULT_CLIENT : clientOptions).regCovar;
      if (reg > serverReg) {
        throw new InvalidParameterError(
          `options.client${Array.isArray(clientOptions) ? `[${i}]` : ''}.regCovar is ${reg}, above server.regCovar ${serverReg}: with a featureRange the server bounds each variance by (max - min)^2 / 4 + its regCovar, so give the server at least the clients' regCovar`,
        );
      }
    });
  }
  // resolved options are taken as they are (their type, with the range read, is the server's own)
  const server = new FedGenGMMServer(serverResolved as unknown as FedGenGMMServerOptions);
  // the run's seed, from which clients without their own derive theirs
  const runSeed = serverResolved.seed;
  const clients: FedGenGMMClient[] = [];
  try {
    clientData.forEach((data, c) => {
      const opts = Array.isArray(clientOptions) ? clientOptions[c] ?? DEFAULT_CLIENT : clientOptions;
      const id = String(c);
      const seed = opts.seed ?? (runSeed === undefined ? undefined : clientSeed(runSeed, id));
      clients.push(new FedGenGMMClient(id, data, seed === opts.seed ? opts : resolvedClientOptions.trust({ ...opts, seed })));
    });
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding: options.encoding as FedGenGMMOptions['encoding'] }), policy);
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
