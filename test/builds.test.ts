/**
 * The SIMD128 and scalar builds, and repeated runs: same seed, same numbers.
 * Both builds are loaded in this one file (resetForTests swaps the instance).
 * Then the package as users get it: the tarball of `npm pack`, installed in a
 * fresh project, from ESM, CommonJS and TypeScript (needs dist/ built).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { DirichletMultinomialMixture, distributedEM, fitMdm, GaussianMixture, init, KMeans, linearSumAssignment, OneClassSVM, partition, PCA, type CovarianceType } from '../ts/index.js';
import { resetForTests } from '../ts/wasm/loader.js';
import { blobs, maxRelativeError } from './helpers.js';

const X = blobs(1003, 5, 3, 42); // 1003 rows: SIMD loops leave a scalar tail
const types: CovarianceType[] = ['full', 'tied', 'diag', 'spherical'];

function run() {
  return types.map((t) => {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType: t, seed: 9, nInit: 2, initParams: 'k-means++' }).fit(X);
    const out = {
      weights: gm.weights,
      means: gm.means,
      covariances: gm.covariances,
      lowerBound: gm.lowerBound,
      nIter: gm.nIter,
      score: gm.scoreSamples(X),
      proba: gm.predictProba(X).data,
      sample: gm.sample(257).X.data,
      kmeans: new KMeans({ nClusters: 3, seed: 4 }).fit(X).centers,
    };
    gm.dispose();
    return out;
  });
}

afterAll(() => resetForTests());

test('the same seed gives bit-identical results run to run', async () => {
  await init();
  const a = run();
  const b = run();
  expect(b).toEqual(a);
});

test('SIMD and scalar builds agree within 1e-12 relative', async () => {
  resetForTests();
  expect((await init({ backend: 'simd' })).simd).toBe(true);
  const simd = run();
  resetForTests();
  const info = await init({ backend: 'scalar' });
  expect(info).toEqual({ simd: false, backend: 'scalar' });
  const scalar = run();
  for (let i = 0; i < types.length; i++) {
    const [s, c] = [simd[i]!, scalar[i]!];
    expect(c.nIter).toBe(s.nIter);
    for (const key of ['weights', 'means', 'covariances', 'score', 'proba', 'sample', 'kmeans'] as const) {
      expect(maxRelativeError(c[key], s[key], 1e-300), `${types[i]} ${key}`).toBeLessThan(1e-12);
    }
    expect(maxRelativeError([c.lowerBound], [s.lowerBound])).toBeLessThan(1e-12);
  }
});

test('linearSumAssignment: SIMD and scalar builds choose the same cells, bit for bit', async () => {
  // odd widths leave a partial block of columns; small integers make ties, which
  // both builds must break the same way
  let seed = 7;
  const u = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const problems = [
    { shape: [301, 257], cost: Float64Array.from({ length: 301 * 257 }, u), maximize: false },
    { shape: [200, 233], cost: Float64Array.from({ length: 200 * 233 }, () => Math.floor(u() * 5)), maximize: true },
    { shape: [150, 150], cost: Float64Array.from({ length: 150 * 150 }, () => (u() < 0.3 ? Infinity : Math.floor(u() * 50))), maximize: false },
  ] as const;
  const solveAll = () => problems.map((p) => linearSumAssignment(p.cost, { shape: [...p.shape], maximize: p.maximize }));
  resetForTests();
  await init({ backend: 'simd' });
  const simd = solveAll();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(solveAll()).toEqual(simd);
});

test('PCA and the partitioners: SIMD and scalar builds give the same numbers, bit for bit', async () => {
  const labels = Array.from({ length: X.nRows }, (_, i) => i % 7);
  const runAll = () => {
    const pca = new PCA({ nComponents: 3 }).fit(X);
    return {
      pca: [pca.components, pca.explainedVariance, pca.explainedVarianceRatio, pca.noiseVariance, pca.transform(X).data],
      iid: partition.iid(labels, { clients: 9, seed: 1 }),
      dirichlet: partition.dirichlet(labels, { clients: 9, alpha: 0.01, seed: 2 }),
      quantity: partition.quantity(labels, { clients: 9, alpha: 2, seed: 3 }),
      shift: partition.shift(X, { parts: 4, beta: 0.3, clients: 9, alpha: 2, seed: 4 }),
    };
  };
  resetForTests();
  await init({ backend: 'simd' });
  const simd = runAll();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(runAll()).toEqual(simd);
});

test('distributedEM: the same seed gives the same model, in both builds', async () => {
  // four clients of different sizes (40%, 30%, 20%, 10% of the rows)
  const owner = (i: number) => [0, 0, 0, 0, 1, 1, 1, 2, 2, 3][(i * 7919) % 10]!;
  const parts = [0, 1, 2, 3].map((c) => X.selectRows(Array.from({ length: X.nRows }, (_, i) => i).filter((i) => owner(i) === c)));
  const runAll = () =>
    (['separated', 'subset', 'kfed'] as const).flatMap((initMethod) =>
      types.map((covarianceType) => {
        const r = distributedEM(parts, { nComponents: 3, covarianceType, init: initMethod, featureRange: [-12, 12], seed: 5 });
        const out = { means: r.model.means, covariances: r.model.covariances, weights: r.model.weights, rounds: r.rounds, bytesUp: r.traffic.bytesUp };
        r.model.dispose();
        return out;
      }),
    );
  resetForTests();
  await init({ backend: 'simd' });
  const simd = runAll();
  expect(runAll()).toEqual(simd);
  resetForTests();
  await init({ backend: 'scalar' });
  const scalar = runAll();
  for (let i = 0; i < simd.length; i++) {
    expect(scalar[i]!.rounds).toBe(simd[i]!.rounds);
    for (const key of ['means', 'covariances', 'weights'] as const) {
      expect(maxRelativeError(scalar[i]![key], simd[i]![key], 1e-300), `${i} ${key}`).toBeLessThan(1e-12);
    }
  }
});

test('mixtures of Dirichlet-multinomials: SIMD and scalar builds, bit for bit (sampling, scoring, a federated fit)', async () => {
  const mdm = () => {
    const truth = new DirichletMultinomialMixture({
      tau: [0.3, 0.7],
      alpha: [
        [0.1, 0.5, 2, 0.05, 1],
        [3, 1, 0.5, 2, 2],
      ],
      pi: [Array.from({ length: 40 }, (_, i) => (i >= 9 ? 1 / 31 : 0)), Array.from({ length: 40 }, () => 1 / 40)],
    });
    const { histograms } = truth.sample(300, { seed: 5 });
    const fit = fitMdm(histograms, { nComponents: 2, rounds: 10, cohort: 120, seed: 6 });
    return { histograms: histograms.data, ll: truth.logPmf(histograms), tau: fit.model.tau, alpha: fit.model.alpha, pi: fit.model.pi };
  };
  resetForTests();
  await init({ backend: 'simd' });
  const simd = mdm();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(mdm()).toEqual(simd);
});

test('OneClassSVM: SIMD and scalar builds take the same steps to the same model, bit for bit', async () => {
  // odd widths (a padded feature), row counts that leave partial tiles, a
  // narrow kernel for many iterations (shrinking, speculative columns), and a
  // cache too small for the kernel matrix (columns dropped and recomputed)
  const train = blobs(301, 7, 3, 11);
  const wide = blobs(203, 33, 2, 12);
  const runAll = () =>
    [
      { X: train, options: { nu: 0.3, gamma: 2 } },
      { X: train, options: { nu: 0.1, gamma: 'scale' as const, cacheSize: 0.05 } },
      { X: wide, options: { nu: 0.5, gamma: 'auto' as const } },
      { X: wide, options: { nu: 0.2, kernel: 'linear' as const } },
    ].map(({ X: x, options }) => {
      const m = new OneClassSVM(options).fit(x);
      const out = { nIter: m.nIter, offset: m.offset, objective: m.objective, support: m.support, dualCoef: m.dualCoef, decision: m.decisionFunction(x) };
      m.dispose();
      return out;
    });
  resetForTests();
  await init({ backend: 'simd' });
  const simd = runAll();
  resetForTests();
  await init({ backend: 'scalar' });
  expect(runAll()).toEqual(simd);
});

const REPO = fileURLToPath(new URL('..', import.meta.url));

describe('the packed tarball in a fresh project', () => {
  let app = '';
  let pkg = '';
  const run = (file: string) => {
    const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
  };
  /** What every entry must compute: the build it runs and a small fit. */
  const SCRIPT = (load: string) => `
${load}
const info = await init();
const X = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i % 3 === 0 ? 5 + (i % 7) / 10 : (i % 5) / 10, (i % 3) * 2 + (i % 4) / 10]));
const gm = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
console.log(JSON.stringify({ info, means: Array.from(gm.means) }));
`;

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  test('npm pack holds the .wasm builds, and fedmix installs from it', () => {
    app = mkdtempSync(join(tmpdir(), 'fedmix-pack-'));
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [packed] = JSON.parse(out) as [{ filename: string; files: { path: string; size: number }[] }];
    const files = new Map(packed.files.map((f) => [f.path, f.size]));
    for (const f of ['dist/fedmix-simd.wasm', 'dist/fedmix-scalar.wasm']) {
      expect(files.get(f), f).toBe(readFileSync(join(REPO, f)).length);
    }
    for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/inline.js', 'dist/inline.cjs', 'dist/inline.d.ts', 'dist/node.js', 'dist/worker.js', 'dist/web-worker.js']) {
      expect(files.has(f), f).toBe(true);
    }
    // the package as npm would install it; its dependencies from this repository's node_modules
    mkdirSync(join(app, 'node_modules'));
    execFileSync('tar', ['-xzf', join(app, packed.filename), '-C', app]);
    execFileSync('mv', [join(app, 'package'), join(app, 'node_modules', 'fedmix')]);
    pkg = join(app, 'node_modules', 'fedmix');
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies?: Record<string, string> };
    // peer dependencies (apache-arrow) are the user's project's own; here, the repository's copy
    for (const dep of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies ?? {})]) {
      mkdirSync(join(app, 'node_modules', dep, '..'), { recursive: true });
      symlinkSync(join(REPO, 'node_modules', dep), join(app, 'node_modules', dep));
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  });

  test('ESM, CommonJS and fedmix/inline compute the same fit; the .wasm files resolve through the exports map', () => {
    writeFileSync(join(app, 'esm.mjs'), SCRIPT("import { init, GaussianMixture, Matrix } from 'fedmix';"));
    writeFileSync(join(app, 'inline.mjs'), SCRIPT("import { init, GaussianMixture, Matrix } from 'fedmix/inline';"));
    writeFileSync(
      join(app, 'cjs.cjs'),
      `(async () => {${SCRIPT("const { init, GaussianMixture, Matrix } = require('fedmix');")}
console.log(require.resolve('fedmix/fedmix-simd.wasm'));
})();`,
    );
    const results = ['esm.mjs', 'cjs.cjs', 'inline.mjs'].map((f) => {
      const r = run(f);
      expect(r.stderr, f).toBe('');
      expect(r.status, f).toBe(0);
      return r.stdout.split('\n');
    });
    const [esm, cjs, inline] = results.map((lines) => JSON.parse(lines[0]!) as { info: unknown; means: number[] });
    expect(esm!.info).toEqual({ simd: true, backend: 'simd' });
    expect(esm!.means).toHaveLength(6);
    expect(cjs).toEqual(esm);
    expect(inline).toEqual(esm);
    expect(results[1]![1]).toBe(join(pkg, 'dist', 'fedmix-simd.wasm'));
  });

  test('TypeScript sees the types of every entry, init() options included', () => {
    writeFileSync(
      join(app, 'main.ts'),
      `import { init, GaussianMixture, type InitOptions, type WasmSource } from 'fedmix';
import { init as initInline } from 'fedmix/inline';
import { WorkerTransport } from 'fedmix/node';
const source: WasmSource = new URL('https://example.org/fedmix-simd.wasm');
const options: InitOptions = { backend: 'auto', wasm: { simd: source, scalar: new Uint8Array(8) } };
export async function main(): Promise<number> {
  const info = await init(options);
  await initInline({ backend: info.backend });
  const gm = new GaussianMixture({ nComponents: 2 });
  return typeof WorkerTransport.start === 'function' && !gm.isFitted ? 1 : 0;
}
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, noEmit: true, skipLibCheck: true }, files: ['main.ts'] }),
    );
    const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { encoding: 'utf8', timeout: 120_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    // and a type error is reported (the check is real)
    writeFileSync(join(app, 'main.ts'), `import { init } from 'fedmix';\nvoid init({ wasm: { avx: new Uint8Array(8) } });\n`);
    const bad = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { encoding: 'utf8', timeout: 120_000 });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/avx/);
  });

  test('without the .wasm files, fedmix says how to fix it and fedmix/inline still works', () => {
    for (const f of ['fedmix-simd.wasm', 'fedmix-scalar.wasm']) unlinkSync(join(pkg, 'dist', f));
    expect(existsSync(join(pkg, 'dist', 'fedmix-simd.wasm'))).toBe(false);
    writeFileSync(
      join(app, 'missing.mjs'),
      `import { init, WasmError } from 'fedmix';
try { await init(); console.log('loaded'); } catch (e) { console.log(e instanceof WasmError, e.message); }`,
    );
    const missing = run('missing.mjs');
    expect(missing.stdout).toMatch(/^true the SIMD build at file:.*fedmix-simd\.wasm could not be read \(no such file\).*init\(\{ wasm \}\) or fedmix\/inline/);
    const inline = run('inline.mjs');
    expect(inline.status).toBe(0);
    expect((JSON.parse(inline.stdout) as { info: unknown }).info).toEqual({ simd: true, backend: 'simd' });
  });
});
