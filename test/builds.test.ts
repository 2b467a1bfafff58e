/**
 * The SIMD128 and scalar builds, and repeated runs: same seed, same numbers.
 * Both builds are loaded in this one file (resetForTests swaps the instance),
 * each test with only the modules it needs (init({ features })), so that a
 * program of one feature is shown to run on its module alone. Then the package
 * as users get it: the tarball of `npm pack` (test/support/packed.ts), installed in a fresh project,
 * from ESM, CommonJS and TypeScript (needs dist/ built): every module file
 * shipped, only the chosen build's modules read, and only those init() names.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DirichletMultinomialMixture, distributedEM, fitMdm, GaussianMixture, init, KMeans, linearSumAssignment, Matrix, OneClassSVM, partition, PCA, type CovarianceType } from '../ts/index.js';
import { resetForTests } from '../ts/wasm/loader.js';
import { FEATURES, type Feature } from '../ts/wasm/modules.js';
import { moduleFile, type ModuleName } from '../ts/wasm/source.js';
import { RELAXED_MODULES } from '../ts/wasm/abi.generated.js';
import { blobs, maxRelativeError } from './helpers.js';
import { installPacked, packedTarball, REPO } from './support/packed.js';

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

/** Drops the running instance and loads `backend` with only the core and `features`. */
async function load(backend: 'simd' | 'scalar', features: Feature[]) {
  resetForTests();
  const info = await init({ backend, features });
  expect(info).toEqual({ simd: backend === 'simd', backend, features });
  return info;
}

test('the same seed gives bit-identical results run to run', async () => {
  expect((await init()).features).toEqual(FEATURES);
  const a = run();
  const b = run();
  expect(b).toEqual(a);
});

