/**
 * fedmix/browser (dist/browser.js) in headless Chromium with no bundler and
 * no import map: a page's plain <script type=module> and a module Web Worker
 * import the file by URL and must compute the numbers Node computes; a
 * FedmixWorker fits GaussianMixtures and hosts federated clients off the main
 * thread with the same results; nothing outside dist/ is fetched and no Node
 * built-in is named in the build.
 *
 * Needs `bash scripts/setup.sh` first (dist/, chromium).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// the build the comparison runs in Node: the same sources as dist/browser.js
import * as nodeFedmix from '../dist/index.js';
import { blobs } from './helpers.js';
import { FEATURES } from '../ts/wasm/modules.js';
import { moduleFile } from '../ts/wasm/source.js';
import { ISOLATION_HEADERS, launchChromium, modulePaths, originOf, ROOT, startStaticServer, stopStaticServer, wasmRequests, watchProblems } from './support/browser.js';

type Fedmix = typeof nodeFedmix;

/** No import map: the page imports the file by URL; init() is left to each test. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
  import * as fedmix from '/dist/browser.js';
  window.fedmix = fedmix;
  window.fedmixStatus = 'ok';
</script>
<script>
  window.addEventListener('error', (e) => { window.fedmixStatus = 'error: ' + e.message; });
</script>
</head><body></body></html>`;

interface PageGlobals {
  fedmix?: Fedmix;
  fedmixStatus?: string;
}

const ROWS = blobs(240, 3, 3, 77).toRows();
const TYPES = ['full', 'tied', 'diag', 'spherical'] as const;

/**
 * Runs unchanged in Node, in the page and in a module worker (shipped as
 * source text): fits of every covariance type, their scores and samples, and
 * an Arrow round trip (Arrow comes from inside the build in the browser).
 */
async function suite(lib: Fedmix, rows: number[][]) {
  const info = await lib.init();
  const models = (['full', 'tied', 'diag', 'spherical'] as const).map((covarianceType) => {
    const gm = new lib.GaussianMixture({ nComponents: 3, covarianceType, seed: 11 }).fit(rows);
    const out = {
      weights: Array.from(gm.weights),
      means: Array.from(gm.means),
      covariances: Array.from(gm.covariances),
      lowerBound: gm.lowerBound,
      nIter: gm.nIter,
      labels: Array.from(gm.predict(rows)),
      scores: Array.from(gm.scoreSamples(rows)),
      sample: Array.from(gm.sample(20).X.data),
    };
    gm.dispose();
    return out;
  });
  await lib.loadArrow();
  const table = lib.Matrix.fromRows(rows).toArrow();
  const gm = new lib.GaussianMixture({ nComponents: 3, seed: 11 }).fit(table);
  const fromTable = Array.from(gm.means);
  gm.dispose();
  return { info, models, arrow: { numRows: table.numRows, columns: table.schema.fields.map((f) => f.name), fromTable } };
}

type SuiteResult = Awaited<ReturnType<typeof suite>>;

const DEM = { nComponents: 3, nFeatures: 2, covarianceType: 'diag' as const, init: 'kfed' as const, seed: 5, maxRounds: 8 };
const CLIENT_ROWS = [0, 1, 2].map((c) => blobs(150, 2, 3, 40 + c, 5).toRows());

