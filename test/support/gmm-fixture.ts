/**
 * test/fixtures/gmm.json (scripts/gen-fixtures.py): scikit-learn 1.2.1's
 * GaussianMixture fits from given starts, read by the parity tests of
 * GaussianMixture (float64 and float32) and of KMeans (its datasets).
 */
import type { CovarianceType } from '../../ts/index.js';
import { fixture } from '../helpers.js';

/** A dataset, row-major; the held-out rows are scored at the fitted parameters. */
export interface GmmFixtureDataset {
  n: number;
  d: number;
  X: number[];
  nTest: number;
  Xtest: number[];
}

/** One fit: its start, and scikit-learn's fitted parameters and scores. */
export interface GmmFixtureCase {
  dataset: string;
  covarianceType: CovarianceType;
  nComponents: number;
  tol: number;
  maxIter: number;
  weightsInit: number[];
  meansInit: number[];
  precisionsInit: number[];
  weights: number[];
  means: number[];
  covariances: number[];
  precisionsCholesky: number[];
  precisions: number[];
  nIter: number;
  lowerBound: number;
  converged: boolean;
  scoreSamples: number[];
  predictProba: number[];
  predict: number[];
  bic: number;
  aic: number;
  bicTrain: number;
  aicTrain: number;
}

export const gmmFixture = fixture<{ datasets: Record<string, GmmFixtureDataset>; cases: GmmFixtureCase[] }>('gmm.json');

/** A case's fit from its start: the GaussianMixture options scikit-learn was run with. */
export function parityStart(c: GmmFixtureCase) {
  const { nComponents, covarianceType, tol, maxIter, weightsInit, meansInit, precisionsInit } = c;
  return { nComponents, covarianceType, tol, maxIter, weightsInit, meansInit, precisionsInit };
}
