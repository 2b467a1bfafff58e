/**
 * The package through a bundler, as an application would use it: Vite (the
 * one in node_modules) builds a page that imports fedmix; the build must emit
 * both .wasm builds as assets (it recognises `new URL('./fedmix-simd.wasm',
 * import.meta.url)` in dist/) and embed neither, and the page, served as
 * built, must fetch only the SIMD one and compute what Node computes.
 *
 * Needs `bash scripts/setup.sh` first (it builds dist/ and installs chromium).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import * as fedmix from '../dist/index.js';
import { launchChromium, originOf, ROOT, startStaticServer, stopStaticServer, watchProblems } from './support/browser.js';

const ROWS = [[0, 0], [0.1, 0.2], [5, 5], [5.2, 4.9], [0.2, 0.1], [4.8, 5.1], [0.05, 0.3], [5.1, 5.3]];

const MAIN = `import { init, GaussianMixture, Matrix } from 'fedmix';
const info = await init();
const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(Matrix.fromRows(${JSON.stringify(ROWS)}));
window.result = { info, means: Array.from(gm.means), weights: Array.from(gm.weights) };
`;

let app = '';
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

test('a Vite build emits both builds as assets, embeds neither, and the page loads only the SIMD one', async () => {
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
  const wasmFiles = assets.filter((f) => f.endsWith('.wasm')).sort();
  expect(wasmFiles).toHaveLength(2);
  expect(wasmFiles[0]).toMatch(/^fedmix-scalar-.*\.wasm$/);
  expect(wasmFiles[1]).toMatch(/^fedmix-simd-.*\.wasm$/);
  expect(readFileSync(join(app, 'out', 'assets', wasmFiles[1]!))).toEqual(readFileSync(join(ROOT, 'dist', 'fedmix-simd.wasm')));
  for (const f of assets.filter((a) => a.endsWith('.js'))) expect(readFileSync(join(app, 'out', 'assets', f), 'utf8'), f).not.toContain('AGFzbQEAAAA');

  const requested: string[] = [];
  const problems: string[] = [];
  const server = await startStaticServer(readFileSync(join(app, 'out', 'index.html'), 'utf8'), requested, join(app, 'out'));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    watchProblems(page, problems);
    await page.goto(`${originOf(server)}/`);
    await page.waitForFunction(() => (globalThis as { result?: unknown }).result !== undefined, undefined, { timeout: 30_000 });
    const inBrowser = await page.evaluate(() => (globalThis as unknown as { result: unknown }).result);
    await fedmix.init();
    const gm = new fedmix.GaussianMixture({ nComponents: 2, seed: 1 }).fit(fedmix.Matrix.fromRows(ROWS));
    expect(inBrowser).toEqual({ info: { simd: true, backend: 'simd' }, means: Array.from(gm.means), weights: Array.from(gm.weights) });
    gm.dispose();
    expect(requested.filter((p) => p.endsWith('.wasm'))).toEqual([`/assets/${wasmFiles[1]}`]);
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
    await stopStaticServer(server);
  }
});
