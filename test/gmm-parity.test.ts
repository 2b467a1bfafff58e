/**
 * GaussianMixture against scikit-learn 1.2.1 (fixtures from scripts/gen-fixtures.py):
 * from identical initial parameters, EM must reach scikit-learn's solution, and at
 * fixed parameters every score must match.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { GaussianMixture, init } from '../ts/index.js';
import { fromRowMajor, maxAbsoluteError, maxRelativeError } from './helpers.js';
import { gmmFixture, parityStart } from './support/gmm-fixture.js';

const { datasets, cases } = gmmFixture;

beforeAll(async () => {
  await init();
});

describe.each(cases.map((c) => [`${c.dataset}/${c.covarianceType}`, c] as const))('%s', (_name, c) => {
  const ds = datasets[c.dataset]!;
  const X = fromRowMajor(ds.X, ds.n, ds.d);
  const Xtest = fromRowMajor(ds.Xtest, ds.nTest, ds.d);

  test('EM from the same start converges to scikit-learn', () => {
    const gm = new GaussianMixture(parityStart(c)).fit(X);
    expect(gm.nIter).toBe(c.nIter);
    expect(gm.converged).toBe(c.converged);
    expect(maxRelativeError([gm.lowerBound], [c.lowerBound])).toBeLessThan(1e-9);
    expect(maxAbsoluteError(gm.weights, c.weights)).toBeLessThan(1e-6);
    expect(maxAbsoluteError(gm.means, c.means)).toBeLessThan(1e-6);
    expect(maxAbsoluteError(gm.covariances, c.covariances)).toBeLessThan(1e-6);
    expect(maxRelativeError([gm.bic(X), gm.aic(X)], [c.bicTrain, c.aicTrain])).toBeLessThan(1e-9);
    gm.dispose();
  });

  test('scores at scikit-learn parameters match', () => {
    const gm = GaussianMixture.fromJSON({
      format: 'fedmix.GaussianMixture',
      version: 1,
      covarianceType: c.covarianceType,
      nComponents: c.nComponents,
      nFeatures: ds.d,
      weights: c.weights,
      means: c.means,
      covariances: c.covariances,
      precisionsCholesky: c.precisionsCholesky,
      converged: c.converged,
      nIter: c.nIter,
      lowerBound: c.lowerBound,
    });
    expect(maxRelativeError(gm.scoreSamples(Xtest), c.scoreSamples)).toBeLessThan(1e-9);
    const proba = gm.predictProba(Xtest);
    const k = c.nComponents;
    const ours: number[] = [];
    for (let i = 0; i < ds.nTest; i++) for (let j = 0; j < k; j++) ours.push(proba.get(i, j));
    // relative, except where both are below 1e-300 (underflow of exp)
    expect(maxRelativeError(ours, c.predictProba, 1e-300)).toBeLessThan(1e-9);
    expect(Array.from(gm.predict(Xtest))).toEqual(c.predict);
    expect(maxRelativeError([gm.bic(Xtest), gm.aic(Xtest)], [c.bic, c.aic])).toBeLessThan(1e-9);
    expect(maxRelativeError(gm.precisions, c.precisions)).toBeLessThan(1e-9);
    gm.dispose();
  });
});
