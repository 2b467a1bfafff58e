// The browser demo's build: the page (demo/index.html, demo/main.ts),
// fedmix and fedmix/experiments (the package's own dist/index.js and
// dist/experiments.js, built by tsup, bundled with apache-arrow as an
// application's bundler would; web-worker.js and the .wasm files come along as
// assets through their `new URL(..., import.meta.url)` references) into demo/dist/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  // the page imports the repository's own files (the dataset, the report's plots): let Vite read them
  server: { fs: { allow: [here('..')] } },
  resolve: {
    alias: [
      { find: /^fedmix$/, replacement: here('../dist/index.js') },
      { find: /^fedmix\/experiments$/, replacement: here('../dist/experiments.js') },
    ],
  },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    // keep web-worker.js and the .wasm files as files: a worker needs a URL, not a data: string
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    // the page bundles the whole library (Arrow included) and the FedGenGMM experiment
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});
