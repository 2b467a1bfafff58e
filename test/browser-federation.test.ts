/**
 * Federations with a browser in them, in headless Chromium (the built package,
 * loaded with an import map and nothing else):
 * - a browser client joins a federation over MQTT over WebSockets (the
 *   embedded broker) beside two Node clients, and the model equals the run of
 *   the same three clients in Node;
 * - a page runs its clients in Web Workers (WebWorkerTransport, one lane per
 *   worker) and gets the model Node gets in process;
 * - the same under secure aggregation: the page and its workers load the
 *   secure round (lazy chunks beside them in dist/) only then.
 *
 * Needs `bash scripts/setup.sh` first (dist/, chromium).
 */
import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type * as Fedmix from '../dist/index.js';
import { DemClient, DemServer, FedAvgClient, FedAvgServer, init, join, Matrix, MqttTransport, runFederation, runFederationSync, type GaussianMixture } from '../ts/index.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { blobs } from './helpers.js';
import { launchChromium, modulePaths, originOf, startStaticServer, stopStaticServer, wasmRequests, watchProblems, FEDERATION_IMPORT_MAP } from './support/browser.js';


const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify(FEDERATION_IMPORT_MAP)}</script>
<script type="module">
  try {
    window.fedmix = await import('/dist/index.js');
    // ?features=dem,svm loads those feature modules (empty: the core alone); without it, every module
    const features = new URLSearchParams(location.search).get('features');
    window.fedmixInfo = await window.fedmix.init(features === null ? undefined : { features: features ? features.split(',') : [] });
    window.fedmixStatus = 'ok';
  } catch (e) {
    window.fedmixStatus = 'import failed: ' + (e && e.stack ? e.stack : String(e));
  }
