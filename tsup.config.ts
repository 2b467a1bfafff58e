import { copyFileSync, readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/**
 * The two builds of the core, each a core module and one module per feature
 * (crates/fedmix-wasm/modules.json), as files beside the JavaScript: every
 * entry (dist/index.js and its chunks, worker.js, web-worker.js, cli.cjs)
 * finds them with `new URL('./fedmix-simd.wasm', import.meta.url)` and the
 * like; scripts/build-wasm.sh makes them.
 */
const { features } = JSON.parse(readFileSync('crates/fedmix-wasm/modules.json', 'utf8')) as { features: string[] };
const WASM_FILES = ['simd', 'scalar'].flatMap((b) => ['', ...features.map((f) => `-${f}`)].map((f) => `fedmix-${b}${f}.wasm`));

/** Node-only packages and built-ins: only fedmix/node and the CLI load them. */
const nodeOnly = ['piscina', 'mqtt', 'aedes', 'ws', /^node:/];

export default defineConfig([
  {
    // the library (fedmix: no Node built-ins, runs in browsers), fedmix/node and fedmix/inline (the
    // library with both builds embedded as base64) beside it; split into shared chunks so that the
    // entries use one copy of the library (one WASM instance, one Matrix class)
    entry: { index: 'ts/index.ts', node: 'ts/node.ts', inline: 'ts/inline.ts' },
    format: ['esm', 'cjs'],
    // declarations without what is marked @internal (fitResident, fromHandle, pointers, ...)
    dts: { compilerOptions: { stripInternal: true } },
    platform: 'neutral',
    target: 'es2020',
    sourcemap: true,
    clean: true,
    splitting: true,
    shims: true,
    // classes print as written: bundling turns a class that names itself into `var Matrix = class _Matrix`
    // (Matrix.name was '_Matrix', whatever the target); this costs 18 KB of the minified JavaScript
    keepNames: true,
    external: ['apache-arrow', ...nodeOnly],
    // small (and valibot tree-shaken): bundled, so that browsers need no import map entry for them
    noExternal: ['valibot', 'graphology', 'graphology-communities-louvain', 'papaparse'],
    // this build cleans dist/, so it is the one that puts the .wasm files back
    onSuccess: async () => {
      for (const f of WASM_FILES) copyFileSync(`ts/wasm/${f}`, `dist/${f}`);
    },
  },
  {
    // the module each worker thread of a WorkerTransport runs (a thread has its own module graph)
    entry: { worker: 'ts/federated/transport/worker.ts' },
    format: ['esm'],
    platform: 'node',
    target: 'node18',
    external: ['apache-arrow'],
    noExternal: ['valibot'],
  },
  {
    // the module each Web Worker of a WebWorkerTransport runs: everything bundled, so a worker needs no import map
    entry: { 'web-worker': 'ts/federated/transport/web-worker.ts' },
    format: ['esm'],
    platform: 'browser',
    target: 'es2020',
    noExternal: [/.*/],
    // served to browsers as it is: minified, and without the loader's Node file reading (ts/wasm/source.ts)
    minify: true,
    keepNames: true,
    define: { __FEDMIX_BROWSER__: 'true' },
  },
  {
    // fedmix/browser: the library for pages and module workers without a bundler, as one minified
    // file with apache-arrow in it (a browser resolves no bare specifier without an import map);
    // mqtt, imported only when a broker connection is made, stays a chunk beside it
    entry: { browser: 'ts/browser.ts' },
    format: ['esm'],
    // no declarations of its own: ts/browser.ts re-exports ts/index.ts, so package.json's
    // "./browser" export gives dist/index.d.ts as its types
    platform: 'browser',
    target: 'es2020',
    sourcemap: true,
    minify: true,
    // error and class names stay as written (FedmixError subclasses are told apart by name)
    keepNames: true,
    splitting: true,
    noExternal: [/.*/],
    // drops the loader's Node file reading (ts/wasm/source.ts): no Node built-in is named in the build
    define: { __FEDMIX_BROWSER__: 'true' },
  },
  {
    // the `fedmix` command (Node only)
    entry: { cli: 'ts/cli/main.ts' },
    format: ['cjs'],
    platform: 'node',
    target: 'node18',
    banner: { js: '#!/usr/bin/env node' },
    // import.meta.url (where the .wasm files are) as CommonJS: the file's own URL
    shims: true,
    // parquet-wasm loads its .wasm beside its own module: imported from its package, only when a Parquet file is read
    external: ['apache-arrow', 'piscina', 'mqtt', 'aedes', 'ws', 'parquet-wasm'],
    noExternal: ['valibot'],
    loader: { '.csv': 'text' },
    define: { __FEDMIX_VERSION__: JSON.stringify(version) },
  },
]);
