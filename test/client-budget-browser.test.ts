/**
 * A browser client's privacy ledger in IndexedDB, in headless Chromium (the
 * built package, as test/browser-federation.test.ts loads it):
 * - a page joins a federation over MQTT over WebSockets with a small budget:
 *   it answers until the next request would pass it, refuses that one, and
 *   the run goes on without it; a client with ample budget is never refused;
 * - after a reload the ledger is as it was: a request of the run sent again
 *   is not counted twice, a new round is refused;
 * - two pages of one origin spending from one ledger cannot both spend its last;
 * - a record that is not a ledger is refused, not reset.
 *
 * Needs `bash scripts/setup.sh` first (dist/, chromium).
 */
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type * as Fedmix from '../dist/index.js';
import { ClientBudget, DemClient, DemServer, init, join, Matrix, MqttTransport, privacyEpsilon, runFederation } from '../ts/index.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { blobs, stamping } from './helpers.js';
import { launchChromium, originOf, startStaticServer, stopStaticServer, watchProblems, FEDERATION_IMPORT_MAP } from './support/browser.js';


const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify(FEDERATION_IMPORT_MAP)}</script>
<script type="module">
  try {
    window.fedmix = await import('/dist/index.js');
    // the accountant's module and the algorithm's: nothing else to compile
    window.fedmixInfo = await window.fedmix.init({ features: ['dem', 'dirichlet'] });
    window.fedmixStatus = 'ok';
  } catch (e) {
    window.fedmixStatus = 'import failed: ' + (e && e.stack ? e.stack : String(e));
  }
