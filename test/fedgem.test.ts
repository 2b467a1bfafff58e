/** FedGEM: client and server roles, the in-process run, tuning, privacy, and bad clients. */
import { beforeAll, expect, test, vi } from 'vitest';
import {
  adjustedRandScore,
  centerNoiseStd,
  fedGEM,
  FedGEMClient,
  FedGEMServer,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  makeBlobs,
  Matrix,
  partition,
  PHI_GRID,
  type Message,
} from '../ts/index.js';
import { message } from '../ts/federated/message.js';
import { runFedGEMExperiment } from '../ts/experiment/fedgem.js';
import { wasm } from '../ts/wasm/loader.js';

beforeAll(async () => {
  await init();
});

/** 10 well-separated clusters dealt to 10 clients holding 3 to 6 each (the setting). */
function federation(seed: number, clusters = 10, clients = 10) {
  const b = makeBlobs({ nClusters: clusters, nFeatures: 2, samplesPerCluster: 200, minDistance: 6, seed });
  const p = partition.quantity(Array.from(b.labels), { clients, alpha: [3, 6], seed });
  const data = p.indices.map((rows) => b.X.selectRows(rows));
  const truth = p.indices.map((rows) => Array.from(rows, (i) => b.labels[i]!));
  const options = p.classSets.map((set, c) => ({ nComponents: set.length, seed: seed * 100 + c }));
  return { b, p, data, truth, options };
}

function weightedAri(r: ReturnType<typeof fedGEM>, data: Matrix[], truth: number[][]): number {
  let total = 0;
  let n = 0;
  for (const c of r.clients) {
    const i = Number(c.id);
    total += adjustedRandScore(truth[i]!, c.predict(data[i]!)) * truth[i]!.length;
    n += truth[i]!.length;
  }
  return total / n;
}

test('finds the true number of clusters and each client its clusters', () => {
  const heap = wasm().fm_heap_in_use();
  const { data, truth, options } = federation(1);
  const r = fedGEM(data, { client: options, rounds: 8 });
  expect(r.estimatedK).toBe(10);
  expect(weightedAri(r, data, truth)).toBeGreaterThan(0.99);
  expect(r.globalCenters.length).toBe(20);
  // the first rounds find overlaps (k-means++ seeds move a lot), later ones fewer
  expect(r.history.length).toBe(8);
  expect(r.history[0]!.overlaps).toBeGreaterThan(0);
  expect(r.history[7]!.maxRadius).toBeLessThan(r.history[0]!.maxRadius);
  // clients holding the same true cluster share its super-cluster, and only then
  const owner = new Map<number, number>();
  r.memberships.forEach((ms) => expect(new Set(ms).size).toBe(ms.length));
  for (const c of r.clients) {
    const i = Number(c.id);
    const pred = c.predict(data[i]!);
    truth[i]!.forEach((t, row) => {
      if (!owner.has(t)) owner.set(t, pred[row]!);
    });
  }
  for (const c of r.clients) {
    const i = Number(c.id);
    const pred = c.predict(data[i]!);
    const agree = truth[i]!.filter((t, row) => owner.get(t) === pred[row]).length;
    expect(agree / truth[i]!.length).toBeGreaterThan(0.99);
  }
  // traffic: each round an upload and a reply per client, then the final upload and the result
  expect(r.traffic.rounds).toBe(9);
  expect(r.traffic.messagesUp).toBe(10 * 9);
  expect(r.traffic.messagesDown).toBe(10 * 9);
  expect(r.excluded).toEqual([]);
  for (const c of r.clients) c.dispose();
  expect(wasm().fm_heap_in_use()).toBe(heap);
});

test('the k-d tree and all pairs give the same federation', () => {
  const { data, options } = federation(2, 12, 14);
  const a = fedGEM(data, { client: options, rounds: 5, server: { search: 'kdtree' } });
  const b = fedGEM(data, { client: options, rounds: 5, server: { search: 'all-pairs' } });
  expect(a.estimatedK).toBe(b.estimatedK);
  expect(a.globalCenters).toEqual(b.globalCenters);
  expect([...a.memberships]).toEqual([...b.memberships]);
  expect(a.history).toEqual(b.history);
  for (const c of [...a.clients, ...b.clients]) c.dispose();
});

