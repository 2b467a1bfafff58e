/**
 * Running out of WASM memory: a WasmAllocationError that says what was asked
 * and what is left, never a trap. The instance stays the same (its
 * generation does not change), every model made before keeps its answers,
 * and the same request succeeds once memory is freed.
 *
 * Memory is filled with raw blocks from the core's allocator ("hogs"): they
 * take address space up to wasm32's 4 GiB without touching its pages, so the
 * process stays small. Tests run in order and share this file's instance.
 */
import { afterEach, beforeAll, expect, test } from 'vitest';
import {
  DirichletMultinomialMixture,
  GaussianMixture,
  init,
  LocalDetector,
  Matrix,
  OneClassSVM,
  PCA,
  Rng,
  selectGaussianMixture,
  WasmAllocationError,
  WasmError,
} from '../ts/index.js';
import { instance, wasm } from '../ts/wasm/loader.js';
import { availableWasmBytes, heapInUse, showNumbers, WASM32_MAX_BYTES } from '../ts/wasm/memory.js';
import { blobs, thrown } from './helpers.js';

const MiB = 2 ** 20;

/** Blocks of WASM memory held until released. */
class Hogs {
  private blocks: Array<[number, number]> = [];

  /** Takes blocks of `size` bytes until memory has no room for another. */
  fill(size: number): void {
    const w = wasm();
    for (;;) {
      const p = w.fm_alloc(size) >>> 0;
      if (p === 0) return;
      this.blocks.push([p, size]);
    }
  }

  /** Takes every block of memory down to 16 bytes. */
  fillToTheBrim(): void {
    for (const size of [256 * MiB, 16 * MiB, MiB, 64 * 1024, 4096, 256, 16]) this.fill(size);
  }

  /**
   * Releases every other block, keeping the last (so the space after it stays
   * apart): half the memory free again, in pieces of one block each.
   */
  releaseAlternate(): void {
    const w = wasm();
    const last = this.blocks.length - 1;
    this.blocks = this.blocks.filter(([p, size], i) => {
      if (i % 2 === 0 || i === last) return true;
      w.fm_free(p, size);
      return false;
    });
  }

  /** Releases the first block of `size` bytes. */
  releaseOne(size: number): void {
    const k = this.blocks.findIndex(([, s]) => s === size);
    if (k < 0) throw new Error(`no block of ${size} bytes`);
    wasm().fm_free(this.blocks[k]![0], size);
    this.blocks.splice(k, 1);
  }

  releaseAll(): void {
    const w = wasm();
    for (const [p, size] of this.blocks) w.fm_free(p, size);
    this.blocks = [];
  }
}

const hogs = new Hogs();
const X = blobs(400, 3, 3, 7);
const probe = blobs(200, 3, 3, 8);

/** What a model answers, to compare before and after memory ran out. */
function answers(gm: GaussianMixture) {
  return { labels: gm.predict(probe), scores: gm.scoreSamples(probe), means: gm.means };
}

/** The message's account of memory: its size, what is in use and what is available, in bytes. */
const ACCOUNT = /WASM memory holds \d+ bytes \([\d.]+ MiB\) of at most 4294967296 bytes \(4096\.0 MiB\), \d+ bytes \([\d.]+ MiB\) in use, at most \d+ bytes \([\d.]+ MiB\) available/;

beforeAll(async () => {
  await init();
});

afterEach(() => hogs.releaseAll());

