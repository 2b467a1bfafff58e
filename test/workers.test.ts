/**
 * Clients in worker threads (the built package: dist/node.js starts
 * dist/worker.js in each thread): every algorithm gives the same model as the
 * in-process run at the same seeds; clients that cannot be created, threads
 * that die and deadlines are failures of the run's policy, not crashes.
 *
 * Needs `bash scripts/setup.sh` first (it builds dist/).
 */
import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as f from '../dist/index.js';
import { makeClient, WorkerTransport, type ClientSpec } from '../dist/node.js';
import { blobs } from './helpers.js';

beforeAll(async () => {
  await f.init();
});

const open: WorkerTransport[] = [];
afterAll(async () => {
  await Promise.all(open.map((t) => t.close()));
});

async function start(specs: ClientSpec[], threads = 2): Promise<WorkerTransport> {
  const t = await WorkerTransport.start(specs, { threads });
  open.push(t);
  return t;
}

/** Six non-IID clients of 2-D blobs (each sees two of three clusters). */
function gmmSpecs(algorithm: 'dem' | 'fedgengmm' | 'fedgem', options?: (i: number) => Record<string, unknown>): ClientSpec[] {
  const X = blobs(1800, 2, 3, 5, 6);
  const parts = Array.from({ length: 6 }, (_, c) => {
    const rows: number[] = [];
    for (let i = 0; i < X.nRows; i++) if (i % 3 !== c % 3 && Math.floor(i / 3) % 6 === c) rows.push(i);
    return X.selectRows(rows);
  });
  // the helpers' matrices are of the ts/ sources' Matrix class: handed over as plain data
  return parts.map((x, i) => ({ algorithm, id: `client-${i}`, data: { data: x.data, nRows: x.nRows, nCols: x.nCols }, options: options?.(i) }));
}

/** The same run twice: over worker threads and in process, from the same specs. */
async function both<R>(specs: ClientSpec[], server: () => f.ServerRole<unknown, R>): Promise<[f.FederationResult<R>, f.FederationResult<R>]> {
  const t = await start(specs);
  const threaded = await f.runFederation(server(), t);
  const roles = specs.map((s) => makeClient(s));
  try {
    return [threaded, f.runFederationSync(server(), roles)];
  } finally {
    for (const r of roles) r.dispose();
  }
}

const gmm = (m: f.GaussianMixture) => [Array.from(m.weights), Array.from(m.means), Array.from(m.covariances)];

describe('every algorithm gives the in-process model', () => {
  test('distributed EM (k-FED initialization)', async () => {
    const [a, b] = await both(gmmSpecs('dem'), () => new f.DemServer({ nComponents: 3, nFeatures: 2, covarianceType: 'full', init: 'kfed', seed: 4 }));
    expect(gmm(a.model)).toEqual(gmm(b.model));
    expect(a.rounds).toBe(b.rounds);
    expect(a.traffic).toEqual(b.traffic);
  });

  test('FedGenGMM', async () => {
    const [a, b] = await both(gmmSpecs('fedgengmm', (i) => ({ kMin: 1, kMax: 3, seed: i })), () => new f.FedGenGMMServer({ nComponents: 3, nFeatures: 2, seed: 2 }));
    expect(gmm(a.model.model)).toEqual(gmm(b.model.model));
    expect(a.model.clients).toEqual(b.model.clients);
  });

  test('FedGEM with phi tuned', async () => {
    const [a, b] = await both(gmmSpecs('fedgem', (i) => ({ nComponents: 2, seed: i })), () => new f.FedGEMServer({ nFeatures: 2, rounds: 4, phi: f.PHI_GRID }));
    expect(a.model.estimatedK).toBe(b.model.estimatedK);
    expect(Array.from(a.model.globalCenters)).toEqual(Array.from(b.model.globalCenters));
    expect(a.model.phiScores).toEqual(b.model.phiScores);
  });

  test('MDM', async () => {
    const truth = new f.DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[0.3, 1, 3], [3, 1, 0.3]], pi: [0, 1].map(() => Array.from({ length: 30 }, (_, i) => (i >= 9 ? 1 / 21 : 0))) });
    const { histograms } = truth.sample(60, { seed: 3 });
    const specs: ClientSpec[] = Array.from({ length: 60 }, (_, i) => ({
      algorithm: 'mdm',
      id: `client-${i}`,
      data: { data: Float64Array.from([0, 1, 2], (j) => histograms.get(i, j)), nRows: 1, nCols: 3 },
      options: { seed: i },
    }));
    const [a, b] = await both(specs, () => new f.MdmServer({ nComponents: 2, nCategories: 3, maxCount: 30, rounds: 5, seed: 1 }));
    expect(Array.from(a.model.alpha)).toEqual(Array.from(b.model.alpha));
  });
});