test('the bisection radius agrees with the closed form through the client API', () => {
  const { data, options } = federation(3);
  const closed = new FedGEMClient('a', data[0]!, { ...options[0]!, radius: 'closed-form' });
  const bisected = new FedGEMClient('b', data[0]!, { ...options[0]!, radius: 'bisection', bisectionIterations: 80 });
  for (let round = 0; round < 3; round++) {
    const x = closed.localRound(round).payload;
    const y = bisected.localRound(round).payload;
    expect(y.maximizers).toEqual(x.maximizers);
    Array.from(x.radii).forEach((r, k) => expect(Math.abs(y.radii[k]! - r)).toBeLessThanOrEqual(1e-7 * r + 1e-12));
  }
  closed.dispose();
  bisected.dispose();
});

test('tuning phi by validation silhouette picks a phi of the grid and the true K', () => {
  const { b, p, options } = federation(4);
  // each client holds out a fifth of its rows to score the candidates
  const train: Matrix[] = [];
  const validation: Matrix[] = [];
  for (const rows of p.indices) {
    // every fifth row (rows come cluster by cluster: a cut would drop whole clusters)
    validation.push(b.X.selectRows(rows.filter((_, j) => j % 5 === 0)));
    train.push(b.X.selectRows(rows.filter((_, j) => j % 5 !== 0)));
  }
  const r = fedGEM(train, { client: options, rounds: 6, phi: PHI_GRID, validation });
  expect(PHI_GRID).toContain(r.phi);
  expect(r.phiScores!.map((s) => s.phi)).toEqual([...PHI_GRID]);
  expect(r.estimatedK).toBe(10);
  // the chosen phi is the smallest within one standard error of the best score
  const best = r.phiScores!.reduce((a, s) => (s.score > a.score ? s : a));
  const within = r.phiScores!.filter((s) => s.score >= best.score - best.standardError).map((s) => s.phi);
  expect(r.phi).toBe(Math.min(...within));
  // one more round for the candidates and the silhouettes
  expect(r.traffic.rounds).toBe(6 + 2);
  for (const c of r.clients) c.dispose();
});

test('the privacy noise has the standard deviation of the documented formula', () => {
  const p = { epsilon: 0.5, delta: 1e-5, bound: 10, minShare: 0.1 };
  // sigma = 4 B sqrt(K) / (n rho) * sqrt(2 ln(1.25 / delta)) / epsilon
  expect(centerNoiseStd(p, 1000, 4, 0.1)).toBeCloseTo(((4 * 10 * 2) / (1000 * 0.1)) * Math.sqrt(2 * Math.log(1.25e5)) / 0.5, 12);
  const { data, options } = federation(5);
  // a bound every row meets: the clipping changes nothing, the noise is all that differs
  const x0 = data[0]!;
  p.bound = Math.max(...Array.from({ length: x0.nRows }, (_, i) => Math.hypot(x0.get(i, 0), x0.get(i, 1))));
  const plain = new FedGEMClient('a', data[0]!, options[0]!);
  const noisy = new FedGEMClient('a', data[0]!, { ...options[0]!, privacy: p });
  const sd = centerNoiseStd(p, plain.nSamples, plain.nComponents, 0.1);
  const diffs: number[] = [];
  for (let round = 0; round < 40; round++) {
    const x = plain.localRound(round).payload.maximizers;
    const y = noisy.localRound(round).payload.maximizers;
    for (let i = 0; i < x.length; i++) diffs.push(y[i]! - x[i]!);
  }
  const rms = Math.sqrt(diffs.reduce((a, v) => a + v * v, 0) / diffs.length);
  expect(rms / sd).toBeGreaterThan(0.85);
  expect(rms / sd).toBeLessThan(1.15);
  // the client's own model stays noiseless: both continue identically
  expect(noisy.means).toEqual(plain.means);
  expect(() => new FedGEMClient('c', data[0]!, { ...options[0]!, privacy: { ...p, epsilon: 1.5 } })).toThrow(/epsilon must be in \(0, 1\)/);
  expect(() => new FedGEMClient('c', data[0]!, { ...options[0]!, privacy: { ...p, bound: 0 } })).toThrow(InvalidParameterError);
  plain.dispose();
  noisy.dispose();
});

