/**
 * The seeded generator exposed as Rng: streams are reproducible and identical in
 * the SIMD and scalar builds, draws follow their distributions (chi-square at
 * p = 0.001 against scipy's bin probabilities in test/fixtures/random.json,
 * means within 4 standard errors), and bad input raises a typed error that
 * leaves the WASM heap exactly as it was and the stream untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FedmixError, init, InvalidParameterError, LIMITS, Matrix, NotFittedError, Rng, WasmError } from '../ts/index.js';
import { permutation } from '../ts/random.js';
import { resetForTests, wasm } from '../ts/wasm/loader.js';
import { expectClean as expectCleanHeap, fixture } from './helpers.js';

interface Case {
  distribution: string;
  shape?: number;
  a?: number;
  n?: number;
  p?: number;
  edges?: number[];
  logEdges?: number[];
  probs: number[];
}
const fx = fixture<{ chi2Critical: Record<string, number>; continuous: Case[]; discrete: Case[] }>('random.json');

function find(list: Case[], match: Partial<Case>): Case {
  const c = list.find((c) => Object.entries(match).every(([k, v]) => c[k as keyof Case] === v));
  if (!c) throw new Error(`no fixture case ${JSON.stringify(match)}`);
  return c;
}

/** Pearson's statistic of the values binned by interior edges (bin = number of edges <= x). */
function chiSquare(values: ArrayLike<number>, edges: number[], probs: number[]): { stat: number; critical: number } {
  const counts = new Array<number>(probs.length).fill(0);
  for (let i = 0; i < values.length; i++) {
    let b = 0;
    while (b < edges.length && edges[b]! <= values[i]!) b++;
    counts[b]!++;
  }
  const stat = counts.reduce((s, o, b) => s + (o - probs[b]! * values.length) ** 2 / (probs[b]! * values.length), 0);
  return { stat, critical: fx.chi2Critical[String(probs.length - 1)]! };
}

function expectFits(what: string, values: ArrayLike<number>, edges: number[], probs: number[]): void {
  const { stat, critical } = chiSquare(values, edges, probs);
  if (process.env.FEDMIX_PRINT_CHI2) console.log(`chi-square ${what}: ${stat.toFixed(2)} (dof ${probs.length - 1}, critical ${critical.toFixed(2)})`);
  expect(stat, `${what}: chi-square ${stat.toFixed(2)} (dof ${probs.length - 1})`).toBeLessThan(critical);
}

function mean(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]!;
  return s / v.length;
}

beforeAll(async () => {
  await init();
});

describe('streams', () => {
  const battery = (rng: Rng) => ({
    uniform: rng.uniform(5),
    normal: rng.normal(7), // odd: leaves a spare normal for the next call
    gamma: rng.gamma(0.05, 50),
    gammaScaled: rng.gamma(2.5, 50, 3),
    dirichlet: rng.dirichlet([0.05, 0.05, 0.05, 0.05], 20).data,
    tiny: rng.dirichlet(new Float64Array(10).fill(0.001), 20).data,
    logDirichlet: rng.logDirichlet(new Float64Array(10).fill(0.001), 20).data,
    multinomial: rng.multinomial(1_000_000, [0.1, 0.25, 0, 0.05, 0.4, 0.2], 10).data,
    small: rng.multinomial(3, [0.2, 0.5, 0.3], 10).data,
    categorical: rng.categorical([0.1, 0, 0.35, 0.05, 0.5], 100),
    choice: rng.choice(1000, 10),
    choiceDense: rng.choice(20, 15),
    permutation: rng.permutation(30),
    normalAfter: rng.normal(3),
  });

  test('the same seed gives the same stream; another seed another', () => {
    const [a, b, c] = [new Rng(7), new Rng(7), new Rng(8)];
    const ra = battery(a);
    expect(battery(b)).toEqual(ra);
    expect(battery(c).normal).not.toEqual(ra.normal);
    // the stream continues from call to call
    expect(a.normal(7)).not.toEqual(ra.normal);
    for (const r of [a, b, c]) r.dispose();
  });

  test('seeds up to 2^53 - 1 use both 32-bit halves', () => {
    const draw = (seed: number) => {
      const r = new Rng(seed);
      const v = r.uniform(3);
      r.dispose();
      return v;
    };
    expect(draw(2 ** 32 + 5)).not.toEqual(draw(5));
    expect(draw(Number.MAX_SAFE_INTEGER)).toEqual(draw(Number.MAX_SAFE_INTEGER));
  });

  test('permutation(n, seed) is Rng(seed).permutation(n)', () => {
    const p = permutation(50, 11);
    expect(p).toBeInstanceOf(Uint32Array);
    expect([...p].sort((x, y) => x - y)).toEqual([...Array(50).keys()]);
    const r = new Rng(11);
    expect([...r.permutation(50)]).toEqual([...p]);
    r.dispose();
    expect(permutation(0, 1).length).toBe(0);
  });

  test('SIMD and scalar builds draw bit-identical numbers', async () => {
    const run = () => {
      const r = new Rng(2024);
      const out = battery(r);
      r.dispose();
      return out;
    };
    resetForTests();
    expect((await init({ backend: 'simd' })).simd).toBe(true);
    const simd = run();
    resetForTests();
    expect((await init({ backend: 'scalar' })).simd).toBe(false);
    const scalar = run();
    expect(scalar).toEqual(simd);
    resetForTests();
    await init();
  });
});

