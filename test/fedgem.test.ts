/**
 * FedGEM on the federation runtime: the one-call run (recovery, traffic in
 * both encodings, tuning, privacy), the protocol each client sees, the server
 * role driven by hand (ROUND -> BALLS, FINISH -> FINAL, CANDIDATES ->
 * SILHOUETTES, the RESULT notification), bad clients through the runtime, and
 * the client's own checks.
 */
import { beforeAll, expect, test, vi } from 'vitest';
import {
  adjustedRandScore,
  centerNoiseStd,
  ClientHost,
  decodeMessage,
  encodeMessage,
  FEDGEM_PROTOCOL,
  fedGEM,
  FedGEMClient,
  FedGEMServer,
  GaussianMixture,
  init,
  InProcessTransport,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  makeBlobs,
  Matrix,
  message,
  partition,
  PHI_GRID,
  runFederationSync,
  type Encoding,
  type Failure,
  type Message,
  type RoundContext,
  type ServerRole,
} from '../ts/index.js';
import { BALLS, RESULT, SILHOUETTES } from '../ts/federated/fedgem/messages.js';
import { runFedGEMExperiment } from '../ts/experiments/fedgem/run.js';
import { wasm } from '../ts/wasm/loader.js';
import { Recording } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** 10 well-separated clusters dealt to 10 clients holding 3 to 6 each (the setting). */
function federation(seed: number, clusters = 10, clients = 10) {
  const b = makeBlobs({ nClusters: clusters, nFeatures: 2, samplesPerCluster: 200, minDistance: 6, seed });
  const p = partition.quantity(Array.from(b.labels), { clients, alpha: [3, 6], seed });
  const data = p.indices.map((rows) => b.X.selectRows(rows));
  const truth = p.indices.map((rows) => Array.from(rows, (i) => b.labels[i]!));
  // the blobs' known variance (the paper's setting); tests of the estimate leave it out
  const options = p.classSets.map((set, c) => ({ nComponents: set.length, variance: 1, seed: seed * 100 + c }));
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

/** A request read through its declared type, as the runtime's ClientHost reads it before respond(). */
const readRequest = (m: Message) => FEDGEM_PROTOCOL.exchanges.get(m.kind)!.request.read(m);
/** A reply read through the type its request pairs with, as the runtime reads it before accept(). */
const readReply = (request: Message, reply: Message) => FEDGEM_PROTOCOL.exchanges.get(request.kind)!.reply!.read(reply);
const ctx = (round: number, clients: string[]): RoundContext => ({ round, clients, available: clients });

/** A server's aggregate() as the runtime calls it (the round, the accepted replies, the round's failures). */
function aggregate<A>(server: ServerRole<A>, round: RoundContext, accepted: ReadonlyMap<string, A>, failures: Failure[]): unknown {
  return server.aggregate(round, accepted, failures);
}

/** A server's accept() as the runtime calls it (the role contract: the reply, the request it answers, the round). */
function accept<A>(server: ServerRole<A>, reply: Message, request: Message, round: RoundContext): A {
  return server.accept(reply, request, round);
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
  // traffic: 8 rounds and the final upload are communication rounds (a request and an upload per client);
  // the result goes down to each client as a notification
  expect(r.traffic.rounds).toBe(9);
  expect(r.traffic.messagesUp).toBe(10 * 9);
  expect(r.traffic.messagesDown).toBe(10 * 10);
  expect(r.federation.history.map((h) => h.kind)).toEqual([...Array(8).fill('fedgem/round'), 'fedgem/finish', 'fedgem/result']);
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

test.each(['binary', 'json'] as const)('%s: each client sees ROUND, FINISH, CANDIDATES and RESULT; the counted bytes are those of the messages', (encoding: Encoding) => {
  const { data, options } = federation(12, 6, 5);
  const roles = data.map((x, i) => new Recording(new FedGEMClient(String(i), x, options[i]!)));
  const server = new FedGEMServer({ nFeatures: 2, variance: 'clients', rounds: 3, phi: [1, 2] });
  const r = runFederationSync(server, new InProcessTransport(roles, { encoding }));
  for (const role of roles) {
    expect(role.received.map((m) => m.kind)).toEqual(['fedgem/round', 'fedgem/round', 'fedgem/round', 'fedgem/finish', 'fedgem/candidates', 'fedgem/result']);
    expect(role.sent.map((m) => m.kind)).toEqual(['fedgem/balls', 'fedgem/balls', 'fedgem/balls', 'fedgem/final', 'fedgem/silhouettes']);
    // the first round carries no centers; later requests carry the centers of the last update
    const centers = role.received.slice(0, 4).map((m) => (m.payload as { centers?: Float64Array }).centers);
    expect(centers[0]).toBeUndefined();
    for (const c of centers.slice(1)) expect(c).toHaveLength(role.inner.nComponents * 2);
    // the result is the client's own: its memberships, which it takes
    expect(Array.from((role.received[5]!.payload as { memberships: Int32Array }).memberships)).toEqual(Array.from(r.model.memberships.get(role.id)!));
    expect(role.inner.memberships).toEqual(r.model.memberships.get(role.id));
  }
  // 3 rounds, the final upload and the candidates are communication rounds; the result is a notification
  expect(r.traffic.rounds).toBe(5);
  expect(r.traffic.messagesUp).toBe(5 * 5);
  expect(r.traffic.messagesDown).toBe(5 * 6);
  // as they travel: every message carries the run's id (the client's host stamps its replies)
  const bytes = (ms: Message[]) => ms.reduce((a, m) => a + encodeMessage({ ...m, run: r.run }, encoding).length, 0);
  expect(r.traffic.bytesUp).toBe(bytes(roles.flatMap((c) => c.sent)));
  expect(r.traffic.bytesDown).toBe(bytes(roles.flatMap((c) => c.received)));
  for (const c of roles) expect(r.clientTraffic.get(c.id)).toEqual({ bytesUp: bytes(c.sent), bytesDown: bytes(c.received), messagesUp: 5, messagesDown: 6 });
  // the one-call form is this run
  const same = fedGEM(data, { client: options, rounds: 3, phi: [1, 2], encoding });
  expect(same.globalCenters).toEqual(r.model.globalCenters);
  expect([...same.memberships]).toEqual([...r.model.memberships]);
  expect(same.phi).toBe(r.model.phi);
  expect(same.traffic).toEqual(r.traffic);
  for (const c of same.clients) c.dispose();
  for (const role of roles) role.inner.dispose();
});

test('the bisection radius agrees with the closed form through the client API', () => {
  const { data, options } = federation(3);
  const closed = new FedGEMClient('a', data[0]!, { ...options[0]!, radius: 'closed-form' });
  const bisected = new FedGEMClient('b', data[0]!, { ...options[0]!, radius: 'bisection', bisectionIterations: 80 });
  for (let round = 0; round < 3; round++) {
    const x = closed.localRound();
    const y = bisected.localRound();
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
    const x = plain.localRound().maximizers;
    const y = noisy.localRound().maximizers;
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

/** A BALLS upload of two 1-D components, edited by `patch`, as it arrives in round 1. */
function balls(from: string, patch: Record<string, unknown> = {}): Message {
  return message('fedgem/balls', from, 1, { nComponents: 2, nFeatures: 1, maximizers: [0, 5], radii: [0.5, 0.5], counts: [10, 10], nSamples: 20, ...patch });
}

/** A FINAL upload of two 1-D components. */
const final = (from: string, centers: number[], patch: Record<string, unknown> = {}) =>
  message('fedgem/final', from, 1, { nComponents: 2, nFeatures: 1, centers, counts: [10, 10], nSamples: 20, ...patch });

/** One training round by hand: configure, read and accept each upload (refusals collected), aggregate; then the next requests. */
function trainRound(server: FedGEMServer, uploads: Message[], round = 1) {
  const c = ctx(round, uploads.map((m) => m.from));
  const reqs = server.configure(c);
  const accepted = new Map<string, ReturnType<FedGEMServer['accept']>>();
  const refused = new Map<string, Error>();
  for (const m of uploads) {
    try {
      accepted.set(m.from, accept(server, readReply(reqs.get(m.from)!, m), reqs.get(m.from)!, c));
    } catch (e) {
      refused.set(m.from, e as Error);
    }
  }
  const summary = aggregate(server, c, accepted, []);
  const next = server.configure(ctx(round + 1, uploads.map((m) => m.from)));
  const centers = new Map([...next].map(([id, m]) => [id, (m.payload as { centers?: Float64Array }).centers]));
  return { reqs, refused, summary, centers };
}

test.each([
  ['a NaN radius', { radii: [NaN, 0.5] }, /^radii\[0\] is NaN; values must be finite numbers$/],
  ['a negative radius', { radii: [-1, 0.5] }, /radii\[0\] is -1; a radius must be non-negative/],
  ['another dimension', { nFeatures: 2, maximizers: [0, 0, 5, 5] }, /its centers have 2 features but this federation has 1/],
  ['duplicate centers', { maximizers: [3, 3] }, /components 0 and 1 have the same center/],
  ['one point per cluster', { nSamples: 2, counts: [1, 1] }, /at least two rows per component/],
  ['counts that miss rows', { counts: [10, 5] }, /counts sum to 15, not to its 20 rows/],
  ['an infinite center', { maximizers: [Infinity, 5] }, /maximizers\[0\] is Infinity; values must be finite/],
  ['a fractional component count', { nComponents: 1.5 }, /nComponents is 1\.5; it must be a whole number >= 1/],
  ['a field it does not declare', { weights: [0.5, 0.5] }, /weights/],
])('a client reporting %s is refused by accept() and changes nothing', (_what, patch, error) => {
  const clean = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const dirty = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const good = [balls('0'), balls('1', { maximizers: [0.4, 5.6] })];
  const a = trainRound(clean, good);
  const b = trainRound(dirty, [...good, balls('bad', patch)]);
  expect([...b.refused.keys()]).toEqual(['bad']);
  expect(b.refused.get('bad')).toBeInstanceOf(InvalidMessageError);
  expect(b.refused.get('bad')!.message).toMatch(error);
  // the update is exactly the one without the bad client (the runtime leaves it out of the rounds after)
  expect(b.summary).toEqual(a.summary);
  expect(b.centers.get('0')).toEqual(a.centers.get('0'));
  expect(b.centers.get('1')).toEqual(a.centers.get('1'));
  expect(b.centers.get('bad')).toBeUndefined();
});

test('through the runtime a bad upload excludes its client; the federation is the one without it', () => {
  const { data, options } = federation(13, 6, 6);
  const bump = (f: (p: Record<string, any>) => void) => (m: Message) => {
    if (m.kind !== 'fedgem/balls') return m;
    const p = JSON.parse(encodeMessage(m)).payload;
    f(p);
    return message(m.kind, m.from, m.round, p);
  };
  const cases: Array<[(m: Message) => Message, RegExp, 'invalid' | 'refused']> = [
    [bump((p) => (p.radii[0] = -1)), /^3: radii\[0\] is -1; a radius must be non-negative/, 'invalid'],
    [bump((p) => (p.counts[0] += 5)), /^3: counts sum to [\d.]+, not to its \d+ rows/, 'invalid'],
    [bump((p) => (p.nFeatures = 3)), /^3: its centers have 3 features but this federation has 2/, 'invalid'],
    [(m) => (m.kind === 'fedgem/balls' ? { ...m, kind: 'fedgem/final' } : m), /^3: expected a fedgem\/balls message, got fedgem\/final/, 'invalid'],
    [(m) => (m.kind === 'fedgem/balls' ? { ...m, payload: { ...(m.payload as object), radii: (m.payload as { radii: Float64Array }).radii.map(() => NaN) } } : m), /^3: cannot send NaN/, 'refused'],
  ];
  const runWith = (ids: number[], edit?: (m: Message) => Message, onInvalid: 'exclude' | 'fail' = 'exclude') => {
    const roles = ids.map((i) => new Recording(new FedGEMClient(String(i), data[i]!, options[i]!), i === 3 ? edit : undefined));
    const server = new FedGEMServer({ nFeatures: 2, variance: 'clients', rounds: 3 });
    try {
      const r = runFederationSync(server, roles, { onInvalid });
      return { r, history: server.history, received: roles.map((c) => c.received.length) };
    } finally {
      for (const c of roles) c.inner.dispose();
    }
  };
  const without = runWith([0, 1, 2, 4, 5]);
  for (const [edit, reason, kind] of cases) {
    const bad = runWith([0, 1, 2, 3, 4, 5], edit);
    expect(bad.r.excluded).toEqual([{ client: '3', round: 1, reason: expect.stringMatching(reason) }]);
    expect(bad.r.failures.map((f) => f.kind)).toEqual([kind]);
    // asked once, never again, and given no result
    expect(bad.received[3]).toBe(1);
    expect(bad.r.model.memberships.has('3')).toBe(false);
    expect(bad.r.model.globalCenters).toEqual(without.r.model.globalCenters);
    expect([...bad.r.model.memberships]).toEqual([...without.r.model.memberships]);
    expect(bad.history).toEqual(without.history);
    // under onInvalid 'fail' the run throws the client's error
    expect(() => runWith([0, 1, 2, 3, 4, 5], edit, 'fail')).toThrow(reason);
  }
});

test('a client excluded while phi is tuned takes its final upload with it', () => {
  const { data, options } = federation(14, 6, 5);
  const roles = data.map((x, i) => new Recording(new FedGEMClient(String(i), x, options[i]!), i === 2 ? (m) => (m.kind === 'fedgem/silhouettes' ? { ...m, payload: { values: [0.5], nValidation: 10 } } : m) : undefined));
  const server = new FedGEMServer({ nFeatures: 2, variance: 'clients', rounds: 2, phi: [1, 2] });
  const r = runFederationSync(server, roles);
  expect(r.excluded).toEqual([{ client: '2', round: 4, reason: '2: values must hold one silhouette per candidate (2)' }]);
  expect(r.model.memberships.has('2')).toBe(false);
  expect([...r.model.memberships.keys()]).toEqual(['0', '1', '3', '4']);
  expect(roles[2]!.received.map((m) => m.kind)).toEqual(['fedgem/round', 'fedgem/round', 'fedgem/finish', 'fedgem/candidates']);
  for (const c of roles) c.inner.dispose();
});

test('a zero radius is accepted: that component has stopped moving, and others come to it', () => {
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const { centers } = trainRound(s, [balls('0', { radii: [0, 0.5] }), balls('1', { maximizers: [0.4, 9], radii: [0.5, 0.5] })]);
  // component 0 of client 0 stays at 0; client 1's first component meets it there (clipped point = 0)
  expect(Array.from(centers.get('0')!)).toEqual([0, 5]);
  expect(centers.get('1')![0]).toBeCloseTo(0.2, 15);
  expect(s.history[0]!.overlaps).toBe(1);
});

test('the protocol by hand: ROUND without centers first, FINISH with them, then the merge and the RESULT notification', () => {
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const c1 = ctx(1, ['0', '1']);
  const first = s.configure(c1);
  expect([...first.values()].map((m) => [m.kind, m.round, (m.payload as { centers?: unknown }).centers])).toEqual([
    ['fedgem/round', 1, undefined],
    ['fedgem/round', 1, undefined],
  ]);
  aggregate(s, c1, new Map([['0', accept(s, readReply(first.get('0')!, balls('0')), first.get('0')!, c1)], ['1', accept(s, readReply(first.get('1')!, balls('1', { maximizers: [0.4, 5.6] })), first.get('1')!, c1)]]), []);
  const c2 = ctx(2, ['0', '1']);
  const fin = s.configure(c2);
  expect([...fin.values()].map((m) => m.kind)).toEqual(['fedgem/finish', 'fedgem/finish']);
  expect(Array.from((fin.get('0')!.payload as { centers: Float64Array }).centers)).toHaveLength(2);
  const accepted = new Map([
    ['0', accept(s, readReply(fin.get('0')!, final('0', [0, 6])), fin.get('0')!, c2)],
    ['1', accept(s, readReply(fin.get('1')!, final('1', [0.1, 6.1])), fin.get('1')!, c2)],
  ]);
  aggregate(s, c2, accepted, []);
  expect(s.clients).toEqual(['0', '1']);
  expect(s.done).toBe(false);
  // the result goes to the clients that finished and are still there, stamped with the last round
  const result = s.configure(ctx(3, ['1']));
  expect([...result.keys()]).toEqual(['1']);
  expect(result.get('1')!.kind).toBe('fedgem/result');
  expect(result.get('1')!.round).toBe(2);
  expect(s.done).toBe(true);
  expect(s.result().estimatedK).toBe(2);
  expect(() => RESULT.read(result.get('1')!)).not.toThrow();
  // the one thing a server can say of nothing to merge
  const empty = new FedGEMServer({ nFeatures: 1 });
  expect(() => empty.merge(1)).toThrow(/no final upload/);
  expect(() => empty.merge(0)).toThrow(InvalidParameterError);
  expect(() => empty.result()).toThrow(/no result yet/);
});

test('a final upload with zero spread between its centers cannot be merged, and a bad server message is refused', () => {
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 0 });
  const c = ctx(1, ['0', '1', '2']);
  const reqs = s.configure(c);
  expect([...reqs.values()].every((m) => m.kind === 'fedgem/finish')).toBe(true);
  expect(() => accept(s, readReply(reqs.get('0')!, final('0', [0, 0])), reqs.get('0')!, c)).toThrow(/same center/);
  const accepted = new Map([
    ['1', accept(s, readReply(reqs.get('1')!, final('1', [0, 6])), reqs.get('1')!, c)],
    ['2', accept(s, readReply(reqs.get('2')!, final('2', [0.1, 6.1])), reqs.get('2')!, c)],
  ]);
  aggregate(s, c, accepted, []);
  const m = s.merge(2);
  expect(m.estimatedK).toBe(2);
  expect(Array.from(m.globalCenters)).toEqual([0.05, 6.05]);
  expect(m.radii.get('1')).toBeCloseTo((2 * 6) / Math.sqrt(20), 12);
  expect(s.result().phi).toBe(1);
  // the client's checks of what the server sends
  const { data, options } = federation(6);
  const x = new FedGEMClient('x', data[0]!, options[0]!);
  const k = x.nComponents;
  expect(() => x.respond(readRequest(message('fedgem/round', 'server', 1, { centers: [1, 2] })))).toThrow(InvalidMessageError);
  expect(() => x.respond(readRequest(message('fedgem/round', 'server', 1, { centers: [1, 2] })))).toThrow(`centers has 2 values; expected ${2 * k}`);
  // a kind it does not answer: its host refuses it, naming the client
  const host = new ClientHost(x);
  expect(host.answerSync(message('fedgem/centers', 'server', 1, { centers: [1, 2] }))!.payload).toEqual({
    reason: 'x: a FedGEM client does not answer fedgem/centers messages',
    code: 'INVALID_MESSAGE',
  });
  expect(() => readRequest(message('fedgem/candidates', 'server', 1, { candidates: [{ phi: 1, estimatedK: 0.5, centers: [] }] }))).toThrow(
    /candidates\[0\]\.estimatedK is 0\.5; it must be a whole number >= 1/,
  );
  expect(() => x.respond(readRequest(message('fedgem/candidates', 'server', 1, { candidates: [{ phi: 1, estimatedK: 2, centers: [0, 0, 1] }] })))).toThrow(InvalidMessageError);
  expect(() => x.respond(readRequest(message('fedgem/result', 'server', 1, { phi: 1, estimatedK: 2, globalCenters: [0, 0, 1, 1], memberships: [0] })))).toThrow(
    /one membership in \[0, 2\) per component/,
  );
  const before = x.means;
  expect(() => readRequest(message('fedgem/round', 'server', 1, { centers: Array.from(before, () => NaN) }))).toThrow(/centers\[0\] is NaN; values must be finite numbers/);
  expect(host.answerSync(message('fedgem/round', 'server', 1, { centers: Array.from(before, () => null) }))!.kind).toBe('fedmix/refusal');
  expect(x.means).toEqual(before);
  x.dispose();
});

test('the run continues without clients that fail or send bad data', () => {
  const { data, options } = federation(7);
  // client 0 has too few rows for its components
  const bad = [data[0]!.selectRows([0, 1, 2]), data[1]!];
  const r = fedGEM([...bad, ...data.slice(2)], { client: options, rounds: 4 });
  expect(r.excluded.map((e) => e.client).sort()).toEqual(['0']);
  // a client that cannot be created never joins (round 0)
  expect(r.excluded.find((e) => e.client === '0')).toEqual({ client: '0', round: 0, reason: expect.stringMatching(/creating the client failed: .*at least two rows per component/) });
  expect(r.clients.map((c) => c.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
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
  expect(() => c.localRound()).toThrow(/disposed/);
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

test('an upload is checked as its text would be, and nothing unreadable throws a TypeError', () => {
  const getter = { ...balls('g'), payload: { get nComponents(): number { throw new TypeError('boom'); } } };
  const cases: [unknown, RegExp][] = [
    [null, /must be a JSON object/],
    [42, /must be a JSON object/],
    [{ ...balls('v'), version: 2 }, /version 2 is not supported/],
    [{ ...balls('n'), round: -1 }, /non-negative integer "round"/],
    [{ ...balls('p'), protocol: 'other' }, /not a fedmix message/],
    [getter, /the payload could not be read: boom/],
    [balls('b', { radii: [1n, 0.5] }), /^radii\[0\] is 1n; values must be finite numbers$/],
    [balls('y', { maximizers: [Symbol('x'), 5] }), /^maximizers\[0\] is Symbol\(x\); values must be finite numbers$/],
  ];
  for (const [input, reason] of cases) {
    let thrown: unknown;
    try {
      BALLS.read(input as Message);
    } catch (e) {
      thrown = e;
    }
    expect(thrown, reason.source).toBeInstanceOf(InvalidMessageError);
    expect((thrown as Error).message).toMatch(reason);
  }
  // as text: the same checks after the JSON is read
  expect(() => decodeMessage('not json')).toThrow(/not valid JSON/);
  expect(() => decodeMessage(JSON.stringify({ ...balls('p'), protocol: 'other' }))).toThrow(/not a fedmix message/);
  expect(BALLS.read(decodeMessage(encodeMessage(balls('ok')))).payload).toEqual({ ...balls('ok').payload as object, maximizers: new Float64Array([0, 5]), radii: new Float64Array([0.5, 0.5]), counts: new Float64Array([10, 10]) });
});

test('the server keeps copies of what it received', () => {
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 0, phi: [1, 2] });
  const c = ctx(1, ['0', '1']);
  const reqs = s.configure(c);
  const centers = [0, 6];
  const accepted = new Map([
    ['0', accept(s, readReply(reqs.get('0')!, final('0', centers)), reqs.get('0')!, c)],
    ['1', accept(s, readReply(reqs.get('1')!, final('1', [0.1, 6.1])), reqs.get('1')!, c)],
  ]);
  centers[1] = 100;
  aggregate(s, c, accepted, []);
  expect(Array.from(s.merge(1).globalCenters)).toEqual([0.05, 6.05]);
  const c2 = ctx(2, ['0', '1']);
  const offer = s.configure(c2);
  expect(offer.get('0')!.kind).toBe('fedgem/candidates');
  expect((offer.get('0')!.payload as { candidates: { phi: number }[] }).candidates.map((x) => x.phi)).toEqual([1, 2]);
  const values = [0.9, 0.5];
  const sil = new Map([
    ['0', accept(s, readReply(offer.get('0')!, message('fedgem/silhouettes', '0', 2, { values, nValidation: 10 })), offer.get('0')!, c2)],
    ['1', accept(s, readReply(offer.get('1')!, message('fedgem/silhouettes', '1', 2, { values: [0.9, 0.5], nValidation: 10 })), offer.get('1')!, c2)],
  ]);
  values[0] = -1;
  values[1] = 1;
  aggregate(s, c2, sil, []);
  const out = s.result();
  expect(out.phi).toBe(1);
  expect(out.phiScores!.map((x) => x.score)).toEqual([0.9, 0.5]);
});

test('the one-call fedGEM refuses a client with other features before the run, naming it and both column counts', () => {
  const { data, options } = federation(8);
  const wide = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i % 5, i % 7, 1]));
  expect(() => fedGEM([wide, ...data.slice(1)], { client: options, rounds: 2 })).toThrow(InvalidDataError);
  expect(() => fedGEM([wide, ...data.slice(1)], { client: options, rounds: 2 })).toThrow('client 0 (clientData[0]) has 3 columns but client 1 (clientData[1]) has 2');
  // a server is given its dimension; it infers none
  expect(() => new FedGEMServer({} as never)).toThrow(/nFeatures must be an integer in \[1, 1048576\]/);
});

test('sizes past the caps are refused: components, rows, validation rows', () => {
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const k = 4097;
  const many = { nComponents: k, maximizers: Array.from({ length: k }, (_, i) => i), radii: new Array(k).fill(0.1), counts: new Array(k).fill(2), nSamples: 2 * k };
  // at the cap, a late duplicate is found however far apart the two are
  const at = { ...many, nComponents: 4096, maximizers: Array.from({ length: 4096 }, (_, i) => (i === 4000 ? 3 : i)), radii: new Array(4096).fill(0.1), counts: new Array(4096).fill(2), nSamples: 8192 };
  const huge = 2 ** 48 + 2;
  const { refused } = trainRound(s, [balls('k', many), balls('d', at), balls('n', { nSamples: huge, counts: [huge / 2, huge / 2] }), balls('ok')]);
  expect([...refused].map(([id, e]) => [id, e.message])).toEqual([
    ['k', 'nComponents is 4097; a client may upload at most 4096 components'],
    ['d', 'components 3 and 4000 have the same center; a client\'s components must differ'],
    ['n', 'nSamples is 281474976710658; at most 2^48 rows per client are accepted'],
  ]);
  // validation rows: at most 2^40
  const t = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 0, phi: [1, 2] });
  const c = ctx(1, ['0', '1']);
  const fin = t.configure(c);
  aggregate(t, c, new Map(['0', '1'].map((id, i) => [id, accept(t, readReply(fin.get(id)!, final(id, i ? [0.1, 6.1] : [0, 6])), fin.get(id)!, c)])), []);
  const c2 = ctx(2, ['0', '1']);
  const offer = t.configure(c2);
  const sil = (id: string, nValidation: number) => readReply(offer.get(id)!, message('fedgem/silhouettes', id, 2, { values: [0.9, 0.5], nValidation }));
  expect(() => accept(t, sil('0', 2 ** 40 + 1), offer.get('0')!, c2)).toThrow('nValidation is 1099511627777; at most 2^40 validation rows are accepted');
  expect(() => accept(t, sil('0', 1e15), offer.get('0')!, c2)).toThrow(/nValidation is 1000000000000000; at most 2\^40 validation rows/);
  // at 2^40 rows the weights' squares stay finite and a phi is chosen
  aggregate(t, c2, new Map([['1', accept(t, sil('1', 2 ** 40), offer.get('1')!, c2)]]), []);
  expect(t.result().phi).toBe(1);
});

