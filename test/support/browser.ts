/**
 * Real browsers for the tests: Debian's Chromium, driven by playwright-core,
 * loading the repository's files over HTTP from 127.0.0.1 (a static server of
 * its own, read-only, logging every path asked for). Never downloads a
 * browser: a missing Chromium fails loudly.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { FEATURES, type Feature } from '../../ts/wasm/modules.js';
import { moduleFile, type Backend } from '../../ts/wasm/source.js';
import { CHROMIUM, launchHeadlessChromium } from './chromium.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export { CHROMIUM };

/** The import map of pages that run federation clients: apache-arrow and its own imports, and mqtt's browser bundle (loaded only when a client connects). */
export const FEDERATION_IMPORT_MAP = {
  imports: {
    'apache-arrow': '/node_modules/apache-arrow/Arrow.dom.mjs',
    tslib: '/node_modules/tslib/tslib.es6.mjs',
    flatbuffers: '/node_modules/flatbuffers/mjs/flatbuffers.js',
    mqtt: '/node_modules/mqtt/dist/mqtt.esm.js',
  },
};

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Static files of the repo (or of `root`), plus `page` at "/"; every path asked for is pushed to `requested`. */
/** The headers that make a page cross-origin isolated (crossOriginIsolated: SharedArrayBuffer and Atomics.waitAsync usable). */
export const ISOLATION_HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } as const;

/** Serves `page` at / and the files below `root`; `headers` go on every response (ISOLATION_HEADERS, say). */
export function startStaticServer(page: string, requested: string[], root = ROOT, headers: Readonly<Record<string, string>> = {}): Promise<Server> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    requested.push(path);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(page);
      return;
    }
    const file = resolve(root, `.${path}`);
    const type = CONTENT_TYPES[extname(file)];
    // only files inside the repo, and only the kinds a module graph needs
    if (!file.startsWith(root.endsWith(sep) ? root : root + sep) || type === undefined) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  };
  return new Promise((resolvePromise, reject) => {
    const server = createServer((req, res) => {
      handle(req, res).catch((e: unknown) => {
        res.writeHead(500).end(String(e));
      });
    });
    server.once('error', reject);
    // port 0: a free port picked by the OS; loopback only
    server.listen(0, '127.0.0.1', () => resolvePromise(server));
  });
}

/** The .wasm paths among `requested`, sorted (modules are fetched in parallel, in no fixed order). */
export function wasmRequests(requested: readonly string[]): string[] {
  return requested.filter((p) => p.endsWith('.wasm')).sort();
}

/**
 * The paths under `dir` ('/dist/') of the modules init({ features }) loads:
 * the build's core module and the named feature modules ('all': every one),
 * sorted as wasmRequests sorts them.
 */
export function modulePaths(dir: string, features: 'all' | readonly Feature[], backend: Backend = 'simd'): string[] {
  const names = ['core' as const, ...(features === 'all' ? FEATURES : features)];
  return names.map((m) => dir + moduleFile(backend, m)).sort();
}

export function originOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function stopStaticServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  // Chromium may hold keep-alive sockets; close() alone would wait for them
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
}

/** Headless Chromium, offline-safe; throws when it or the built package is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/index.js not found: build it first with bash scripts/setup.sh');
  return launchHeadlessChromium();
}

/** Collects what goes wrong in a page: console errors, uncaught errors, failed or non-2xx requests. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.stack ?? e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText ?? '?'})`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
}
