/**
 * Issue 23, item 4: the community pipeline at its defaults trains useful
 * anomaly detectors. scikit-learn's digits, the paper's partition with p = 3
 * clients per class (30 clients of 43 rows, 10% from one other class), OCSVM
 * association at q = 0.08, every autoencoder at the library's defaults. Up to
 * issue 23 the defaults (10 rounds of one local epoch: about 20 optimizer
 * steps per client) gave local 0.71, community 0.74 and ideal 0.76 here
 * (seed 0); the central reference (one autoencoder per class on its clients'
 * rows pooled) reaches 0.95.
 */
import { beforeAll, expect, test } from 'vitest';
import { init, partition, Rng, type Matrix } from '../ts/index.js';
import { runCommunityExperiment, trainCommunities } from '../ts/experiments/index.js';
import { loadDigits } from './support/digits.js';

let data: { train: { X: Matrix; labels: number[] }; test: { X: Matrix; labels: number[] } };

beforeAll(async () => {
  await init();
  const { X, labels } = loadDigits();
  // an 80/20 split, seeded
  const rng = new Rng(0);
  const order = rng.permutation(X.nRows);
  rng.dispose();
  const test = order.subarray(0, Math.round(0.2 * X.nRows));
  const train = order.subarray(test.length);
  data = {
    train: { X: X.selectRows(train), labels: Array.from(train, (i) => labels[i]!) },
    test: { X: X.selectRows(test), labels: Array.from(test, (i) => labels[i]!) },
  };
});

test('digits, p = 3, the defaults: local, community and ideal detectors are useful, close to the central one', () => {
  const r = runCommunityExperiment(data, { clientsPerClass: 3, seed: 0 });
  const run = r.runs[0]!;
  const a = run.associations[0]!;
  // the central reference: each client scored by one autoencoder fitted, at the defaults, to its ideal group's rows pooled
  const part = partition.contaminated(data.train.labels, { clientsPerClass: 3, contamination: 0.1, testLabels: data.test.labels, seed: 0 });
  const pooled = new Map<number, number[]>();
  part.indices.forEach((rows, i) => pooled.set(part.inlierClass[i] as number, [...(pooled.get(part.inlierClass[i] as number) ?? []), ...rows]));
  const central = trainCommunities(
    part.indices.map((_, i) => ({
      id: String(i),
      X: data.train.X.selectRows(pooled.get(part.inlierClass[i] as number)!),
      test: { X: data.test.X.selectRows(part.testIndices![i]!), outlier: Array.from(part.testIndices![i]!, (t) => (data.test.labels[t] === part.inlierClass[i] ? 0 : 1)) },
    })),
    'local',
    { seed: 0, earlyStopping: { monitor: 'separation', contamination: 0.1 } },
  );
  const [local, community, ideal] = [run.local.auc.mean, a.community.auc.mean, run.idealRun.auc.mean];
  console.log(
    `digits p = 3 at the defaults: local ${local.toFixed(3)}, community ${community.toFixed(3)}, ideal ${ideal.toFixed(3)}, central ${central.auc.mean.toFixed(3)}; ` +
      `epochs per client: local ${run.local.epochs!.mean.toFixed(1)}, community ${a.community.epochs!.mean.toFixed(1)}, ideal ${run.idealRun.epochs!.mean.toFixed(1)}`,
  );
  expect(run.clients).toBe(30);
  expect(a.excluded).toEqual([]);
  expect(Math.min(local, community, ideal)).toBeGreaterThan(0.85);
  expect(ideal).toBeGreaterThan(central.auc.mean - 0.06);
  // early stopping ran: fewer epochs than the 10 rounds x 10 allowed, and visible in the result
  for (const e of [run.local.epochs!, a.community.epochs!, run.idealRun.epochs!]) {
    expect(e.mean).toBeGreaterThan(10);
    expect(e.mean).toBeLessThan(100);
  }
});
