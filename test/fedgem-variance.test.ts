/**
 * FedGEM's federated variance estimate (issue 15, item 7): clients without a
 * known variance report the within-cluster sum of squares of their local
 * k-means at K_c and its degrees of freedom, the server pools them into
 * sigma^2 = sum SS / sum dof and sends it with every later request. Checked:
 * the estimate against the blobs' true spread (raw and standardized), against
 * the central pooled estimate from the same local clusterings, the K it gives
 * on standardized unit-variance blobs (where the old known sigma^2 = 1 did
 * not), the protocol by hand, and bad spread replies excluded.
 */
import { beforeAll, expect, test } from 'vitest';
import {
  FederationError,
  fedGEM,
  FedGEMClient,
  FedGEMServer,
  FEDGEM_PROTOCOL,
  init,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  KMeans,
  makeBlobs,
  Matrix,
  message,
  NotFittedError,
  partition,
  runFederationSync,
  StandardScaler,
  type Message,
  type RoundContext,
} from '../ts/index.js';
import { resultJson } from '../ts/node.js';
import { MAX_SPREAD } from '../ts/federated/fedgem/messages.js';
import { runFedGEMExperiment } from '../ts/experiments/fedgem/run.js';
import { wasm } from '../ts/wasm/loader.js';
import { editPayload, Recording } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** 10 clusters of standard deviation `std` at least 6 std apart, dealt to 10 clients holding 3 to 6 each; no variance given. */
function federation(seed: number, std: number, scale: boolean) {
  const b = makeBlobs({ nClusters: 10, nFeatures: 2, samplesPerCluster: 200, minDistance: 6 * std, clusterStd: std, seed });
  const X = scale ? new StandardScaler().fit(b.X).transform(b.X) : b.X;
  const p = partition.quantity(Array.from(b.labels), { clients: 10, alpha: [3, 6], seed });
  const data = p.indices.map((rows) => X.selectRows(rows));
  const options = p.classSets.map((set, c) => ({ nComponents: set.length, seed: seed * 100 + c }));
  // the clusters' variance in the features the clients see: std^2 / s_j^2 per standardized feature, averaged (the model is isotropic)
  let truth = std * std;
  if (scale) {
    const sd = [0, 1].map((j) => {
      const col = Array.from(b.X.column(j));
      const m = col.reduce((a, v) => a + v, 0) / col.length;
      return Math.sqrt(col.reduce((a, v) => a + (v - m) ** 2, 0) / col.length);
    });
    truth = sd.reduce((a, s) => a + (std * std) / (s * s), 0) / 2;
  }
  return { data, options, truth };
}

const ctx = (round: number, clients: string[]): RoundContext => ({ round, clients, available: clients });
const readRequest = (m: Message) => FEDGEM_PROTOCOL.exchanges.get(m.kind)!.request.read(m);
const readReply = (request: Message, reply: Message) => FEDGEM_PROTOCOL.exchanges.get(request.kind)!.reply!.read(reply);

test.each([
  [0.5, false],
  [1, false],
  [3, false],
  [0.5, true],
  [1, true],
  [3, true],
])('std %s (standardized: %s): the estimate is within 6 percent of the true variance, and K is right', (std, scale) => {
  // other blobs per spread (the same seed would give scaled copies: the estimate is scale-equivariant)
  for (const seed of [10 * std, 10 * std + 1]) {
    const { data, options, truth } = federation(seed, std, scale);
    const r = fedGEM(data, { client: options, rounds: 10 });
    const e = r.varianceEstimate!;
    expect(Math.abs(e.variance / truth - 1)).toBeLessThan(0.06);
    expect(e.variance).toBe(e.sumSquares / e.degreesOfFreedom);
    expect(e.clients).toHaveLength(10);
    expect(r.estimatedK).toBe(10);
    // every client used the estimate
    for (const c of r.clients) expect(c.variance).toBe(e.variance);
    // one more round than with a known variance: the spreads
    expect(r.traffic.rounds).toBe(12);
    expect(r.federation.history[0]!.kind).toBe('fedgem/spread');
    for (const c of r.clients) c.dispose();
  }
});

