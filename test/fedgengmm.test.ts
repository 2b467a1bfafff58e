/** FedGenGMM (Algorithm 4.1): clients, server, the in-process run, and bad clients. */
import { beforeAll, expect, test } from 'vitest';
import { FedGenGMMServer, fedGenGMM, GaussianMixture, init, InvalidMessageError, Matrix } from '../ts/index.js';
import { encodeMessage, wireBytes } from '../ts/federated/message.js';
import { gmmParams } from '../ts/federated/gmm-params.js';
import { FedGenGMMClient } from '../ts/federated/fedgengmm/client.js';
import { wasm } from '../ts/wasm/loader.js';

beforeAll(async () => {
  await init();
});

/** n rows around `center` with spread s, from a fixed xorshift stream. */
function blob(n: number, center: number[], s: number, seed: number): Matrix {
  let x = seed >>> 0 || 1;
  const u = () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return (x + 0.5) / 2 ** 32;
  };
  const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  return Matrix.fromRows(Array.from({ length: n }, () => center.map((c) => c + s * g())));
}

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

test('recovers the global mixture from local ones, close to centralized EM', () => {
  const r = fedGenGMM(clients, { client: { kMin: 1, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2, covarianceType: 'full' } });
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
  // one round: four uploads, and the global model back to each of the four
  expect(r.traffic.rounds).toBe(1);
  expect(r.traffic.messagesUp).toBe(4);
  expect(r.traffic.messagesDown).toBe(4);
  expect(r.traffic.bytesDown).toBe(4 * wireBytes(encodeMessage({ protocol: 'fedmix', version: 1, kind: 'fedgengmm/global-model', from: 'server', round: 0, payload: gmmParams(r.model) })));
  r.model.dispose();
  central.dispose();
});

test('uploads are exactly the counted bytes; clients may differ in covariance type; a seed reproduces the run', () => {
  const opts = [{ covarianceType: 'full' as const, kMax: 2 }, { covarianceType: 'diag' as const, kMax: 3 }, { covarianceType: 'spherical' as const, kMax: 2 }, { covarianceType: 'tied' as const, kMax: 2 }];
  const run = () => fedGenGMM(clients, { client: opts.map((o) => ({ ...o, seed: 4 })), server: { kMin: 1, kMax: 4, seed: 5 } });
  const a = run();
  const b = run();
  expect(Array.from(b.model.means)).toEqual(Array.from(a.model.means));
  const bytes = clients.reduce((t, data, c) => {
    const cl = new FedGenGMMClient(String(c), data, { ...opts[c], seed: 4 });
    cl.train();
    const n = wireBytes(encodeMessage(cl.upload()));
    cl.dispose();
    return t + n;
  }, 0);
  expect(a.traffic.bytesUp).toBe(bytes);
  expect(a.model.nComponents).toBeGreaterThanOrEqual(3); // BIC over 1..4 on three clusters
  a.model.dispose();
  b.model.dispose();
});

test('a client with too few rows, and bad uploads, are excluded by name; the result equals the run without them', () => {
  const tiny = Matrix.fromRows([[1, 1], [2, 2]]);
  const same = Matrix.fromRows(Array.from({ length: 20 }, () => [3, 3]));
  const r = fedGenGMM([...clients, tiny, same], { client: { kMin: 3, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2 } });
  expect(r.excluded.map((e) => e.client)).toEqual(['4', '5']);
  expect(r.excluded[0]!.reason).toMatch(/local training failed: X has 2 rows but nComponents = 3/);
  expect(r.excluded[1]!.reason).toMatch(/only 1 distinct row/);
  const clean = fedGenGMM(clients, { client: { kMin: 3, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2 } });
  expect(Array.from(r.model.means)).toEqual(Array.from(clean.model.means));
  expect(() => fedGenGMM([tiny], { client: { kMin: 3 }, server: { nComponents: 1, onInvalidClient: 'throw' } })).toThrow(/2 rows but nComponents = 3/);
  r.model.dispose();
  clean.model.dispose();
});