/** A valid BALLS upload of two 1-D components, edited by `patch`. */
function balls(from: string, patch: Record<string, unknown> = {}): Message {
  return message('fedgem/balls', from, 0, { nComponents: 2, nFeatures: 1, maximizers: [0, 5], radii: [0.5, 0.5], counts: [10, 10], nSamples: 20, ...patch });
}

test.each([
  ['a NaN radius', { radii: [NaN, 0.5] }, /radii\[0\] is NaN/],
  ['a negative radius', { radii: [-1, 0.5] }, /a radius must be non-negative/],
  ['another dimension', { nFeatures: 2, maximizers: [0, 0, 5, 5] }, /2 features but this federation has 1/],
  ['duplicate centers', { maximizers: [3, 3] }, /components 0 and 1 have the same center/],
  ['one point per cluster', { nSamples: 2, counts: [1, 1] }, /at least two rows per component/],
  ['counts that miss rows', { counts: [10, 5] }, /counts sum to 15, not to its 20 rows/],
  ['an infinite center', { maximizers: [Infinity, 5] }, /values must be finite/],
  ['a fractional component count', { nComponents: 1.5 }, /nComponents must be a positive integer/],
])('a client reporting %s is excluded and changes nothing', (_what, patch, error) => {
  const clean = new FedGEMServer({ nFeatures: 1 });
  const dirty = new FedGEMServer({ nFeatures: 1 });
  for (const s of [clean, dirty]) {
    expect(s.receiveBalls(balls('0'), 0)).toBe(true);
    expect(s.receiveBalls(balls('1', { maximizers: [0.4, 5.6] }), 0)).toBe(true);
  }
  expect(dirty.receiveBalls(balls('bad', patch), 0)).toBe(false);
  expect(dirty.excluded).toHaveLength(1);
  expect(dirty.excluded[0]!.reason).toMatch(error);
  expect(dirty.isActive('bad')).toBe(false);
  // the update is exactly the one without the bad client
  expect([...dirty.update(0)]).toEqual([...clean.update(0)]);
  // and the bad client stays out
  expect(dirty.receiveBalls(balls('bad'), 1)).toBe(false);
  expect(dirty.excluded[1]!.reason).toMatch(/excluded earlier/);
  const strict = new FedGEMServer({ nFeatures: 1, onInvalidClient: 'throw' });
  expect(() => strict.receiveBalls(balls('bad', patch), 0)).toThrow(InvalidMessageError);
});

test('a zero radius is accepted: that component has stopped moving, and others come to it', () => {
  const s = new FedGEMServer();
  s.receiveBalls(balls('0', { radii: [0, 0.5] }), 0);
  s.receiveBalls(balls('1', { maximizers: [0.4, 9], radii: [0.5, 0.5] }), 0);
  const r = s.update(0);
  // component 0 of client 0 stays at 0; client 1's first component meets it there (clipped point = 0)
  expect(Array.from(r.get('0')!.payload.centers)).toEqual([0, 5]);
  expect(r.get('1')!.payload.centers[0]).toBeCloseTo(0.2, 15);
  expect(s.history[0]!.overlaps).toBe(1);
});

test('a second upload in a round, or a message of the wrong kind, is refused', () => {
  const s = new FedGEMServer();
  expect(s.receiveBalls(balls('0'), 0)).toBe(true);
  expect(s.receiveBalls(balls('0'), 0)).toBe(false);
  expect(s.excluded[0]!.reason).toMatch(/a second upload in round 0/);
  expect(s.receiveBalls(message('fedgem/final', '2', 0, {}), 0)).toBe(false);
  expect(s.excluded[1]!.reason).toMatch(/expected a fedgem\/balls message/);
  expect(() => s.merge(1)).toThrow(/no final upload/);
  expect(() => s.merge(0)).toThrow(InvalidParameterError);
});

