/** Distributed EM: exactness against centralized EM, traffic, initializations, stopping, bad clients. */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  COVARIANCE_TYPES,
  DemClient,
  DemServer,
  distributedEM,
  encodeMessage,
  GaussianMixture,
  init,
  InProcessTransport,
  InvalidMessageError,
  InvalidParameterError,
  Matrix,
  message,
  runDem,
  type CovarianceType,
  type DemClientLike,
  type DistributedEMOptions,
  type Message,
} from '../ts/index.js';
import { MinMaxScaler } from '../ts/data/scale.js';
import { wireBytes } from '../ts/federated/message.js';
import { wasm } from '../ts/wasm/loader.js';
import { blobs, maxRelativeError } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** Rows of `x` by client: row i goes to client owner(i). */
function split(x: Matrix, nClients: number, owner: (i: number) => number): Matrix[] {
  const idx: number[][] = Array.from({ length: nClients }, () => []);
  for (let i = 0; i < x.nRows; i++) idx[owner(i)]!.push(i);
  return idx.map((rows) => x.selectRows(rows));
}

/**
 * Four separated blobs in 2-D, min-max normalized to [0, 1] (as the paper's
 * data), split non-IID over four clients of unequal sizes: client c holds most
 * of blob c and a little of blob c + 1.
 */
function nonIid(seed: number): { X: Matrix; parts: Matrix[] } {
  const raw = blobs(1200, 2, 4, seed, 6);
  const X = new MinMaxScaler().fitTransform(raw);
  // blobs() puts row i in blob i % 4
  const parts = split(X, 4, (i) => {
    const b = i % 4;
    return Math.floor(i / 4) % 7 === 0 ? (b + 1) % 4 : b;
  });
  return { X, parts: parts.map((p, c) => p.selectRows(Array.from({ length: Math.floor(p.nRows * (1 - 0.2 * c)) }, (_, i) => i))) };
}

function params(gm: GaussianMixture) {
  return { weights: gm.weights, means: gm.means, covariances: gm.covariances };
}

/** Relative error with a floor at 1e-6 of the array's largest magnitude (off-diagonal covariances can be near 0). */
function relError(actual: Float64Array, expected: Float64Array): number {
  const scale = expected.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  return maxRelativeError(actual, expected, 1e-6 * scale);
}

describe('exactness', () => {
  test.each(COVARIANCE_TYPES)('%s: DEM from given parameters equals centralized EM on the pooled rows', (covarianceType) => {
    const X = blobs(900, 3, 3, 7, 3);
    // unequal, non-IID clients, one of them tiny
    const parts = split(X, 4, (i) => (i < 5 ? 3 : i % 3 === 0 ? 0 : i < 600 ? 1 : 2));
    // a rough, unconverged starting point
    const start = new GaussianMixture({ nComponents: 3, covarianceType, initParams: 'random', maxIter: 1, seed: 3 }).fit(X);
    const rounds = 12;
    const dem = distributedEM(parts, { covarianceType, init: params(start), tol: 0, maxRounds: rounds });
    const central = new GaussianMixture({
      nComponents: 3,
      covarianceType,
      tol: 0,
      maxIter: rounds,
      weightsInit: start.weights,
      meansInit: start.means,
      precisionsInit: start.precisions,
    }).fit(Matrix.vstack(parts));
    expect(dem.emRounds).toBe(rounds);
    expect(dem.rounds).toBe(rounds);
    expect(dem.converged).toBe(false);
    expect(dem.model.nIter).toBe(rounds);
    expect(relError(dem.model.weights, central.weights)).toBeLessThan(1e-9);
    expect(relError(dem.model.means, central.means)).toBeLessThan(1e-9);
    expect(relError(dem.model.covariances, central.covariances)).toBeLessThan(1e-9);
    // the pooled mean log-likelihood of the last round is centralized EM's lower bound
    expect(Math.abs(dem.model.lowerBound - central.lowerBound)).toBeLessThan(1e-12 * Math.abs(central.lowerBound));
    // the model moved: EM from this start is not at a fixed point after one round
    expect(relError(dem.model.means, start.means)).toBeGreaterThan(1e-4);
    for (const gm of [start, dem.model, central]) gm.dispose();
  });

  test('tied covariance far from the origin: the summaries recentered on the pooled mean lose nothing', () => {
    const X = blobs(600, 2, 2, 5, 3);
    for (let i = 0; i < X.data.length; i++) X.data[i] += 1e4;
    const parts = split(X, 3, (i) => i % 3);
    const start = new GaussianMixture({ nComponents: 2, covarianceType: 'tied', maxIter: 1, seed: 1 }).fit(X);
    const dem = distributedEM(parts, { covarianceType: 'tied', init: params(start), tol: 0, maxRounds: 5 });
    const central = new GaussianMixture({
      nComponents: 2,
      covarianceType: 'tied',
      tol: 0,
      maxIter: 5,
      weightsInit: start.weights,
      meansInit: start.means,
      precisionsInit: start.precisions,
    }).fit(Matrix.vstack(parts));
    expect(relError(dem.model.covariances, central.covariances)).toBeLessThan(1e-9);
    expect(relError(dem.model.means, central.means)).toBeLessThan(1e-12);
    for (const gm of [start, dem.model, central]) gm.dispose();
  });
});

