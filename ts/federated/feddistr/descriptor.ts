/** FedDistr as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm feddistr`). */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import { expectResult, parseSaved, savedCount, savedFloats, savedIndices, savedMap, savedNumber, savedPairs, serverState } from '../registry/artifact.js';
import { defineAlgorithm } from '../registry/registry.js';
import { FedDistrClient } from './client.js';
import { FEDDISTR_PROTOCOL } from './messages.js';
import { checkServerOptions, clientOptions, specOptions } from './options.js';
import { FedDistrServer, type FedDistrOutcome } from './server.js';

/** A cost saved as JSON: a number, or null where it was not finite. */
const savedCost = () => v.pipe(v.nullable(v.number()), v.transform((x) => x ?? NaN));
const member = () => v.object({ client: v.string(), index: savedCount() });

const SAVED = v.object({
  estimatedBaseDistributions: savedCount(),
  uploaded: savedCount(),
  threshold: v.optional(savedNumber()),
  cost: v.picklist(['wasserstein', 'bhattacharyya']),
  covariance: v.picklist(['full', 'diagonal']),
  bases: v.array(v.object({ label: v.pipe(savedNumber(), v.integer()), count: savedCount(), weight: savedNumber(), mean: savedFloats(), covariance: savedFloats(), members: v.array(member()) })),
  membership: savedMap(savedIndices()),
  pairs: v.array(v.object({ a: member(), b: member(), cost: savedCost(), bound: savedCost(), parallel: v.boolean(), joined: v.boolean() })),
});

/** A FedDistr server's state between rounds (FedDistrServer.saveState): the consolidation as the artifact holds it, by client in pairs. */
const STATE = v.object({
  phase: v.picklist(['describe', 'result', 'done']),
  outcome: v.nullable(v.object({ ...v.omit(SAVED, ['membership']).entries, membership: savedPairs(savedIndices()) })),
});

export const feddistr = defineAlgorithm({
  name: 'feddistr',
  protocol: FEDDISTR_PROTOCOL,
  summary: "one-shot distribution disentangling: clients upload per-label base distributions, the server matches them (Hungarian) into a global set",
  wasmFeatures: ['assignment', 'nn'],
  server: {
    // checked once here; the server takes the resolved options as they are
    options: (raw) => checkServerOptions(raw),
    create: (options) => new FedDistrServer(options),
  },
  state: serverState('feddistr', FedDistrServer, (options: ConstructorParameters<typeof FedDistrServer>[0]) => new FedDistrServer(options), STATE),
  client: {
    options: (raw) => specOptions.check(raw, 'spec.options'),
    create: ({ id, data, labels, options }) => {
      if (labels === undefined) throw new InvalidParameterError('a FedDistr client needs labels: the task label of every row');
      // the labels come with the data (the client checks them against its rows); the options were checked above
      return new FedDistrClient(id, data, clientOptions.trust({ ...options, labels }));
    },
  },
  artifact: {
    save: (o: FedDistrOutcome) => {
      expectResult('feddistr', 'a FedDistr outcome { bases, membership, ... }', o, (m) => m !== null && typeof m === 'object' && Array.isArray((m as FedDistrOutcome).bases) && (m as FedDistrOutcome).membership instanceof Map);
      return {
        estimatedBaseDistributions: o.estimatedBaseDistributions,
        uploaded: o.uploaded,
        threshold: o.threshold,
        cost: o.cost,
        covariance: o.covariance,
        bases: o.bases.map((b) => ({ label: b.label, count: b.count, weight: b.weight, mean: Array.from(b.mean), covariance: Array.from(b.covariance), members: b.members })),
        membership: Object.fromEntries([...o.membership].map(([id, m]) => [id, Array.from(m)])),
        pairs: o.pairs,
      };
    },
    load: (json): FedDistrOutcome => {
      const o = parseSaved('feddistr', SAVED, json);
      o.bases.forEach((b, i) => {
        const d = b.mean.length;
        if (b.covariance.length !== (o.covariance === 'full' ? d * d : d)) {
          throw new InvalidParameterError(`a saved feddistr result is not valid: bases[${i}].covariance has ${b.covariance.length} values; a ${o.covariance} covariance in ${d} dimensions has ${o.covariance === 'full' ? d * d : d}`);
        }
      });
      return o;
    },
  },
  cli: {
    server: {
      options: {
        features: { type: 'int', help: 'the number of features every client has (required)' },
        'k-range': { type: 'range', help: 'the base distributions per task label, chosen by BIC in A..B (default 1..5)' },
      },
      // the identity encoder over --features columns; the base distributions per task label in --k-range
      read: (o, { required, seed }) => {
        const range = o['k-range'] as [number, number] | undefined;
        return { dimension: required('features'), kMin: range?.[0], kMax: range?.[1], seed };
      },
    },
    client: {
      options: { label: { type: 'string', help: 'the task labels (left out of the features)' } },
      read: (_o, { seed }) => ({ seed }),
    },
  },
});
