/**
 * FedGenGMM (Algorithm 4.1) on the federation runtime: the one-call run, its
 * traffic in both encodings (the train request, the uploads, the global model
 * sent back), bad clients through the runtime, and the server role driven by
 * hand against malformed uploads.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import {
  decodeMessage,
  encodeMessage,
  FEDGENGMM_PROTOCOL,
  FederationError,
  FedGenGMMClient,
  FedGenGMMServer,
  fedGenGMM,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  makeBlobs,
  Matrix,
  MinMaxScaler,
  runFederationSync,
  type Encoding,
  type Failure,
  type Message,
  type RoundContext,
  type ServerRole,
} from '../ts/index.js';
import { labelledFromCsv } from '../ts/experiments/index.js';
import { clientOptions, clientRoleOptions } from '../ts/cli/federation.js';
import { parseOptions } from '../ts/cli/args.js';
import { makeClient, matrixData } from '../ts/federated/algorithms.js';
import { gmmParams } from '../ts/federated/gmm-params.js';
import { SAMPLE_N_INIT } from '../ts/federated/fedgengmm/server.js';
import { clientSeed } from '../ts/random.js';
import { sweepRepeat, sweepScore } from './support/server-sweep.mjs';
import { GLOBAL_MODEL, LOCAL_MODEL, TRAIN } from '../ts/federated/fedgengmm/messages.js';
import { wasm } from '../ts/wasm/loader.js';
import { blob, Recording, editPayload } from './helpers.js';

beforeAll(async () => {
  await init();
});


const A = [0, 0];
const B = [6, 0];
const C = [0, 6];
// non-IID: each client sees one or two of three clusters, with different sizes
const clients = [
  Matrix.vstack([blob(400, A, 1, 1)]),
  Matrix.vstack([blob(150, A, 1, 2), blob(150, B, 1, 3)]),
  Matrix.vstack([blob(300, C, 1, 4)]),
  Matrix.vstack([blob(200, B, 1, 5), blob(100, C, 1, 6)]),
];
const pooled = Matrix.vstack(clients);

/** A server's aggregate() as the runtime calls it (the round, the accepted replies, the round's failures). */
function aggregate<A>(server: ServerRole<A>, round: RoundContext, accepted: ReadonlyMap<string, A>, failures: Failure[]): unknown {
  return server.aggregate(round, accepted, failures);
}

/** A server's accept() as the runtime calls it (the role contract: the reply, the request it answers, the round). */
function accept<A>(server: ServerRole<A>, reply: Message, request: Message, round: RoundContext): A {
  return server.accept(reply, request, round);
}

/** The wire bytes of a message in an encoding, as it travels in run `run` (every message carries the run's id). */
const size = (m: Message, encoding: Encoding, run: string | undefined) => encodeMessage({ ...m, run }, encoding).length;

test.each(['binary', 'json'] as const)('%s: recovers the global mixture from local ones, close to centralized EM; one round and the model back', (encoding) => {
  const r = fedGenGMM(clients, { client: { kMin: 1, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2, covarianceType: 'full' }, encoding });
  const central = new GaussianMixture({ nComponents: 3, covarianceType: 'full', seed: 3 }).fit(pooled);
  // each true center has a global component within 0.3
  const means = r.model.means;
  for (const c of [A, B, C]) {
    const d = Math.min(...[0, 1, 2].map((k) => Math.hypot(means[2 * k]! - c[0]!, means[2 * k + 1]! - c[1]!)));
    expect(d).toBeLessThan(0.3);
  }
  // global weights follow the pooled shares: A 550, B 350, C 400 of 1300
  const share = (c: number[]) => r.model.weights[[0, 1, 2].find((k) => Math.hypot(means[2 * k]! - c[0]!, means[2 * k + 1]! - c[1]!) < 0.3)!]!;
  expect(share(A)).toBeCloseTo(550 / 1300, 1);
  expect(share(B)).toBeCloseTo(350 / 1300, 1);
  const ll = r.model.score(pooled);
  const llc = central.score(pooled);
  expect(Math.abs(ll - llc) / Math.abs(llc)).toBeLessThan(0.02);
  // |S| = H * sum K_c: the clients chose 1, 2, 1, 2 components
  expect(r.incomingComponents).toBe(6);
  expect(r.syntheticRows).toBe(600);
  // one communication round: four train requests and four uploads; then the global model to each of the four (a notification, no round)
  expect(r.traffic.rounds).toBe(1);
  expect(r.traffic.messagesUp).toBe(4);
  expect(r.traffic.messagesDown).toBe(8);
  expect(r.federation.history.map((h) => [h.round, h.kind, h.replies, h.asked])).toEqual([
    [1, 'fedgengmm/train', true, 4],
    // the global model goes back as the end of round 1, not as a round of its own
    [1, 'fedgengmm/global-model', false, 4],
  ]);
  const train = TRAIN.create('server', 1, {});
  // the global model goes back stamped with the round it ends
  const back = GLOBAL_MODEL.create('server', 1, gmmParams(r.model));
  expect(r.traffic.bytesDown).toBe(4 * size(train, encoding, r.federation.run) + 4 * size(back, encoding, r.federation.run));
  expect(r.federation.history[1]!.bytesDown).toBe(4 * size(back, encoding, r.federation.run));
  r.model.dispose();
  central.dispose();
});

