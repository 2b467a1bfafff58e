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
  digamma,
  KMeans,
  Matrix,
  OneClassSVM,
  selectGaussianMixture,
  WasmError,
} from '../ts/index.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { instance, resetForTests, runningBuild, wasm } from '../ts/wasm/loader.js';
import { heapInUse } from '../ts/wasm/memory.js';
import { init as initInline } from '../ts/inline.js';
import { blobs, thrown } from './helpers.js';
import { FEATURES } from '../ts/wasm/modules.js';

const X = blobs(300, 3, 3, 21);
/** What init() reports with every module loaded (its default). */
const SIMD = { simd: true, backend: 'simd', features: [...FEATURES] };
const SCALAR = { simd: false, backend: 'scalar', features: [...FEATURES] };

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
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
    expect(info).toEqual(SIMD);
    expect(backendInfo()).toEqual(SIMD);
    expect(wasm().fm_simd()).toBe(1);
  });

  test('10 concurrent calls share one instantiation', async () => {
    resetForTests();
    expect(backendInfo()).toBeUndefined();
    const spy = vi.spyOn(WebAssembly, 'instantiate');
    const infos = await Promise.all(Array.from({ length: 10 }, () => init()));
    expect(spy).toHaveBeenCalledTimes(1 + FEATURES.length); // once per module
    for (const info of infos) expect(info).toEqual(SIMD);
    expect(new Set(infos).size).toBe(1); // the very same object
    expect(backendInfo()).toBe(infos[0]);
  });

  test('init() again, alone or concurrently, keeps the running instance and its models', async () => {
    const gen = instance().generation;
    const gm = new GaussianMixture({ nComponents: 3, seed: 2 }).fit(X);
    const before = { labels: gm.predict(X), score: gm.scoreSamples(X) };
    const spy = vi.spyOn(WebAssembly, 'instantiate');
    const again = await init();
    expect(again).toEqual(SIMD);
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
    expect(backendInfo()).toEqual(SIMD);
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
    expect(await init()).toEqual(SIMD);
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
    expect(await init({ backend: 'scalar' })).toEqual(SCALAR);
    const e = await rejection(init({ backend: 'simd' }));
    expect(e).toBeInstanceOf(WasmError);
    expect(e.message).toMatch(/init\(\{ backend: 'simd' \}\) must come first/);
    resetForTests();
    expect(await init()).toEqual(SIMD);
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
    expect(await init()).toEqual(SIMD);
  });

  test('bad options are an InvalidParameterError before anything loads', async () => {
    for (const bad of [null, 3, 'simd', { backend: 'fast' }, { backend: 1 }]) {
      const e = await rejection(init(bad as never));
      expect(e, String(bad)).toBeInstanceOf(InvalidParameterError);
      expect(e.message).toMatch(/backend|init\(\) takes/);
    }
  });
});

/** The build files the loader reads by default (scripts/build-wasm.sh puts them beside ts/wasm/loader.ts). */
const FILES = {
  simd: new URL('../ts/wasm/fedmix-simd.wasm', import.meta.url),
  scalar: new URL('../ts/wasm/fedmix-scalar.wasm', import.meta.url),
} as const;
/** Every module file of a build, core first, as the loader reads them by default. */
const moduleFiles = (b: 'simd' | 'scalar') => [fileURLToPath(FILES[b]), ...FEATURES.map((f) => fileURLToPath(new URL(`../ts/wasm/fedmix-${b}-${f}.wasm`, import.meta.url)))];
const BYTES = { simd: readFileSync(FILES.simd), scalar: readFileSync(FILES.scalar) };

/** Records the files the loader reads through Node's fs (it asks process.getBuiltinModule for it). */
function watchReads(): string[] {
  const reads: string[] = [];
  const real = process.getBuiltinModule.bind(process);
  vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => {
    const mod = real(id) as { readFile: (p: string | URL) => Promise<Uint8Array> };
    if (id !== 'node:fs/promises') return mod;
    return { readFile: (p: string | URL) => (reads.push(String(p instanceof URL ? fileURLToPath(p) : p)), mod.readFile(p)) };
  }) as typeof process.getBuiltinModule);
  return reads;
}

/** A small fit whose numbers must not depend on where the build came from. */
function fitted(): number[] {
  const gm = new GaussianMixture({ nComponents: 3, seed: 4 }).fit(X);
  const means = Array.from(gm.means);
  gm.dispose();
  return means;
}

