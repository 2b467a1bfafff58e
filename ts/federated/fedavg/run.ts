/**
 * fedAvg: the one-call form of the FedAvg family (FedAvg, FedProx, SCAFFOLD),
 * in process. For clients elsewhere (worker threads, browsers, an MQTT broker)
 * run a FedAvgServer, FedProxServer or ScaffoldServer with runFederation and
 * FedAvgClients where the data is; fedAvgSimulation wires the same run for
 * another runner (simulateOverMqtt: the clients as MQTT clients of a broker).
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { LIMITS, readArray, optionKeys, readOptions, readRecord, requireInteger, requireOneOf } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy, runSimulation, type Simulation } from '../simulation.js';
import { FedAvgClient } from './client.js';
import { FEDAVG_SERVER_KEYS, FedAvgServer, FedProxServer, ScaffoldServer, type FedAvgAlgorithm, type FedAvgOutcome, type FedAvgServerOptions } from './server.js';

/** One client's rows, and its labels when the network is a classifier. */
export interface FedAvgClientData {
  X: MatrixLike;
  labels?: Int32Array | readonly number[];
}

export interface FedAvgOptions extends FedAvgServerOptions {
  /** 'fedavg' (default), 'fedprox' (needs mu) or 'scaffold' */
  algorithm?: FedAvgAlgorithm;
  /** FedProx's proximal weight */
  mu?: number;
  /** SCAFFOLD's server step eta_g (default 1) */
  serverLearningRate?: number;
  /** C, the share of clients asked each round (default 1), drawn with sampleSeed */
  fraction?: number;
  sampleSeed?: number;
  /** client i's shuffles are seeded with seed + i (default: from each client's id) */
  seed?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** Every option of FedAvgOptions, for readOptions (the compiler checks it is complete). */
const FEDAVG_KEYS = optionKeys<FedAvgOptions>()({ algorithm: true, mu: true, serverLearningRate: true, fraction: true, sampleSeed: true, seed: true, encoding: true, onInvalidClient: true, maxExcludedShare: true, hooks: true, network: true, initialParameters: true, rounds: true, epochs: true, batchSize: true, optimizer: true, weighting: true, aggregation: true, trim: true, earlyStopping: true, evaluate: true });

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
  const options = readOptions(given, FEDAVG_KEYS) as FedAvgOptions;
  const algorithm = requireOneOf('algorithm', options.algorithm ?? 'fedavg', ['fedavg', 'fedprox', 'scaffold'] as const);
  const onInvalid = requireOneOf('onInvalidClient', options.onInvalidClient ?? 'exclude', ['exclude', 'throw'] as const);
  const policy = oneCallPolicy(onInvalid, options.maxExcludedShare, options.hooks);
  const clientData = readArray('data', data, LIMITS.clients) as FedAvgClientData[];
  if (algorithm !== 'fedprox' && options.mu !== undefined) throw new InvalidParameterError(`mu is FedProx's; algorithm is '${algorithm}'`);
  if (algorithm !== 'scaffold' && options.serverLearningRate !== undefined) throw new InvalidParameterError(`serverLearningRate is SCAFFOLD's; algorithm is '${algorithm}'`);
  // the server gets its own options only (its constructor is strict)
  const own = readRecord(options, [...FEDAVG_SERVER_KEYS, ...(algorithm === 'fedprox' ? (['mu'] as const) : algorithm === 'scaffold' ? (['serverLearningRate'] as const) : [])], 'options');
  const server = algorithm === 'fedprox' ? new FedProxServer(own as FedAvgOptions & { mu: number }) : algorithm === 'scaffold' ? new ScaffoldServer(own as FedAvgOptions) : new FedAvgServer(own as FedAvgOptions);
  const seed = options.seed === undefined ? undefined : requireInteger('seed', options.seed, 0, LIMITS.count);
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
      return new FedAvgClient(id, c.X as MatrixLike, { labels: c.labels, seed: seed === undefined ? undefined : seed + i });
    },
    onInvalid === 'throw',
  );
  return {
    server,
    clients,
    encoding: options.encoding,
    run: { ...policy, fraction: options.fraction, sampleSeed: options.sampleSeed, excludedBefore: unborn },
    finish: (run) => {
      const { model, ...federation } = run;
      return { ...model, excluded: run.excluded, federation };
    },
  };
}
