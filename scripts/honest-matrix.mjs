#!/usr/bin/env node
// The honest-federation matrix (test/support/honest-matrix.mjs) on the built
// package: every algorithm and option that changes its maths, on the real
// datasets and blobs, dealt by every partition scheme, every client honest.
//   node scripts/honest-matrix.mjs [--algorithms dem,fedgem] [--datasets satellite] \
//     [--partitions iid] [--seeds 1,2] [--json out.json] [--markdown]
// Prints each cell as it finishes, then per algorithm the cells, honest
// replies a check refused, clients that could not take part, errors and the
// gap to the central fit; exits 1 if a check refused an honest reply or a run
// failed.
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import * as experiments from '../dist/experiments.js';
import * as library from '../dist/index.js';
import { ALGORITHMS, DATASETS, PARTITIONS, cells, runCell, summarize } from '../test/support/honest-matrix.mjs';

// the library with the experiments' table reader (labelledFromCsv), as honest-matrix.mjs takes it
const fedmix = { ...library, ...experiments };

const { values: o } = parseArgs({
  options: {
    algorithms: { type: 'string' },
    datasets: { type: 'string' },
    partitions: { type: 'string' },
    seeds: { type: 'string', default: '1' },
    json: { type: 'string' },
    markdown: { type: 'boolean', default: false },
  },
});
const list = (s, all) => (s ? s.split(',').map((x) => x.trim()) : all);
await fedmix.init();
const grid = cells({
  algorithms: list(o.algorithms, Object.keys(ALGORITHMS)),
  datasets: list(o.datasets, DATASETS),
  partitions: list(o.partitions, PARTITIONS),
  seeds: list(o.seeds).map(Number),
});
const started = performance.now();
const results = [];
const fmt = (v) => (Number.isFinite(v) ? v.toFixed(4) : String(v));
for (const cell of grid) {
  const r = runCell(fedmix, cell);
  results.push(r);
  const tag = `${r.algorithm} ${JSON.stringify(r.variant)} ${r.dataset} ${r.partition} seed ${r.seed}`;
  if (r.error) console.log(`ERROR    ${tag}: ${r.error.slice(0, 300)}`);
  else if (r.notApplicable) console.log(`n/a      ${tag}: ${r.notApplicable}`);
  else {
    console.log(
      `${r.excluded.some((e) => e.kind === 'refused-by-check') ? 'REFUSED ' : r.excluded.length ? 'left out' : 'ok      '} ${tag}: ${r.metric} federated ${fmt(r.federated)} central ${fmt(r.central)} gap ${fmt(r.gap)}${r.note ? ` (${r.note})` : ''} [${r.seconds.toFixed(1)} s]`,
    );
    for (const e of r.excluded.slice(0, 3)) console.log(`           ${e.kind} ${e.client} round ${e.round}: ${e.reason.slice(0, 200)}`);
  }
}
const summary = summarize(results);
const quantile = (v, q) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
console.log('\n| algorithm | cells | not applicable | honest replies refused by a check | clients that could not take part | errors | gap median | gap 90% | gap max |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const s of summary) {
  console.log(`| ${s.algorithm} | ${s.cells} | ${s.notApplicable} | ${s.refusedByCheck} | ${s.cannotTakePart} | ${s.errors} | ${fmt(quantile(s.gaps, 0.5))} | ${fmt(quantile(s.gaps, 0.9))} | ${fmt(Math.max(...s.gaps))} |`);
}
// each variant's gaps apart (a method's bound is stated per variant where they differ), and the scores that were not finite
console.log('\n| algorithm | variant | cells with a gap | gap median | gap 90% | gap max | federated score not finite |');
console.log('|---|---|---|---|---|---|---|');
const byVariant = new Map();
for (const r of results) {
  if (r.error || r.notApplicable) continue;
  const key = `${r.algorithm} | ${JSON.stringify(r.variant).replace(/"/g, '')}`;
  if (!byVariant.has(key)) byVariant.set(key, { gaps: [], infinite: 0 });
  const v = byVariant.get(key);
  if (Number.isFinite(r.gap)) v.gaps.push(r.gap);
  else v.infinite += 1;
}
for (const [key, v] of byVariant) {
  console.log(`| ${key} | ${v.gaps.length} | ${fmt(quantile(v.gaps, 0.5))} | ${fmt(quantile(v.gaps, 0.9))} | ${v.gaps.length ? fmt(Math.max(...v.gaps)) : '-'} | ${v.infinite} |`);
}
console.log(`\n${results.length} cells in ${((performance.now() - started) / 1000).toFixed(0)} s`);
if (o.json) writeFileSync(o.json, JSON.stringify({ results, summary }, null, 1));
const bad = results.some((r) => r.error || r.excluded.some((e) => e.kind === 'refused-by-check'));
process.exit(bad ? 1 : 0);