test.each(['binary', 'json'] as const)('%s: uploads are exactly the counted bytes; clients may differ in covariance type; a seed reproduces the run', (encoding) => {
  const opts = [{ covarianceType: 'full' as const, kMax: 2 }, { covarianceType: 'diag' as const, kMax: 3 }, { covarianceType: 'spherical' as const, kMax: 2 }, { covarianceType: 'tied' as const, kMax: 2 }];
  const run = () => fedGenGMM(clients, { client: opts.map((o) => ({ ...o, seed: 4 })), server: { kMin: 1, kMax: 4, seed: 5 }, encoding });
  const a = run();
  const b = run();
  expect(Array.from(b.model.means)).toEqual(Array.from(a.model.means));
  const bytes = clients.reduce((t, data, c) => {
    const cl = new FedGenGMMClient(String(c), data, { ...opts[c], seed: 4 });
    cl.train();
    const n = size(LOCAL_MODEL.create(String(c), 1, cl.upload()), encoding, a.federation.run);
    expect(a.federation.clientTraffic.get(String(c))!.bytesUp).toBe(n);
    cl.dispose();
    return t + n;
  }, 0);
  expect(a.traffic.bytesUp).toBe(bytes);
  expect(a.model.nComponents).toBeGreaterThanOrEqual(3); // BIC over 1..4 on three clusters
  a.model.dispose();
  b.model.dispose();
});

test('the encoding changes the bytes, not the model', () => {
  const run = (encoding: Encoding | 'none') => fedGenGMM(clients, { client: { kMin: 1, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2 }, encoding });
  const [binary, json, none] = [run('binary'), run('json'), run('none')];
  for (const r of [json, none]) {
    expect(r.model.means).toEqual(binary.model.means);
    expect(r.model.covariances).toEqual(binary.model.covariances);
  }
  expect(json.traffic.bytesUp).not.toBe(binary.traffic.bytesUp);
  for (const r of [binary, json, none]) r.model.dispose();
});

