/**
 * linearSumAssignment against scipy.optimize.linear_sum_assignment 1.10.1
 * (test/fixtures/lsa.json), against brute force on every shape up to 8 x 8,
 * and on bad input.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { AssignmentCost, init, InvalidDataError, InvalidParameterError, linearSumAssignment, NotFittedError, type LinearSumAssignment } from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { expectClean, fixture, xorshift32 } from './helpers.js';

interface Solve {
  maximize: boolean;
  infeasible?: boolean;
  rowInd?: number[];
  colInd?: number[];
  total?: number;
  /** no other assignment is within 1e-9 (relative) of the optimum */
  unique?: boolean;
}
interface Case {
  kind: 'random' | 'integer' | 'forbidden';
  shape: [number, number];
  /** what a null entry of `cost` stands for */
  forbidden: '+Infinity' | '-Infinity';
  cost: (number | null)[];
  solves: Solve[];
}
const { cases } = fixture<{ cases: Case[] }>('lsa.json');

function matrixOf(c: Case): Float64Array {
  const mark = c.forbidden === '+Infinity' ? Infinity : -Infinity;
  return Float64Array.from(c.cost, (v) => (v === null ? mark : v));
}

function rowsOf(flat: Float64Array, nr: number, nc: number): number[][] {
  return Array.from({ length: nr }, (_, i) => Array.from(flat.subarray(i * nc, (i + 1) * nc)));
}

/**
 * A well-formed answer: min(nr, nc) cells, rows ascending, distinct columns,
 * none forbidden, and `cost` their total (to rounding).
 */
function expectWellFormed(r: LinearSumAssignment, cost: Float64Array, nr: number, nc: number): void {
  const k = Math.min(nr, nc);
  expect(r.rowInd).toBeInstanceOf(Int32Array);
  expect(r.colInd).toBeInstanceOf(Int32Array);
  expect(r.rowInd.length).toBe(k);
  expect(r.colInd.length).toBe(k);
  const seen = new Set<number>();
  let total = 0;
  for (let t = 0; t < k; t++) {
    const [i, j] = [r.rowInd[t]!, r.colInd[t]!];
    if (t > 0) expect(i).toBeGreaterThan(r.rowInd[t - 1]!);
    expect(i >= 0 && i < nr && j >= 0 && j < nc).toBe(true);
    expect(seen.has(j)).toBe(false);
    seen.add(j);
    expect(Number.isFinite(cost[i * nc + j]!), `cell (${i}, ${j}) is forbidden`).toBe(true);
    total += cost[i * nc + j]!;
  }
  expect(Math.abs(r.cost - total)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(total)) * k);
}

beforeAll(async () => {
  await init();
});

describe('against scipy.optimize.linear_sum_assignment', () => {
  const solves = cases.flatMap((c, ci) =>
    c.solves.map((s) => [`${c.kind} ${c.shape[0]} x ${c.shape[1]}${s.maximize ? ' maximize' : ''} #${ci}`, c, s] as const),
  );

  test.each(solves)('%s', (_name, c, s) => {
    const [nr, nc] = c.shape;
    const cost = matrixOf(c);
    const options = { maximize: s.maximize, shape: [nr, nc] as [number, number] };
    if (s.infeasible) {
      expectClean(() => linearSumAssignment(cost, options), InvalidDataError, /infeasible/);
      return;
    }
    const r = linearSumAssignment(cost, options);
    expectWellFormed(r, cost, nr, nc);
    if (c.kind === 'random') {
      expect(Math.abs(r.cost - s.total!)).toBeLessThanOrEqual(1e-9 * Math.abs(s.total!));
    } else {
      expect(r.cost).toBe(s.total); // integers: exact
    }
    if (s.unique) {
      expect(Array.from(r.rowInd)).toEqual(s.rowInd);
      expect(Array.from(r.colInd)).toEqual(s.colInd);
    }
    // the number[][] form gives the same answer
    if (nr * nc <= 20000) {
      const again = linearSumAssignment(rowsOf(cost, nr, nc), { maximize: s.maximize });
      expect(again).toEqual(r);
    }
  });

  test('the fixtures cover what they should', () => {
    const all = cases.flatMap((c) => c.solves.map((s) => ({ c, s })));
    expect(all.filter(({ s }) => s.unique).length).toBeGreaterThan(40);
    expect(all.filter(({ c }) => c.shape[0] > c.shape[1]).length).toBeGreaterThan(10);
    expect(all.filter(({ c }) => c.shape[0] < c.shape[1]).length).toBeGreaterThan(10);
    expect(all.filter(({ s }) => s.infeasible).length).toBeGreaterThanOrEqual(2);
    expect(all.filter(({ c, s }) => c.cost.includes(null) && !s.infeasible).length).toBeGreaterThan(10);
    expect(all.some(({ c, s }) => c.shape[0] === 500 && s.unique)).toBe(true);
  });
});

