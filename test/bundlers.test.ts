/**
 * The package through a bundler, as an application would use it: Vite (the
 * one in node_modules) builds a page that imports fedmix; the build must emit
 * every module of both builds as an asset (it recognises `new
 * URL('./fedmix-simd.wasm', import.meta.url)` and the like in dist/) and embed
 * none, and the page, served as built, must fetch only the SIMD modules init()
 * asks for and compute what Node computes.
 *
 * Needs `bash scripts/setup.sh` first (it builds dist/ and installs chromium).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import * as fedmix from '../dist/index.js';
import { FEATURES } from '../ts/wasm/modules.js';
import { RELAXED_MODULES } from '../ts/wasm/abi.generated.js';
import { moduleFile, type Backend, type ModuleName } from '../ts/wasm/source.js';
import type { Page } from 'playwright-core';
import { launchChromium, originOf, ROOT, startStaticServer, stopStaticServer, wasmRequests, watchProblems } from './support/browser.js';

const ROWS = [[0, 0], [0.1, 0.2], [5, 5], [5.2, 4.9], [0.2, 0.1], [4.8, 5.1], [0.05, 0.3], [5.1, 5.3]];

/** Modules the page below does not use, each with a string of its code that minifying keeps. */
const UNUSED: [string, string][] = [
  ['federated.feddistr.server.js', 'the server has nothing to aggregate'],
  ['federated.mdm.server.js', 'aggregator must be an MdmAggregator'],
  ['graph.louvain.js', 'graphology-communities-louvain: the given graph is not a valid graphology instance'],
  ['experiments.fedgengmm.run.js', 'give components (a fixed K) or kRange'],
];

/** The page: the core module alone first; window.load(features) is a later init() ('all': every module). */
const MAIN = `import { init, GaussianMixture, Matrix, OneClassSVM } from 'fedmix';
const rows = Matrix.fromRows(${JSON.stringify(ROWS)});
const info = await init({ features: [] });
const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(rows);
let error;
try {
  new OneClassSVM({ nu: 0.5 }).fit(rows);
} catch (e) {
  error = { name: e.name, message: e.message };
}
window.load = async (features) => {
  const info = await init(features === undefined ? undefined : { features });
  const svm = new OneClassSVM({ nu: 0.5 }).fit(rows);
  return { info, scores: Array.from(svm.decisionFunction(rows)) };
};
window.result = { info, means: Array.from(gm.means), weights: Array.from(gm.weights), error };
`;

/**
 * Serves the app built into `dir` (its page `html`) to headless Chromium, waits
 * for the page's `window.result`, and hands it to `check` with the paths the
 * page requested and the page; the page must report no problem.
 */
async function onBuiltPage<R>(dir: string, html: string, timeout: number, check: (result: R, requested: string[], page: Page) => Promise<void>): Promise<void> {
  const requested: string[] = [];
  const problems: string[] = [];
  const server = await startStaticServer(readFileSync(join(dir, html), 'utf8'), requested, dir);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    watchProblems(page, problems);
    await page.goto(`${originOf(server)}/`);
    await page.waitForFunction(() => (globalThis as { result?: unknown }).result !== undefined, undefined, { timeout });
    await check(await page.evaluate(() => (globalThis as unknown as { result: R }).result), requested, page);
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
    await stopStaticServer(server);
  }
}

let app = '';
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

