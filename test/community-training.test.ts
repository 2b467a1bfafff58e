/**
 * Per-community federated anomaly detection on real Fashion-MNIST rows: a
 * small partition built here with the paper's rule (3 inlier classes x 3
 * clients, 200 training rows each of which 10% from one outlier class that
 * circulates through the other inlier classes, test sets of 100 rows at the
 * same ratio), trained per group: the ideal groups beat local training, a
 * group of one is local training bit for bit, FedGenGMM per group scores; the
 * evaluation tables on hand-built cases; bad input gives typed errors.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { Autoencoder, init, InvalidDataError, InvalidParameterError, Matrix } from '../ts/index.js';
import {
  aucByClient,
  communityMembership,
  communityRandIndex,
  formatCommunityTables,
  groupsByClass,
  mergedCommunityAuc,
  trainCommunities,
  type CommunityClient,
  type CommunityTrainingResult,
} from '../ts/experiments/index.js';
import { loadFashionMnist } from '../ts/node.js';

const INLIER_CLASSES = [0, 1, 7];
const PER_CLASS = 3;
const TRAIN_ROWS = 200;
const TEST_ROWS = 100;
const CONTAMINATION = 0.1;
/**
 * One local epoch per round, no early stopping (the training before issue 23's defaults). At the
 * defaults (up to 10 epochs a round, early stopping on the separation) local training gains
 * (0.918) and the ideal groups lose (0.864): on these 784 pixels longer training learns to
 * reconstruct the 10% outliers too (E = 5 without early stopping: local 0.731, ideal 0.847).
 */
const TRAINING = { seed: 1, epochs: 1, earlyStopping: 'none' } as const;

let clients: CommunityClient[];
let inlierOf: Record<string, number>;
let ideal: string[][];
let local: CommunityTrainingResult;
let idealRun: CommunityTrainingResult;

/** Row indices of each class, in file order (a pool consumed front to back: every row used once). */
function pools(labels: Int32Array): Map<number, number[]> {
  const out = new Map<number, number[]>();
  labels.forEach((c, i) => {
    const p = out.get(c);
    if (p) p.push(i);
    else out.set(c, [i]);
  });
  return out;
}

function take(pool: Map<number, number[]>, c: number, n: number): number[] {
  const p = pool.get(c)!;
  if (p.length < n) throw new Error(`class ${c} has ${p.length} rows left, ${n} wanted`);
  return p.splice(0, n);
}

beforeAll(async () => {
  await init();
  const [train, testSplit] = await Promise.all([loadFashionMnist({ n: 10_000 }), loadFashionMnist({ split: 'test' })]);
  const trainPool = pools(train.labels);
  const testPool = pools(testSplit.labels);
  clients = [];
  inlierOf = {};
  INLIER_CLASSES.forEach((c) => {
    for (let j = 0; j < PER_CLASS; j++) {
      // the outlier class circulates through the other inlier classes of the federation
      const others = INLIER_CLASSES.filter((o) => o !== c);
      const o = others[j % others.length]!;
      const nOut = Math.round(CONTAMINATION * TRAIN_ROWS);
      const tOut = Math.round(CONTAMINATION * TEST_ROWS);
      const trainIdx = [...take(trainPool, c, TRAIN_ROWS - nOut), ...take(trainPool, o, nOut)];
      const testIdx = [...take(testPool, c, TEST_ROWS - tOut), ...take(testPool, o, tOut)];
      const id = `c${c}-${j}`;
      inlierOf[id] = c;
      clients.push({
        id,
        X: train.X.selectRows(trainIdx),
        test: { X: testSplit.X.selectRows(testIdx), outlier: Int32Array.from(testIdx, (_, r) => (r < TEST_ROWS - tOut ? 0 : 1)) },
      });
    }
  });
  ideal = groupsByClass(
    clients.map((c) => c.id),
    clients.map((c) => inlierOf[c.id]!),
  );
  local = trainCommunities(clients, 'local', TRAINING);
  idealRun = trainCommunities(clients, ideal, TRAINING);
}, 60_000);

