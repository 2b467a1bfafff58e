/** Community-based federated anomaly detection as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm communities`). */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import { COMMUNITY_METHODS } from '../../graph/communities.js';
import { DETECTOR_KINDS } from '../../models/detectors.js';
import { expectResult, parseSaved, savedCount, savedMap, savedNumber, savedPairs, serverState } from '../registry/artifact.js';
import { defineAlgorithm, type CliValues } from '../registry/registry.js';
import { CommunitiesClient } from './client.js';
import { COMMUNITIES_PROTOCOL } from './messages.js';
import { checkClientOptions, checkServerOptions } from './options.js';
import { CommunitiesServer, type Association } from './server.js';

/** Said on stderr wherever OCSVM detectors are exchanged: they carry client rows. */
export const OCSVM_WARNING = "warning: an ocsvm detector carries support vectors, which are rows of its client's training data, to every partner; use --detector gmm (mixture parameters only, optionally with noise) where rows must not leave a client";

const ocsvmWarning = (o: CliValues) => (o.detector === 'ocsvm' ? OCSVM_WARNING : undefined);

const SAVED = v.object({
  communities: v.array(v.array(v.string())),
  membership: savedMap(savedCount()),
  nodes: v.array(v.string()),
  edges: v.array(v.pipe(v.tuple([v.string(), v.string()]), v.transform((e): [string, string] => [e[0], e[1]]))),
  modularity: v.pipe(v.nullable(savedNumber()), v.transform((m) => m ?? NaN)),
  method: v.picklist(COMMUNITY_METHODS),
  decisions: v.array(v.object({ client: v.string(), partner: v.string(), accept: v.boolean() })),
  tests: savedCount(),
});

/** A communities server's state between rounds (CommunitiesServer.saveState); each detector is checked to load on restore. */
const STATE = v.object({
  phase: v.picklist(['fit', 'relay', 'done']),
  detectors: savedPairs(v.string()),
  queue: v.nullable(savedPairs(v.array(v.string()))),
  said: savedPairs(v.array(v.object({ partner: v.string(), accept: v.boolean() }))),
  missed: v.array(v.string()),
});

export const communities = defineAlgorithm({
  name: 'communities',
  protocol: COMMUNITIES_PROTOCOL,
  summary: "community-based federated anomaly detection (Nardi et al.): clients test each other's detectors, the server finds communities",
  wasmFeatures: ['svm', 'nn', 'assignment'],
  server: {
    // checked once here; the server takes the resolved options as they are
    options: (raw) => checkServerOptions(raw),
    create: (options) => new CommunitiesServer(options),
  },
  state: serverState('communities', CommunitiesServer, (options: ConstructorParameters<typeof CommunitiesServer>[0]) => new CommunitiesServer(options), STATE),
  client: {
    options: (raw) => checkClientOptions(raw, 'spec.options'),
    create: ({ id, data, options }) => new CommunitiesClient(id, data, options),
  },
  artifact: {
    save: (a: Association) => {
      expectResult('communities', 'an Association', a, (m) => m !== null && typeof m === 'object' && (m as Association).membership instanceof Map && Array.isArray((m as Association).communities));
      return { communities: a.communities, membership: Object.fromEntries(a.membership), nodes: a.nodes, edges: a.edges, modularity: Number.isFinite(a.modularity) ? a.modularity : null, method: a.method, decisions: a.decisions, tests: a.tests };
    },
    load: (json): Association => {
      const a = parseSaved('communities', SAVED, json);
      for (const [id, k] of a.membership) {
        if (k >= a.communities.length) throw new InvalidParameterError(`a saved communities result is not valid: membership.${id} is ${k}, but there are ${a.communities.length} communities`);
      }
      return a;
    },
  },
  cli: {
    server: {
      options: {
        features: { type: 'int', help: 'the number of features every client has (required)' },
        detector: { type: 'string', default: 'ocsvm', choices: DETECTOR_KINDS, help: "every client's local detector" },
        contamination: { type: 'number', default: 0.1, help: "the detectors' contamination, in (0, 0.5)" },
        q: { type: 'number', default: 0.08, help: 'accept a partner when |in_ji - in_ii| <= q' },
        partners: { type: 'int', help: 'partners each client draws (default: every other client)' },
        method: { type: 'string', default: 'fast-greedy', choices: ['fast-greedy', 'louvain'], help: 'community detection' },
      },
      read: (o, { required, seed }) => ({ nFeatures: required('features'), kind: o.detector, contamination: o.contamination, q: o.q, partners: o.partners, method: o.method, seed }),
      warning: ocsvmWarning,
    },
    client: {
      options: {
        detector: { type: 'string', default: 'ocsvm', choices: DETECTOR_KINDS, help: "this client's local detector (the server's --detector); an ocsvm detector carries rows of this client's data to the others" },
        contamination: { type: 'number', default: 0.1, help: "the detector's contamination, in (0, 0.5) (the server's --contamination)" },
      },
      read: (o) => ({ detector: { kind: o.detector, contamination: o.contamination } }),
      warning: ocsvmWarning,
    },
  },
});
