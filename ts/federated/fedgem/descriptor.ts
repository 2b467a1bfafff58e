/** FedGEM as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm fedgem`). */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import { expectResult, parseSaved, savedCount, savedFloats, savedIndices, savedMap, savedNumber, savedOrNaN, savedPairs, serverState } from '../registry/artifact.js';
import { defineAlgorithm } from '../registry/registry.js';
import { FedGEMClient } from './client.js';
import { FEDGEM_PROTOCOL } from './messages.js';
import { checkClientOptions, checkServerOptions } from './options.js';
import { FedGEMServer, PHI_GRID, type FedGEMOutcome } from './server.js';

function varianceOption(text: string): number | 'estimate' | 'clients' {
  if (text === 'estimate' || text === 'clients') return text;
  const v = Number(text);
  if (text.trim() === '' || !(v > 0) || !Number.isFinite(v)) throw new InvalidParameterError(`--variance takes a positive number, "estimate" or "clients", got "${text}"`);
  return v;
}

function phiOption(text: string): number | number[] {
  if (text === 'tune') return [...PHI_GRID];
  const values = text.split(',').map((t) => Number(t.trim()));
  if (values.some((v) => !(v > 0) || !Number.isFinite(v))) throw new InvalidParameterError(`--phi takes a positive number, a comma-separated list or "tune", got "${text}"`);
  return values.length === 1 ? values[0]! : values;
}

const SAVED = v.object({
  estimatedK: savedCount(),
  separationJoins: savedCount(),
  separation: v.optional(savedNumber()),
  uncounted: savedCount(),
  phi: savedNumber(),
  globalCenters: savedFloats(),
  memberships: savedMap(savedIndices()),
  phiScores: v.optional(v.array(v.object({ phi: savedNumber(), score: savedNumber(), standardError: savedNumber(), estimatedK: savedCount() }))),
  varianceEstimate: v.optional(v.object({ variance: savedNumber(), sumSquares: savedNumber(), degreesOfFreedom: savedNumber(), clients: v.array(v.string()) })),
});

/** A saved FedGEM result: the outcome less the clients' radii. */
export type SavedFedGEM = Omit<FedGEMOutcome, 'radii'>;

const varianceEstimate = () => v.object({ variance: savedNumber(), sumSquares: savedNumber(), degreesOfFreedom: savedNumber(), clients: v.array(v.string()) });
const components = () =>
  v.object({ client: v.string(), k: v.pipe(savedCount(), v.minValue(1)), centers: savedFloats(), radii: v.optional(savedFloats()), counts: savedFloats(), nSamples: savedCount() });

/** A FedGEM server's state between rounds (FedGEMServer.saveState). */
const STATE = v.object({
  phase: v.picklist(['spread', 'train', 'final', 'tune', 'result', 'done']),
  variance: v.nullable(v.pipe(savedNumber(), v.gtValue(0))),
  varianceEstimate: v.nullable(varianceEstimate()),
  t: savedCount(),
  pending: savedPairs(savedFloats()),
  finals: v.array(components()),
  silhouettes: savedPairs(v.object({ values: v.array(v.nullable(savedNumber())), nValidation: savedCount() })),
  offered: v.array(v.object({ phi: savedNumber(), estimatedK: savedCount(), centers: savedFloats() })),
  outcome: v.nullable(
    v.object({
      phi: v.pipe(savedNumber(), v.gtValue(0)),
      estimatedK: savedCount(),
      globalCenters: savedFloats(),
      memberships: savedPairs(savedIndices()),
      radii: savedPairs(savedNumber()),
      separationJoins: savedCount(),
      separation: v.optional(savedNumber()),
      uncounted: savedCount(),
      phiScores: v.optional(v.array(v.object({ phi: savedNumber(), score: savedOrNaN(), standardError: savedOrNaN(), estimatedK: savedCount() }))),
      varianceEstimate: v.pipe(v.nullable(varianceEstimate()), v.transform((x) => x ?? undefined)),
    }),
  ),
  lastRound: savedCount(),
  history: v.array(v.object({ round: savedCount(), clients: savedCount(), components: savedCount(), overlaps: savedCount(), maxRadius: savedNumber() })),
});