describe('where the builds come from', () => {
  let reference: number[] = [];

  test('by default only the build the engine supports is read, from beside the module', async () => {
    resetForTests();
    const reads = watchReads();
    expect(await init()).toEqual(SIMD);
    expect(reads.sort()).toEqual(moduleFiles('simd').sort());
    reference = fitted();
  });

  test('an engine without SIMD128 (the probe does not validate) reads only the scalar file', async () => {
    resetForTests();
    const reads = watchReads();
    const validate = vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    expect(await init()).toEqual(SCALAR);
    // the probe is a few dozen bytes, not the 600 KB build
    expect(validate).toHaveBeenCalledTimes(1);
    expect((validate.mock.calls[0]![0] as Uint8Array).byteLength).toBeLessThan(64);
    expect(reads.sort()).toEqual(moduleFiles('scalar').sort());
    expect(fitted()).toEqual(reference); // the builds agree on this fit
    vi.restoreAllMocks();
    resetForTests();
    const e = await rejection((vi.spyOn(WebAssembly, 'validate').mockReturnValue(false), init({ backend: 'simd' })));
    expect(e).toBeInstanceOf(WasmError);
    expect(e.message).toMatch(/does not support WebAssembly SIMD128/);
  });

  test('options.wasm: bytes, typed arrays, URLs, paths, Responses and compiled Modules', async () => {
    const sources: Array<[string, () => unknown]> = [
      ['a Buffer', () => BYTES.simd],
      ['an ArrayBuffer', () => BYTES.simd.buffer.slice(BYTES.simd.byteOffset, BYTES.simd.byteOffset + BYTES.simd.byteLength)],
      ['a DataView', () => new DataView(BYTES.simd.buffer, BYTES.simd.byteOffset, BYTES.simd.byteLength)],
      ['a file: URL', () => FILES.simd],
      ['a file: URL string', () => FILES.simd.href],
      ['a path', () => fileURLToPath(FILES.simd)],
      ['a Response (streaming compilation)', () => new Response(BYTES.simd, { headers: { 'Content-Type': 'application/wasm' } })],
      ['a Response of another MIME type', () => new Response(BYTES.simd, { headers: { 'Content-Type': 'application/octet-stream' } })],
      ['a promise of a Response', () => Promise.resolve(new Response(BYTES.simd, { headers: { 'Content-Type': 'application/wasm' } }))],
      ['a WebAssembly.Module', () => new WebAssembly.Module(BYTES.simd)],
    ];
    for (const [name, source] of sources) {
      resetForTests();
      const reads = watchReads();
      expect(await init({ wasm: { simd: source() as never } }), name).toEqual(SIMD);
      expect(fitted(), name).toEqual(reference);
      // the core given replaces its file; the feature modules come from beside the module
      expect(reads.filter((r) => r !== fileURLToPath(FILES.simd)).sort(), name).toEqual(moduleFiles('simd').slice(1).sort());
      vi.restoreAllMocks();
    }
  });

  test('only the builds given are candidates; a build given as the other one is refused', async () => {
    resetForTests();
    expect(await init({ wasm: { scalar: BYTES.scalar } })).toEqual(SCALAR);
    resetForTests();
    expect(await init({ backend: 'auto', wasm: { simd: BYTES.simd, scalar: BYTES.scalar } })).toEqual(SIMD);
    resetForTests();
    const none = await rejection(init({ backend: 'simd', wasm: { scalar: BYTES.scalar } }));
    expect(none).toBeInstanceOf(InvalidParameterError);
    expect(none.message).toMatch(/backend 'simd' was asked for, but options.wasm gives no simd build/);
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const onlySimd = await rejection(init({ wasm: { simd: BYTES.simd } }));
    expect(onlySimd).toBeInstanceOf(WasmError);
    expect(onlySimd.message).toMatch(/gives only the SIMD build; give wasm.scalar too/);
    vi.restoreAllMocks();
    const swapped = await rejection(init({ wasm: { simd: BYTES.scalar } }));
    expect(swapped).toBeInstanceOf(WasmError);
    expect(swapped.message).toMatch(/the SIMD build \(options.wasm.simd\) is the scalar build, given as the simd one/);
    // a failed load leaves nothing behind: the next init() loads
    expect(backendInfo()).toBeUndefined();
    expect(await init()).toEqual(SIMD);
  });

  test('fresh and a reload reuse the compiled build: the bytes given once are not needed again', async () => {
    resetForTests();
    await init({ wasm: { simd: BYTES.simd } });
    const first = instance().generation;
    const reads = watchReads();
    const compile = vi.spyOn(WebAssembly, 'compile');
    expect(await init({ fresh: true })).toEqual(SIMD);
    expect(instance().generation).toBe(first + 1);
    expect(compile).not.toHaveBeenCalled();
    expect(reads).toEqual([]);
    expect(fitted()).toEqual(reference);
  });

  test('workers are sent the running build, compiled', async () => {
    resetForTests();
    expect(runningBuild()).toBeUndefined();
    await init({ wasm: { scalar: BYTES.scalar } });
    const build = runningBuild()!;
    expect(build.backend).toBe('scalar');
    expect(Object.keys(build.modules)).toEqual(['core', ...FEATURES]);
    for (const m of Object.values(build.modules)) expect(m).toBeInstanceOf(WebAssembly.Module);
    // what a worker does with it (lane.ts): the same build, without reading a file
    resetForTests();
    const reads = watchReads();
    expect(await init({ backend: build.backend, wasm: { [build.backend]: build.modules } })).toEqual(SCALAR);
    expect(reads).toEqual([]);
    resetForTests();
    await init();
  });

  test('fedmix/inline decodes only the chosen embedded build and reads no file', async () => {
    resetForTests();
    const reads = watchReads();
    expect(await initInline()).toEqual(SIMD);
    expect(reads).toEqual([]);
    expect(fitted()).toEqual(reference);
    resetForTests();
    expect(await initInline({ backend: 'scalar' })).toEqual(SCALAR);
    expect(reads).toEqual([]);
    resetForTests();
    await init();
  });

  test('bad sources are typed errors that say what to pass', async () => {
    const bad: Array<[unknown, RegExp, typeof FedmixError]> = [
      [5, /options\.wasm must be an object/, InvalidParameterError],
      [{}, /options\.wasm gives no build/, InvalidParameterError],
      [{ simd: BYTES.simd, avx: BYTES.simd }, /options\.wasm has an unknown option "avx"/, InvalidParameterError],
      [{ simd: 42 }, /options\.wasm\.simd must be bytes \(ArrayBuffer or a typed array\), a URL or string/, InvalidParameterError],
      [{ simd: null }, /options\.wasm\.simd must be bytes/, InvalidParameterError],
      [{ simd: {} }, /options\.wasm\.simd must be bytes.*or a record of them by module \(\{ core, dem/, InvalidParameterError],
      [{ simd: { core: BYTES.simd, gpu: BYTES.simd } }, /options\.wasm\.simd has an unknown option "gpu"/, InvalidParameterError],
      [{ simd: { nn: 42 } }, /options\.wasm\.simd\.nn must be bytes/, InvalidParameterError],
      [{ simd: '' }, /got an empty string/, InvalidParameterError],
      [{ simd: new Uint8Array(0) }, /options\.wasm\.simd is empty \(0 bytes\)/, InvalidParameterError],
      [{ simd: new Uint8Array([1, 2, 3, 4]) }, /the SIMD build \(options\.wasm\.simd\) is not a WebAssembly build this engine can compile/, WasmError],
      [{ simd: '/nonexistent/fedmix-simd.wasm' }, /could not be read \(no such file\).*init\(\{ wasm \}\) or fedmix\/inline/, WasmError],
      [{ simd: new Response('missing', { status: 404 }) }, /could not be fetched: HTTP 404\. Serve the package's \.wasm files/, WasmError],
      [{ simd: { then: (_: unknown, reject: (e: Error) => void) => reject(new Error('offline')) } }, /could not be fetched \(offline\)/, WasmError],
      [{ simd: Promise.resolve('not a response') }, /must resolve to a fetch\(\) Response/, InvalidParameterError],
      // a module of another program: it compiles, but is not the core
      [{ simd: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) }, /is not a fedmix core \(it has no fm_abi_version export\)/, WasmError],
      [{ simd: new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } }) }, /options\.wasm\.simd could not be read/, InvalidParameterError],
      [new Proxy({}, { get: () => { throw new Error('trap'); } }), /options\.wasm\.simd could not be read/, InvalidParameterError],
    ];
    for (const [wasmOption, message, Err] of bad) {
      resetForTests();
      const e = await rejection(init({ wasm: wasmOption as never }));
      expect(e, String(message)).toBeInstanceOf(Err);
      expect(e.message, String(message)).toMatch(message);
      expect(backendInfo()).toBeUndefined();
    }
    const used = new Response(BYTES.simd);
    await used.arrayBuffer();
    const e = await rejection(init({ wasm: { simd: used } }));
    expect(e).toBeInstanceOf(InvalidParameterError);
    expect(e.message).toMatch(/body was already read/);
    expect(await init()).toEqual(SIMD);
  });
});

