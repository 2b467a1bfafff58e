/** adjustedRandScore and silhouetteSamples / silhouetteScore against sklearn.metrics. */
import { expect, test } from 'vitest';
import { adjustedRandScore, InvalidDataError, silhouetteSamples, silhouetteScore } from '../ts/index.js';
import { fixture, fromRowMajor, maxAbsoluteError } from './helpers.js';

interface Fixtures {
  ari: { true: number[]; pred: number[]; ari: number }[];
  silhouette: { x: number[]; n: number; d: number; labels: number[]; samples: number[] }[];
}
const f = fixture<Fixtures>('clustering.json');

test.each(f.ari.map((c, i) => [i, c.true.length, c] as const))('ARI case %i (n = %i) matches scikit-learn', (_i, _n, c) => {
  expect(Math.abs(adjustedRandScore(c.true, c.pred) - c.ari)).toBeLessThan(1e-13);
  // symmetric, and only the partition matters
  expect(Math.abs(adjustedRandScore(c.pred, c.true) - c.ari)).toBeLessThan(1e-13);
  expect(Math.abs(adjustedRandScore(c.true.map((v) => `c${v}`), c.pred.map((v) => 100 - v)) - c.ari)).toBeLessThan(1e-13);
});

test.each(f.silhouette.map((c, i) => [i, c.n, c] as const))('silhouette case %i (n = %i) matches scikit-learn', (_i, _n, c) => {
  const X = fromRowMajor(c.x, c.n, c.d);
  expect(maxAbsoluteError(silhouetteSamples(X, c.labels), c.samples)).toBeLessThan(1e-13);
  const mean = c.samples.reduce((a, b) => a + b, 0) / c.n;
  expect(Math.abs(silhouetteScore(X, c.labels) - mean)).toBeLessThan(1e-13);
});

test('bad labels are typed errors', () => {
  expect(() => adjustedRandScore([0, 1], [0])).toThrow(/one of each per sample/);
  expect(() => adjustedRandScore([0, NaN], [0, 1])).toThrow(InvalidDataError);
  const X = [[0], [1], [2]];
  expect(() => silhouetteScore(X, [0, 0, 0])).toThrow(/2 to n - 1/);
  expect(() => silhouetteScore(X, [0, 1, 2])).toThrow(/2 to n - 1/);
  expect(() => silhouetteScore(X, [0, 1])).toThrow(/one label per row/);
  expect(() => silhouetteScore([[0], [NaN], [1]], [0, 1, 1])).toThrow(/contains NaN/);
});
