/**
 * Runs distributed EM in process: clients and server exchange every message
 * through an InProcessTransport, which encodes and decodes it and counts
 * rounds and bytes each way.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { FedmixError, InvalidDataError, InvalidParameterError } from '../../errors.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import { majorityDimension } from '../simulation.js';
import { collectReplies, InProcessTransport, type Traffic } from '../transport.js';
import { DemClient, type DemClientLike } from './client.js';
import { DemServer, type DemOptions } from './server.js';
import type { ExcludedClient } from '../transport.js';

/**
 * Drives `server` and `clients` until the server is done. A client that throws
 * a FedmixError while answering (it cannot use the server's message, or its
 * reply cannot be encoded, e.g. NaN) is reported to the server as failed, which
 * excludes it or throws as its options say.
 */
export function runDem(server: DemServer, clients: readonly DemClientLike[], transport: InProcessTransport = new InProcessTransport()): void {
  const byId = new Map(clients.map((c) => [c.id, c]));
  while (!server.done) {
    const requests = server.requests();
    transport.nextRound();
    const replies = collectReplies(requests, byId, transport);
    server.receive(replies);
  }
}

export interface DistributedEMOptions extends DemOptions {
  /** features of the federation (default: the first client's column count) */
  nFeatures?: number;
}

export interface DistributedEMResult {
  /** the global model (the caller disposes it) */
  model: GaussianMixture;
  /** communication rounds, initialization included: initRounds + emRounds */
  rounds: number;
  /** rounds of the initialization: 0 'separated' or given parameters, 1 'kfed', 2 'subset' */
  initRounds: number;
  /** EM rounds (the paper's Table 4 counts these) */
  emRounds: number;
  /** true when the stopping rule ended the run, false when maxRounds did */
  converged: boolean;
  /** rounds, messages and bytes (UTF-8 JSON) each way */
  traffic: Traffic;
  /** per EM round, the average of the clients' mean log-likelihoods under the broadcast model */
  history: number[];
  /** clients left out, with the round and the reason */
  excluded: ExcludedClient[];
}

/**
 * Distributed EM for a Gaussian mixture over clients' data (one matrix per
 * client, ids 'client-0', 'client-1', ... in order): the FedGenGMM paper's
 * baseline, with its three initializations. With every client taking part,
 * each EM round equals one iteration of centralized EM on the pooled rows.
 */
export function distributedEM(clientData: readonly MatrixLike[], options: DistributedEMOptions = {}): DistributedEMResult {
  if (!Array.isArray(clientData) || clientData.length === 0) throw new InvalidParameterError('clientData must be a non-empty array, one data matrix per client');
  const matrices = clientData.map((x, i) => {
    try {
      return Matrix.from(x);
    } catch (e) {
      if (e instanceof FedmixError) throw new InvalidDataError(`client-${i}: ${e.message}`);
      throw e;
    }
  });
  const nFeatures = options.nFeatures ?? majorityDimension(matrices)!;
  const clients: DemClient[] = [];
  let server: DemServer | undefined;
  try {
    matrices.forEach((x, i) => clients.push(new DemClient(`client-${i}`, x)));
    server = new DemServer(
      clients.map((c) => c.id),
      { ...options, nFeatures },
    );
    const transport = new InProcessTransport();
    runDem(server, clients, transport);
    return {
      model: server.takeModel(),
      rounds: server.rounds,
      initRounds: server.initRounds,
      emRounds: server.emRounds,
      converged: server.converged,
      traffic: { ...transport.traffic },
      history: server.history,
      excluded: server.excluded,
    };
  } finally {
    server?.dispose();
    for (const c of clients) c.dispose();
  }
}
