/**
 * Bad input: each case raises a typed FedmixError whose message says what to
 * change, leaves nothing allocated in WASM, and the instance keeps working.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  DemClient,
  FedDistrClient,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidParameterError,
  KMeans,
  LocalDetector,
  Matrix,
  MinMaxScaler,
  NotFittedError,
  PCA,
  StandardScaler,
  DisposedError,
  NumericalError,
  selectGaussianMixture,
  associate,
  distributedEM,
  fedAvg,
  fedDistr,
  fedGEM,
  fedGenGMM,
  FedGEMServer,
  InProcessTransport,
  LIMITS,
} from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { blobs, expectClean } from './helpers.js';

const good = blobs(200, 3, 2, 1);

function withNonFinite(value: number, row: number, col: number): Matrix {
  const m = new Matrix(good.data.slice(), good.nRows, good.nCols);
  m.data[col * m.nRows + row] = value;
  return m;
}

beforeAll(async () => {
  await init();
});

describe('GaussianMixture.fit', () => {
  test.each([
    ['NaN', NaN, 3, 1],
    ['+Infinity', Infinity, 0, 0],
    ['-Infinity', -Infinity, 199, 2],
  ])('%s in X names the cell', (_name, v, row, col) => {
    expectClean(() => new GaussianMixture({ nComponents: 2 }).fit(withNonFinite(v, row, col)), InvalidDataError, new RegExp(`row ${row}, column ${col}`));
  });

  test('empty matrix', () => {
    expectClean(() => new GaussianMixture().fit(Matrix.zeros(0, 3)), InvalidDataError, /empty/);
    expectClean(() => new GaussianMixture().fit([]), InvalidDataError, /empty/);
    expectClean(() => new GaussianMixture().fit(Matrix.zeros(5, 0)), InvalidDataError, /empty/);
  });

  test('a single row', () => {
    expectClean(() => new GaussianMixture().fit([[1, 2]]), InvalidDataError, /at least 2/);
  });

  test('fewer samples than components', () => {
    expectClean(() => new GaussianMixture({ nComponents: 5 }).fit([[1], [2], [3]]), InvalidDataError, /3 rows but nComponents = 5.*lower nComponents/);
  });

  test('constant data: fewer distinct rows than components', () => {
    const constant = Matrix.fromRows(Array.from({ length: 50 }, () => [1, 2, 3]));
    expectClean(() => new GaussianMixture({ nComponents: 2 }).fit(constant), InvalidDataError, /only 1 distinct row.*lower nComponents to at most 1/);
    // one component fits constant data through regCovar, like scikit-learn
    const gm = new GaussianMixture({ nComponents: 1, covarianceType: 'diag' }).fit(constant);
    expect(Array.from(gm.covariances)).toEqual([1e-6, 1e-6, 1e-6]);
    gm.dispose();
    expectClean(() => new GaussianMixture({ nComponents: 1, regCovar: 0 }).fit(constant), NumericalError, /increase regCovar/);
  });

  test('zero-variance feature: regCovar keeps it positive definite; without it the fit fails clearly', () => {
    const cols = [good.column(0), good.column(1), new Float64Array(good.nRows).fill(7)];
    const X = Matrix.fromColumns(cols);
    for (const covarianceType of ['full', 'tied', 'diag', 'spherical'] as const) {
      const gm = new GaussianMixture({ nComponents: 2, covarianceType, seed: 1 }).fit(X);
      expect(Number.isFinite(gm.lowerBound)).toBe(true);
      gm.dispose();
    }
    for (const covarianceType of ['full', 'tied', 'diag'] as const) {
      expectClean(() => new GaussianMixture({ nComponents: 2, covarianceType, regCovar: 0, seed: 1 }).fit(X), NumericalError, /ill-defined covariance.*increase regCovar/);
    }
  });

  test('options out of range', () => {
    expectClean(() => new GaussianMixture({ nComponents: 0 }), InvalidParameterError, /nComponents must be an integer in \[1, 65536\], got 0/);
    expectClean(() => new GaussianMixture({ nComponents: 1.5 }), InvalidParameterError, /nComponents/);
    expectClean(() => new GaussianMixture({ covarianceType: 'dense' as never }), InvalidParameterError, /covarianceType must be one of 'full', 'tied', 'diag', 'spherical', got "dense"/);
    expectClean(() => new GaussianMixture({ initParams: 'kmeans++' as never }), InvalidParameterError, /initParams/);
    expectClean(() => new GaussianMixture({ tol: -1 }), InvalidParameterError, /tol/);
    expectClean(() => new GaussianMixture({ regCovar: NaN }), InvalidParameterError, /regCovar/);
    expectClean(() => new GaussianMixture({ maxIter: -1 }), InvalidParameterError, /maxIter/);
    expectClean(() => new GaussianMixture({ nInit: 0 }), InvalidParameterError, /nInit/);
    expectClean(() => new GaussianMixture({ seed: -3 }), InvalidParameterError, /seed/);
  });

  test('initial parameters of the wrong shape or value', () => {
    const fit = (o: ConstructorParameters<typeof GaussianMixture>[0]) => () => new GaussianMixture({ nComponents: 2, ...o }).fit(good);
    expectClean(fit({ weightsInit: [0.5, 0.6] }), InvalidParameterError, /weightsInit.*sum to 1/);
    expectClean(fit({ weightsInit: [1] }), InvalidParameterError, /weightsInit.*expected shape \(2,\)/);
    expectClean(fit({ meansInit: [[0, 0, 0]] }), InvalidParameterError, /meansInit has 3 values; expected shape \(2, 3\)/);
    expectClean(fit({ meansInit: [[0, 0, 0], [1, NaN, 1]] }), InvalidParameterError, /meansInit must be finite/);
    const notPd = [
      [[1, 2, 0], [2, 1, 0], [0, 0, 1]],
      [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    ];
    expectClean(fit({ covarianceType: 'full', precisionsInit: notPd }), InvalidParameterError, /precisionsInit matrix 0.*symmetric, positive-definite/);
    const asym = [[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], notPd[1]!];
    expectClean(fit({ covarianceType: 'full', precisionsInit: asym }), InvalidParameterError, /symmetric/);
    expectClean(fit({ covarianceType: 'diag', precisionsInit: [[1, 1, 0], [1, 1, 1]] }), InvalidParameterError, /positive/);
    expectClean(fit({ covarianceType: 'spherical', precisionsInit: [1, 2, 3] }), InvalidParameterError, /expected shape \(2,\)/);
    expectClean(fit({ covarianceType: 'tied', precisionsInit: [1, 2, 3] }), InvalidParameterError, /expected shape \(3, 3\)/);
  });

  test('rows of different lengths', () => {
    expectClean(() => new GaussianMixture().fit([[1, 2], [3]]), InvalidDataError, /row 1 has 1 values but row 0 has 2/);
  });
});

describe('a fitted GaussianMixture', () => {
  test('wrong feature count at predict time', () => {
    const gm = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(good);
    const narrow = [[1, 2]];
    expectClean(() => gm.predict(narrow), InvalidDataError, /X has 2 features but the model was fitted with 3/);
    expectClean(() => gm.scoreSamples(narrow), InvalidDataError, /fitted with 3/);
    expectClean(() => gm.predictProba(narrow), InvalidDataError, /fitted with 3/);
    expectClean(() => gm.score([[1, NaN, 2]]), InvalidDataError, /NaN at row 0, column 1/);
    expectClean(() => gm.sample(0), InvalidParameterError, /n must be an integer in \[1, /);
    expect(gm.predict(good).length).toBe(200);
    gm.dispose();
  });

  test('use before fit and after dispose', () => {
    const gm = new GaussianMixture();
    expectClean(() => gm.predict(good), NotFittedError, /not fitted yet; call fit/);
    expectClean(() => gm.weights, NotFittedError, /not fitted/);
    gm.fit(good);
    gm.dispose();
    gm.dispose(); // twice is harmless
    // after dispose() it says so (a DisposedError is a NotFittedError)
    expectClean(() => gm.score(good), DisposedError, /GaussianMixture was disposed/);
    expect(gm.isFitted).toBe(false);
  });

  test('malformed JSON', () => {
    const gm = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(good);
    const json = gm.toJSON();
    gm.dispose();
    expectClean(() => GaussianMixture.fromJSON({ ...json, format: 'other' as never }), InvalidParameterError, /format/);
    expectClean(() => GaussianMixture.fromJSON({ ...json, version: 2 as never }), InvalidParameterError, /version 2/);
    expectClean(() => GaussianMixture.fromJSON({ ...json, weights: [0.2, 0.2] }), InvalidParameterError, /weights must sum to 1/);
    expectClean(() => GaussianMixture.fromJSON({ ...json, means: [1, 2] }), InvalidParameterError, /means has 2 values; expected 6/);
    const pc = json.precisionsCholesky.slice();
    pc[0] = -1;
    expectClean(() => GaussianMixture.fromJSON({ ...json, precisionsCholesky: pc }), InvalidParameterError, /positive diagonal/);
    expectClean(() => GaussianMixture.fromJSON('{"format":"fedmix.GaussianMixture","version":1,"covarianceType":"full","nComponents":0}'), InvalidParameterError, /nComponents/);
  });
});

describe('KMeans and selection', () => {
  test('KMeans bad input', () => {
    expectClean(() => new KMeans({ nClusters: 0 }), InvalidParameterError, /nClusters/);
    expectClean(() => new KMeans({ init: 'foo' as never }), InvalidParameterError, /init must be/);
    expectClean(() => new KMeans({ nClusters: 2, init: [1, 2, 3] }).fit(good), InvalidParameterError, /init centers have 3 values/);
    expectClean(() => new KMeans({ nClusters: 2 }).fit(withNonFinite(NaN, 0, 0)), InvalidDataError, /NaN at row 0, column 0/);
    expectClean(() => new KMeans({ nClusters: 300 }).fit(good), InvalidDataError, /200 rows but nClusters = 300/);
    const km = new KMeans({ nClusters: 2, seed: 0 }).fit(good);
    expectClean(() => km.predict([[1]]), InvalidDataError, /1 features but this KMeans was fitted with 3/);
  });

  test('selectGaussianMixture bad options', () => {
    expectClean(() => selectGaussianMixture(good, { kMin: 3, kMax: 2 }), InvalidParameterError, /kMax must be an integer in \[3, 65536\]/);
    expectClean(() => selectGaussianMixture(good, { kMax: 2, criterion: 'mdl' as never }), InvalidParameterError, /criterion/);
    expectClean(() => selectGaussianMixture(good, { kMax: 2, covarianceTypes: [] }), InvalidParameterError, /at least one/);
    expectClean(() => selectGaussianMixture([[1, 2], [1, 2], [1, 2]], { kMin: 2, kMax: 3 }), InvalidDataError, /distinct/);
  });
});

describe('a revoked Proxy', () => {
  // Array.isArray throws a TypeError on a revoked Proxy; found by test/hostile-api.test.ts, seed 7 at 6000 runs
  const revoked = (): never => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy as never;
  };
  const saved = (): [string, (json: never) => unknown, Record<string, unknown>][] => {
    const X = blobs(60, 3, 2, 5);
    const km = new KMeans({ nClusters: 2, seed: 1 }).fit(X);
    const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(X);
    const out: [string, (json: never) => unknown, Record<string, unknown>][] = [
      ['StandardScaler', StandardScaler.fromJSON, new StandardScaler().fit(X).toJSON() as never],
      ['MinMaxScaler', MinMaxScaler.fromJSON, new MinMaxScaler().fit(X).toJSON() as never],
      ['PCA', PCA.fromJSON, new PCA({ nComponents: 2 }).fit(X).toJSON() as never],
      ['KMeans', KMeans.fromJSON, km.toJSON() as never],
      ['GaussianMixture', GaussianMixture.fromJSON, gm.toJSON() as never],
    ];
    gm.dispose();
    return out;
  };

  test('as a saved model, or as any field of one, is an InvalidParameterError from fromJSON', () => {
    for (const [name, fromJSON, json] of saved()) {
      expectClean(() => fromJSON(revoked()), InvalidParameterError, /could not be read/);
      const fields = Object.keys(json).filter((k) => Array.isArray(json[k]));
      expect(fields.length, `${name} saves arrays`).toBeGreaterThan(0);
      for (const key of fields) expectClean(() => fromJSON({ ...json, [key]: revoked() } as never), InvalidParameterError, new RegExp(`${key}.* could not be read`));
    }
  });

  test('as data is an InvalidDataError', () => {
    expectClean(() => Matrix.from(revoked()), InvalidDataError, /X could not be read/);
    expectClean(() => new KMeans({ nClusters: 2 }).fit(revoked()), InvalidDataError, /could not be read/);
  });
});

test('a Matrix whose buffer was transferred is an InvalidDataError wherever a matrix is taken', () => {
  // found by test/hostile-api.test.ts (seeds 3 and 10 at 6000 runs: FedDistrClient, DemClient), where intact() had let one through
  const detached = () => {
    const m = Matrix.zeros(4, 2);
    structuredClone(m.data.buffer, { transfer: [m.data.buffer] });
    return m;
  };
  const message = /ArrayBuffer was transferred \(detached\)/;
  expectClean(() => detached().intact(), InvalidDataError, message);
  expectClean(() => new FedDistrClient('0', detached(), { labels: [0, 1, 0, 1] }), InvalidDataError, message);
  expectClean(() => new DemClient('0', detached()), InvalidDataError, message);
  expectClean(() => new LocalDetector({ kind: 'gmm' }).fit(detached()), InvalidDataError, message);
  expectClean(() => new KMeans({ nClusters: 2 }).fit(detached()), InvalidDataError, message);
});

test('1,000 fit/dispose cycles leave WASM memory flat', () => {
  const w = wasm();
  const small = blobs(60, 2, 2, 3);
  const cycle = (i: number) => {
    const gm = new GaussianMixture({ nComponents: 2, covarianceType: (['full', 'tied', 'diag', 'spherical'] as const)[i % 4], seed: i }).fit(small);
    gm.scoreSamples(small);
    gm.sample(10);
    gm.dispose();
  };
  for (let i = 0; i < 20; i++) cycle(i); // warm the allocator
  const heap = w.fm_heap_in_use();
  const pages = w.memory.buffer.byteLength;
  for (let i = 0; i < 1000; i++) cycle(i);
  expect(w.fm_heap_in_use()).toBe(heap);
  expect(w.memory.buffer.byteLength).toBe(pages);
});

test('a client list longer than LIMITS.clients is refused before any client is made (hostile seed 17: a sparse array of length 1e8 took minutes and gigabytes)', () => {
  const huge: unknown[] = [];
  huge.length = 1e8;
  const net = { sizes: [2, 2], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse' } as const;
  const calls: Array<[string, () => unknown]> = [
    ['fedAvg', () => fedAvg(huge as never, { network: net })],
    ['fedGenGMM', () => fedGenGMM(huge as never, { client: {}, server: {} })],
    ['fedGEM', () => fedGEM(huge as never, { client: { nComponents: 2, variance: 1 } })],
    ['distributedEM', () => distributedEM(huge as never, { nComponents: 2 })],
    ['associate', () => associate(huge as never, {})],
    ['fedDistr', () => fedDistr(huge as never, {})],
    ['InProcessTransport', () => new InProcessTransport(huge as never)],
  ];
  for (const [name, call] of calls) {
    expect(call, name).toThrow(InvalidParameterError);
    expect(call, name).toThrow(String(LIMITS.clients));
  }
});

test('a deeply nested array as a number option is an InvalidParameterError, not a stack overflow from its coercion (hostile seed 22)', () => {
  let deep: unknown = [];
  for (let i = 0; i < 10_000; i++) deep = [deep];
  expect(() => new FedGEMServer({ nFeatures: 2, rounds: 2, phi: [0.5, 1], phiTolerance: deep as number })).toThrow(/phi tolerance must be a finite number/);
});
