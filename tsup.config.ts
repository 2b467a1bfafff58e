import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

export default defineConfig([
  {
    // the library: ESM + CJS + declarations, no Node built-ins (runs in browsers)
    entry: { index: 'ts/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'neutral',
    target: 'es2020',
    sourcemap: true,
    clean: true,
    external: ['apache-arrow'],
    // small and tree-shaken: bundled, so that browsers need no import map entry for it
    noExternal: ['valibot'],
  },
  {
    // the `fedmix` command (Node only)
    entry: { cli: 'ts/cli/main.ts' },
    format: ['cjs'],
    platform: 'node',
    target: 'node18',
    banner: { js: '#!/usr/bin/env node' },
    external: ['apache-arrow'],
    noExternal: ['valibot'],
    loader: { '.csv': 'text' },
    define: { __FEDMIX_VERSION__: JSON.stringify(version) },
  },
]);
