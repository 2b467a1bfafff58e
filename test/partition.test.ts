/**
 * The partitioners: every row dealt exactly once (or reported unassigned),
 * histograms that count the labels of the rows dealt, determinism per seed
 * with no Math.random, the documented dealing rules (Dir(alpha) shares follow
 * the drawn weights, Quantity(alpha) clients hold exactly alpha classes, shift
 * parts have the right means), heterogeneity that falls as alpha grows on real
 * labels (satellite, letter), minimum sizes, and bad input.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { init, InvalidDataError, InvalidParameterError, Matrix, partition, type Label, type Partition } from '../ts/index.js';
import { parseCsv } from '../ts/data/csv.js';
import { blobs, expectClean } from './helpers.js';

function labelsOf(file: string): string[] {
  const table = parseCsv(readFileSync(fileURLToPath(new URL(`../../shared/datasets/${file}`, import.meta.url)), 'utf8'));
  return table.columns[table.names.indexOf('label')]!;
}
const satellite = labelsOf('satellite.csv'); // 6435 rows, 6 classes
const letter = labelsOf('letter.csv'); // 20000 rows, 26 classes

/**
 * The partition's invariants: ascending disjoint index sets that with
 * `unassigned` cover 0..n-1 once, sorted distinct classes, and histograms that
 * count the labels of each client's rows.
 */
function expectValid(p: Partition, labels: ArrayLike<Label>, unassigned: ArrayLike<number> = []): void {
  const n = labels.length;
  const seen = new Uint8Array(n);
  for (const i of Array.from(unassigned)) seen[i]!++;
  const distinct = [...new Set(Array.from(labels))];
  const sorted = typeof distinct[0] === 'number' ? (distinct as number[]).sort((a, b) => a - b) : (distinct as string[]).sort();
  expect(p.classes).toEqual(sorted);
  const code = new Map(p.classes.map((c, k) => [c, k]));
  expect(p.histograms.length).toBe(p.indices.length);
  p.indices.forEach((rows, c) => {
    const h = new Int32Array(p.classes.length);
    for (let r = 0; r < rows.length; r++) {
      if (r > 0) expect(rows[r]!).toBeGreaterThan(rows[r - 1]!);
      seen[rows[r]!]!++;
      h[code.get(labels[rows[r]!]!)!]!++;
    }
    expect(Array.from(p.histograms[c]!), `histogram of client ${c}`).toEqual(Array.from(h));
  });
  expect(seen.every((v) => v === 1), 'every row dealt exactly once').toBe(true);
}

function sizes(p: Partition): number[] {
  return p.indices.map((r) => r.length);
}

/** Mean over clients of the largest class share of the client's rows. */
function meanMaxShare(p: Partition): number {
  return p.histograms.reduce((s, h) => s + Math.max(...h) / h.reduce((a, b) => a + b, 0), 0) / p.histograms.length;
}

function coefficientOfVariation(v: number[]): number {
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  return Math.sqrt(v.reduce((a, x) => a + (x - m) ** 2, 0) / v.length) / m;
}