test('a fit whose buffers do not fit is a WasmAllocationError from the core, not a trap; earlier models keep their answers, and the fit succeeds once memory is freed', () => {
  const w = wasm();
  const generation = instance().generation;
  const kept = (['full', 'diag'] as const).map((covarianceType) => new GaussianMixture({ nComponents: 3, covarianceType, seed: 1 }).fit(X));
  const before = kept.map(answers);
  // 64 MiB blocks up to 4 GiB, every other one freed: half of memory is free,
  // in no piece larger than 64 MiB
  hogs.fill(64 * MiB);
  expect(w.memory.buffer.byteLength).toBeGreaterThan(WASM32_MAX_BYTES - 128 * MiB);
  hogs.releaseAlternate();
  expect(availableWasmBytes()).toBeGreaterThan(1.5 * 2 ** 30);
  // 100 components of 100,000 rows: the initial responsibilities are one buffer of 80 MB
  const rows = blobs(100_000, 2, 4, 9);
  const gm = new GaussianMixture({ nComponents: 100, covarianceType: 'diag', initParams: 'random', maxIter: 1, seed: 2 });
  const heap = heapInUse(w);
  const e = thrown(() => gm.fit(rows));
  expect(e).toBeInstanceOf(WasmAllocationError);
  expect(e).toBeInstanceOf(WasmError);
  expect((e as WasmError).code).toBe('WASM');
  expect(e.message).toMatch(/^out of WASM memory \(the core could not allocate 80000000 bytes\); /);
  expect(e.message).toMatch(ACCOUNT);
  expect(e.message).toMatch(/init\(\{ fresh: true \}\)/);
  // no trap: the same instance, nothing leaked, the earlier models as they were
  expect(instance().generation).toBe(generation);
  expect(heapInUse(w)).toBe(heap);
  expect(gm.isFitted).toBe(false);
  expect(kept.map(answers)).toEqual(before);
  hogs.releaseAll();
  gm.fit(rows);
  expect(gm.nIter).toBe(1);
  expect(gm.weights.length).toBe(100);
  expect(kept.map(answers)).toEqual(before);
  expect(instance().generation).toBe(generation);
  gm.dispose();
  for (const m of kept) m.dispose();
});

test('a model selection cut short by memory is a WasmAllocationError and keeps no model', () => {
  const w = wasm();
  const generation = instance().generation;
  hogs.fill(64 * MiB);
  hogs.releaseAlternate();
  // responsibilities of 100,000 rows: 83 components fit in a free piece of 64 MiB, 84 do not
  const rows = blobs(100_000, 2, 4, 9);
  const heap = heapInUse(w);
  const e = thrown(() => selectGaussianMixture(rows, { kMin: 83, kMax: 84, covarianceType: 'diag', initParams: 'random', maxIter: 1, seed: 3 }));
  expect(e).toBeInstanceOf(WasmAllocationError);
  expect(e.message).toMatch(/^out of WASM memory \(the core could not allocate 67200000 bytes\); /);
  // the model of 83 components, fitted before, was disposed with the rest
  expect(heapInUse(w)).toBe(heap);
  expect(instance().generation).toBe(generation);
});

test('a request larger than what WASM memory can still provide is refused before the call, with the estimate and the account', () => {
  const w = wasm();
  const gm = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
  const before = answers(gm);
  // half of the 4 GiB taken: a fit of 3,000 full components in 400 dimensions
  // (covariances and precision factors of 3.8 GB each) could never fit
  hogs.fill(256 * MiB);
  hogs.releaseAlternate();
  const size = w.memory.buffer.byteLength;
  const heap = heapInUse(w);
  const rows = Matrix.zeros(3000, 400);
  const e = thrown(() => new GaussianMixture({ nComponents: 3000, covarianceType: 'full' }).fit(rows));
  expect(e).toBeInstanceOf(WasmAllocationError);
  // the rows, and two models of 3000 x (1 + 400 + 2 x 400 x 400) values
  expect(e.message).toMatch(/^out of WASM memory: fitting 3000 full components to 3000 rows of 400 features needs at least 15388848000 bytes \(14675\.9 MiB\); /);
  expect(e.message).toMatch(ACCOUNT);
  // 80 million rows of 3 features and their labels (within LIMITS.values, beyond the half left)
  expect(thrown(() => gm.sample(80_000_000)).message).toMatch(/^out of WASM memory: sampling 80000000 rows of 3 features needs at least 2240000072 bytes /);
  // the covariance of 20,000 features and the eigensolver's two matrices
  expect(thrown(() => new PCA({ nComponents: 1 }).fit(Matrix.zeros(2, 20_000))).message).toMatch(/^out of WASM memory: PCA of 2 rows of 20000 features needs at least 9600320000 bytes /);
  // 100 million histograms of 2 categories, their sizes and components
  const mdm = new DirichletMultinomialMixture({ tau: [1], alpha: [[1, 1]], pi: [[1]] });
  expect(thrown(() => mdm.sample(100_000_000)).message).toMatch(/^out of WASM memory: sampling 100000000 histograms of 2 categories needs at least 2800000064 bytes /);
  // refused before anything was allocated: memory did not grow
  expect(w.memory.buffer.byteLength).toBe(size);
  expect(heapInUse(w)).toBe(heap);
  expect(answers(gm)).toEqual(before);
  gm.dispose();
});

