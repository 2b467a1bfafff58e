/**
 * OneClassSVM beyond parity (test/ocsvm-parity.test.ts): the dual solution's
 * constraints and optimality as a property over random data, the relations
 * between its outputs, JSON round trips, and bad input (typed errors, nothing
 * leaked, the instance usable after).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { DisposedError, init, InvalidDataError, InvalidParameterError, Matrix, NotFittedError, OneClassSVM, type OneClassSVMJSON } from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { blobs, expectClean, fromRowMajor } from './helpers.js';

beforeAll(async () => {
  await init();
});

function kernel(X: Matrix, i: number, Y: Matrix, k: number, kind: 'rbf' | 'linear', gamma: number): number {
  let s = 0;
  for (let j = 0; j < X.nCols; j++) {
    const a = X.get(i, j);
    const b = Y.get(k, j);
    s += kind === 'rbf' ? (a - b) ** 2 : a * b;
  }
  return kind === 'rbf' ? Math.exp(-gamma * s) : s;
}

/**
 * The dual's box and sum constraints, and optimality within tol: with G = Qa,
 * max over a_t < 1 of -G_t plus max over a_t > 0 of G_t below tol (libsvm's
 * stopping rule), the objective 1/2 a'Qa as reported, and the offset where
 * the conditions put it. The solver's kernel values are f32 (as libsvm's), so
 * the checks allow 1e-6 of sum_s a_s max|Q|.
 */
function checkDual(m: OneClassSVM, X: Matrix, nu: number, tol: number, kind: 'rbf' | 'linear'): void {
  const n = X.nRows;
  const alpha = new Float64Array(n);
  const support = m.support;
  const coef = m.dualCoef;
  support.forEach((i, k) => (alpha[i] = coef[k]!));
  for (const a of coef) {
    expect(a).toBeGreaterThan(0);
    expect(a).toBeLessThanOrEqual(1);
  }
  const sum = alpha.reduce((s, a) => s + a, 0);
  expect(Math.abs(sum - nu * n)).toBeLessThan(1e-9 * n);
  const gamma = m.effectiveGamma;
  let qmax = 0;
  const g = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    for (let s = 0; s < n; s++) {
      const q = kernel(X, t, X, s, kind, gamma);
      qmax = Math.max(qmax, Math.abs(q));
      g[t]! += alpha[s]! * q;
    }
  }
  const slack = 1e-6 * sum * qmax;
  let up = -Infinity;
  let low = -Infinity;
  for (let t = 0; t < n; t++) {
    if (alpha[t]! < 1) up = Math.max(up, -g[t]!);
    if (alpha[t]! > 0) low = Math.max(low, g[t]!);
  }
  expect(up + low).toBeLessThan(tol + slack);
  const objective = 0.5 * alpha.reduce((s, a, t) => s + a * g[t]!, 0);
  expect(Math.abs(m.objective - objective)).toBeLessThanOrEqual(1e-6 * Math.abs(objective) + slack * sum);
  expect(m.offset).toBeGreaterThanOrEqual(low - tol - slack);
  if (up > -Infinity) expect(m.offset).toBeLessThanOrEqual(-up + tol + slack);
}

