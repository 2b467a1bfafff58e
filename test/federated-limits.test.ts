/**
 * Options that imply impossible work or memory are refused up front, with a
 * typed error, before anything is allocated or any client is asked
 * (ts/federated/limits.ts): counts that would wrap at the WASM boundary
 * (2^32 + 2), models of 2^31 features, rounds without end.
 */
import { beforeAll, expect, test } from 'vitest';
import { DemServer, distributedEM, FedGEMClient, FedGEMServer, FedGenGMMClient, FedGenGMMServer, fitMdm, init, InvalidParameterError, Matrix, MdmServer, runFederationSync, selectMdm } from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { requireModelSize } from '../ts/federated/limits.js';

beforeAll(async () => {
  await init();
});

const huge = 2 ** 32 + 2;
const x = Matrix.fromRows([
  [0, 0],
  [1, 1],
  [0, 1],
  [1, 0],
]);

test.each<[string, () => unknown, RegExp]>([
  ['DEM: 2^31 features', () => distributedEM([x], { nFeatures: 2 ** 31 } as never), /nFeatures|features/],
  ['DEM server: 2^31 features', () => new DemServer({ nFeatures: 2 ** 31, nComponents: 2 }), /nFeatures must be an integer in \[1, 1048576\]/],
  ['DEM server: 4096 full components over 4096 features', () => new DemServer({ nFeatures: 4096, nComponents: 4096, covarianceType: 'full', init: 'kfed' }), /holds \d+ values, more than the 134217728/],
  ['DEM server: nComponents 2^32 + 2', () => new DemServer({ nFeatures: 2, nComponents: huge }), /nComponents must be an integer in \[1, 2147483647\]/],
  ['DEM server: maxRounds 2^32', () => new DemServer({ nFeatures: 2, nComponents: 2, maxRounds: 2 ** 32 }), /maxRounds must be an integer in \[0, 1000000\]/],
  ['FedGenGMM client: maxIter 2^32', () => new FedGenGMMClient('a', x, { maxIter: 2 ** 32 }), /maxIter must be an integer in \[1, 1000000\]/],
  ['FedGenGMM client: nInit 2^32 + 2', () => new FedGenGMMClient('a', x, { nInit: huge }), /nInit must be an integer in \[1, 1000\]/],
  ['FedGenGMM server: nFeatures 2^32 + 2', () => new FedGenGMMServer({ nFeatures: huge, nComponents: 2 }), /nFeatures must be an integer in \[1, 1048576\]/],
  ['FedGenGMM server: h 2^32', () => new FedGenGMMServer({ nFeatures: 2, nComponents: 2, h: 2 ** 32 }), /h must be an integer/],
  ['FedGEM client: localSteps 2^32', () => new FedGEMClient('a', x, { nComponents: 1, localSteps: 2 ** 32 }), /localSteps must be an integer in \[1, 10000\]/],
  ['FedGEM server: rounds 2^32 + 2', () => new FedGEMServer({ nFeatures: 2, rounds: huge }), /rounds must be an integer in \[0, 1000000\]/],
  ['MDM server: rounds 2^32', () => new MdmServer({ nCategories: 3, maxCount: 10, rounds: 2 ** 32 }), /rounds must be an integer in \[0, 1000000\]/],
  ['MDM server: cohort 2^32 + 2', () => new MdmServer({ nCategories: 3, maxCount: 10, cohort: huge }), /cohort must be an integer in \[1, 2147483647\]/],
  ['fitMdm: maxCount 2^32 + 2', () => fitMdm([[1, 2, 3]], { maxCount: huge }), /maxCount/],
  ['selectMdm: kValues [2^32 + 2]', () => selectMdm([[1, 2, 3]], { kValues: [huge] }), /kValues\[0\] must be an integer in \[1, 2147483647\]/],
  [
    'the policy: minClients 2^32 + 2',
    () => {
      const server = new DemServer({ nFeatures: 2, nComponents: 1, init: 'separated' });
      try {
        return runFederationSync(server, [], { minClients: huge });
      } finally {
        server.dispose();
      }
    },
    /minClients must be an integer in \[1, 2147483647\]/,
  ],
])('%s: an InvalidParameterError up front, nothing allocated', (_, make, reason) => {
  const before = wasm().fm_heap_in_use();
  expect(make).toThrow(InvalidParameterError);
  expect(make).toThrow(reason);
  expect(wasm().fm_heap_in_use()).toBe(before);
});

test('a model too large is told what would fit: the most components, and diagonal covariances only where they would', () => {
  const refusal = (k: number, d: number, t: 'full' | 'tied' | 'diag' | 'spherical') => {
    try {
      requireModelSize(k, d, t);
    } catch (e) {
      return (e as Error).message;
    }
    return undefined;
  };
  // diagonal already: the advice is the components that fit (here the cap of a GaussianMixture), never diagonal covariances
  expect(refusal(99_999_999, 16, 'diag')).toBe('a diag mixture of 99999999 components over 16 features holds 3299999967 values, more than the 134217728 (1 GiB) a model may; lower nComponents to at most 65536 (LIMITS.components)');
  expect(refusal(99_999_999, 16, 'spherical')).not.toMatch(/diagonal/);
  expect(refusal(10_000, 10_000, 'diag')).toBe('a diag mixture of 10000 components over 10000 features holds 200010000 values, more than the 134217728 (1 GiB) a model may; lower nComponents to at most 6710 (over 10000 features) or lower nFeatures');
  // full: diagonal covariances are advised where they would fit, and only there
  expect(refusal(60_000, 100, 'full')).toBe('a full mixture of 60000 components over 100 features holds 606060000 values, more than the 134217728 (1 GiB) a model may; lower nComponents to at most 13287 (over 100 features) or lower nFeatures, or use diagonal covariances');
  expect(refusal(99_999_999, 16, 'full')).not.toMatch(/diagonal/);
  expect(refusal(65_536, 4_000, 'full')).not.toMatch(/diagonal/);
  expect(refusal(10, 20_000, 'tied')).toMatch(/; lower nFeatures \(not one tied component over 20000 features fits\), or use diagonal covariances$/);
  // the numbers advised are exact: that many fit, one more does not
  for (const [k, d, t] of [[6710, 10_000, 'diag'], [13_287, 100, 'full'], [13_419, 10_000, 'spherical']] as const) {
    expect(refusal(k, d, t)).toBeUndefined();
    expect(refusal(k + 1, d, t)).toMatch(new RegExp(`at most ${k} \\(over ${d} features\\)`));
  }
  expect(refusal(60_000, 100, 'diag')).toBeUndefined();
  expect(refusal(65_536, 16, 'diag')).toBeUndefined();
});
