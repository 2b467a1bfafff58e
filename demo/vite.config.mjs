// The browser demo's build: the page (demo/index.html, demo/main.ts), uPlot and
// fedmix/browser (the package's own dist/browser.js, built by tsup; its
// web-worker.js and .wasm files come along as assets through their
// `new URL(..., import.meta.url)` references) into demo/dist/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  // the page imports the repository's own files (the dataset, the report's plots): let Vite read them
  server: { fs: { allow: [here('..')] } },
  resolve: { alias: { 'fedmix/browser': here('../dist/browser.js') } },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    // keep web-worker.js and the .wasm files as files: a worker needs a URL, not a data: string
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    // the page bundles the whole library (fedmix/browser: Arrow included) and uPlot
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});