/** A client that records what it receives and sends; `corrupt` may change its replies. */
class Recording implements DemClientLike {
  readonly received: Message[] = [];
  readonly sent: Message[] = [];
  constructor(
    private readonly inner: DemClientLike,
    private readonly corrupt?: (m: Message) => Message,
  ) {}
  get id(): string {
    return this.inner.id;
  }
  respond(m: Message): Message {
    this.received.push(m);
    let r = this.inner.respond(m);
    if (this.corrupt) r = this.corrupt(r);
    this.sent.push(r);
    return r;
  }
}

/** Runs DEM through `runDem` with real clients (some wrapped), disposing everything but the returned model. */
function run(parts: Matrix[], options: DistributedEMOptions, wrap: (c: DemClient, i: number) => DemClientLike = (c) => new Recording(c)) {
  const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
  const server = new DemServer(
    clients.map((c) => c.id),
    { ...options, nFeatures: options.nFeatures ?? parts[0]!.nCols },
  );
  const transport = new InProcessTransport();
  const wrapped = clients.map(wrap);
  try {
    runDem(server, wrapped, transport);
    return { model: server.takeModel(), server, transport, clients: wrapped };
  } finally {
    server.dispose();
    for (const c of clients) c.dispose();
  }
}

describe('traffic', () => {
  test.each(['separated', 'kfed', 'subset'] as const)('%s: rounds are init + EM rounds, bytes are the encoded messages', (initMethod) => {
    const { parts } = nonIid(1);
    const { model, server, transport, clients } = run(parts, { nComponents: 4, covarianceType: 'diag', init: initMethod, seed: 2 });
    const expectedInit = { separated: 0, kfed: 1, subset: 2 }[initMethod];
    expect(server.initRounds).toBe(expectedInit);
    expect(transport.traffic.rounds).toBe(expectedInit + server.emRounds);
    expect(server.rounds).toBe(transport.traffic.rounds);
    const recs = clients as Recording[];
    const up = recs.flatMap((c) => c.sent);
    const down = recs.flatMap((c) => c.received);
    expect(transport.traffic.messagesUp).toBe(up.length);
    expect(transport.traffic.messagesDown).toBe(down.length);
    expect(transport.traffic.bytesUp).toBe(up.reduce((a, m) => a + wireBytes(encodeMessage(m)), 0));
    expect(transport.traffic.bytesDown).toBe(down.reduce((a, m) => a + wireBytes(encodeMessage(m)), 0));
    // every EM round sends the model to each client and gets statistics back
    expect(up.filter((m) => m.kind === 'dem/stats').length).toBe(4 * server.emRounds);
    if (initMethod === 'subset') {
      // the subset's rows travel up: 100 rows in all, in proportion to the clients' sizes
      const rows = up.filter((m) => m.kind === 'dem/subset-rows').map((m) => (m.payload as { count: number }).count);
      expect(rows.reduce((a, b) => a + b, 0)).toBe(100);
      const sizes = parts.map((p) => p.nRows);
      const total = sizes.reduce((a, b) => a + b, 0);
      rows.forEach((r, i) => expect(Math.abs(r - (100 * sizes[i]!) / total)).toBeLessThan(1));
    }
    // the data summary travels once, with the first statistics
    expect(up.filter((m) => (m.payload as { summary?: unknown }).summary !== undefined).length).toBe(4);
    model.dispose();
  });

  test('distributedEM reports the transport traffic', () => {
    const { parts } = nonIid(2);
    const r = distributedEM(parts, { nComponents: 4, covarianceType: 'full', init: 'kfed', seed: 1 });
    expect(r.traffic.rounds).toBe(r.rounds);
    expect(r.rounds).toBe(r.initRounds + r.emRounds);
    expect(r.traffic.messagesUp).toBe(4 * r.rounds);
    expect(r.traffic.bytesUp).toBeGreaterThan(0);
    r.model.dispose();
  });
});

