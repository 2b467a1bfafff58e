/** Distributed EM as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm dem`). */
import { COVARIANCE_TYPES, GaussianMixture } from '../../models/gaussian-mixture.js';
import * as v from 'valibot';
import { expectResult, savedCount, savedModel, savedFloats, savedNumber, savedPairs, savedRng, serverState } from '../registry/artifact.js';
import { defineAlgorithm } from '../registry/registry.js';
import { DemClient } from './client.js';
import { DEM_PROTOCOL } from './messages.js';
import { checkClientOptions, checkServerOptions } from './options.js';
import { DEM_INITS, DemServer, type DemServerOptions } from './server.js';

/** A DEM server's state between rounds (DemServer.saveState); the model loads as GaussianMixture.fromJSON checks it. */
const STATE = v.object({
  phase: v.picklist(['count', 'subset', 'kfed', 'em', 'done']),
  initRounds: savedCount(),
  emRounds: savedCount(),
  model: v.nullable(savedModel((m) => GaussianMixture.fromJSON(m as string))),
  history: v.array(savedNumber()),
  converged: v.boolean(),
  rowsOf: savedPairs(savedCount()),
  lastMeans: savedPairs(savedNumber()),
  summaryShift: v.nullable(savedFloats()),
  summaries: savedPairs(v.object({ absMax: savedFloats(), sum: v.optional(savedFloats()), scatter: v.optional(savedFloats()) })),
  quotas: savedPairs(savedCount()),
  ownSeed: v.pipe(savedCount(), v.maxValue(2 ** 32 - 1)),
  rng: savedRng(),
});

export const dem = defineAlgorithm({
  name: 'dem',
  protocol: DEM_PROTOCOL,
  summary: 'distributed EM for a Gaussian mixture: clients send sufficient statistics each round (k-FED, subset or separated start)',
  wasmFeatures: ['dem'],
  server: {
    // checked once here; the server takes the resolved options as they are
    options: (raw) => checkServerOptions(raw),
    create: (options) => new DemServer(options as DemServerOptions),
  },
  state: serverState('dem', DemServer, (options: unknown) => new DemServer(options as DemServerOptions), STATE),
  client: {
    // a DEM client has none: anything given is a mistake
    options: (raw) => checkClientOptions(raw),
    create: ({ id, data }) => new DemClient(id, data),
  },
  artifact: {
    save: (model: GaussianMixture) => {
      expectResult('dem', 'a GaussianMixture', model, (m) => m instanceof GaussianMixture);
      return model.toJSON();
    },
    load: (json) => GaussianMixture.fromJSON(json as string),
    model: (m: GaussianMixture) => m,
  },
  cli: {
    server: {
      options: {
        features: { type: 'int', help: 'the number of features every client has (required)' },
        components: { type: 'int', help: 'K of the global model' },
        covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'covariance type' },
        init: { type: 'string', default: 'kfed', choices: DEM_INITS, help: 'how the first model is chosen' },
        'kfed-local-clusters': { type: 'int', help: 'with --init kfed: k-means clusters per client (default --components; the k-FED paper takes ceil(sqrt(K)))' },
        'kfed-grouping': { type: 'string', default: 'kmeans', choices: ['kmeans', 'seed-device'], help: "with --init kfed: the server groups the local centers by weighted k-means, or as the paper (seed-device)" },
        'kfed-starts': { type: 'int', default: 10, help: 'with --kfed-grouping kmeans: k-means runs, the least cost kept' },
        'max-rounds': { type: 'int', default: 100, help: 'at most this many EM rounds' },
        tol: { type: 'number', help: 'stop when the average log-likelihood moves less (default 1e-3)' },
      },
      read: (o, { required, seed }) => ({ nFeatures: required('features'), nComponents: required('components'), covarianceType: o.covariance, init: o.init, kfedLocalClusters: o['kfed-local-clusters'], kfedGrouping: o['kfed-grouping'], kfedStarts: o['kfed-starts'], maxRounds: o['max-rounds'], tol: o.tol, seed }),
    },
  },
});
