/**
 * distributedEM: the one-call form of distributed EM, in process (clients and
 * server in this process, every message encoded and decoded on the way). For
 * clients elsewhere (worker threads, an MQTT broker) run a DemServer with
 * runFederation.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidParameterError, restated } from '../../errors.js';
import { LIMITS, isArray, readArray, readOptions } from '../../validate.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type Traffic } from '../runtime/run.js';
import { clientFeatures, oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { DemClient } from './client.js';
import { distributedEMOptions, type DistributedEMOptions } from './options.js';
import { DemServer, type DemInitialization } from './server.js';

export type { DistributedEMOptions } from './options.js';

export interface DistributedEMResult {
  /** the global model (the caller disposes it) */
  model: GaussianMixture;
  /** communication rounds, initialization included: initRounds + emRounds */
  rounds: number;
  /** rounds of the initialization: 0 'separated' or given parameters, 1 'kfed', 2 'subset' */
  initRounds: number;
  /** how the first model was chosen, with the settings used (k-FED's local clusters, grouping and starts after defaults) */
  initialization: DemInitialization;
  /** EM rounds (the paper's Table 4 counts these) */
  emRounds: number;
  /** true when the stopping rule ended the run, false when maxRounds did */
  converged: boolean;
  /** rounds, messages and bytes each way */
  traffic: Traffic;
  /** per EM round, the average of the clients' mean log-likelihoods under the broadcast model */
  history: number[];
  /** clients left out, with the round and the reason */
  excluded: ExcludedClient[];
  /** the runtime's account: bytes per client, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

/** Matrices of the clients' rows, each named in its error. */
function clientMatrices(data: readonly MatrixLike[]): Matrix[] {
  const clientData = isArray('clientData', data) ? readArray('clientData', data, LIMITS.clients) : [];
  if (clientData.length === 0) throw new InvalidParameterError('clientData must be a non-empty array, one data matrix per client');
  return clientData.map((x, i) => {
    try {
      return Matrix.from(x as MatrixLike);
    } catch (e) {
      throw restated(e, (x) => new InvalidDataError(`client-${i}: ${x.message}`));
    }
  });
}

/**
 * Distributed EM for a Gaussian mixture over clients' data (one matrix per
 * client, ids 'client-0', 'client-1', ... in order): the FedGenGMM paper's
 * baseline, with its three initializations. With every client taking part,
 * each EM round equals one iteration of centralized EM on the pooled rows.
 */
export function distributedEM(clientData: readonly MatrixLike[], demOptionsGiven: DistributedEMOptions = {}): DistributedEMResult {
  // read once (the server's values are checked by its declaration once nFeatures is known)
  const options = readOptions(demOptionsGiven, distributedEMOptions.keys) as DistributedEMOptions;
  const policy = oneCallPolicy(options.onInvalidClient, options.maxExcludedShare, options.hooks);
  const matrices = clientMatrices(clientData);
  const { encoding, nFeatures: given, maxExcludedShare: _share, hooks: _hooks, ...demOptions } = options;
  const nFeatures = clientFeatures('clientData', matrices, { expected: given === undefined ? undefined : { nFeatures: given, what: 'nFeatures' }, idOf: (i) => `client-${i}` });
  const clients: DemClient[] = [];
  let server: DemServer | undefined;
  try {
    matrices.forEach((x, i) => clients.push(new DemClient(`client-${i}`, x)));
    server = new DemServer({ ...demOptions, nFeatures });
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding }), policy);
    const { model, ...federation } = run;
    return {
      model,
      rounds: run.rounds,
      initRounds: server.initRounds,
      initialization: server.initialization,
      emRounds: server.emRounds,
      converged: server.converged,
      traffic: { ...run.traffic },
      history: server.history,
      excluded: run.excluded,
      federation,
    };
  } finally {
    server?.dispose();
    for (const c of clients) c.dispose();
  }
}
