/**
 * The built ESM package (dist/index.js) in a real browser: Debian's Chromium,
 * driven by playwright-core, loads it over HTTP with only an import map to
 * resolve bare specifiers (no bundler), and must compute exactly the numbers
 * Node computes with the same build. This is what "runs in browsers" promises.
 *
 * Needs `bash scripts/setup.sh` first (it builds dist/ and installs chromium).
 */
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// the build under test, not ts/: the browser gets this very file
import * as nodeFedmix from '../dist/index.js';
import { blobs } from './helpers.js';
import { tinyFashionMnist } from './support/idx.js';
import { FEATURES } from '../ts/wasm/modules.js';
import { launchChromium, modulePaths, originOf, ROOT, startStaticServer, stopStaticServer, wasmRequests, watchProblems } from './support/browser.js';

type Fedmix = typeof nodeFedmix;
type CovarianceType = nodeFedmix.CovarianceType;


/**
 * Browser entry points of apache-arrow and of the bare specifiers it imports
 * itself (checked against node_modules: Arrow.dom.mjs pulls in 'tslib' and
 * 'flatbuffers', nothing else). Arrow.dom.mjs is what the package's non-node
 * "import" export condition and its "browser" field pick; Arrow.node.mjs would
 * drag in node:stream.
 */
const IMPORT_MAP = {
  imports: {
    'apache-arrow': '/node_modules/apache-arrow/Arrow.dom.mjs',
    tslib: '/node_modules/tslib/tslib.es6.mjs',
    flatbuffers: '/node_modules/flatbuffers/mjs/flatbuffers.js',
  },
} as const;

/**
 * The page: an import map, then a module script that loads the package. The
 * import is dynamic inside try/catch so that a resolution failure becomes a
 * readable status instead of a silent page that never gets ready.
 */
const PAGE_HTML = `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
<script type="module">
  try {
    window.fedmix = await import('/dist/ENTRY');
    window.fedmixStatus = 'ok';
  } catch (e) {
    window.fedmixStatus = 'import failed: ' + (e && e.stack ? e.stack : String(e));
  }
</script>
</head>
<body></body>
</html>`;

/** What the page script leaves on window. */
interface PageGlobals {
  fedmix?: Fedmix;
  fedmixStatus?: string;
}

interface ModelResult {
  covarianceType: CovarianceType;
  weights: number[];
  means: number[];
  covariances: number[];
  lowerBound: number;
  nIter: number;
  scoreSamples: number[];
  sample: number[];
  sampleLabels: number[];
}

interface SuiteResult {
  info: nodeFedmix.InitInfo;
  models: ModelResult[];
  arrow: {
    numRows: number;
    columns: string[];
    /** Matrix.fromArrow(Matrix.fromRows(rows).toArrow()).data */
    roundTrip: number[];
    /** Matrix.fromRows(rows).data, for comparison */
    original: number[];
    /** means of a 'full' fit on the Arrow table itself (exercises Matrix.from's instanceof Table) */
    meansFromTable: number[];
  };
}

/**
 * The whole computation, run unchanged on both sides: in Node with the imported
 * module, in the page via its source text (Playwright-style function shipping).
 * So it must be self-contained: no reference to anything outside its body
 * except its parameters and standard globals. Plain arrays out, because that is
 * what crosses the Playwright boundary losslessly and what toEqual compares.
 */