test('a client with too few rows, and bad uploads, are excluded by name; the result equals the run without them', () => {
  const tiny = Matrix.fromRows([[1, 1], [2, 2]]);
  const same = Matrix.fromRows(Array.from({ length: 20 }, () => [3, 3]));
  const r = fedGenGMM([...clients, tiny, same], { client: { kMin: 3, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2 } });
  expect(r.excluded.map((e) => [e.client, e.round])).toEqual([
    ['4', 1],
    ['5', 1],
  ]);
  expect(r.excluded[0]!.reason).toMatch(/^4: local training failed: X has 2 rows but nComponents = 3/);
  expect(r.excluded[1]!.reason).toMatch(/^5: local training failed: .*only 1 distinct row/);
  expect(r.federation.failures.map((f) => f.kind)).toEqual(['refused', 'refused']);
  // the global model goes back to the four that took part only
  expect(r.federation.history[1]!.asked).toBe(4);
  const clean = fedGenGMM(clients, { client: { kMin: 3, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2 } });
  expect(Array.from(r.model.means)).toEqual(Array.from(clean.model.means));
  // under onInvalidClient 'throw' the run fails with the client's own error
  let thrown: unknown;
  try {
    fedGenGMM([tiny], { client: { kMin: 3 }, server: { nComponents: 1, onInvalidClient: 'throw' } });
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InvalidDataError);
  expect((thrown as Error).message).toMatch(/^0: local training failed: X has 2 rows but nComponents = 3/);
  // and when no upload is usable, a FederationError naming why
  expect(() => fedGenGMM([tiny], { client: { kMin: 3 }, server: { nComponents: 1 } })).toThrow(FederationError);
  expect(() => fedGenGMM([tiny], { client: { kMin: 3 }, server: { nComponents: 1 } })).toThrow(/^round 1: 0 usable replies of 1, fewer than the 1 required \(0: local training failed/);
  r.model.dispose();
  clean.model.dispose();
});

/** Malformed uploads: what is edited, and what the reason says. */
const uploads: Array<[string, (p: any) => void, RegExp]> = [
  ['a null mean', (p) => (p.model.means[0] = null), /model\.means\[0\] is null; values must be finite numbers/],
  ['a zero weight', (p) => (p.model.weights = [0, 1]), /weights\[0\] is 0; mixture weights must be positive/],
  ['a negative row count', (p) => (p.nSamples = -5), /nSamples is -5; it must be a whole number >= 0/],
  ['a fractional row count', (p) => (p.nSamples = 2.5), /nSamples is 2\.5; it must be a whole number >= 0/],
  ['a covariance that is not positive definite', (p) => (p.model.covariances = p.model.covariances.map((v: number, i: number) => (i === 0 ? -1 : v))), /variance|positive/],
  [
    'other dimensions',
    (p) => {
      p.model.nFeatures = 3;
      p.model.means = [0, 0, 0, 1, 1, 1];
      p.model.covariances = [1, 1, 1, 1, 1, 1];
    },
    /the model has 3 features but this federation has 2/,
  ],
  ['no rows', (p) => (p.nSamples = 0), /nSamples must be a positive integer \(the rows behind the model\), got 0/],
  ['an unknown covariance type', (p) => (p.model.covarianceType = 'dense'), /model\.covarianceType is "dense"; it must be one of "full", "tied", "diag", "spherical"/],
];

// valid on its own, but on a scale that breaks the global fit for everyone: blamed once the fit fails (ContributionError)
const breaking: Array<[string, (p: any) => void, RegExp]> = [
  ['variances times 1e300', (p) => (p.model.covariances = p.model.covariances.map((v: number) => v * 1e300)), /its model makes the global fit fail \(.*\); without it the fit succeeds/],
];

test.each([...uploads, ...breaking])('an upload with %s is excluded with its reason; the model is the one without it; nothing leaks', (_, edit, reason) => {
  const before = wasm().fm_heap_in_use();
  const run = (data: Matrix[], bad?: number) => {
    const roles = data.map((x, c) => new Recording(new FedGenGMMClient(String(c), x, { kMin: 2, kMax: 2, seed: 1 }), c === bad ? editPayload(edit) : undefined));
    const server = new FedGenGMMServer({ nComponents: 3, seed: 9, nFeatures: 2 });
    try {
      const out = runFederationSync(server, roles);
      return { out, roles, global: roles.map((r) => r.inner.globalModel?.means) };
    } finally {
      server.dispose();
      for (const r of roles) r.inner.dispose();
    }
  };
  const bad = run([...clients, clients[1]!], 4);
  const without = run(clients);
  expect(bad.out.excluded).toEqual([{ client: '4', round: 1, reason: expect.stringMatching(reason) }]);
  expect(bad.out.excluded[0]!.reason).toMatch(/^4: /);
  expect(bad.out.failures[0]!.kind).toBe('invalid');
  expect(Array.from(bad.out.model.model.means)).toEqual(Array.from(without.out.model.model.means));
  expect(bad.out.model.clients).toEqual(['0', '1', '2', '3']);
  // the global model went back to the clients that took part, not to the excluded one
  expect(bad.roles.map((r) => r.received.map((m) => m.kind))).toEqual([...Array(4).fill(['fedgengmm/train', 'fedgengmm/global-model']), ['fedgengmm/train']]);
  expect(bad.global.slice(0, 4)).toEqual(Array(4).fill(bad.out.model.model.means));
  expect(bad.global[4]).toBeUndefined();
  bad.out.model.model.dispose();
  without.out.model.model.dispose();
  expect(wasm().fm_heap_in_use()).toBe(before);
});

test('a declared feature range: honest uploads inside give the same model; means or variances no rows inside it can have are refused', () => {
  const scaler = new MinMaxScaler().fit(pooled);
  const unit = clients.map((x) => scaler.transform(x));
  const run = (featureRange?: [number, number], bad?: (p: any) => void) => {
    const roles = unit.map((x, c) => new Recording(new FedGenGMMClient(String(c), x, { kMin: 1, kMax: 3, seed: 1 }), c === 2 && bad ? editPayload(bad) : undefined));
    const server = new FedGenGMMServer({ nComponents: 3, seed: 9, nFeatures: 2, featureRange });
    try {
      return runFederationSync(server, roles);
    } finally {
      server.dispose();
      for (const r of roles) r.inner.dispose();
    }
  };
  const plain = run();
  const declared = run([0, 1]);
  expect(declared.excluded).toEqual([]);
  expect(Array.from(declared.model.model.means)).toEqual(Array.from(plain.model.model.means));
  const far = run([0, 1], (p) => (p.model.means = p.model.means.map((v: number) => v + 10)));
  expect(far.excluded.map((e) => e.reason)).toEqual([expect.stringMatching(/^2: means\[\d+\] is [\d.e+]+, outside feature \d's declared range \[0, 1\]/)]);
  // means 1e20 times their size are refused before the range is consulted: variances of 0.01 cannot be resolved around them (the check of every mixture)
  const beyond = run([0, 1], (p) => (p.model.means = p.model.means.map((v: number) => v * 1e20)));
  expect(beyond.excluded.map((e) => e.reason)).toEqual([expect.stringMatching(/^2: the covariance of component \d is not usable: .* the resolution of f64 around means/)]);
  const wide = run([0, 1], (p) => (p.model.covariances = p.model.covariances.map((v: number) => v + 1)));
  expect(wide.excluded.map((e) => e.reason)).toEqual([expect.stringMatching(/^2: covariances\[\d+\] is [\d.e+-]+, more than any distribution on feature \d's declared range \[0, 1\] has \(0\.25 \+ 0\.000001\)/)]);
  for (const r of [plain, declared, far, beyond, wide]) r.model.model.dispose();
  expect(() => new FedGenGMMServer({ nComponents: 3, nFeatures: 2, featureRange: [1, 1] })).toThrow(/min must be below max/);
});

test("a declared range's variance bound: honest rows at the range's two ends (Popoviciu's extreme) pass at the defaults; a client regularizing more than the server is refused before the run", () => {
  // every client: half its rows at 0, half at 1, in both features, so one component's variances are the bound (max - min)^2 / 4 itself
  const ends = [0, 1, 2, 3].map((c) => fedmix.Matrix.fromRows(Array.from({ length: 40 + 4 * c }, (_, i) => [i % 2, (i >> 1) % 2])));
  const r = fedGenGMM(ends, { client: { kMin: 1, kMax: 1 }, server: { nComponents: 1, seed: 3, featureRange: [0, 1] }, keepLocalModels: true });
  expect(r.excluded).toEqual([]);
  // every client uploaded variances at the bound, 0.25 + regCovar up to rounding; the global fit re-estimates them from synthetic rows
  for (const l of r.localModels) {
    for (const v of l.model.covariances) expect(Math.abs(v - 0.25 - 1e-6)).toBeLessThan(1e-12);
    l.model.dispose();
  }
  expect(Array.from(r.model.covariances).every((v) => v > 0.2 && v < 0.3)).toBe(true);
  r.model.dispose();
  expect(() => fedGenGMM(ends, { client: { regCovar: 1e-3 }, server: { nComponents: 1, seed: 3, featureRange: [0, 1] } })).toThrow(
    /options.client.regCovar is 0.001, above server.regCovar 0.000001: with a featureRange/,
  );
  // without a declared range the clients' regCovar is theirs
  const free = fedGenGMM(ends, { client: { kMin: 1, kMax: 1, regCovar: 1e-3 }, server: { nComponents: 1, seed: 3 } });
  expect(free.excluded).toEqual([]);
  free.model.dispose();
});

test('the synthetic set is capped: maxSyntheticRows bounds H x sum K_c, each component keeping at least one row', () => {
  const roles = clients.map((x, c) => new FedGenGMMClient(String(c), x, { kMin: 2, kMax: 2, seed: 1 }));
  const server = new FedGenGMMServer({ nComponents: 3, seed: 9, nFeatures: 2, maxSyntheticRows: 500 });
  const r = runFederationSync(server, roles);
  // 8 incoming components: 100 rows each would be 800; 62 each fit in 500
  expect([r.model.incomingComponents, r.model.syntheticRows]).toEqual([8, 496]);
  r.model.model.dispose();
  server.dispose();
  for (const c of roles) c.dispose();
});

test('the server role by hand: accept refuses malformed uploads without changing its state or leaking', () => {
  const trained = clients.map((data, c) => {
    const cl = new FedGenGMMClient(String(c), data, { kMin: 2, kMax: 2, seed: 1 });
    cl.train();
    const m = LOCAL_MODEL.create(String(c), 1, cl.upload());
    cl.dispose();
    // as the server gets it: off the wire, read through its declared type
    return JSON.parse(encodeMessage(m));
  });
  const ids = trained.map((m) => m.from as string);
  const ctx: RoundContext = { round: 1, clients: ids, available: ids };
  const byHand = (server: FedGenGMMServer, replies: Message[]) => {
    const reqs = server.configure(ctx);
    expect([...reqs.keys()]).toEqual(ids);
    expect([...reqs.values()].every((m) => m.kind === 'fedgengmm/train')).toBe(true);
    const accepted = new Map(replies.map((m) => [m.from, accept(server, read(m), reqs.get(m.from)!, ctx)]));
    aggregate(server, ctx, accepted, []);
    return server.result();
  };
  const read = (m: unknown) => FEDGENGMM_PROTOCOL.exchanges.get('fedgengmm/train')!.reply!.read(decodeMessage(JSON.stringify(m)));
  const reference = new FedGenGMMServer({ nComponents: 3, seed: 9, nFeatures: 2 });
  const want = byHand(reference, trained);
  reference.dispose();
  expect(want.clients).toEqual(ids);

  const before = wasm().fm_heap_in_use();
  const server = new FedGenGMMServer({ nComponents: 3, seed: 9, nFeatures: 2 });
  const reqs = server.configure(ctx);
  const accepted = new Map<string, ReturnType<FedGenGMMServer['accept']>>();
  accepted.set('0', accept(server, read(trained[0]), reqs.get('0')!, ctx));
  for (const [what, edit, reason] of uploads) {
    const m = structuredClone(trained[1]);
    edit(m.payload);
    let thrown: unknown;
    try {
      accept(server, read(m), reqs.get('1')!, ctx);
    } catch (e) {
      thrown = e;
    }
    expect(thrown, what).toBeInstanceOf(InvalidMessageError);
    expect((thrown as Error).message, what).toMatch(reason);
  }
  for (const m of trained.slice(1)) accepted.set(m.from, accept(server, read(m), reqs.get(m.from)!, ctx));
  aggregate(server, ctx, accepted, []);
  // the global model goes back to the clients that took part (those of the round still there), once
  expect(server.done).toBe(false);
  const back = server.configure({ round: 2, clients: ['0', '2', '3'], available: ['0', '2', '3'] });
  expect([...back.keys()]).toEqual(['0', '2', '3']);
  expect([...back.values()].every((m) => m.kind === 'fedgengmm/global-model' && m.round === 1)).toBe(true);
  expect(server.done).toBe(true);
  const got = server.result();
  expect(Array.from(got.model.means)).toEqual(Array.from(want.model.means));
  expect(got.incomingComponents).toBe(8);
  expect(got.syntheticRows).toBe(800);
  got.model.dispose();
  server.dispose();
  expect(wasm().fm_heap_in_use()).toBe(before); // `want` is still alive on both sides
  want.model.dispose();
  // an upload it discards (its client failed later in the round) is freed
  const s2 = new FedGenGMMServer({ nComponents: 3, nFeatures: 2 });
  const heap = wasm().fm_heap_in_use();
  s2.discard(accept(s2, read(trained[0]), s2.configure(ctx).get('0')!, ctx));
  expect(wasm().fm_heap_in_use()).toBe(heap);
  s2.dispose();
});

test('an upload of more components than rows is refused with that reason, by hand and through the runtime', () => {
  const cl = new FedGenGMMClient('0', clients[1]!, { kMin: 2, kMax: 2, seed: 1 });
  cl.train();
  const upload = JSON.parse(encodeMessage(LOCAL_MODEL.create('0', 1, cl.upload())));
  cl.dispose();
  upload.payload.nSamples = 1;
  const server = new FedGenGMMServer({ nComponents: 3, nFeatures: 2 });
  const ctx: RoundContext = { round: 1, clients: ['0'], available: ['0'] };
  const before = wasm().fm_heap_in_use();
  let thrown: unknown;
  try {
    accept(server, LOCAL_MODEL.read(decodeMessage(JSON.stringify(upload))), server.configure(ctx).get('0')!, ctx);
  } catch (e) {
    thrown = e;
  }
  server.dispose();
  expect(wasm().fm_heap_in_use()).toBe(before);
  expect(thrown).toBeInstanceOf(InvalidMessageError);
  expect((thrown as Error).message).toBe('2 components cannot come from 1 rows');
  const roles = clients.map((x, c) => new Recording(new FedGenGMMClient(String(c), x, { kMin: 2, kMax: 2, seed: 1 }), c === 3 ? editPayload((p) => (p.nSamples = 1)) : undefined));
  const s2 = new FedGenGMMServer({ nComponents: 3, nFeatures: 2 });
  try {
    const r = runFederationSync(s2, roles);
    r.model.model.dispose();
    expect(r.excluded).toEqual([{ client: '3', round: 1, reason: '3: 2 components cannot come from 1 rows' }]);
  } finally {
    s2.dispose();
    for (const r of roles) r.inner.dispose();
  }
});

// notifications (the global model) go to every participant that is there, sampled this round or not
test('under client sampling the global model still reaches every client that took part', () => {
  const b = makeBlobs({ nClusters: 3, nFeatures: 2, samplesPerCluster: 100, minDistance: 6, seed: 1 });
  const data = [0, 1, 2, 3, 4].map((c) => b.X.selectRows(Array.from({ length: 60 }, (_, i) => c * 60 + i)));
  for (const sampleSeed of [0, 6]) {
    const roles = data.map((x, i) => new FedGenGMMClient(String(i), x, { kMin: 1, kMax: 2, seed: 1 }));
    const server = new FedGenGMMServer({ nComponents: 2, nFeatures: 2, seed: 1 });
    try {
      const r = runFederationSync(server, roles, { fraction: 0.4, sampleSeed });
      expect(r.history[0]!.asked).toBe(2);
      expect(r.model.clients).toHaveLength(2);
      for (const c of roles) expect(c.globalModel !== undefined, c.id).toBe(r.model.clients.includes(c.id));
      r.model.model.dispose();
    } finally {
      server.dispose();
      for (const c of roles) c.dispose();
    }
  }
});

test('server options are checked before any client is asked', () => {
  expect(() => new FedGenGMMServer({} as never)).toThrow(InvalidParameterError);
  expect(() => new FedGenGMMServer({} as never)).toThrow(/nFeatures must be an integer in \[1, 1048576\]/);
  expect(() => new FedGenGMMServer({ nFeatures: 2 })).toThrow(/nComponents, or kMin\/kMax/);
  expect(() => new FedGenGMMServer({ nFeatures: 2, nComponents: 2, h: 0 })).toThrow(/h must be an integer in \[1, 2147483647\]/);
  expect(() => fedGenGMM(clients, { server: { nComponents: 3, covarianceType: 'dense' as never } })).toThrow(/covarianceType/);
});

test('a client with other features is an InvalidDataError naming it and both column counts, before any client trains', () => {
  const odd = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i, i % 7, 1]));
  const options = { client: { kMin: 1, kMax: 2, seed: 1 }, server: { nComponents: 3, seed: 2 } };
  expect(() => fedGenGMM([odd, ...clients], options)).toThrow(InvalidDataError);
  expect(() => fedGenGMM([odd, ...clients], options)).toThrow("client 0 (clientData[0]) has 3 columns but client 1 (clientData[1]) has 2: every client's data needs the same columns");
  expect(() => fedGenGMM([...clients, odd], options)).toThrow('client 4 (clientData[4]) has 3 columns but client 0 (clientData[0]) has 2');
  expect(() => fedGenGMM(clients, { ...options, server: { ...options.server, nFeatures: 3 } })).toThrow('client 0 (clientData[0]) has 2 columns but server.nFeatures is 3');
});

test('the run seed alone reproduces fedGenGMM: clients without a seed derive theirs from server.seed and their id', () => {
  const run = (seed: number) => fedGenGMM(clients, { client: { kMin: 1, kMax: 3 }, server: { nComponents: 3, seed } });
  const [a, b, other] = [run(7), run(7), run(8)];
  expect(Array.from(b.model.means)).toEqual(Array.from(a.model.means));
  expect(Array.from(b.model.covariances)).toEqual(Array.from(a.model.covariances));
  expect(Array.from(other.model.means)).not.toEqual(Array.from(a.model.means));
  // each client its own seed (a client given one keeps it): the same as clients seeded by clientSeed by hand
  const byHand = fedGenGMM(clients, { client: clients.map((_, c) => ({ kMin: 1, kMax: 3, seed: clientSeed(7, String(c)) })), server: { nComponents: 3, seed: 7 } });
  expect(Array.from(byHand.model.means)).toEqual(Array.from(a.model.means));
  expect(new Set(clients.map((_, c) => clientSeed(7, String(c)))).size).toBe(clients.length);
  for (const r of [a, b, other, byHand]) r.model.dispose();
});

test('clients choose K by BIC by default (1..10, at most their rows): in fedGenGMM and in `fedmix client`', () => {
  // clients[1] holds two clusters: BIC finds both
  const c = new FedGenGMMClient('a', clients[1]!);
  expect(c.kRange).toEqual([1, 10]);
  expect(c.train().nComponents).toBe(2);
  c.dispose();
  // a client with fewer rows than the range's top tries up to its rows; kMin alone raises the top with it
  expect(new FedGenGMMClient('b', Matrix.fromRows([[0, 1], [2, 3], [4, 4]])).kRange).toEqual([1, 3]);
  expect(new FedGenGMMClient('b', clients[0]!, { kMin: 12 }).kRange).toEqual([12, 12]);
  expect(new FedGenGMMClient('b', clients[0]!, { kMin: 2, kMax: 4 }).kRange).toEqual([2, 4]);
  // the one-call function's clients at their defaults upload more than one component where the data has them
  const r = fedGenGMM(clients, { server: { nComponents: 3, seed: 1 }, keepLocalModels: true });
  expect(r.localModels.map((m) => m.model.nComponents)).toEqual([1, 2, 1, 2]);
  for (const m of r.localModels) m.model.dispose();
  r.model.dispose();
  // the command line's client: the same default range, and a seed of its own from --seed and --id
  const cli = (id: string, ...more: string[]) => clientRoleOptions('fedgengmm', parseOptions(['--algorithm', 'fedgengmm', '--id', id, '--data', 'x.csv', ...more], clientOptions));
  const role = makeClient({ algorithm: 'fedgengmm', id: 'a', data: matrixData(clients[1]!), options: cli('a') }) as FedGenGMMClient;
  expect(role.kRange).toEqual([1, 10]);
  expect(role.train().nComponents).toBe(2);
  role.dispose();
  expect(cli('a', '--k-range', '2..5')).toMatchObject({ kMin: 2, kMax: 5 });
  expect(cli('a').seed).toBe(clientSeed(0, 'a'));
  expect(cli('a').seed).not.toBe(cli('b').seed);
  expect(cli('a', '--seed', '3').seed).toBe(clientSeed(3, 'a'));
});

test('the sampled server step starts EM several times by default: one start merges two shifted parts, the default is within 5% of central', () => {
  // a cell of the K sweep (scripts/fedgengmm-server-sweep.mjs --set shift): cardio, repeat 0, K = 10, held-out rows
  const data = labelledFromCsv(readFileSync(new URL('../../shared/datasets/anomaly_cardio.csv', import.meta.url), 'utf8'), { anomalyLabel: 'label' });
  const repeat = sweepRepeat(fedmix, data, 'shift', 0, 20);
  try {
    const central = sweepScore(fedmix, repeat, 10, 'central').score;
    const gap = (nInit?: number) => (sweepScore(fedmix, repeat, 10, 'sample', nInit).score - central) / Math.abs(central);
    expect(gap(1)).toBeLessThan(-0.5);
    expect(gap()).toBeGreaterThan(-0.05);
    expect(gap(SAMPLE_N_INIT)).toBe(gap());
  } finally {
    for (const c of repeat.clients) c.dispose();
  }
});
