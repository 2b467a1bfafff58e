// Choose the global K per dataset the way the FedGenGMM paper did (its section
// 5.5): centralized diag GMMs for a range of K, the mean log-likelihood of a
// held-out validation part, and a K that trades size against fit. The rule
// used here: the smallest K on the grid that reaches 90% of the validation
// log-likelihood gain of the best K over K = 1 (mean over two seeds).
//
// The data are prepared as `fedmix experiment` prepares them, on a split with
// its own seed (not one of the experiment's): class-labelled sets, a random
// third for fitting and another third for validation; anomaly sets, 70% of the
// inliers for fitting and the other 30% for validation, with the shift
// partition's perturbation (beta 0.5, 10 parts) applied to both, as the
// experiment's methods see those rows. Min-max scaling is fitted on the fit rows.
//
// usage: node scripts/choose-k.mjs NAME.csv [anomaly|class] [--shift]
import { readFileSync } from 'node:fs';
import { csvToMatrix, GaussianMixture, init, MinMaxScaler, parseCsv, partition, Rng } from '../dist/index.js';

await init();

const [file, kind = 'class', ...flags] = process.argv.slice(2);
const shifted = flags.includes('--shift');
const GRID = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40];
const SEEDS = [901, 902];

const table = parseCsv(readFileSync(file, 'utf8'));
const labelCol = table.columns[table.names.indexOf('label')];
const { X } = csvToMatrix(table, { exclude: ['label'] });

const curves = [];
for (const seed of SEEDS) {
  const rng = new Rng(seed);
  let fitIdx;
  let valIdx;
  if (kind === 'anomaly') {
    const inliers = [];
    labelCol.forEach((v, i) => v.trim() === '0' && inliers.push(i));
    const order = Array.from(rng.permutation(inliers.length), (i) => inliers[i]);
    const n = Math.round(order.length * 0.7);
    fitIdx = order.slice(0, n);
    valIdx = order.slice(n);
  } else {
    const order = Array.from(rng.permutation(X.nRows));
    const third = Math.floor(order.length / 3);
    fitIdx = order.slice(0, third);
    valIdx = order.slice(third, 2 * third);
  }
  rng.dispose();
  const scaler = new MinMaxScaler().fit(X.selectRows(fitIdx));
  let fit = scaler.transform(X.selectRows(fitIdx));
  let val = scaler.transform(X.selectRows(valIdx));
  if (shifted) {
    const s = partition.shift(fit, { parts: 10, beta: 0.5, clients: 20, alpha: 1, seed: seed + 2 });
    fit = s.X;
    val = partition.applyShift(val, s.shift, { seed: seed + 3 }).X;
  }
  curves.push(
    GRID.map((k) => {
      const m = new GaussianMixture({ nComponents: k, covarianceType: 'diag', tol: 1e-3, seed }).fit(fit);
      const v = m.score(val);
      m.dispose();
      return v;
    }),
  );
}
const mean = GRID.map((_, j) => curves.reduce((a, c) => a + c[j], 0) / curves.length);
const best = Math.max(...mean);
const target = mean[0] + 0.9 * (best - mean[0]);
const chosen = GRID[mean.findIndex((v) => v >= target)];
for (let j = 0; j < GRID.length; j++) console.log(`K=${String(GRID[j]).padStart(2)}  validation mean log-likelihood ${mean[j].toFixed(3)}`);
console.log(JSON.stringify({ file, kind, shifted, grid: GRID, validation: mean.map((v) => +v.toFixed(4)), target: +target.toFixed(4), chosen }));