describe('initializations', () => {
  test.each(['separated', 'kfed', 'subset'] as const)('%s reaches centralized EM on separated non-IID blobs', (initMethod) => {
    for (const covarianceType of ['diag', 'full'] as CovarianceType[]) {
      for (const seed of [1, 2, 3]) {
        const { X, parts } = nonIid(seed);
        const pooled = Matrix.vstack(parts);
        const r = distributedEM(parts, { nComponents: 4, covarianceType, init: initMethod, seed });
        const central = new GaussianMixture({ nComponents: 4, covarianceType, nInit: 5, seed }).fit(pooled);
        expect(r.converged).toBe(true);
        expect(r.excluded).toEqual([]);
        // the same optimum: each fitted mean near one of the centralized means
        expect(Math.abs(r.model.score(pooled) - central.score(pooled))).toBeLessThan(1e-3);
        const cm = central.means;
        const m = r.model.means;
        for (let c = 0; c < 4; c++) {
          const nearest = Math.min(...[0, 1, 2, 3].map((e) => Math.hypot(m[2 * c]! - cm[2 * e]!, m[2 * c + 1]! - cm[2 * e + 1]!)));
          expect(nearest).toBeLessThan(0.01);
        }
        expect(X.nRows).toBe(1200);
        r.model.dispose();
        central.dispose();
      }
    }
  });

  test('separated: maximally separated means inside the feature range, equal weights, no communication', () => {
    const clients = [new DemClient('a', Matrix.fromRows([[0.5, 5]]))];
    const server = new DemServer(['a'], { nComponents: 4, nFeatures: 2, covarianceType: 'diag', init: 'separated', featureRange: [[0, 0], [1, 10]] });
    const gm = server.model!;
    expect(Array.from(gm.weights)).toEqual([0.25, 0.25, 0.25, 0.25]);
    const means = Array.from(gm.means);
    const pts = [0, 1, 2, 3].map((c) => [means[2 * c]!, means[2 * c + 1]!].join(',')).sort();
    expect(pts).toEqual(['0.25,2.5', '0.25,7.5', '0.75,2.5', '0.75,7.5']);
    // a uniform cell of a quarter of the box per component
    expect(relError(gm.covariances.subarray(0, 2), new Float64Array([0.25 / 12 + 1e-6, 25 / 12 + 1e-6]))).toBeLessThan(1e-12);
    expect(server.rounds).toBe(0);
    server.dispose();
    clients[0]!.dispose();
  });

  test('kfed: the server seeds from one client and adds the farthest local centers', () => {
    // three clients each seeing two of four blobs: one client's two centers cannot cover them
    const centers = [
      [0.1, 0.1],
      [0.9, 0.1],
      [0.1, 0.9],
      [0.9, 0.9],
    ];
    const make = (blobsOf: number[], n: number, seed: number) => {
      const rows: number[][] = [];
      let s = seed;
      const u = () => ((s = (s * 16807) % 2147483647) / 2147483647 - 0.5) * 0.1;
      for (let i = 0; i < n; i++) {
        const c = centers[blobsOf[i % blobsOf.length]!]!;
        rows.push([c[0]! + u(), c[1]! + u()]);
      }
      return Matrix.fromRows(rows);
    };
    const parts = [make([0, 1], 200, 1), make([1, 2], 300, 2), make([2, 3], 250, 3)];
    for (const seed of [0, 1, 2, 3]) {
      const r = distributedEM(parts, { nComponents: 4, covarianceType: 'spherical', init: 'kfed', kfedLocalClusters: 2, maxRounds: 0, seed });
      // maxRounds 0: the k-FED model itself
      expect(r.emRounds).toBe(0);
      const m = r.model.means;
      const found = [0, 1, 2, 3].map((c) => centers.findIndex((t) => Math.hypot(m[2 * c]! - t[0]!, m[2 * c + 1]! - t[1]!) < 0.02)).sort();
      expect(found).toEqual([0, 1, 2, 3]);
      // weights: each group's share of the rows (blob 0: 100, 1: 250, 2: 275, 3: 125 of 750)
      const w = Array.from(r.model.weights).sort((a, b) => a - b);
      expect(relError(new Float64Array(w), new Float64Array([100 / 750, 125 / 750, 250 / 750, 275 / 750]))).toBeLessThan(1e-9);
      r.model.dispose();
    }
  });
});

