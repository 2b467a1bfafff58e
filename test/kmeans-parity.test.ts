/** KMeans (Lloyd from given centers) and k-means++ behaviour against scikit-learn 1.2.1. */
import { beforeAll, expect, test } from 'vitest';
import { init, KMeans } from '../ts/index.js';
import { blobs, fixture, fromRowMajor, maxAbsoluteError, maxRelativeError } from './helpers.js';
import { gmmFixture } from './support/gmm-fixture.js';

interface Case {
  dataset: string;
  nClusters: number;
  init: number[];
  centers: number[];
  labels: number[];
  inertia: number;
  nIter: number;
}
const { datasets } = gmmFixture;
const { cases } = fixture<{ cases: Case[] }>('kmeans.json');

beforeAll(async () => {
  await init();
});

test.each(cases.map((c) => [c.dataset, c] as const))('Lloyd from the same centers matches scikit-learn on %s', (_n, c) => {
  const ds = datasets[c.dataset]!;
  const X = fromRowMajor(ds.X, ds.n, ds.d);
  const km = new KMeans({ nClusters: c.nClusters, init: c.init }).fit(X);
  expect(Array.from(km.labels)).toEqual(c.labels);
  expect(km.nIter).toBe(c.nIter);
  expect(maxAbsoluteError(km.centers, c.centers)).toBeLessThan(1e-10);
  expect(maxRelativeError([km.inertia], [c.inertia])).toBeLessThan(1e-10);
  expect(Array.from(km.predict(X))).toEqual(c.labels);
  expect(maxRelativeError([-km.score(X)], [c.inertia])).toBeLessThan(1e-10);
});

test('k-means++ with restarts finds well-separated clusters, deterministically per seed', () => {
  const X = blobs(600, 3, 4, 5, 8);
  const a = new KMeans({ nClusters: 4, seed: 3 }).fit(X);
  const b = new KMeans({ nClusters: 4, seed: 3 }).fit(X);
  expect(Array.from(a.centers)).toEqual(Array.from(b.centers));
  // rows i and i + 4 come from the same blob; every blob is one cluster
  const labels = a.labels;
  for (let i = 4; i < 600; i++) expect(labels[i]).toBe(labels[i - 4]);
  expect(new Set(labels).size).toBe(4);
  const random = new KMeans({ nClusters: 4, init: 'random', nInit: 5, seed: 1 }).fit(X);
  expect(random.inertia).toBeLessThan(a.inertia * 1.5);
});
