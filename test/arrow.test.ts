/**
 * Arrow in and out with the apache-arrow of the project: tables and vectors are
 * recognised by shape (a Table from another copy of apache-arrow is not an
 * instance of ours), IPC bytes stand for tables, nulls are refused by column
 * or dropped by option, dictionary label columns are labels, and results come
 * back as Arrow. The other versions, 15 to 21, are test/arrow-versions.test.ts.
 */
import { createRequire } from 'node:module';
import * as arrow from 'apache-arrow';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  adjustedRandScore,
  averagePrecision,
  DirichletMultinomialMixture,
  distributedEM,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidParameterError,
  isArrowIPC,
  isArrowTable,
  isArrowVector,
  KMeans,
  Matrix,
  MLPClassifier,
  normalizedError,
  partition,
  partitionToArrow,
  PCA,
  rocAuc,
  toArrowTable,
  toArrowVector,
} from '../ts/index.js';
import { blobs, expectClean } from './helpers.js';

/** A second copy of apache-arrow: its CommonJS build, a separate module graph with its own classes. */
const other = createRequire(import.meta.url)('apache-arrow') as typeof arrow;

const X = blobs(300, 3, 2, 5);
const names = ['a', 'b', 'c'];
/** X as a table of the other copy: a Float64, a Float32 and an Int32 column (values rounded to fit) */
const xs = [X.column(0).slice(), Float32Array.from(X.column(1)), Int32Array.from(X.column(2), (v) => Math.round(v * 1000))];
const exact = Matrix.fromColumns(xs.map((c) => Float64Array.from(c)));
const otherTable = () => new other.Table({ a: other.makeVector(xs[0]!), b: other.makeVector(xs[1]!), c: other.makeVector(xs[2]!) });
const labels = Array.from({ length: 300 }, (_, i) => ['setosa', 'versicolor', 'virginica'][(i * 7) % 3]!);

beforeAll(async () => {
  await init();
});

describe('tables of another copy of apache-arrow', () => {
  test('the other copy really is another: its Table is not an instance of ours, yet it is recognised', () => {
    const t = otherTable();
    expect(t instanceof arrow.Table).toBe(false);
    expect(isArrowTable(t)).toBe(true);
    expect(isArrowVector(t.getChild('a'))).toBe(true);
    expect(isArrowTable(X)).toBe(false);
    expect(isArrowVector([1, 2])).toBe(false);
    expect(Matrix.fromArrow(t).data).toEqual(exact.data);
    expect(Matrix.fromColumns([t.getChild('a')!, t.getChild('b')!, t.getChild('c')!]).data).toEqual(exact.data);
  });

  test('fit(table) and fit(IPC bytes, file and stream) give the model fit(Matrix) gives', () => {
    const ref = new GaussianMixture({ nComponents: 2, seed: 3 }).fit(exact);
    const inputs = [otherTable(), other.tableToIPC(otherTable(), 'file'), other.tableToIPC(otherTable(), 'stream'), other.tableToIPC(otherTable(), 'stream').slice().buffer];
    expect(isArrowIPC(inputs[1])).toBe(true);
    expect(isArrowIPC(inputs[2])).toBe(true);
    for (const input of inputs) {
      const gm = new GaussianMixture({ nComponents: 2, seed: 3 }).fit(input as Uint8Array);
      expect(gm.means).toEqual(ref.means);
      expect(gm.scoreSamples(input as Uint8Array)).toEqual(ref.scoreSamples(exact));
      gm.dispose();
    }
    ref.dispose();
  });

  test('distributedEM([table, ...]) over three clients of other-copy tables and IPC bytes equals the Matrix run', () => {
    const t = otherTable();
    const parts = [t.slice(0, 100), t.slice(100, 220), t.slice(220)];
    const mats = [exact.selectRows(range(0, 100)), exact.selectRows(range(100, 220)), exact.selectRows(range(220, 300))];
    const options = { nComponents: 2, featureRange: [-20000, 20000] as [number, number], seed: 4 };
    const ref = distributedEM(mats, options);
    const viaTables = distributedEM(parts, options);
    const viaBytes = distributedEM([other.tableToIPC(parts[0]!, 'stream'), parts[1]!, other.tableToIPC(parts[2]!, 'file')], options);
    expect(viaTables.model.means).toEqual(ref.model.means);
    expect(viaBytes.model.means).toEqual(ref.model.means);
    for (const r of [ref, viaTables, viaBytes]) r.model.dispose();
  });

  test('Matrix.fromArrow reads chosen columns, a RecordBatch, and Int64, Uint8 and Float16 columns', () => {
    const t = other.tableFromArrays({ big: BigInt64Array.of(1n, -2n, 3n), small: Uint8Array.of(7, 8, 9), half: Float64Array.of(0.5, 1.5, -2) });
    const withHalf = new other.Table({ big: t.getChild('big')!, small: t.getChild('small')!, half: other.vectorFromArray([0.5, 1.5, -2], new other.Float16()) });
    expect(Array.from(Matrix.fromArrow(withHalf).data)).toEqual([1, -2, 3, 7, 8, 9, 0.5, 1.5, -2]);
    expect(Array.from(Matrix.fromArrow(withHalf, { columns: ['half', 'big'] }).data)).toEqual([0.5, 1.5, -2, 1, -2, 3]);
    expect(Matrix.fromArrow(withHalf.batches[0]!).nRows).toBe(3);
    expect(Matrix.fromArrow(new other.Table({ a: other.makeVector(Float64Array.of(1, 2)) }), { columns: [] }).nRows).toBe(2);
  });
});

