/**
 * FedGenGMM's sample-free server step, hierarchical EM
 * (ts/federated/fedgengmm/hierarchical.ts on crates/fedmix-core/src/hem.rs):
 * against an independent numpy/scipy reduction (test/fixtures/hem.json, from
 * scripts/gen-hem.py) to 1e-9 in the SIMD and scalar builds; exact recovery
 * from identical copies; deterministic at a seed; bad uploads and settings as
 * typed errors; the federated run end to end, its options strict.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serverRoleOptions } from '../ts/cli/federation.js';
import { FedGenGMMServer, fedGenGMM, FedmixError, GaussianMixture, init, InvalidDataError, InvalidParameterError, Matrix } from '../ts/index.js';
import { hierarchicalEM, type WeightedMixture } from '../ts/federated/fedgengmm/hierarchical.js';
import { COV_CODE, type CovarianceType } from '../ts/models/gaussian-mixture.js';
import { HEM_REDUCE_OPTIONS } from '../ts/wasm/abi.generated.js';
import { withScope } from '../ts/wasm/memory.js';
import { resetForTests } from '../ts/wasm/loader.js';
import { blob, fixture } from './helpers.js';

interface Case {
  name: string;
  d: number;
  n: number;
  k: number;
  covarianceType: CovarianceType;
  virtualSamples: number;
  regCovar: number;
  maxIter: number;
  weights: number[];
  means: number[];
  covariances: number[];
  meansInit: number[];
  result: { weights: number[]; means: number[]; covariances: number[]; lowerBound: number; logLikelihood: number };
}

const { cases } = fixture<{ cases: Case[] }>('hem.json');

/** The fixture's lower mixture as one upload of full covariances (share 1): the reduction lays it out for the type. */
function lowerOf(c: Case): WeightedMixture[] {
  return [{ model: GaussianMixture.fromParameters({ covarianceType: 'full', weights: c.weights, means: c.means, covariances: c.covariances, nFeatures: c.d }), share: 1 }];
}

function reduceCase(c: Case) {
  const parts = lowerOf(c);
  try {
    return hierarchicalEM(parts, {
      nComponents: c.k, covarianceType: c.covarianceType, virtualSamples: c.virtualSamples, tol: 0, maxIter: c.maxIter, regCovar: c.regCovar, nInit: 1, seed: 0, meansInit: c.meansInit,
    });
  } finally {
    for (const p of parts) p.model.dispose();
  }
}

function expectClose(got: ArrayLike<number>, want: number[], what: string): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!), `${what}[${i}]`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want[i]!)));
}

afterAll(() => resetForTests());

describe.each(['simd', 'scalar'] as const)('%s build', (backend) => {
  beforeAll(async () => {
    resetForTests();
    await init({ backend });
  });

  test.each(cases.map((c) => [c.name, c] as const))('matches the numpy reduction to 1e-9: %s', (_name, c) => {
    const r = reduceCase(c);
    expectClose(r.model.weights, c.result.weights, 'weights');
    expectClose(r.model.means, c.result.means, 'means');
    expectClose(r.model.covariances, c.result.covariances, 'covariances');
    expectClose([r.lowerBound, r.logLikelihood], [c.result.lowerBound, c.result.logLikelihood], 'objective, log-likelihood');
    expect(r.nIter).toBe(c.maxIter);
    r.model.dispose();
  });
});

test('the SIMD and scalar builds agree to the bit', async () => {
  const run = () => cases.map((c) => {
    const r = reduceCase(c);
    const out = [...r.model.weights, ...r.model.means, ...r.model.covariances, r.lowerBound];
    r.model.dispose();
    return out;
  });
  resetForTests();
  await init({ backend: 'simd' });
  const simd = run();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(run()).toEqual(simd);
  resetForTests();
  await init();
});

