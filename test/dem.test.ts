/**
 * Distributed EM on the federation runtime: exactness against centralized EM,
 * traffic in both encodings, initializations, stopping, bad clients (through
 * the runtime and against the server role driven by hand), raw wire replies.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  COVARIANCE_TYPES,
  DEM_PROTOCOL,
  DemClient,
  DemServer,
  distributedEM,
  encodeMessage,
  FederationError,
  GaussianMixture,
  init,
  InProcessTransport,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  Matrix,
  message,
  partition,
  runFederationSync,
  type ClientRole,
  type CovarianceType,
  type DistributedEMOptions,
  type Exchange,
  type ExchangeOptions,
  type Failure,
  type Message,
  type Protocol,
  type RoundContext,
  type ServerRole,
} from '../ts/index.js';
import { readFileSync } from 'node:fs';
import { MinMaxScaler, StandardScaler } from '../ts/data/scale.js';
import { labelledFromCsv } from '../ts/experiments/dataset.js';
import { wasm } from '../ts/wasm/loader.js';
import { Recording, blobs, maxRelativeError } from './helpers.js';

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

/** A request read through its declared type, as the runtime's ClientHost reads it before respond(). */
function readRequest(p: Protocol, m: Message): Message {
  return p.exchanges.get(m.kind)!.request.read(m);
}

/** A reply read through the type its request pairs with, as the runtime reads it before accept(). */
function readReply(p: Protocol, request: Message, reply: Message): Message {
  return p.exchanges.get(request.kind)!.reply!.read(reply);
}

/** A server's aggregate() as the runtime calls it (the round, the accepted replies, the round's failures). */
function aggregate<A>(server: ServerRole<A>, round: RoundContext, accepted: ReadonlyMap<string, A>, failures: Failure[]): unknown {
  return server.aggregate(round, accepted, failures);
}

/** A server's accept() as the runtime calls it (the role contract: the reply, the request it answers, the round). */
function accept<A>(server: ServerRole<A>, reply: Message, request: Message, round: RoundContext): A {
  return server.accept(reply, request, round);
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

  test('the encoding changes the bytes, not the model: binary, JSON and copies give the same run', () => {
    const { parts } = nonIid(3);
    const runs = (['binary', 'json', 'none'] as const).map((encoding) => distributedEM(parts, { nComponents: 4, covarianceType: 'full', init: 'kfed', seed: 4, encoding }));
    const [binary, json, none] = runs;
    for (const r of [json!, none!]) {
      expect(r.model.means).toEqual(binary!.model.means);
      expect(r.model.covariances).toEqual(binary!.model.covariances);
      expect(r.history).toEqual(binary!.history);
      expect(r.traffic.messagesUp).toBe(binary!.traffic.messagesUp);
    }
    expect(json!.traffic.bytesUp).not.toBe(binary!.traffic.bytesUp);
    for (const r of runs) r.model.dispose();
  });
});

/** Runs a DemServer with real clients (some wrapped) through runFederationSync, disposing everything but the returned model. */
function run(parts: Matrix[], options: DistributedEMOptions, wrap: (c: DemClient, i: number) => ClientRole = (c) => new Recording(c)) {
  const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
  const { encoding, nFeatures, ...demOptions } = options;
  let server: DemServer | undefined;
  try {
    server = new DemServer({ ...demOptions, nFeatures: nFeatures ?? parts[0]!.nCols });
    const wrapped = clients.map(wrap);
    const result = runFederationSync(server, new InProcessTransport(wrapped, { encoding }), { onInvalid: options.onInvalidClient === 'throw' ? 'fail' : 'exclude' });
    return { model: result.model, result, initRounds: server.initRounds, emRounds: server.emRounds, history: server.history, clients: wrapped };
  } finally {
    server?.dispose();
    for (const c of clients) c.dispose();
  }
}