describe('nulls and bad tables', () => {
  const withNulls = () =>
    new other.Table({
      x: other.vectorFromArray([1, 2, null, 4, 5], new other.Float64()),
      y: other.vectorFromArray([10, null, 30, 40, 50], new other.Int32()),
      z: other.vectorFromArray([0.1, 0.2, 0.3, 0.4, 0.5], new other.Float64()),
    });

  test('a null is an InvalidDataError naming its column and first row, pointing to nulls: drop', () => {
    expectClean(() => Matrix.fromArrow(withNulls()), InvalidDataError, /column "x" has 1 null value\(s\), the first at row 2.*nulls: 'drop'/);
    expectClean(() => Matrix.fromArrow(withNulls(), { columns: ['z', 'y'] }), InvalidDataError, /column "y" has 1 null value\(s\), the first at row 1/);
    expectClean(() => new GaussianMixture({ nComponents: 1 }).fit(withNulls()), InvalidDataError, /column "x" has 1 null/);
    expectClean(() => new GaussianMixture({ nComponents: 1 }).fit(other.tableToIPC(withNulls())), InvalidDataError, /column "x" has 1 null/);
  });

  test("nulls: 'drop' drops the rows with a null in a chosen column, and only those", () => {
    expect(Matrix.fromArrow(withNulls(), { nulls: 'drop' }).toRows()).toEqual([
      [1, 10, 0.1],
      [4, 40, 0.4],
      [5, 50, 0.5],
    ]);
    expect(Matrix.fromArrow(withNulls(), { nulls: 'drop', columns: ['x', 'z'] }).toRows()).toEqual([
      [1, 0.1],
      [2, 0.2],
      [4, 0.4],
      [5, 0.5],
    ]);
    expect(Matrix.fromArrow(withNulls(), { nulls: 'error', columns: ['z'] }).nRows).toBe(5);
    expectClean(() => Matrix.fromArrow(withNulls(), { nulls: 'skip' as 'drop' }), InvalidParameterError, /nulls must be one of 'error', 'drop'/);
  });

  test('strings, unknown columns, bytes that are not IPC and truncated IPC are typed errors', () => {
    const t = new other.Table({ x: other.makeVector(Float64Array.of(1, 2)), s: other.vectorFromArray(['u', 'v']) });
    expectClean(() => Matrix.fromArrow(t), InvalidDataError, /column "s" has Arrow type Dictionary<Int32, Utf8>, not a number type/);
    expectClean(() => Matrix.fromArrow(t, { columns: ['w'] }), InvalidParameterError, /no column "w"; it has "x", "s"/);
    expectClean(() => Matrix.from(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9)), InvalidDataError, /bytes are not Arrow IPC/);
    expectClean(() => Matrix.from(Float64Array.of(1, 2) as never), InvalidDataError, /expected a Matrix/);
    expectClean(() => Matrix.fromArrow(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9)), InvalidDataError, /not Arrow IPC/);
    const bytes = other.tableToIPC(otherTable(), 'file');
    expectClean(() => Matrix.fromArrow(bytes.slice(0, 40)), InvalidDataError, /could not be read as Arrow IPC/);
    expectClean(() => Matrix.fromArrow({ schema: { fields: [] }, numRows: -1, getChild: () => null }), InvalidDataError, /-1 rows/);
  });
});