/**
 * Specs with labels (they cross to the threads with the rows): three clients of 4-D blobs, row i of
 * blob i % `blobs`, labelled by `label(blob)`.
 */
function labelledSpecs(algorithm: 'fedavg' | 'feddistr', nBlobs: number, label: (blob: number) => number): ClientSpec[] {
  return [90, 120, 60].map((n, c) => {
    const x = blobs(n, 4, nBlobs, 20 + c);
    return { algorithm, id: `client-${c}`, data: { data: x.data, nRows: x.nRows, nCols: x.nCols }, labels: Int32Array.from({ length: n }, (_, i) => label(i % nBlobs)), options: { seed: c } };
  });
}

describe('clients with labels', () => {
  test('a FedAvg classifier: the same parameters, bit for bit', async () => {
    const network = { sizes: [4, 8, 3], activation: 'relu' as const, outputActivation: 'softmax' as const, loss: 'softmax-cross-entropy' as const, seed: 5 };
    const [a, b] = await both(labelledSpecs('fedavg', 3, (k) => k), () => new f.FedAvgServer({ network, rounds: 3, epochs: 2, batchSize: 16 }));
    expect(a.excluded).toEqual([]);
    expect(a.rounds).toBe(3);
    expect(Array.from(a.model.parameters)).toEqual(Array.from(b.model.parameters));
    expect(a.traffic).toEqual(b.traffic);
  });

  test('FedDistr: the same consolidated base distributions and memberships', async () => {
    // six blobs, two tasks of three subclasses each
    const [a, b] = await both(labelledSpecs('feddistr', 6, (k) => k % 2), () => new f.FedDistrServer({ dimension: 4, kMax: 4, seed: 1 }));
    expect(a.excluded).toEqual([]);
    expect(a.model.estimatedBaseDistributions).toBeGreaterThan(1);
    expect(a.model).toEqual(b.model);
    expect(a.traffic).toEqual(b.traffic);
  });
});