test('a final upload with zero spread between its centers cannot be merged, and a bad server message is refused', () => {
  const s = new FedGEMServer();
  const final = (from: string, centers: number[]) => message('fedgem/final', from, 1, { nComponents: 2, nFeatures: 1, centers, counts: [10, 10], nSamples: 20 });
  expect(s.receiveFinal(final('0', [0, 0]), 1)).toBe(false);
  expect(s.excluded[0]!.reason).toMatch(/same center/);
  expect(s.receiveFinal(final('1', [0, 6]), 1)).toBe(true);
  expect(s.receiveFinal(final('2', [0.1, 6.1]), 1)).toBe(true);
  const m = s.merge(2);
  expect(m.estimatedK).toBe(2);
  expect(Array.from(m.globalCenters)).toEqual([0.05, 6.05]);
  expect(m.radii.get('1')).toBeCloseTo((2 * 6) / Math.sqrt(20), 12);
  const { data, options } = federation(6);
  const c = new FedGEMClient('x', data[0]!, options[0]!);
  expect(() => c.applyCenters(message('fedgem/centers', 'server', 0, { centers: [1, 2] }))).toThrow(InvalidMessageError);
  expect(() => c.applyCenters(message('fedgem/result', 'server', 0, { centers: [1, 2] }))).toThrow(/expected a fedgem\/centers message/);
  expect(() => c.silhouettes(message('fedgem/candidates', 'server', 0, { candidates: [{ phi: 1, estimatedK: 0.5, centers: [] }] }), 0)).toThrow(/positive integer estimatedK/);
  expect(() => c.silhouettes(message('fedgem/candidates', 'server', 0, { candidates: [{ phi: 1, estimatedK: 2, centers: [0, 0, 1] }] }), 0)).toThrow(InvalidMessageError);
  expect(() => c.applyResult(message('fedgem/result', 'server', 0, { phi: 1, estimatedK: 2, globalCenters: [0, 0, 1, 1], memberships: [0] }))).toThrow(/one membership in \[0, 2\) per component/);
  const before = c.means;
  expect(() => c.applyCenters(message('fedgem/centers', 'server', 0, { centers: Array.from(before, () => NaN) }))).toThrow(InvalidMessageError);
  expect(c.means).toEqual(before);
  c.dispose();
});

test('the run continues without clients that fail or send bad data', () => {
  const { data, options } = federation(7);
  // client 0 has too few rows for its components; client 1 has a different dimension
  const bad = [data[0]!.selectRows([0, 1, 2]), Matrix.fromRows(Array.from({ length: 50 }, (_, i) => [i, i % 7, 1]))];
  const r = fedGEM([...bad, ...data.slice(2)], { client: options, rounds: 4 });
  expect(r.excluded.map((e) => e.client).sort()).toEqual(['0', '1']);
  expect(r.excluded.find((e) => e.client === '0')!.reason).toMatch(/at least two rows per component/);
  expect(r.excluded.find((e) => e.client === '1')!.reason).toMatch(/3 features but this federation has 2/);
  expect(r.clients.map((c) => c.id)).toEqual(['2', '3', '4', '5', '6', '7', '8', '9']);
  for (const c of r.clients) c.dispose();
  expect(() => fedGEM([...bad, ...data.slice(2)], { client: options, rounds: 1, server: { onInvalidClient: 'throw' } })).toThrow(InvalidDataError);
});