describe('Arrow vectors as labels and scores', () => {
  test('a dictionary (string) label column partitions as the strings do', () => {
    const dict = other.vectorFromArray(labels, new other.Dictionary(new other.Utf8(), new other.Int32()));
    const utf8 = other.vectorFromArray(labels, new other.Utf8());
    expect(String(dict.type)).toBe('Dictionary<Int32, Utf8>');
    const options = { clients: 4, alpha: 0.5, seed: 2 };
    const ref = partition.dirichlet(labels, options);
    expect(partition.dirichlet(dict, options)).toEqual(ref);
    expect(partition.dirichlet(utf8, options)).toEqual(ref);
    expect(partition.iid(dict, { clients: 3, seed: 1 })).toEqual(partition.iid(labels, { clients: 3, seed: 1 }));
    expect(partition.quantity(dict, { clients: 3, alpha: 1, seed: 1 })).toEqual(partition.quantity(labels, { clients: 3, alpha: 1, seed: 1 }));
    expect(partition.dirichlet(dict, options).classes).toEqual(['setosa', 'versicolor', 'virginica']);
  });

  test('the metrics take Arrow vectors: labels (dictionary, integer, boolean) and scores', () => {
    const dict = other.vectorFromArray(labels, new other.Dictionary(new other.Utf8(), new other.Int32()));
    const codes = labels.map((l) => ['setosa', 'versicolor', 'virginica'].indexOf(l));
    expect(adjustedRandScore(dict, other.makeVector(Int32Array.from(codes)))).toBe(1);
    const y = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const s = Float64Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const ap = averagePrecision(y, s);
    expect(averagePrecision(other.vectorFromArray(y.map(Boolean), new other.Bool()), other.makeVector(s))).toBe(ap);
    expect(rocAuc(other.makeVector(Int8Array.from(y)), other.makeVector(Float32Array.from(s)))).toBeCloseTo(rocAuc(y, Float32Array.from(s)), 12);
    expect(normalizedError(other.makeVector(Float64Array.of(1, 2)), [1, 2])).toBe(0);
  });

  test('an MLPClassifier fits and scores a dictionary label column as the strings', () => {
    const dict = other.vectorFromArray(labels, new other.Dictionary(new other.Utf8(), new other.Int32()));
    const options = { hiddenLayerSizes: [4], maxIter: 5, seed: 1 };
    const a = new MLPClassifier(options).fit(X, dict);
    const b = new MLPClassifier(options).fit(X, labels);
    expect(a.predict(X)).toEqual(b.predict(X));
    expect(a.score(X, dict)).toBe(b.score(X, labels));
    a.dispose();
    b.dispose();
  });

  test('a label vector with a null is an InvalidDataError naming it', () => {
    const v = other.vectorFromArray(['a', null, 'b', 'a'], new other.Dictionary(new other.Utf8(), new other.Int32()));
    expectClean(() => partition.iid(v as never, { clients: 2 }), InvalidDataError, /labels has 1 null value\(s\), the first at row 1/);
    expectClean(() => averagePrecision(other.vectorFromArray([1, null, 0], new other.Int32()) as never, [0.1, 0.2, 0.3]), InvalidDataError, /labels has 1 null/);
  });
});