describe('failures', () => {
  test('a client that cannot be created never joins, with its reason', async () => {
    const specs = gmmSpecs('dem');
    specs[2] = { ...specs[2]!, data: { data: Float64Array.of(1, NaN), nRows: 1, nCols: 2 } };
    const t = await start(specs);
    expect(t.unborn).toEqual([{ client: 'client-2', round: 0, reason: expect.stringMatching(/client-2: creating the client failed: .*NaN/) }]);
    expect(await t.available()).toEqual(['client-0', 'client-1', 'client-3', 'client-4', 'client-5']);
    const r = await f.runFederation(new f.DemServer({ nComponents: 3, nFeatures: 2, init: 'kfed', seed: 1 }), t);
    expect(r.excluded).toEqual([]);
    expect(r.history[0]!.asked).toBe(5);
  });

  test("a thread that dies makes its clients dropouts of the round; the others go on", async () => {
    const t = await start(gmmSpecs('dem'));
    // the second lane's thread ends under the transport (clients 1, 3, 5)
    const pools = (t as unknown as { pools: { threads: { terminate(): Promise<number> }[] }[] }).pools;
    await pools[1]!.threads[0]!.terminate();
    const r = await f.runFederation(new f.DemServer({ nComponents: 3, nFeatures: 2, init: 'kfed', seed: 1, maxRounds: 3 }), t);
    const first = r.history[0]!.failures;
    expect(first.map((x) => [x.client, x.kind, x.excluded])).toEqual([
      ['client-1', 'dropout', false],
      ['client-3', 'dropout', false],
      ['client-5', 'dropout', false],
    ]);
    expect(r.history[0]!.accepted).toBe(3);
  });

  test('clients that miss the deadline are timeouts; a round without replies fails the run', async () => {
    const t = await start(gmmSpecs('fedgengmm', () => ({ kMin: 1, kMax: 6, nInit: 5 })));
    await expect(f.runFederation(new f.FedGenGMMServer({ nComponents: 3, nFeatures: 2 }), t, { roundTimeout: 0.001 })).rejects.toThrow(
      /round 1: 0 usable replies of 6, fewer than the 1 required \(client-0: did not answer within 1 ms/,
    );
  });
});

describe("GaussianMixture's threads (fitAsync: E-steps over worker threads, each with its own WASM instance)", () => {
  const X = blobs(1200, 3, 3, 11);
  // the helpers' matrix is of the ts/ sources' Matrix class: handed over as plain data
  const x = new f.Matrix(X.data, X.nRows, X.nCols);
  const params = (m: f.GaussianMixture) => [...m.weights, ...m.means, ...m.covariances, m.lowerBound, m.nIter];
  /** this process's threads (Linux), to see that a fit leaves none behind */
  const threadCount = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : 0);

  test('the same bits on every run at a thread count, one thread to rounding, and no thread left behind', async () => {
    const before = threadCount();
    let worst = 0;
    for (const covarianceType of ['full', 'diag', 'tied', 'spherical'] as const) {
      const o = { nComponents: 3, covarianceType, seed: 2, nInit: 2, tol: 1e-8 };
      const one = new f.GaussianMixture(o).fit(x);
      const a = await new f.GaussianMixture({ ...o, threads: 3 }).fitAsync(x);
      expect(a.fitThreads).toEqual({ threads: 3, exchange: 'shared' });
      expect(one.fitThreads).toEqual({ threads: 1, exchange: 'none' });
      if (covarianceType === 'full') expect(params(a)).toEqual(params(await new f.GaussianMixture({ ...o, threads: 3 }).fitAsync(x)));
      expect(a.nIter, covarianceType).toBe(one.nIter);
      expect(a.converged).toBe(one.converged);
      const [p, q] = [params(a), params(one)];
      for (let i = 0; i < p.length; i++) worst = Math.max(worst, Math.abs(p[i]! - q[i]!) / Math.max(1, Math.abs(q[i]!)));
    }
    // threads: 1 (the default) is fit() itself, bit for bit
    const o = { nComponents: 3, seed: 2 };
    expect(params(await new f.GaussianMixture(o).fitAsync(x))).toEqual(params(new f.GaussianMixture(o).fit(x)));
    expect(worst).toBeLessThan(1e-10);
    expect(threadCount()).toBe(before);
  });

  test("'auto', a warm start, and typed errors: fit() refuses threads, bad rows fail before any thread starts", async () => {
    const warm = await new f.GaussianMixture({ nComponents: 3, seed: 1, threads: 'auto', warmStart: true, maxIter: 3 }).fitAsync(x);
    const bound = warm.lowerBound;
    await warm.fitAsync(x);
    expect(warm.lowerBound).toBeGreaterThanOrEqual(bound - 1e-12);
    expect(() => new f.GaussianMixture({ threads: 2 }).fit(x)).toThrow(f.InvalidParameterError);
    expect(() => new f.GaussianMixture({ threads: 0 })).toThrow(/threads must be 'auto' or an integer in \[1, 256\]/);
    const bad = new f.Matrix(Float64Array.from(x.data, (v, i) => (i === 7 ? NaN : v)), x.nRows, x.nCols);
    const before = threadCount();
    await expect(new f.GaussianMixture({ nComponents: 3, threads: 2 }).fitAsync(bad)).rejects.toThrow(f.InvalidDataError);
    expect(threadCount()).toBe(before);
  });
});