describe('traffic', () => {
  const inits = ['separated', 'kfed', 'subset'] as const;
  test.each(inits.flatMap((i) => (['binary', 'json'] as const).map((e) => [i, e] as const)))(
    '%s, %s: rounds are init + EM rounds, bytes are the encoded messages',
    (initMethod, encoding) => {
      const { parts } = nonIid(1);
      const { model, result, initRounds, emRounds, clients } = run(parts, { nComponents: 4, covarianceType: 'diag', init: initMethod, seed: 2, encoding });
      const expectedInit = { separated: 0, kfed: 1, subset: 2 }[initMethod];
      expect(initRounds).toBe(expectedInit);
      expect(result.rounds).toBe(expectedInit + emRounds);
      expect(result.traffic.rounds).toBe(result.rounds);
      expect(result.history.map((h) => h.round)).toEqual(Array.from({ length: result.rounds }, (_, i) => i + 1));
      const recs = clients as Recording[];
      const up = recs.flatMap((c) => c.sent);
      const down = recs.flatMap((c) => c.received);
      // as they travel: every message carries the run's id (the client's host stamps its replies)
      const bytes = (ms: Message[]) => ms.reduce((a, m) => a + encodeMessage({ ...m, run: result.run }, encoding).length, 0);
      expect(result.traffic.messagesUp).toBe(up.length);
      expect(result.traffic.messagesDown).toBe(down.length);
      expect(result.traffic.bytesUp).toBe(bytes(up));
      expect(result.traffic.bytesDown).toBe(bytes(down));
      // per client too
      for (const c of recs) {
        expect(result.clientTraffic.get(c.id)).toEqual({ bytesUp: bytes(c.sent), bytesDown: bytes(c.received), messagesUp: c.sent.length, messagesDown: c.received.length });
      }
      // every EM round sends the model to each client and gets statistics back
      expect(up.filter((m) => m.kind === 'dem/stats').length).toBe(4 * emRounds);
      if (initMethod === 'subset') {
        // the subset's rows travel up: 100 rows in all, in proportion to the clients' sizes
        const rows = up.filter((m) => m.kind === 'dem/subset-rows').map((m) => (m.payload as { count: number }).count);
        expect(rows.reduce((a, b) => a + b, 0)).toBe(100);
        const sizes = parts.map((p) => p.nRows);
        const total = sizes.reduce((a, b) => a + b, 0);
        rows.forEach((r, i) => expect(Math.abs(r - (100 * sizes[i]!) / total)).toBeLessThan(1));
      }
      // the data summary travels once, with the first statistics, asked for by the shift that goes down once
      expect(up.filter((m) => (m.payload as { summary?: unknown }).summary !== undefined).length).toBe(4);
      expect(down.filter((m) => (m.payload as { summaryShift?: unknown }).summaryShift !== undefined).length).toBe(4);
      model.dispose();
    },
  );

  test('distributedEM reports the runtime traffic', () => {
    const { parts } = nonIid(2);
    const r = distributedEM(parts, { nComponents: 4, covarianceType: 'full', init: 'kfed', seed: 1 });
    expect(r.traffic.rounds).toBe(r.rounds);
    expect(r.rounds).toBe(r.initRounds + r.emRounds);
    expect(r.traffic.messagesUp).toBe(4 * r.rounds);
    expect(r.traffic.bytesUp).toBeGreaterThan(0);
    // the runtime's per-client account adds up to the totals
    const per = [...r.federation.clientTraffic.values()];
    expect(per.reduce((a, t) => a + t.bytesUp, 0)).toBe(r.traffic.bytesUp);
    expect(per.reduce((a, t) => a + t.bytesDown, 0)).toBe(r.traffic.bytesDown);
    expect(r.federation.history.reduce((a, h) => a + h.bytesUp, 0)).toBe(r.traffic.bytesUp);
    r.model.dispose();
  });

  test('distributedEM reports how its first model was chosen, defaults filled in', () => {
    const { parts } = nonIid(2);
    const byDefault = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', seed: 1 });
    expect(byDefault.initialization).toEqual({ method: 'kfed', localClusters: 4, grouping: 'kmeans', starts: 10 });
    byDefault.model.dispose();
    const paper = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', seed: 1, kfedGrouping: 'seed-device', kfedLocalClusters: 2 });
    expect(paper.initialization).toEqual({ method: 'kfed', localClusters: 2, grouping: 'seed-device', starts: 1 });
    paper.model.dispose();
    const subset = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', seed: 1, init: 'subset' });
    expect(subset.initialization).toMatchObject({ method: 'subset' });
    expect((subset.initialization as { subsetSize: number }).subsetSize).toBeGreaterThan(0);
    subset.model.dispose();
    const separated = distributedEM(parts, { nComponents: 4, covarianceType: 'diag', seed: 1, init: 'separated' });
    expect(separated.initialization).toEqual({ method: 'separated' });
    separated.model.dispose();
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
    const server = new DemServer({ nComponents: 4, nFeatures: 2, covarianceType: 'diag', init: 'separated', featureRange: [[0, 0], [1, 10]] });
    const gm = server.model!;
    expect(Array.from(gm.weights)).toEqual([0.25, 0.25, 0.25, 0.25]);
    const means = Array.from(gm.means);
    const pts = [0, 1, 2, 3].map((c) => [means[2 * c]!, means[2 * c + 1]!].join(',')).sort();
    expect(pts).toEqual(['0.25,2.5', '0.25,7.5', '0.75,2.5', '0.75,7.5']);
    // a uniform cell of a quarter of the box per component
    expect(relError(gm.covariances.subarray(0, 2), new Float64Array([0.25 / 12 + 1e-6, 25 / 12 + 1e-6]))).toBeLessThan(1e-12);
    expect(server.initRounds).toBe(0);
    // the first round is already an EM round: the model goes down
    const reqs = server.configure({ round: 1, clients: ["a"], available: ["a"] });
    expect([...reqs.values()].map((m) => m.kind)).toEqual(['dem/model']);
    server.dispose();
    // with no EM round the run is the initial model alone, without a message
    const client = new DemClient('a', Matrix.fromRows([[0.5, 5]]));
    const none = new DemServer({ nComponents: 4, nFeatures: 2, covarianceType: 'diag', init: 'separated', featureRange: [[0, 0], [1, 10]], maxRounds: 0 });
    const r = runFederationSync(none, [client]);
    expect(r.rounds).toBe(0);
    expect(r.traffic).toEqual({ rounds: 0, bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 });
    expect(Array.from(r.model.means)).toEqual(means);
    r.model.dispose();
    none.dispose();
    client.dispose();
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
      const r = distributedEM(parts, { nComponents: 4, covarianceType: 'spherical', init: 'kfed', kfedLocalClusters: 2, kfedGrouping: 'seed-device', maxRounds: 0, seed });
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
      // the runtime's round records carry the same averages
      expect(r.federation.history.map((x) => (x.metrics as { logLikelihood: number }).logLikelihood)).toEqual(h);
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

describe('k-FED defaults on real data (abalone, standardized)', () => {
  // The paper's ceil(sqrt(K)) local clusters assume each client holds about
  // that many clusters. Clients that hold all of them average several into one
  // local center, so EM started merged; two clients gave too few centers.
  const abalone = () => {
    const d = labelledFromCsv(readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8'), { label: 'label', drop: ['sex'] });
    return new StandardScaler().fitTransform(d.X);
  };
  const central = (X: Matrix, k: number) => {
    const gm = new GaussianMixture({ nComponents: k, covarianceType: 'diag', seed: 1 });
    gm.fit(X);
    const score = gm.score(X);
    gm.dispose();
    return score;
  };

  test('IID clients: the default reaches the central fit, where the paper\'s settings stop short', () => {
    const X = abalone();
    for (const [k, clients] of [[3, 5], [5, 5]] as const) {
      const parts = partition.iid(X.nRows, { clients, seed: 7 }).indices.map((rows) => X.selectRows(rows));
      const best = central(X, k);
      const fit = (o: DistributedEMOptions) => {
        const r = distributedEM(parts, { nComponents: k, covarianceType: 'diag', seed: 1, ...o });
        const score = r.model.score(X);
        r.model.dispose();
        expect(r.excluded).toEqual([]);
        return score;
      };
      const byDefault = fit({});
      const paper = fit({ kfedLocalClusters: Math.ceil(Math.sqrt(k)), kfedGrouping: 'seed-device' });
      expect(byDefault, `K ${k}`).toBeGreaterThan(best - 0.01);
      expect(paper, `K ${k}`).toBeLessThan(byDefault - 0.05);
    }
  });

  test('two clients and K = 8: the default runs; ceil(sqrt(K)) local clusters are too few centers', () => {
    const X = abalone();
    const parts = partition.iid(X.nRows, { clients: 2, seed: 7 }).indices.map((rows) => X.selectRows(rows));
    const r = distributedEM(parts, { nComponents: 8, covarianceType: 'diag', seed: 1 });
    expect(r.excluded).toEqual([]);
    expect(r.model.score(X)).toBeGreaterThan(central(X, 8) - 0.2);
    r.model.dispose();
    expect(() => distributedEM(parts, { nComponents: 8, covarianceType: 'diag', seed: 1, kfedLocalClusters: 3 })).toThrow(/6 distinct centers, fewer than the 8 clusters asked for/);
  });

  test('kfedStarts and kfedGrouping are checked (the grouping itself is tested in the core: gmm/dem.rs)', () => {
    const X = abalone();
    const parts = partition.iid(X.nRows, { clients: 4, seed: 3 }).indices.map((rows) => X.selectRows(rows));
    for (const bad of [0, 1.5, -1, 'ten']) expect(() => distributedEM(parts, { nComponents: 6, kfedStarts: bad as never })).toThrow(/kfedStarts must be an integer in \[1, /);
    expect(() => distributedEM(parts, { nComponents: 6, kfedGrouping: 'paper' as never })).toThrow(/kfedGrouping must be one of 'kmeans', 'seed-device', got "paper"/);
  });
});

describe('honest clients are never refused (full covariances)', () => {
  // Components with few effective rows have second moments that are positive
  // semidefinite only up to rounding; components the rows barely touch have
  // counts of 1e-150 down to subnormal numbers. Both once excluded honest clients.
  const satellite = () => {
    const d = labelledFromCsv(readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });
    return { X: new MinMaxScaler().fitTransform(d.X), labels: d.labels! };
  };

  test('satellite.csv, min-max scaled, dealt IID to 5 clients, K = 8, kfed: no client excluded', () => {
    const { X } = satellite();
    for (const seed of [0, 1, 2]) {
      const parts = partition.iid(X.nRows, { clients: 5, seed }).indices.map((rows) => X.selectRows(rows));
      const r = distributedEM(parts, { nComponents: 8, covarianceType: 'full', init: 'kfed', seed });
      r.model.dispose();
      expect(r.excluded, `seed ${seed}`).toEqual([]);
    }
  });

  test('satellite.csv, one class per client (6 clients), K = 6, every initialization: no client excluded', () => {
    const { X, labels } = satellite();
    for (const init of ['kfed', 'subset', 'separated'] as const) {
      const r = distributedEM(split(X, 6, (i) => labels[i]!), { nComponents: 6, covarianceType: 'full', init, seed: 1, maxRounds: 20 });
      r.model.dispose();
      expect(r.excluded, init).toEqual([]);
    }
  });

  test('200 single-cluster clients of 10 blobs: no client excluded, every initialization', () => {
    const raw = blobs(6000, 5, 10, 3, 4);
    const X = new MinMaxScaler().fitTransform(raw);
    // blobs() puts row i in blob i % 10: client c holds 30 rows of blob c % 10
    const parts = split(X, 200, (i) => (Math.floor(i / 10) % 20) * 10 + (i % 10));
    for (const init of ['kfed', 'subset', 'separated'] as const) {
      const r = distributedEM(parts, { nComponents: 10, covarianceType: 'full', init, seed: 2, maxRounds: 10 });
      r.model.dispose();
      expect(r.excluded, init).toEqual([]);
    }
    // with the feature range declared, the tiny components' means and second moments are checked against it too
    const r = distributedEM(parts, { nComponents: 10, covarianceType: 'full', init: 'kfed', seed: 2, maxRounds: 10, featureRange: [0, 1] });
    r.model.dispose();
    expect(r.excluded, 'featureRange [0, 1]').toEqual([]);
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
    // the client's host cannot encode it: a refusal saying why
    ['NaN statistics', (m) => ({ ...m, payload: { ...(m.payload as object), s1: new Float64Array([NaN, 1, 2, 3, 4, 5, 6, 7]) } }), /cannot send NaN/],
    ['a wrong shape', edit((p) => p.s1.pop()), /s1 has 7 values; expected 8/],
    ['a negative count', edit((p) => (p.nk[0] = -1)), /nk\[0\] is -1; a component's count must be at least 0/],
    ['counts beyond its rows', edit((p) => (p.rows = Math.floor(Math.max(...p.nk)) - 1)), /nk\[\d\] is [\d.]+ but the client reports only \d+ rows/],
    ['a negative variance', edit((p) => (p.s2[0] = -p.s2[0]!)), /negative variance/],
    // what would steer the stopping rule: a log-likelihood its statistics do not allow (Q to Q + n ln K)
    ['a log-likelihood of 1e308', edit((p) => (p.logLikelihood = 1e308)), /its log-likelihood 1e308 lies outside \[-?[\d.e+]+, -?[\d.e+]+\], what its statistics allow/],
    ['a log-likelihood far below its statistics', edit((p) => (p.logLikelihood = p.logLikelihood * 10 - 1e6)), /lies outside/],
    ['second moments times 1e300 with the honest log-likelihood', edit((p) => (p.s2 = p.s2.map((x) => x * 1e300))), /lies outside/],
    // accepted, but its summary's magnitudes raise the pooled variance floor until every component looks singular:
    // the server finds it (a scale far from the others', and the M-step succeeds without it) and excludes it
    [
      'a summary claiming rows of magnitude 1e150',
      edit((p) => {
        const summary = (p as Stats & { summary: { absMax: number[] } }).summary;
        summary.absMax = summary.absMax.map(() => 1e150);
      }),
      /its statistics make the M-step fail \(.*\); without them it succeeds/,
    ],
    // the payload's schema: the value, JSON-quoted, and what it must be
    ['a log-likelihood that is not a number', (m) => ({ ...m, payload: { ...(m.payload as object), logLikelihood: 'x' } }), /logLikelihood is "x"; it must be a finite number/],
    ['a field the message does not declare', (m) => ({ ...m, payload: { ...(m.payload as object), extra: 1 } }), /extra/],
  ];

  test.each(cases)('%s: excluded with its reason, the others reach the model without it', (_, corrupt, reason) => {
    const { parts } = nonIid(5);
    const options: DistributedEMOptions = { nComponents: 4, covarianceType: 'diag', init: 'separated', seed: 1 };
    const bad = run(parts, options, (c, i) => new Recording(c, i === 2 ? corrupt : undefined));
    const without = run([parts[0]!, parts[1]!, parts[3]!], options);
    expect(bad.result.excluded).toHaveLength(1);
    const e = bad.result.excluded[0]!;
    expect(e.client).toBe('client-2');
    expect(e.round).toBe(1);
    expect(e.reason).toMatch(/^client-2: /);
    expect(e.reason).not.toMatch(/^client-2: client-2/);
    expect(e.reason).toMatch(reason);
    expect(bad.result.failures).toEqual([{ client: 'client-2', round: 1, kind: expect.stringMatching(/^(invalid|refused)$/), reason: e.reason, excluded: true }]);
    // it is asked nothing more: one request, and the later rounds ask the other three
    expect((bad.clients[2] as Recording).received).toHaveLength(1);
    expect(bad.result.history.slice(1).every((h) => h.asked === 3 && h.accepted === 3)).toBe(true);
    // the same model, bit for bit, as a run that never had the bad client
    expect(bad.model.means).toEqual(without.model.means);
    expect(bad.model.covariances).toEqual(without.model.covariances);
    expect(bad.model.weights).toEqual(without.model.weights);
    expect(bad.history).toEqual(without.history);
    bad.model.dispose();
    without.model.dispose();
  });

  test.each(cases)("%s with onInvalidClient 'throw': the run fails naming the client, nothing leaks", (_, corrupt, reason) => {
    const { parts } = nonIid(5);
    const before = wasm().fm_heap_in_use();
    let thrown: unknown;
    try {
      run(parts, { nComponents: 4, covarianceType: 'diag', init: 'separated', onInvalidClient: 'throw' }, (c, i) => (i === 2 ? new Recording(c, corrupt) : c));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidMessageError);
    expect((thrown as Error).message).toMatch(/^client-2: /);
    expect((thrown as Error).message).toMatch(reason);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });

  test('a client with zero rows is excluded; one with other dimensions is an InvalidDataError before the run, and its bad init reply in a real federation is excluded', () => {
    const { parts } = nonIid(6);
    const d3 = Matrix.fromRows([
      [0.1, 0.2, 0.3],
      [0.3, 0.2, 0.1],
    ]);
    for (const initMethod of ['separated', 'kfed', 'subset'] as const) {
      const options: DistributedEMOptions = { nComponents: 4, covarianceType: 'full', init: initMethod, seed: 3 };
      const r = distributedEM([...parts, Matrix.zeros(0, 2)], options);
      const clean = distributedEM(parts, options);
      expect(r.excluded.map((e) => e.client)).toEqual(['client-4']);
      expect(r.excluded[0]!.reason).toMatch(/^client-4: reports 0 rows/);
      expect(r.excluded.every((e) => e.round === 1)).toBe(true);
      expect(r.model.means).toEqual(clean.model.means);
      expect(r.model.covariances).toEqual(clean.model.covariances);
      r.model.dispose();
      clean.model.dispose();
      // the one-call function is told the clients' data: another column count is the caller's mistake
      expect(() => distributedEM([...parts, d3], options)).toThrow(InvalidDataError);
      expect(() => distributedEM([...parts, d3], options)).toThrow('client-4 (clientData[4]) has 3 columns but client-0 (clientData[0]) has 2');
      expect(() => distributedEM(parts, { ...options, nFeatures: 3 })).toThrow('client-0 (clientData[0]) has 2 columns but nFeatures is 3');
      // a real federation's server knows its dimension only: the client's reply is refused and the client excluded
      const server = new DemServer({ ...options, nFeatures: 2 });
      const clients = [...parts, d3].map((x, i) => new DemClient(`client-${i}`, x));
      try {
        const run = runFederationSync(server, clients);
        expect(run.excluded.map((e) => e.client)).toEqual(['client-4']);
        expect(run.excluded[0]!.reason).toMatch(
          initMethod === 'separated' ? /^client-4: the model has 2 features but the client's rows have 3/ : /^client-4: its rows have 3 features; this federation has 2/,
        );
        run.model.dispose();
      } finally {
        server.dispose();
        for (const c of clients) c.dispose();
      }
    }
  });

  test('when every client is excluded the run fails with a FederationError naming them, and nothing leaks', () => {
    const before = wasm().fm_heap_in_use();
    let thrown: unknown;
    try {
      distributedEM([Matrix.zeros(0, 2), Matrix.zeros(0, 2)], { nComponents: 2, init: 'separated' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FederationError);
    expect((thrown as Error).message).toMatch(/^round 1: 0 usable replies of 2, fewer than the 1 required \(client-0: reports 0 rows[^;]*; [^;]*; client-1: reports 0 rows/);
    // the only client has too few rows for 2 components
    expect(() => distributedEM([Matrix.fromRows([[0.5, 0.5, 0.5]])], { nComponents: 2, init: 'kfed', nFeatures: 3 })).toThrow(/fewer than the 2 clusters/);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });
});

describe('the server role driven by hand', () => {
  const ctx = (round: number, clients: string[]): RoundContext => ({ round, clients, available: clients });

  test('configure asks, accept checks one reply without changing state, aggregate folds the accepted ones in', () => {
    const { parts } = nonIid(11);
    const start = new GaussianMixture({ nComponents: 2, covarianceType: 'diag', seed: 1 }).fit(parts[0]!);
    const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
    const ids = clients.map((c) => c.id);
    const opts = { nFeatures: 2, covarianceType: 'diag' as const, init: params(start), tol: 0, maxRounds: 3 };
    const server = new DemServer(opts);
    const twin = new DemServer(opts);
    const answer = (reqs: ReadonlyMap<string, Message>, id: string) => {
      const req = reqs.get(id)!;
      return readReply(DEM_PROTOCOL, req, clients[ids.indexOf(id)]!.respond(readRequest(DEM_PROTOCOL, req)));
    };
    // one full round on both
    for (const s of [server, twin]) {
      const c = ctx(1, ids);
      const reqs = s.configure(c);
      expect([...reqs.keys()]).toEqual(ids);
      aggregate(s, c, new Map(ids.map((id) => [id, accept(s, answer(reqs, id), reqs.get(id)!, c)])), []);
    }
    expect(server.emRounds).toBe(1);
    // round 2: client-1 answers from other rows than in round 1 (consistent statistics of one row more); refused, nothing moves
    const c2 = ctx(2, ids);
    const reqs = server.configure(c2);
    const means = Array.from(server.model!.means);
    const grown = new DemClient('client-1', Matrix.vstack([parts[1]!, parts[0]!.selectRows([0])]));
    const moved = readReply(DEM_PROTOCOL, reqs.get('client-1')!, grown.respond(readRequest(DEM_PROTOCOL, reqs.get('client-1')!)));
    grown.dispose();
    expect(() => accept(server, moved, reqs.get('client-1')!, c2)).toThrow(InvalidMessageError);
    expect(() => accept(server, moved, reqs.get('client-1')!, c2)).toThrow(`reports ${parts[1]!.nRows + 1} rows, ${parts[1]!.nRows} before`);
    const good = answer(reqs, 'client-1');
    // a reply whose shapes do not fit the model, likewise
    const short = { ...good, payload: { ...(good.payload as object), nk: new Float64Array(1) } };
    expect(() => accept(server, short, reqs.get('client-1')!, c2)).toThrow(/nk has 1 values; expected 2/);
    expect(Array.from(server.model!.means)).toEqual(means);
    expect(server.emRounds).toBe(1);
    // the honest replies of the round are taken as if the refused ones had never come
    const accepted = new Map(ids.map((id) => [id, accept(server, answer(reqs, id), reqs.get(id)!, c2)]));
    aggregate(server, c2, accepted, []);
    const t2 = ctx(2, ids);
    const treqs = twin.configure(t2);
    aggregate(twin, t2, new Map(ids.map((id) => [id, accept(twin, answer(treqs, id), treqs.get(id)!, t2)])), []);
    expect(server.model!.means).toEqual(twin.model!.means);
    expect(server.history).toEqual(twin.history);
    for (const x of [server, twin, start, ...clients]) x.dispose();
  });

  test('the first statistics of a client must carry the summary the shift asks for; later ones must not', () => {
    const { parts } = nonIid(12);
    const client = new DemClient('a', parts[0]!);
    const server = new DemServer({ nFeatures: 2, nComponents: 2, covarianceType: 'tied', init: 'separated' });
    const c1 = ctx(1, ['a']);
    const req = server.configure(c1).get('a')!;
    expect((req.payload as { summaryShift?: unknown }).summaryShift).toBeInstanceOf(Float64Array);
    const reply = readReply(DEM_PROTOCOL, req, client.respond(readRequest(DEM_PROTOCOL, req)));
    const { summary: _s, ...bare } = reply.payload as Record<string, unknown>;
    expect(() => accept(server, { ...reply, payload: bare }, req, c1)).toThrow(/the first statistics must carry a summary of the client's rows/);
    aggregate(server, c1, new Map([['a', accept(server, reply, req, c1)]]), []);
    const c2 = ctx(2, ['a']);
    const req2 = server.configure(c2).get('a')!;
    expect((req2.payload as { summaryShift?: unknown }).summaryShift).toBeUndefined();
    const reply2 = readReply(DEM_PROTOCOL, req2, client.respond(readRequest(DEM_PROTOCOL, req2)));
    expect(() => accept(server, { ...reply2, payload: { ...(reply2.payload as object), summary: (reply.payload as { summary: unknown }).summary } }, req2, c2)).toThrow(
      /sends a summary that was not asked for/,
    );
    server.dispose();
    client.dispose();
  });

  test('a client refuses a request it cannot use, and stays usable', () => {
    const client = new DemClient('a', Matrix.fromRows([[0.1, 0.2], [0.3, 0.4]]));
    const subset = (count: number) => readRequest(DEM_PROTOCOL, message('dem/subset-request', 'server', 1, { count, seed: 1 }));
    expect(() => client.respond(subset(3))).toThrow(/asks for 3 rows but the client has 2/);
    expect((client.respond(subset(2)).payload as { count: number }).count).toBe(2);
    // the schema refuses what the client never sees
    expect(() => readRequest(DEM_PROTOCOL, message('dem/kfed-request', 'server', 1, { localClusters: 0, covarianceType: 'full', seed: 1 }))).toThrow(
      /localClusters is 0; it must be a whole number in \[1, 2147483647\]/,
    );
    expect(() => readRequest(DEM_PROTOCOL, message('dem/kfed-request', 'server', 1, { localClusters: 1, covarianceType: 'dense', seed: 1 }))).toThrow(
      /covarianceType is "dense"; it must be one of "full", "tied", "diag", "spherical"/,
    );
    client.dispose();
  });
});

/** An in-process transport that edits client-1's reply bytes in one round (JSON on the wire, so that the edits read as text). */
class Spoiling extends InProcessTransport {
  constructor(
    clients: ClientRole[],
    private readonly spoilRound: number,
    private readonly edit: (text: string, ex: Exchange) => string | undefined,
  ) {
    super(clients, { encoding: 'json' });
  }
  override exchangeSync(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Exchange {
    const ex = super.exchangeSync(round, messages, options);
    if (round === this.spoilRound) {
      const text = new TextDecoder().decode(ex.received.get('client-1')![0] as Uint8Array);
      const out = this.edit(text, ex);
      if (out !== undefined) {
        expect(out).not.toBe(text);
        ex.received.set('client-1', [new TextEncoder().encode(out)]);
      }
    }
    return ex;
  }
}

describe('a declared feature range', () => {
  test.each(COVARIANCE_TYPES)('%s: honest clients inside it give the same run as without it, for every initialization', (covarianceType) => {
    const { parts } = nonIid(3);
    for (const init of ['separated', 'subset', 'kfed'] as const) {
      const options: DistributedEMOptions = { nComponents: 3, covarianceType, init, seed: 2, maxRounds: 6 };
      const plain = distributedEM(parts, options);
      const declared = distributedEM(parts, { ...options, featureRange: [0, 1] });
      expect(declared.excluded).toEqual([]);
      expect(declared.model.means).toEqual(plain.model.means);
      expect(declared.model.covariances).toEqual(plain.model.covariances);
      plain.model.dispose();
      declared.model.dispose();
    }
  });

  test('a client whose rows lie outside it is excluded with the bound it broke, at every phase', () => {
    const { parts } = nonIid(3);
    const outside = parts.map((p, i) => (i === 1 ? new Matrix(p.data.map((v) => 3 * v), p.nRows, p.nCols) : p));
    for (const [init, phase] of [['separated', /declared range/], ['subset', /values\[\d+\] is [\d.]+, outside feature \d's declared range \[0, 1\]/], ['kfed', /outside feature \d's declared range/]] as const) {
      const r = distributedEM(outside, { nComponents: 3, covarianceType: 'diag', init, seed: 2, maxRounds: 3, featureRange: [0, 1] });
      expect(r.excluded.map((e) => e.client)).toEqual(['client-1']);
      expect(r.excluded[0]!.reason).toMatch(phase);
      r.model.dispose();
    }
  });
});

describe('raw wire replies', () => {
  const spoil: Array<[string, (t: string) => string, RegExp]> = [
    ['Infinity in a number field', (t) => t.replace(/"logLikelihood":[^,]*/, '"logLikelihood":1e999'), /logLikelihood is Infinity; it must be a finite number/],
    ['Infinity in an array', (t) => t.replace(/"nk":\[[^,\]]*/, '"nk":[1e999'), /nk\[0\] is Infinity; values must be finite numbers/],
    ['null in an array', (t) => t.replace(/"s1":\[[^,\]]*/, '"s1":[null'), /s1\[0\] is null; values must be finite numbers/],
    ['a wrong sender', (t) => t.replace('"from":"client-1"', '"from":"client-0"'), /claims to come from "client-0"/],
    ['a wrong round', (t) => t.replace(/"round":\d+/, '"round":99'), /its reply is for round 99, not 2/],
    ['garbage', () => '{"protocol":"fedmix"', /not valid JSON/],
    ['a wrong kind', (t) => t.replace('"kind":"dem/stats"', '"kind":"dem/count"'), /expected a dem\/stats message, got dem\/count/],
  ];

  /** Data and a fixed start, so that runs differ only in what client-1 does in round 2. */
  const setup = () => {
    const { parts } = nonIid(7);
    const start = new GaussianMixture({ nComponents: 2, covarianceType: 'diag', seed: 1 }).fit(parts[0]!);
    return { parts, start, opts: { nFeatures: 2, covarianceType: 'diag' as const, init: params(start), tol: 0, maxRounds: 4 } };
  };

  test.each(spoil)('%s: client-1 is excluded in that round; the model is the one of a run where it refused that round', (_, f, hint) => {
    const { parts, start, opts } = setup();
    const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
    const refusing: ClientRole[] = clients.map((c) =>
      c.id !== 'client-1'
        ? c
        : {
            id: c.id,
            protocol: c.protocol,
            respond: (m: Message) => {
              if (m.round === 2) throw new InvalidDataError('not this time');
              return c.respond(m);
            },
          },
    );
    const server = new DemServer(opts);
    const reference = new DemServer(opts);
    const bad = runFederationSync(server, new Spoiling(clients, 2, f));
    const ref = runFederationSync(reference, new InProcessTransport(refusing, { encoding: 'json' }));
    expect(bad.excluded).toEqual([{ client: 'client-1', round: 2, reason: expect.stringMatching(hint) }]);
    expect(bad.excluded[0]!.reason).toMatch(/^client-1: /);
    expect(ref.excluded.map((e) => [e.client, e.round])).toEqual([['client-1', 2]]);
    expect(bad.model.means).toEqual(ref.model.means);
    expect(bad.model.covariances).toEqual(ref.model.covariances);
    expect(server.history).toEqual(reference.history);
    // client-1's first statistics were used: the run is not the one without it
    const without = runFederationSync(new DemServer(opts), clients.filter((c) => c.id !== 'client-1'));
    expect(without.model.means).not.toEqual(bad.model.means);
    for (const x of [bad.model, ref.model, without.model, server, reference, start, ...clients]) x.dispose();
  });

  test.each(spoil)("%s with onInvalid 'fail': the run throws, the server keeps the last complete round and can go on", (_, f, hint) => {
    const { parts, start, opts } = setup();
    const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
    const before = wasm().fm_heap_in_use();
    const server = new DemServer(opts);
    const twin = new DemServer(opts);
    expect(() => runFederationSync(server, new Spoiling(clients, 2, f), { onInvalid: 'fail' })).toThrow(InvalidMessageError);
    expect(server.emRounds).toBe(1);
    expect(server.history).toHaveLength(1);
    let thrown: unknown;
    const again = new DemServer(opts);
    try {
      runFederationSync(again, new Spoiling(clients, 2, f), { onInvalid: 'fail' });
    } catch (e) {
      thrown = e;
    }
    expect((thrown as Error).message).toMatch(/^client-1: /);
    expect((thrown as Error).message).toMatch(hint);
    again.dispose();
    // the failed round left no trace: going on gives the run that never failed
    const done = runFederationSync(server, clients);
    const whole = runFederationSync(twin, clients);
    expect(done.model.means).toEqual(whole.model.means);
    expect(done.model.covariances).toEqual(whole.model.covariances);
    expect(server.history).toEqual(twin.history);
    for (const x of [done.model, whole.model, server, twin]) x.dispose();
    expect(wasm().fm_heap_in_use()).toBe(before);
    for (const x of [start, ...clients]) x.dispose();
  });

  test('a reply that does not come is a timeout: the client loses that round only, even under onInvalid fail', () => {
    const { parts, start, opts } = setup();
    const clients = parts.map((p, i) => new DemClient(`client-${i}`, p));
    const server = new DemServer(opts);
    const r = runFederationSync(
      server,
      new Spoiling(clients, 2, (_t, ex) => {
        ex.received.delete('client-3');
        return undefined;
      }),
      { onInvalid: 'fail' },
    );
    expect(r.excluded).toEqual([]);
    expect(r.failures).toEqual([{ client: 'client-3', round: 2, kind: 'timeout', reason: 'client-3: did not answer round 2', excluded: false }]);
    expect(r.history.map((h) => [h.asked, h.accepted])).toEqual([
      [4, 4],
      [4, 3],
      [4, 4],
      [4, 4],
    ]);
    expect(server.emRounds).toBe(4);
    for (const x of [r.model, server, start, ...clients]) x.dispose();
  });
});

describe('options', () => {
  test('init given as parameters is read once, under guard: a throwing Proxy or getter is an InvalidParameterError', () => {
    // found by test/hostile-api.test.ts, seed 14 at 6000 runs: init's fields were read unguarded
    const throwing = new Proxy({}, { get: () => { throw new Error('trap'); }, ownKeys: () => { throw new Error('trap'); } });
    expect(() => new DemServer({ nComponents: 2, nFeatures: 2, init: throwing as never })).toThrow(/init\.weights could not be read/);
    const getter = Object.defineProperty({}, 'means', { enumerable: true, get: () => { throw new Error('getter'); } });
    expect(() => new DemServer({ nComponents: 2, nFeatures: 2, init: getter as never })).toThrow(InvalidParameterError);
  });

  test('bad options are InvalidParameterErrors, nothing leaks', () => {
    const { parts } = nonIid(9);
    const before = wasm().fm_heap_in_use();
    const bad: Array<[DistributedEMOptions, RegExp]> = [
      [{ init: 'random' as never }, /init must be one of 'separated', 'subset', 'kfed'/],
      [{ nComponents: 0 }, /nComponents/],
      [{ nComponents: 4, kfedLocalClusters: 5 }, /kfedLocalClusters must be an integer in \[1, 4\]/],
      [{ featureRange: [[0], [1, 1]] }, /featureRange\[0\] has 1 values/],
      [{ init: 'separated', featureRange: [1, 0] }, /featureRange of feature 0 is \[1, 0\]; min must be below max/],
      [{ tol: -1 }, /tol/],
      [{ maxRounds: 1.5 }, /maxRounds/],
      [{ onInvalidClient: 'ignore' as never }, /onInvalidClient/],
      [{ nComponents: 3, init: { weights: [0.5, 0.5], means: [0, 0, 1, 1], covariances: [1, 0, 0, 1, 1, 0, 0, 1] } }, /init has 2 weights but nComponents is 3/],
      [{ init: { weights: [0.5, 0.5], means: [0, 0, 1, 1], covariances: [1, 2, 2, 1, 1, 0, 0, 1] } }, /not positive definite/],
      [{ encoding: 'xml' as never }, /encoding must be 'binary', 'json' or 'none'/],
    ];
    for (const [o, hint] of bad) expect(() => distributedEM(parts, o), hint.source).toThrow(hint);
    expect(() => distributedEM([], {})).toThrow(InvalidParameterError);
    expect(() => distributedEM([Matrix.fromRows([[NaN, 1]])], {})).toThrow(/client-0: its data contains NaN at row 0, column 0/);
    expect(() => new DemServer({ nComponents: 2 } as never)).toThrow(/nFeatures must be an integer in \[1, 1048576\]/);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });

  test('subset initialization on too few distinct rows says so', () => {
    const parts = [Matrix.fromRows([[0.1, 0.1], [0.1, 0.1], [0.2, 0.2]])];
    expect(() => distributedEM(parts, { nComponents: 3, init: 'subset' })).toThrow(/subset initialization on 3 rows: .*distinct/);
  });
});

test('a first client with other features is an InvalidDataError naming it and both column counts, before any client is asked', () => {
  const { parts } = nonIid(5);
  const odd = Matrix.fromRows(Array.from({ length: 40 }, (_, i) => [i / 40, (i % 7) / 7, 0.5]));
  const before = wasm().fm_heap_in_use();
  expect(() => distributedEM([odd, ...parts], { nComponents: 4, covarianceType: 'diag', init: 'kfed', seed: 1 })).toThrow(
    new InvalidDataError("client-0 (clientData[0]) has 3 columns but client-1 (clientData[1]) has 2: every client's data needs the same columns"),
  );
  expect(wasm().fm_heap_in_use()).toBe(before);
});
