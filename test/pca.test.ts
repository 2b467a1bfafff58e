/**
 * PCA against scikit-learn 1.2.1's PCA(svd_solver='full') on real data
 * (test/fixtures/pca.json from scripts/gen-fixtures.py, rows read from the
 * same CSV files): explained variances within 1e-9 relative, components with
 * scikit-learn's own signs within 1e-8, transforms of held-out rows likewise;
 * properties of the projection; bad input.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { init, InvalidDataError, InvalidParameterError, Matrix, NotFittedError, PCA } from '../ts/index.js';
import { csvToMatrix, parseCsv } from '../ts/data/csv.js';
import { blobs, expectClean, fixture, fromRowMajor, maxAbsoluteError, maxRelativeError } from './helpers.js';

interface Case {
  file: string;
  trainRows: [number, number];
  testRows: [number, number];
  nComponents: number;
  d: number;
  mean: number[];
  components: number[];
  explainedVariance: number[];
  explainedVarianceRatio: number[];
  noiseVariance: number;
  singularValues: number[];
  transformTest: number[];
  transformTrainHead: number[];
}
const { cases } = fixture<{ cases: Case[] }>('pca.json');

const loaded = new Map<string, Matrix>();
function dataset(file: string): { X: Matrix; labels: string[] } {
  const table = parseCsv(readFileSync(fileURLToPath(new URL(`../../shared/datasets/${file}`, import.meta.url)), 'utf8'));
  return { X: csvToMatrix(table, { exclude: ['label'] }).X, labels: table.columns[table.names.indexOf('label')]! };
}
function rows(file: string, [start, end]: [number, number]): Matrix {
  if (!loaded.has(file)) loaded.set(file, dataset(file).X);
  return loaded.get(file)!.selectRows(Int32Array.from({ length: end - start }, (_, i) => start + i));
}

/** A Matrix (column-major) as numpy's row-major ravel(). */
function rowMajor(m: Matrix): number[] {
  return m.toRows().flat();
}

beforeAll(async () => {
  await init();
});

describe('against scikit-learn PCA(svd_solver="full")', () => {
  test.each(cases.map((c) => [`${c.file} rows ${c.trainRows.join('-')}, ${c.d} -> ${c.nComponents}`, c] as const))('%s', (_name, c) => {
    const train = rows(c.file, c.trainRows);
    const pca = new PCA({ nComponents: c.nComponents }).fit(train);
    expect(pca.nFeatures).toBe(c.d);
    expect(maxRelativeError(pca.explainedVariance, c.explainedVariance)).toBeLessThan(1e-9);
    expect(maxRelativeError(pca.explainedVarianceRatio, c.explainedVarianceRatio)).toBeLessThan(1e-9);
    expect(maxRelativeError(pca.mean, c.mean)).toBeLessThan(1e-13);
    // unit vectors with scikit-learn's signs (svd_flip reproduced, not "up to sign")
    expect(maxAbsoluteError(pca.components, c.components)).toBeLessThan(1e-8);
    // scikit-learn's noise variance averages the smallest eigenvalues, which the
    // covariance route gets to eps * largest eigenvalue (absolute)
    expect(Math.abs(pca.noiseVariance - c.noiseVariance)).toBeLessThan(1e-12 * c.explainedVariance[0]! + 1e-9 * c.noiseVariance);
    // the scores: relative to their spread, sqrt(largest variance)
    const scale = Math.sqrt(c.explainedVariance[0]!);
    const test = pca.transform(rows(c.file, c.testRows));
    expect(test.nRows).toBe(c.testRows[1] - c.testRows[0]);
    expect(test.nCols).toBe(c.nComponents);
    expect(maxAbsoluteError(rowMajor(test), c.transformTest) / scale).toBeLessThan(1e-8);
    const head = pca.transform(train.selectRows(Int32Array.from({ length: Math.min(50, train.nRows) }, (_, i) => i)));
    expect(maxAbsoluteError(rowMajor(head), c.transformTrainHead) / scale).toBeLessThan(1e-8);
    // singular values follow: S = sqrt((n - 1) * explained variance)
    const n = c.trainRows[1] - c.trainRows[0];
    expect(maxRelativeError(Array.from(pca.explainedVariance, (v) => Math.sqrt((n - 1) * v)), c.singularValues)).toBeLessThan(1e-9);
  });
});