describe('the reduction', () => {
  beforeAll(async () => {
    await init();
  });

  const truth = { weights: [0.5, 0.3, 0.2], means: [0, 0, 6, 1, -3, 5], covariances: [1, 0.4, 0.4, 2, 0.5, -0.2, -0.2, 0.3, 1.5, 0, 0, 1.5] };
  const copies = (t: 'full' | 'diag', n: number): WeightedMixture[] =>
    Array.from({ length: n }, (_, c) => ({
      model: GaussianMixture.fromParameters({
        covarianceType: t, weights: truth.weights, means: truth.means,
        covariances: t === 'full' ? truth.covariances : [1, 2, 0.5, 0.3, 1.5, 1.5],
      }),
      share: [0.5, 0.3, 0.2][c]!,
    }));

  test.each(['full', 'diag'] as const)('identical copies of the clients\' components reduce to them exactly (%s)', (t) => {
    const parts = copies(t, 3);
    const r = hierarchicalEM(parts, { nComponents: 3, covarianceType: t, virtualSamples: 1000, tol: 1e-3, maxIter: 100, regCovar: 0, nInit: 5, seed: 3 });
    const m = r.model.means;
    const size = t === 'full' ? 4 : 2;
    const cov = parts[0]!.model.covariances;
    for (let src = 0; src < 3; src++) {
      const j = [0, 1, 2].find((j) => Math.hypot(m[2 * j]! - truth.means[2 * src]!, m[2 * j + 1]! - truth.means[2 * src + 1]!) < 1e-9)!;
      expect(j).toBeDefined();
      expect(r.model.weights[j]).toBeCloseTo(truth.weights[src]!, 12);
      for (let l = 0; l < size; l++) expect(r.model.covariances[j * size + l]).toBeCloseTo(cov[src * size + l]!, 12);
    }
    expect(r.converged).toBe(true);
    r.model.dispose();
    for (const p of parts) p.model.dispose();
  });

  test('deterministic at a seed, whatever the seed, and clients of any covariance type reduce to any', () => {
    const types = ['full', 'tied', 'diag', 'spherical'] as const;
    const parts: WeightedMixture[] = types.map((t, c) => {
      const gm = new GaussianMixture({ nComponents: 3, covarianceType: t, seed: c }).fit(Matrix.fromRows(Array.from({ length: 200 }, (_, i) => [Math.sin(i * (c + 1)) * 4 + (i % 3) * 5, Math.cos(i * 0.7) * 2 - (i % 2) * 4])));
      return { model: gm, share: 0.25 };
    });
    for (const t of types) {
      const run = (seed: number) => hierarchicalEM(parts, { nComponents: 4, covarianceType: t, virtualSamples: 800, tol: 1e-3, maxIter: 100, regCovar: 1e-6, nInit: 4, seed });
      const a = run(9);
      const b = run(9);
      expect(Array.from(b.model.means)).toEqual(Array.from(a.model.means));
      expect(Array.from(b.model.covariances)).toEqual(Array.from(a.model.covariances));
      expect(a.model.covarianceType).toBe(t);
      expect(a.model.weights.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 12);
      a.model.dispose();
      b.model.dispose();
    }
    for (const p of parts) p.model.dispose();
  });

  test('bad input: K above the incoming components, NaN parameters, covariances not SPD, bad settings', () => {
    const parts = copies('full', 2);
    const o = { nComponents: 3, covarianceType: 'full' as const, virtualSamples: 100, tol: 1e-3, maxIter: 100, regCovar: 1e-6, nInit: 1, seed: 0 };
    expect(() => hierarchicalEM(parts, { ...o, nComponents: 7 })).toThrow(InvalidParameterError);
    expect(() => hierarchicalEM(parts, { ...o, virtualSamples: 0 })).toThrow(InvalidParameterError);
    expect(() => hierarchicalEM(parts, { ...o, virtualSamples: NaN })).toThrow(InvalidParameterError);
    expect(() => hierarchicalEM(parts, { ...o, tol: -1 })).toThrow(InvalidParameterError);
    expect(() => hierarchicalEM([], o)).toThrow(InvalidParameterError);
    // a share that is not a positive number makes a weight the core refuses
    expect(() => hierarchicalEM([{ ...parts[0]!, share: NaN }, parts[1]!], o)).toThrow(InvalidDataError);
    for (const p of parts) p.model.dispose();
  });

  test('the core refuses NaN parameters and covariances that are not SPD with typed errors (what a model object cannot hold)', () => {
    const call = (means: number[], covs: number[]) =>
      withScope((s) => {
        const out = s.f64(16);
        const options = s.struct(HEM_REDUCE_OPTIONS, { covarianceType: COV_CODE.full, d: 2, n: 2, k: 1, virtualSamples: 100, tol: 1e-3, maxIter: 100, regCovar: 1e-6, nInit: 1, seedLo: 0, seedHi: 0 });
        s.check(s.w.fm_hem_reduce(options, s.f64From([0.5, 0.5]), s.f64From(means), s.f64From(covs), 0, out, out + 8, out + 24, out + 56));
      });
    const eye = [1, 0, 0, 1];
    expect(() => call([0, 0, 1, 1], [...eye, ...eye])).not.toThrow();
    expect(() => call([0, NaN, 1, 1], [...eye, ...eye])).toThrow(InvalidDataError);
    expect(() => call([0, 0, 1, 1], [...eye, 1, 2, 2, 1])).toThrow(/not symmetric positive definite/);
    expect(() => call([0, 0, 1, 1], [...eye, 1, 0.5, 0, 1])).toThrow(InvalidDataError);
  });
});

// ---- the federated run
const A = [0, 0];
const B = [6, 0];
const C = [0, 6];
const clients = [
  blob(400, A, 1, 1),
  Matrix.vstack([blob(150, A, 1, 2), blob(150, B, 1, 3)]),
  blob(300, C, 1, 4),
  Matrix.vstack([blob(200, B, 1, 5), blob(100, C, 1, 6)]),
];
const pooled = Matrix.vstack(clients);

