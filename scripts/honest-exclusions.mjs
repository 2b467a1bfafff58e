#!/usr/bin/env node
// Honest clients are never excluded at the defaults: every one-call function
// on real data (the shared datasets, min-max scaled), IID and Dir(0.3)
// partitions, 5 and 20 clients, its options left at their defaults but what
// the data fixes (K: the classes, at most 8; the network's widths). Prints, per run, the clients
// excluded and whether the run failed (maxExcludedShare, default 0.5).
//   node scripts/honest-exclusions.mjs [rows per dataset] [seed]
// (on the built package: run `bash scripts/setup.sh` first)
import { readFileSync } from 'node:fs';
import * as f from '../dist/index.js';
import { labelledFromCsv } from '../dist/experiments.js';

const rows = Number(process.argv[2] ?? 2000);
const seed = Number(process.argv[3] ?? 1);
await f.init();

const DATASETS = ['satellite', 'letter', 'shuttle', 'anomaly_cardio', 'anomaly_pendigits'];

/** The first rows of a shuffled dataset, min-max scaled, with its label codes. */
function load(name) {
  const text = readFileSync(new URL(`../../shared/datasets/${name}.csv`, import.meta.url), 'utf8');
  const d = labelledFromCsv(text, { label: 'label' });
  const rng = new f.Rng(seed);
  const order = Array.from(rng.permutation(d.X.nRows)).slice(0, rows);
  rng.dispose();
  const X = new f.MinMaxScaler().fitTransform(f.Matrix.from(d.X).selectRows(order));
  // classes as 0..C-1 among the rows taken
  const raw = order.map((i) => d.labels[i]);
  const codes = new Map([...new Set(raw)].sort((a, b) => a - b).map((c, k) => [c, k]));
  // K: the classes, at most 8 (letter's 26 would make the local BIC searches the run's whole cost)
  return { X, labels: Int32Array.from(raw, (c) => codes.get(c)), classes: codes.size, k: Math.min(8, codes.size) };
}

/** The one-call functions at their defaults, each given only what the data fixes. */
const RUNS = {
  distributedEM: (c, d) => {
    const r = f.distributedEM(c.map((p) => p.X), { nComponents: d.k, seed });
    r.model.dispose();
    return r;
  },
  fedGenGMM: (c, d) => {
    const r = f.fedGenGMM(c.map((p) => p.X), { client: { kMin: 1, kMax: d.k, seed }, server: { nComponents: d.k, seed } });
    r.model.dispose();
    return r;
  },
  fedGEM: (c) => {
    const r = f.fedGEM(c.map((p) => p.X), { client: c.map((p) => ({ nComponents: Math.min(8, Math.max(1, new Set(p.labels).size)), seed })) });
    for (const x of r.clients) x.dispose();
    return r;
  },
  fedAvg: (c, d) =>
    f.fedAvg(c.map((p) => ({ X: p.X, labels: p.labels })), {
      network: { sizes: [d.X.nCols, 32, d.classes], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed },
      rounds: 5,
      seed,
    }),
  associate: (c) => f.associate(c.map((p) => p.X), { seed }),
  fedDistr: (c) => f.fedDistr(c.map((p) => ({ X: p.X, labels: p.labels })), { seed }),
  fitMdm: (_c, d) => {
    // the users are 200 clients' class histograms (Dir(0.3)), K = 2
    const p = f.partition.dirichlet(d.labels, { clients: 200, alpha: 0.3, seed });
    return f.fitMdm(f.Matrix.fromRows(p.histograms.map((h) => Array.from(h))), { nComponents: 2, seed });
  },
};

let failed = 0;
let excludedRuns = 0;
let total = 0;
const started = performance.now();
console.log('| dataset | partition | clients | ' + Object.keys(RUNS).join(' | ') + ' |');
console.log('|---|---|---|' + Object.keys(RUNS).map(() => '---').join('|') + '|');
for (const name of DATASETS) {
  const d = load(name);
  for (const [how, clients] of [['iid', 5], ['iid', 20], ['Dir(0.3)', 5], ['Dir(0.3)', 20]]) {
    const part = how === 'iid' ? f.partition.iid(d.labels, { clients, seed }) : f.partition.dirichlet(d.labels, { clients, alpha: 0.3, seed });
    const parts = part.indices.map((idx) => ({ X: d.X.selectRows(Array.from(idx)), labels: Int32Array.from(idx, (i) => d.labels[i]) }));
    const cells = [];
    for (const [algorithm, run] of Object.entries(RUNS)) {
      // MDM's users do not depend on the partition: once per dataset
      if (algorithm === 'fitMdm' && !(how === 'iid' && clients === 5)) {
        cells.push('');
        continue;
      }
      total += 1;
      try {
        const r = run(parts, d);
        if (r.excluded.length > 0) {
          excludedRuns += 1;
          console.error(`${name} ${how} ${clients} ${algorithm}: ${r.excluded.map((e) => e.reason).join('; ')}`);
        }
        cells.push(String(r.excluded.length));
      } catch (e) {
        if (!(e instanceof f.FedmixError)) throw e;
        if (e instanceof f.FederationError) failed += 1;
        console.error(`${name} ${how} ${clients} ${algorithm}: ${e.name}: ${e.message}`);
        cells.push(e instanceof f.FederationError ? 'failed' : e.name);
      }
    }
    console.log(`| ${name} (${d.X.nCols} features, ${d.classes} classes) | ${how} | ${clients} | ${cells.join(' | ')} |`);
  }
}
console.log(`\n${total} runs, ${excludedRuns} with an exclusion, ${failed} failed past maxExcludedShare; ${rows} rows per dataset, seed ${seed}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