test('SIMD and scalar builds agree within 1e-12 relative', async () => {
  // mixtures and k-means are the core's: no feature module is loaded
  await load('simd', []);
  const simd = run();
  await load('scalar', []);
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

test('scoring: the SIMD build, which takes the components two at a time, gives the scalar numbers bit for bit', async () => {
  // the same models in both builds (saved from one fit): 1 to 5 components (pairs and an odd last one), 1003 rows
  // (blocks of 8 rows and a tail of 3), every covariance type, and k-means' nearest centres
  await load('simd', []);
  const models = types.flatMap((t) => [1, 2, 3, 4, 5].map((k) => {
    const gm = new GaussianMixture({ nComponents: k, covarianceType: t, seed: k, maxIter: 5 }).fit(X);
    const json = JSON.stringify(gm.toJSON());
    gm.dispose();
    return json;
  }));
  const centres = [1, 2, 5].map((k) => JSON.stringify(new KMeans({ nClusters: k, seed: k, nInit: 1 }).fit(X).toJSON()));
  const scoreAll = () => ({
    mixtures: models.map((json) => {
      const gm = GaussianMixture.fromJSON(json);
      const out = { score: gm.scoreSamples(X), proba: gm.predictProba(X).data, labels: gm.predict(X) };
      gm.dispose();
      return out;
    }),
    kmeans: centres.map((json) => {
      const km = KMeans.fromJSON(json);
      return { labels: km.predict(X), score: km.score(X) };
    }),
  });
  const simd = scoreAll();
  await load('scalar', []);
  expect(scoreAll()).toEqual(simd);
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
    // square and finite: LAPJV's initial reduction runs first (its scans' ties too)
    { shape: [203, 203], cost: Float64Array.from({ length: 203 * 203 }, u), maximize: false },
    { shape: [203, 203], cost: Float64Array.from({ length: 203 * 203 }, () => Math.floor(u() * 4)), maximize: true },
  ] as const;
  const solveAll = () => problems.map((p) => linearSumAssignment(p.cost, { shape: [...p.shape], maximize: p.maximize }));
  await load('simd', ['assignment']);
  const simd = solveAll();
  await load('scalar', ['assignment']);
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
  // PCA is the assignment module's since issue 27 (it left the core); the Dirichlet draws of partition.dirichlet
  // are the dirichlet module's (they left the core in session 8); the other partitioners are the core's
  await load('simd', ['dirichlet', 'assignment']);
  const simd = runAll();
  await load('scalar', ['dirichlet', 'assignment']);
  expect(runAll()).toEqual(simd);
});

test("precision 'float32': SIMD and scalar builds fit the same model, bit for bit, and without its module the fit names it", async () => {
  // the f32x4 kernels and their scalar twin do the same IEEE operations in the same order (fedmix-core nn/lanes.rs)
  const runAll = () =>
    types.map((t) => {
      const gm = new GaussianMixture({ nComponents: 3, covarianceType: t, seed: 9, nInit: 2, precision: 'float32' }).fit(X);
      const out = { weights: gm.weights, means: gm.means, covariances: gm.covariances, lowerBound: gm.lowerBound, nIter: gm.nIter };
      gm.dispose();
      return out;
    });
  await load('simd', ['float32']);
  const simd = runAll();
  await load('scalar', ['float32']);
  expect(runAll()).toEqual(simd);
  await load('simd', []);
  expect(() => new GaussianMixture({ nComponents: 2, precision: 'float32' }).fit(X)).toThrow(/'float32' module/);
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
  await load('simd', ['dem']);
  const simd = runAll();
  expect(runAll()).toEqual(simd);
  await load('scalar', ['dem']);
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
  await load('simd', ['dirichlet']);
  const simd = mdm();
  await load('scalar', ['dirichlet']);
  expect(mdm()).toEqual(simd);
});

test('OneClassSVM: SIMD and scalar builds take the same steps to the same model, bit for bit', async () => {
  // odd widths (a padded feature), row counts that leave partial tiles, a
  // narrow kernel for many iterations (shrinking, speculative columns), and a
  // cache too small for the kernel matrix (columns dropped and recomputed)
  const train = blobs(301, 7, 3, 11);
  const wide = blobs(203, 33, 2, 12);
  // mostly zeros, as images are: the SIMD build skips the pairs of features a tile's rows hold no value in
  const sparse = Matrix.fromRows(blobs(203, 33, 2, 13).toRows().map((r, i) => r.map((v, j) => ((i * 31 + j * 17) % 10 < 3 ? v : 0))));
  const runAll = () =>
    [
      { X: train, options: { nu: 0.3, gamma: 2 } },
      { X: train, options: { nu: 0.1, gamma: 'scale' as const, cacheSize: 0.05 } },
      { X: wide, options: { nu: 0.5, gamma: 'auto' as const } },
      { X: wide, options: { nu: 0.2, kernel: 'linear' as const } },
      { X: sparse, options: { nu: 0.5, gamma: 'scale' as const } },
      { X: sparse, options: { nu: 0.1, gamma: 'scale' as const, cacheSize: 0.02 } },
    ].map(({ X: x, options }) => {
      const m = new OneClassSVM(options).fit(x);
      const out = { nIter: m.nIter, offset: m.offset, objective: m.objective, support: m.support, dualCoef: m.dualCoef, decision: m.decisionFunction(x) };
      m.dispose();
      return out;
    });
  await load('simd', ['svm']);
  const simd = runAll();
  await load('scalar', ['svm']);
  expect(runAll()).toEqual(simd);
});

describe('the packed tarball in a fresh project', () => {
  let app = '';
  let pkg = '';
  const run = (file: string) => {
    const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
  };
  /** Every module file of both builds, and the relaxed build's own modules, as the package ships them. */
  const MODULE_FILES = [...(['simd', 'scalar'] as const).flatMap((b) => ['core', ...FEATURES].map((m) => moduleFile(b, m as ModuleName))), ...RELAXED_MODULES.map((m) => moduleFile('relaxed', m))];
  const simdFiles = (modules: readonly ModuleName[]) => modules.map((m) => moduleFile('simd', m));
  /**
   * Records the files fedmix reads (the .wasm modules, in Node): `read()`
   * gives their names since the last call. fs/promises is patched in place,
   * and ESM's view of it synced, so that either way the loader reaches it sees it.
   */
  const TRACK = (esm: boolean) => `
${esm ? "import fsp from 'node:fs/promises'; import { syncBuiltinESMExports } from 'node:module';" : "const fsp = require('node:fs/promises'); const { syncBuiltinESMExports } = require('node:module');"}
const seen = [];
const readFile = fsp.readFile;
fsp.readFile = (p, ...rest) => { seen.push(String(p).startsWith('file:') ? new URL(String(p)).pathname : String(p)); return readFile(p, ...rest); };
syncBuiltinESMExports();
const read = () => seen.splice(0).map((p) => p.slice(p.lastIndexOf('/') + 1) + (p.startsWith(${JSON.stringify(pkg)}) ? '' : ' (outside the package)'));
`;
  /** What every entry must compute: the build it runs, the files it read, and a small fit. */
  const SCRIPT = (load: string, esm = true) => `
${load}
${TRACK(esm)}
const info = await init();
const files = read();
const X = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [i % 3 === 0 ? 5 + (i % 7) / 10 : (i % 5) / 10, (i % 3) * 2 + (i % 4) / 10]));
const gm = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
// read in parallel: in any order
console.log(JSON.stringify({ info, files: files.sort(), means: Array.from(gm.means) }));
`;

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  test('npm pack holds every module of both builds, and fedmix installs from it', () => {
    app = mkdtempSync(join(tmpdir(), 'fedmix-pack-'));
    const { tarball, files } = packedTarball();
    expect(MODULE_FILES).toHaveLength(16 + RELAXED_MODULES.length);
    expect([...files.keys()].filter((f) => f.endsWith('.wasm')).sort()).toEqual(MODULE_FILES.map((f) => `dist/${f}`).sort());
    for (const f of MODULE_FILES) expect(files.get(`dist/${f}`), f).toBe(readFileSync(join(REPO, 'dist', f)).length);
    for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/inline.js', 'dist/inline.cjs', 'dist/inline.d.ts', 'dist/node.js', 'dist/worker.js', 'dist/web-worker.js']) {
      expect(files.has(f), f).toBe(true);
    }
    // the package as npm would install it; its dependencies from this repository's node_modules
    pkg = installPacked(app, tarball);
  });

  test('ESM, CommonJS and fedmix/inline compute the same fit, reading only the SIMD modules (none inline); every module file resolves through the exports map', () => {
    writeFileSync(join(app, 'esm.mjs'), SCRIPT("import { init, GaussianMixture, Matrix } from 'fedmix';"));
    writeFileSync(join(app, 'inline.mjs'), SCRIPT("import { init, GaussianMixture, Matrix } from 'fedmix/inline';"));
    writeFileSync(
      join(app, 'cjs.cjs'),
      `(async () => {${SCRIPT("const { init, GaussianMixture, Matrix } = require('fedmix');", false)}
console.log(JSON.stringify(${JSON.stringify(MODULE_FILES)}.map((f) => require.resolve('fedmix/' + f))));
})();`,
    );
    const results = ['esm.mjs', 'cjs.cjs', 'inline.mjs'].map((f) => {
      const r = run(f);
      expect(r.stderr, f).toBe('');
      expect(r.status, f).toBe(0);
      return r.stdout.split('\n');
    });
    const [esm, cjs, inline] = results.map((lines) => JSON.parse(lines[0]!) as { info: unknown; files: string[]; means: number[] });
    expect(esm!.info).toEqual({ simd: true, backend: 'simd', features: FEATURES });
    // init() without features: the core and every feature module of the SIMD build, from the package; no scalar one
    expect(esm!.files).toEqual(simdFiles(['core', ...FEATURES]).sort());
    expect(esm!.means).toHaveLength(6);
    expect(cjs).toEqual(esm);
    // the same modules, embedded: nothing read
    expect(inline).toEqual({ ...esm, files: [] });
    expect(JSON.parse(results[1]![1]!)).toEqual(MODULE_FILES.map((f) => join(pkg, 'dist', f)));
  });

  test('the entries by feature, ESM and CommonJS: init() without features reads the modules the imported entries use, and a module no entry registered is a WasmError naming the entries', () => {
    // fedmix/core alone: the core and 'dem' (the threads' steps); the same fit as fedmix's
    writeFileSync(join(app, 'entry-core.mjs'), SCRIPT("import { init, GaussianMixture, Matrix } from 'fedmix/core';"));
    writeFileSync(join(app, 'entry-core.cjs'), `(async () => {${SCRIPT("const { init, GaussianMixture, Matrix } = require('fedmix/core');", false)}})();`);
    // fedmix/core and fedmix/fedavg: their modules; the 'svm' module, which neither uses, has no file to load
    const FEDAVG = (esm: boolean) => `
${esm ? "import { init, WasmError } from 'fedmix/core';\nimport { fedAvg } from 'fedmix/fedavg';" : "const { init, WasmError } = require('fedmix/core');\nconst { fedAvg } = require('fedmix/fedavg');"}
${TRACK(esm)}
const info = await init();
const files = read().sort();
let svm;
try {
  await init({ features: ['svm'] });
} catch (e) {
  svm = { wasmError: e instanceof WasmError, message: e.message };
}
console.log(JSON.stringify({ info, files, fedAvg: typeof fedAvg, svm }));
`;
    writeFileSync(join(app, 'entry-fedavg.mjs'), FEDAVG(true));
    writeFileSync(join(app, 'entry-fedavg.cjs'), `(async () => {${FEDAVG(false)}})();`);
    const out = ['entry-core.mjs', 'entry-core.cjs', 'entry-fedavg.mjs', 'entry-fedavg.cjs'].map((f) => {
      const r = run(f);
      expect(r.stderr, f).toBe('');
      expect(r.status, f).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    });
    expect(out[0]).toMatchObject({ info: { simd: true, backend: 'simd', features: ['dem', 'dirichlet', 'float32'] }, files: simdFiles(['core', 'dem', 'dirichlet', 'float32']).sort() });
    expect(out[0]!.means).toHaveLength(6);
    expect(out[1]).toEqual(out[0]);
    expect(out[2]).toEqual({
      info: { simd: true, backend: 'simd', features: ['dem', 'nn', 'dirichlet', 'float32'] },
      files: simdFiles(['core', 'dem', 'nn', 'dirichlet', 'float32']).sort(),
      fedAvg: 'function',
      svm: { wasmError: true, message: expect.stringMatching(/^the simd build's svm module has no file here: no entry this program imports uses it\. Import an entry that does \(fedmix, or the feature's: docs\/browsers-and-workers\.md\)/) as unknown },
    });
    expect(out[3]).toEqual(out[2]);
  });

  test('init({ features }) reads only the modules it names; a later init() adds more to the running instance', () => {
    writeFileSync(
      join(app, 'features.mjs'),
      `import { init, GaussianMixture, OneClassSVM, Matrix, WasmError } from 'fedmix';
${TRACK(true)}
const steps = [];
const X = Matrix.fromRows(Array.from({ length: 60 }, (_, i) => [(i % 5) / 10 + (i % 2), (i % 3) / 10]));
const core = await init({ features: [] });
steps.push({ info: core, files: read() });
// the core's own models need nothing more
const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(X);
const labels = Array.from(gm.predict(X));
try {
  new OneClassSVM({ nu: 0.2 }).fit(X);
  steps.push('fitted without the svm module');
} catch (e) {
  steps.push({ wasmError: e instanceof WasmError, message: e.message });
}
const svm = await init({ features: ['svm'] });
steps.push({ info: svm, files: read() });
const ocsvm = new OneClassSVM({ nu: 0.2 }).fit(X);
// the model made before the svm module came is in the same memory, and still works
steps.push({ svm: ocsvm.decisionFunction(X).every(Number.isFinite), same: Array.from(gm.predict(X)).every((l, i) => l === labels[i]) });
steps.push({ info: await init({ features: ['svm', 'nn'] }), files: read() });
steps.push({ info: await init(), files: read() });
steps.push({ info: await init({ features: 'all' }), files: read() });
steps.push({ info: await init({ features: ['dem'] }), files: read() });
console.log(JSON.stringify(steps));
`,
    );
    writeFileSync(
      join(app, 'scalar.mjs'),
      `import { init } from 'fedmix';
${TRACK(true)}
const info = await init({ backend: 'scalar', features: ['dirichlet', 'nn', 'nn'] });
console.log(JSON.stringify({ info, files: read() }));
`,
    );
    const r = run('features.mjs');
    expect(r.stderr).toBe('');
    const steps = JSON.parse(r.stdout) as unknown[];
    const rest = FEATURES.filter((f) => f !== 'svm' && f !== 'nn');
    expect(steps).toEqual([
      { info: { simd: true, backend: 'simd', features: [] }, files: ['fedmix-simd.wasm'] },
      {
        wasmError: true,
        message: "OneClassSVM needs fedmix's 'svm' module, which was not loaded: call await init({ features: [..., 'svm'] }) (an init() without features that starts fedmix loads every module the entries imported use: all of them with 'fedmix')",
      },
      { info: { simd: true, backend: 'simd', features: ['svm'] }, files: ['fedmix-simd-svm.wasm'] },
      { svm: true, same: true },
      { info: { simd: true, backend: 'simd', features: ['svm', 'nn'] }, files: ['fedmix-simd-nn.wasm'] },
      // init() without features adds nothing while fedmix runs; 'all' reads the rest
      { info: { simd: true, backend: 'simd', features: ['svm', 'nn'] }, files: [] },
      { info: { simd: true, backend: 'simd', features: FEATURES }, files: expect.arrayContaining(simdFiles(rest)) as unknown },
      { info: { simd: true, backend: 'simd', features: FEATURES }, files: [] },
    ]);
    expect((steps[6] as { files: string[] }).files).toHaveLength(rest.length);
    const scalar = run('scalar.mjs');
    expect(scalar.stderr).toBe('');
    // features in the order of modules.json, a name given twice loaded once
    expect(JSON.parse(scalar.stdout)).toEqual({ info: { simd: false, backend: 'scalar', features: ['nn', 'dirichlet'] }, files: ['fedmix-scalar.wasm', 'fedmix-scalar-dirichlet.wasm', 'fedmix-scalar-nn.wasm'] });
  });

  test('TypeScript sees the types of every entry, init() options included', () => {
    writeFileSync(
      join(app, 'main.ts'),
      `import { init, GaussianMixture, type BuildSource, type Feature, type InitOptions, type ModuleName, type WasmSource } from 'fedmix';
import { init as initInline } from 'fedmix/inline';
import { WorkerTransport } from 'fedmix/node';
const source: WasmSource = new URL('https://example.org/fedmix-simd.wasm');
const features: Feature[] = ['svm', 'nn'];
const module: ModuleName = 'core';
const modules: BuildSource = { [module]: source, nn: new Uint8Array(8) };
const options: InitOptions = { backend: 'auto', features, wasm: { simd: modules, scalar: new Uint8Array(8) } };
export async function main(): Promise<number> {
  const info = await init(options);
  await initInline({ backend: info.backend, features: info.features.includes('svm') ? 'all' : [] });
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
    // and type errors are reported (the check is real): a build and a feature that do not exist (a module that
    // does not exist is a runtime error only: WebAssembly.Module's type is empty, so any object is one to TypeScript)
    writeFileSync(join(app, 'main.ts'), `import { init } from 'fedmix';\nvoid init({ wasm: { avx: new Uint8Array(8) } });\nvoid init({ features: ['gpu'] });\n`);
    const bad = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { encoding: 'utf8', timeout: 120_000 });
    expect(bad.status).not.toBe(0);
    for (const name of ['avx', 'gpu']) expect(bad.stdout).toMatch(new RegExp(`main\\.ts\\(\\d+,\\d+\\): error TS\\d+: .*${name}`));
  });

  test('without the .wasm files, fedmix says how to fix it and fedmix/inline still works', () => {
    const feature = (b: 'simd' | 'scalar') => FEATURES.map((f) => moduleFile(b, f));
    writeFileSync(
      join(app, 'missing.mjs'),
      `import { init, GaussianMixture, Matrix, WasmError } from 'fedmix';
const features = process.argv[2] === undefined ? undefined : JSON.parse(process.argv[2]);
try {
  const info = await init({ features });
  new GaussianMixture({ nComponents: 1 }).fit(Matrix.fromRows([[1], [2], [3]]));
  console.log('loaded', JSON.stringify(info.features));
} catch (e) { console.log(e instanceof WasmError, e.message); }
try { await init({ features: ['svm'] }); console.log('svm loaded'); } catch (e) { console.log(e instanceof WasmError, e.message); }`,
    );
    const missing = (features?: Feature[]) => {
      const r = spawnSync(process.execPath, ['missing.mjs', ...(features ? [JSON.stringify(features)] : [])], { cwd: app, encoding: 'utf8', timeout: 60_000 });
      // nothing on stderr: a module that fails while others load is a WasmError to catch, not an unhandled rejection ending the process
      expect(r.stderr.trim()).toBe('');
      return r.stdout.trim().split('\n');
    };
    // the feature modules gone: a program of the core alone still runs; one that needs a module is told which file is missing
    for (const f of [...feature('simd'), ...feature('scalar')]) unlinkSync(join(pkg, 'dist', f));
    const [core, svm] = missing([]);
    expect(core).toBe('loaded []');
    expect(svm).toMatch(/^true the SIMD build's svm module at file:.*\/dist\/fedmix-simd-svm\.wasm could not be read \(no such file\).*init\(\{ wasm \}\) or fedmix\/inline/);
    const [all] = missing();
    expect(all).toMatch(new RegExp(`^true the SIMD build's (${FEATURES.join('|')}) module at file:.*/dist/fedmix-simd-\\1\\.wasm could not be read \\(no such file\\)`));
    // then the core modules too: the core's error is the one reported
    for (const f of ['fedmix-simd.wasm', 'fedmix-scalar.wasm']) unlinkSync(join(pkg, 'dist', f));
    expect(existsSync(join(pkg, 'dist', 'fedmix-simd.wasm'))).toBe(false);
    expect(missing()[0]).toMatch(/^true the SIMD build at file:.*fedmix-simd\.wasm could not be read \(no such file\).*init\(\{ wasm \}\) or fedmix\/inline/);
    const inline = run('inline.mjs');
    expect(inline.status).toBe(0);
    expect((JSON.parse(inline.stdout) as { info: unknown }).info).toEqual({ simd: true, backend: 'simd', features: FEATURES });
  });
});
