/**
 * FedGenGMM, one-shot federated Gaussian mixtures (Zhang Pettersson, Liang,
 * Andresen): clients fit local mixtures and upload them once; the server fits
 * the global mixture on data sampled from their union. `fedGenGMM` runs a
 * federation in-process through the accounting transport.
 */
import { FedmixError } from '../../errors.js';
import type { MatrixLike } from '../../data/matrix.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import { gmmParams } from '../gmm-params.js';
import { message } from '../message.js';
import { majorityDimension } from '../simulation.js';
import { InProcessTransport, type ExcludedClient, type Traffic } from '../transport.js';
import { GLOBAL_MODEL } from './messages.js';
import { FedGenGMMClient, type FedGenGMMClientOptions } from './client.js';
import { FedGenGMMServer, type FedGenGMMServerOptions } from './server.js';

export { FedGenGMMClient, type FedGenGMMClientOptions } from './client.js';
export { FedGenGMMServer, type FedGenGMMServerOptions, type Aggregate } from './server.js';
export { LOCAL_MODEL, GLOBAL_MODEL, receiveLocalModel, type LocalModelMessage, type LocalModelPayload } from './messages.js';

export interface FedGenGMMOptions {
  /** every client's options, or one per client (clients may differ) */
  client?: FedGenGMMClientOptions | FedGenGMMClientOptions[];
  server: FedGenGMMServerOptions;
  /** keep the clients' local models (for the local-models baseline); default false */
  keepLocalModels?: boolean;
}

export interface FedGenGMMResult {
  model: GaussianMixture;
  traffic: Traffic;
  /** clients that failed to train or whose upload was rejected, with the reason */
  excluded: ExcludedClient[];
  /** the local models, when keepLocalModels (owned by the caller) */
  localModels: { client: string; model: GaussianMixture; nSamples: number }[];
  syntheticRows: number;
  incomingComponents: number;
  /** wall time of the server's part: receiving the uploads and aggregating */
  serverSeconds: number;
}

export function fedGenGMM(clientData: MatrixLike[], options: FedGenGMMOptions): FedGenGMMResult {
  const transport = new InProcessTransport();
  const server = new FedGenGMMServer({ ...options.server, nFeatures: options.server.nFeatures ?? majorityDimension(clientData) });
  const excluded: ExcludedClient[] = [];
  const localModels: FedGenGMMResult['localModels'] = [];
  let serverMs = 0;
  transport.nextRound();
  try {
    clientData.forEach((data, c) => {
      const id = String(c);
      const opts = Array.isArray(options.client) ? options.client[c] ?? {} : options.client ?? {};
      const client = new FedGenGMMClient(id, data, opts);
      try {
        client.train();
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM' || options.server.onInvalidClient === 'throw') throw e;
        excluded.push({ client: id, round: 0, reason: `local training failed: ${e.message}` });
        client.dispose();
        return;
      }
      const wire = transport.up(client.upload());
      const t0 = performance.now();
      const accepted = server.receive(wire);
      serverMs += performance.now() - t0;
      if (accepted && options.keepLocalModels) localModels.push({ client: id, model: client.model, nSamples: client.nSamples });
      else client.dispose();
    });
    const t0 = performance.now();
    const agg = server.aggregate();
    serverMs += performance.now() - t0;
    // the same round: the global model goes back to every client that took part
    const reply = message(GLOBAL_MODEL, 'server', 0, gmmParams(agg.model));
    for (let c = 0; c < agg.clients.length; c++) transport.down(reply);
    return {
      model: agg.model,
      traffic: transport.traffic,
      excluded: [...excluded, ...server.excluded],
      localModels,
      syntheticRows: agg.syntheticRows,
      incomingComponents: agg.incomingComponents,
      serverSeconds: serverMs / 1000,
    };
  } catch (e) {
    for (const l of localModels) l.model.dispose();
    throw e;
  } finally {
    server.dispose();
  }
}
