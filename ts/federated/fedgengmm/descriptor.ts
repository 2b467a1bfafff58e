/** FedGenGMM as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm fedgengmm`). */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import { COVARIANCE_TYPES, GaussianMixture } from '../../models/gaussian-mixture.js';
import { expectResult, parseSaved, savedCount, savedModel, serverState } from '../registry/artifact.js';
import { defineAlgorithm } from '../registry/registry.js';
import { DEFAULT_CLIENT_K_RANGE, FedGenGMMClient, type FedGenGMMClientOptions } from './client.js';
import { FEDGENGMM_PROTOCOL } from './messages.js';
import { checkClientOptions, checkServerOptions } from './options.js';
import { FedGenGMMServer, SERVER_STEPS, type Aggregate, type FedGenGMMServerOptions } from './server.js';

/** A saved FedGenGMM result: the global model and how it was made. */
export interface SavedFedGenGMM {
  model: GaussianMixture;
  clients: string[];
  incomingComponents: number;
  syntheticRows: number;
}

const SAVED = v.object({
  model: savedModel((m) => GaussianMixture.fromJSON(m as string)),
  clients: v.array(v.string()),
  incomingComponents: savedCount(),
  syntheticRows: savedCount(),
});

/** A FedGenGMM server's state between rounds (FedGenGMMServer.saveState); the model loads as GaussianMixture.fromJSON checks it. */
const STATE = v.object({
  phase: v.picklist(['collect', 'return', 'done']),
  collectRound: savedCount(),
  outcome: v.nullable(
    v.object({
      model: savedModel((m) => GaussianMixture.fromJSON(m as string)),
      clients: v.array(v.string()),
      incomingComponents: savedCount(),
      syntheticRows: savedCount(),
      virtualSamples: savedCount(),
    }),
  ),
});

export const fedgengmm = defineAlgorithm({
  name: 'fedgengmm',
  protocol: FEDGENGMM_PROTOCOL,
  summary: "one-shot federated Gaussian mixture: clients fit local GMMs (K by BIC), the server fits a global one on rows sampled from them",
  wasmFeatures: ['dem', 'float32'],
  server: {
    // checked once here; the server takes the resolved options as they are
    options: (raw) => checkServerOptions(raw),
    create: (options) => new FedGenGMMServer(options as FedGenGMMServerOptions),
  },
  state: serverState('fedgengmm', FedGenGMMServer, (options: unknown) => new FedGenGMMServer(options as FedGenGMMServerOptions), STATE),
  client: {
    options: (raw) => checkClientOptions(raw),
    create: ({ id, data, options }) => new FedGenGMMClient(id, data, options as FedGenGMMClientOptions),
  },
  artifact: {
    save: (model: Aggregate) => {
      expectResult('fedgengmm', '{ model: GaussianMixture, clients, ... }', model, (m) => m !== null && typeof m === 'object' && (m as Aggregate).model instanceof GaussianMixture);
      return { model: model.model.toJSON(), clients: model.clients, incomingComponents: model.incomingComponents, syntheticRows: model.syntheticRows };
    },
    load: (json): SavedFedGenGMM => parseSaved('fedgengmm', SAVED, json),
    model: (s: SavedFedGenGMM) => s.model,
  },
  cli: {
    server: {
      options: {
        features: { type: 'int', help: 'the number of features every client has (required)' },
        components: { type: 'int', help: 'K of the global model' },
        'k-range': { type: 'range', help: 'choose the global K by BIC in A..B instead of --components' },
        covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'covariance type' },
        h: { type: 'int', default: 100, help: 'synthetic rows per incoming component' },
        'server-step': { type: 'string', default: 'sample', choices: SERVER_STEPS, help: "the global fit: EM on rows sampled from the clients' components (sample) or hierarchical EM on their parameters (hierarchical)" },
        'virtual-samples': { type: 'number', help: "with --server-step hierarchical: the virtual rows the clients' components stand for (default: the rows they reported)" },
      },
      read: (o, { required, seed }) => {
        const range = o['k-range'] as [number, number] | undefined;
        if (range === undefined && o.components === undefined) throw new InvalidParameterError('give --components K or --k-range A..B for the global model');
        return {
          nFeatures: required('features'), nComponents: o.components, kMin: range?.[0], kMax: range?.[1], covarianceType: o.covariance, h: o.h, seed,
          serverStep: o['server-step'], virtualSamples: o['virtual-samples'],
        };
      },
    },
    client: {
      options: {
        'k-range': { type: 'range', help: `choose the local K by BIC in A..B (default ${DEFAULT_CLIENT_K_RANGE.join('..')}, B at most this client's rows)` },
        covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'covariance type of the local model' },
      },
      read: (o, { seed }) => {
        const range = o['k-range'] as [number, number] | undefined;
        return { ...(range ? { kMin: range[0], kMax: range[1] } : {}), covarianceType: o.covariance, seed };
      },
    },
  },
});
