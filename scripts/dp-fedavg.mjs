// DP-FedAvg (McMahan et al. 2018) against FedAvg on real data (issue 26):
// satellite, all 6,435 rows, min-max scaled, 20% held out (seeded), the rest
// dealt IID to 200 clients (~26 rows each: user-level privacy needs many
// users); an MLP 36-32-6 at FedAvg's defaults (Adam 0.01, E = 5, B = 32),
// fraction 0.1 (20 clients a round), 40 rounds. Prints test accuracy of
// FedAvg and of DP-FedAvg at several (clipNorm, noiseMultiplier), with the
// epsilon the run's accountant spent at delta 1e-4 (below 1/200).
//   node scripts/dp-fedavg.mjs [--rounds 40] [--seeds 3]   (after scripts/setup.sh built dist/)
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as index from '../dist/index.js';
import * as experiments from '../dist/experiments.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '40' }, seeds: { type: 'string', default: '3' } } });
const ROUNDS = Number(args.rounds);
const SEEDS = Number(args.seeds);
const CLIENTS = 200;
const FRACTION = 0.1;
const DELTA = 1e-4;
await index.init();

const text = readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8');
const d = experiments.labelledFromCsv(text, { label: 'label' });
const X = index.Matrix.from(new index.MinMaxScaler().fitTransform(d.X));
const classes = [...new Set(d.labels)].sort((a, b) => a - b);
const labels = Int32Array.from(d.labels, (v) => classes.indexOf(v));
// a seeded shuffle: the first 20% held out, the rest dealt round-robin (IID)
const order = Array.from({ length: X.nRows }, (_, i) => i);
let s = 12345;
for (let i = order.length - 1; i > 0; i--) {
  s = (s * 1103515245 + 12345) % 2 ** 31;
  const j = s % (i + 1);
  [order[i], order[j]] = [order[j], order[i]];
}
const nTest = Math.floor(X.nRows / 5);
const test = Int32Array.from(order.slice(0, nTest));
const train = order.slice(nTest);
const testX = X.selectRows(test);
const parts = Array.from({ length: CLIENTS }, (_, c) => Int32Array.from(train.filter((_, i) => i % CLIENTS === c)));
const data = parts.map((rows) => ({ X: X.selectRows(rows), labels: Int32Array.from(rows, (i) => labels[i]) }));

function accuracy(network, parameters) {
  const net = new index.Network(network);
  net.setParameters(parameters);
  const p = net.predict(testX);
  net.dispose();
  let hit = 0;
  for (let i = 0; i < p.nRows; i++) {
    let best = 0;
    for (let k = 1; k < p.nCols; k++) if (p.get(i, k) > p.get(i, best)) best = k;
    if (best === labels[test[i]]) hit++;
  }
  return hit / p.nRows;
}

const SETTINGS = [null, { clipNorm: 0.5, noiseMultiplier: 0.7 }, { clipNorm: 0.5, noiseMultiplier: 1.0 }, { clipNorm: 1, noiseMultiplier: 1.0 }, { clipNorm: 0.5, noiseMultiplier: 1.5 }];
console.log(`satellite, ${CLIENTS} clients (IID), fraction ${FRACTION}, ${ROUNDS} rounds, MLP 36-32-6, Adam 0.01, E = 5, B = 32; test accuracy over ${SEEDS} seeds`);
console.log('setting | accuracy (mean, min-max) | epsilon at delta 1e-4 | clipped share | seconds');
for (const dp of SETTINGS) {
  const acc = [];
  let epsilon;
  let clipped = 0;
  let asked = 0;
  const t0 = performance.now();
  for (let seed = 1; seed <= SEEDS; seed++) {
    const network = { sizes: [X.nCols, 32, classes.length], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed };
    const r = index.fedAvg(data, { network, rounds: ROUNDS, fraction: FRACTION, sampleSeed: seed, seed, ...(dp ? { dp, privacy: { delta: DELTA } } : {}) });
    acc.push(accuracy(network, r.parameters));
    if (dp) {
      epsilon = r.federation.privacy.epsilon;
      for (const h of r.history) {
        clipped += h.clipped;
        asked += h.clients;
      }
    }
  }
  const mean = acc.reduce((a, b) => a + b, 0) / acc.length;
  const name = dp ? `DP-FedAvg C = ${dp.clipNorm}, z = ${dp.noiseMultiplier}` : 'FedAvg (no DP)';
  console.log(`${name} | ${mean.toFixed(3)} (${Math.min(...acc).toFixed(3)}-${Math.max(...acc).toFixed(3)}) | ${dp ? epsilon.toFixed(2) : '-'} | ${dp ? (clipped / asked).toFixed(2) : '-'} | ${((performance.now() - t0) / 1000).toFixed(0)}`);
}
