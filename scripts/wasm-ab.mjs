#!/usr/bin/env node
/**
 * Two builds of the core, one process, interleaved: the same fedmix work (an
 * EM iteration of the gmm-em bench's configurations, one epoch of the nn
 * bench's autoencoder and classifier on Fashion-MNIST-sized random rows,
 * digamma over 10^6 values) timed on build A, then B, then A ... so that the
 * size-for-speed trade of a build setting (Rust opt-level, wasm-opt flags) is
 * judged on this shared machine against the same load, by ratio.
 *
 *   node scripts/wasm-ab.mjs A.wasm B.wasm [--rounds 3] [--only digamma]
 *
 * Needs dist/ built (npx tsup). Prints per workload the median ms of each
 * build and B/A (above 1: B is slower).
 */
import { readFileSync } from 'node:fs';
import { digamma, GaussianMixture, init, Matrix, Network } from '../dist/index.js';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 3;
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1] : '';
const [fileA, fileB] = args;
if (!fileA || !fileB || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: node scripts/wasm-ab.mjs A.wasm B.wasm [--rounds N]');
  process.exit(2);
}
const builds = { A: readFileSync(fileA), B: readFileSync(fileB) };

/** A deterministic generator, so both builds see the same rows. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function blobs(n, d, k, seed) {
  const u = lcg(seed);
  const centers = Array.from({ length: k * d }, () => 10 * u());
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) data[j * n + i] = centers[(i % k) * d + j] + (u() + u() + u() - 1.5);
  return Matrix.fromColumns(Array.from({ length: d }, (_, j) => data.subarray(j * n, (j + 1) * n)));
}

const time = (f) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

const gmmCase = (n, d, k, covarianceType) => ({
  name: `EM iteration ${n}x${d} K=${k} ${covarianceType}`,
  setup() {
    const X = blobs(n, d, k, 7);
    const g0 = new GaussianMixture({ nComponents: k, covarianceType, maxIter: 1, seed: 0 }).fit(X);
    const start = { weightsInit: g0.weights, meansInit: g0.means, precisionsInit: g0.precisions };
    g0.dispose();
    return () => {
      const fit = (iters) =>
        time(() => new GaussianMixture({ nComponents: k, covarianceType, tol: 0, maxIter: iters, ...start }).fit(X).dispose());
      return (fit(6) - fit(2)) / 4;
    };
  },
});

const nnCase = (name, sizes, outputActivation, loss, batchSize) => ({
  name: `epoch ${name}, 12000 rows, batch ${batchSize}`,
  setup() {
    const u = lcg(3);
    const rows = 12_000;
    const X = Matrix.fromColumns(Array.from({ length: sizes[0] }, () => Float64Array.from({ length: rows }, () => u())));
    const labels = Int32Array.from({ length: rows }, (_, i) => i % sizes.at(-1));
    return () => {
      const net = new Network({ sizes, activation: 'relu', outputActivation, loss, seed: 1 });
      const set = net.attach(X, loss === 'mse' ? X : labels);
      const opt = net.optimizer({ name: 'adam', learningRate: 1e-3 });
      try {
        return time(() => net.trainEpoch(set, opt, { batchSize, seed: 2 }));
      } finally {
        opt.dispose();
        set.dispose();
        net.dispose();
      }
    };
  },
});

const CASES = [
  gmmCase(100_000, 10, 15, 'diag'),
  gmmCase(100_000, 10, 15, 'full'),
  gmmCase(100_000, 38, 10, 'diag'),
  gmmCase(100_000, 38, 10, 'full'),
  nnCase('autoencoder 784-64-32-64-784', [784, 64, 32, 64, 784], 'sigmoid', 'mse', 32),
  nnCase('classifier 784-128-10', [784, 128, 10], 'softmax', 'softmax-cross-entropy', 128),
  {
    name: 'digamma, 10^6 uniform(0, 10)',
    setup() {
      const u = lcg(5);
      const x = Float64Array.from({ length: 1e6 }, () => 10 * u());
      const out = new Float64Array(x.length);
      return () => time(() => digamma(x, out));
    },
  },
];

for (let i = CASES.length - 1; i >= 0; i--) if (!CASES[i].name.includes(only)) CASES.splice(i, 1);
const median = (a) => [...a].sort((p, q) => p - q)[a.length >> 1];
const times = new Map(CASES.map((c) => [c.name, { A: [], B: [] }]));
for (let r = 0; r < rounds; r++) {
  for (const which of r % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    await init({ fresh: true, wasm: { simd: builds[which] } });
    for (const c of CASES) {
      const work = c.setup();
      work(); // warm-up: tier-up of the engine's compiled code
      times.get(c.name)[which].push(work());
    }
  }
}
console.log(`A = ${fileA} (${builds.A.length} bytes), B = ${fileB} (${builds.B.length} bytes); median of ${rounds} interleaved rounds`);
console.log('| workload | A ms | B ms | B/A |\n|---|---|---|---|');
for (const c of CASES) {
  const { A, B } = times.get(c.name);
  console.log(`| ${c.name} | ${median(A).toFixed(1)} | ${median(B).toFixed(1)} | ${(median(B) / median(A)).toFixed(2)} |`);
}