// a whole number past 2^53 - 1 (not held exactly by a double) is refused naming that bound; below it, the caps of the checks apply
test('a count past the largest safe integer is refused saying what the bound is', () => {
  let thrown: unknown;
  try {
    SILHOUETTES.read(message('fedgem/silhouettes', '0', 1, { values: [0.9], nValidation: 1e300 }));
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InvalidMessageError);
  expect((thrown as Error).message).toMatch(/^nValidation is 1e\+300; it must be a whole number at most 2\^53 - 1$/);
});

test('a component without rows pulls no one in a round', () => {
  // client 0's second component explains none of its rows: it sits still (radius 0) next to client 1's first
  const s = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const { centers } = trainRound(s, [balls('0', { maximizers: [0, 5], radii: [0.5, 0], counts: [20, 0] }), balls('1', { maximizers: [5.4, 9], radii: [0.5, 0.5] })]);
  expect(Array.from(centers.get('1')!)).toEqual([5.4, 9]);
  expect(Array.from(centers.get('0')!)).toEqual([0, 5]);
  expect(s.history[0]!.overlaps).toBe(0);
  // with rows it would have pulled client 1's component onto itself (see the zero-radius test)
  const t = new FedGEMServer({ nFeatures: 1, variance: 'clients', rounds: 1 });
  const with_ = trainRound(t, [balls('0', { maximizers: [0, 5], radii: [0.5, 0], counts: [10, 10] }), balls('1', { maximizers: [5.4, 9], radii: [0.5, 0.5] })]);
  expect(with_.centers.get('1')![0]).toBeCloseTo(5.2, 12);
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
  expect(() => c.localRound()).not.toThrow();
  c.dispose();
});

test('the privacy noise has its own seed, and the rows are clipped to the bound', () => {
  const { data, options } = federation(10);
  const x = data[0]!;
  const p = { epsilon: 0.5, delta: 1e-5, bound: 3 };
  const upload = (o: object) => {
    const c = new FedGEMClient('a', x, { ...options[0]!, ...o });
    const m = Array.from(c.localRound().maximizers);
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
  expect(r.traffic.rounds).toBe(r.history.length + 1);
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