test('a Vite build emits every module of both builds as an asset, embeds none, and the page loads only the SIMD modules init() asks for', async () => {
  app = mkdtempSync(join(tmpdir(), 'fedmix-vite-'));
  mkdirSync(join(app, 'node_modules'));
  // fedmix as installed (its package.json exports point at dist/), Arrow beside it
  symlinkSync(ROOT, join(app, 'node_modules', 'fedmix'));
  symlinkSync(join(ROOT, 'node_modules', 'apache-arrow'), join(app, 'node_modules', 'apache-arrow'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  writeFileSync(join(app, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script type="module" src="/main.js"></script></body></html>');
  writeFileSync(join(app, 'main.js'), MAIN);
  const { build } = await import('vite');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out'), target: 'es2022' } });

  const assets = readdirSync(join(app, 'out', 'assets'));
  const wasmFiles = assets.filter((f) => f.endsWith('.wasm'));
  const modules = ['core', ...FEATURES] as const;
  expect(wasmFiles).toHaveLength(2 * modules.length + RELAXED_MODULES.length);
  // each module's asset, found by its bytes (Vite adds a hash to the name, and a hash may hold '-')
  const assetOf = (backend: Backend, m: ModuleName): string => {
    const bytes = readFileSync(join(ROOT, 'dist', moduleFile(backend, m)));
    const same = wasmFiles.filter((f) => readFileSync(join(app, 'out', 'assets', f)).equals(bytes));
    expect(same, moduleFile(backend, m)).toHaveLength(1);
    expect(same[0]!.startsWith(moduleFile(backend, m).replace(/\.wasm$/, '-')), same[0]).toBe(true);
    return same[0]!;
  };
  // Chromium validates relaxed SIMD: the page runs the relaxed build, the SIMD build's modules but its own 'nn'
  const relaxed = (m: ModuleName) => (RELAXED_MODULES as readonly ModuleName[]).includes(m);
  const simd = new Map(modules.map((m) => [m, `/assets/${assetOf(relaxed(m) ? 'relaxed' : 'simd', m)}`]));
  for (const m of modules) {
    assetOf('scalar', m);
    if (relaxed(m)) assetOf('simd', m);
  }
  const paths = (names: readonly ModuleName[]) => names.map((m) => simd.get(m)!).sort();
  for (const f of assets.filter((a) => a.endsWith('.js'))) expect(readFileSync(join(app, 'out', 'assets', f), 'utf8'), f).not.toContain('AGFzbQEAAAA');
  // Rollup keeps only the modules the page imports (dist/ is one file per module, "sideEffects": false):
  // none of the algorithms it does not use, whose messages are in dist/ (nor WebWorkerTransport's worker: see below)
  const js = assets.filter((a) => a.endsWith('.js') && !a.startsWith('web-worker-')).map((f) => readFileSync(join(app, 'out', 'assets', f), 'utf8')).join('\n');
  for (const [file, marker] of UNUSED) {
    expect(readFileSync(join(ROOT, 'dist', file), 'utf8'), file).toContain(marker);
    expect(js, file).not.toContain(marker);
  }

  await onBuiltPage(join(app, 'out'), 'index.html', 30_000, async (inBrowser: unknown, requested, page) => {
    await fedmix.init();
    const gm = new fedmix.GaussianMixture({ nComponents: 2, seed: 1 }).fit(fedmix.Matrix.fromRows(ROWS));
    expect(inBrowser).toEqual({
      info: { simd: true, backend: 'relaxed', features: [] },
      means: Array.from(gm.means),
      weights: Array.from(gm.weights),
      error: { name: 'WasmError', message: expect.stringMatching(/^OneClassSVM needs fedmix's 'svm' module, which was not loaded/) as unknown },
    });
    gm.dispose();
    expect(wasmRequests(requested)).toEqual(paths(['core']));

    // a later init() adds the svm module to the running instance: its asset alone is fetched
    const load = (features: readonly string[] | 'all' | undefined) =>
      page.evaluate((f) => (globalThis as unknown as { load(f: readonly string[] | 'all' | undefined): Promise<{ info: unknown; scores: number[] }> }).load(f), features);
    const svm = new fedmix.OneClassSVM({ nu: 0.5 }).fit(fedmix.Matrix.fromRows(ROWS));
    const scores = Array.from(svm.decisionFunction(fedmix.Matrix.fromRows(ROWS)));
    svm.dispose();
    expect(await load(['svm'])).toEqual({ info: { simd: true, backend: 'relaxed', features: ['svm'] }, scores });
    expect(wasmRequests(requested)).toEqual(paths(['core', 'svm']));
    // init() without features adds nothing to the running instance; 'all' adds the rest, each once, and never a scalar module
    expect(await load(undefined)).toEqual({ info: { simd: true, backend: 'relaxed', features: ['svm'] }, scores });
    expect(wasmRequests(requested)).toEqual(paths(['core', 'svm']));
    expect(await load('all')).toEqual({ info: { simd: true, backend: 'relaxed', features: [...FEATURES] }, scores });
    expect(wasmRequests(requested)).toEqual(paths(modules));
  });
});

test('a Vite build of a program that uses init, GaussianMixture and Matrix emits no federation worker, only the threads\' chunks and shard worker, loaded on demand', async () => {
  // after the test above, in the same app (fedmix and Arrow installed in its node_modules)
  expect(app).not.toBe('');
  writeFileSync(join(app, 'small.html'), '<!doctype html><html><head><meta charset="utf-8"></head><body><script type="module" src="/small.js"></script></body></html>');
  writeFileSync(join(app, 'small.js'), `import { init, GaussianMixture, Matrix } from 'fedmix';
await init({ features: [] });
const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(Matrix.fromRows(${JSON.stringify(ROWS)}));
window.result = Array.from(gm.means);
`);
  const { build } = await import('vite');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out-small'), target: 'es2022', rollupOptions: { input: join(app, 'small.html') } } });
  const assets = readdirSync(join(app, 'out-small', 'assets'));
  const scripts = assets.filter((a) => a.endsWith('.js'));
  // WebWorkerTransport's worker (the whole library again) is built and emitted only for a program that can start one:
  // its URL is written where the transport starts a worker, in the form bundlers recognise as one
  expect(scripts.filter((a) => a.startsWith('web-worker'))).toEqual([]);
  // a GaussianMixture can fit on threads (fitAsync): the pool and the shards' E-step are chunks loaded on demand, with
  // their Web Worker, and modules the page shares with them (the WASM loader, the thread count's option) are chunks of
  // their own; nothing else (Rollup names the chunk of the shared-memory channel, which the pool and the shards' step
  // both import, after the shards' step: two chunks called parallel.gmm-shard)
  const page = scripts.filter((a) => /^(small|wasm\.[a-z-]+|parallel\.threads)-/.test(a));
  expect(scripts.filter((a) => !page.includes(a)).map((a) => a.replace(/-[\w-]{8}\.js$/, ''))).toEqual(['parallel.gmm-shard', 'parallel.gmm-shard', 'parallel.row-shards', 'web-shard-worker']);
  // the page's own JavaScript: fedmix's entry and the WASM loader, none of the algorithms it does not use
  const js = page.map((a) => readFileSync(join(app, 'out-small', 'assets', a), 'utf8')).join('\n');
  expect(js).toContain('fedmix-simd');
  for (const [file, marker] of UNUSED) expect(js, file).not.toContain(marker);
});

test('apache-arrow is in no chunk of a program that does not use Arrow; loadArrow() brings it as a chunk of its own, and toArrow() before it is a typed error', async () => {
  // after the tests above, in the same app (fedmix and Arrow installed in its node_modules)
  expect(app).not.toBe('');
  // apache-arrow's own code, as minifying keeps it (a message of its IPC writer)
  const ARROW_MARKER = 'RecordBatchWriter is closed';
  // the small app of the test above: init, GaussianMixture, Matrix
  const small = readdirSync(join(app, 'out-small', 'assets')).filter((a) => a.endsWith('.js'));
  for (const f of small) expect(readFileSync(join(app, 'out-small', 'assets', f), 'utf8'), f).not.toContain(ARROW_MARKER);
  writeFileSync(join(app, 'arrow.html'), '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script type="module" src="/arrow.js"></script></body></html>');
  writeFileSync(join(app, 'arrow.js'), `import { init, loadArrow, GaussianMixture, Matrix } from 'fedmix';
await init({ features: [] });
const rows = Matrix.fromRows(${JSON.stringify(ROWS)});
const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(rows);
let before;
try {
  gm.toArrow();
} catch (e) {
  before = { name: e.name, code: e.code, message: e.message };
}
await loadArrow();
const table = gm.toArrow();
const back = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(rows.toArrow());
window.result = { before, rows: table.numRows, columns: table.schema.fields.map((f) => f.name), weight: Array.from(table.getChild('weight').toArray()), means: Array.from(back.means) };
`);
  const { build } = await import('vite');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out-arrow'), target: 'es2022', rollupOptions: { input: join(app, 'arrow.html') } } });
  const scripts = readdirSync(join(app, 'out-arrow', 'assets')).filter((a) => a.endsWith('.js'));
  const withArrow = scripts.filter((f) => readFileSync(join(app, 'out-arrow', 'assets', f), 'utf8').includes(ARROW_MARKER));
  // one chunk holds apache-arrow, and it is not the page's entry
  expect(withArrow).toHaveLength(1);
  expect(withArrow[0]!.startsWith('arrow-'), withArrow[0]).toBe(false);

  await onBuiltPage(join(app, 'out-arrow'), 'arrow.html', 30_000, async (inBrowser: unknown, requested) => {
    await fedmix.init();
    const gm = new fedmix.GaussianMixture({ nComponents: 2, seed: 1 }).fit(fedmix.Matrix.fromRows(ROWS));
    expect(inBrowser).toEqual({
      before: { name: 'ArrowNotLoadedError', code: 'ARROW_NOT_LOADED', message: 'GaussianMixture.toArrow() needs apache-arrow, which fedmix loads on demand: call await loadArrow() once before' },
      rows: 2,
      columns: ['component', 'weight', 'mean', 'covariance'],
      weight: Array.from(gm.weights),
      means: Array.from(gm.means),
    });
    gm.dispose();
    expect(requested.some((r) => r.endsWith(withArrow[0]!))).toBe(true);
  });
});

/**
 * The .wasm files and worker scripts of a Vite build, by the package file each is (Vite adds a hash to the name):
 * 'fedmix-simd-dem.wasm', 'web-shard-worker.js', ...
 */
function emitted(out: string): { wasm: string[]; workers: string[] } {
  const assets = readdirSync(join(out, 'assets'));
  const original = (a: string) => a.replace(/-[\w-]{8}\.(wasm|js)$/, '.$1');
  return { wasm: assets.filter((a) => a.endsWith('.wasm')).map(original).sort(), workers: assets.filter((a) => /worker/.test(a)).map(original).sort() };
}

/** Every build's files of `modules` (the relaxed build's own where it has one): what a program whose init() may choose any build can load. */
const filesOf = (modules: readonly ModuleName[]) =>
  modules.flatMap((m) => [moduleFile('simd', m), moduleFile('scalar', m), ...((RELAXED_MODULES as readonly ModuleName[]).includes(m) ? [moduleFile('relaxed', m)] : [])]).sort();

test("a Vite build of a program that imports fedmix/core emits only the files of the core and the 'dem', 'dirichlet' and 'float32' modules and the shard worker, and they are enough: init(), a fit and a fit on two threads in Chromium", async () => {
  // after the tests above, in the same app (fedmix and Arrow installed in its node_modules)
  expect(app).not.toBe('');
  writeFileSync(join(app, 'core.html'), '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script type="module" src="/core.js"></script></body></html>');
  // 600 rows in two clusters: fitAsync cuts at least 256 rows a shard, so two threads take part
  writeFileSync(join(app, 'core.js'), `import { init, GaussianMixture, KMeans, Matrix } from 'fedmix/core';
const info = await init();
const rows = Matrix.fromRows(Array.from({ length: 600 }, (_, i) => [(i % 2) * 5 + Math.sin(i) * 0.3, (i % 2) * 5 + Math.cos(i * 1.7) * 0.3]));
const one = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(rows);
const two = await new GaussianMixture({ nComponents: 2, seed: 1, threads: 2 }).fitAsync(rows);
const km = new KMeans({ nClusters: 2, seed: 1 }).fit(rows);
window.result = { info, means: Array.from(one.means), threaded: Array.from(two.means), inertia: km.inertia };
`);
  const { build } = await import('vite');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out-core'), target: 'es2022', rollupOptions: { input: join(app, 'core.html') } } });
  // the core, 'dem' (GaussianMixture's and KMeans's steps on threads) and 'dirichlet' (Rng's gamma, Dirichlet and categorical
  // draws), SIMD and scalar (the relaxed build takes the SIMD build's: none has a relaxed module); the shard worker, since a
  // GaussianMixture can fit on threads; no federation worker
  expect(emitted(join(app, 'out-core'))).toEqual({ wasm: filesOf(['core', 'dem', 'dirichlet', 'float32']), workers: ['web-shard-worker.js'] });

  await onBuiltPage(join(app, 'out-core'), 'core.html', 60_000, async (r: { info: unknown; means: number[]; threaded: number[]; inertia: number }, requested) => {
    // init() without features loads what the entries imported registered: the core, 'dem' and 'dirichlet', not every module
    expect(r.info).toEqual({ simd: true, backend: 'relaxed', features: ['dem', 'dirichlet', 'float32'] });
    expect(r.threaded).toHaveLength(4);
    for (let i = 0; i < 4; i++) expect(Math.abs(r.threaded[i]! - r.means[i]!)).toBeLessThan(1e-12 * Math.max(1, Math.abs(r.means[i]!)));
    expect(r.inertia).toBeGreaterThan(0);
    // the SIMD files of the core, 'dem' and 'dirichlet' (the threads were sent the page's compiled modules: nothing more is fetched)
    expect(wasmRequests(requested).map((p) => p.replace(/^\/assets\//, '').replace(/-[\w-]{8}\.wasm$/, '.wasm')).sort()).toEqual([moduleFile('simd', 'dem'), moduleFile('simd', 'core'), moduleFile('simd', 'dirichlet'), moduleFile('simd', 'float32')].sort());
    expect(requested.some((p) => /\/web-shard-worker-[\w-]{8}\.js$/.test(p))).toBe(true);
  });
}, 120_000);

test('a Vite build of a FedAvg program (fedmix/core and fedmix/fedavg) emits the files of the modules FedAvg can load and runs a federation in Chromium; fedmix/svm adds only its own', async () => {
  expect(app).not.toBe('');
  writeFileSync(join(app, 'fedavg.html'), '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script type="module" src="/fedavg.js"></script></body></html>');
  writeFileSync(join(app, 'fedavg.js'), `import { init, Matrix } from 'fedmix/core';
import { fedAvg } from 'fedmix/fedavg';
const info = await init();
const client = (shift) => ({ X: Matrix.fromRows(Array.from({ length: 24 }, (_, i) => [Math.sin(i + shift), Math.cos(i * 0.7 + shift)])) });
const r = fedAvg([client(0), client(1), client(2)], { network: { sizes: [2, 3, 2], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 }, rounds: 2, epochs: 1 });
window.result = { info, rounds: r.history.length, parameters: r.parameters instanceof Float32Array };
`);
  const { build } = await import('vite');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out-fedavg'), target: 'es2022', rollupOptions: { input: join(app, 'fedavg.html') } } });
  // fedmix/core's (the core, 'dem'), and fedmix/fedavg's: 'nn' (relaxed build included) and 'dirichlet' (the runtime's secure
  // aggregation); no worker script (it uses no GaussianMixture, hence no threads, and no WebWorkerTransport)
  expect(emitted(join(app, 'out-fedavg'))).toEqual({ wasm: filesOf(['core', 'dem', 'dirichlet', 'float32', 'nn']), workers: [] });

  writeFileSync(join(app, 'svm.js'), "import { init, Matrix } from 'fedmix/core';\nimport { OneClassSVM } from 'fedmix/svm';\nawait init();\nwindow.result = new OneClassSVM({ nu: 0.5 }).fit(Matrix.fromRows([[0, 0], [1, 1]]));\n");
  writeFileSync(join(app, 'svm.html'), '<!doctype html><html><body><script type="module" src="/svm.js"></script></body></html>');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: join(app, 'out-svm'), target: 'es2022', rollupOptions: { input: join(app, 'svm.html') } } });
  expect(emitted(join(app, 'out-svm')).wasm).toEqual(filesOf(['core', 'dem', 'dirichlet', 'float32', 'svm']));

  await onBuiltPage(join(app, 'out-fedavg'), 'fedavg.html', 60_000, async (r: unknown, requested) => {
    expect(r).toEqual({ info: { simd: true, backend: 'relaxed', features: ['dem', 'nn', 'dirichlet', 'float32'] }, rounds: 2, parameters: true });
    // the relaxed build: its own 'nn', the SIMD build's other modules
    const fetched = wasmRequests(requested).map((p) => p.replace(/^\/assets\//, '').replace(/-[\w-]{8}\.wasm$/, '.wasm')).sort();
    expect(fetched).toEqual((['core', 'dem', 'nn', 'dirichlet', 'float32'] as const).map((m) => moduleFile('relaxed', m)).sort());
  });
}, 120_000);

test("each entry registers exactly the WebAssembly modules its code can call: the core, and the feature modules of every fm_ export in its tree-shaken bundle", async () => {
  const { buildSync } = await import('esbuild');
  const { featureOf } = await import('../ts/wasm/modules.js');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  // the entries by feature (ts/entries/), and fedmix itself
  const entries = readdirSync(join(ROOT, 'ts', 'entries')).map((f) => f.replace(/\.ts$/, ''));
  expect(entries.map((e) => `./${e}`).filter((e) => !(e in pkg.exports))).toEqual([]);
  const reach = (file: string) => {
    const text = buildSync({
      entryPoints: [join(ROOT, file)],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      external: ['apache-arrow', 'piscina', 'mqtt', 'aedes', 'ws', 'stream', 'node:*'],
      logLevel: 'silent',
    }).outputFiles[0]!.text;
    const needed = new Set<string>(['core', ...[...new Set(text.match(/\bfm_\w+/g) ?? [])].flatMap((n) => featureOf(n) ?? [])]);
    const registered = new Set([...text.matchAll(/registerModuleFiles\("(\w+)"/g)].map((m) => m[1]!));
    return { needed: [...needed].sort(), registered: [...registered].sort() };
  };
  const all = ['core', ...FEATURES].sort();
  expect(reach('ts/index.ts')).toEqual({ needed: all, registered: all });
  const found = Object.fromEntries(entries.map((e) => [e, reach(`ts/entries/${e}.ts`)]));
  for (const [e, { needed, registered }] of Object.entries(found)) expect(registered, e).toEqual(needed);
  // what docs/browsers-and-workers.md's table says
  expect(Object.fromEntries(Object.entries(found).map(([e, r]) => [e, r.registered]))).toEqual({
    communities: ['assignment', 'core', 'dem', 'dirichlet', 'float32', 'nn', 'svm'],
    core: ['core', 'dem', 'dirichlet', 'float32'],
    dem: ['core', 'dem', 'dirichlet', 'float32'],
    fedavg: ['core', 'dirichlet', 'nn'],
    feddistr: ['assignment', 'core', 'dem', 'dirichlet', 'float32', 'nn'],
    federation: ['core', 'dirichlet'],
    fedgem: ['core', 'dem', 'dirichlet', 'fedgem'],
    fedgengmm: ['core', 'dem', 'dirichlet', 'float32'],
    mdm: ['core', 'dirichlet'],
    networks: ['core', 'nn'],
    svm: ['core', 'svm'],
  });
});