test('client options and data are checked', () => {
  const x = Matrix.fromRows([[0], [1], [2], [3]]);
  expect(() => new FedGEMClient('a', x, { nComponents: 3 })).toThrow(/at least two rows per component/);
  expect(() => new FedGEMClient('a', x, { nComponents: 0 })).toThrow(InvalidParameterError);
  expect(() => new FedGEMClient('a', x, { nComponents: 2, variance: 0 })).toThrow(InvalidParameterError);
  expect(() => new FedGEMClient('a', x, { nComponents: 2, weights: [0.2, 0.2] })).toThrow(/sum/);
  expect(() => new FedGEMClient('a', Matrix.fromRows([[0], [NaN], [2], [3]]), { nComponents: 2 })).toThrow(/NaN/);
  expect(() => new FedGEMClient('a', x, { nComponents: 2, meansInit: [0] })).toThrow(/meansInit/);
  expect(() => new FedGEMClient('a', Matrix.fromRows([[1], [1], [1], [1]]), { nComponents: 2 })).toThrow(/distinct/);
  const c = new FedGEMClient('a', x, { nComponents: 2, meansInit: [0.5, 2.5] });
  expect(Array.from(c.means)).toEqual([0.5, 2.5]);
  expect(() => c.predict(Matrix.fromRows([[0, 1]]))).toThrow(/2 features but the client's model has 1/);
  c.dispose();
  expect(() => c.localRound(0)).toThrow(/disposed/);
});

test('makeBlobs keeps the minimum distance and plants one pair exactly there', () => {
  const b = makeBlobs({ nClusters: 12, nFeatures: 3, samplesPerCluster: [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], minDistance: 4, seed: 9 });
  const c = b.centers;
  const dist = (i: number, j: number) => Math.hypot(c[3 * i]! - c[3 * j]!, c[3 * i + 1]! - c[3 * j + 1]!, c[3 * i + 2]! - c[3 * j + 2]!);
  expect(dist(0, 1)).toBeCloseTo(4, 12);
  for (let i = 0; i < 12; i++) for (let j = i + 1; j < 12; j++) expect(dist(i, j)).toBeGreaterThanOrEqual(4 - 1e-12);
  expect(b.X.nRows).toBe(126);
  expect(b.labels.filter((l) => l === 11).length).toBe(16);
  const again = makeBlobs({ nClusters: 12, nFeatures: 3, samplesPerCluster: [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], minDistance: 4, seed: 9 });
  expect(again.X.data).toEqual(b.X.data);
  expect(() => makeBlobs({ nClusters: 2, nFeatures: 2, samplesPerCluster: [1], seed: 1 })).toThrow(/1 sizes for 2 clusters/);
  expect(() => makeBlobs({ nClusters: 2, nFeatures: 2, samplesPerCluster: 3, minDistance: -1 })).toThrow(InvalidParameterError);
});

test('quantity over a range of classes per client, with client or class imbalance', () => {
  const labels = Array.from({ length: 3000 }, (_, i) => i % 10);
  for (const imbalance of ['none', 'clients', 'classes'] as const) {
    const p = partition.quantity(labels, { clients: 10, alpha: [3, 6], imbalance, seed: 4 });
    const held = new Set<number>();
    p.classSets.forEach((set, c) => {
      expect(set.length).toBeGreaterThanOrEqual(3);
      expect(set.length).toBeLessThanOrEqual(6);
      set.forEach((k) => held.add(k));
      // a client's rows are exactly of its classes
      const rows = Array.from(p.indices[c]!, (i) => labels[i]!);
      expect(new Set(rows).size).toBeLessThanOrEqual(set.length);
      rows.forEach((l) => expect(Array.from(set)).toContain(l));
    });
    expect(held.size).toBe(10);
    expect(p.indices.reduce((t, rows) => t + rows.length, 0)).toBe(3000);
    const sizes = p.indices.map((rows) => rows.length);
    const spread = Math.max(...sizes) / Math.min(...sizes);
    if (imbalance === 'clients') expect(spread).toBeGreaterThan(3);
  }
  // the counts per client vary over the range
  const p = partition.quantity(labels, { clients: 40, alpha: [2, 5], seed: 5 });
  expect(new Set(p.classSets.map((s) => s.length))).toEqual(new Set([2, 3, 4, 5]));
  expect(() => partition.quantity(labels, { clients: 4, alpha: [3, 11] })).toThrow(/alpha <= 10/);
  expect(() => partition.quantity(labels, { clients: 4, alpha: [3, 2] })).toThrow(InvalidParameterError);
  expect(() => partition.quantity(labels, { clients: 4, alpha: 2, imbalance: 'rows' as never })).toThrow(/imbalance must be/);
});

test('the server checks the envelope of a message object too, and nothing unreadable throws a TypeError', () => {
  const s = new FedGEMServer({ nFeatures: 1 });
  const getter = { ...balls('g'), payload: { get nComponents(): number { throw new TypeError('boom') } } };
  const cases: [unknown, RegExp][] = [
    [null, /must be a JSON object/],
    [42, /must be a JSON object/],
    ['not json', /not valid JSON/],
    [{ ...balls('v'), version: 2 }, /version 2 is not supported/],
    [{ ...balls('n'), round: -1 }, /non-negative integer "round"/],
    [getter, /could not be checked: boom/],
    [balls('b', { radii: [1n, 0.5] }), /radii\[0\] is 1n;/],
    [balls('y', { maximizers: [Symbol('x'), 5] }), /maximizers\[0\] is Symbol\(x\);/],
  ];
  for (const [input, reason] of cases) {
    expect(s.receiveBalls(input as Message, 0)).toBe(false);
    expect(s.excluded.at(-1)!.reason).toMatch(reason);
  }
  // the senders that could be named are out
  for (const id of ['v', 'n', 'g', 'b', 'y']) expect(s.isActive(id)).toBe(false);
  expect(s.excluded[0]!.client).toBe('unknown client');
  const strict = new FedGEMServer({ nFeatures: 1, onInvalidClient: 'throw' });
  for (const [input] of cases) expect(() => strict.receiveBalls(input as Message, 0)).toThrow(InvalidMessageError);
  // a message object is checked as its text would be
  expect(s.receiveBalls(JSON.stringify({ ...balls('p'), protocol: 'other' }), 0)).toBe(false);
  expect(s.receiveBalls({ ...balls('q'), protocol: 'other' } as never, 0)).toBe(false);
  expect(s.excluded.slice(-2).map((e) => e.reason)).toEqual([expect.stringMatching(/not a fedmix message/), expect.stringMatching(/not a fedmix message/)]);
});

test('an upload for another round is refused', () => {
  const s = new FedGEMServer({ nFeatures: 1 });
  expect(s.receiveBalls(balls('0'), 1)).toBe(false);
  expect(s.excluded[0]!.reason).toMatch(/a message for round 0 arrived in round 1/);
  const final = message('fedgem/final', '1', 3, { nComponents: 2, nFeatures: 1, centers: [0, 6], counts: [10, 10], nSamples: 20 });
  expect(s.receiveFinal(final, 2)).toBe(false);
  expect(s.isActive('1')).toBe(false);
});

test('the server keeps copies of what it received', () => {
  const s = new FedGEMServer();
  const final = (from: string, centers: number[]) => message('fedgem/final', from, 1, { nComponents: 2, nFeatures: 1, centers, counts: [10, 10], nSamples: 20 });
  const centers = [0, 6];
  s.receiveFinal(final('0', centers), 1);
  s.receiveFinal(final('1', [0.1, 6.1]), 1);
  centers[1] = 100;
  expect(Array.from(s.merge(1).globalCenters)).toEqual([0.05, 6.05]);
  s.candidates([1, 2], 1);
  const values = [0.9, 0.5];
  s.receiveSilhouettes(message('fedgem/silhouettes', '0', 1, { values, nValidation: 10 }), 1);
  s.receiveSilhouettes(message('fedgem/silhouettes', '1', 1, { values: [0.9, 0.5], nValidation: 10 }), 1);
  const before = s.choosePhi([1, 2]);
  values[0] = -1;
  values[1] = 1;
  expect(s.choosePhi([1, 2])).toEqual(before);
  expect(before.phi).toBe(1);
});

test('an inferred dimension does not outlive the client it came from', () => {
  // a first client with two features is accepted, then excluded: the one-feature clients after it are accepted
  const s = new FedGEMServer();
  const odd = balls('odd', { nFeatures: 2, maximizers: [0, 0, 5, 5] });
  expect(s.receiveBalls(odd, 0)).toBe(true);
  expect(s.receiveBalls(odd, 0)).toBe(false);
  expect(s.receiveBalls(balls('0'), 0)).toBe(true);
  expect(s.receiveBalls(balls('1', { maximizers: [0.4, 5.6] }), 0)).toBe(true);
  expect(s.excluded.map((e) => e.client)).toEqual(['odd']);
  expect([...s.update(0).keys()]).toEqual(['0', '1']);
  // the dimension stays while an accepted client holds it
  expect(s.receiveBalls({ ...balls('1'), round: 1 }, 1)).toBe(true);
  expect(s.receiveBalls({ ...balls('2', { nFeatures: 2, maximizers: [0, 0, 5, 5] }), round: 1 }, 1)).toBe(false);
  expect(s.excluded[1]!.reason).toMatch(/2 features but this federation has 1/);
  // the runner gives the server the majority dimension: a first client with three features is excluded alone
  const { data, options } = federation(8);
  const wide = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i % 5, i % 7, 1]));
  const r = fedGEM([wide, ...data.slice(1)], { client: options, rounds: 2 });
  expect(r.excluded.map((e) => e.client)).toEqual(['0']);
  expect(r.excluded[0]!.reason).toMatch(/3 features but this federation has 2/);
  expect(r.clients.length).toBe(9);
  for (const c of r.clients) c.dispose();
});