beforeAll(async () => {
  await init();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('every scheme', () => {
  const X = blobs(300, 3, 3, 5);
  const labels = Array.from({ length: 300 }, (_, i) => ['a', 'b', 'c', 'd'][i % 4]!);
  const schemes: Array<[string, (seed: number) => unknown]> = [
    ['iid', (seed) => partition.iid(labels, { clients: 7, seed })],
    ['dirichlet', (seed) => partition.dirichlet(labels, { clients: 7, alpha: 0.5, seed })],
    ['quantity', (seed) => partition.quantity(labels, { clients: 7, alpha: 2, seed })],
    ['shift', (seed) => partition.shift(X, { parts: 4, beta: 1, clients: 7, alpha: 2, seed })],
  ];

  test.each(schemes)('%s: the same seed gives the same partition, another seed another, without Math.random', (_name, run) => {
    const random = vi.spyOn(Math, 'random');
    const a = JSON.stringify(run(11), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v));
    const b = JSON.stringify(run(11), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v));
    const c = JSON.stringify(run(12), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(random).not.toHaveBeenCalled();
  });
});

describe('iid', () => {
  test('equal shares of a random permutation, class mix close to the whole', () => {
    const p = partition.iid(satellite, { clients: 7, seed: 3 });
    expectValid(p, satellite);
    const s = sizes(p);
    expect(Math.max(...s) - Math.min(...s)).toBeLessThanOrEqual(1);
    expect(s.filter((v) => v === Math.ceil(6435 / 7)).length).toBe(6435 % 7);
    // each client's class shares within 4 standard errors of the overall shares
    const total = p.classes.map((c) => satellite.filter((l) => l === c).length / satellite.length);
    p.histograms.forEach((h, c) => {
      h.forEach((count, k) => {
        const se = Math.sqrt((total[k]! * (1 - total[k]!)) / s[c]!);
        expect(Math.abs(count / s[c]! - total[k]!)).toBeLessThan(4 * se);
      });
    });
  });

  test('from a row count: no classes, empty histograms; as many clients as rows', () => {
    const p = partition.iid(10, { clients: 10, seed: 1 });
    expect(p.classes).toEqual([]);
    expect(p.histograms.every((h) => h.length === 0)).toBe(true);
    expect(sizes(p)).toEqual(new Array(10).fill(1));
    expect(p.indices.flatMap((r) => Array.from(r)).sort((a, b) => a - b)).toEqual([...Array(10).keys()]);
  });

  test('which clients get the extra row is random, not always the first ones', () => {
    const first = new Set<number>();
    for (let seed = 0; seed < 20; seed++) first.add(sizes(partition.iid(11, { clients: 10, seed })).indexOf(2));
    expect(first.size).toBeGreaterThan(3);
  });

  test('numeric labels sort by value', () => {
    const labels = [10, 2, 2, -1, 10, 2.5];
    const p = partition.iid(labels, { clients: 2, seed: 0 });
    expect(p.classes).toEqual([-1, 2, 2.5, 10]);
    expectValid(p, labels);
  });
});

describe('dirichlet (Dir(alpha))', () => {
  test('a partition of all rows; the drawn weights are probability vectors', () => {
    for (const alpha of [0.05, 1, 50]) {
      const p = partition.dirichlet(satellite, { clients: 20, alpha, seed: 2 });
      expectValid(p, satellite);
      expect([p.weights.nRows, p.weights.nCols]).toEqual([20, 6]);
      for (let c = 0; c < 20; c++) expect(p.weights.row(c).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      expect(Math.min(...sizes(p))).toBeGreaterThanOrEqual(1);
    }
  });

  test('each class is dealt in proportion to the clients\' weights for it (within one row)', () => {
    const p = partition.dirichlet(letter, { clients: 15, alpha: 0.3, seed: 9, minSize: 0 });
    expectValid(p, letter);
    p.classes.forEach((cls, k) => {
      const nk = letter.filter((l) => l === cls).length;
      let sum = 0;
      for (let c = 0; c < 15; c++) sum += p.weights.get(c, k);
      for (let c = 0; c < 15; c++) expect(Math.abs(p.histograms[c]![k]! - (nk * p.weights.get(c, k)) / sum)).toBeLessThan(1);
    });
  });

  test.each([
    ['satellite', satellite, 6],
    ['letter', letter, 26],
  ] as const)('%s: heterogeneity and size spread fall as alpha grows (Figure 1)', (_name, labels, K) => {
    const stats = [0.1, 1, 100].map((alpha) => {
      let share = 0;
      let cv = 0;
      for (let seed = 0; seed < 5; seed++) {
        const p = partition.dirichlet(labels, { clients: 20, alpha, seed });
        share += meanMaxShare(p) / 5;
        cv += coefficientOfVariation(sizes(p)) / 5;
      }
      return { share, cv };
    });
    const [small, one, large] = stats as [(typeof stats)[0], (typeof stats)[0], (typeof stats)[0]];
    expect(small.share).toBeGreaterThan(one.share + 0.1);
    expect(one.share).toBeGreaterThan(large.share + 0.05);
    expect(small.cv).toBeGreaterThan(one.cv);
    expect(one.cv).toBeGreaterThan(large.cv);
    // alpha = 100: every client's mix is near the overall one, sizes near equal
    const largest = Math.max(...[...new Set(labels)].map((c) => labels.filter((l) => l === c).length)) / labels.length;
    expect(Math.abs(large.share - largest)).toBeLessThan(0.05);
    expect(large.cv).toBeLessThan(0.05);
    // alpha = 0.1: clients dominated by one or two classes (of 6), or a handful (of 26, with 20 clients)
    expect(small.share).toBeGreaterThan(K === 6 ? 0.6 : 0.3);
  });

  test('tiny alpha: weights that underflow still deal every class, to the clients weighting it most', () => {
    const p = partition.dirichlet(letter, { clients: 2, alpha: 0.001, seed: 4, minSize: 0 });
    expectValid(p, letter);
    // most weights are exact zeros, yet no row is lost; a class all of whose
    // weights underflowed goes (almost) whole to one client
    expect(Array.from(p.weights.data).filter((w) => w === 0).length).toBeGreaterThan(20);
    for (let k = 0; k < 26; k++) {
      const [a, b] = [p.histograms[0]![k]!, p.histograms[1]![k]!];
      expect(Math.min(a, b)).toBeLessThanOrEqual(1);
    }
  });

  test('minSize: short clients are topped up with rows of the classes they weight most', () => {
    // Dir(alpha) deals each class to all clients in proportion to their weights,
    // so clients go empty when there are few rows per client
    const labels = Array.from({ length: 2000 }, (_, i) => i % 5);
    const raw = partition.dirichlet(labels, { clients: 1000, alpha: 1, seed: 1, minSize: 0 });
    expectValid(raw, labels);
    const rawSizes = sizes(raw);
    const empty = rawSizes.flatMap((s, c) => (s === 0 ? [c] : []));
    expect(empty.length).toBeGreaterThan(20); // without a minimum, clients go empty
    const p = partition.dirichlet(labels, { clients: 1000, alpha: 1, seed: 1 });
    expectValid(p, labels);
    expect(Math.min(...sizes(p))).toBe(1);
    expect(Array.from(p.weights.data)).toEqual(Array.from(raw.weights.data)); // the same draws
    for (const c of empty) {
      const w = p.weights.row(c);
      const favourite = w.indexOf(Math.max(...w));
      // enough clients can spare a row of it (one each keeps them at minSize) ...
      const spare = raw.histograms.filter((h, d) => h[favourite]! > 0 && rawSizes[d]! > 1).length;
      expect(spare).toBeGreaterThan(empty.length);
      // ... so the row the empty client gets is of its favourite class
      expect(p.histograms[c]![favourite], `client ${c} got its favourite class`).toBe(1);
    }
    // only the empty clients changed, each by one row from some other client
    let moved = 0;
    p.indices.forEach((rows, c) => {
      moved += Math.abs(rows.length - rawSizes[c]!);
    });
    expect(moved).toBe(2 * empty.length);
    const three = partition.dirichlet(labels, { clients: 600, alpha: 1, seed: 1, minSize: 3 });
    expectValid(three, labels);
    expect(Math.min(...sizes(three))).toBe(3);
  });

  test('a single class and a single client', () => {
    const one = partition.dirichlet(['x', 'x', 'x'], { clients: 3, alpha: 1, seed: 0 });
    expect(sizes(one)).toEqual([1, 1, 1]);
    const all = partition.dirichlet(satellite, { clients: 1, alpha: 0.1, seed: 0 });
    expect(sizes(all)).toEqual([6435]);
  });
});

describe('quantity (Quantity(alpha))', () => {
  test('every client holds exactly alpha classes; each class is split evenly among its holders', () => {
    for (const alpha of [1, 2, 5]) {
      const p = partition.quantity(letter, { clients: 30, alpha, seed: alpha });
      expectValid(p, letter);
      expect(p.unassigned.length).toBe(0);
      p.histograms.forEach((h, c) => {
        const heldClasses = Array.from(h.keys()).filter((k) => h[k]! > 0);
        expect(heldClasses).toEqual(Array.from(p.classSets[c]!));
        expect(heldClasses.length).toBe(alpha);
      });
      for (let k = 0; k < 26; k++) {
        const shares = p.histograms.map((h) => h[k]!).filter((v) => v > 0);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });

  test('every class is held when clients * alpha >= classes, also when exactly equal', () => {
    for (let seed = 0; seed < 30; seed++) {
      for (const [clients, alpha] of [[3, 2], [6, 1], [2, 5], [13, 2]] as const) {
        const p = partition.quantity(satellite, { clients, alpha, seed });
        expect(p.unassigned.length).toBe(0);
        const held = new Set(p.classSets.flatMap((s) => Array.from(s)));
        expect(held.size).toBe(6);
      }
    }
  });

  test('clients * alpha < classes: the classes nobody holds are returned as unassigned rows', () => {
    const p = partition.quantity(letter, { clients: 4, alpha: 3, seed: 5 });
    expectValid(p, letter, p.unassigned);
    const held = new Set(p.classSets.flatMap((s) => Array.from(s)));
    expect(held.size).toBe(12);
    const unheld = p.classes.filter((_, k) => !held.has(k));
    expect(p.unassigned.length).toBe(letter.filter((l) => unheld.includes(l)).length);
    for (let i = 1; i < p.unassigned.length; i++) expect(p.unassigned[i]!).toBeGreaterThan(p.unassigned[i - 1]!);
  });

  test('a client whose classes cannot give it minSize rows: a clear error, or empty with minSize 0', () => {
    // 'a' has one row: a second client holding it gets nothing of it
    const labels = ['a', ...new Array<string>(10).fill('b')];
    let failures = 0;
    for (let seed = 0; seed < 16; seed++) {
      try {
        expectValid(partition.quantity(labels, { clients: 3, alpha: 1, seed }), labels);
      } catch (e) {
        failures++;
        expect(e).toBeInstanceOf(InvalidParameterError);
        expect((e as Error).message).toMatch(/^Quantity\(1\): client \d gets only 0 rows \(minSize 1\); its classes "a" \(1 row for 2 clients\) have too few rows.*another seed$/);
      }
      const p = partition.quantity(labels, { clients: 3, alpha: 1, seed, minSize: 0 });
      expectValid(p, labels);
    }
    expect(failures).toBeGreaterThan(0);
    expect(failures).toBeLessThan(16);
  });

  test('minSize tops up from other holders of the same classes', () => {
    // every client holds both classes; the even split leaves one with 2 rows, and
    // minSize 3 moves it a row of a class it holds from a client with 4
    const labels = ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b'];
    expect(Math.min(...sizes(partition.quantity(labels, { clients: 3, alpha: 2, seed: 0, minSize: 0 })))).toBe(2);
    const p = partition.quantity(labels, { clients: 3, alpha: 2, seed: 0, minSize: 3 });
    expectValid(p, labels);
    expect(Math.min(...sizes(p))).toBeGreaterThanOrEqual(3);
    p.histograms.forEach((h) => expect(h.every((v) => v > 0)).toBe(true)); // still two classes each
  });
});

describe('shift (the WADI scheme)', () => {
  const d = 4;
  const X = blobs(2000, d, 2, 8);
  const beta = 0.5;

  /** Per part: mean and variance of the added values over its rows and coordinates. */
  function added(before: Matrix, after: Matrix, parts: Int32Array, M: number): { count: number; mean: number; variance: number }[] {
    return Array.from({ length: M }, (_, m) => {
      const diffs: number[] = [];
      for (let i = 0; i < before.nRows; i++) if (parts[i] === m) for (let j = 0; j < d; j++) diffs.push(after.get(i, j) - before.get(i, j));
      const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
      return { count: diffs.length / d, mean, variance: diffs.reduce((a, v) => a + (v - mean) ** 2, 0) / (diffs.length - 1) };
    });
  }

  test('M equal parts, each shifted by N(m * beta, 0.01 I), dealt by Quantity(alpha)', () => {
    const p = partition.shift(X, { parts: 5, beta, clients: 10, alpha: 2, seed: 3 });
    expect(p.classes).toEqual([0, 1, 2, 3, 4]);
    expectValid(p, p.parts);
    expect(Array.from(p.shift.means)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(p.shift.noiseVariance).toBe(0.01);
    p.histograms.forEach((h) => expect(h.filter((v) => v > 0).length).toBe(2));
    // per part: 400 rows, added values within 4 standard errors of m * beta, variance near 0.01
    added(X, p.X, p.parts, 5).forEach(({ count, mean, variance }, m) => {
      expect(count).toBe(400);
      expect(Math.abs(mean - m * beta)).toBeLessThan(4 * Math.sqrt(0.01 / (count * d)));
      expect(Math.abs(variance - 0.01)).toBeLessThan(4 * 0.01 * Math.sqrt(2 / (count * d)));
    });
  });

  test('applyShift with the same seed reproduces the training perturbation; other rows get the same parts and means', () => {
    const p = partition.shift(X, { parts: 4, beta, clients: 6, alpha: 2, seed: 21 });
    const again = partition.applyShift(X, p.shift, { seed: 21 });
    expect(Array.from(again.parts)).toEqual(Array.from(p.parts));
    expect(Array.from(again.X.data)).toEqual(Array.from(p.X.data));
    // a test set: parts of near-equal size, the same means, fresh noise
    const T = blobs(1001, d, 3, 99);
    const t = partition.applyShift(T, p.shift, { seed: 22 });
    const stats = added(T, t.X, t.parts, 4);
    expect(Math.max(...stats.map((s) => s.count)) - Math.min(...stats.map((s) => s.count))).toBeLessThanOrEqual(1);
    stats.forEach(({ count, mean, variance }, m) => {
      expect(Math.abs(mean - m * beta)).toBeLessThan(4 * Math.sqrt(0.01 / (count * d)));
      expect(Math.abs(variance - 0.01)).toBeLessThan(4 * 0.01 * Math.sqrt(2 / (count * d)));
    });
    // a handful of anomalies: parts are random, not always the first ones
    const seen = new Set<number>();
    for (let seed = 0; seed < 10; seed++) partition.applyShift(T.selectRows([0, 1]), p.shift, { seed }).parts.forEach((m) => seen.add(m));
    expect(seen.size).toBe(4);
  });

  test('noiseVariance 0: exactly the part means', () => {
    const p = partition.shift(X, { parts: 3, beta: 2, clients: 3, alpha: 1, seed: 1, noiseVariance: 0 });
    for (let i = 0; i < X.nRows; i += 97) for (let j = 0; j < d; j++) expect(p.X.get(i, j)).toBe(X.get(i, j) + 2 * p.parts[i]!);
    expect(X.get(0, 0)).toBe(blobs(2000, d, 2, 8).get(0, 0)); // the input is not modified
  });
});

describe('bad input: typed errors that say what to change, nothing left in WASM', () => {
  const labels = ['a', 'b', 'b', 'c', 'a', 'c'];
  const X = blobs(30, 2, 2, 1);

  test('labels', () => {
    for (const run of [
      (l: unknown) => partition.iid(l as string[], { clients: 2 }),
      (l: unknown) => partition.dirichlet(l as string[], { clients: 2, alpha: 1 }),
      (l: unknown) => partition.quantity(l as string[], { clients: 2, alpha: 1 }),
    ]) {
      expectClean(() => run([]), InvalidDataError, /^labels is empty; pass one label per row$/);
      expectClean(() => run([1, NaN, 2]), InvalidDataError, /^labels\[1\] is NaN; labels must be all finite numbers or all strings$/);
      expectClean(() => run([1, 'a']), InvalidDataError, /^labels\[1\] is "a"; labels must be all finite numbers or all strings$/);
      expectClean(() => run([Infinity]), InvalidDataError, /labels\[0\] is Infinity/);
      expectClean(() => run([null]), InvalidDataError, /labels\[0\] is null/);
      expectClean(() => run(undefined), InvalidParameterError, /labels must be an array of numbers or strings/);
    }
  });

  test('clients', () => {
    expectClean(() => partition.iid(labels, { clients: 0 }), InvalidParameterError, /^clients must be an integer >= 1, got 0$/);
    expectClean(() => partition.iid(labels, { clients: 2.5 }), InvalidParameterError, /clients must be an integer/);
    expectClean(() => partition.iid(labels, undefined as never), InvalidParameterError, /clients must be an integer >= 1, got undefined/);
    expectClean(() => partition.iid(labels, { clients: 7 }), InvalidParameterError, /^clients = 7 needs at least 7 rows \(minSize 1 each\) but there are 6; use at most 6 clients$/);
    expectClean(() => partition.iid(5, { clients: 6 }), InvalidParameterError, /there are 5; use at most 5 clients/);
    expectClean(() => partition.iid(0, { clients: 1 }), InvalidParameterError, /nRows must be an integer in \[1, 67108864\], got 0/);
    expectClean(
      () => partition.dirichlet(labels, { clients: 4, alpha: 1, minSize: 2 }),
      InvalidParameterError,
      /^clients = 4 needs at least 8 rows \(minSize 2 each\) but there are 6; use at most 3 clients or a lower minSize$/,
    );
    expectClean(() => partition.quantity(labels, { clients: 7, alpha: 1 }), InvalidParameterError, /use at most 6 clients/);
    expectClean(() => partition.shift(X, { parts: 2, beta: 1, clients: 31, alpha: 1 }), InvalidParameterError, /there are 30; use at most 30 clients/);
  });

  test('alpha, minSize, seed', () => {
    expectClean(() => partition.dirichlet(labels, { clients: 2, alpha: 0 }), InvalidParameterError, /^alpha must be a finite number > 0, got 0$/);
    expectClean(() => partition.dirichlet(labels, { clients: 2, alpha: NaN }), InvalidParameterError, /alpha must be a finite number > 0, got NaN/);
    expectClean(() => partition.dirichlet(labels, { clients: 2, alpha: 1e-310 }), InvalidParameterError, /alpha must be >= 1e-300/);
    expectClean(() => partition.dirichlet(labels, { clients: 2, alpha: 1, minSize: -1 }), InvalidParameterError, /^minSize must be an integer in \[0, 67108864\], got -1$/);
    expectClean(() => partition.quantity(labels, { clients: 2, alpha: 0 }), InvalidParameterError, /^alpha must be an integer in \[1, 16777216\], got 0$/);
    expectClean(() => partition.quantity(labels, { clients: 2, alpha: 1.5 }), InvalidParameterError, /alpha must be an integer in \[1, 16777216\], got 1.5/);
    expectClean(() => partition.quantity(labels, { clients: 2, alpha: 4 }), InvalidParameterError, /^alpha = 4 classes per client, but the labels have only 3 classes; use alpha <= 3$/);
    expectClean(() => partition.iid(labels, { clients: 2, seed: -1 }), InvalidParameterError, /^seed must be an integer >= 0, got -1$/);
    expectClean(() => partition.quantity(labels, { clients: 2, alpha: 1, seed: 0.5 }), InvalidParameterError, /seed must be an integer/);
  });

  test('shift and applyShift', () => {
    const bad = new Matrix(X.data.slice(), 30, 2);
    bad.data[30 + 4] = NaN;
    expectClean(() => partition.shift(bad, { parts: 2, beta: 1, clients: 2, alpha: 1 }), InvalidDataError, /^X contains NaN at row 4, column 1; remove or impute/);
    expectClean(() => partition.shift(X, { parts: 0, beta: 1, clients: 2, alpha: 1 }), InvalidParameterError, /^parts must be an integer in \[1, 67108864\], got 0$/);
    expectClean(() => partition.shift(X, { parts: 31, beta: 1, clients: 2, alpha: 1 }), InvalidParameterError, /^parts = 31 exceeds the 30 rows; every part needs a row, use at most 30 parts$/);
    expectClean(() => partition.shift(X, { parts: 3, beta: -1, clients: 2, alpha: 1 }), InvalidParameterError, /^beta must be a finite number >= 0, got -1$/);
    expectClean(() => partition.shift(X, { parts: 3, beta: Infinity, clients: 2, alpha: 1 }), InvalidParameterError, /beta must be a finite number/);
    expectClean(() => partition.shift(X, { parts: 3, beta: 1, clients: 2, alpha: 1, noiseVariance: -0.1 }), InvalidParameterError, /^noiseVariance must be a finite number >= 0/);
    expectClean(() => partition.shift(X, { parts: 3, beta: 1, clients: 2, alpha: 4 }), InvalidParameterError, /^alpha = 4 classes per client, but the parts are only 3 classes; use alpha <= 3$/);
    const { shift } = partition.shift(X, { parts: 3, beta: 1, clients: 2, alpha: 1, seed: 0 });
    expectClean(() => partition.applyShift(bad, shift), InvalidDataError, /NaN at row 4, column 1/);
    expectClean(() => partition.applyShift(X, { ...shift, means: new Float64Array(0) }), InvalidParameterError, /shift.means must be a non-empty array of finite numbers/);
    expectClean(() => partition.applyShift(X, { ...shift, means: Float64Array.of(0, NaN) }), InvalidParameterError, /shift.means/);
    expectClean(() => partition.applyShift(X, undefined as never), InvalidParameterError, /pass the shift of a shift\(\) result/);
    expectClean(() => partition.applyShift(X, { ...shift, noiseVariance: NaN }), InvalidParameterError, /^shift.noiseVariance must be a finite number >= 0, got NaN$/);
    expectClean(() => partition.applyShift(X, shift, { seed: -2 }), InvalidParameterError, /seed must be/);
    // no rows: nothing to shift
    expect(partition.applyShift(Matrix.zeros(0, 2), shift, { seed: 1 }).X.nRows).toBe(0);
  });
});