test('models made until memory is full: the next one is a WasmAllocationError, every earlier one keeps its answers, and one disposed makes room', () => {
  const d = 32;
  const k = 64; // full covariances: 64 x 32 x 32 x 2 values, about 1 MB a model
  const params = {
    covarianceType: 'full' as const,
    weights: new Float64Array(k).fill(1 / k),
    means: Float64Array.from({ length: k * d }, (_, i) => (i % 7) - 3),
    covariances: Float64Array.from({ length: k * d * d }, (_, i) => (Math.floor(i / d) % d === i % d ? 1 + (i % 5) : 0)),
  };
  const x = blobs(50, d, 2, 4);
  const want = GaussianMixture.fromParameters(params);
  const scores = want.scoreSamples(x);
  want.dispose();
  // all of memory but less than 64 MiB taken first: a few dozen models fill the rest
  hogs.fill(64 * MiB);
  const generation = instance().generation;
  const models: GaussianMixture[] = [];
  let refusal: Error | undefined;
  for (let i = 0; i < 1000 && !refusal; i++) {
    try {
      models.push(GaussianMixture.fromParameters(params));
    } catch (e) {
      refusal = e as Error;
    }
  }
  expect(refusal).toBeInstanceOf(WasmAllocationError);
  expect(refusal!.message).toMatch(/^out of WASM memory/);
  expect(refusal!.message).toMatch(ACCOUNT);
  expect(models.length).toBeGreaterThan(10);
  expect(instance().generation).toBe(generation);
  // one disposed makes room to score with every other, and for one more
  models.pop()!.dispose();
  for (const gm of models) expect(gm.scoreSamples(x)).toEqual(scores);
  const again = GaussianMixture.fromParameters(params);
  expect(again.scoreSamples(x)).toEqual(scores);
  again.dispose();
  for (const gm of models) gm.dispose();
});

test('memory full to the last block: the small allocation that would have trapped takes the reserve, and the next call is refused until memory is freed', () => {
  const gm = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
  const before = answers(gm);
  const generation = instance().generation;
  const twin = new Rng(5);
  const want = twin.gamma(2, 3);
  twin.dispose();
  hogs.fillToTheBrim();
  // nothing is left for a call's buffers
  expect(thrown(() => gm.predict(probe))).toBeInstanceOf(WasmAllocationError);
  // a generator's few bytes come from the core's reserve (without it: a trap)
  const rng = new Rng(5);
  // the next call finds less free than the reserve every call keeps, and does not start
  const e = thrown(() => rng.gamma(2, 3));
  expect(e).toBeInstanceOf(WasmAllocationError);
  expect(e.message).toMatch(/^out of WASM memory \(the core found fewer than 4 MiB free, the headroom every call keeps for its small buffers\); /);
  expect(instance().generation).toBe(generation);
  hogs.releaseAll();
  // the refused call drew nothing: the stream is where it was
  expect(rng.gamma(2, 3)).toEqual(want);
  expect(answers(gm)).toEqual(before);
  rng.dispose();
  gm.dispose();
});

test('a one-class SVM whose kernel cache finds memory short drops older columns and ends where it would with room to spare', () => {
  // 3,000 rows: the kernel matrix is 36 MB of f32 entries, the starting columns alone 18 MB
  const x = blobs(3000, 2, 3, 5);
  const answersOf = (m: OneClassSVM) => ({ nIter: m.nIter, offset: m.offset, support: m.support, dualCoef: m.dualCoef, decision: m.decisionFunction(probe.selectColumns([0, 1])) });
  const roomy = new OneClassSVM({ nu: 0.5, gamma: 1 }).fit(x);
  const want = answersOf(roomy);
  roomy.dispose();
  const generation = instance().generation;
  const heap = heapInUse(wasm());
  // everything taken, then 16 MiB given back: the reserve of 4 MiB and about 12 MB of columns
  hogs.fillToTheBrim();
  hogs.releaseOne(16 * MiB);
  const tight = new OneClassSVM({ nu: 0.5, gamma: 1 }).fit(x);
  expect(instance().generation).toBe(generation);
  hogs.releaseAll();
  expect(answersOf(tight)).toEqual(want);
  tight.dispose();
  expect(heapInUse(wasm())).toBe(heap);
});