describe('dist/browser.js without a bundler or an import map', () => {
  let server: Server | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let origin = '';
  const requested: string[] = [];
  const problems: string[] = [];
  let inNode: SuiteResult;

  beforeAll(async () => {
    inNode = await suite(nodeFedmix, ROWS);
    server = await startStaticServer(PAGE, requested);
    origin = originOf(server);
    browser = await launchChromium();
    page = await browser.newPage();
    watchProblems(page, problems);
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus)).toBe('ok');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stopStaticServer(server);
  });

  test('the Node run is a real fit', () => {
    expect(inNode.models).toHaveLength(TYPES.length);
    for (const m of inNode.models) {
      expect(m.weights).toHaveLength(3);
      expect(m.labels).toHaveLength(ROWS.length);
      expect(new Set(m.labels).size).toBe(3);
      expect(Number.isFinite(m.lowerBound)).toBe(true);
    }
    expect(inNode.arrow.numRows).toBe(ROWS.length);
  });

  test('a FedmixWorker fits off the main thread before the page has loaded the core, with transferred typed arrays', async () => {
    const out = await page.evaluate(
      async ({ rows }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const w = await f.FedmixWorker.start();
        try {
          const fit = await w.fitGaussianMixture(rows, { nComponents: 3, covarianceType: 'full', seed: 11 });
          const typed = [fit.weights, fit.means, fit.covariances, fit.precisionsCholesky, fit.scoreSamples].every((a) => a instanceof Float64Array) && fit.labels instanceof Int32Array;
          // each array arrived in a buffer of its own (transferred, not a view into a shared copy)
          const own = [fit.weights, fit.means, fit.labels, fit.scoreSamples].every((a) => a.buffer.byteLength === a.byteLength);
          // a bad option is refused on the main thread; bad data in the worker comes back as its class
          const badOption = await w.fitGaussianMixture(rows, { nComponents: 0 }).then(
            () => 'no error',
            (e: Error) => e.name,
          );
          const badData = await w.fitGaussianMixture([[1, 2]], { nComponents: 3 }).then(
            () => 'no error',
            (e: Error) => e.name,
          );
          return {
            typed,
            own,
            badOption,
            badData,
            weights: Array.from(fit.weights),
            means: Array.from(fit.means),
            covariances: Array.from(fit.covariances),
            lowerBound: fit.lowerBound,
            nIter: fit.nIter,
            labels: Array.from(fit.labels),
            scores: Array.from(fit.scoreSamples),
            json: fit.toJSON(),
          };
        } finally {
          await w.close();
        }
      },
      { rows: ROWS },
    );
    expect(out.typed).toBe(true);
    expect(out.own).toBe(true);
    expect(out.badOption).toBe('InvalidParameterError');
    expect(out.badData).toBe('InvalidDataError');
    const full = inNode.models[0]!;
    const { typed: _t, own: _o, badOption: _b, badData: _d, json, ...fit } = out;
    expect(fit).toEqual({ weights: full.weights, means: full.means, covariances: full.covariances, lowerBound: full.lowerBound, nIter: full.nIter, labels: full.labels, scores: full.scores });
    // the worker, not the page, fetched the build: the page had not called init(), so the worker's
    // own init() loaded every module of the build Chromium validates (relaxed SIMD: the SIMD modules but 'nn'), each once
    expect(requested).toContain('/dist/web-worker.js');
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', 'all', 'relaxed'));
    // the fit's saved form is a model in Node
    await nodeFedmix.init();
    const back = nodeFedmix.GaussianMixture.fromJSON(json);
    expect(Array.from(back.scoreSamples(ROWS))).toEqual(full.scores);
    back.dispose();
  }, 60_000);

  test('a FedmixWorker refuses bad calls with typed errors, and a worker module that fails to load fails its tasks', async () => {
    const outcomes = await page.evaluate(async () => {
      const f = (globalThis as unknown as PageGlobals).fedmix!;
      const w = await f.FedmixWorker.start();
      const hostile = new Proxy({}, { get: () => { throw new Error('getter trap'); }, ownKeys: () => { throw new Error('ownKeys trap'); } });
      const calls: Record<string, () => Promise<unknown>> = {
        'fit(null)': () => w.fitGaussianMixture(null as never),
        'fit(rows of NaN)': () => w.fitGaussianMixture([[NaN, 1], [2, 3]]),
        'fit(rows, hostile options)': () => w.fitGaussianMixture([[1, 2], [3, 4]], hostile as never),
        'fit(rows, unknown covarianceType)': () => w.fitGaussianMixture([[1, 2], [3, 4]], { covarianceType: 'round' as never }),
        'clients([])': () => w.clients([]),
        'clients(null)': () => w.clients(null as never),
        'clients(spec of an unknown algorithm)': () => w.clients([{ algorithm: 'nope' as never, id: 'a', data: { data: new Float64Array(4), nRows: 2, nCols: 2 } }]).then((t) => t.unborn.length),
        'start({ workerUrl: 5 })': () => f.FedmixWorker.start({ workerUrl: 5 as never }),
        'fit in a worker whose module is missing': async () => {
          const broken = await f.FedmixWorker.start({ workerUrl: '/dist/no-such-worker.js' });
          try {
            return await broken.fitGaussianMixture([[1, 2], [3, 4], [5, 6]], { nComponents: 1 });
          } finally {
            await broken.close();
          }
        },
      };
      const out: Record<string, string> = {};
      for (const [name, call] of Object.entries(calls)) {
        out[name] = await call().then(
          (v) => `resolved ${JSON.stringify(v)}`,
          (e: unknown) => (e instanceof f.FedmixError ? e.name : `untyped ${String(e)}`),
        );
      }
      await w.close();
      return out;
    });
    expect(outcomes).toEqual({
      'fit(null)': 'InvalidDataError',
      'fit(rows of NaN)': 'InvalidDataError',
      'fit(rows, hostile options)': 'InvalidParameterError',
      'fit(rows, unknown covarianceType)': 'InvalidParameterError',
      'clients([])': 'InvalidParameterError',
      'clients(null)': 'InvalidParameterError',
      // a client that cannot be made is left out of the federation, with its reason (as in WebWorkerTransport)
      'clients(spec of an unknown algorithm)': 'resolved 1',
      'start({ workerUrl: 5 })': 'InvalidParameterError',
      'fit in a worker whose module is missing': 'FederationError',
    });
    expect(requested).toContain('/dist/no-such-worker.js');
  }, 60_000);

  test('the page computes the numbers Node computes', async () => {
    const inPage = await page.evaluate(
      async ({ source, rows }) => {
        const run = new Function(`return (${source});`)() as (lib: unknown, rows: number[][]) => Promise<unknown>;
        return run((globalThis as unknown as PageGlobals).fedmix, rows);
      },
      { source: suite.toString(), rows: ROWS },
    );
    // Chromium runs the relaxed build, Node 20 (no flag) the SIMD build: the same modules for these numbers (only 'nn' differs)
    const fromPage = inPage as SuiteResult;
    expect(fromPage.info).toEqual({ ...inNode.info, backend: 'relaxed' });
    expect({ ...fromPage, info: inNode.info }).toEqual(inNode);
  }, 60_000);

  test('a module worker importing the same file computes the numbers Node computes', async () => {
    const inWorker = await page.evaluate(
      async ({ source, rows, url }) => {
        // a worker of its own, importing dist/browser.js by URL: no import map reaches a worker
        const code = `import * as fedmix from ${JSON.stringify(url)};
          self.onmessage = async (e) => {
            try {
              const run = new Function('return (' + e.data.source + ');')();
              self.postMessage({ ok: true, result: await run(fedmix, e.data.rows), hasWindow: typeof window !== 'undefined' });
            } catch (err) {
              self.postMessage({ ok: false, error: String(err && err.stack || err) });
            }
          };
          self.postMessage('ready');`;
        const worker = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })), { type: 'module' });
        try {
          return await new Promise<{ ok: boolean; result?: unknown; error?: string; hasWindow?: boolean }>((resolve, reject) => {
            worker.onerror = (e) => reject(new Error(`worker failed: ${e.message}`));
            worker.onmessage = (e) => {
              if (e.data === 'ready') worker.postMessage({ source, rows });
              else resolve(e.data);
            };
          });
        } finally {
          worker.terminate();
        }
      },
      { source: suite.toString(), rows: ROWS, url: `${origin}/dist/browser.js` },
    );
    expect(inWorker.error).toBeUndefined();
    expect(inWorker.hasWindow).toBe(false);
    const fromWorker = inWorker.result as SuiteResult;
    expect(fromWorker.info).toEqual({ ...inNode.info, backend: 'relaxed' });
    expect({ ...fromWorker, info: inNode.info }).toEqual(inNode);
  }, 60_000);

  test("a FedmixWorker's federated clients give the model Node gets in process", async () => {
    const fromPage = await page.evaluate(
      async ({ rows, dem }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        await f.init();
        const w = await f.FedmixWorker.start();
        try {
          const specs = rows.map((r, i) => {
            const m = f.Matrix.fromRows(r);
            return { algorithm: 'dem' as const, id: `c${i}`, data: { data: m.data, nRows: m.nRows, nCols: m.nCols } };
          });
          const transport = await w.clients(specs);
          const r = await f.runFederation(new f.DemServer(dem), transport);
          await transport.close();
          const model = { weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances) };
          r.model.dispose();
          // the worker outlives its transport: a fit still runs in it
          const fit = await w.fitGaussianMixture(rows[0]!, { nComponents: 2, seed: 1 });
          await w.close();
          const afterClose = await w.fitGaussianMixture(rows[0]!, { nComponents: 2 }).then(
            () => 'no error',
            (e: Error) => e.name,
          );
          return { model, fitWeights: fit.weights.length, afterClose };
        } finally {
          await w.close();
        }
      },
      { rows: CLIENT_ROWS, dem: DEM },
    );
    await nodeFedmix.init();
    const clients = CLIENT_ROWS.map((r, i) => new nodeFedmix.DemClient(`c${i}`, nodeFedmix.Matrix.fromRows(r)));
    try {
      const r = nodeFedmix.runFederationSync(new nodeFedmix.DemServer(DEM), clients);
      expect(fromPage.model).toEqual({ weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances) });
      r.model.dispose();
    } finally {
      for (const c of clients) c.dispose();
    }
    expect(fromPage.fitWeights).toBe(2);
    expect(fromPage.afterClose).toBe('InvalidParameterError');
  }, 60_000);

  test('a page that loaded only the core gives its FedmixWorker just that; a module added later reaches the worker too, and nothing is fetched twice', async () => {
    const before = requested.length;
    const second = await browser!.newPage();
    watchProblems(second, problems);
    try {
      await second.goto(`${origin}/`);
      await second.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
      const coreOnly = await second.evaluate(async ({ rows }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const info = await f.init({ features: [] });
        const w = await f.FedmixWorker.start();
        try {
          const fit = await w.fitGaussianMixture(rows, { nComponents: 3, covarianceType: 'full', seed: 11 });
          return { info, means: Array.from(fit.means) };
        } finally {
          await w.close();
        }
      }, { rows: ROWS });
      expect(coreOnly.info.features).toEqual([]);
      expect(coreOnly.means).toEqual(inNode.models[0]!.means);
      // the worker ran the page's core module, sent with the task: no request of its own
      expect(wasmRequests(requested.slice(before))).toEqual(['/dist/fedmix-simd.wasm']);

      const withDem = await second.evaluate(async ({ rows, dem }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const w = await f.FedmixWorker.start();
        try {
          // the worker starts on the core alone, then its clients' task brings the dem module the page added
          await w.fitGaussianMixture(rows[0]!, { nComponents: 2, seed: 1 });
          const info = await f.init({ features: ['dem'] });
          const specs = rows.map((r, i) => {
            const m = f.Matrix.fromRows(r);
            return { algorithm: 'dem' as const, id: `c${i}`, data: { data: m.data, nRows: m.nRows, nCols: m.nCols } };
          });
          const transport = await w.clients(specs);
          const r = await f.runFederation(new f.DemServer(dem), transport);
          await transport.close();
          const model = { weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances) };
          r.model.dispose();
          return { info, excluded: r.excluded.length, model };
        } finally {
          await w.close();
        }
      }, { rows: CLIENT_ROWS, dem: DEM });
      expect(withDem.info.features).toEqual(['dem']);
      expect(withDem.excluded).toBe(0);
      expect(wasmRequests(requested.slice(before))).toEqual(modulePaths('/dist/', ['dem']));
      await nodeFedmix.init();
      const clients = CLIENT_ROWS.map((r, i) => new nodeFedmix.DemClient(`c${i}`, nodeFedmix.Matrix.fromRows(r)));
      try {
        const r = nodeFedmix.runFederationSync(new nodeFedmix.DemServer(DEM), clients);
        expect(withDem.model).toEqual({ weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances) });
        r.model.dispose();
      } finally {
        for (const c of clients) c.dispose();
      }
    } finally {
      await second.close();
    }
  }, 60_000);

  test("a module worker that asks for the core alone fetches only fedmix-simd.wasm; a special function's error names 'dirichlet' until it is added", async () => {
    const before = requested.length;
    type Stage = Record<string, unknown> & { missing?: { name: string; typed: boolean; message: string } };
    // the worker stays on the page between the two steps, so that the requests of each can be told apart
    const core = await page.evaluate(async (url) => {
      const code = `import * as fedmix from ${JSON.stringify(url)};
        const attempt = () => { try { return { value: fedmix.digamma(1) }; } catch (e) { return { name: e.name, typed: e instanceof fedmix.WasmError, message: e.message }; } };
        self.onmessage = async (e) => {
          try {
            if (e.data === 'core') self.postMessage({ info: await fedmix.init({ features: [] }), missing: attempt() });
            else self.postMessage({ info: await fedmix.init({ features: ['dirichlet'] }), value: attempt() });
          } catch (err) {
            self.postMessage({ error: String(err && err.stack || err) });
          }
        };`;
      const worker = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })), { type: 'module' });
      const ask = (step: string) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          worker.onerror = (e) => reject(new Error(`worker failed: ${e.message}`));
          worker.onmessage = (e) => resolve(e.data as Record<string, unknown>);
          worker.postMessage(step);
        });
      (globalThis as unknown as { coreWorker: { ask: typeof ask; worker: Worker } }).coreWorker = { ask, worker };
      return ask('core');
    }, `${origin}/dist/browser.js`) as Stage;
    expect(core.error).toBeUndefined();
    expect(core.info).toEqual({ simd: true, backend: 'relaxed', features: [] });
    expect(core.missing).toMatchObject({ name: 'WasmError', typed: true });
    expect(core.missing!.message).toMatch(/needs fedmix's 'dirichlet' module, which was not loaded: call await init\(\{ features: \[\.\.\., 'dirichlet'\] \}\)/);
    expect(wasmRequests(requested.slice(before))).toEqual(['/dist/fedmix-simd.wasm']);

    const added = await page.evaluate(async () => {
      const { ask, worker } = (globalThis as unknown as { coreWorker: { ask: (step: string) => Promise<Record<string, unknown>>; worker: Worker } }).coreWorker;
      try {
        return await ask('dirichlet');
      } finally {
        worker.terminate();
      }
    });
    await nodeFedmix.init();
    expect(added).toEqual({ info: { simd: true, backend: 'relaxed', features: ['dirichlet'] }, value: { value: nodeFedmix.digamma(1) } });
    expect(wasmRequests(requested.slice(before))).toEqual(modulePaths('/dist/', ['dirichlet']));
  }, 60_000);

  test('threads in the page: GaussianMixture and KMeans fitAsync start module Web Workers (web-shard-worker.js) and give the bits Node gives on worker threads', async () => {
    const rows = blobs(900, 3, 3, 5).toRows();
    const fits = async (lib: Fedmix, rows: number[][]) => {
      await lib.init();
      const gm = await new lib.GaussianMixture({ nComponents: 3, covarianceType: 'diag', seed: 4, threads: 2 }).fitAsync(rows);
      const km = await new lib.KMeans({ nClusters: 3, seed: 4, nInit: 2, threads: 2 }).fitAsync(rows);
      return {
        gm: [...gm.means, ...gm.covariances, gm.lowerBound, gm.nIter], km: [...km.centers, km.inertia, km.nIter], labels: Array.from(km.labels),
        ran: [gm.fitThreads, km.fitThreads],
      };
    };
    const before = requested.length;
    const inPage = await page.evaluate(
      async ({ source, rows }) => {
        const run = new Function(`return (${source});`)() as (lib: unknown, rows: number[][]) => Promise<unknown>;
        return run((globalThis as unknown as PageGlobals).fedmix, rows);
      },
      { source: fits.toString(), rows },
    );
    // the page is not cross-origin isolated: its fits say their tasks went as messages, Node's through shared memory
    const messages = { threads: 2, exchange: 'messages' };
    expect(inPage).toEqual({ ...(await fits(nodeFedmix, rows)), ran: [messages, messages] });
    // one Web Worker per extra thread of each fit, loading the shard worker and its modules from dist/
    expect(requested.slice(before).filter((p) => p === '/dist/web-shard-worker.js').length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  test('threads in a cross-origin isolated page: the shards take their tasks through shared memory (SharedArrayBuffer, Atomics.waitAsync) and give the same bits', async () => {
    // a server of its own, whose every response carries COOP and COEP: the page is crossOriginIsolated, so the
    // pool takes the shared channel (ts/parallel/shared-channel.ts); the page above is not, and takes messages
    const isolatedRequests: string[] = [];
    const isolated = await startStaticServer(PAGE, isolatedRequests, ROOT, ISOLATION_HEADERS);
    const other = await browser!.newPage();
    const otherProblems: string[] = [];
    watchProblems(other, otherProblems);
    try {
      await other.goto(`${originOf(isolated)}/`);
      await other.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
      const rows = blobs(900, 3, 3, 5).toRows();
      const inPage = await other.evaluate(async ({ rows }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        await f.init();
        const gm = await new f.GaussianMixture({ nComponents: 3, covarianceType: 'full', seed: 4, threads: 2 }).fitAsync(rows);
        const km = await new f.KMeans({ nClusters: 3, seed: 4, nInit: 2, threads: 2 }).fitAsync(rows);
        const g = globalThis as unknown as { crossOriginIsolated?: boolean; SharedArrayBuffer?: unknown; Atomics: { waitAsync?: unknown } };
        return {
          isolated: g.crossOriginIsolated === true && typeof g.SharedArrayBuffer === 'function' && typeof g.Atomics.waitAsync === 'function',
          gm: [...gm.means, ...gm.covariances, gm.lowerBound, gm.nIter],
          km: [...km.centers, km.inertia, km.nIter],
          ran: [gm.fitThreads, km.fitThreads],
        };
      }, { rows });
      await nodeFedmix.init();
      const gm = await new nodeFedmix.GaussianMixture({ nComponents: 3, covarianceType: 'full', seed: 4, threads: 2 }).fitAsync(rows);
      const km = await new nodeFedmix.KMeans({ nClusters: 3, seed: 4, nInit: 2, threads: 2 }).fitAsync(rows);
      const shared = { threads: 2, exchange: 'shared' };
      expect(inPage).toEqual({ isolated: true, gm: [...gm.means, ...gm.covariances, gm.lowerBound, gm.nIter], km: [...km.centers, km.inertia, km.nIter], ran: [shared, shared] });
      gm.dispose();
      expect(isolatedRequests.filter((p) => p === '/dist/web-shard-worker.js').length).toBeGreaterThanOrEqual(1);
      expect(otherProblems).toEqual([]);
    } finally {
      await other.close();
      await stopStaticServer(isolated);
    }
  }, 60_000);

  test('the page and its workers fetched only dist/, without errors', () => {
    // the one failed request made on purpose: the missing worker module of the refusals test
    expect(problems.filter((p) => !p.includes('/dist/no-such-worker.js'))).toEqual([]);
    expect(requested).toContain('/dist/browser.js');
    expect(requested.filter((p) => p !== '/' && !p.startsWith('/dist/'))).toEqual([]);
    // mqtt's chunk is loaded only when a broker connection is made
    expect(requested.filter((p) => p.includes('mqtt'))).toEqual([]);
    // the relaxed build's files (Chromium validates it): the SIMD modules and fedmix-relaxed-nn.wasm, nothing of the scalar build
    const relaxed = modulePaths('/dist/', 'all', 'relaxed');
    expect(requested.filter((p) => p.endsWith('.wasm') && !relaxed.includes(p))).toEqual([]);
  });

  test('fedmix/browser resolves through the exports map to the file tested here, with its types', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; files: string[] };
    // its types are fedmix's: dist/browser.js is ts/index.ts's exports, bundled
    expect(pkg.exports['./browser']).toEqual({ types: './dist/index.d.ts', default: './dist/browser.js' });
    expect(pkg.files).toContain('dist');
    expect(readFileSync(join(ROOT, 'dist', 'index.d.ts'), 'utf8')).toMatch(/declare class FedmixWorker\b/);
  });

  test("the browser module exports what fedmix exports (its types are fedmix's)", async () => {
    const inPage = await page.evaluate(() => Object.keys((globalThis as unknown as PageGlobals).fedmix!).sort());
    expect(inPage).toEqual(Object.keys(nodeFedmix).sort());
    expect(inPage).toContain('FedmixWorker');
  });

  test('the build names no Node built-in and no bare specifier: every import is a file beside it', () => {
    const seen = new Map<string, string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      const code = readFileSync(join(ROOT, 'dist', file), 'utf8');
      seen.set(file, code);
      // static imports and re-exports (import{a as b}from"…", import*as x from"…", export{…}from"…") and import("…")
      const specifiers = /\b(?:import|export)\s*(?:\{[^}]*\}|\*\s*as\s+[\w$]+|\*|[\w$]+)\s*from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
      for (const m of code.matchAll(specifiers)) {
        const spec = m[1] ?? m[2]!;
        expect(spec, `${file} imports ${spec}`).toMatch(/^\.\/[\w.-]+\.js$/);
        visit(spec.slice(2));
      }
    };
    for (const entry of ['browser.js', 'web-worker.js']) visit(entry);
    expect([...seen.keys()].some((f) => f.startsWith('mqtt'))).toBe(true);
    for (const [file, code] of seen) {
      expect(code, file).not.toMatch(/["'`]node:/);
      expect(code, file).not.toMatch(/\brequire\s*\(\s*["'`]/);
      // the .wasm builds are files beside it, never embedded (the magic number's base64)
      expect(code, file).not.toContain('AGFzbQEAAAA');
    }
    // every module of both builds, each a URL written out whole (what bundlers and the page resolve)
    for (const backend of ['simd', 'scalar'] as const) {
      // once in browser.js or a chunk it imports (the code browser.js shares with the lazily loaded secure
      // round); web-worker.js, one file, has its own
      const page = [...seen].filter(([file]) => file !== 'web-worker.js').map(([, code]) => code);
      for (const m of ['core', ...FEATURES] as const) expect(page.filter((code) => code.includes(`new URL("./${moduleFile(backend, m)}",import.meta.url)`)), moduleFile(backend, m)).toHaveLength(1);
    }
  });
});
