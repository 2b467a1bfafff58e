/**
 * fedmix for browsers without a bundler (dist/browser.js, `fedmix/browser`):
 * the library of `fedmix` in one ES module with apache-arrow bundled in, so
 * that a page's `<script type="module">` or a module Web Worker imports it by
 * URL with no import map; the .wasm builds and web-worker.js are loaded from
 * the same folder. Bundlers should import `fedmix` (it shares the
 * application's own Arrow).
 */
export * from './index.js';