test('init({ fresh: true }) gives the memory back: a new, small instance; models of the old one must be made again', async () => {
  const gm = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
  const before = answers(gm);
  hogs.fill(256 * MiB);
  hogs.releaseAll(); // freed, but the memory does not shrink
  expect(wasm().memory.buffer.byteLength).toBeGreaterThan(WASM32_MAX_BYTES / 2);
  const generation = instance().generation;
  await init({ fresh: true });
  expect(instance().generation).toBe(generation + 1);
  expect(wasm().memory.buffer.byteLength).toBeLessThan(64 * MiB);
  expect(() => gm.predict(probe)).toThrow(/^this model belongs to a WASM instance that was replaced \(by init\(\{ fresh: true \}\) or after a trap\); fit or load it again$/);
  gm.dispose(); // harmless: its memory went with the old instance
  const again = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
  expect(answers(again)).toEqual(before);
  again.dispose();
  await expect(init({ fresh: 'yes' as never })).rejects.toThrow(/^fresh must be true or false, got "yes"$/);
});

test('models fitted, then WASM memory grown (which detaches every view of it), then the same models used: the same answers, and a refit gives the same model', () => {
  // the report of a raw "detached ArrayBuffer" TypeError from LocalDetector#fit: no typed-array view of WASM memory may outlive a call that can grow it
  const kinds = [
    { kind: 'gmm', gmm: { nComponents: 2, seed: 1 } },
    { kind: 'ocsvm', ocsvm: { nu: 0.2 } },
    { kind: 'autoencoder', autoencoder: { hiddenLayers: [4, 2, 4], epochs: 2, seed: 1 } },
    { kind: 'gmm', gmm: { nComponents: 2, covarianceType: 'diag', seed: 1 }, noise: { clip: 5, epsilon: 1, delta: 1e-5 }, noiseSeed: 3 },
  ] as const;
  const detectors = kinds.map((o) => new LocalDetector({ contamination: 0.1, ...o } as never).fit(X));
  const before = detectors.map((d) => ({ scores: d.scoreSamples(probe), labels: d.predict(probe) }));
  const pages = wasm().memory.buffer.byteLength;
  // one block larger than all memory so far: memory.grow, so every earlier view is detached
  const block = wasm().fm_alloc(pages + 64 * MiB) >>> 0;
  expect(block).not.toBe(0);
  wasm().fm_free(block, pages + 64 * MiB);
  expect(wasm().memory.buffer.byteLength, 'memory grew').toBeGreaterThan(pages);
  detectors.forEach((d, i) => {
    expect(d.scoreSamples(probe)).toEqual(before[i]!.scores);
    expect(d.predict(probe)).toEqual(before[i]!.labels);
    // a refit after the growth, its answers those of the first fit
    expect(d.fit(X).scoreSamples(probe)).toEqual(before[i]!.scores);
    d.dispose();
  });
});

test("numbers in the core's messages travel as values (no float formatting in WASM) and read as Rust wrote them natively", () => {
  const token = (mark: string, v: number) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, v);
    return mark + view.getBigUint64(0).toString(16).padStart(16, '0');
  };
  // fedmix_core::error::show: as JavaScript writes numbers, exponents without '+'
  const shown: [number, string][] = [[1, '1'], [-0.1, '-0.1'], [1.1000000000000001, '1.1'], [1e-301, '1e-301'], [2.5e300, '2.5e300'], [NaN, 'NaN'], [-Infinity, '-Infinity'], [-0, '-0'], [1e-8, '1e-8'], [1e21, '1e21']];
  // fedmix_core::error::display: as Rust's {} writes them (inf, and never an exponent)
  const displayed: [number, string][] = [[0.30000000000000004, '0.30000000000000004'], [1e21, '1000000000000000000000'], [1.5e-7, '0.00000015'], [Infinity, 'inf'], [-Infinity, '-inf'], [NaN, 'NaN'], [-0, '-0'], [Number.MAX_VALUE, `17976931348623157${'0'.repeat(292)}`]];
  for (const [v, text] of shown) expect(showNumbers(`got ${token('\uE000', v)};`), text).toBe(`got ${text};`);
  for (const [v, text] of displayed) expect(showNumbers(`got ${token('\uE001', v)};`), text).toBe(`got ${text};`);
  expect(showNumbers('no numbers 0123456789abcdef')).toBe('no numbers 0123456789abcdef');
  // end to end, the core's messages with numbers in them (random.test.ts: "probs must sum to 1 (within 1e-8); they sum to 1.1")
  const message = thrown(() => new Rng(1).multinomial(10, [0.5, 0.6])).message;
  expect(message).toBe('probs must sum to 1 (within 1e-8); they sum to 1.1');
});
