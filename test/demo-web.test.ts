/**
 * The browser demo (demo/, `npm run demo:web`) end to end: demo/serve.mjs
 * builds it with Vite and serves it on a free loopback port; headless
 * Chromium chooses Dir(alpha) and a client count, runs it, and the numbers
 * the page shows must equal Node's run of the same library function
 * (runFedGenGMMExperiment, in process) at the page's config and seed. The
 * clients ran in Web Workers, one per client per federation; distributed EM's
 * curve arrived round by round; a screenshot goes to test/screenshots/
 * (gitignored).
 *
 * Needs dist/ and Chromium (bash scripts/setup.sh).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// the build Node runs: the same dist/index.js and dist/experiments.js the page bundles
import * as fedmix from '../dist/index.js';
import { labelledFromCsv, runFedGenGMMExperiment, type FedGenGMMExperimentConfig, type FedGenGMMExperimentReport } from '../dist/experiments.js';
import { runDemo, startDemoServer, type DemoServer } from '../demo/drive.mjs';
import { bytesText, meanStd } from '../ts/experiments/fedgengmm/plots.js';
import { launchChromium, ROOT, watchProblems } from './support/browser.js';

interface DemoState {
  state: string;
  error?: string;
  simd?: boolean;
  config: FedGenGMMExperimentConfig;
  report: FedGenGMMExperimentReport;
  workersStarted: number;
  liveCurves: Record<string, number[][]>;
  rounds: { method: string; repeat: number; round: number; kind: string; failures: string[] }[];
}

/** What the page's results table shows: per method, each cell's text and its full-precision value. */
type Shown = Record<string, Record<string, { text: string; value: number }>>;

const CONTROLS = { partition: 'dirichlet', alpha: 0.5, classes: 4, clients: 6, repeats: 2, seed: 3 } as const;
const FEDERATED = ['fedgengmm', 'fedgengmm-hierarchical', 'dem-separated', 'dem-subset', 'dem-kfed', 'local'];