test('the federated estimate is the central pooled within-cluster estimate over the same local clusterings', () => {
  const { data, options } = federation(3, 1.5, true);
  const r = fedGEM(data, { client: options, rounds: 2 });
  // the clusterings the clients made: k-means at their own K_c from their seed (scikit-learn's 10 runs)
  const rows: number[][] = [];
  const cluster: number[] = [];
  let offset = 0;
  data.forEach((x, c) => {
    const labels = new KMeans({ nClusters: options[c]!.nComponents, seed: options[c]!.seed }).fit(x).labels;
    x.toRows().forEach((row, i) => {
      rows.push(Array.from(row));
      cluster.push(offset + labels[i]!);
    });
    offset += options[c]!.nComponents;
  });
  // pooled centrally: every row against the mean of its (client, local cluster)
  const d = 2;
  const sums = new Map<number, { n: number; s: number[] }>();
  rows.forEach((row, i) => {
    const t = sums.get(cluster[i]!) ?? { n: 0, s: [0, 0] };
    t.n += 1;
    row.forEach((v, j) => (t.s[j]! += v));
    sums.set(cluster[i]!, t);
  });
  let ss = 0;
  rows.forEach((row, i) => {
    const t = sums.get(cluster[i]!)!;
    row.forEach((v, j) => (ss += (v - t.s[j]! / t.n) ** 2));
  });
  const dof = (rows.length - offset) * d;
  const e = r.varianceEstimate!;
  expect(e.degreesOfFreedom).toBe(dof);
  expect(Math.abs(e.sumSquares - ss)).toBeLessThanOrEqual(1e-9 * ss);
  expect(Math.abs(e.variance - ss / dof)).toBeLessThanOrEqual(1e-9 * e.variance);
  // and each client's share is its spread()
  const sum = r.clients.reduce((a, c) => a + c.spread().sumSquares, 0);
  expect(Math.abs(sum - e.sumSquares)).toBeLessThanOrEqual(1e-12 * sum);
  for (const c of r.clients) c.dispose();
});

test('the trap of the issue: standardized unit-variance blobs give the right K with the estimate, not with the known sigma^2 = 1', () => {
  const source = { kind: 'blobs' as const, blobs: { nClusters: 10, nFeatures: 2, samplesPerCluster: 200, minDistance: 6 } };
  const config = { clients: 10, clustersPerClient: [3, 6] as [number, number], scale: 'standard' as const, central: 'none' as const, repeats: 3, seed: 0 };
  const estimated = runFedGEMExperiment(source, config);
  expect(estimated.summary.kCorrect).toBe(3);
  for (const run of estimated.runs) expect(run.varianceEstimate!.variance).toBeLessThan(0.05);
  // sigma^2 = 1 given: the components are far wider than the standardized clusters
  const given = runFedGEMExperiment(source, { ...config, variance: 1 });
  expect(given.summary.kCorrect).toBe(0);
  expect(given.runs.every((r) => r.varianceEstimate === undefined)).toBe(true);
});