describe('per-community training on Fashion-MNIST', () => {
  test('the ideal groups detect better than each client alone', () => {
    const l = local.auc.mean;
    const i = idealRun.auc.mean;
    console.log(`autoencoder AUC: local ${l.toFixed(3)} ± ${local.auc.std.toFixed(3)}, ideal ${i.toFixed(3)} ± ${idealRun.auc.std.toFixed(3)}; ideal ${idealRun.bytes} bytes, ${idealRun.seconds.toFixed(2)} s; local ${local.seconds.toFixed(2)} s`);
    // measured here (classes 0, 1, 7): ideal - local = 0.045, 0.016, 0.047, 0.067 with seeds 1..4
    // (seed 1: local 0.902, ideal 0.947). With classes 0, 2, 4 or 2, 5, 8 the two are within
    // 0.015 of each other (ideal slightly lower): the gap depends on the classes at this size.
    expect(i).toBeGreaterThan(l + 0.01);
    expect(local.clients.map((c) => c.id)).toEqual(clients.map((c) => c.id));
    for (const c of [...local.clients, ...idealRun.clients]) {
      expect(c.testRows).toBe(TEST_ROWS);
      expect(c.outliers).toBe(10);
      expect(c.auc).toBeGreaterThanOrEqual(0);
      expect(c.auc).toBeLessThanOrEqual(1);
    }
    // bytes and rounds come from the federations; a group of one sends nothing
    expect(local.bytes).toBe(0);
    expect(local.training.every((t) => t.rounds === 0)).toBe(true);
    expect(idealRun.training.map((t) => t.rounds)).toEqual([10, 10, 10]);
    expect(idealRun.bytes).toBeGreaterThan(3 * 3 * 10 * 2 * 4 * 100_000);
    expect(idealRun.training.map((t) => t.members)).toEqual(ideal);
    expect(idealRun.clients.map((c) => c.group)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
  });

  test('a group of one is local training, bit for bit', () => {
    const a = clients[0]!;
    const run = trainCommunities(clients.slice(0, 4), [[a.id], clients.slice(1, 4).map((c) => c.id)], TRAINING);
    const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    expect(bytes(run.training[0]!.parameters!).equals(bytes(local.training[0]!.parameters!))).toBe(true);
    expect(run.clients[0]!.auc).toBe(local.clients[0]!.auc);
    expect(run.training[0]!.epochs).toBe(local.training[0]!.epochs);
    // the federated group's parameters differ from its members' own
    expect(bytes(run.training[1]!.parameters!).equals(bytes(local.training[1]!.parameters!))).toBe(false);
    // without early stopping a client alone is one Autoencoder fit of rounds x epochs epochs
    const plain = trainCommunities([a], 'local', { seed: 1, epochs: 1, earlyStopping: 'none' });
    const ae = new Autoencoder({ hiddenLayers: [64, 32, 64], learningRate: 1e-3, epochs: 10, batchSize: 32, seed: 1 });
    try {
      ae.fit(a.X);
      const own = ae.getParameters();
      expect(bytes(plain.training[0]!.parameters!).equals(bytes(own))).toBe(true);
      expect(plain.training[0]!.epochs).toBe(10);
      expect(own.length).toBe(784 * 64 + 64 + 64 * 32 + 32 + 32 * 64 + 64 + 64 * 784 + 784);
    } finally {
      ae.dispose();
    }
  });

  test('a merged community, evaluated as the paper does (Tables I, V)', () => {
    // classes 0 and 7 merged into one community, class 1 apart. Here that is the worst merge:
    // in this 3-class partition a class-0 client's outliers are class 7 or 1, so the merged
    // model learns half the outliers as inliers (measured: community 0.722 against local
    // 0.902 and ideal 0.947; by class, 0: 0.575 / 0.801 / 0.906, 7: 0.639 / 0.953 / 0.982)
    const merged = [[...ideal[0]!, ...ideal[2]!], ideal[1]!];
    const ours = trainCommunities(clients, merged, TRAINING);
    const table = communityMembership(merged, inlierOf);
    expect(table).toEqual({ classes: [0, 1, 7], rows: [{ group: 0, members: 6, counts: [3, 0, 3] }, { group: 1, members: 3, counts: [0, 3, 0] }] });
    expect(communityRandIndex(merged, ideal)).toBeLessThan(1);
    const byClass = mergedCommunityAuc(merged, inlierOf, { local: aucByClient(local), community: aucByClient(ours), ideal: aucByClient(idealRun) });
    expect(byClass.map((r) => [r.group, r.inlierClass, r.clients])).toEqual([[0, 0, 3], [0, 7, 3]]);
    console.log(formatCommunityTables({ membership: table, auc: { local: local.auc, community: ours.auc, ideal: idealRun.auc }, merged: byClass }));
    // the group of class 1 is the ideal one, trained alike: the same AUC for its clients
    for (const id of ideal[1]!) expect(aucByClient(ours).get(id)).toBe(aucByClient(idealRun).get(id));
  });

  test('FedGenGMM per community runs and scores', () => {
    const gmm = trainCommunities(clients, ideal, { detector: 'fedgengmm', kMax: 2, seed: 1 });
    const alone = trainCommunities(clients, 'local', { detector: 'fedgengmm', kMax: 2, seed: 1 });
    console.log(`fedgengmm AUC: local ${alone.auc.mean.toFixed(3)} ± ${alone.auc.std.toFixed(3)}, ideal ${gmm.auc.mean.toFixed(3)} ± ${gmm.auc.std.toFixed(3)}; ideal ${gmm.bytes} bytes, ${gmm.seconds.toFixed(2)} s`);
    expect(gmm.detector).toBe('fedgengmm');
    expect(gmm.clients).toHaveLength(9);
    expect(gmm.auc.mean).toBeGreaterThan(0.5);
    expect(gmm.bytes).toBeGreaterThan(0);
    expect(gmm.training.every((t) => t.rounds > 0 && t.parameters === undefined)).toBe(true);
    expect(alone.bytes).toBe(0);
  });
});

describe('evaluation tables', () => {
  // hand-built: classes 0, 1, 2, two clients each; communities merge 0 and 1
  const classOf = { a: 0, b: 0, c: 1, d: 1, e: 2, f: 2 };
  const found = [['a', 'b', 'c'], ['d'], ['e', 'f']];
  const truth = [['a', 'b'], ['c', 'd'], ['e', 'f']];

  test("each community's members by inlier class", () => {
    expect(communityMembership(found, classOf)).toEqual({
      classes: [0, 1, 2],
      rows: [
        { group: 0, members: 3, counts: [2, 1, 0] },
        { group: 1, members: 1, counts: [0, 1, 0] },
        { group: 2, members: 2, counts: [0, 0, 2] },
      ],
    });
    expect(communityMembership([['x', 'y']], new Map([['x', 'shirt'], ['y', 'bag']])).classes).toEqual(['bag', 'shirt']);
  });

  test('adjusted Rand index against the ideal groups', () => {
    expect(communityRandIndex(truth, truth)).toBe(1);
    expect(communityRandIndex([['f', 'e'], ['d', 'c'], ['b', 'a']], truth)).toBe(1);
    expect(communityRandIndex(ideal, ideal)).toBe(1);
    expect(communityRandIndex(found, truth)).toBeLessThan(1);
    expect(groupsByClass(['a', 'b', 'c', 'd', 'e', 'f'], [0, 0, 1, 1, 2, 2])).toEqual(truth);
  });

  test('per-class AUC of merged communities, and the text tables', () => {
    const aucs = {
      local: { a: 0.6, b: 0.7, c: 0.5, d: 0.55, e: 0.8, f: 0.8 },
      community: new Map(Object.entries({ a: 0.8, b: 0.9, c: 0.7, d: 0.55, e: 0.9, f: 0.9 })),
    };
    const merged = mergedCommunityAuc(found, classOf, aucs);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({ group: 0, inlierClass: 0, clients: 2 });
    expect(merged[0]!.auc.local!.mean).toBeCloseTo(0.65, 12);
    expect(merged[0]!.auc.local!.std).toBeCloseTo(0.05, 12);
    expect(merged[0]!.auc.community!.mean).toBeCloseTo(0.85, 12);
    expect(merged[1]).toMatchObject({ group: 0, inlierClass: 1, clients: 1, auc: { local: { mean: 0.5, std: 0 }, community: { mean: 0.7, std: 0 } } });
    const text = formatCommunityTables({ membership: communityMembership(found, classOf), auc: { local: local.auc, ideal: idealRun.auc }, merged });
    expect(text).toContain('group  members  I0  I1  I2');
    expect(text).toMatch(/G0\s+3\s+2\s+1\s+0/);
    expect(text).toMatch(/G0\s+0\s+2\s+0\.650 ± 0\.050\s+0\.850 ± 0\.050/);
    expect(text).toContain(`${idealRun.auc.mean.toFixed(3)} ± ${idealRun.auc.std.toFixed(3)}`);
    expect(aucByClient(local).get(clients[0]!.id)).toBe(local.clients[0]!.auc);
  });
});

describe('bad input', () => {
  const tiny = (id: string, d = 3): CommunityClient => ({
    id,
    X: Matrix.fromRows(Array.from({ length: 8 }, (_, i) => Array.from({ length: d }, (_, j) => ((i + j) % 5) / 5))),
    test: { X: Matrix.fromRows(Array.from({ length: 4 }, (_, i) => Array.from({ length: d }, (_, j) => ((i * j) % 3) / 3))), outlier: [0, 0, 1, true] },
  });
  const few = { rounds: 1, hiddenLayers: [2] };

  test('groups naming an unknown client, or a client twice, or leaving one out', () => {
    const two = [tiny('a'), tiny('b')];
    expect(() => trainCommunities(two, [['a', 'z'], ['b']], few)).toThrow(InvalidParameterError);
    expect(() => trainCommunities(two, [['a', 'b'], ['b']], few)).toThrow(/in groups\[0\] and groups\[1\]/);
    expect(() => trainCommunities(two, [['a']], few)).toThrow(/in no group/);
    expect(() => trainCommunities(two, [['a'], [], ['b']], few)).toThrow(InvalidParameterError);
    expect(() => trainCommunities([tiny('a'), tiny('a')], 'local', few)).toThrow(/given twice/);
    expect(() => communityRandIndex([['a'], ['a']], [['a']])).toThrow(InvalidParameterError);
    expect(() => communityRandIndex([['a'], ['b']], [['a']])).toThrow(InvalidParameterError);
    expect(() => communityMembership([['a', 'q']], { a: 0 })).toThrow(InvalidParameterError);
  });

  test('an empty test set, a test set of one class, mismatched dimensions', () => {
    const empty = { ...tiny('b'), test: { X: Matrix.fromRows([]), outlier: [] } };
    expect(() => trainCommunities([tiny('a'), empty], 'local', few)).toThrow(InvalidDataError);
    const inliersOnly = { ...tiny('b'), test: { ...tiny('b').test, outlier: [0, 0, 0, 0] } };
    expect(() => trainCommunities([tiny('a'), inliersOnly], 'local', few)).toThrow(/no outlier rows/);
    expect(() => trainCommunities([tiny('a'), tiny('b', 4)], 'local', few)).toThrow(/4 features but clients\[0\] has 3/);
    const wrongTest = { ...tiny('b'), test: tiny('x', 4).test };
    expect(() => trainCommunities([tiny('a'), wrongTest], 'local', few)).toThrow(InvalidDataError);
    const wrongLabels = { ...tiny('b'), test: { ...tiny('b').test, outlier: [0, 1] } };
    expect(() => trainCommunities([tiny('a'), wrongLabels], 'local', few)).toThrow(/4 test rows but 2 outlier labels/);
    expect(() => trainCommunities([tiny('a')], 'local', { detector: 'ocsvm' as never })).toThrow(InvalidParameterError);
    expect(() => mergedCommunityAuc([['a', 'b']], { a: 0, b: 1 }, { local: { a: 0.5 } })).toThrow(/no AUC for client "b"|no AUC for client 'b'|no AUC for client b/);
  });

  test('tiny valid run: a federated pair and a client alone', () => {
    const r = trainCommunities([tiny('a'), tiny('b'), tiny('c')], [['a', 'b'], ['c']], few);
    expect(r.training.map((t) => t.rounds)).toEqual([1, 0]);
    expect(r.clients.map((c) => c.group)).toEqual([0, 0, 1]);
  });
});
