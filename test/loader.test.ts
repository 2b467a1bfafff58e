/**
 * The loader: which build runs, concurrent and repeated init(), the backend
 * order rule, use before init(), and models surviving WASM memory growth.
 * Tests run in order and share this file's module state.
 */
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import {
  backendInfo,
  FedmixError,
  GaussianMixture,
  init,
  InvalidParameterError,
  KMeans,
  Matrix,
  selectGaussianMixture,
  WasmError,
} from '../ts/index.js';
import { instance, resetForTests, wasm } from '../ts/wasm/loader.js';
import { blobs } from './helpers.js';

const X = blobs(300, 3, 3, 21);

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  // leave the file initialized, as other code in this worker would expect
  await init();
});

describe('init()', () => {
  test('reports the SIMD build on Node 20', async () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
    const info = await init();
    expect(info).toEqual({ simd: true, backend: 'simd' });
    expect(backendInfo()).toEqual({ simd: true, backend: 'simd' });
    expect(wasm().fm_simd()).toBe(1);
  });

  test('10 concurrent calls share one instantiation', async () => {
    resetForTests();
    expect(backendInfo()).toBeUndefined();
    const spy = vi.spyOn(WebAssembly, 'instantiate');
    const infos = await Promise.all(Array.from({ length: 10 }, () => init()));
    expect(spy).toHaveBeenCalledTimes(1);
    for (const info of infos) expect(info).toEqual({ simd: true, backend: 'simd' });
    expect(new Set(infos).size).toBe(1); // the very same object
    expect(backendInfo()).toBe(infos[0]);
  });

  test('init() again, alone or concurrently, keeps the running instance and its models', async () => {
    const gen = instance().generation;
    const gm = new GaussianMixture({ nComponents: 3, seed: 2 }).fit(X);
    const before = { labels: gm.predict(X), score: gm.scoreSamples(X) };
    const spy = vi.spyOn(WebAssembly, 'instantiate');
    const again = await init();
    expect(again).toEqual({ simd: true, backend: 'simd' });
    const many = await Promise.all(Array.from({ length: 10 }, () => init()));
    for (const info of many) expect(info).toBe(again);
    // explicit 'simd' and 'auto' both agree with what runs
    expect(await init({ backend: 'simd' })).toBe(again);
    expect(await init({ backend: 'auto' })).toBe(again);
    expect(spy).not.toHaveBeenCalled();
    expect(instance().generation).toBe(gen);
    // the model made before the second init() is alive and gives the same answers
    expect(gm.isFitted).toBe(true);
    expect(gm.predict(X)).toEqual(before.labels);
    expect(gm.scoreSamples(X)).toEqual(before.score);
    gm.dispose();
  });

  test("init({ backend: 'scalar' }) while the SIMD build runs rejects, explaining it must come first", async () => {
    const gen = instance().generation;
    const e = await rejection(init({ backend: 'scalar' }));
    expect(e).toBeInstanceOf(WasmError);
    expect(e).toBeInstanceOf(FedmixError);
    expect((e as WasmError).code).toBe('WASM');
    expect(e.message).toMatch(/already running the simd build/);
    expect(e.message).toMatch(/init\(\{ backend: 'scalar' \}\) must come first/);
    // nothing changed
    expect(instance().generation).toBe(gen);
    expect(backendInfo()).toEqual({ simd: true, backend: 'simd' });
    const gm = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(X);
    expect(gm.weights.length).toBe(2);
    gm.dispose();
  });

  test('using the API before init() throws a WasmError that says to `await init()`', async () => {
    const old = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(X);
    const json = old.toJSON();
    resetForTests();
    expect(backendInfo()).toBeUndefined();
    const uses: Array<[string, () => unknown]> = [
      ['GaussianMixture.fit', () => new GaussianMixture({ nComponents: 2 }).fit(X)],
      ['GaussianMixture.fromJSON', () => GaussianMixture.fromJSON(json)],
      ['KMeans.fit', () => new KMeans({ nClusters: 2 }).fit(X)],
      ['selectGaussianMixture', () => selectGaussianMixture(X, { kMax: 2 })],
      ['a model fitted earlier', () => old.predict(X)],
      ['wasm()', () => wasm()],
    ];
    for (const [name, use] of uses) {
      const e = thrown(use);
      expect(e, name).toBeInstanceOf(WasmError);
      expect(e.message, name).toMatch(/not initialized/);
      expect(e.message, name).toContain('`await init()`');
    }
    // constructing (no WASM involved yet) is fine
    expect(() => new GaussianMixture({ nComponents: 2 })).not.toThrow();
    // init again: everything works; the model from the dropped instance says so clearly
    expect(await init()).toEqual({ simd: true, backend: 'simd' });
    const gm = GaussianMixture.fromJSON(json);
    expect(gm.weights).toEqual(Float64Array.from(json.weights));
    gm.dispose();
    const stale = thrown(() => old.predict(X));
    expect(stale).toBeInstanceOf(WasmError);
    expect(stale.message).toMatch(/fit or load it again/);
    old.dispose(); // harmless on a dead instance
  });

  test("after a reset, init({ backend: 'scalar' }) may come first", async () => {
    resetForTests();
    expect(await init({ backend: 'scalar' })).toEqual({ simd: false, backend: 'scalar' });
    const e = await rejection(init({ backend: 'simd' }));
    expect(e).toBeInstanceOf(WasmError);
    expect(e.message).toMatch(/init\(\{ backend: 'simd' \}\) must come first/);
    resetForTests();
    expect(await init()).toEqual({ simd: true, backend: 'simd' });
  });

  test('a backend asked for while another is still loading is refused, not silently swapped', async () => {
    for (const [first, second] of [
      [{}, { backend: 'scalar' }],
      [{ backend: 'scalar' }, { backend: 'simd' }],
      [{ backend: 'simd' }, { backend: 'scalar' }],
    ] as const) {
      resetForTests();
      const loading = init(first);
      const e = await rejection(init(second));
      expect(e).toBeInstanceOf(WasmError);
      expect(e.message).toMatch(/already loading the (simd|scalar) build/);
      expect(e.message).toContain(`init({ backend: '${second.backend}' }) must come first`);
      // the first call is unaffected, and so is a concurrent call that takes what loads
      const [info, auto] = await Promise.all([loading, init({ backend: 'auto' })]);
      expect(auto).toBe(info);
      expect(info.backend).toBe(first.backend ?? 'simd');
      expect(backendInfo()).toBe(info);
    }
    resetForTests();
    expect(await init()).toEqual({ simd: true, backend: 'simd' });
  });

  test('bad options are an InvalidParameterError before anything loads', async () => {
    for (const bad of [null, 3, 'simd', { backend: 'fast' }, { backend: 1 }]) {
      const e = await rejection(init(bad as never));
      expect(e, String(bad)).toBeInstanceOf(InvalidParameterError);
      expect(e.message).toMatch(/backend|init\(\) takes/);
    }
  });
});

