#!/usr/bin/env node
/**
 * FedDistr's upload checks against honest clients (issue 23, item 1): real
 * data, real partitions, fedDistr's defaults, and every exclusion counted.
 * The server refuses an upload whose labels, counts, dimensions or
 * covariances do not hold up (ts/federated/feddistr/messages.ts); an honest
 * client must never be refused. Datasets: scikit-learn's 8x8 digits (64
 * pixels, constant ones among them), letter.csv, the same letter rows plus
 * 10^6 (readings far from the origin), Fashion-MNIST encoded by an
 * Autoencoder 784-128-16-128-784 fitted on 2,000 public rows (as `fedmix
 * feddistr` does); partitions: disentangled and entangled at 0.06
 * (partition.entangled), IID, Dirichlet 0.1 and 1 over the subclasses; 10
 * clients; full and diagonal covariances.
 *
 *   node scripts/feddistr-honest.mjs [--seeds 1,2,3] [--json FILE]
 *
 * Reads dist/ (bash scripts/setup.sh) and the digits of Debian's
 * python3-sklearn (located through /usr/bin/python3).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { Autoencoder, fedDistr, init, Matrix, partition } from '../dist/index.js';
import { fashionMnistSubclasses, groupSubclasses, LETTER_TASK_GROUPS, subclassDataFromCsv } from '../dist/experiments.js';
import { loadFashionMnist } from '../dist/node.js';

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '1,2,3' }, json: { type: 'string' } } });
const seeds = values.seeds.split(',').map(Number);
await init();

const digitsFile = execFileSync('/usr/bin/python3', ['-c', 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"))'], { encoding: 'utf8' }).trim();
const digitRows = gunzipSync(readFileSync(digitsFile)).toString('utf8').trim().split('\n').map((l) => l.split(',').map(Number));
const digits = groupSubclasses(Matrix.fromRows(digitRows.map((r) => r.slice(0, 64))), digitRows.map((r) => String(r[64])), { groups: [['0', '1'], ['2', '3'], ['4', '5'], ['6', '7'], ['8', '9']] });
const letterText = readFileSync(new URL('../../shared/datasets/letter.csv', import.meta.url), 'utf8');
const letter = subclassDataFromCsv(letterText, { subclass: 'label', groups: LETTER_TASK_GROUPS });
const far = { ...letter, X: Matrix.fromColumns(Array.from({ length: letter.X.nCols }, (_, j) => letter.X.column(j).map((v) => v + 1e6))) };
const fm = fashionMnistSubclasses(await loadFashionMnist({ n: 8000, sample: 'stratified', seed: 1 }));
const publicRows = Int32Array.from({ length: 2000 }, (_, i) => 4 * i);
const clientRows = Int32Array.from({ length: 8000 }, (_, i) => i).filter((i) => i % 4 !== 0);
const fashion = { ...fm, X: fm.X.selectRows(clientRows), subclasses: Int32Array.from(clientRows, (i) => fm.subclasses[i]), tasks: Int32Array.from(clientRows, (i) => fm.tasks[i]) };

const schemes = [
  ['disentangled', (d, seed) => partition.entangled(d.subclasses, { clients: 10, target: 0, tasks: d.tasks, seed }).indices],
  ['entangled 0.06', (d, seed) => partition.entangled(d.subclasses, { clients: 10, target: 0.06, tasks: d.tasks, seed }).indices],
  ['IID', (d, seed) => partition.iid(d.X.nRows, { clients: 10, seed }).indices],
  ['Dirichlet 0.1', (d, seed) => partition.dirichlet(d.subclasses, { clients: 10, alpha: 0.1, seed }).indices],
  ['Dirichlet 1', (d, seed) => partition.dirichlet(d.subclasses, { clients: 10, alpha: 1, seed }).indices],
];

const rows = [];
const record = (dataset, covariance, scheme, runs) => {
  const r = { dataset, covariance, scheme, runs: runs.length, clients: runs.reduce((a, x) => a + x.clients, 0), uploaded: runs.reduce((a, x) => a + x.uploaded, 0), consolidated: runs.reduce((a, x) => a + x.consolidated, 0), excluded: runs.flatMap((x) => x.excluded), failures: runs.reduce((a, x) => a + x.failures, 0) };
  rows.push(r);
  console.log(`${dataset.padEnd(20)} ${covariance.padEnd(8)} ${scheme.padEnd(15)} runs ${r.runs}  clients ${r.clients}  uploaded ${String(r.uploaded).padStart(5)}  consolidated ${String(r.consolidated).padStart(5)}  excluded ${r.excluded.length}  failures ${r.failures}`);
  for (const e of r.excluded) console.log(`   excluded: ${e}`);
};
const one = (d, indices, options) => {
  const r = fedDistr(indices.map((idx) => ({ X: d.X.selectRows(idx), labels: Array.from(idx, (i) => d.tasks[i]) })), options);
  return { clients: indices.length, uploaded: r.uploaded, consolidated: r.estimatedBaseDistributions, excluded: r.excluded.map((e) => `client ${e.client}: ${e.reason}`), failures: r.federation.failures.length };
};

for (const [name, data] of [['digits', digits], ['letter', letter], ['letter + 10^6', far]]) {
  for (const covariance of ['full', 'diagonal']) {
    for (const [scheme, deal] of schemes) record(name, covariance, scheme, seeds.map((seed) => one(data, deal(data, seed), { covariance, seed })));
  }
}
for (const covariance of ['full', 'diagonal']) {
  for (const [scheme, deal] of schemes) {
    const runs = seeds.map((seed) => {
      const ae = new Autoencoder({ hiddenLayers: [128, 16, 128], epochs: 20, batchSize: 64, seed }).fit(fm.X.selectRows(publicRows));
      try {
        return one(fashion, deal(fashion, seed), { encoder: ae, covariance, seed });
      } finally {
        ae.dispose();
      }
    });
    record('Fashion-MNIST (AE 16)', covariance, scheme, runs);
  }
}
const excluded = rows.reduce((a, r) => a + r.excluded.length, 0);
console.log(`${rows.reduce((a, r) => a + r.runs, 0)} federations, ${rows.reduce((a, r) => a + r.clients, 0)} honest clients, ${excluded} excluded`);
if (values.json) writeFileSync(values.json, JSON.stringify({ seeds, rows }, null, 1));
process.exitCode = excluded === 0 ? 0 : 1;