describe("KMeans' threads (fitAsync: Lloyd steps over worker threads, each with its own WASM instance)", () => {
  const X = blobs(1500, 3, 4, 5, 2);
  const x = new f.Matrix(X.data, X.nRows, X.nCols);
  const close = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).every((v, i) => Math.abs(v - b[i]!) <= 1e-12 * Math.max(1, Math.abs(b[i]!)));
  const threadCount = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : 0);

  test('the same bits on every run at a thread count; one thread to rounding, an emptied cluster re-seeded alike; no thread left behind', async () => {
    const before = threadCount();
    // the last given center is far from every row: its cluster starts empty and is re-seeded with the farthest row
    const given = [[-4, -4, -4], [0, 0, 0], [4, 4, 4], [1e3, 1e3, 1e3]];
    for (const init of ['k-means++', 'random', given] as const) {
      const o = { nClusters: 4, seed: 3, nInit: 2, init, tol: 1e-6 };
      const one = new f.KMeans(o).fit(x);
      const a = await new f.KMeans({ ...o, threads: 3 }).fitAsync(x);
      const b = await new f.KMeans({ ...o, threads: 3 }).fitAsync(x);
      expect(a.fitThreads).toEqual({ threads: 3, exchange: 'shared' });
      expect(one.fitThreads).toEqual({ threads: 1, exchange: 'none' });
      expect([...a.centers, a.inertia, a.nIter]).toEqual([...b.centers, b.inertia, b.nIter]);
      expect(a.labels).toEqual(one.labels);
      expect(a.nIter).toBe(one.nIter);
      expect(close(a.centers, one.centers) && close([a.inertia], [one.inertia]), String(init)).toBe(true);
    }
    // threads: 1 (the default) is fit() itself, bit for bit
    const o = { nClusters: 4, seed: 1 };
    const [p, q] = [await new f.KMeans(o).fitAsync(x), new f.KMeans(o).fit(x)];
    expect([...p.centers, p.inertia]).toEqual([...q.centers, q.inertia]);
    expect(threadCount()).toBe(before);
  });

  test("typed errors: fit() refuses threads, bad rows and centers fail before any thread starts; 'auto' and a saved model keep the option", async () => {
    expect(() => new f.KMeans({ threads: 2 }).fit(x)).toThrow(f.InvalidParameterError);
    expect(() => new f.KMeans({ threads: 'all' as never })).toThrow(/threads must be 'auto' or an integer in \[1, 256\]/);
    const bad = new f.Matrix(Float64Array.from(x.data, (v, i) => (i === 7 ? NaN : v)), x.nRows, x.nCols);
    const before = threadCount();
    await expect(new f.KMeans({ nClusters: 3, threads: 2 }).fitAsync(bad)).rejects.toThrow(f.InvalidDataError);
    await expect(new f.KMeans({ nClusters: 2, init: [[0, 0]], threads: 2 }).fitAsync(x)).rejects.toThrow(f.InvalidParameterError);
    expect(threadCount()).toBe(before);
    const auto = await new f.KMeans({ nClusters: 4, seed: 2, threads: 'auto' }).fitAsync(x);
    expect(f.KMeans.fromJSON(JSON.stringify(auto.toJSON())).threads).toBe('auto');
    expect(f.KMeans.fromJSON(JSON.stringify(auto.toJSON())).fitThreads).toBeUndefined();
    expect(new f.KMeans({ nClusters: 4 }).fit(x).toJSON().options).not.toHaveProperty('threads');
  });
});

describe("a fit reports the threads it ran on (fitThreads), so that 'auto' and too few rows are not silent", () => {
  const X = blobs(1500, 3, 4, 5, 2);
  const x = new f.Matrix(X.data, X.nRows, X.nCols);
  // 300 rows: room for one shard of MIN_SHARD_ROWS (256) only
  const few = new f.Matrix(x.data.slice(0, 300 * 3), 300, 3);
  const cores = Math.min(availableParallelism(), Math.floor(x.nRows / 256));

  test("'auto' resolves to the cores the runtime reports (at most one thread per 256 rows); a count past the rows runs on fewer; a model read back ran nowhere", async () => {
    for (const make of [(threads: f.Threads) => new f.GaussianMixture({ nComponents: 3, seed: 1, threads }), (threads: f.Threads) => new f.KMeans({ nClusters: 3, seed: 1, threads })]) {
      const auto = await make('auto').fitAsync(x);
      expect(auto.fitThreads).toEqual(cores === 1 ? { threads: 1, exchange: 'none' } : { threads: cores, exchange: 'shared' });
      expect((await make(4).fitAsync(few)).fitThreads).toEqual({ threads: 1, exchange: 'none' });
      expect((await make(8).fitAsync(x)).fitThreads).toEqual({ threads: 5, exchange: 'shared' });
      const unfitted = make(2);
      expect(unfitted.fitThreads).toBeUndefined();
      // a copy: the report cannot be changed from outside
      const report = auto.fitThreads!;
      report.threads = 99;
      expect(auto.fitThreads!.threads).not.toBe(99);
    }
    const g = await new f.GaussianMixture({ nComponents: 3, seed: 1, threads: 2 }).fitAsync(x);
    expect(f.GaussianMixture.fromJSON(JSON.stringify(g.toJSON())).fitThreads).toBeUndefined();
  });
});