describe('stopping rule', () => {
  test('stops when the average client log-likelihood changes by less than tol', () => {
    const { parts } = nonIid(4);
    const start = new GaussianMixture({ nComponents: 4, covarianceType: 'diag', initParams: 'random', maxIter: 1, seed: 9 }).fit(parts[0]!);
    for (const tol of [1e-2, 1e-3, 1e-5]) {
      const r = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', init: params(start), tol });
      const h = r.history;
      expect(h.length).toBe(r.emRounds);
      expect(r.converged).toBe(true);
      for (let t = 1; t < h.length - 1; t++) expect(Math.abs(h[t]! - h[t - 1]!)).toBeGreaterThanOrEqual(tol);
      expect(Math.abs(h[h.length - 1]! - h[h.length - 2]!)).toBeLessThan(tol);
      r.model.dispose();
    }
    // the history is the average of the clients' own mean log-likelihoods under the broadcast model
    const r = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', init: params(start), maxRounds: 1 });
    const h0 = parts.map((p) => start.score(p)).reduce((a, b) => a + b, 0) / parts.length;
    expect(Math.abs(r.history[0]! - h0)).toBeLessThan(1e-12 * Math.abs(h0));
    expect(r.converged).toBe(false);
    r.model.dispose();
    // maxRounds caps the run
    const capped = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', init: params(start), tol: 0, maxRounds: 3 });
    expect([capped.emRounds, capped.converged, capped.history.length]).toEqual([3, false, 3]);
    capped.model.dispose();
    start.dispose();
  });
});