async function runSuite(lib: Fedmix, rows: number[][]): Promise<SuiteResult> {
  const info = await lib.init();
  const types: CovarianceType[] = ['full', 'tied', 'diag', 'spherical'];
  const models = types.map((covarianceType): ModelResult => {
    const gm = new lib.GaussianMixture({ nComponents: 3, covarianceType, seed: 7 }).fit(rows);
    const drawn = gm.sample(50);
    const result: ModelResult = {
      covarianceType,
      weights: Array.from(gm.weights),
      means: Array.from(gm.means),
      covariances: Array.from(gm.covariances),
      lowerBound: gm.lowerBound,
      nIter: gm.nIter,
      scoreSamples: Array.from(gm.scoreSamples(rows)),
      sample: Array.from(drawn.X.data),
      sampleLabels: Array.from(drawn.labels),
    };
    gm.dispose();
    return result;
  });
  const matrix = lib.Matrix.fromRows(rows);
  // apache-arrow is loaded on demand in browsers (issue 27): toArrow() needs it
  await lib.loadArrow();
  const table = matrix.toArrow();
  const back = lib.Matrix.fromArrow(table);
  const fromTable = new lib.GaussianMixture({ nComponents: 3, covarianceType: 'full', seed: 7 }).fit(table);
  const meansFromTable = Array.from(fromTable.means);
  fromTable.dispose();
  return {
    info,
    models,
    arrow: {
      numRows: table.numRows,
      columns: table.schema.fields.map((f) => f.name),
      roundTrip: Array.from(back.data),
      original: Array.from(matrix.data),
      meansFromTable,
    },
  };
}

// deterministic rows: 3 shifted 3-D Gaussian groups, passed to the page as plain arrays
const ROWS = blobs(300, 3, 3, 2024).toRows();