test('sizes past the caps are refused: components, rows, validation rows', () => {
  const s = new FedGEMServer({ nFeatures: 1 });
  const k = 4097;
  const many = { nComponents: k, maximizers: Array.from({ length: k }, (_, i) => i), radii: new Array(k).fill(0.1), counts: new Array(k).fill(2), nSamples: 2 * k };
  expect(s.receiveBalls(balls('k', many), 0)).toBe(false);
  expect(s.excluded[0]!.reason).toMatch(/nComponents is 4097; a client may upload at most 4096 components/);
  // at the cap, a late duplicate is found however far apart the two are
  const at = { ...many, nComponents: 4096, maximizers: Array.from({ length: 4096 }, (_, i) => (i === 4000 ? 3 : i)), radii: new Array(4096).fill(0.1), counts: new Array(4096).fill(2), nSamples: 8192 };
  expect(s.receiveBalls(balls('d', at), 0)).toBe(false);
  expect(s.excluded[1]!.reason).toMatch(/components 3 and 4000 have the same center/);
  const huge = 2 ** 48 + 2;
  expect(s.receiveBalls(balls('n', { nSamples: huge, counts: [huge / 2, huge / 2] }), 0)).toBe(false);
  expect(s.excluded[2]!.reason).toMatch(/nSamples is 281474976710658; at most 2\^48 rows/);
  const t = new FedGEMServer();
  const final = (from: string, centers: number[]) => message('fedgem/final', from, 1, { nComponents: 2, nFeatures: 1, centers, counts: [10, 10], nSamples: 20 });
  t.receiveFinal(final('0', [0, 6]), 1);
  t.receiveFinal(final('1', [0.1, 6.1]), 1);
  t.candidates([1, 2], 1);
  // at 1e300 rows the weights' squares would overflow the standard error into NaN, and no phi would qualify
  expect(t.receiveSilhouettes(message('fedgem/silhouettes', '0', 1, { values: [0.9, 0.5], nValidation: 1e300 }), 1)).toBe(false);
  expect(t.excluded[0]!.reason).toMatch(/nValidation is 1e\+300; at most 2\^40 validation rows/);
  expect(t.receiveSilhouettes(message('fedgem/silhouettes', '1', 1, { values: [0.9, 0.5], nValidation: 2 ** 40 }), 1)).toBe(true);
  expect(t.choosePhi([1, 2]).phi).toBe(1);
});

