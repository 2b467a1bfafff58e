/**
 * fedAvg: the one-call form of the FedAvg family (FedAvg, FedProx, SCAFFOLD),
 * in process. For clients elsewhere (worker threads, browsers, an MQTT broker)
 * run a FedAvgServer, FedProxServer or ScaffoldServer with runFederation and
 * FedAvgClients where the data is; fedAvgSimulation wires the same run for
 * another runner (simulateOverMqtt: the clients as MQTT clients of a broker).
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { LIMITS, readArray, readRecord } from '../../validate.js';
import type { ExcludedClient } from '../runtime/roles.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy, runSimulation, type Simulation } from '../simulation.js';
import { FedAvgClient } from './client.js';
import { checkServerOptions, fedAvgOptions, fedAvgServerOptions, fedProxServerOptions, scaffoldServerOptions, SERVER_OPTIONS, type FedAvgOptions } from './options.js';
import { FedAvgServer, FedProxServer, ScaffoldServer, type FedAvgOutcome } from './server.js';

/**
 * Client i's seed: seed + i, wrapped below 2^53 so that every seed in the
 * bound gives its clients distinct, exact seeds (unchanged for seed + i < 2^53).
 */
function offsetSeed(seed: number, i: number): number {
  return seed <= Number.MAX_SAFE_INTEGER - i ? seed + i : seed - (Number.MAX_SAFE_INTEGER + 1 - i);
}

/** One client's rows, and its labels when the network is a classifier. */
export interface FedAvgClientData {
  X: MatrixLike;
  labels?: Int32Array | readonly number[];
}

export type { FedAvgOptions } from './options.js';

export interface FedAvgResult extends FedAvgOutcome {
  excluded: ExcludedClient[];
  /** the runtime's account: traffic, per-client bytes, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

export function fedAvg(data: readonly FedAvgClientData[], given: FedAvgOptions): FedAvgResult {
  return runSimulation(fedAvgSimulation(data, given));
}

/** fedAvg wired and not run: for runners other than the in-process one (simulateOverMqtt). */
export function fedAvgSimulation(data: readonly FedAvgClientData[], given: FedAvgOptions): Simulation<FedAvgOutcome, FedAvgResult> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object like { network, algorithm, rounds, epochs, batchSize, optimizer }');
  // read once, its own options checked; the server's are checked by the chosen algorithm's declaration
  const options = fedAvgOptions.check(given);
  const { algorithm, onInvalidClient: onInvalid, seed } = options;
  const policy = oneCallPolicy(onInvalid, options.maxExcludedShare as number | undefined, options.hooks as RunHooks | undefined);
  const clientData = readArray('data', data, LIMITS.clients) as FedAvgClientData[];
  if (algorithm !== 'fedprox' && options.mu !== undefined) throw new InvalidParameterError(`mu is FedProx's; algorithm is '${algorithm}'`);
  if (algorithm !== 'scaffold' && options.serverLearningRate !== undefined) throw new InvalidParameterError(`serverLearningRate is SCAFFOLD's; algorithm is '${algorithm}'`);
  // the server gets its own options only (its declaration is strict)
  const declaration = SERVER_OPTIONS[algorithm];
  const own = Object.fromEntries(declaration.keys.map((k) => [k, (options as Record<string, unknown>)[k]]));
  const server =
    algorithm === 'fedprox'
      ? new FedProxServer(checkServerOptions(fedProxServerOptions, own))
      : algorithm === 'scaffold'
        ? new ScaffoldServer(checkServerOptions(scaffoldServerOptions, own))
        : new FedAvgServer(checkServerOptions(fedAvgServerOptions, own));
  // each client's record read once; one that cannot be read fails as its client (below)
  const records = clientData.map((c, i) => {
    try {
      return readRecord(c, ['X', 'labels'], `data[${i}]`);
    } catch (e) {
      return { error: e };
    }
  });
  // the network's input layer is every client's number of columns
  clientFeatures('data', records.map((r) => ('error' in r ? undefined : r.X) as MatrixLike), { expected: { nFeatures: server.network.sizes[0]!, what: "the network's input width (network.sizes[0])" } });
  const { clients, unborn } = makeClients(
    clientData.length,
    (i, id) => {
      const c = records[i]!;
      if ('error' in c) throw c.error;
      return new FedAvgClient(id, c.X as MatrixLike, { labels: c.labels, seed: seed === undefined ? undefined : offsetSeed(seed, i) });
    },
    onInvalid === 'throw',
  );
  return {
    server,
    clients,
    encoding: options.encoding as FedAvgOptions['encoding'],
    run: { ...policy, fraction: options.fraction as number | undefined, sampleSeed: options.sampleSeed as number | undefined, excludedBefore: unborn, ...(options.privacy === undefined ? {} : { privacy: options.privacy as FedAvgOptions['privacy'] }) },
    finish: (run) => {
      server.dispose();
      const { model, ...federation } = run;
      return { ...model, excluded: run.excluded, federation };
    },
  };
}