describe('the browser demo (Vite build, Web Worker clients) against Node', () => {
  let server: DemoServer | undefined;
  let browser: Browser | undefined;
  let page: Awaited<ReturnType<Browser['newPage']>>;
  const problems: string[] = [];
  const workerUrls: string[] = [];
  const wasmRequests: string[] = [];
  let state: DemoState;
  let shown: Shown;
  let demDrawnWhileRunning = false;

  beforeAll(async () => {
    server = await startDemoServer();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    watchProblems(page, problems);
    page.on('worker', (w) => workerUrls.push(w.url()));
    // the page's and its workers' requests (workers' go through the context)
    page.context().on('request', (r) => {
      if (r.url().endsWith('.wasm')) wasmRequests.push(new URL(r.url()).pathname);
    });
    // whether distributed EM's plot was drawn before the run ended (the curve is live, not drawn at the end)
    await page.exposeFunction('demDrawn', () => {
      demDrawnWhileRunning = true;
    });
    await page.addInitScript(() => {
      new MutationObserver(() => {
        if (document.body?.dataset.state === 'running' && document.querySelector('#plot-dem svg')) (globalThis as unknown as { demDrawn(): void }).demDrawn();
      }).observe(document, { subtree: true, childList: true });
    });
    state = (await runDemo(page, server.url, CONTROLS)) as DemoState;
    shown = await page.evaluate(() => {
      const out: Record<string, Record<string, { text: string; value: number }>> = {};
      for (const tr of Array.from(document.querySelectorAll<HTMLTableRowElement>('#results tbody tr'))) {
        const cells: Record<string, { text: string; value: number }> = {};
        for (const td of Array.from(tr.querySelectorAll<HTMLTableCellElement>('td[data-key]'))) cells[td.dataset.key!] = { text: td.textContent!, value: Number(td.dataset.value) };
        out[tr.dataset.method!] = cells;
      }
      return out;
    });
    mkdirSync(join(ROOT, 'test', 'screenshots'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'test', 'screenshots', 'demo.png'), fullPage: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the page ran the chosen configuration to the end, on the SIMD build, without errors', () => {
    expect(state.error).toBeUndefined();
    expect(state.state).toBe('done');
    expect(state.simd).toBe(true);
    expect(state.config).toMatchObject({ partition: 'dirichlet', alpha: 0.5, clusterClasses: 4, clients: 6, repeats: 2, seed: 3 });
    expect(problems).toEqual([]);
    expect(Object.keys(shown)).toEqual(state.report.results.map((r) => r.method));
    expect(Object.keys(shown)).toEqual(['fedgengmm', 'fedgengmm-hierarchical', 'dem-separated', 'dem-subset', 'dem-kfed', 'central', 'local']);
    // every round of every federation went through with every client
    expect(state.rounds.flatMap((r) => r.failures)).toEqual([]);
    for (const x of state.report.results) expect(x.excluded).toEqual([]);
  });

  test('one module Web Worker per client per federation, running the package worker module', () => {
    const federations = FEDERATED.length * CONTROLS.repeats;
    expect(state.workersStarted).toBe(CONTROLS.clients * federations);
    expect(workerUrls).toHaveLength(CONTROLS.clients * federations);
    for (const url of workerUrls) expect(url).toMatch(/\/assets\/web-worker-[\w-]+\.js$/);
  });

  test('only the three modules the page asked for were fetched, once each: the workers got them compiled', () => {
    expect(wasmRequests.map((p) => p.replace(/^.*\/(fedmix-[a-z-]+?)(-[\w-]{8})?\.wasm$/, '$1')).sort()).toEqual(['fedmix-simd', 'fedmix-simd-dem', 'fedmix-simd-dirichlet']);
  });

  test('the numbers shown equal Node running the same function at the same config and seed', async () => {
    const data = labelledFromCsv(readFileSync(join(ROOT, 'ts/data/datasets/anomaly_thyroid.csv'), 'utf8'), { anomalyLabel: 'label' });
    await fedmix.init();
    const inNode = await runFedGenGMMExperiment(data, state.config);
    expect(inNode.dataset).toEqual(state.report.dataset);
    for (const x of inNode.results) {
      const row = shown[x.method]!;
      // same WASM build, same seeds, same messages, same JavaScript arithmetic: equal to the last bit
      for (const key of ['logLikelihood', 'aucPr', 'rocAuc'] as const) {
        expect(row[key]!.value, `${x.method} ${key}`).toBe(x.mean[key]);
        expect(row[key]!.text).toBe(meanStd(x.mean[key], x.std[key]));
      }
      // rounds and bytes are counts: exactly Node's (the same encoded messages crossed to the workers)
      expect(row.rounds!.value, `${x.method} rounds`).toBe(x.mean.rounds);
      expect(row.bytesUp!.value, `${x.method} bytes up`).toBe(x.mean.bytesUp);
      expect(row.bytesDown!.value, `${x.method} bytes down`).toBe(x.mean.bytesDown);
      expect(row.bytesUp!.text).toBe(bytesText(x.mean.bytesUp));
      const page = state.report.results.find((r) => r.method === x.method)!;
      expect(page.curves).toEqual(x.curves);
    }
    // the federated methods did communicate, and distributed EM climbed
    expect(shown.fedgengmm!.rounds!.value).toBe(1);
    for (const m of ['dem-separated', 'dem-subset', 'dem-kfed']) expect(shown[m]!.bytesUp!.value).toBeGreaterThan(0);
  }, 60_000);

  test("distributed EM's curve arrived round by round, the same as the final report's, and was drawn while running", () => {
    for (const x of state.report.results.filter((r) => r.method.startsWith('dem'))) {
      expect(state.liveCurves[x.method]).toEqual(x.curves);
      for (const curve of x.curves!) expect(curve[curve.length - 1]).toBeGreaterThan(curve[0]!);
    }
    expect(demDrawnWhileRunning).toBe(true);
  });

  test('the four plots are drawn', async () => {
    expect(await page.locator('.plot svg').count()).toBe(4);
    const titles = await page.locator('.plot svg > text.plot-title').allTextContents();
    expect(titles).toEqual(['test log-likelihood per method', 'AUC-PR per method', 'rounds against bytes sent (each repeat a point)', 'distributed EM round by round: average client log-likelihood']);
  });
});
