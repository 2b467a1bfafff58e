/**
 * Issue 23, item 1, for community association and the FedAvg family: the
 * checks that refuse hostile clients never refuse honest ones. Honest
 * clients on real data (scikit-learn's digits: 1797 rows of 64 pixels, 10
 * classes) under real partitions (IID, Dirichlet 0.1 and 0.3, one class per
 * client, quantity skew down to a client of one row, a client with far fewer
 * rows than features), at the defaults, count their exclusions: none.
 *
 *   communities   the server's checks of a detector (kind, dimension,
 *                 contamination, its parts' lengths and ranges, that it loads)
 *                 and of decisions (the partners sent, each once), and the
 *                 client's of the detectors relayed to it: every kind of
 *                 detector, every partition.
 *   FedAvg        the update's checks (length, epochs, control change) and
 *                 the out-of-scale blame of a non-finite aggregate: FedAvg,
 *                 FedProx and SCAFFOLD (at eta_g = 1 and an extrapolating 3),
 *                 every aggregation rule, an autoencoder and a classifier.
 *
 * The hostile side stays: a client whose parameters take SCAFFOLD's step past
 * single precision is excluded, the round aggregated again without it, and the
 * run counts its rounds right.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { associate, fedAvg, FedAvgClient, init, InProcessTransport, Matrix, partition, runFederationSync, ScaffoldServer, type DetectorKind } from '../ts/index.js';
import type { NetworkSpec } from '../ts/models/network.js';
import { editPayload, Recording } from './helpers.js';
import { loadDigits } from './support/digits.js';

let X: Matrix;
let labels: Int32Array;
/** name -> each client's rows */
let partitions: [string, Int32Array[]][];

beforeAll(async () => {
  await init();
  ({ X, labels } = loadDigits());
  const n = X.nRows;
  const byClass = Array.from({ length: 10 }, (_, c) => Int32Array.from(Array.from(labels).flatMap((l, i) => (l === c ? [i] : []))));
  const iid = partition.iid(n, { clients: 10, seed: 1 }).indices;
  // quantity skew: client sizes from Dir(1, ..., 1); seed 2 deals one client a single row and two 30
  const skew = partition.quantity(labels, { clients: 10, alpha: 10, imbalance: 'clients', seed: 2 }).indices;
  // far fewer rows than features: 8 rows of 64 pixels beside nine clients of the rest
  const few = [iid[0]!.slice(0, 8), ...iid.slice(1)];
  partitions = [
    ['IID', iid],
    ['Dirichlet 0.1', partition.dirichlet(labels, { clients: 10, alpha: 0.1, seed: 1 }).indices],
    ['Dirichlet 0.3', partition.dirichlet(labels, { clients: 10, alpha: 0.3, seed: 1 }).indices],
    ['one class per client', byClass],
    ['quantity skew', skew],
    ['8 rows for 64 features', few],
  ];
  expect(Math.min(...skew.map((r) => r.length))).toBe(1);
}, 60_000);

const rowsOf = (idx: Int32Array) => X.selectRows(idx);

describe('community association: honest clients are never excluded', () => {
  const kinds: (DetectorKind | 'default')[] = ['default', 'gmm', 'autoencoder'];
  test.each(kinds)('%s detectors, every partition', (kind) => {
    const counts: string[] = [];
    for (const [name, parts] of partitions) {
      // a GMM needs 2 rows: the one-row client of the quantity skew cannot fit one (a typed error when made, not a check of the relay)
      const clients = kind === 'gmm' ? parts.filter((p) => p.length >= 2) : parts;
      const r = associate(clients.map(rowsOf), kind === 'default' ? {} : { detector: { kind } });
      counts.push(`${name}: ${r.excluded.length} excluded, ${r.communities.length} communities, ${r.edges.length} links`);
      expect(r.excluded, `${kind}, ${name}`).toEqual([]);
      expect(r.nodes).toHaveLength(clients.length);
      expect(r.tests).toBe(clients.length * (clients.length - 1));
    }
    console.log(`${kind}:\n  ${counts.join('\n  ')}`);
  });
});

describe('the FedAvg family: honest clients are never excluded nor blamed', () => {
  const AE: NetworkSpec = { sizes: [64, 32, 64], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 };
  const CLS: NetworkSpec = { sizes: [64, 32, 10], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 };
  const settings: [string, Record<string, unknown>][] = [
    ['FedAvg (defaults)', {}],
    ['FedAvg, Adam, early stopping on held-out rows', { optimizer: { name: 'adam', learningRate: 1e-3 }, epochs: 5, earlyStopping: { monitor: 'validation-loss' } }],
    ['FedAvg, Adam, early stopping on the separation (autoencoder only)', { optimizer: { name: 'adam', learningRate: 1e-3 }, epochs: 5, earlyStopping: { monitor: 'separation' } }],
    ['FedAvg, median', { aggregation: 'median' }],
    ['FedAvg, trimmed mean', { aggregation: 'trimmed-mean' }],
    ['FedProx', { algorithm: 'fedprox', mu: 0.01 }],
    ['SCAFFOLD', { algorithm: 'scaffold' }],
    ['SCAFFOLD, eta_g = 3', { algorithm: 'scaffold', serverLearningRate: 3 }],
  ];
  test.each(settings)('%s: an autoencoder and a classifier, every partition', (_name, extra) => {
    for (const [name, parts] of partitions) {
      for (const network of 'earlyStopping' in extra && (extra.earlyStopping as { monitor: string }).monitor === 'separation' ? [AE] : [AE, CLS]) {
        const data = parts.map((idx) => ({ X: rowsOf(idx), labels: network === CLS ? Int32Array.from(idx, (i) => labels[i]!) : undefined }));
        const r = fedAvg(data, { network, rounds: 3, seed: 1, ...extra });
        expect(r.excluded, `${name}, ${network === AE ? 'autoencoder' : 'classifier'}`).toEqual([]);
        expect(r.history.map((h) => [h.round, h.clients])).toEqual([1, 2, 3].map((t) => [t, parts.length]));
        expect(r.parameters.every(Number.isFinite)).toBe(true);
      }
    }
  });

  test('a client whose parameters take SCAFFOLD\'s step past single precision is excluded; the others run every round', () => {
    const parts = partitions[0]![1].slice(0, 4).map(rowsOf);
    const options = { network: AE, rounds: 3, serverLearningRate: 5, batchSize: 32 };
    const honest = () => parts.slice(0, 3).map((x, i) => new FedAvgClient(String(i), x, { seed: i }));
    const clean = runFederationSync(new ScaffoldServer(options), new InProcessTransport(honest()));
    // 3e38 is a finite f32: the reply passes every check; the mean of four is 7.5e37, five times that is past f32's range
    const hostile = new Recording(new FedAvgClient('3', parts[3]!, { seed: 3 }), editPayload((p) => p.parameters.fill(3e38)));
    const run = runFederationSync(new ScaffoldServer(options), new InProcessTransport([...honest(), hostile]));
    expect(run.excluded.map((e) => e.client)).toEqual(['3']);
    expect(run.excluded[0]!.reason).toMatch(/out of scale|past single precision/);
    // the round the blame happened in is aggregated again without it and counted once
    expect(run.model.history.map((h) => [h.round, h.clients])).toEqual([[1, 3], [2, 3], [3, 3]]);
    expect(run.model.rounds).toBe(3);
    expect(run.model.parameters).toEqual(clean.model.parameters);
  });
});