describe('federated local fits on threads (the client option threads)', () => {
  const X = blobs(1200, 3, 3, 9, 3);
  const x = new f.Matrix(X.data, X.nRows, X.nCols);
  const close = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((v, i) => Math.abs(v - b[i]!) <= 1e-9 * Math.max(1, Math.abs(b[i]!)));

  test("a FedGenGMM client's BIC selection and a FedDistr client's clusterings (GaussianMixture, KMeans) on 2 threads upload what one thread uploads, to rounding", async () => {
    const o = { kMin: 1, kMax: 4, seed: 3 };
    const one = new f.FedGenGMMClient('a', x, o).train();
    const threaded = new f.FedGenGMMClient('b', x, { ...o, threads: 2 });
    expect(() => threaded.train()).toThrow(f.InvalidParameterError);
    const two = await threaded.trainAsync();
    expect(two.nComponents).toBe(one.nComponents);
    expect(close([...two.means, ...two.covariances, two.lowerBound], [...one.means, ...one.covariances, one.lowerBound])).toBe(true);

    const labels = Array.from({ length: x.nRows }, (_, i) => i % 2);
    for (const clustering of ['gmm', 'kmeans'] as const) {
      const server = new f.FedDistrServer({ dimension: 3, kMax: 3, seed: 1, clustering, criterion: clustering === 'gmm' ? 'bic' : 'silhouette' });
      const request = server.configure({ round: 1, clients: ['0'], available: ['0'] }).get('0')!;
      const sync = new f.FedDistrClient('0', x, { labels }).respond(request) as f.Message;
      const pending = new f.FedDistrClient('0', x, { labels, threads: 2 }).respond(request);
      expect(pending).toBeInstanceOf(Promise);
      const [p, q] = [(sync.payload as { bases: { count: number; mean: number[] }[] }).bases, ((await pending) as f.Message).payload as { bases: { count: number; mean: number[] }[] }];
      expect(q.bases.map((b) => b.count), clustering).toEqual(p.map((b) => b.count));
      expect(q.bases.every((b, i) => close(b.mean, p[i]!.mean))).toBe(true);
    }
  });
});

/**
 * The per-iteration exchange with the threads (ts/parallel/shared-channel.ts):
 * in Node through a SharedArrayBuffer with Atomics, else (and here when
 * forced) as messages; the thread runs the same code on the same numbers
 * either way.
 */