describe('results as Arrow, built with the apache-arrow of the project', () => {
  test('a GaussianMixture toArrow(): one row per component, weights, means and covariances as fixed-size lists', () => {
    for (const covarianceType of ['full', 'tied', 'diag', 'spherical'] as const) {
      const gm = new GaussianMixture({ nComponents: 2, covarianceType, seed: 1 }).fit(X);
      const t = gm.toArrow();
      expect(t).toBeInstanceOf(arrow.Table);
      expect(t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual([
        'component: Int32',
        'weight: Float64',
        'mean: FixedSizeList[3]<Float64>',
        `covariance: FixedSizeList[${{ full: 9, tied: 9, diag: 3, spherical: 1 }[covarianceType]}]<Float64>`,
      ]);
      expect(Array.from(t.getChild('weight')!.toArray() as Float64Array)).toEqual(Array.from(gm.weights));
      expect(Array.from(t.getChild('mean')!.get(1)!.toArray() as Float64Array)).toEqual(Array.from(gm.means.subarray(3, 6)));
      const cov = t.getChild('covariance')!;
      const w = cov.get(0)!.length;
      const expected = covarianceType === 'tied' ? gm.covariances : gm.covariances.subarray(w, 2 * w);
      expect(Array.from(cov.get(1)!.toArray() as Float64Array)).toEqual(Array.from(expected));
      // what pyarrow or DuckDB get: the same table through IPC
      expect(arrow.tableFromIPC(arrow.tableToIPC(t)).numRows).toBe(2);
      gm.dispose();
    }
  });

  test('KMeans toArrow(): one row per cluster with its center', () => {
    const km = new KMeans({ nClusters: 2, seed: 1 }).fit(X);
    const t = km.toArrow();
    expect(t).toBeInstanceOf(arrow.Table);
    expect(Array.from(t.getChild('cluster')!.toArray() as Int32Array)).toEqual([0, 1]);
    expect(Array.from(t.getChild('center')!.get(1)!.toArray() as Float64Array)).toEqual(Array.from(km.centers.subarray(3, 6)));
  });

  test('PCA and DirichletMultinomialMixture toArrow(): one row per component', () => {
    const pca = new PCA({ nComponents: 2 }).fit(X);
    const t = pca.toArrow();
    expect(t).toBeInstanceOf(arrow.Table);
    expect(t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual(['component: Int32', 'explainedVariance: Float64', 'explainedVarianceRatio: Float64', 'direction: FixedSizeList[3]<Float64>']);
    expect(Array.from(t.getChild('explainedVariance')!.toArray() as Float64Array)).toEqual(Array.from(pca.explainedVariance));
    expect(Array.from(t.getChild('direction')!.get(1)!.toArray() as Float64Array)).toEqual(Array.from(pca.components.subarray(3, 6)));
    const mdm = new DirichletMultinomialMixture({ tau: [0.25, 0.75], alpha: [[1, 2, 3], [3, 2, 1]], pi: [[0.5, 0.5, 0, 0], [0.1, 0.2, 0.3, 0.4]] });
    const m = mdm.toArrow();
    expect(m.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual(['component: Int32', 'tau: Float64', 'alpha: FixedSizeList[3]<Float64>', 'pi: FixedSizeList[4]<Float64>']);
    expect(Array.from(m.getChild('pi')!.get(1)!.toArray() as Float64Array)).toEqual([0.1, 0.2, 0.3, 0.4]);
    expect(Array.from(m.getChild('alpha')!.get(0)!.toArray() as Float64Array)).toEqual([1, 2, 3]);
  });

  test('scores, labels and probabilities side by side with toArrowTable, back to a Matrix unchanged', () => {
    const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(X);
    const score = gm.scoreSamples(X);
    const label = gm.predict(X);
    const proba = gm.predictProba(X);
    const t = toArrowTable({ score, label, proba, name: labels, other: other.makeVector(score) });
    expect(t).toBeInstanceOf(arrow.Table);
    expect(t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual(['score: Float64', 'label: Int32', 'proba_0: Float64', 'proba_1: Float64', 'name: Dictionary<Int32, Utf8>', 'other: Float64']);
    expect(Matrix.fromArrow(t, { columns: ['proba_0', 'proba_1'] }).data).toEqual(proba.data);
    expect(t.getChild('name')!.get(4)).toBe(labels[4]);
    expect(Matrix.fromArrow(X.toArrow(names)).data).toEqual(X.data);
    expect(X.toArrow()).toBeInstanceOf(arrow.Table);
    expectClean(() => toArrowTable({ a: [1, 2], b: [1] }), InvalidParameterError, /column "b" has 1 values, the others 2/);
    expectClean(() => toArrowTable({}), InvalidParameterError, /at least one column/);
    expectClean(() => toArrowTable({ a: [1, 'x'] as never }), InvalidParameterError, /all numbers or all strings/);
    gm.dispose();
  });

  test('a typed array whose buffer was transferred is an InvalidParameterError from toArrowVector and toArrowTable, as is a Matrix given as the columns', () => {
    // found by test/hostile-api.test.ts, seed 9 at 6000 runs: toArrowTable(matrix) took matrix.data as a column and copied it
    const detached = () => {
      const m = Matrix.zeros(4, 2);
      structuredClone(m.data.buffer, { transfer: [m.data.buffer] });
      return m;
    };
    expect(() => toArrowVector(detached().data)).toThrow(/values's ArrayBuffer was transferred/);
    expect(() => toArrowTable({ x: detached().data })).toThrow(InvalidParameterError);
    expect(() => toArrowTable(detached() as never)).toThrow(InvalidParameterError);
    expect(() => toArrowTable({ m: detached() })).toThrow(/transferred/);
  });

  test('toArrowVector keeps the typed array type; codes with classes become the class values', () => {
    expect(String(toArrowVector(Int32Array.of(1, 2)).type)).toBe('Int32');
    expect(String(toArrowVector([0.5, 1]).type)).toBe('Float64');
    const p = partition.dirichlet(labels, { clients: 3, alpha: 1, seed: 1 });
    const v = toArrowVector(Int32Array.of(2, 0, 1), { classes: p.classes });
    expect(v).toBeInstanceOf(arrow.Vector);
    expect(String(v.type)).toBe('Dictionary<Int32, Utf8>');
    expect(v.toArray()).toEqual(['virginica', 'setosa', 'versicolor']);
    expect(Array.from(toArrowVector([1, 0], { classes: [10, 20] }).toArray() as Float64Array)).toEqual([20, 10]);
    expectClean(() => toArrowVector([3], { classes: ['a'] }), InvalidParameterError, /values\[0\] is 3, not a code into the 1 classes/);
  });

  test('partitionToArrow: one row per dealt row, its index and client', () => {
    const p = partition.iid(300, { clients: 4, seed: 1 });
    const t = partitionToArrow(p);
    expect(t).toBeInstanceOf(arrow.Table);
    expect(t.numRows).toBe(300);
    const row = t.getChild('row')!.toArray() as Int32Array;
    const client = t.getChild('client')!.toArray() as Int32Array;
    for (let c = 0; c < 4; c++) expect(Array.from(row.filter((_, i) => client[i] === c))).toEqual(Array.from(p.indices[c]!));
    expectClean(() => partitionToArrow({ indices: [[0, -1]] }), InvalidParameterError, /indices\[0\]\[1\] is -1/);
  });
});

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a }, (_, i) => a + i);
}