test('the protocol by hand: SPREAD first, then the estimate with every ROUND and FINISH; a given variance or none', () => {
  const rows = (c: number) => Matrix.fromRows(Array.from({ length: 20 }, (_, i) => [(i % 2) * 10 + c + (i % 5) * 0.1]));
  const a = new FedGEMClient('a', rows(0), { nComponents: 2, seed: 1 });
  const b = new FedGEMClient('b', rows(0.2), { nComponents: 2, seed: 2 });
  const own = new FedGEMClient('own', rows(0.1), { nComponents: 2, variance: 4, seed: 3 });
  try {
    const s = new FedGEMServer({ nFeatures: 1, rounds: 1 });
    const c1 = ctx(1, ['a', 'b', 'own']);
    const first = s.configure(c1);
    expect([...first.values()].map((m) => [m.kind, m.payload])).toEqual(Array(3).fill(['fedgem/spread', {}]));
    // a client without a variance cannot take local steps yet
    expect(a.variance).toBeUndefined();
    expect(() => a.localRound()).toThrow(NotFittedError);
    expect(() => a.predict(rows(0))).toThrow(/has no variance yet/);
    expect(() => a.respond(readRequest(message('fedgem/round', 'server', 1, {})))).toThrow(InvalidMessageError);
    expect(() => a.respond(readRequest(message('fedgem/round', 'server', 1, {})))).toThrow(/has no variance of its own and the server sent none/);
    expect(() => a.respond(readRequest(message('fedgem/round', 'server', 1, { variance: -1 })))).toThrow(/the server's variance is -1/);
    const replies = new Map([...first].map(([id, req]) => [id, s.accept(readReply(req, [a, b, own].find((x) => x.id === id)!.respond(readRequest(req))!), req)]));
    s.aggregate(c1, replies, []);
    const e = s.estimatedVariance!;
    // the rows: two clusters per client, 10 apart, each row 0..0.4 off its cluster's first row
    const spread = [a, b, own].map((x) => x.spread());
    expect(spread.map((x) => x.dof)).toEqual([18, 18, 18]);
    expect(e.sumSquares).toBeCloseTo(spread.reduce((t, x) => t + x.sumSquares, 0), 12);
    expect(e.variance).toBeCloseTo(e.sumSquares / 54, 15);
    expect(e.clients).toEqual(['a', 'b', 'own']);
    const c2 = ctx(2, ['a', 'b', 'own']);
    const second = s.configure(c2);
    for (const m of second.values()) expect(m).toMatchObject({ kind: 'fedgem/round', payload: { variance: e.variance } });
    for (const x of [a, b, own]) x.respond(readRequest(second.get(x.id)!));
    expect(a.variance).toBe(e.variance);
    expect(b.variance).toBe(e.variance);
    // a client with its own variance keeps it
    expect(own.variance).toBe(4);
    // a given number is sent without the spreads; 'clients' sends none
    const given = new FedGEMServer({ nFeatures: 1, rounds: 0, variance: 2.5 });
    expect([...given.configure(c1).values()].map((m) => [m.kind, (m.payload as { variance?: number }).variance])).toEqual(Array(3).fill(['fedgem/finish', 2.5]));
    expect(given.estimatedVariance).toBeUndefined();
    const none = new FedGEMServer({ nFeatures: 1, rounds: 2, variance: 'clients' });
    expect([...none.configure(c1).values()].map((m) => [m.kind, 'variance' in (m.payload as object)])).toEqual(Array(3).fill(['fedgem/round', false]));
    // the final upload needs no variance
    const late = new FedGEMClient('late', rows(0), { nComponents: 2, seed: 4 });
    expect(late.respond(readRequest(message('fedgem/finish', 'server', 1, {})))!.kind).toBe('fedgem/final');
    late.dispose();
    // the options: a positive number, 'estimate' or 'clients'
    for (const bad of [0, -1, NaN, Infinity, 'known', null]) expect(() => new FedGEMServer({ nFeatures: 1, variance: bad as never })).toThrow(InvalidParameterError);
  } finally {
    for (const x of [a, b, own]) x.dispose();
  }
});

test('no spread, or none to be had: a typed error, not a variance of 0 or NaN', () => {
  const s = new FedGEMServer({ nFeatures: 1, rounds: 1 });
  const c = ctx(1, ['a']);
  s.configure(c);
  expect(() => s.aggregate(c, new Map(), [])).toThrow(FederationError);
  const t = new FedGEMServer({ nFeatures: 1, rounds: 1 });
  const req = t.configure(c).get('a')!;
  const zero = t.accept(readReply(req, message('fedgem/spread-sums', 'a', 1, { sumSquares: 0, dof: 4 })), req);
  expect(() => t.aggregate(c, new Map([['a', zero]]), [])).toThrow(InvalidDataError);
  // rows on their cluster centers: the client reports 0, honestly
  const flat = new FedGEMClient('flat', Matrix.fromRows([[0], [0], [5], [5]]), { nComponents: 2, meansInit: [0, 5] });
  expect(flat.spread()).toEqual({ sumSquares: 0, dof: 2 });
  flat.dispose();
});

test('bad spread replies are refused, their client excluded, and the estimate is the one without it', () => {
  const { data, options } = federation(5, 1, false);
  const ids = [0, 1, 2, 3, 4, 5];
  const spreadEdit = (f: (p: { sumSquares: number; dof: number; [k: string]: unknown }) => void) => (m: Message) => (m.kind === 'fedgem/spread-sums' ? editPayload(f)(m) : m);
  const runWith = (members: number[], edit?: (m: Message) => Message) => {
    const roles = members.map((i) => new Recording(new FedGEMClient(String(i), data[i]!, options[i]!), i === 3 ? edit : undefined));
    const server = new FedGEMServer({ nFeatures: 2, rounds: 2 });
    try {
      const r = runFederationSync(server, roles);
      return { r, received: roles.map((c) => c.received.length) };
    } finally {
      for (const c of roles) c.inner.dispose();
    }
  };
  const without = runWith([0, 1, 2, 4, 5]);
  // the server's model JSON (fedmix server --out) carries the estimate
  expect((resultJson('fedgem', without.r.model) as { varianceEstimate: unknown }).varianceEstimate).toEqual(without.r.model.varianceEstimate);
  const cases: Array<[(m: Message) => Message, RegExp]> = [
    [spreadEdit((p) => (p.sumSquares = -1)), /sumSquares is -1; a sum of squares must be non-negative/],
    [spreadEdit((p) => (p.sumSquares = MAX_SPREAD * p.dof * 2)), /per degree of freedom, more than the 1e\+100 accepted/],
    [spreadEdit((p) => (p.dof += 1)), /not a multiple of this federation's 2 features/],
    [spreadEdit((p) => (p.dof = 2 ** 52)), /dof is 4503599627370496; at most/],
    [spreadEdit((p) => (p.dof = 0)), /dof is 0; it must be a whole number >= 1/],
    [spreadEdit((p) => (p.sumSquares = 'a lot' as never)), /sumSquares is "a lot"; it must be a finite number/],
    [spreadEdit((p) => (p.weights = [1])), /weights/],
    [(m) => (m.kind === 'fedgem/spread-sums' ? { ...m, payload: { ...(m.payload as object), sumSquares: NaN } } : m), /cannot send NaN/],
  ];
  for (const [edit, reason] of cases) {
    const bad = runWith(ids, edit);
    expect(bad.r.excluded).toEqual([{ client: '3', round: 1, reason: expect.stringMatching(reason) }]);
    // asked once, never again; the estimate and the model are those of the run without it
    expect(bad.received[3]).toBe(1);
    expect(bad.r.model.varianceEstimate).toEqual(without.r.model.varianceEstimate);
    expect(bad.r.model.globalCenters).toEqual(without.r.model.globalCenters);
    expect([...bad.r.model.memberships]).toEqual([...without.r.model.memberships]);
  }
  // the estimate is additive: a group reply (users > 1) is checked against the rows its users may have
  const s = new FedGEMServer({ nFeatures: 2, rounds: 1 });
  const c = ctx(1, ['g']);
  const req = s.configure(c).get('g')!;
  const big = 2 ** 48 * 2 + 2;
  expect(() => s.accept(readReply(req, message('fedgem/spread-sums', 'g', 1, { sumSquares: 1, dof: big })), req)).toThrow(InvalidMessageError);
  expect(() => s.accept(readReply(req, message('fedgem/spread-sums', 'g', 1, { sumSquares: 1, dof: big }, 2)), req)).not.toThrow();
});

test('a client with its own variance keeps it and still reports its spread; all variances given: no spread round unless asked', () => {
  const heap = wasm().fm_heap_in_use();
  const { data, options } = federation(6, 1, false);
  const r = fedGEM(data, { client: options.map((o, i) => (i === 0 ? { ...o, variance: 1 } : o)), rounds: 3 });
  // a client with its own variance still reports its spread: the estimate pools all ten
  expect(r.varianceEstimate!.clients).toHaveLength(10);
  expect(r.clients.find((c) => c.id === '0')!.variance).toBe(1);
  expect(r.clients.find((c) => c.id === '1')!.variance).toBe(r.varianceEstimate!.variance);
  for (const c of r.clients) c.dispose();
  // with every variance given, no spread round and no estimate
  const known = fedGEM(data, { client: options.map((o) => ({ ...o, variance: 1 })), rounds: 3 });
  expect(known.varianceEstimate).toBeUndefined();
  expect(known.traffic.rounds).toBe(4);
  for (const c of known.clients) c.dispose();
  // unless the server is told to estimate
  const asked = fedGEM(data, { client: options.map((o) => ({ ...o, variance: 1 })), rounds: 3, server: { variance: 'estimate' } });
  expect(asked.varianceEstimate!.variance).toBeGreaterThan(0.9);
  expect(asked.traffic.rounds).toBe(5);
  for (const c of asked.clients) c.dispose();
  expect(wasm().fm_heap_in_use()).toBe(heap);
});