describe('bad clients', () => {
  type Stats = { rows: number; nk: number[]; s1: number[]; s2: number[]; logLikelihood: number };
  const edit = (f: (p: Stats) => void) => (m: Message): Message => {
    const p = JSON.parse(encodeMessage(m)).payload as Stats;
    f(p);
    return message(m.kind, m.from, m.round, p);
  };
  const cases: Array<[string, (m: Message) => Message, RegExp]> = [
    ['NaN statistics', (m) => ({ ...m, payload: { ...(m.payload as object), s1: new Float64Array([NaN, 1, 2, 3, 4, 5, 6, 7]) } }), /cannot send NaN/],
    ['a wrong shape', edit((p) => p.s1.pop()), /s1 has 7 values; expected 8/],
    ['a negative count', edit((p) => (p.nk[0] = -1)), /nk\[0\] is -1; a component's count must be at least 0/],
    ['counts beyond its rows', edit((p) => (p.rows = Math.floor(Math.max(...p.nk)) - 1)), /nk\[\d\] is [\d.]+ but the client reports only \d+ rows/],
    ['a negative variance', edit((p) => (p.s2[0] = -p.s2[0]!)), /negative variance/],
    ['a log-likelihood that is not a number', (m) => ({ ...m, payload: { ...(m.payload as object), logLikelihood: 'x' } }), /logLikelihood is x/],
  ];

  test.each(cases)('%s: excluded with its reason, the others reach the model without it', (_, corrupt, reason) => {
    const { parts } = nonIid(5);
    const options: DistributedEMOptions = { nComponents: 4, covarianceType: 'diag', init: 'separated', seed: 1 };
    const bad = run(parts, options, (c, i) => (i === 2 ? new Recording(c, corrupt) : c));
    const without = run([parts[0]!, parts[1]!, parts[3]!], options);
    expect(bad.server.excluded).toHaveLength(1);
    const e = bad.server.excluded[0]!;
    expect(e.client).toBe('client-2');
    expect(e.round).toBe(1);
    expect(e.reason).toMatch(/^client-2/);
    expect(e.reason).toMatch(reason);
    expect(bad.server.clients).toEqual(['client-0', 'client-1', 'client-3']);
    // the same model, bit for bit, as a run that never had the bad client
    expect(bad.model.means).toEqual(without.model.means);
    expect(bad.model.covariances).toEqual(without.model.covariances);
    expect(bad.model.weights).toEqual(without.model.weights);
    expect(bad.server.history).toEqual(without.server.history);
    bad.model.dispose();
    without.model.dispose();
  });

  test.each(cases)("%s with onInvalidClient 'throw': the run fails naming the client, nothing leaks", (_, corrupt, reason) => {
    const { parts } = nonIid(5);
    const before = wasm().fm_heap_in_use();
    expect(() => run(parts, { nComponents: 4, covarianceType: 'diag', init: 'separated', onInvalidClient: 'throw' }, (c, i) => (i === 2 ? new Recording(c, corrupt) : c))).toThrow(
      InvalidMessageError,
    );
    try {
      run(parts, { nComponents: 4, covarianceType: 'diag', init: 'separated', onInvalidClient: 'throw' }, (c, i) => (i === 2 ? new Recording(c, corrupt) : c));
    } catch (e) {
      expect((e as Error).message).toMatch(/^client-2/);
      expect((e as Error).message).toMatch(reason);
    }
    expect(wasm().fm_heap_in_use()).toBe(before);
  });

  test('a client with zero rows or other dimensions is excluded; a bad init reply too', () => {
    const { parts } = nonIid(6);
    const d3 = Matrix.fromRows([
      [0.1, 0.2, 0.3],
      [0.3, 0.2, 0.1],
    ]);
    for (const initMethod of ['separated', 'kfed', 'subset'] as const) {
      const options: DistributedEMOptions = { nComponents: 4, covarianceType: 'full', init: initMethod, seed: 3 };
      const r = distributedEM([...parts, Matrix.zeros(0, 2), d3], options);
      const clean = distributedEM(parts, options);
      expect(r.excluded.map((e) => e.client)).toEqual(['client-4', 'client-5']);
      expect(r.excluded[0]!.reason).toMatch(/client-4.*reports 0 rows/);
      expect(r.excluded[1]!.reason).toMatch(
        initMethod === 'separated' ? /^client-5.*the model has 2 features but the client's rows have 3/ : /^client-5: its rows have 3 features; this federation has 2/,
      );
      expect(r.excluded.every((e) => e.round === 1)).toBe(true);
      expect(r.model.means).toEqual(clean.model.means);
      expect(r.model.covariances).toEqual(clean.model.covariances);
      r.model.dispose();
      clean.model.dispose();
    }
  });

  test('raw wire text: Infinity, wrong sender, wrong round and garbage are rejected before anything is merged', () => {
    const { parts } = nonIid(7);
    const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
    const start = new GaussianMixture({ nComponents: 2, covarianceType: 'diag', seed: 1 }).fit(parts[0]!);
    const opts = { nFeatures: 2, covarianceType: 'diag' as const, init: params(start), onInvalidClient: 'throw' as const };
    const server = new DemServer(
      clients.map((c) => c.id),
      opts,
    );
    const twin = new DemServer(
      clients.map((c) => c.id),
      opts,
    );
    const answer = (reqs: Map<string, Message>) => [...reqs].map(([id, m]) => ({ from: id, text: encodeMessage(clients.find((c) => c.id === id)!.respond(m)) }));
    // one good round on both
    server.receive(answer(server.requests()));
    twin.receive(answer(twin.requests()));
    const heap = wasm().fm_heap_in_use();
    const modelBefore = Array.from(server.model!.means);
    const spoil: Array<[(t: string) => string, RegExp]> = [
      [(t) => t.replace(/"logLikelihood":[^,]*/, '"logLikelihood":1e999'), /logLikelihood is Infinity/],
      [(t) => t.replace(/"nk":\[[^,\]]*/, '"nk":[1e999'), /nk\[0\] is Infinity/],
      [(t) => t.replace('"from":"client-1"', '"from":"client-0"'), /claims to come from "client-0"/],
      [(t) => t.replace(/"round":\d+/, '"round":99'), /for round 99/],
      [() => '{"protocol":"fedmix"', /not valid JSON/],
      [(t) => t.replace('"kind":"dem/stats"', '"kind":"dem/count"'), /expected a dem\/stats message/],
    ];
    for (const [f, hint] of spoil) {
      const replies = answer(server.requests()).map((r) => (r.from === 'client-1' ? { ...r, text: f(r.text) } : r));
      expect(() => server.receive(replies)).toThrow(hint);
      expect(Array.from(server.model!.means)).toEqual(modelBefore);
      expect(server.history).toHaveLength(1);
    }
    // a missing reply
    const reqs = server.requests();
    expect(() => server.receive(answer(reqs).filter((r) => r.from !== 'client-3'))).toThrow(/client-3: did not answer/);
    expect(wasm().fm_heap_in_use()).toBe(heap);
    // the server continues as if those rounds had not happened
    server.receive(answer(server.requests()));
    twin.receive(answer(twin.requests()));
    expect(server.model!.means).toEqual(twin.model!.means);
    expect(server.history).toEqual(twin.history);
    for (const x of [server, twin, start, ...clients]) x.dispose();
  });

  test('when every client is excluded the run fails, and nothing leaks', () => {
    const { parts } = nonIid(8);
    const before = wasm().fm_heap_in_use();
    expect(() => distributedEM([Matrix.zeros(0, 2), Matrix.zeros(0, 2)], { nComponents: 2, init: 'separated' })).toThrow(/no usable reply in round 1: client-0: reports 0 rows/);
    // the only client with the federation's features (3) has too few rows for 2 components
    expect(() => distributedEM([parts[0]!, Matrix.fromRows([[0.5, 0.5, 0.5]])], { nComponents: 2, init: 'kfed', nFeatures: 3 })).toThrow(/fewer than the 2 clusters/);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });
});

describe('options', () => {
  test('bad options are InvalidParameterErrors, nothing leaks', () => {
    const { parts } = nonIid(9);
    const before = wasm().fm_heap_in_use();
    const bad: Array<[DistributedEMOptions, RegExp]> = [
      [{ init: 'random' as never }, /init must be one of 'separated', 'subset', 'kfed'/],
      [{ nComponents: 0 }, /nComponents/],
      [{ nComponents: 4, kfedLocalClusters: 5 }, /kfedLocalClusters must be an integer in \[1, 4\]/],
      [{ featureRange: [[0], [1, 1]] }, /featureRange\[0\] has 1 values/],
      [{ init: 'separated', featureRange: [1, 0] }, /min < max/],
      [{ tol: -1 }, /tol/],
      [{ maxRounds: 1.5 }, /maxRounds/],
      [{ onInvalidClient: 'ignore' as never }, /onInvalidClient/],
      [{ nComponents: 3, init: { weights: [0.5, 0.5], means: [0, 0, 1, 1], covariances: [1, 0, 0, 1, 1, 0, 0, 1] } }, /init has 2 weights but nComponents is 3/],
      [{ init: { weights: [0.5, 0.5], means: [0, 0, 1, 1], covariances: [1, 2, 2, 1, 1, 0, 0, 1] } }, /not positive definite/],
    ];
    for (const [o, hint] of bad) expect(() => distributedEM(parts, o), hint.source).toThrow(hint);
    expect(() => distributedEM([], {})).toThrow(InvalidParameterError);
    expect(() => distributedEM([Matrix.fromRows([[NaN, 1]])], {})).toThrow(/client-0: its data contains NaN at row 0, column 0/);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });

  test('subset initialization on too few distinct rows says so', () => {
    const parts = [Matrix.fromRows([[0.1, 0.1], [0.1, 0.1], [0.2, 0.2]])];
    expect(() => distributedEM(parts, { nComponents: 3, init: 'subset' })).toThrow(/subset initialization on 3 rows: .*distinct/);
  });
});

test('a first client with other features is the one excluded, not everyone after it', () => {
  const { parts } = nonIid(5);
  const odd = Matrix.fromRows(Array.from({ length: 40 }, (_, i) => [i / 40, (i % 7) / 7, 0.5]));
  const r = distributedEM([odd, ...parts], { nComponents: 4, covarianceType: 'diag', init: 'kfed', seed: 1 });
  expect(r.excluded.map((e) => e.client)).toEqual(['client-0']);
  expect(r.model.nFeatures).toBe(2);
  r.model.dispose();
});
