import { copyFileSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildSync, type Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/**
 * The two builds of the core, each a core module and one module per feature
 * (crates/fedmix-wasm/modules.json), as files beside the JavaScript: every
 * file of the library in dist/ (and worker.js, web-worker.js, browser.js, cli.cjs)
 * finds them with `new URL('./fedmix-simd.wasm', import.meta.url)` and the
 * like; scripts/build-wasm.sh makes them.
 */
const { features, relaxed } = JSON.parse(readFileSync('crates/fedmix-wasm/modules.json', 'utf8')) as { features: string[]; relaxed: string[] };
const WASM_FILES = [
  ...['simd', 'scalar'].flatMap((b) => ['', ...features.map((f) => `-${f}`)].map((f) => `fedmix-${b}${f}.wasm`)),
  // the relaxed-SIMD build's own modules; it takes the SIMD build's others
  ...relaxed.map((m) => `fedmix-relaxed-${m}.wasm`),
];

/** The entries of one feature each (package.json "exports": fedmix/core, fedmix/fedavg, ...; ts/entries/). */
const FEATURE_ENTRIES = ['core',  'svm',  'networks',  'federation',  'dem',  'fedgengmm',  'fedgem',  'mdm',  'fedavg',  'feddistr',  'communities'];

/**
 * The package's entries (package.json "exports"): fedmix (index-node in Node: Arrow loaded at once), fedmix/node, fedmix/inline, the papers'
 * experiments apart from the library, fedmix/experiments, and the entries by feature.
 */
const ENTRIES = {
  index: 'ts/index.ts',
  'index-node': 'ts/index-node.ts',
  node: 'ts/node.ts',
  inline: 'ts/inline.ts',
  experiments: 'ts/experiments/index.ts',
  // the entries by feature (ts/entries/): each brings only the WebAssembly modules' files its code can load
  ...Object.fromEntries(FEATURE_ENTRIES.map((e) => [e, `ts/entries/${e}.ts`])),
};

/** An entry's file in dist/ is named by its entry (ts/experiments/index.ts is dist/experiments.js). */
const ENTRY_FILES = new Map(Object.entries(ENTRIES).map(([name, file]) => [resolve(file), name]));

/**
 * Every module that the entries import (read from esbuild's metafile, so no CLI-only module ships),
 * by absolute source path, with the name of its file in dist/: its path with dots
 * (ts/federated/dem/server.ts is dist/federated.dem.server.js). Every file sits in dist/ itself,
 * beside the .wasm and worker files it finds by new URL('./...', import.meta.url).
 */
const LIBRARY_MODULES = new Map(
  Object.keys(
    buildSync({
      entryPoints: Object.values(ENTRIES),
      bundle: true,
      write: false,
      metafile: true,
      outdir: 'dist',
      packages: 'external',
      logLevel: 'silent',
    }).metafile.inputs,
  )
    .filter((f) => f.startsWith('ts/') && f.endsWith('.ts'))
    .map((f) => [resolve(f), ENTRY_FILES.get(resolve(f)) ?? f.slice('ts/'.length, -'.ts'.length).replace(/\//g, '.')]),
);
if (new Set(LIBRARY_MODULES.values()).size !== LIBRARY_MODULES.size) throw new Error('two library modules would have the same file in dist/ (a/b.ts and a.b.ts): rename one');

/**
 * Builds each library module into its own file: an import of another library module stays an import
 * (of that module's file in dist/) instead of being bundled in. The packages bundled (valibot,
 * graphology, papaparse) and esbuild's helpers go into the module that uses them, or into a shared
 * chunk when several do.
 */
const oneFilePerModule: Plugin = {
  name: 'one-file-per-module',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const name = LIBRARY_MODULES.get(resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts')));
      return name === undefined ? undefined : { path: `./${name}.js`, external: true };
    });
  },
};

/** Node-only packages and built-ins: only fedmix/node and the CLI load them. */
const nodeOnly = ['piscina', 'mqtt', 'aedes', 'ws', /^node:/];

/** What the ESM and CommonJS builds of the library share. */
const LIBRARY: Options = {
  platform: 'neutral',
  target: 'es2020',
  sourcemap: true,
  splitting: true,
  external: ['apache-arrow', ...nodeOnly],
  // small (and valibot tree-shaken): bundled, so that browsers need no import map entry for them
  noExternal: ['valibot', 'graphology', 'graphology-communities-louvain', 'papaparse'],
};

export default defineConfig([
  {
    // the library as ES modules, one file per source module, so that a bundler keeps only the modules
    // a program imports (package.json: "sideEffects": false): a page that fits a GaussianMixture takes
    // about 50 KB of fedmix, not all of it (test/package-size.test.ts). fedmix, fedmix/node and
    // fedmix/inline (and fedmix/experiments) import the same files: one WASM instance, one Matrix class.
    entry: Object.fromEntries([...LIBRARY_MODULES].map(([file, name]) => [name, file])),
    esbuildPlugins: [oneFilePerModule],
    format: ['esm'],
    // declarations without what is marked @internal (fitResident, fromHandle, pointers, ...)
    dts: { entry: ENTRIES, compilerOptions: { stripInternal: true } },
    ...LIBRARY,
    clean: true,
    // no keepNames: its __name call on every function keeps whole modules alive in a user's bundle;
    // the classes that esbuild would print as `_Matrix` name themselves (ts/class-name.ts)
    // this build cleans dist/, so it is the one that puts the .wasm files back
    onSuccess: async () => {
      for (const f of WASM_FILES) copyFileSync(`ts/wasm/${f}`, `dist/${f}`);
    },
  },
  {
    // the same entries as CommonJS, split into shared chunks (one copy of the library for all of them)
    entry: ENTRIES,
    format: ['cjs'],
    dts: { compilerOptions: { stripInternal: true } },
    ...LIBRARY,
    // import.meta.url (where the .wasm files are) as CommonJS: the file's own URL
    shims: true,
    // one bundle, so names that collide between modules are renamed (communities2): keep them as written
    keepNames: true,
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
    // the module each fitting thread of a data-parallel fit runs in Node (GaussianMixture's threads; ts/parallel/)
    entry: { 'shard-worker': 'ts/parallel/shard-worker.ts' },
    format: ['esm'],
    platform: 'node',
    target: 'node18',
    noExternal: [/.*/],
  },
  {
    // the modules Web Workers run, each everything bundled, so a worker needs no import map: a WebWorkerTransport's
    // clients (web-worker), and GaussianMixture's fitting threads in browsers (web-shard-worker)
    entry: { 'web-worker': 'ts/federated/transport/web-worker.ts', 'web-shard-worker': 'ts/parallel/web-shard-worker.ts' },
    format: ['esm'],
    platform: 'browser',
    target: 'es2020',
    noExternal: [/.*/],
    // one file: bundlers build a worker as a script of its own (Vite's default worker format, iife, cannot
    // load chunks), so the secure round's client, imported lazily in the library, is inlined here
    splitting: false,
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