describe('properties', () => {
  const X = blobs(400, 5, 3, 7);

  test('fitTransform equals fit then transform; scores are centered and uncorrelated with the explained variances', () => {
    const pca = new PCA({ nComponents: 3 });
    const Z = pca.fitTransform(X);
    expect(Array.from(Z.data)).toEqual(Array.from(pca.transform(X).data));
    const ev = pca.explainedVariance;
    for (let r = 0; r < 3; r++) {
      const zr = Z.column(r);
      expect(Math.abs(zr.reduce((s, v) => s + v, 0) / X.nRows)).toBeLessThan(1e-12 * Math.sqrt(ev[0]!));
      for (let q = 0; q < 3; q++) {
        const zq = Z.column(q);
        let cov = 0;
        for (let i = 0; i < X.nRows; i++) cov += zr[i]! * zq[i]!;
        cov /= X.nRows - 1;
        expect(Math.abs(cov - (r === q ? ev[r]! : 0))).toBeLessThan(1e-10 * ev[0]!);
      }
      if (r > 0) expect(ev[r]!).toBeLessThanOrEqual(ev[r - 1]!);
    }
  });

  test('the parameters are copies; a refit replaces them', () => {
    const pca = new PCA({ nComponents: 2 }).fit(X);
    pca.components.fill(0);
    pca.mean.fill(0);
    expect(pca.components.some((v) => v !== 0)).toBe(true);
    const before = pca.explainedVariance;
    pca.fit(X.selectColumns([0, 1, 2]));
    expect(pca.nFeatures).toBe(3);
    expect(pca.explainedVariance).not.toEqual(before);
  });

  test('from nested arrays, as any MatrixLike', () => {
    const rowsX = X.toRows();
    const a = new PCA({ nComponents: 2 }).fit(rowsX).transform(rowsX.slice(0, 10));
    const b = new PCA({ nComponents: 2 }).fit(X).transform(X.selectRows([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
    expect(fromRowMajor(rowMajor(a), 10, 2).data).toEqual(a.data);
  });
});

describe('bad input', () => {
  const X = blobs(50, 4, 2, 3);

  test('nComponents out of range', () => {
    expectClean(() => new PCA({ nComponents: 0 }), InvalidParameterError, /^nComponents must be an integer in \[1, 65536\], got 0$/);
    expectClean(() => new PCA({ nComponents: 2.5 }), InvalidParameterError, /nComponents must be an integer/);
    expectClean(() => new PCA(undefined as never), InvalidParameterError, /nComponents must be an integer in \[1, 65536\], got undefined/);
    expectClean(() => new PCA({ nComponents: 5 }).fit(X), InvalidParameterError, /nComponents = 5 must be between 1 and min\(rows, features\) = min\(50, 4\) = 4; lower nComponents/);
    expectClean(() => new PCA({ nComponents: 3 }).fit(X.selectRows([0, 1])), InvalidParameterError, /min\(2, 4\) = 2/);
  });

  test('NaN, infinity, empty and single-row data', () => {
    const bad = new Matrix(X.data.slice(), X.nRows, X.nCols);
    bad.data[2 * X.nRows + 7] = NaN;
    expectClean(() => new PCA({ nComponents: 2 }).fit(bad), InvalidDataError, /X contains NaN at row 7, column 2/);
    bad.data[2 * X.nRows + 7] = -Infinity;
    expectClean(() => new PCA({ nComponents: 2 }).fit(bad), InvalidDataError, /X contains .*inf.* at row 7, column 2/i);
    expectClean(() => new PCA({ nComponents: 1 }).fit(Matrix.zeros(0, 3)), InvalidDataError, /empty/);
    expectClean(() => new PCA({ nComponents: 1 }).fit([[1, 2, 3]]), InvalidDataError, /at least 2 rows/);
    const pca = new PCA({ nComponents: 2 }).fit(X);
    expectClean(() => pca.transform(bad), InvalidDataError, /X contains .*inf.* at row 7, column 2/i);
  });

  test('transform before fit, or with the wrong number of features', () => {
    expectClean(() => new PCA({ nComponents: 2 }).transform(X), NotFittedError, /not fitted yet; call fit\(X\) first/);
    expectClean(() => new PCA({ nComponents: 2 }).components, NotFittedError, /not fitted/);
    const pca = new PCA({ nComponents: 2 }).fit(X);
    expectClean(() => pca.transform(X.selectColumns([0, 1, 2])), InvalidDataError, /X has 3 features but this PCA was fitted with 4; pass data with 4 columns/);
    // a failed fit leaves the previous fit in place
    expectClean(() => pca.fit(Matrix.zeros(0, 4)), InvalidDataError, /empty/);
    expect(pca.transform(X).nCols).toBe(2);
  });

  test('constant data: zero variance, ratios 0 (not NaN)', () => {
    const pca = new PCA({ nComponents: 2 }).fit(Matrix.fromRows(Array.from({ length: 5 }, () => [3, 3, 3])));
    expect(Array.from(pca.explainedVariance)).toEqual([0, 0]);
    expect(Array.from(pca.explainedVarianceRatio)).toEqual([0, 0]);
    expect(Array.from(pca.mean)).toEqual([3, 3, 3]);
  });
});
