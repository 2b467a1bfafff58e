/**
 * DirichletMultinomialMixture.fit: the federated algorithm with one party
 * holding every row, on the same kernels. At the same seed it is fitMdm's
 * full-batch run (no privacy, exact in-process messages) within 1e-9; given
 * `init` it continues from there; bad input is a typed error.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { DirichletMultinomialMixture, fitMdm, init, InvalidDataError, InvalidParameterError } from '../ts/index.js';
import { expectClean, maxRelativeError } from './helpers.js';

beforeAll(async () => {
  await init();
});

const truth = () =>
  new DirichletMultinomialMixture({
    tau: [0.35, 0.65],
    alpha: [
      [0.2, 0.5, 1.0, 2.0],
      [3.0, 2.0, 1.0, 0.5],
    ],
    pi: [Array.from({ length: 30 }, (_, i) => (i >= 9 && i < 20 ? 1 / 11 : 0)), Array.from({ length: 30 }, (_, i) => (i >= 19 ? 1 / 11 : 0))],
  });

describe('DirichletMultinomialMixture.fit', () => {
  test("is fitMdm's full-batch model at the same seed (within 1e-9)", () => {
    const h = truth().sample(300, { seed: 8 }).histograms;
    for (const [k, rounds, seed] of [[2, 15, 3], [3, 5, 11], [1, 4, 0]] as const) {
      const central = DirichletMultinomialMixture.fit(h, { nComponents: k, rounds, seed });
      const fed = fitMdm(h, { nComponents: k, rounds, seed, encoding: 'none' }).model;
      expect(maxRelativeError(central.tau, fed.tau, 1e-12)).toBeLessThan(1e-9);
      expect(maxRelativeError(central.alpha, fed.alpha, 1e-12)).toBeLessThan(1e-9);
      expect(maxRelativeError(central.pi, fed.pi, 1e-12)).toBeLessThan(1e-9);
    }
  });

  test('rounds: 0 is Algorithm 1 alone; init continues from a model; categories are kept', () => {
    const h = truth().sample(200, { seed: 2 }).histograms;
    const start = DirichletMultinomialMixture.fit(h, { nComponents: 2, rounds: 0, seed: 5 });
    expect(Array.from(start.tau)).toEqual(Array.from(fitMdm(h, { nComponents: 2, rounds: 0, seed: 5, encoding: 'none' }).model.tau));
    const more = DirichletMultinomialMixture.fit(h, { init: start, rounds: 10 });
    const direct = DirichletMultinomialMixture.fit(h, { nComponents: 2, rounds: 10, seed: 5 });
    expect(maxRelativeError(more.alpha, direct.alpha, 1e-12)).toBeLessThan(1e-12);
    // EM: the fitted model explains the data better than its start
    expect(direct.score(h)).toBeGreaterThan(start.score(h));
    const named = DirichletMultinomialMixture.fit(h, { nComponents: 2, rounds: 1, seed: 0, categories: ['a', 'b', 'c', 'd'] });
    expect(named.categories).toEqual(['a', 'b', 'c', 'd']);
  });

  test('bad input is a typed error', () => {
    const h = truth().sample(20, { seed: 1 }).histograms;
    expectClean(() => DirichletMultinomialMixture.fit([[1, -1, 2, 0]]), InvalidDataError, /./);
    expectClean(() => DirichletMultinomialMixture.fit([], { nComponents: 1 }), InvalidDataError, /no histograms/);
    expectClean(() => DirichletMultinomialMixture.fit([[1], [2]]), InvalidDataError, /at least 2/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { nComponents: 21 }), InvalidParameterError, /larger than the 20 histograms/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { nComponents: 0 }), InvalidParameterError, /nComponents/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { rounds: -1 }), InvalidParameterError, /rounds/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { seed: 1.5 }), InvalidParameterError, /seed/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { init: {} as never }), InvalidParameterError, /init must be a DirichletMultinomialMixture/);
    expectClean(() => DirichletMultinomialMixture.fit(h, { maxCount: 5 }), InvalidDataError, /./);
    expectClean(() => DirichletMultinomialMixture.fit(h, { init: truth(), maxCount: 40 }), InvalidParameterError, /init has K = 2, C = 4, N = 30/);
  });
});