describe('WASM memory growth', () => {
  test('models made before the memory grows still give the same answers', async () => {
    await init();
    const w = wasm();
    const small = blobs(500, 8, 3, 5);
    const probe = blobs(200, 8, 3, 6);
    const types = ['full', 'tied', 'diag', 'spherical'] as const;
    const models = types.map((covarianceType) => new GaussianMixture({ nComponents: 3, covarianceType, seed: 3 }).fit(small));
    const before = models.map((gm) => ({
      labels: gm.predict(probe),
      score: gm.scoreSamples(probe),
      proba: gm.predictProba(probe).data,
      sample: gm.sample(50).X.data,
    }));
    const km = new KMeans({ nClusters: 3, seed: 1 }).fit(small);
    const kmLabels = km.predict(probe);
    const oldBuffer = w.memory.buffer;
    const bytesBefore = oldBuffer.byteLength;

    // 200000 x 8 doubles is 12.8 MB: the memory has to grow
    const big = blobs(200_000, 8, 3, 9);
    const bigModel = new GaussianMixture({ nComponents: 3, covarianceType: 'diag', seed: 1, maxIter: 5 }).fit(big);
    const bigScore = bigModel.scoreSamples(big);
    expect(bigScore.length).toBe(200_000);
    expect(bigScore.every(Number.isFinite)).toBe(true);
    expect(w.memory.buffer.byteLength).toBeGreaterThan(bytesBefore);
    expect(oldBuffer.byteLength).toBe(0); // views on the old buffer are detached

    models.forEach((gm, i) => {
      const b = before[i]!;
      expect(gm.predict(probe), types[i]).toEqual(b.labels);
      expect(gm.scoreSamples(probe), types[i]).toEqual(b.score);
      expect(gm.predictProba(probe).data, types[i]).toEqual(b.proba);
      expect(gm.sample(50).X.data, types[i]).toEqual(b.sample);
      expect(gm.precisions.every(Number.isFinite)).toBe(true);
    });
    expect(km.predict(probe)).toEqual(kmLabels);
    // errors raised after growth still carry their message (read through a fresh view)
    const e = thrown(() => models[0]!.predict(Matrix.zeros(3, 2)));
    expect(e.message).toMatch(/X has 2 features but the model was fitted with 8/);

    // growth in the middle of a call on an old model (its input needs new pages)
    const huge = blobs(400_000, 8, 3, 10);
    const bytesMid = w.memory.buffer.byteLength;
    const hugeLabels = models[2]!.predict(huge);
    expect(hugeLabels.length).toBe(400_000);
    expect(w.memory.buffer.byteLength).toBeGreaterThan(bytesMid);
    expect(hugeLabels.subarray(0, 200)).toEqual(models[2]!.predict(huge.selectRows(Array.from({ length: 200 }, (_, i) => i))));
    expect(models[2]!.predict(probe)).toEqual(before[2]!.labels);

    bigModel.dispose();
    for (const gm of models) gm.dispose();
  });
});
