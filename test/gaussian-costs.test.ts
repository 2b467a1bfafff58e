/**
 * The costs between Gaussians of FedDistr's matching, computed by the Rust core
 * (crates/fedmix-core/src/gaussian_costs.rs) in batches, against scipy
 * (test/fixtures/gaussian_costs.json, from scripts/gen-gaussian-costs.py:
 * scipy.linalg.sqrtm for W2, numpy for Bhattacharyya) to 1e-9 relative, in
 * the SIMD and scalar builds (which agree to the bit); task labels forbid
 * pairs; bad input is a typed error that leaks nothing.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { bhattacharyya, init, InvalidDataError, InvalidParameterError, wasserstein2 } from '../ts/index.js';
import { withGaussianCosts, type CovarianceKind, type Gaussian } from '../ts/federated/feddistr/gaussian.js';
import { heapInUse } from '../ts/wasm/memory.js';
import { resetForTests, wasm } from '../ts/wasm/loader.js';
import { fixture, maxRelativeError } from './helpers.js';

interface Case {
  name: string;
  d: number;
  form: CovarianceKind;
  na: number;
  nb: number;
  a: { means: number[]; covariances: number[] };
  b: { means: number[]; covariances: number[] };
  wasserstein: number[];
  bhattacharyya?: number[];
}

const { cases } = fixture<{ cases: Case[] }>('gaussian_costs.json');

function gaussians(set: Case['a'], n: number, d: number, form: CovarianceKind): Gaussian[] {
  const size = form === 'full' ? d * d : d;
  return Array.from({ length: n }, (_, i) => ({
    mean: Float64Array.from(set.means.slice(i * d, (i + 1) * d)),
    covariance: Float64Array.from(set.covariances.slice(i * size, (i + 1) * size)),
  }));
}

/** Every fixture matrix, batched: set a then set b in one resident set, the a x b block. */
function allMatrices(): Float64Array[] {
  const out: Float64Array[] = [];
  for (const c of cases) {
    const all = [...gaussians(c.a, c.na, c.d, c.form), ...gaussians(c.b, c.nb, c.d, c.form)];
    for (const cost of ['wasserstein', 'bhattacharyya'] as const) {
      if (!c[cost]) continue;
      out.push(withGaussianCosts(all, undefined, c.d, c.form, cost, (k) => k.block(0, c.na, c.na, c.nb)));
    }
  }
  return out;
}

afterAll(() => resetForTests());

describe.each(['simd', 'scalar'] as const)('%s build', (backend) => {
  test('every cell matches scipy to 1e-9 relative, batched and pair by pair', async () => {
    resetForTests();
    await init({ backend });
    for (const c of cases) {
      const a = gaussians(c.a, c.na, c.d, c.form);
      const b = gaussians(c.b, c.nb, c.d, c.form);
      for (const cost of ['wasserstein', 'bhattacharyya'] as const) {
        const want = c[cost];
        if (!want) continue;
        const got = withGaussianCosts([...a, ...b], undefined, c.d, c.form, cost, (k) => k.block(0, c.na, c.na, c.nb));
        expect(maxRelativeError(got, want), `${c.name} ${cost}`).toBeLessThan(1e-9);
        const one = cost === 'wasserstein' ? wasserstein2 : bhattacharyya;
        const pairwise = a.flatMap((x) => b.map((y) => one(x, y, c.form)));
        expect(pairwise).toEqual(Array.from(got));
      }
    }
  });
});

test('the SIMD and scalar builds agree to the bit', async () => {
  resetForTests();
  await init({ backend: 'simd' });
  const simd = allMatrices();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(allMatrices()).toEqual(simd);
});

describe('batches, labels and bad input', () => {
  const g = (mean: number[], covariance: number[]): Gaussian => ({ mean: Float64Array.from(mean), covariance: Float64Array.from(covariance) });
  const set = [g([0, 0], [1, 0, 0, 1]), g([3, 4], [1, 0, 0, 1]), g([1, 0], [2, 0.5, 0.5, 1]), g([0, 1], [1, 0, 0, 3])];

  test('pairs of different task labels are +Infinity and the others are the unlabelled costs', async () => {
    await init();
    for (const cost of ['wasserstein', 'bhattacharyya'] as const) {
      const plain = withGaussianCosts(set, undefined, 2, 'full', cost, (k) => k.block(0, 2, 2, 2));
      const labelled = withGaussianCosts(set, [1, 2, 2, 1], 2, 'full', cost, (k) => k.block(0, 2, 2, 2));
      // a0 (1) - b0 (2), a0 - b1 (1), a1 (2) - b0, a1 - b1
      expect(Array.from(labelled)).toEqual([Infinity, plain[1], plain[2], Infinity]);
    }
    // the cost from a block equals the one-pair form, both ways round for W2
    const w = withGaussianCosts(set, undefined, 2, 'full', 'wasserstein', (k) => [k.block(1, 1, 0, 1)[0]!, k.block(0, 1, 1, 1)[0]!]);
    expect(w[0]).toBeCloseTo(5, 12);
    expect(w[1]).toBeCloseTo(5, 12);
  });

  test('a range outside the set, a value that is not finite: typed errors, nothing leaked', async () => {
    await init();
    const before = heapInUse(wasm());
    expect(() => withGaussianCosts(set, undefined, 2, 'full', 'wasserstein', (k) => k.block(3, 2, 0, 1))).toThrow(InvalidParameterError);
    const bad = [set[0]!, g([NaN, 0], [1, 0, 0, 1])];
    expect(() => withGaussianCosts(bad, undefined, 2, 'full', 'bhattacharyya', (k) => k.block(0, 1, 1, 1))).toThrow(InvalidDataError);
    expect(() => wasserstein2(set[0]!, g([0, Infinity], [1, 0, 0, 1]), 'full')).toThrow(/not finite/);
    expect(() => bhattacharyya(set[0]!, g([0, 0], [1, 0, 0, NaN]), 'full')).toThrow(InvalidDataError);
    expect(heapInUse(wasm())).toBe(before);
  });
});