test('the server rejects malformed uploads without changing its state', () => {
  const good = clients.map((data, c) => {
    const cl = new FedGenGMMClient(String(c), data, { kMin: 2, kMax: 2, seed: 1 });
    cl.train();
    const m = cl.upload();
    cl.dispose();
    return JSON.parse(encodeMessage(m));
  });
  const reference = new FedGenGMMServer({ nComponents: 3, seed: 9 });
  for (const m of good) expect(reference.receive(JSON.stringify(m))).toBe(true);
  const want = reference.aggregate().model;
  reference.dispose();

  const before = wasm().fm_heap_in_use();
  const server = new FedGenGMMServer({ nComponents: 3, seed: 9 });
  const bad = (from: string, patch: (p: any) => void) => {
    const m = structuredClone(good[0]);
    m.from = from;
    patch(m.payload);
    return JSON.stringify(m);
  };
  expect(server.receive(good[0] && JSON.stringify(good[0]))).toBe(true);
  const rejected = [
    server.receive(bad('nan', (p) => (p.model.means[0] = null))),
    server.receive(bad('zero-weight', (p) => (p.model.weights = [0, 1]))),
    server.receive(bad('negative-n', (p) => (p.nSamples = -5))),
    server.receive(bad('fraction-n', (p) => (p.nSamples = 2.5))),
    server.receive(bad('not-pd', (p) => (p.model.covariances = p.model.covariances.map((v: number, i: number) => (i === 0 ? -1 : v))))),
    server.receive(bad('dims', (p) => { p.model.nFeatures = 3; p.model.means = [0, 0, 0, 1, 1, 1]; p.model.covariances = [1, 1, 1, 1, 1, 1]; })),
    server.receive(bad('too-few-rows', (p) => (p.nSamples = 1))),
    server.receive(JSON.stringify(good[0])), // a duplicate from client 0
    server.receive('{"protocol":"fedmix"'),
  ];
  expect(rejected.every((a) => a === false)).toBe(true);
  expect(server.excluded.map((e) => e.client)).toEqual(['nan', 'zero-weight', 'negative-n', 'fraction-n', 'not-pd', 'dims', 'too-few-rows', '0', 'unknown client']);
  expect(server.excluded[0]!.reason).toMatch(/client nan: means\[0\] is null/);
  expect(server.excluded[4]!.reason).toMatch(/client not-pd: .*variance|positive/);
  expect(server.excluded[5]!.reason).toMatch(/has 3 features but this federation has 2/);
  for (const m of good.slice(1)) expect(server.receive(JSON.stringify(m))).toBe(true);
  const got = server.aggregate().model;
  expect(Array.from(got.means)).toEqual(Array.from(want.means));
  got.dispose();
  server.dispose();
  expect(wasm().fm_heap_in_use()).toBe(before); // `want` is still alive on both sides
  want.dispose();
  const strict = new FedGenGMMServer({ nComponents: 3, onInvalidClient: 'throw' });
  expect(() => strict.receive(bad('nan', (p) => (p.model.means[0] = null)))).toThrow(InvalidMessageError);
  expect(() => strict.aggregate()).toThrow(/no client model was accepted/);
  expect(() => new FedGenGMMServer({})).toThrow(/nComponents, or kMin\/kMax/);
});

test('a first client with other features is the one excluded, not everyone after it', () => {
  const odd = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i, i % 7, 1]));
  const r = fedGenGMM([odd, ...clients], { client: { kMin: 1, kMax: 2, seed: 1 }, server: { nComponents: 3, seed: 2 } });
  expect(r.excluded.map((e) => e.client)).toEqual(['0']);
  expect(r.excluded[0]!.reason).toMatch(/3 features but this federation has 2/);
  expect(r.model.nFeatures).toBe(2);
  r.model.dispose();
});