describe('the dual solution', () => {
  test('satisfies the box and sum constraints and KKT within tol (property)', () => {
    const data = fc
      .record({
        n: fc.integer({ min: 1, max: 40 }),
        d: fc.integer({ min: 1, max: 5 }),
        seed: fc.integer({ min: 1, max: 1e6 }),
        nu: fc.double({ min: 0.01, max: 1, noNaN: true }),
        gamma: fc.oneof(fc.constant<'scale'>('scale'), fc.constant<'auto'>('auto'), fc.double({ min: 0.01, max: 20, noNaN: true })),
        kernel: fc.constantFrom<'rbf' | 'linear'>('rbf', 'rbf', 'linear'),
        shrinking: fc.boolean(),
        duplicates: fc.boolean(),
      })
      .map((c) => {
        const X = blobs(c.n, c.d, 3, c.seed);
        // repeated rows make ties in the gradient
        if (c.duplicates) for (let i = 1; i < c.n; i += 3) for (let j = 0; j < c.d; j++) X.data[j * c.n + i] = X.data[j * c.n + i - 1]!;
        return { ...c, X };
      });
    fc.assert(
      fc.property(data, ({ X, nu, gamma, kernel: kind, shrinking }) => {
        const tol = 1e-3;
        const m = new OneClassSVM({ kernel: kind, gamma, nu, shrinking, tol }).fit(X);
        try {
          expect(m.converged).toBe(true);
          checkDual(m, X, nu, tol, kind);
          // at least floor(nu n) support vectors (those at the bound alone make that many)
          expect(m.nSupport).toBeGreaterThanOrEqual(Math.floor(nu * X.nRows - 1e-9));
        } finally {
          m.dispose();
        }
      }),
      { numRuns: 60, seed: 13 },
    );
  });

  test('a tighter tol reaches the same optimum, and shrinking changes nothing but speed', () => {
    const X = blobs(150, 4, 3, 5);
    const a = new OneClassSVM({ nu: 0.2, gamma: 2 }).fit(X);
    const b = new OneClassSVM({ nu: 0.2, gamma: 2, tol: 1e-9 }).fit(X);
    const c = new OneClassSVM({ nu: 0.2, gamma: 2, shrinking: false }).fit(X);
    checkDual(b, X, 0.2, 1e-6, 'rbf');
    expect(Math.abs(a.objective - b.objective) / b.objective).toBeLessThan(1e-4);
    expect(b.objective).toBeLessThanOrEqual(a.objective * (1 + 1e-12));
    expect(Math.abs(a.objective - c.objective) / c.objective).toBeLessThan(1e-9);
    for (const m of [a, b, c]) m.dispose();
  });
});

describe('OneClassSVM', () => {
  const X = blobs(120, 3, 2, 7);

  test('outputs relate as scikit-learn states', () => {
    const m = new OneClassSVM({ nu: 0.25 }).fit(X);
    const dec = m.decisionFunction(X);
    const score = m.scoreSamples(X);
    const pred = m.predict(X);
    for (let i = 0; i < X.nRows; i++) {
      expect(score[i]).toBe(dec[i]! + m.offset);
      expect(pred[i]).toBe(dec[i]! > 0 ? 1 : -1);
    }
    expect(Array.from(m.fitPredict(X))).toEqual(Array.from(pred));
    // decision values by definition
    const sv = m.supportVectors;
    const coef = m.dualCoef;
    for (const i of [0, 17, 119]) {
      let s = 0;
      for (let k = 0; k < sv.nRows; k++) s += coef[k]! * kernel(sv, k, X, i, 'rbf', m.effectiveGamma);
      expect(Math.abs(dec[i]! - (s - m.offset))).toBeLessThan(1e-12 * Math.max(1, s));
    }
    expect(sv.nRows).toBe(m.nSupport);
    expect(Array.from(m.support).every((r, k) => sv.row(k).every((v, j) => v === X.get(r, j)))).toBe(true);
    // Schölkopf's nu property: at most nu of the rows outside, at least nu support vectors
    expect(pred.filter((p) => p < 0).length).toBeLessThanOrEqual(Math.ceil(0.25 * 120) + 1);
    expect(m.nSupport).toBeGreaterThanOrEqual(30);
    // gamma 'scale' is 1 / (d Var X) over every value
    const mean = X.data.reduce((a, v) => a + v, 0) / X.data.length;
    const variance = X.data.reduce((a, v) => a + (v - mean) ** 2, 0) / X.data.length;
    expect(m.effectiveGamma).toBeCloseTo(1 / (3 * variance), 12);
    expect(new OneClassSVM({ gamma: 'auto' }).fit(X).effectiveGamma).toBe(1 / 3);
    m.dispose();
  });

  test('nu = 1, one row, constant rows and an iteration limit', () => {
    const all = new OneClassSVM({ nu: 1 }).fit(X);
    expect(all.nSupport).toBe(120);
    expect(Number.isFinite(all.offset)).toBe(true);
    // every row on or outside the boundary (up to the rounding of the solver's f32 kernel values)
    expect(all.decisionFunction(X).every((v) => v <= 1e-6 * all.offset)).toBe(true);
    const one = new OneClassSVM().fit([[1, 2]]);
    expect([one.nSupport, one.offset, Array.from(one.dualCoef)]).toEqual([1, 0.5, [0.5]]);
    const constant = new OneClassSVM({ nu: 0.3 }).fit(Matrix.fromRows(Array.from({ length: 10 }, () => [4, 4])));
    expect(constant.effectiveGamma).toBe(1);
    const limited = new OneClassSVM({ gamma: 5, maxIter: 3 }).fit(X);
    expect([limited.nIter, limited.converged]).toEqual([3, false]);
    const none = new OneClassSVM({ maxIter: 0 }).fit(X);
    expect(Array.from(none.support)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const m of [all, one, constant, limited, none]) m.dispose();
  });

  test('toJSON / fromJSON round trip, as an object and as text', () => {
    const m = new OneClassSVM({ nu: 0.3, gamma: 0.7, cacheSize: 10 }).fit(X);
    const json = m.toJSON();
    expect(json.supportVectors.length).toBe(m.nSupport * 3);
    const heap = wasm().fm_heap_in_use();
    for (const back of [OneClassSVM.fromJSON(json), OneClassSVM.fromJSON(JSON.stringify(json))]) {
      expect(Array.from(back.decisionFunction(X))).toEqual(Array.from(m.decisionFunction(X)));
      expect([back.nIter, back.objective, back.offset, back.nSupport, back.converged, back.effectiveGamma]).toEqual([m.nIter, m.objective, m.offset, m.nSupport, m.converged, m.effectiveGamma]);
      expect(Array.from(back.support)).toEqual(Array.from(m.support));
      expect(back.options).toEqual(m.options);
      back.dispose();
    }
    expect(wasm().fm_heap_in_use()).toBe(heap);
    // a model from bare parts: no objective, no training rows
    const bare: OneClassSVMJSON = { ...json, support: null, objective: null, options: undefined };
    const b = OneClassSVM.fromJSON(bare);
    expect(Number.isNaN(b.objective)).toBe(true);
    expect(b.support.length).toBe(0);
    expect(b.toJSON().support).toBeNull();
    expect(Array.from(b.predict(X))).toEqual(Array.from(m.predict(X)));
    b.dispose();
    m.dispose();
  });

  test('a linear kernel', () => {
    const m = new OneClassSVM({ kernel: 'linear', nu: 0.5 }).fit(X);
    checkDual(m, X, 0.5, 1e-3, 'linear');
    const back = OneClassSVM.fromJSON(m.toJSON());
    expect(Array.from(back.scoreSamples(X))).toEqual(Array.from(m.scoreSamples(X)));
    m.dispose();
    back.dispose();
  });

  test('many rows scored in blocks match row by row', () => {
    const big = blobs(1001, 7, 3, 3);
    const m = new OneClassSVM({ nu: 0.3 }).fit(big.selectRows(Array.from({ length: 300 }, (_, i) => i)));
    const all = m.decisionFunction(big);
    for (const i of [0, 15, 16, 17, 500, 1000]) expect(m.decisionFunction(big.selectRows([i]))[0]).toBe(all[i]);
    m.dispose();
  });
});