export const fedgem = defineAlgorithm({
  name: 'fedgem',
  protocol: FEDGEM_PROTOCOL,
  summary: 'federated clustering with an unknown number of clusters: collaborative EM on balls, merged into super-clusters',
  wasmFeatures: ['fedgem'],
  server: {
    // checked once here; the roles take the resolved options as they are
    options: (raw) => checkServerOptions(raw),
    create: (options) => new FedGEMServer(options),
  },
  state: serverState('fedgem', FedGEMServer, (options: ConstructorParameters<typeof FedGEMServer>[0]) => new FedGEMServer(options), STATE),
  client: {
    options: (raw) => checkClientOptions(raw),
    create: ({ id, data, options, validation }) => new FedGEMClient(id, data, options, validation),
  },
  artifact: {
    save: (o: FedGEMOutcome) => {
      expectResult('fedgem', 'a FedGEM outcome', o, (m) => m !== null && typeof m === 'object');
      return {
        estimatedK: o.estimatedK,
        // what the separation step joined, and below which distance; components of fewer than two rows not counted
        separationJoins: o.separationJoins,
        separation: o.separation,
        uncounted: o.uncounted,
        phi: o.phi,
        globalCenters: Array.from(o.globalCenters),
        memberships: Object.fromEntries([...o.memberships].map(([id, m]) => [id, Array.from(m)])),
        phiScores: o.phiScores,
        // sigma^2 as the server estimated it (absent when the variance was given)
        varianceEstimate: o.varianceEstimate,
      };
    },
    load: (json): SavedFedGEM => {
      const s = parseSaved('fedgem', SAVED, json);
      const d = s.estimatedK === 0 ? 0 : s.globalCenters.length / s.estimatedK;
      if (!Number.isInteger(d)) throw new InvalidParameterError(`a saved fedgem result is not valid: globalCenters has ${s.globalCenters.length} values, not estimatedK (${s.estimatedK}) rows`);
      for (const [id, m] of s.memberships) {
        const bad = m.findIndex((k) => k >= s.estimatedK);
        if (bad >= 0) throw new InvalidParameterError(`a saved fedgem result is not valid: memberships.${id}[${bad}] is ${m[bad]}, not a super-cluster below estimatedK (${s.estimatedK})`);
      }
      return s;
    },
  },
  cli: {
    server: {
      options: {
        features: { type: 'int', help: 'the number of features every client has (required)' },
        tol: { type: 'number', help: 'stop when every radius is below it' },
        rounds: { type: 'int', help: 'communication rounds (default 10)' },
        phi: { type: 'string', default: '1', help: 'the final-radius hyperparameter, a comma-separated list, or "tune"' },
        variance: { type: 'string', default: 'estimate', help: "sigma^2 for the clients without their own --variance: estimate (from the clients' within-cluster spreads), a number, or clients (none sent)" },
        separation: { type: 'string', default: 'on', choices: ['on', 'off'], help: "after the paper's merge, join super-clusters closer than the closest two clusters one client holds apart (off: the paper's merge alone)" },
      },
      read: (o, { required }) => ({ nFeatures: required('features'), rounds: o.rounds, phi: phiOption(String(o.phi)), tol: o.tol, variance: varianceOption(String(o.variance)), separation: o.separation !== 'off' }),
    },
    client: {
      options: {
        validation: { type: 'string', help: 'CSV of rows that score the phi candidates (same columns)' },
        components: { type: 'int', help: "K_c, the clusters in this client's data (required)" },
        variance: { type: 'number', help: "the clusters' known variance sigma^2 (default: the server's, by default its federated estimate)" },
        'local-steps': { type: 'int', default: 1, help: 'EM steps per round' },
      },
      read: (o, { required, seed }) => ({ nComponents: required('components'), variance: o.variance, localSteps: o['local-steps'], seed }),
    },
  },
});