test('a component without rows pulls no one in a round', () => {
  // client 0's second component explains none of its rows: it sits still (radius 0) next to client 1's first
  const s = new FedGEMServer();
  s.receiveBalls(balls('0', { maximizers: [0, 5], radii: [0.5, 0], counts: [20, 0] }), 0);
  s.receiveBalls(balls('1', { maximizers: [5.4, 9], radii: [0.5, 0.5] }), 0);
  const r = s.update(0);
  expect(Array.from(r.get('1')!.payload.centers)).toEqual([5.4, 9]);
  expect(Array.from(r.get('0')!.payload.centers)).toEqual([0, 5]);
  expect(s.history[0]!.overlaps).toBe(0);
  // with rows it would have pulled client 1's component onto itself (see the zero-radius test)
  const t = new FedGEMServer();
  t.receiveBalls(balls('0', { maximizers: [0, 5], radii: [0.5, 0], counts: [10, 10] }), 0);
  t.receiveBalls(balls('1', { maximizers: [5.4, 9], radii: [0.5, 0.5] }), 0);
  expect(t.update(0).get('1')!.payload.centers[0]).toBeCloseTo(5.2, 12);
});

test('the client copies its options, bounds the bisection and leaks nothing when it cannot be created', () => {
  const { data, options } = federation(9);
  const x = data[0]!;
  const privacy = { epsilon: 0.5, delta: 1e-5, bound: 100 };
  const heap = wasm().fm_heap_in_use();
  // the data seed no longer feeds the noise seed: its largest value works
  new FedGEMClient('a', x, { ...options[0]!, seed: Number.MAX_SAFE_INTEGER, privacy }).dispose();
  expect(() => new FedGEMClient('a', x, { ...options[0]!, privacy, noiseSeed: -1 })).toThrow(/noiseSeed must be an integer >= 0/);
  // the noise generator exists when the client's own creation fails
  expect(() => new FedGEMClient('a', x, { ...options[0]!, privacy, init: 'other' as never })).toThrow(InvalidParameterError);
  const nan = Matrix.fromRows(Array.from({ length: 20 }, (_, i) => [i === 3 ? NaN : i, 1]));
  expect(() => new FedGEMClient('a', nan, { nComponents: 2, privacy, noiseSeed: 1 })).toThrow(InvalidDataError);
  expect(wasm().fm_heap_in_use()).toBe(heap);
  expect(() => new FedGEMClient('a', x, { ...options[0]!, radius: 'bisection', bisectionIterations: 1001 })).toThrow(/bisectionIterations must be an integer in \[1, 1000\]/);
  // later edits of the options object reach nothing
  const o = { ...options[0]!, localSteps: 1 };
  const c = new FedGEMClient('a', x, o);
  o.localSteps = 0;
  expect(() => c.localRound(0)).not.toThrow();
  c.dispose();
});