</script></head><body></body></html>`;

interface PageGlobals {
  fedmix?: typeof Fedmix;
  fedmixInfo?: Fedmix.InitInfo;
  fedmixStatus?: string;
}

const FED = 'browser';
const DEM = { nComponents: 3, nFeatures: 2, covarianceType: 'diag' as const, init: 'kfed' as const, seed: 5, maxRounds: 8 };

/** Three clients' rows (as plain row arrays: what crosses into the page). */
const ROWS = [0, 1, 2].map((c) => blobs(150, 2, 3, 40 + c, 5).toRows());

const modelOf = (m: GaussianMixture | { weights: ArrayLike<number>; means: ArrayLike<number>; covariances: ArrayLike<number> }) => ({
  weights: Array.from(m.weights),
  means: Array.from(m.means),
  covariances: Array.from(m.covariances),
});

/** The three clients' run in Node, in process. */
function inNode(dem: ConstructorParameters<typeof DemServer>[0] = DEM): ReturnType<typeof modelOf> {
  const roles = ['node-0', 'node-1', 'browser-0'].map((id, i) => new DemClient(id, Matrix.fromRows(ROWS[i]!)));
  try {
    const r = runFederationSync(new DemServer(dem), roles);
    const m = modelOf(r.model);
    r.model.dispose();
    return m;
  } finally {
    for (const c of roles) c.dispose();
  }
}

describe('federations with a browser', () => {
  let server: Server | undefined;
  /** every path the page and its workers asked for */
  const requested: string[] = [];
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    await init();
    server = await startStaticServer(PAGE, requested);
    browser = await launchChromium();
    page = await browser.newPage();
    watchProblems(page, problems);
    await page.goto(`${originOf(server)}/`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus)).toBe('ok');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopStaticServer(server);
  });

  test('a browser client joins over MQTT over WebSockets and the model equals the Node run', async () => {
    const accounts = [
      { username: SERVER_USER, password: 'server-pw', role: 'server' as const },
      ...['node-0', 'node-1', 'browser-0'].map((id) => ({ username: id, password: `pw-${id}`, role: 'client' as const })),
    ];
    const broker = await startBroker({ federation: FED, users: accounts, webSocketPort: 0 });
    const nodeClients = [0, 1].map((i) => new DemClient(`node-${i}`, Matrix.fromRows(ROWS[i]!)));
    try {
      expect(broker.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/mqtt$/);
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: ['node-0', 'node-1', 'browser-0'] });
      const joined = nodeClients.map((c) => join({ url: broker.url, federation: FED, client: c, password: `pw-${c.id}` }));
      // the browser's client: its rows never leave the page
      const inPage = page.evaluate(
        async ({ url, rows, federation }) => {
          const f = (globalThis as unknown as PageGlobals).fedmix!;
          const client = new f.DemClient('browser-0', f.Matrix.fromRows(rows));
          try {
            const r = await f.join({ url, federation, client, password: 'pw-browser-0' });
            return { ok: r.ok, answered: r.answered, userAgent: navigator.userAgent };
          } finally {
            client.dispose();
          }
        },
        { url: broker.wsUrl!, rows: ROWS[2]!, federation: FED },
      );
      await transport.available(3, 30_000);
      const result = await runFederation(new DemServer(DEM), transport, { roundTimeout: 30 });
      const fromPage = await inPage;
      await Promise.all(joined);
      expect(fromPage.userAgent).toMatch(/Chrom(e|ium)\//);
      expect(fromPage.ok).toBe(true);
      expect(fromPage.answered).toBe(result.rounds);
      expect(result.clientTraffic.get('browser-0')!.messagesUp).toBe(result.rounds);
      expect(modelOf(result.model)).toEqual(inNode());
      result.model.dispose();
    } finally {
      for (const c of nodeClients) c.dispose();
      await broker.close();
    }
    expect(problems).toEqual([]);
  });

  test('clients in Web Workers give the model Node gets in process', async () => {
    const fromPage = await page.evaluate(
      async ({ rows, dem }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const specs = rows.map((r, i) => {
          const m = f.Matrix.fromRows(r);
          return { algorithm: 'dem' as const, id: ['node-0', 'node-1', 'browser-0'][i]!, data: { data: m.data, nRows: m.nRows, nCols: m.nCols } };
        });
        const transport = await f.WebWorkerTransport.start(specs, { workers: 2 });
        try {
          const r = await f.runFederation(new f.DemServer(dem), transport);
          const out = { weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances), rounds: r.rounds, name: transport.name };
          r.model.dispose();
          return out;
        } finally {
          await transport.close();
        }
      },
      { rows: ROWS, dem: DEM },
    );
    expect(fromPage.name).toBe('web-workers');
    // the workers ran the page's compiled modules (sent with their clients): they fetched no .wasm of their
    // own, and the page fetched each SIMD module once
    expect(requested).toContain('/dist/web-worker.js');
    expect(wasmRequests(requested)).toEqual(modulePaths('/dist/', 'all', 'relaxed'));
    const { rounds: _r, name: _n, ...model } = fromPage;
    expect(model).toEqual(inNode());
    expect(problems).toEqual([]);
  });
  test('a FedAvg classifier in Web Workers (labels cross with the rows) gives the parameters Node gets in process', async () => {
    const network = { sizes: [2, 8, 3], activation: 'relu' as const, outputActivation: 'softmax' as const, loss: 'softmax-cross-entropy' as const, seed: 5 };
    const fedavg = { network, rounds: 3, epochs: 2, batchSize: 16 };
    // blobs() puts row i in blob i % 3: the class of each row
    const labelsOf = (n: number) => Array.from({ length: n }, (_, i) => i % 3);
    const fromPage = await page.evaluate(
      async ({ rows, fedavg, labels }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const specs = rows.map((r, i) => {
          const m = f.Matrix.fromRows(r);
          return { algorithm: 'fedavg' as const, id: `client-${i}`, data: { data: m.data, nRows: m.nRows, nCols: m.nCols }, labels: Int32Array.from(labels[i]!), options: { seed: i } };
        });
        const transport = await f.WebWorkerTransport.start(specs, { workers: 2 });
        try {
          const r = await f.runFederation(new f.FedAvgServer(fedavg), transport);
          return { parameters: Array.from(r.model.parameters), excluded: r.excluded.length };
        } finally {
          await transport.close();
        }
      },
      { rows: ROWS, fedavg, labels: ROWS.map((r) => labelsOf(r.length)) },
    );
    const roles = ROWS.map((r, i) => new FedAvgClient(`client-${i}`, Matrix.fromRows(r), { labels: labelsOf(r.length), seed: i }));
    try {
      const inProcess = runFederationSync(new FedAvgServer(fedavg), roles);
      expect(fromPage.excluded).toBe(0);
      // the page runs the relaxed build (fused multiply-adds in the networks), Node 20 the SIMD build: equal to rounding
      const node = Array.from(inProcess.model.parameters);
      expect(fromPage.parameters).toHaveLength(node.length);
      for (const [j, v] of fromPage.parameters.entries()) expect(Math.abs(v - node[j]!), `parameter ${j}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(node[j]!)));
    } finally {
      for (const c of roles) c.dispose();
    }
    expect(problems).toEqual([]);
  });

  test('secure aggregation in Web Workers: the page and its workers load the secure round lazily, and the model is the plain one within the bound', async () => {
    // the runs before asked for no secure round: nothing of it was fetched (the page's round loop and the workers load it at the first one)
    const lazy = (paths: readonly string[]) => paths.filter((p) => /^\/dist\/(federated\.secure-aggregation\.(round|client)|client-[A-Z0-9]+)\.js$/.test(p));
    expect(lazy(requested)).toEqual([]);
    const before = requested.length;
    const fromPage = await page.evaluate(
      async ({ rows, dem }) => {
        const f = (globalThis as unknown as PageGlobals).fedmix!;
        const specs = rows.map((r, i) => {
          const m = f.Matrix.fromRows(r);
          return { algorithm: 'dem' as const, id: ['node-0', 'node-1', 'browser-0'][i]!, data: { data: m.data, nRows: m.nRows, nCols: m.nCols } };
        });
        const transport = await f.WebWorkerTransport.start(specs, { workers: 2 });
        try {
          const r = await f.runFederation(new f.DemServer(dem), transport, { secureAggregation: { clip: 1e6 } });
          const out = { weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances), survivors: r.history.map((h) => h.secure?.survivors), bound: Math.max(...r.history.map((h) => h.secure?.bound ?? 0)) };
          r.model.dispose();
          return out;
        } finally {
          await transport.close();
        }
      },
      // k-FED's first round sends local clusters, which are not sums: the separated initialization's rounds all sum
      { rows: ROWS, dem: { ...DEM, init: 'separated' as const } },
    );
    const { survivors, bound, ...model } = fromPage;
    expect(survivors.every((n) => n === 3)).toBe(true);
    expect(bound).toBeGreaterThan(0);
    const plain = inNode({ ...DEM, init: 'separated' });
    // EM from sums within the bound: the model moves by a small multiple of it (relative to the data's scale)
    for (const k of ['weights', 'means', 'covariances'] as const) {
      expect(model[k].length).toBe(plain[k].length);
      model[k].forEach((x, i) => expect(Math.abs(x - plain[k][i]!), `${k}[${i}]`).toBeLessThan(1e-6 * Math.max(1, Math.abs(plain[k][i]!))));
    }
    // the page's round loop fetched the secure round from dist/; the workers carry theirs (web-worker.js is one
    // file, as bundlers build workers) and fetched no chunk
    const fetched = lazy(requested.slice(before));
    expect(fetched).toContain('/dist/federated.secure-aggregation.round.js');
    expect(fetched.filter((p) => /^\/dist\/client-[A-Z0-9]+\.js$/.test(p))).toEqual([]);
    expect(problems).toEqual([]);
  });

  test("a page that loaded only the dem module gives its Web Workers just core + dem: same model, nothing else fetched", async () => {
    const before = requested.length;
    const second = await browser!.newPage();
    watchProblems(second, problems);
    try {
      await second.goto(`${originOf(server!)}/?features=dem`);
      await second.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
      expect(await second.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus)).toBe('ok');
      expect(await second.evaluate(() => (globalThis as unknown as PageGlobals).fedmixInfo)).toEqual({ simd: true, backend: 'relaxed', features: ['dem'] });
      const fromPage = await second.evaluate(
        async ({ rows, dem }) => {
          const f = (globalThis as unknown as PageGlobals).fedmix!;
          const specs = rows.map((r, i) => {
            const m = f.Matrix.fromRows(r);
            return { algorithm: 'dem' as const, id: ['node-0', 'node-1', 'browser-0'][i]!, data: { data: m.data, nRows: m.nRows, nCols: m.nCols } };
          });
          const transport = await f.WebWorkerTransport.start(specs, { workers: 2 });
          try {
            const r = await f.runFederation(new f.DemServer(dem), transport);
            const out = { weights: Array.from(r.model.weights), means: Array.from(r.model.means), covariances: Array.from(r.model.covariances), excluded: r.excluded.length };
            r.model.dispose();
            return out;
          } finally {
            await transport.close();
          }
        },
        { rows: ROWS, dem: DEM },
      );
      const { excluded, ...model } = fromPage;
      expect(excluded).toBe(0);
      expect(model).toEqual(inNode());
      expect(requested.slice(before)).toContain('/dist/web-worker.js');
      expect(wasmRequests(requested.slice(before))).toEqual(modulePaths('/dist/', ['dem']));
      expect(problems).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
