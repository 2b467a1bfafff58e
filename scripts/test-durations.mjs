#!/usr/bin/env node
// Writes test/support/durations.json: each test file's duration in seconds, as vitest's last run measured it
// (its results cache, node_modules/.vite/vitest/*/results.json; or a JSON report given as the argument,
// from `npx vitest run --reporter=json --outputFile=FILE`). vitest.config.ts starts the longest files
// first from this table, so that on a clean checkout (no cache yet) no long file is left to run alone
// at the end. Run it after a whole-suite run when files were added or became slower.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
let seconds;
const report = process.argv[2];
if (report) {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  seconds = json.testResults.map((r) => [relative(root, r.name), (r.endTime - r.startTime) / 1000]);
} else {
  const dir = join(root, 'node_modules', '.vite', 'vitest');
  const caches = existsSync(dir) ? readdirSync(dir).map((d) => join(dir, d, 'results.json')).filter(existsSync) : [];
  if (caches.length === 0) throw new Error(`no vitest results cache under ${dir}: run the whole suite first, or give a JSON report`);
  seconds = JSON.parse(readFileSync(caches[0], 'utf8')).results.map(([key, r]) => [key.replace(/^[^:]*:/, ''), r.duration / 1000]);
}
const table = Object.fromEntries(seconds.filter(([f]) => f.startsWith('test/')).sort((a, b) => b[1] - a[1]).map(([f, s]) => [f, Math.round(s * 10) / 10]));
writeFileSync(join(root, 'test', 'support', 'durations.json'), JSON.stringify(table, null, 2) + '\n');
console.log(`test/support/durations.json: ${Object.keys(table).length} files, ${Math.round(Object.values(table).reduce((a, b) => a + b, 0))} s in all`);