test('the privacy noise has its own seed, and the rows are clipped to the bound', () => {
  const { data, options } = federation(10);
  const x = data[0]!;
  const p = { epsilon: 0.5, delta: 1e-5, bound: 3 };
  const upload = (o: object) => {
    const c = new FedGEMClient('a', x, { ...options[0]!, ...o });
    const m = Array.from(c.localRound(0).payload.maximizers);
    const means = c.means;
    c.dispose();
    return { m, means };
  };
  // the same data seed, fresh noise each time; the same noise seed, the same noise
  expect(upload({ privacy: p }).m).not.toEqual(upload({ privacy: p }).m);
  expect(upload({ privacy: p, noiseSeed: 4 }).m).toEqual(upload({ privacy: p, noiseSeed: 4 }).m);
  // the means average clipped rows: inside the ball of radius B
  const { means } = upload({ privacy: p, noiseSeed: 4 });
  for (let k = 0; k < means.length / 2; k++) expect(Math.hypot(means[2 * k]!, means[2 * k + 1]!)).toBeLessThanOrEqual(3 + 1e-12);
  expect(Math.max(...Array.from({ length: x.nRows }, (_, i) => Math.hypot(x.get(i, 0), x.get(i, 1))))).toBeGreaterThan(6);
});

test('the runner checks tol and phi before training', () => {
  const { data, options } = federation(11);
  for (const tol of [0, -1, NaN, Infinity]) expect(() => fedGEM(data, { client: options, tol })).toThrow(/tol must be a finite number > 0/);
  expect(() => fedGEM(data, { client: options, phi: [] })).toThrow(/phi must be a number or a non-empty list of candidates/);
  expect(() => fedGEM(data, { client: options, phi: [1, -2] })).toThrow(/phi\[1\] must be a finite number > 0/);
  const heap = wasm().fm_heap_in_use();
  const r = fedGEM(data, { client: options, rounds: 50, tol: 1e-3 });
  expect(r.history.length).toBeLessThan(50);
  for (const c of r.clients) c.dispose();
  expect(wasm().fm_heap_in_use()).toBe(heap);
});

test('the experiment frees the central model when scoring fails', () => {
  const heap = wasm().fm_heap_in_use();
  const spy = vi.spyOn(GaussianMixture.prototype, 'predict').mockImplementation(() => {
    throw new InvalidDataError('scoring failed');
  });
  try {
    expect(() =>
      runFedGEMExperiment({ kind: 'blobs', blobs: { nClusters: 4, nFeatures: 2, samplesPerCluster: 40, minDistance: 6 } }, { clients: 3, clustersPerClient: [2, 3], rounds: 2 }),
    ).toThrow(/scoring failed/);
  } finally {
    spy.mockRestore();
  }
  expect(wasm().fm_heap_in_use()).toBe(heap);
});