describe('feature modules', () => {
  test('init({ features: [] }) reads only the core file; a feature used without its module is a WasmError naming it', async () => {
    resetForTests();
    const reads = watchReads();
    expect(await init({ features: [] })).toEqual({ simd: true, backend: 'simd', features: [] });
    expect(reads).toEqual([fileURLToPath(FILES.simd)]);
    expect(fitted().every(Number.isFinite)).toBe(true);
    const before = heapInUse(wasm());
    const svm = await rejection(Promise.resolve().then(() => new OneClassSVM().fit(X)));
    expect(svm).toBeInstanceOf(WasmError);
    expect(svm.message).toMatch(/OneClassSVM needs fedmix's 'svm' module, which was not loaded: call await init\(\{ features: \[\.\.\., 'svm'\] \}\)/);
    expect(() => digamma(1.5)).toThrow(/'dirichlet' module/);
    // nothing was left allocated by the refused calls
    expect(heapInUse(wasm())).toBe(before);
  });

  test('a later init() adds the modules asked for to the running instance, which keeps its models', async () => {
    const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(X);
    const gen = instance().generation;
    const reads = watchReads();
    const info = await init({ features: ['svm', 'dirichlet'] });
    expect(info).toEqual({ simd: true, backend: 'simd', features: ['svm', 'dirichlet'] });
    expect(reads.sort()).toEqual(['svm', 'dirichlet'].map((f) => fileURLToPath(new URL(`../ts/wasm/fedmix-simd-${f}.wasm`, import.meta.url))).sort());
    expect(instance().generation).toBe(gen);
    expect(gm.predict(X).length).toBe(X.nRows);
    // a model of one module reads a Matrix of another's making: one memory, one heap
    const o = new OneClassSVM({ nu: 0.1 }).fit(X);
    expect(o.decisionFunction(X).every(Number.isFinite)).toBe(true);
    expect(digamma(1)).toBeCloseTo(-0.5772156649015329, 14);
    // asking again for what runs, or init() alone, reads nothing and returns the same report
    expect(await init({ features: ['svm'] })).toBe(info);
    expect(await init()).toBe(info);
    expect(reads.length).toBe(2);
    // concurrent additions instantiate each module once
    const spy = vi.spyOn(WebAssembly, 'instantiate');
    const all = await Promise.all([init({ features: 'all' }), init({ features: ['nn'] }), init({ features: 'all' })]);
    expect(spy).toHaveBeenCalledTimes(FEATURES.length - 2);
    expect(all[2]!.features).toEqual([...FEATURES]);
    o.dispose();
    gm.dispose();
  });

  test('a module given as another is refused; features are checked', async () => {
    resetForTests();
    const nn = readFileSync(new URL('../ts/wasm/fedmix-simd-nn.wasm', import.meta.url));
    const wrong = await rejection(init({ features: ['svm'], wasm: { simd: { svm: nn } } }));
    expect(wrong).toBeInstanceOf(WasmError);
    expect(wrong.message).toMatch(/is fedmix's 'nn' module, given as the 'svm' one/);
    resetForTests();
    const asCore = await rejection(init({ features: [], wasm: { simd: nn } }));
    expect(asCore).toBeInstanceOf(WasmError);
    expect(asCore.message).toMatch(/could not be instantiated|is fedmix's 'nn' module, given as the core one/);
    for (const [features, re] of [
      ['some', /features must be 'all' or a list of 'dem', 'svm'/],
      [['svm', 'gpu'], /features\[1\] must be one of 'dem', 'svm'.*got "gpu"/],
      [['core'], /features\[0\] must be one of .*the core needs no name/],
    ] as const) {
      const e = await rejection(init({ features: features as never }));
      expect(e).toBeInstanceOf(InvalidParameterError);
      expect(e.message).toMatch(re);
    }
    resetForTests();
    await init();
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