</script></head><body></body></html>`;

interface PageGlobals {
  fedmix?: typeof Fedmix;
  fedmixStatus?: string;
}

const FED = 'ledger-browser';
const DELTA = 1e-5;
const STEP = { mechanism: 'gaussian' as const, noiseMultiplier: 2, samplingRate: 1 };
const DEM = { nComponents: 3, nFeatures: 2, covarianceType: 'diag' as const, init: 'kfed' as const, seed: 5, maxRounds: 4, tol: 0 };
const epsilonAfter = (n: number) => privacyEpsilon({ noiseMultiplier: 2, samplingRate: 1, steps: n, delta: DELTA }).epsilon;
/** a budget that allows exactly n steps */
const budgetFor = (n: number) => (epsilonAfter(n) + epsilonAfter(n + 1)) / 2;
const ROWS = [0, 1].map((c) => blobs(120, 2, 3, 40 + c, 5).toRows());

let server: Server | undefined;
let browser: Browser | undefined;
const problems: string[] = [];

/** A page of the test's origin; pages of one `context` share its IndexedDB (browser.newPage() makes a context of its own). */
async function openPage(context?: BrowserContext): Promise<Page> {
  const page = await (context ?? browser!).newPage();
  watchProblems(page, problems);
  await page.goto(`${originOf(server!)}/`);
  await ready(page);
  return page;
}

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fedmixStatus !== undefined, undefined, { timeout: 30_000 });
  expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fedmixStatus)).toBe('ok');
}

/** In the page: the ledger `name` opened with budget `epsilon`, one request per [run, round] handed to a client host; what each got, and the ledger after. */
function handleInPage(page: Page, name: string, epsilon: number, requests: [string, number][]) {
  return page.evaluate(
    async ({ name, epsilon, delta, requests, rows, dem, step }) => {
      const f = (globalThis as unknown as PageGlobals).fedmix!;
      const store = new f.IndexedDbLedgerStore(name);
      try {
        const budget = await f.ClientBudget.open({ epsilon, delta, store });
        const client = new f.DemClient('browser-0', f.Matrix.fromRows(rows));
        const host = new f.ClientHost(client, { budget });
        const request = new f.DemServer(dem).configure({ round: 1, clients: ['browser-0'], available: ['browser-0'] }).get('browser-0')!;
        const got: string[] = [];
        for (const [run, round] of requests) {
          const reply = f.decodeMessage((await host.handle(f.encodeMessage({ ...request, run, round, privacy: step }, 'binary')))!);
          got.push(reply.kind === f.REFUSAL.kind ? `refused: ${(reply.payload as { code: string }).code}` : 'answered');
        }
        client.dispose();
        return { got, accounted: budget.accounted, epsilon: budget.spent().epsilon };
      } catch (e) {
        return { error: `${(e as Error).name}: ${(e as Error).message}` };
      } finally {
        await store.close();
      }
    },
    { name, epsilon, delta: DELTA, requests, rows: ROWS[0]!, dem: DEM, step: STEP },
  );
}

describe('a browser client keeps its privacy ledger in IndexedDB', () => {
  beforeAll(async () => {
    await init();
    server = await startStaticServer(PAGE, []);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopStaticServer(server);
  });

  test('joins a federation, refuses past its budget, the run goes on; after a reload the ledger is as it was', async () => {
    const page = await openPage();
    const ids = ['node-0', 'browser-0'];
    const broker = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'srv', role: 'server' }, ...ids.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' as const }))], webSocketPort: 0 });
    const node = new DemClient('node-0', Matrix.fromRows(ROWS[1]!));
    let run = '';
    try {
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'srv', clients: ids });
      const ample = await ClientBudget.open({ epsilon: 1e6, delta: DELTA });
      const joined = join({ url: broker.url, federation: FED, client: node, password: 'pw-node-0', budget: ample });
      const inPage = page.evaluate(
        async ({ url, rows, federation, epsilon, delta }) => {
          const f = (globalThis as unknown as PageGlobals).fedmix!;
          const client = new f.DemClient('browser-0', f.Matrix.fromRows(rows));
          const store = new f.IndexedDbLedgerStore('browser-0@' + federation);
          try {
            const budget = await f.ClientBudget.open({ epsilon, delta, store });
            const r = await f.join({ url, federation, client, password: 'pw-browser-0', budget });
            return { ok: r.ok, answered: r.answered, accounted: budget.accounted, refusals: budget.refusals.map((x) => x.round), spent: budget.spent().epsilon };
          } finally {
            client.dispose();
            await store.close();
          }
        },
        { url: broker.wsUrl!, rows: ROWS[0]!, federation: FED, epsilon: budgetFor(2), delta: DELTA },
      );
      await transport.available(2, 30_000);
      const result = await runFederation(stamping(new DemServer(DEM), STEP), transport, { roundTimeout: 30, maxExcludedShare: 1 });
      const fromPage = await inPage;
      await joined;
      expect(fromPage).toMatchObject({ ok: true, accounted: 2, refusals: [3] });
      expect(fromPage.spent).toBeCloseTo(epsilonAfter(2), 10);
      expect(result.failures.find((f) => f.client === 'browser-0')).toMatchObject({ round: 3, kind: 'refused', excluded: true });
      expect(result.rounds).toBe(5);
      // the Node client with ample budget: never refused
      expect(ample.accounted).toBe(result.rounds);
      expect(ample.refusals).toEqual([]);
      run = result.run;
      result.model.dispose();
    } finally {
      node.dispose();
      await broker.close();
    }
    // the page reloads: the same ledger, what it spent kept; the run's round 1 sent again is not counted, another round is refused
    await page.reload();
    await ready(page);
    const after = await handleInPage(page, `browser-0@${FED}`, budgetFor(2), [[run, 1], [run, 3]]);
    expect(after).toMatchObject({ got: ['answered', 'refused: PRIVACY_BUDGET'], accounted: 2 });
    expect((after as { epsilon: number }).epsilon).toBeCloseTo(epsilonAfter(2), 10);
    await page.close();
    expect(problems).toEqual([]);
  }, 30_000);

  test('re-sent requests count once; two pages cannot both spend the last of one ledger; a damaged record is refused', async () => {
    const context = await browser!.newContext();
    const a = await openPage(context);
    expect(await handleInPage(a, 'resent', budgetFor(3), [['run-browser-01', 1], ['run-browser-01', 1], ['run-browser-01', 2]])).toMatchObject({ got: ['answered', 'answered', 'answered'], accounted: 2 });
    // the ledger opened again (a client restarted within the page)
    expect(await handleInPage(a, 'resent', budgetFor(3), [['run-browser-01', 2], ['run-browser-01', 3], ['run-browser-01', 4]])).toMatchObject({ got: ['answered', 'answered', 'refused: PRIVACY_BUDGET'], accounted: 3 });
    // two pages, one ledger with room for one more step: each opens it, then each asks; one is answered, the other refused
    const b = await openPage(context);
    const both = await Promise.all([a, b].map((p, i) => handleInPage(p, 'shared', budgetFor(1), [[`run-shared-0${i}`, 1]])));
    expect(both.map((r) => (r as { got: string[] }).got[0]).sort()).toEqual(['answered', 'refused: PRIVACY_BUDGET']);
    expect(await handleInPage(b, 'shared', budgetFor(1), [])).toMatchObject({ accounted: 1 });
    // a record edited into something that is not a ledger: refused when opened, and left as it was
    const damaged = await b.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open('fedmix-privacy', 1);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const put = (value: unknown) =>
        new Promise<void>((resolve, reject) => {
          const tx = db.transaction('ledgers', 'readwrite');
          tx.objectStore('ledgers').put(value, 'shared');
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        });
      const get = () =>
        new Promise<unknown>((resolve) => {
          const r = db.transaction('ledgers').objectStore('ledgers').get('shared');
          r.onsuccess = () => resolve(r.result);
        });
      const saved = (await get()) as { accountant: { history: { steps: unknown }[] } };
      saved.accountant.history[0]!.steps = 'none';
      await put(saved);
      db.close();
      return saved;
    });
    const refused = await handleInPage(b, 'shared', budgetFor(1), [['run-shared-09', 1]]);
    expect((refused as { error: string }).error).toMatch(/^InvalidParameterError: the IndexedDB ledger "shared" \(database "fedmix-privacy"\) is not a usable privacy ledger: its accountant: /);
    const still = await b.evaluate(
      () =>
        new Promise<unknown>((resolve) => {
          const r = indexedDB.open('fedmix-privacy', 1);
          r.onsuccess = () => {
            const g = r.result.transaction('ledgers').objectStore('ledgers').get('shared');
            g.onsuccess = () => resolve(g.result);
          };
        }),
    );
    expect(still).toEqual(damaged);
    await context.close();
    expect(problems).toEqual([]);
  }, 30_000);
});