describe('bad input', () => {
  const X = blobs(50, 3, 2, 2);

  test('options out of range are InvalidParameterErrors', () => {
    const bad: [object, RegExp][] = [
      [{ nu: 0 }, /nu must be a number in \(0, 1\]/],
      [{ nu: -0.5 }, /nu/],
      [{ nu: 1.5 }, /nu/],
      [{ nu: NaN }, /nu/],
      [{ nu: '0.5' }, /nu/],
      [{ gamma: 0 }, /gamma must be 'scale', 'auto' or a finite number > 0/],
      [{ gamma: -1 }, /gamma/],
      [{ gamma: Infinity }, /gamma/],
      [{ gamma: 'large' }, /gamma/],
      [{ kernel: 'poly' }, /kernel must be one of 'rbf', 'linear'/],
      [{ tol: 0 }, /tol/],
      [{ cacheSize: 0 }, /cacheSize/],
      [{ cacheSize: -1 }, /cacheSize/],
      [{ maxIter: -2 }, /maxIter must be an integer in \[-1, 1000000\]/],
      [{ maxIter: 1.5 }, /maxIter/],
      [{ shrinking: 1 }, /shrinking/],
    ];
    for (const [o, hint] of bad) expectClean(() => new OneClassSVM(o as never), InvalidParameterError, hint);
  });

  test('bad rows are InvalidDataErrors; nothing leaks and the model keeps working', () => {
    const m = new OneClassSVM({ nu: 0.2 }).fit(X);
    const before = Array.from(m.decisionFunction(X));
    const withNaN = X.toRows();
    withNaN[7]![2] = NaN;
    const withInf = X.toRows();
    withInf[3]![0] = -Infinity;
    const huge = X.toRows();
    huge[5]![1] = 1e200;
    const cases: [() => unknown, RegExp][] = [
      [() => new OneClassSVM().fit(withNaN), /X contains NaN at row 7, column 2/],
      [() => new OneClassSVM().fit(withInf), /row 3, column 0/],
      [() => new OneClassSVM().fit(huge), /row 5 of X is too large/],
      [() => new OneClassSVM().fit(Matrix.zeros(0, 3)), /X is empty/],
      [() => new OneClassSVM().fit(Matrix.zeros(4, 0)), /X is empty/],
      [() => m.fit(withNaN), /NaN/],
      [() => m.decisionFunction(withNaN), /NaN at row 7/],
      [() => m.predict(huge), /too large/],
      [() => m.scoreSamples(blobs(5, 4, 2, 1)), /X has 4 features but the model was fitted with 3/],
      [() => m.decisionFunction(Matrix.zeros(0, 3)), /empty/],
    ];
    for (const [fn, hint] of cases) expectClean(fn, InvalidDataError, hint);
    // the failed refit kept the model
    expect(Array.from(m.decisionFunction(X))).toEqual(before);
    m.dispose();
  });

  test('unfitted, disposed and malformed JSON', () => {
    const m = new OneClassSVM();
    expectClean(() => m.predict(X), NotFittedError, /not fitted yet/);
    expectClean(() => m.offset, NotFittedError, /not fitted/);
    m.fit(X).dispose();
    expectClean(() => m.decisionFunction(X), DisposedError, /OneClassSVM was disposed/);
    // a fit after dispose() makes it a fitted model again, with the same result as a new one
    const again = Array.from(m.fit(X).decisionFunction(X));
    const fresh = new OneClassSVM().fit(X);
    expect(again).toEqual(Array.from(fresh.decisionFunction(X)));
    fresh.dispose();
    m.dispose();
    const good = new OneClassSVM({ nu: 0.3 }).fit(X);
    const json = good.toJSON();
    good.dispose();
    const broken: [unknown, RegExp][] = [
      ['{', /not JSON/],
      // an array is not a saved model, whatever its items (the envelope every model's fromJSON reads)
      [[json], /not a fedmix OneClassSVM JSON: expected an object with format "fedmix.OneClassSVM", got/],
      [null, /not a fedmix OneClassSVM JSON: expected an object/],
      [{ ...json, format: 'fedmix.GaussianMixture' }, /format must be "fedmix.OneClassSVM"/],
      [{ ...json, version: 2 }, /version/],
      [{ ...json, kernel: 'poly' }, /kernel/],
      [{ ...json, gamma: 0 }, /gamma/],
      [{ ...json, nu: 2 }, /nu/],
      [{ ...json, nFeatures: 4 }, /supportVectors have \d+ values/],
      [{ ...json, supportVectors: json.supportVectors.slice(1) }, /supportVectors have/],
      [{ ...json, supportVectors: json.supportVectors.map((v, i) => (i === 4 ? NaN : v)) }, /supportVectors hold NaN at row 1, column 1/],
      [{ ...json, dualCoef: json.dualCoef.map((v, i) => (i === 2 ? Infinity : v)) }, /dualCoef\[2\] is Infinity/],
      [{ ...json, dualCoef: [] }, /at least one/],
      [{ ...json, offset: NaN }, /offset/],
      [{ ...json, support: [1, 2] }, /support has 2 indices/],
      [{ ...json, support: json.support!.map((v) => -v - 1) }, /support\[0\]/],
      [{ ...json, nIter: 2 ** 32 + 2 }, /nIter/],
      [{ ...json, options: { tol: -1 } }, /tol/],
    ];
    for (const [j, hint] of broken) expect(() => expectClean(() => OneClassSVM.fromJSON(j as OneClassSVMJSON), InvalidParameterError, hint), String(hint)).not.toThrow();
  });

  test('a row-major fixture helper round trip (the shape checks of Matrix apply)', () => {
    const m = new OneClassSVM().fit(fromRowMajor([0, 0, 1, 1, 2, 2], 3, 2));
    expect(m.nFeatures).toBe(2);
    m.dispose();
  });
});