describe('dist/index.js in Chromium', () => {
  let server: Server | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let origin = '';
  const requested: string[] = [];
  /** console errors, uncaught page errors, failed or non-2xx requests */
  const problems: string[] = [];
  let browserResult: SuiteResult;

  beforeAll(async () => {
    // fail loudly, never skip: a missing browser must not pass as "browser tested"
    for (const target of Object.values(IMPORT_MAP.imports)) {
      if (!existsSync(join(ROOT, target))) throw new Error(`import map target ${target} is missing from node_modules`);
    }

    server = await startStaticServer(PAGE_HTML.replace('ENTRY', 'index.js'), requested);
    origin = originOf(server);
    browser = await launchChromium();
    page = await browser.newPage();
    watchProblems(page, problems);

    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
    const status = await page.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus);
    expect(status, 'loading /dist/index.js in the page').toBe('ok');

    // run runSuite's own source in the page, against the module the page imported
    browserResult = await page.evaluate(
      async ({ source, rows }) => {
        const run = new Function(`return (${source});`)() as (lib: unknown, rows: number[][]) => Promise<SuiteResult>;
        return run((globalThis as unknown as PageGlobals).fedmix, rows);
      },
      { source: runSuite.toString(), rows: ROWS },
    );
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stopStaticServer(server);
  });

  test('the page is a real browser context with no Node globals', async () => {
    const env = await page.evaluate(() => ({
      userAgent: navigator.userAgent,
      process: typeof (globalThis as Record<string, unknown>).process,
      require: typeof (globalThis as Record<string, unknown>).require,
      buffer: typeof (globalThis as Record<string, unknown>).Buffer,
    }));
    expect(env.userAgent).toMatch(/Chrom(e|ium)\//);
    expect({ process: env.process, require: env.require, buffer: env.buffer }).toEqual({
      process: 'undefined',
      require: 'undefined',
      buffer: 'undefined',
    });
  });

  // Chromium validates relaxed SIMD by default (since 114): init() takes the relaxed build (issue 27 item 3)
  test('init() picks the relaxed-SIMD build in Chromium, with every feature module', () => {
    expect(browserResult.info).toEqual({ simd: true, backend: 'relaxed', features: [...FEATURES] });
  });

  test('the browser gives exactly the numbers Node gives', async () => {
    const nodeResult = await runSuite(nodeFedmix, ROWS);
    // sanity: the fits are real (not empty arrays that would trivially match)
    for (const m of nodeResult.models) {
      expect(m.weights).toHaveLength(3);
      expect(m.means).toHaveLength(9);
      expect(m.scoreSamples).toHaveLength(ROWS.length);
      expect(m.sample).toHaveLength(50 * 3);
      expect(Number.isFinite(m.lowerBound)).toBe(true);
      expect(m.nIter).toBeGreaterThan(0);
    }
    // per model first, so a failure names the covariance type
    for (let i = 0; i < nodeResult.models.length; i++) {
      expect(browserResult.models[i], nodeResult.models[i]!.covarianceType).toEqual(nodeResult.models[i]);
    }
    // Chromium runs the relaxed build, Node 20 (no flag) the SIMD build: the same core module, so the same numbers
    expect(browserResult.info).toEqual({ ...nodeResult.info, backend: 'relaxed' });
    expect({ ...browserResult, info: nodeResult.info }).toEqual(nodeResult);
  });

  test('Arrow round trip in the browser is lossless', () => {
    const { arrow } = browserResult;
    expect(arrow.numRows).toBe(ROWS.length);
    expect(arrow.columns).toEqual(['x0', 'x1', 'x2']);
    expect(arrow.roundTrip).toEqual(arrow.original);
    expect(arrow.original).toEqual([0, 1, 2].flatMap((j) => ROWS.map((r) => r[j]!)));
    // fitting the Arrow table is fitting the rows
    expect(arrow.meansFromTable).toEqual(browserResult.models[0]!.means);
  });

  test('the ESM bundle reaches no Node-only API', async () => {
    // dist/index.js and every chunk it imports, as the browser fetches them
    const seen = new Map<string, string>();
    const visit = async (path: string): Promise<void> => {
      if (seen.has(path)) return;
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
      const code = await res.text();
      seen.set(path, code);
      for (const m of code.matchAll(/(?:^|[;\s])(?:import|export)\s*(?:[^'"`;]*?\sfrom\s*)?["'](\.[^"']+)["']/g)) await visit(new URL(m[1]!, `${origin}${path}`).pathname);
    };
    await visit('/dist/index.js');
    expect(seen.size).toBeGreaterThan(1);
    const statics = new Set<string>();
    const dynamics = new Set<string>();
    for (const code of seen.values()) {
      expect(code).not.toMatch(/\brequire\s*\(/);
      // one exception: the loader reads its .wasm file through Node's fs, in Node only (process.versions.node and a file: URL)
      const nodeRefs = [...code.matchAll(/["'`](node:[^"'`]*)["'`]/g)].map((m) => m[1]);
      expect(nodeRefs.filter((r) => r !== 'node:fs/promises')).toEqual([]);
      if (nodeRefs.length > 0) expect(code).toMatch(/async function nodeFs\(\)/);
      for (const m of code.matchAll(/(?:^|[;\s])(?:import|export)\s*(?:[^'"`;]*?\sfrom\s*)?["']([^"']+)["']/g)) statics.add(m[1]!);
      for (const m of code.matchAll(/\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g)) dynamics.add(m[1]!);
    }
    // bare specifiers: none statically; apache-arrow only when loadArrow() is called (issue 27), mqtt only when a broker connection is made
    expect([...statics].filter((x) => !x.startsWith('.') && !x.startsWith('/'))).toEqual([]);
    expect([...dynamics].filter((x) => !x.startsWith('.') && !x.startsWith('/')).sort()).toEqual(['apache-arrow', 'mqtt']);
  });

  test("Fashion-MNIST from gzip bytes through Chromium's DecompressionStream: what Node reads, and a corrupt file's error", async () => {
    const tiny = tinyFashionMnist(30);
    const files = { images: Array.from(gzipSync(tiny.images)), labels: Array.from(gzipSync(tiny.labels)) };
    const read = async (lib: Fedmix, f: { images: number[]; labels: number[] }) => {
      await lib.init();
      const options = { n: 10, sample: 'stratified' as const, seed: 4 };
      const d = await lib.fashionMnist({ images: Uint8Array.from(f.images), labels: Uint8Array.from(f.labels) }, options);
      const spoiled = Uint8Array.from(f.images.slice(0, f.images.length - 9));
      const error = await lib.fashionMnist({ images: spoiled, labels: Uint8Array.from(f.labels) }).then(
        () => 'no error',
        (e: Error) => `${e.name}: ${e.message.split(' (')[0]}`,
      );
      return { X: Array.from(d.X.data), labels: Array.from(d.labels), indices: Array.from(d.indices), classNames: d.classNames, error };
    };
    const inBrowser = await page.evaluate(
      async ({ source, f }) => {
        const run = new Function(`return (${source});`)() as (lib: unknown, f: unknown) => Promise<unknown>;
        return run((globalThis as unknown as PageGlobals).fedmix, f);
      },
      { source: read.toString(), f: files },
    );
    const inNode = await read(nodeFedmix, files);
    expect(inNode.labels).toHaveLength(10);
    expect(inNode.X).toHaveLength(10 * 784);
    expect(inNode.error).toBe('InvalidDataError: train-images-idx3-ubyte.gz is not a valid gzip file');
    expect(inBrowser).toEqual(inNode);
  });

  test('the page loaded only the package and its browser dependencies, without errors', () => {
    expect(problems).toEqual([]);
    expect(requested).toContain('/dist/index.js');
    expect(requested).toContain(IMPORT_MAP.imports['apache-arrow']);
    // the build the engine supports, each of its modules fetched once as a file (streaming compilation,
    // however many init()s ran); never a module of the other build
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', 'all', 'relaxed'));
    const allowed = /^\/(dist\/|node_modules\/(apache-arrow|tslib|flatbuffers)\/|$)/;
    expect(requested.filter((p) => !allowed.test(p))).toEqual([]);
    // Arrow's Node stream adapters (they import node:stream) must stay out of the graph
    expect(requested.filter((p) => p.includes('/io/node/') || p.includes('Arrow.node'))).toEqual([]);
  });
});

/**
 * Serves PAGE_HTML with `entry` as its library, opens it in Chromium, waits
 * for the library to load, runs `body`, then checks that the page logged no
 * problem and closes everything.
 */
async function onPage(entry: string, body: (p: { page: Page; requested: string[] }) => Promise<void>): Promise<void> {
  const requested: string[] = [];
  const problems: string[] = [];
  const server = await startStaticServer(PAGE_HTML.replace('ENTRY', entry), requested);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    watchProblems(page, problems);
    await page.goto(`${originOf(server)}/`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus)).toBe('ok');
    await body({ page, requested });
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
    await stopStaticServer(server);
  }
}

describe('dist/inline.js in Chromium: the embedded builds, no .wasm request', () => {
  test('init() and a fit give the numbers of dist/index.js, and the page asks for no .wasm file', async () => {
    await onPage('inline.js', async ({ page, requested }) => {
    const inBrowser = await page.evaluate(
      async ({ source, rows }) => {
        const run = new Function(`return (${source});`)() as (lib: unknown, rows: number[][]) => Promise<SuiteResult>;
        return run((globalThis as unknown as PageGlobals).fedmix, rows);
      },
      { source: runSuite.toString(), rows: ROWS },
    );
    expect(inBrowser.info).toEqual({ simd: true, backend: 'simd', features: [...FEATURES] });
    expect(inBrowser).toEqual(await runSuite(nodeFedmix, ROWS));
    expect(requested).toContain('/dist/inline.js');
    expect(requested.filter((p) => p.endsWith('.wasm'))).toEqual([]);
    });
  }, 120_000);
});

describe('init({ features }) in Chromium: the page fetches the modules it names, and no other', () => {
  test('the core alone, the error that names a missing module, then a module added to the running instance', async () => {
    await onPage('index.js', async ({ page, requested }) => {
    expect(wasmRequests(requested)).toEqual([]);

    // the core module alone: a GaussianMixture fits; OneClassSVM says which module it needs
    const coreOnly = await page.evaluate(async (rows) => {
      const f = (globalThis as unknown as PageGlobals).fedmix!;
      const info = await f.init({ features: [] });
      const gm = new f.GaussianMixture({ nComponents: 3, seed: 7 }).fit(rows);
      const means = Array.from(gm.means);
      gm.dispose();
      // kept in WASM memory across the addition below: the svm module must use the core's memory as it is
      (globalThis as { kept?: unknown }).kept = f.Matrix.fromRows(rows);
      const svm = new f.OneClassSVM({ nu: 0.2 });
      const error = (() => {
        try {
          svm.fit(rows);
          return { name: 'no error', message: '', typed: false };
        } catch (e) {
          return { name: (e as Error).name, message: (e as Error).message, typed: e instanceof f.WasmError };
        }
      })();
      return { info, means, error };
    }, ROWS);
    expect(coreOnly.info).toEqual({ simd: true, backend: 'relaxed', features: [] });
    expect(wasmRequests(requested)).toEqual(['/dist/fedmix-simd.wasm']);
    expect(coreOnly.error.typed).toBe(true);
    expect(coreOnly.error.name).toBe('WasmError');
    expect(coreOnly.error.message).toMatch(/^OneClassSVM needs fedmix's 'svm' module, which was not loaded: call await init\(\{ features: \[\.\.\., 'svm'\] \}\)/);
    await nodeFedmix.init();
    const gm = new nodeFedmix.GaussianMixture({ nComponents: 3, seed: 7 }).fit(ROWS);
    expect(coreOnly.means).toEqual(Array.from(gm.means));
    gm.dispose();

    // a later init() adds the svm module to the same instance: one more file, and the earlier Matrix is still good
    const withSvm = await page.evaluate(async () => {
      const f = (globalThis as unknown as PageGlobals).fedmix!;
      const info = await f.init({ features: ['svm'] });
      const kept = (globalThis as unknown as { kept: InstanceType<typeof f.Matrix> }).kept;
      const svm = new f.OneClassSVM({ nu: 0.2 }).fit(kept);
      const scores = Array.from(svm.decisionFunction(kept));
      svm.dispose();
      // what the running instance already has costs no request
      const again = await f.init({ features: ['svm'] });
      return { info, again, scores };
    });
    expect(withSvm.info).toEqual({ simd: true, backend: 'relaxed', features: ['svm'] });
    expect(withSvm.again).toEqual(withSvm.info);
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', ['svm']));
    const svm = new nodeFedmix.OneClassSVM({ nu: 0.2 }).fit(ROWS);
    expect(withSvm.scores).toEqual(Array.from(svm.decisionFunction(ROWS)));
    svm.dispose();

    // init() without features adds nothing while fedmix runs; features: 'all' brings the rest, each fetched once in all
    const same = await page.evaluate(async () => (await (globalThis as unknown as PageGlobals).fedmix!.init()).features);
    expect(same).toEqual(['svm']);
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', ['svm']));
    const all = await page.evaluate(async () => (await (globalThis as unknown as PageGlobals).fedmix!.init({ features: 'all' })).features);
    expect(all).toEqual([...FEATURES]);
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', 'all', 'relaxed'));

    // the relaxed build's networks (fused multiply-adds in the GEMM) agree with Node's SIMD build within rounding
    const X = Array.from({ length: 203 }, (_, i) => Array.from({ length: 37 }, (_, j) => ((i * 7 + j * 13) % 29) / 29));
    const y = Array.from({ length: 203 }, (_, i) => ['a', 'b', 'c'][(i * 5) % 3]!);
    const mlpOptions = { hiddenLayerSizes: [24], maxIter: 4, batchSize: 32, randomState: 5 };
    const inChromium = await page.evaluate(
      ({ X, y, mlpOptions }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const mlp = new f.MLPClassifier(mlpOptions).fit(X, y);
        const out = { parameters: Array.from(mlp.getParameters()), probabilities: Array.from(mlp.predictProba(X).data) };
        mlp.dispose();
        return out;
      },
      { X, y, mlpOptions },
    );
    expect((await nodeFedmix.init()).backend).toBe('simd');
    const mlp = new nodeFedmix.MLPClassifier(mlpOptions).fit(X, y);
    const relative = (a: number[], b: ArrayLike<number>) => a.reduce((w, v, i) => Math.max(w, Math.abs(v - b[i]!)), 0) / Array.from(b).reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(relative(inChromium.parameters, mlp.getParameters())).toBeLessThan(1e-4);
    expect(relative(inChromium.probabilities, mlp.predictProba(X).data)).toBeLessThan(1e-4);
    // not the same bits: the fused multiply-adds ran
    expect(inChromium.parameters).not.toEqual(Array.from(mlp.getParameters()));
    mlp.dispose();
    });
  }, 120_000);
});
