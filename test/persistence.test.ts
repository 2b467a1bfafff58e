/**
 * toJSON / fromJSON and inverseTransform of KMeans, PCA and the scalers (issue
 * 15 item 6): a saved and reloaded object gives the same results as the one
 * that was saved, through JSON text too; every field is checked on the way in
 * (typed errors naming it); inverseTransform undoes transform (PCA exactly
 * with all components, and as scikit-learn's X_reduced @ components_ + mean_
 * on its fixture).
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { init, InvalidDataError, InvalidParameterError, KMeans, Matrix, MinMaxScaler, NotFittedError, PCA, StandardScaler } from '../ts/index.js';
import { blobs, expectClean, fixture, maxAbsoluteError } from './helpers.js';

beforeAll(async () => {
  await init();
});

const through = <T>(o: { toJSON(): T }): T => JSON.parse(JSON.stringify(o)) as T;

describe('KMeans', () => {
  test('a reloaded model predicts and scores as the saved one, and keeps its fit', () => {
    const X = blobs(300, 3, 4, 2);
    const km = new KMeans({ nClusters: 4, seed: 1, nInit: 3, tol: 1e-6 }).fit(X);
    const back = KMeans.fromJSON(JSON.stringify(km));
    const other = blobs(50, 3, 4, 9);
    expect(back.predict(other)).toEqual(km.predict(other));
    expect(back.score(other)).toBe(km.score(other));
    expect(back.centers).toEqual(km.centers);
    expect(back.labels).toEqual(km.labels);
    expect([back.inertia, back.nIter, back.nInit, back.tol, back.seed]).toEqual([km.inertia, km.nIter, 3, 1e-6, 1]);
    expect(back.toJSON()).toEqual(km.toJSON());
  });

  test('bad fields are typed errors naming them', () => {
    const j = through(new KMeans({ nClusters: 2, seed: 0 }).fit(blobs(40, 2, 2, 1)));
    expectClean(() => KMeans.fromJSON({ ...j, format: 'fedmix.PCA' } as never), InvalidParameterError, /format must be "fedmix.KMeans"/);
    expectClean(() => KMeans.fromJSON({ ...j, version: 2 } as never), InvalidParameterError, /version 2/);
    expectClean(() => KMeans.fromJSON({ ...j, centers: j.centers.slice(1) }), InvalidParameterError, /centers has 3 values; expected 4/);
    expectClean(() => KMeans.fromJSON({ ...j, centers: [1, 2, Number.NaN, 4] }), InvalidParameterError, /centers\[2\] is NaN/);
    expectClean(() => KMeans.fromJSON({ ...j, labels: [0, 5] }), InvalidParameterError, /labels\[1\] is 5/);
    expectClean(() => KMeans.fromJSON({ ...j, nClusters: 0 }), InvalidParameterError, /nClusters/);
    expectClean(() => KMeans.fromJSON({ ...j, inertia: -1 }), InvalidParameterError, /inertia/);
    expectClean(() => KMeans.fromJSON({ ...j, options: { init: [1, 2] } } as never), InvalidParameterError, /options.init/);
    expectClean(() => KMeans.fromJSON('{"format"'), InvalidParameterError, /not JSON/);
    expectClean(() => KMeans.fromJSON(null as never), InvalidParameterError, /expected an object/);
    expect(() => new KMeans().toJSON()).toThrow(NotFittedError);
  });
});

describe('PCA', () => {
  test('with all components, inverseTransform(transform(X)) is X', () => {
    const X = blobs(120, 5, 3, 4);
    const pca = new PCA({ nComponents: 5 }).fit(X);
    expect(maxAbsoluteError(pca.inverseTransform(pca.transform(X)).data, X.data)).toBeLessThan(1e-10);
  });

  test("inverseTransform is scikit-learn's X_reduced @ components_ + mean_ on its fixture", () => {
    // scikit-learn 1.2's PCA.inverse_transform (whiten=False) is exactly this product, so its own
    // transform of held-out rows, components and mean (test/fixtures/pca.json) give the expected rows
    const { cases } = fixture<{ cases: { nComponents: number; d: number; mean: number[]; components: number[]; transformTest: number[] }[] }>('pca.json');
    const c = cases[0]!;
    const k = c.nComponents;
    const n = c.transformTest.length / k;
    const pca = PCA.fromJSON({
      format: 'fedmix.PCA', version: 1, nComponents: k, nFeatures: c.d, mean: c.mean, components: c.components,
      explainedVariance: new Array<number>(k).fill(1), explainedVarianceRatio: new Array<number>(k).fill(0), noiseVariance: 0,
    });
    const Z = Matrix.fromRows(Array.from({ length: n }, (_, i) => c.transformTest.slice(i * k, (i + 1) * k)));
    const back = pca.inverseTransform(Z);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < c.d; j++) {
        let want = c.mean[j]!;
        for (let r = 0; r < k; r++) want += c.transformTest[i * k + r]! * c.components[r * c.d + j]!;
        expect(back.get(i, j)).toBeCloseTo(want, 10);
      }
    }
    // and projecting back gives the scores again (the components are orthonormal)
    expect(maxAbsoluteError(pca.transform(back).data, Z.data)).toBeLessThan(1e-8);
  });

  test('a reloaded PCA transforms as the saved one; bad fields are typed errors', () => {
    const X = blobs(80, 4, 2, 7);
    const pca = new PCA({ nComponents: 2 }).fit(X);
    const back = PCA.fromJSON(JSON.stringify(pca));
    expect(back.transform(X).data).toEqual(pca.transform(X).data);
    expect(back.explainedVarianceRatio).toEqual(pca.explainedVarianceRatio);
    expect(back.noiseVariance).toBe(pca.noiseVariance);
    const j = through(pca);
    expectClean(() => PCA.fromJSON({ ...j, components: j.components.slice(2) }), InvalidParameterError, /components has 6 values; expected 8/);
    expectClean(() => PCA.fromJSON({ ...j, nComponents: 5 }), InvalidParameterError, /more than nFeatures/);
    expectClean(() => PCA.fromJSON({ ...j, mean: 'x' } as never), InvalidParameterError, /mean must be an array/);
    expectClean(() => PCA.fromJSON({ ...j, noiseVariance: null } as never), InvalidParameterError, /noiseVariance/);
    expectClean(() => pca.inverseTransform(X), InvalidDataError, /4 columns but this PCA has 2 components/);
    expect(() => new PCA({ nComponents: 1 }).inverseTransform([[1]])).toThrow(NotFittedError);
  });
});

describe.each([
  ['StandardScaler', StandardScaler],
  ['MinMaxScaler', MinMaxScaler],
] as const)('%s', (name, Scaler) => {
  test('inverseTransform undoes transform (a constant column too); a reloaded scaler is the same', () => {
    const X = Matrix.fromRows([[1, 10, 3], [2, -4, 3], [5, 0.5, 3], [-7, 2, 3]]);
    const s = new Scaler().fit(X);
    expect(maxAbsoluteError(s.inverseTransform(s.transform(X)).data, X.data)).toBeLessThan(1e-12);
    const back = (Scaler as typeof StandardScaler).fromJSON(JSON.stringify(s));
    expect(back.transform(X).data).toEqual(s.transform(X).data);
    expect(back.toJSON()).toEqual(s.toJSON());
    expect(s.toJSON().format).toBe(`fedmix.${name}`);
  });

  test('bad fields are typed errors', () => {
    const s = new Scaler().fit([[1, 2], [3, 5]]);
    const j = through(s as StandardScaler);
    const from = (v: unknown) => (Scaler as typeof StandardScaler).fromJSON(v as never);
    expectClean(() => from({ ...j, factor: [1, 0] }), InvalidParameterError, /factor\[1\] is 0/);
    expectClean(() => from({ ...j, offset: [1] }), InvalidParameterError, /offset has 1 values; expected 2/);
    expectClean(() => from({ ...j, format: name === 'MinMaxScaler' ? 'fedmix.StandardScaler' : 'fedmix.MinMaxScaler' }), InvalidParameterError, /format must be/);
    expectClean(() => from({ ...j, nFeatures: 2.5 }), InvalidParameterError, /nFeatures/);
    expectClean(() => s.inverseTransform([[1, 2, 3]]), InvalidDataError, /3 features/);
    expect(() => new Scaler().inverseTransform([[1]])).toThrow(NotFittedError);
    expect(() => new Scaler().toJSON()).toThrow(NotFittedError);
  });
});