describe('FedGenGMM with serverStep hierarchical', () => {
  beforeAll(async () => {
    await init();
  });

  test.each(['full', 'diag'] as const)('%s: end to end, close to the sampling step and to centralized EM; nothing sampled; the same at a seed', (t) => {
    const run = (serverStep: 'sample' | 'hierarchical') => fedGenGMM(clients, { client: { kMin: 1, kMax: 3, covarianceType: t, seed: 1 }, server: { nComponents: 3, covarianceType: t, seed: 2, serverStep } });
    const h = run('hierarchical');
    const again = run('hierarchical');
    const s = run('sample');
    expect(Array.from(again.model.means)).toEqual(Array.from(h.model.means));
    expect(h.syntheticRows).toBe(0);
    expect(h.virtualSamples).toBe(1300);
    expect(s.virtualSamples).toBe(0);
    expect(h.incomingComponents).toBe(s.incomingComponents);
    const means = h.model.means;
    for (const c of [A, B, C]) expect(Math.min(...[0, 1, 2].map((k) => Math.hypot(means[2 * k]! - c[0]!, means[2 * k + 1]! - c[1]!)))).toBeLessThan(0.3);
    const central = new GaussianMixture({ nComponents: 3, covarianceType: t, seed: 3 }).fit(pooled);
    const llc = central.score(pooled);
    expect(Math.abs(h.model.score(pooled) - llc) / Math.abs(llc)).toBeLessThan(0.02);
    expect(h.traffic.rounds).toBe(1);
    for (const r of [h, again, s]) r.model.dispose();
    central.dispose();
  });

  test('K by BIC over the virtual samples finds the three clusters', () => {
    const r = fedGenGMM(clients, { client: { kMin: 1, kMax: 3, seed: 1 }, server: { kMin: 1, kMax: 6, seed: 2, serverStep: 'hierarchical' } });
    expect(r.model.nComponents).toBe(3);
    r.model.dispose();
  });

  test('options are strict and checked; a K the uploads cannot give fails the round with a typed error', () => {
    expect(() => new FedGenGMMServer({ nComponents: 2, nFeatures: 2, serverStep: 'hierachical' as never })).toThrow(InvalidParameterError);
    expect(() => new FedGenGMMServer({ nComponents: 2, nFeatures: 2, serverStep: 'hierarchical', virtualSamples: -1 })).toThrow(InvalidParameterError);
    expect(() => new FedGenGMMServer({ nComponents: 2, nFeatures: 2, serverSteps: 'hierarchical' } as never)).toThrow(/serverStep/);
    let err: unknown;
    try {
      fedGenGMM(clients, { client: { kMin: 1, kMax: 1, seed: 1 }, server: { nComponents: 9, seed: 2, serverStep: 'hierarchical' } }).model.dispose();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FedmixError);
    expect(String((err as Error).message)).toMatch(/at most the number of components/);
  });
});

describe('the CLI', () => {
  const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
  const thyroid = fileURLToPath(new URL('../ts/data/datasets/anomaly_thyroid.csv', import.meta.url));
  const fedmix = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

  test('fedmix experiment runs both server steps on the same local models', () => {
    const r = fedmix('experiment', '--data', thyroid, '--anomaly-label', 'label', '--components', '3', '--repeats', '1', '--clients', '5', '--partition', 'iid', '--methods', 'fedgengmm,fedgengmm-hierarchical', '--json', '-', '--quiet');
    expect(r.status, r.stderr).toBe(0);
    const by = Object.fromEntries((JSON.parse(r.stdout) as { results: { method: string; mean: { logLikelihood: number; rounds: number } }[] }).results.map((x) => [x.method, x.mean]));
    expect(by['fedgengmm-hierarchical']!.rounds).toBe(1);
    // the same uploads: the two global models score close to each other on the training rows
    expect(Math.abs(by['fedgengmm-hierarchical']!.logLikelihood - by.fedgengmm!.logLikelihood)).toBeLessThan(0.1 * Math.abs(by.fedgengmm!.logLikelihood));
  });

  test('the server command reads --server-step and --virtual-samples into the strict server options', () => {
    const o = serverRoleOptions('fedgengmm', { features: 2, components: 2, covariance: 'diag', h: 100, seed: 0, 'server-step': 'hierarchical', 'virtual-samples': 500 });
    expect(o).toMatchObject({ serverStep: 'hierarchical', virtualSamples: 500 });
    new FedGenGMMServer(o as never).dispose();
    const bad = fedmix('server', '--algorithm', 'fedgengmm', '--server-step', 'resample');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--server-step must be one of sample, hierarchical/);
  });
});