/** The best total over all assignments avoiding forbidden cells (null if none), by enumeration. */
function bruteForce(cost: Float64Array, nr: number, nc: number, maximize: boolean): number | null {
  const [n, m] = nr <= nc ? [nr, nc] : [nc, nr];
  const at = (k: number, j: number) => (nr <= nc ? cost[k * nc + j]! : cost[j * nc + k]!);
  const used = new Uint8Array(m);
  let best: number | null = null;
  const go = (k: number, acc: number): void => {
    if (k === n) {
      if (best === null || (maximize ? acc > best : acc < best)) best = acc;
      return;
    }
    for (let j = 0; j < m; j++) {
      const x = at(k, j);
      if (!used[j] && Number.isFinite(x)) {
        used[j] = 1;
        go(k + 1, acc + x);
        used[j] = 0;
      }
    }
  };
  go(0, 0);
  return best;
}

/** xorshift32 in [0, 1): a seeded source for the small matrices. */
function uniform(seed: number): () => number {
  const next = xorshift32(seed);
  return () => next() / 2 ** 32;
}

describe('against brute force', () => {
  const kinds = ['continuous', 'integers', 'forbidden'] as const;
  const shapes: [number, number][] = [];
  for (let nr = 1; nr <= 8; nr++) for (let nc = 1; nc <= 8; nc++) shapes.push([nr, nc]);

  test.each(shapes)('every kind of %i x %i matrix, both directions', (nr, nc) => {
    const u = uniform(nr * 131 + nc);
    for (const kind of kinds) {
      for (const maximize of [false, true]) {
        const mark = maximize ? -Infinity : Infinity;
        const cost = Float64Array.from({ length: nr * nc }, () => {
          if (kind === 'continuous') return u() * 20 - 5;
          if (kind === 'forbidden' && u() < 0.35) return mark;
          return Math.floor(u() * 4);
        });
        const best = bruteForce(cost, nr, nc, maximize);
        const options = { maximize, shape: [nr, nc] as [number, number] };
        if (best === null) {
          expect(() => linearSumAssignment(cost, options)).toThrow(/infeasible/);
          continue;
        }
        const r = linearSumAssignment(cost, options);
        expectWellFormed(r, cost, nr, nc);
        if (kind === 'continuous') expect(Math.abs(r.cost - best)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(best)));
        else expect(r.cost).toBe(best);
      }
    }
  });

  test('property: optimal on arbitrary small integer matrices with forbidden cells', () => {
    const cell = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -50, max: 50 }) }, { weight: 1, arbitrary: fc.constant(Infinity) });
    const problem = fc
      .tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.boolean())
      .chain(([nr, nc, maximize]) => fc.tuple(fc.constant(nr), fc.constant(nc), fc.constant(maximize), fc.array(cell, { minLength: nr * nc, maxLength: nr * nc })));
    fc.assert(
      fc.property(problem, ([nr, nc, maximize, cells]) => {
        const cost = Float64Array.from(cells, (x) => (maximize && x === Infinity ? -Infinity : x));
        const best = bruteForce(cost, nr, nc, maximize);
        const solve = () => linearSumAssignment(cost, { maximize, shape: [nr, nc] });
        if (best === null) {
          expect(solve).toThrow(InvalidDataError);
        } else {
          const r = solve();
          expectWellFormed(r, cost, nr, nc);
          expect(r.cost).toBe(best);
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});

describe('semantics', () => {
  test("scipy's documentation example, and maximize", () => {
    const cost = [
      [4, 1, 3],
      [2, 0, 5],
      [3, 2, 2],
    ];
    const r = linearSumAssignment(cost);
    expect(Array.from(r.rowInd)).toEqual([0, 1, 2]);
    expect(Array.from(r.colInd)).toEqual([1, 0, 2]);
    expect(r.cost).toBe(5);
    const m = linearSumAssignment(cost, { maximize: true });
    expect(m.cost).toBe(11); // 4 + 5 + 2
    expect(Array.from(m.colInd)).toEqual([0, 2, 1]);
  });

  test('tall matrices assign every column, with rows ascending', () => {
    const r = linearSumAssignment([[9, 1], [9, 9], [2, 9]]);
    expect(Array.from(r.rowInd)).toEqual([0, 2]);
    expect(Array.from(r.colInd)).toEqual([1, 0]);
    expect(r.cost).toBe(3);
  });

  test('forbidden pairs: +Infinity, or -Infinity when maximizing', () => {
    const r = linearSumAssignment([[Infinity, 1], [1, Infinity]]);
    expect(Array.from(r.colInd)).toEqual([1, 0]);
    const m = linearSumAssignment([[-Infinity, 1], [1, 2]], { maximize: true });
    expect(Array.from(m.colInd)).toEqual([1, 0]);
    expect(m.cost).toBe(2);
  });

  test('an empty dimension gives an empty assignment, as in scipy', () => {
    const empty = { rowInd: new Int32Array(0), colInd: new Int32Array(0), cost: 0 };
    expect(linearSumAssignment([])).toEqual(empty);
    expect(linearSumAssignment([[], []])).toEqual(empty);
    expect(linearSumAssignment(new Float64Array(0), { shape: [0, 4] })).toEqual(empty);
    expect(linearSumAssignment(new Float64Array(0), { shape: [3, 0], maximize: true })).toEqual(empty);
    expect(linearSumAssignment([], { shape: [0, 5] })).toEqual(empty);
  });

  test('all-equal costs: the identity (ties go to free columns)', () => {
    // one search step per row: about 40 ms alone; without the tie rule row k
    // would scan k rows first, n^3 / 2 work, well past the test's timeout
    // (no timed assertion here: a loaded machine made one flaky)
    const n = 2500;
    const cost = new Float64Array(n * n).fill(3);
    const r = linearSumAssignment(cost, { shape: [n, n] });
    expect(Array.from(r.colInd)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(r.cost).toBe(3 * n);
  });

  test('leaves nothing allocated and does not touch the input', () => {
    const cost = Float64Array.from({ length: 60 * 45 }, (_, i) => (i * 7919) % 101);
    const copy = cost.slice();
    const before = wasm().fm_heap_in_use();
    const a = linearSumAssignment(cost, { shape: [60, 45], maximize: true });
    const b = linearSumAssignment(cost, { shape: [60, 45], maximize: true });
    expect(b).toEqual(a);
    expect(wasm().fm_heap_in_use()).toBe(before);
    expect(cost).toEqual(copy);
  });
});

describe('bad input', () => {
  test('NaN, and the infinity that cannot mean forbidden, name the cell', () => {
    expectClean(() => linearSumAssignment([[1, 2, 3], [4, 5, NaN]]), InvalidDataError, /cost contains NaN at row 1, column 2/);
    expectClean(() => linearSumAssignment([[-Infinity, 2], [3, 4]]), InvalidDataError, /-Infinity at row 0, column 0; \+Infinity marks a forbidden pair/);
    expectClean(
      () => linearSumAssignment([[1, 2], [3, Infinity], [5, 6]], { maximize: true }),
      InvalidDataError,
      /\+Infinity at row 1, column 1; with maximize, -Infinity marks a forbidden pair/,
    );
    expectClean(() => linearSumAssignment(new Float64Array([1, NaN]), { shape: [2, 1] }), InvalidDataError, /NaN at row 1, column 0/);
  });

  test('infeasible matrices', () => {
    expectClean(() => linearSumAssignment([[1, 2], [Infinity, Infinity]]), InvalidDataError, /cost matrix is infeasible.*first 2 rows/);
    expectClean(() => linearSumAssignment([[-Infinity], [-Infinity]], { maximize: true }), InvalidDataError, /infeasible: its forbidden \(-Infinity\) entries/);
  });

  test('ragged, non-numeric and non-matrix costs', () => {
    expectClean(() => linearSumAssignment([[1, 2, 3], [4, 5]]), InvalidDataError, /row 1 of cost has 2 values but row 0 has 3; the cost matrix must be rectangular/);
    expectClean(() => linearSumAssignment([[1, 'a' as never]]), InvalidDataError, /cost\[0\]\[1\] is "a", not a number/);
    expectClean(() => linearSumAssignment([[1, 2], [3, undefined as never]]), InvalidDataError, /cost\[1\]\[1\] is undefined/);
    expectClean(() => linearSumAssignment([1, 2, 3] as never), InvalidDataError, /cost\[0\] is 1, not an array/);
    expectClean(() => linearSumAssignment('cost' as never), InvalidDataError, /cost must be a number\[\]\[\]/);
    expectClean(() => linearSumAssignment(null as never), InvalidDataError, /cost must be a number\[\]\[\].*got null/);
  });

  test('shapes', () => {
    const flat = new Float64Array(6);
    expectClean(() => linearSumAssignment(flat), InvalidParameterError, /Float64Array cost is row-major and needs options.shape/);
    expectClean(() => linearSumAssignment(flat, { shape: [4, 2] }), InvalidDataError, /cost has 6 values but shape \[4, 2\] needs 8/);
    expectClean(() => linearSumAssignment(flat, { shape: [6] as never }), InvalidParameterError, /shape must be \[rows, columns\].*got \[6\]/);
    expectClean(() => linearSumAssignment(flat, { shape: [-2, -3] }), InvalidParameterError, /non-negative integers/);
    expectClean(() => linearSumAssignment(flat, { shape: [1.5, 4] }), InvalidParameterError, /shape must be/);
    expectClean(() => linearSumAssignment([[1, 2], [3, 4]], { shape: [2, 3] }), InvalidDataError, /cost is 2 x 2 but options.shape says \[2, 3\]/);
  });

  test('options', () => {
    expectClean(() => linearSumAssignment([[1]], { maximize: 'yes' as never }), InvalidParameterError, /maximize must be true or false, got "yes"/);
    expectClean(() => linearSumAssignment([[1]], { maximize: 1 as never }), InvalidParameterError, /maximize must be true or false/);
    expectClean(() => linearSumAssignment([[1]], 'max' as never), InvalidParameterError, /options must be an object/);
  });
});

test('a cost whose getter grows WASM memory while it is read (a fedmix call inside) is an InvalidDataError, not garbage solved', () => {
  // the cost is written straight into WASM memory: a growth mid-read detaches the view written to
  const grow = () => {
    const bytes = wasm().memory.buffer.byteLength + 2 ** 20;
    const p = wasm().fm_alloc(bytes) >>> 0;
    expect(p).not.toBe(0);
    wasm().fm_free(p, bytes);
  };
  const cost = [
    [4, 1, 3],
    [2, 0, 5],
    [3, 2, 2],
  ];
  const hostile = cost.map((row, i) => (i === 1 ? new Proxy(row, { get: (t, k) => (k === '0' && grow(), Reflect.get(t, k)) }) : row));
  expectClean(() => linearSumAssignment(hostile), InvalidDataError, /grew WASM memory while it was read/);
  expect(linearSumAssignment(cost).cost).toBe(5);
});

describe('a cost already in WASM memory (AssignmentCost)', () => {
  test('solves as the Float64Array does, in every direction, without copying or changing it', () => {
    const u = uniform(2027);
    for (const [nr, nc] of [[40, 30], [30, 40], [25, 25]] as const) {
      const flat = Float64Array.from({ length: nr * nc }, () => (u() < 0.05 ? Infinity : u() * 10 - 2));
      const before = wasm().fm_heap_in_use();
      const resident = new AssignmentCost(nr, nc);
      expect(Array.from(resident.values)).toEqual(new Array(nr * nc).fill(0));
      resident.values.set(flat);
      for (const maximize of [false, true]) {
        const cost = maximize ? flat.map((x) => (x === Infinity ? -Infinity : x)) : flat;
        if (maximize) resident.values.set(cost);
        expect(linearSumAssignment(resident, { maximize })).toEqual(linearSumAssignment(cost, { maximize, shape: [nr, nc] }));
        expect(linearSumAssignment(resident, { maximize, shape: [nr, nc] }).cost).toBe(linearSumAssignment(cost, { maximize, shape: [nr, nc] }).cost);
        expect(resident.values).toEqual(cost); // the core negates and transposes a copy
      }
      // change entries in place and solve again
      const view = resident.values;
      view.set(flat);
      view[0] = -1000;
      const again = linearSumAssignment(resident);
      expect(again.rowInd[0]).toBe(0);
      expect(again.colInd[0]).toBe(0);
      resident.dispose();
      expect(resident.disposed).toBe(true);
      expect(wasm().fm_heap_in_use()).toBe(before);
    }
    const empty = new AssignmentCost(0, 3);
    expect(linearSumAssignment(empty)).toEqual({ rowInd: new Int32Array(0), colInd: new Int32Array(0), cost: 0 });
    empty.dispose();
  });

  test('bad input is a typed error, not a trap', () => {
    const cost = new AssignmentCost(2, 2);
    cost.values.set([1, 2, NaN, 4]);
    expectClean(() => linearSumAssignment(cost), InvalidDataError, /cost contains NaN at row 1, column 0/);
    cost.values.set([1, 2, Infinity, Infinity]);
    expectClean(() => linearSumAssignment(cost), InvalidDataError, /infeasible/);
    expectClean(() => linearSumAssignment(cost, { shape: [1, 4] }), InvalidDataError, /cost is 2 x 2 but options.shape says \[1, 4\]/);
    expectClean(() => linearSumAssignment(cost, { maximize: 'yes' as never }), InvalidParameterError, /maximize must be true or false/);
    cost.dispose();
    cost.dispose(); // twice is harmless
    expectClean(() => linearSumAssignment(cost), NotFittedError, /this assignment cost was disposed; make a new AssignmentCost/);
    expectClean(() => cost.values, NotFittedError, /disposed/);
    expectClean(() => new AssignmentCost(-1, 2), InvalidParameterError, /nRows must be/);
    expectClean(() => new AssignmentCost(2, 1.5), InvalidParameterError, /nCols must be/);
    expectClean(() => new AssignmentCost(2 ** 20, 2 ** 20), InvalidParameterError, /cost matrix has \d+ entries; at most/);
    // something shaped like one, not made by the constructor: judged as a plain cost
    expectClean(() => linearSumAssignment({ nRows: 2, nCols: 2, values: new Float64Array(4) } as never), InvalidDataError, /cost must be a number\[\]\[\]/);
  });
});
