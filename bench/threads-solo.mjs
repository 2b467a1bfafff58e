// One process's one-thread fit, for bench/threads.mjs's ceiling table: run
// alone and then as two processes at once, it tells how much of a second core
// this machine gives the same kernel with no threads, messages or shards in
// the way (2 x alone / together). Argument: a JSON job
// { kind: 'kmeans' | 'diag' | 'full', n, d, k, lo, hi, repeats }. It warms
// up, prints "ready", waits for a line on stdin (so that both processes start
// together), then prints { msPerIter } (median over repeats of the long fit
// less the short one, per extra iteration, as bench/threads.mjs measures).
import { createInterface } from 'node:readline';
import { GaussianMixture, init, KMeans } from '../dist/index.js';
import { blobs, median } from './common.mjs';

const job = JSON.parse(process.argv[2]);
const { kind, n, d, k, lo, hi, repeats } = job;

function fitter() {
  if (kind === 'kmeans') {
    const X = blobs(n, d, k, 11);
    const init = Array.from({ length: k }, (_, c) => Array.from({ length: d }, (_, j) => X.data[j * n + c * 7]));
    return (iters) => new KMeans({ nClusters: k, init, nInit: 1, tol: 0, maxIter: iters }).fit(X);
  }
  const X = blobs(n, d, k, 7);
  const g0 = new GaussianMixture({ nComponents: k, covarianceType: kind, maxIter: 1, seed: 0 }).fit(X);
  const init = { weightsInit: g0.weights, meansInit: g0.means, precisionsInit: g0.precisions };
  g0.dispose();
  return (iters) => new GaussianMixture({ nComponents: k, covarianceType: kind, tol: 0, maxIter: iters, ...init }).fit(X).dispose();
}

await init();
const fit = fitter();
const time = (iters) => {
  const t0 = performance.now();
  fit(iters);
  return performance.now() - t0;
};
time(lo);
time(hi);
console.log('ready');
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
const per = [];
for (let r = 0; r < repeats; r++) per.push((time(hi) - time(lo)) / (hi - lo));
console.log(JSON.stringify({ msPerIter: median(per) }));
process.exit(0);