describe('distributions at modest sizes', () => {
  let rng: Rng;
  beforeAll(() => {
    rng = new Rng(99);
  });
  afterAll(() => rng.dispose());

  test('normal and uniform', () => {
    const c = find(fx.continuous, { distribution: 'normal' });
    const z = rng.normal(20_000);
    expectFits('normal', z, c.edges!, c.probs);
    expect(Math.abs(mean(z))).toBeLessThan(4 / Math.sqrt(20_000));
    const u = rng.uniform(20_000);
    expect(u.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(Math.abs(mean(u) - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / 20_000));
  });

  test.each([0.05, 0.5, 2.5, 100])('gamma shape %s', (shape) => {
    const c = find(fx.continuous, { distribution: 'gamma', shape });
    const x = rng.gamma(shape, 20_000);
    expectFits(`gamma ${shape}`, x.map(Math.log), c.logEdges!, c.probs);
    const scaled = rng.gamma(shape, 20_000, 3);
    expect(Math.abs(mean(scaled) - 3 * shape)).toBeLessThan(4 * 3 * Math.sqrt(shape / 20_000));
  });

  test('Dirichlet with alpha 0.05: rows on the simplex, never NaN or all zero, means alpha_i / sum', () => {
    const k = 10;
    const n = 20_000;
    const m = rng.dirichlet(new Array(k).fill(0.05), n);
    expect([m.nRows, m.nCols]).toEqual([n, k]);
    const bad: number[] = [];
    for (let i = 0; i < n; i++) {
      let s = 0;
      let max = 0;
      for (let j = 0; j < k; j++) {
        const v = m.data[j * n + i]!;
        if (!(v >= 0 && v <= 1)) bad.push(i); // NaN too
        s += v;
        max = Math.max(max, v);
      }
      if (!(Math.abs(s - 1) < 1e-14 && max > 0)) bad.push(i);
    }
    expect(bad, 'rows off the simplex').toEqual([]);
    const sd = Math.sqrt((0.05 * 0.45) / (0.25 * 1.5));
    for (let j = 0; j < k; j++) expect(Math.abs(mean(m.column(j)) - 0.1)).toBeLessThan((4 * sd) / Math.sqrt(n));
    const c = find(fx.continuous, { distribution: 'beta', a: 0.05 });
    expectFits('Dirichlet(0.05 x 10) component 0', m.column(0).map(Math.log), c.logEdges!, c.probs);
  });

  test('logDirichlet: the logs of dirichlet() on the same stream, finite where dirichlet() underflows to 0', () => {
    const alpha = new Float64Array(10).fill(0.001);
    const [a, b] = [new Rng(77), new Rng(77)];
    const x = a.dirichlet(alpha, 500);
    const l = b.logDirichlet(alpha, 500);
    a.dispose();
    b.dispose();
    expect([l.nRows, l.nCols]).toEqual([500, 10]);
    let zeros = 0;
    for (let i = 0; i < x.data.length; i++) {
      const [xi, li] = [x.data[i]!, l.data[i]!];
      expect(Number.isFinite(li) && li <= 0).toBe(true);
      if (xi === 0) {
        zeros++;
        expect(li).toBeLessThan(-744);
      } else {
        expect(Math.abs(Math.exp(li) - xi)).toBeLessThanOrEqual(4 * Number.EPSILON * (1 + Math.abs(li)) * xi + 1e-323);
      }
    }
    expect(zeros).toBeGreaterThan(1000); // about half
  });

  test('multinomial with a million trials: rows sum to trials, zero-probability never counted', () => {
    const p = [0.1, 0.25, 0, 0.05, 0.4, 0.2];
    const n = 2000;
    const m = rng.multinomial(1_000_000, p, n);
    expect([m.nRows, m.nCols]).toEqual([n, 6]);
    const sums = Array.from({ length: n }, (_, i) => [0, 1, 2, 3, 4, 5].reduce((s, j) => s + m.data[j * n + i]!, 0));
    expect(sums.every((s) => s === 1_000_000)).toBe(true);
    expect(m.column(2).every((v) => v === 0)).toBe(true);
    for (let j = 0; j < 6; j++) {
      expect(Math.abs(mean(m.column(j)) - 1e6 * p[j]!)).toBeLessThanOrEqual(4 * Math.sqrt((1e6 * p[j]! * (1 - p[j]!)) / n));
    }
    const c = find(fx.discrete, { distribution: 'binomial', n: 1_000_000, p: 0.25 });
    expectFits('multinomial marginal p = 0.25', m.column(1), c.edges!, c.probs);
    expect(rng.multinomial(5, [1]).data).toEqual(new Float64Array([5]));
    expect(rng.multinomial(0, [0.5, 0.5]).data).toEqual(new Float64Array([0, 0]));
  });

  test('categorical never draws a zero-probability category', () => {
    const p = [0.1, 0, 0.35, 0.05, 0.5, 0];
    const x = rng.categorical(p, 50_000);
    expect(x).toBeInstanceOf(Int32Array);
    expect(x.every((v) => v !== 1 && v !== 5 && v >= 0 && v < 6)).toBe(true);
    const positive = [0, 2, 3, 4];
    // bins over the positive categories: edges 1, 3, 4 put 0 | 2 | 3 | 4 apart
    expectFits('categorical', x, [1, 3, 4], positive.map((i) => p[i]!));
  });

  test('choice: distinct, in range, every ordered triple of 5 equally likely', () => {
    for (const [n, k] of [[1000, 10], [20, 20], [1, 1], [0, 0], [2 ** 31 - 1, 5]] as const) {
      const c = rng.choice(n, k);
      expect(c.length).toBe(k);
      expect(new Set(c).size).toBe(k);
      expect(c.every((v) => v >= 0 && v < n)).toBe(true);
    }
    const codes = new Float64Array(12_000);
    for (let i = 0; i < codes.length; i++) {
      const [a, b, c] = rng.choice(5, 3);
      codes[i] = a! * 25 + b! * 5 + c!;
    }
    const triples = [...new Set(codes)].sort((x, y) => x - y);
    expect(triples.length).toBe(60);
    expectFits('ordered 3 of 5', codes, triples.slice(1), new Array(60).fill(1 / 60));
  });

  test('permutation', () => {
    const p = rng.permutation(1000);
    expect([...p].sort((a, b) => a - b)).toEqual([...Array(1000).keys()]);
    expect(rng.permutation(0).length).toBe(0);
  });
});

describe('bad input', () => {
  let rng: Rng;
  let twin: Rng;
  beforeAll(() => {
    rng = new Rng(5);
    twin = new Rng(5);
  });
  afterAll(() => {
    rng.dispose();
    twin.dispose();
  });

  /** Expects `type` with a message matching `hint`, the heap unchanged, and the stream untouched. */
  function expectClean(fn: () => unknown, type: new (...a: never[]) => FedmixError, hint: RegExp): void {
    expectCleanHeap(fn, type, hint);
    expect(rng.normal(3)).toEqual(twin.normal(3));
  }

  test('seeds and counts', () => {
    expectClean(() => new Rng(-1), InvalidParameterError, /^seed must be an integer >= 0, got -1$/);
    expectClean(() => new Rng(1.5), InvalidParameterError, /^seed must be an integer >= 0, got 1.5$/);
    const n = /^n must be an integer in \[0, 268435455\], got /;
    expectClean(() => rng.normal(-1), InvalidParameterError, n);
    expectClean(() => rng.uniform(1.5), InvalidParameterError, n);
    expectClean(() => rng.normal(NaN), InvalidParameterError, /got NaN$/);
    expectClean(() => rng.uniform(2 ** 31), InvalidParameterError, /got 2147483648$/);
    expectClean(() => rng.permutation(-2), InvalidParameterError, n);
    expectClean(() => rng.gamma(1, Infinity), InvalidParameterError, /got Infinity$/);
    expectClean(() => rng.normal('3' as never), InvalidParameterError, /^n must be an integer/);
  });

  test('gamma', () => {
    expectClean(() => rng.gamma(0, 5), InvalidParameterError, /^shape must be a finite number > 0, got 0$/);
    expectClean(() => rng.gamma(-1, 5), InvalidParameterError, /^shape must be a finite number > 0, got -1$/);
    expectClean(() => rng.gamma(NaN, 5), InvalidParameterError, /^shape must be a finite number > 0, got NaN$/);
    expectClean(() => rng.gamma(Infinity, 5), InvalidParameterError, /^shape must be a finite number > 0, got Infinity$/);
    expectClean(() => rng.gamma(1, 5, 0), InvalidParameterError, /^scale must be a finite number > 0, got 0$/);
    expectClean(() => rng.gamma(1, 5, -Infinity), InvalidParameterError, /^scale must be a finite number > 0, got -Infinity$/);
    // checked by the core
    expectClean(() => rng.gamma(1e-301, 5), InvalidParameterError, /^gamma shape must be a finite number >= 1e-300, got 1e-301$/);
    expectClean(() => rng.gamma(1e300, 5, 1e7), InvalidParameterError, /^gamma shape \* scale = \S+ is too large: draws would overflow f64$/);
  });

  test('dirichlet', () => {
    expectClean(() => rng.dirichlet([], 3), InvalidParameterError, /^alpha is empty; give at least one concentration$/);
    expectClean(() => rng.dirichlet([1, -1], 3), InvalidParameterError, /^alpha\[1\] must be a finite number >= 1e-300, got -1$/);
    expectClean(() => rng.dirichlet([1, NaN], 3), InvalidParameterError, /^alpha\[1\] must be a finite number >= 1e-300, got NaN$/);
    expectClean(() => rng.dirichlet([0, 1], 3), InvalidParameterError, /^alpha\[0\] must be a finite number >= 1e-300, got 0$/);
    expectClean(() => rng.dirichlet([Infinity], 3), InvalidParameterError, /got Infinity$/);
    expectClean(() => rng.dirichlet('abc' as never, 3), InvalidParameterError, /^alpha must be an array, got "abc"$/);
    expectClean(() => rng.dirichlet([1, '2'] as never, 3), InvalidParameterError, /^alpha must be a flat array of numbers; alpha\[1\] is "2"$/);
    expectClean(() => rng.dirichlet([[1, 2]] as never, 3), InvalidParameterError, /^alpha must be a flat array of numbers; alpha\[0\] is \[1, 2\]$/);
    expectClean(() => rng.dirichlet([1, 1], -1), InvalidParameterError, /^n must be an integer/);
    expectClean(() => rng.logDirichlet([], 3), InvalidParameterError, /^alpha is empty; give at least one concentration$/);
    expectClean(() => rng.logDirichlet([1, 0], 3), InvalidParameterError, /^alpha\[1\] must be a finite number >= 1e-300, got 0$/);
    expectClean(() => rng.logDirichlet([1, 1], 1.5), InvalidParameterError, /^n must be an integer/);
  });

  test('multinomial and categorical probabilities', () => {
    expectClean(() => rng.multinomial(-1, [1]), InvalidParameterError, /^trials must be an integer >= 0, got -1$/);
    expectClean(() => rng.multinomial(2.5, [1]), InvalidParameterError, /^trials must be an integer/);
    expectClean(() => rng.multinomial(2 ** 53, [1]), InvalidParameterError, /^trials must be an integer in \[0, 9007199254740991\], got 9007199254740992$/);
    expectClean(() => rng.multinomial(10, [1], 0.5), InvalidParameterError, /^n must be an integer/);
    for (const draw of [(p: number[]) => rng.multinomial(10, p, 2), (p: number[]) => rng.categorical(p, 2)]) {
      expectClean(() => draw([]), InvalidParameterError, /^probs is empty; give at least one probability$/);
      expectClean(() => draw([0.5, 0.6]), InvalidParameterError, /^probs must sum to 1 \(within 1e-8\); they sum to 1.1$/);
      expectClean(() => draw([0.2, 0.2]), InvalidParameterError, /^probs must sum to 1 \(within 1e-8\); they sum to 0.4$/);
      expectClean(() => draw([-0.1, 1.1]), InvalidParameterError, /^probs\[0\] = -0.1; probabilities must be finite and >= 0$/);
      expectClean(() => draw([0.5, NaN]), InvalidParameterError, /^probs\[1\] = NaN; probabilities must be finite and >= 0$/);
      expectClean(() => draw([Infinity, 1]), InvalidParameterError, /^probs\[0\] = Infinity; probabilities/);
      expectClean(() => draw({ length: 1, 0: '1' } as never), InvalidParameterError, /^probs must be a flat array of numbers; probs\[0\] is "1"$/);
    }
    // within the stated tolerance
    expect(rng.categorical([0.5, 0.5 + 0.9e-8], 3).length).toBe(3);
    twin.categorical([0.5, 0.5 + 0.9e-8], 3);
    expectClean(() => rng.categorical([0.5, 0.5 + 1.1e-8], 3), InvalidParameterError, /sum to 1/);
  });

  test('choice and permutation', () => {
    expectClean(() => rng.choice(5, 6), InvalidParameterError, /^k must be an integer in \[0, 5\], got 6$/);
    expectClean(() => rng.choice(5, -1), InvalidParameterError, /^k must be an integer in \[0, 5\], got -1$/);
    expectClean(() => rng.choice(-1, 0), InvalidParameterError, /^n must be an integer in \[0, 2147483647\], got -1$/);
    expectClean(() => rng.choice(10, 2.5), InvalidParameterError, /^k must be an integer/);
    expectClean(() => permutation(-1, 3), InvalidParameterError, /^n must be an integer/);
    expectClean(() => permutation(3, -3), InvalidParameterError, /^seed must be an integer >= 0, got -3$/);
  });

  test('outputs larger than one WASM allocation (LIMITS.values) are refused before anything is allocated', () => {
    expectClean(() => rng.normal(2 ** 31 - 1), InvalidParameterError, /^n must be an integer in \[0, 268435455\], got 2147483647$/);
    // n x k values: the cap is on the whole matrix
    expectClean(() => rng.dirichlet(new Array(1000).fill(1), 2 ** 30), InvalidParameterError, /^n must be an integer in \[0, 268435\]/);
    expectClean(() => rng.multinomial(10, new Array(4096).fill(1 / 4096), 2 ** 20), InvalidParameterError, /^n must be an integer in \[0, 65535\]/);
    // the population may be large, the draw not
    expectClean(() => rng.choice(2 ** 31 - 1, 2 ** 31 - 1), InvalidParameterError, /^k must be an integer in \[0, 268435455\]/);
    const other = new Rng(5);
    expect(other.choice(2 ** 31 - 1, 3).length).toBe(3);
    other.dispose();
    expect(LIMITS.values).toBe(2 ** 28 - 1);
  });

  test('a disposed Rng', () => {
    const r = new Rng(1);
    r.dispose();
    r.dispose(); // twice is harmless
    expect(r.disposed).toBe(true);
    expectClean(() => r.normal(1), NotFittedError, /^this Rng was disposed; create a new Rng$/);
    expectClean(() => r.choice(3, 1), NotFittedError, /disposed/);
  });

  test('1,000 create/draw/dispose cycles leave WASM memory flat', () => {
    const w = wasm();
    const cycle = (i: number) => {
      const r = new Rng(i);
      r.dirichlet([0.1, 0.2, 0.3], 5);
      r.multinomial(100, [0.5, 0.5], 3);
      r.choice(10_000, 20);
      try {
        r.categorical([0.3], 1);
      } catch {
        // the error path too
      }
      r.dispose();
    };
    for (let i = 0; i < 20; i++) cycle(i);
    const heap = w.fm_heap_in_use();
    const pages = w.memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) cycle(i);
    expect(w.fm_heap_in_use()).toBe(heap);
    expect(w.memory.buffer.byteLength).toBe(pages);
  });
});

test('before init, and after the instance is replaced', async () => {
  const old = new Rng(1);
  resetForTests();
  expect(() => new Rng(1)).toThrow(WasmError);
  expect(() => new Rng(1)).toThrow(/not initialized: call `await init\(\)`/);
  await init();
  expect(() => old.normal(1)).toThrow(/^this Rng belongs to a WASM instance that was replaced \(by init\(\{ fresh: true \}\) or after a trap\); create a new Rng$/);
  old.dispose(); // harmless: its memory went with the old instance
});

test('Matrix outputs are ordinary matrices', () => {
  const r = new Rng(3);
  const m = r.dirichlet([1, 2], 4);
  expect(m).toBeInstanceOf(Matrix);
  expect(Matrix.fromColumns([m.column(0), m.column(1)]).data).toEqual(m.data);
  r.dispose();
});
