#!/usr/bin/env node
/**
 * FedDistr on scikit-learn's 8x8 digits (issue 23, item 4): 64 pixel
 * features (0-16, some constant), the ten digits as subclasses in five task
 * classes of two (0+1, 2+3, ...), ten clients. Per seed: 20% test rows, 10%
 * public, the rest dealt by partition.entangled at the coefficient; fedmix's
 * FedDistr at its defaults (runFedDistrExperiment: the generative classifier
 * and the MLP on drawn rows) against the central MLP on the pooled rows, and
 * the same splits and partitions given to the scikit-learn/scipy peer
 * (scripts/feddistr_peer.py) in the same run.
 *
 *   node scripts/experiments-feddistr-digits.mjs [--seeds 1,2,3,4,5] [--entanglement 0] [--json FILE] [--fedmix '{...}']
 *
 * --fedmix adds options to fedmix's runs (e.g. '{"shrinkage":"none"}').
 * Reads dist/ (bash scripts/setup.sh builds it) and the digits of Debian's
 * python3-sklearn (located through /usr/bin/python3).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { init, Matrix, partition, Rng } from '../dist/index.js';
import { groupSubclasses, runFedDistrExperiment } from '../dist/experiments.js';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { seeds: { type: 'string', default: '1,2,3,4,5' }, entanglement: { type: 'string', default: '0' }, json: { type: 'string' }, fedmix: { type: 'string', default: '{}' } } });
const seeds = values.seeds.split(',').map(Number);
const entanglement = Number(values.entanglement);
const extra = JSON.parse(values.fedmix);

await init();
const python = '/usr/bin/python3';
const file = execFileSync(python, ['-c', 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"))'], { encoding: 'utf8' }).trim();
const lines = gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n');
const rows = lines.map((l) => l.split(',').map(Number));
const X = Matrix.fromRows(rows.map((r) => r.slice(0, 64)));
const digit = rows.map((r) => String(r[64]));
const all = groupSubclasses(X, digit, { groups: [['0', '1'], ['2', '3'], ['4', '5'], ['6', '7'], ['8', '9']] });
const n = X.nRows;

const runs = [];
const spec = { kMin: 1, kMax: 3, runs: [] };
for (const seed of seeds) {
  const rng = new Rng(seed);
  const order = Array.from(rng.permutation(n));
  rng.dispose();
  const nTest = Math.round(0.2 * n);
  const nPublic = Math.round(0.1 * n);
  const test = order.slice(0, nTest);
  const pub = order.slice(nTest, nTest + nPublic);
  const train = order.slice(nTest + nPublic).sort((a, b) => a - b);
  const trainData = { ...all, X: X.selectRows(train), subclasses: Int32Array.from(train, (i) => all.subclasses[i]), tasks: Int32Array.from(train, (i) => all.tasks[i]) };
  const report = runFedDistrExperiment(
    { train: trainData, test: { X: X.selectRows(test), tasks: Int32Array.from(test, (i) => all.tasks[i]) }, public: X.selectRows(pub) },
    { clients: 10, entanglement, seed, baselines: ['central'], repeats: 1, ...extra },
  );
  const r = report.runs[0];
  // the experiment's partition, dealt again from its seed (seed + 2) for the peer
  const p = partition.entangled(trainData.subclasses, { clients: 10, target: entanglement, tasks: trainData.tasks, seed: seed + 2 });
  if (p.indices.some((idx, c) => idx.length !== r.clientRows[c])) throw new Error('the partition dealt again differs from the experiment\'s');
  spec.runs.push({ seed, train, test, clients: p.indices.map((idx) => Array.from(idx)) });
  runs.push({ seed, coefficient: r.coefficient, generative: r.feddistr.accuracy.generative, mlp: r.feddistr.accuracy.mlp, central: r.baselines[0].finalAccuracy, uploaded: r.feddistr.uploaded, consolidated: r.feddistr.estimatedBaseDistributions, excluded: r.feddistr.excluded });
}

const dir = mkdtempSync(join(tmpdir(), 'feddistr-peer-'));
let peer;
try {
  writeFileSync(join(dir, 'runs.json'), JSON.stringify(spec));
  peer = execFileSync(python, [join(root, 'scripts/feddistr_peer.py'), join(dir, 'runs.json')], { encoding: 'utf8', maxBuffer: 1 << 26 })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const stat = (v) => {
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  const s = v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1)) : 0;
  return `${m.toFixed(3)} ± ${s.toFixed(3)}`;
};
const f3 = (v) => (v === undefined ? '-' : v.toFixed(3));
console.log(`digits, 10 clients, entanglement ${entanglement}, fedmix options ${JSON.stringify(extra)}; seeds ${seeds.join(', ')}`);
console.log('seed  coef    fedmix generative  fedmix MLP  central MLP  peer (defaults)  peer (ml)  uploaded  consolidated  excluded');
runs.forEach((r, i) => {
  const [d, m] = [peer[0].runs[i], peer[1].runs[i]];
  console.log(`${String(r.seed).padEnd(5)} ${r.coefficient.toFixed(3)}  ${f3(r.generative).padStart(17)}  ${f3(r.mlp).padStart(10)}  ${f3(r.central).padStart(11)}  ${f3(d.accuracy).padStart(15)}  ${f3(m.accuracy).padStart(9)}  ${String(r.uploaded).padStart(8)}  ${String(r.consolidated).padStart(12)}  ${r.excluded.length}`);
});
console.log(`mean ± std   generative ${stat(runs.map((r) => r.generative))}, MLP ${stat(runs.map((r) => r.mlp))}, central ${stat(runs.map((r) => r.central))}, peer defaults ${stat(peer[0].runs.map((r) => r.accuracy))}, peer ml ${stat(peer[1].runs.map((r) => r.accuracy))}`);
if (values.json) writeFileSync(values.json, JSON.stringify({ entanglement, seeds, fedmix: extra, runs, peer }, null, 1));