describe("the threads' exchange: shared memory or messages", () => {
  type Pool = {
    exchange: 'shared' | 'messages';
    kmeansStep(centers: Float64Array, k: number, fresh: boolean, labels: boolean): Promise<unknown[]>;
    gmmStats(model: { covType: number; k: number; d: number; weights: Float64Array; means: Float64Array; covariances: Float64Array; precisionsCholesky: Float64Array }): Promise<{ nk: Float64Array; loglik: number }[]>;
    close(): Promise<void>;
    threads: { endpoint: { worker: { terminate(): Promise<number> } } }[];
  };
  type PoolModule = { ShardPool: { start(shards: { rows: Float64Array; n: number }[], d: number): Promise<Pool> }; setExchange(mode: 'auto' | 'messages'): void };
  // the built pool (no declarations of its own: it is internal), the very module the fits load
  const poolModule = () => import('../dist/parallel.pool.js' as string) as Promise<PoolModule>;
  const threadCount = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : 0);
  const X = blobs(1500, 3, 4, 7, 4);
  const x = new f.Matrix(X.data, X.nRows, X.nCols);

  test('GaussianMixture and KMeans give the same bits by either exchange, and a pool says which it uses', async () => {
    const { ShardPool, setExchange } = await poolModule();
    const exchanges = new Set<string>();
    const fits = async () => {
      const out: number[][] = [];
      for (const covarianceType of ['full', 'diag', 'tied', 'spherical'] as const) {
        const g = await new f.GaussianMixture({ nComponents: 3, covarianceType, seed: 2, nInit: 2, tol: 1e-9, threads: 3 }).fitAsync(x);
        out.push([...g.weights, ...g.means, ...g.covariances, ...g.precisionsCholesky, g.lowerBound, g.nIter]);
        exchanges.add(g.fitThreads!.exchange);
      }
      // the last given center is far from every row: its cluster is re-seeded (a message task amid the shared ones)
      const given = [[-4, -4, -4], [0, 0, 0], [4, 4, 4], [1e3, 1e3, 1e3]];
      for (const init of ['k-means++', given] as const) {
        const km = await new f.KMeans({ nClusters: 4, seed: 3, nInit: 3, init, tol: 1e-6, threads: 3 }).fitAsync(x);
        out.push([...km.centers, km.inertia, km.nIter, ...km.labels]);
        exchanges.add(km.fitThreads!.exchange);
      }
      return out;
    };
    const shard = { rows: new Float64Array(256 * 3), n: 256 };
    try {
      const shared = await ShardPool.start([shard], 3);
      expect(shared.exchange).toBe('shared');
      await shared.close();
      const a = await fits();
      expect([...exchanges]).toEqual(['shared']);
      exchanges.clear();
      setExchange('messages');
      const messages = await ShardPool.start([shard], 3);
      expect(messages.exchange).toBe('messages');
      await messages.close();
      const b = await fits();
      expect([...exchanges]).toEqual(['messages']);
      expect(a).toEqual(b);
    } finally {
      setExchange('auto');
    }
  });

  test("a task's failure comes back as its typed error by either exchange, and the thread serves the next task", async () => {
    const { ShardPool, setExchange } = await poolModule();
    // diagonal covariances (the core's code 2) of one component
    const model = (d: number) => ({ covType: 2, k: 1, d, weights: new Float64Array([1]), means: new Float64Array(d), covariances: new Float64Array(d).fill(1), precisionsCholesky: new Float64Array(d).fill(1) });
    const answers: unknown[] = [];
    try {
      for (const mode of ['auto', 'messages'] as const) {
        setExchange(mode);
        const pool = await ShardPool.start([{ rows: Float64Array.from({ length: 600 }, (_, i) => i % 7), n: 300 }], 2);
        await expect(pool.gmmStats(model(3))).rejects.toThrow(new f.InvalidDataError('the shard has 2 features but the model has 3'));
        const [st] = await pool.gmmStats(model(2));
        answers.push([...st!.nk, st!.loglik]);
        await pool.close();
      }
    } finally {
      setExchange('auto');
    }
    expect(answers[0]).toEqual(answers[1]);
    expect((answers[0] as number[])[0]).toBe(300);
  });

  test('a thread that dies while the calling thread waits for its answer fails the step with a WasmError, by either exchange, and leaves no thread behind', async () => {
    const { ShardPool, setExchange } = await poolModule();
    // a step long enough (some 10^7 distances) that the thread is still at it when it is ended
    const [n, d, k] = [200_000, 8, 64];
    const rows = Float64Array.from({ length: n * d }, (_, i) => Math.sin(i));
    const centers = Float64Array.from({ length: k * d }, (_, i) => Math.cos(i));
    const before = threadCount();
    try {
      for (const mode of ['auto', 'messages'] as const) {
        setExchange(mode);
        const pool = await ShardPool.start([{ rows, n }], d);
        expect(pool.exchange).toBe(mode === 'auto' ? 'shared' : 'messages');
        // a first step, so that the shared path serves its channel when the second is posted
        await pool.kmeansStep(centers, k, true, false);
        const step = pool.kmeansStep(centers, k, false, false);
        void pool.threads[0]!.endpoint.worker.terminate();
        await expect(step).rejects.toThrow(f.WasmError);
        await expect(step).rejects.toThrow(/a fitting thread failed: it exited with code 1/);
        // the pool refuses further steps with the same error, and closes
        await expect(pool.kmeansStep(centers, k, false, false)).rejects.toThrow(f.WasmError);
        await pool.close();
      }
    } finally {
      setExchange('auto');
    }
    expect(threadCount()).toBe(before);
  });
});
